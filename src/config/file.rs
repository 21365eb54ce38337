//! One config file (user or project) read into a flat map of dotted keys,
//! every key and value checked against the schema, every problem an error
//! that names the file, the line and the key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};

pub(super) use super::value::check;
use super::value::{AGENT_KEYS, ASK_KEYS, BENCH_KEYS, Kind, NOTIFY_KEYS, RUN_KEYS};
use crate::agent::Agent;
use crate::agent::argv;
use crate::agent::byo::Byo;
use crate::error::{Error, Result};

/// Which file a layer came from. The project file is committed with the
/// repository, so it may not hold secrets, choose a program to run, or widen
/// access beyond `workspace`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    User,
    Project,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

/// A checked value: strings as written (durations and names normalised),
/// integers, or an argv list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Val {
    Str(String),
    Int(u64),
    Bool(bool),
    List(Vec<String>),
}

impl Val {
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Val::Str(s) => s.clone().into(),
            Val::Int(n) => (*n).into(),
            Val::Bool(b) => (*b).into(),
            Val::List(l) => l.clone().into(),
        }
    }
}

impl std::fmt::Display for Val {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Val::Str(s) => write!(f, "{s}"),
            Val::Int(n) => write!(f, "{n}"),
            Val::Bool(b) => write!(f, "{b}"),
            Val::List(l) => write!(f, "{}", l.join(" ")),
        }
    }
}

/// A parsed file: dotted key → (value, line).
#[derive(Debug, Clone)]
pub struct Layer {
    pub path: PathBuf,
    pub scope: Scope,
    pub values: BTreeMap<String, (Val, usize)>,
    /// The agents this file brings (`[agents.NAME] transport = "acp"`; the
    /// user file only).
    pub byo: Vec<Byo>,
    /// Its `[prices."MODEL"]` entries (the user file only).
    pub prices: Vec<crate::spend::prices::Price>,
}

pub(super) struct Ctx<'a> {
    pub(super) path: &'a Path,
    pub(super) text: &'a str,
    pub(super) scope: Scope,
}

impl Ctx<'_> {
    pub(super) fn line(&self, offset: usize) -> usize {
        line_of(self.text, offset)
    }

    pub(super) fn err(
        &self,
        offset: usize,
        key: &str,
        message: impl Into<String>,
        hint: &str,
    ) -> Error {
        Error::Config {
            where_: format!("{}:{}", self.path.display(), self.line(offset)),
            key: key.to_string(),
            message: message.into(),
            hint: hint.to_string(),
        }
    }
}

pub fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset.min(text.len()))
        .map_or(1, |t| t.matches('\n').count() + 1)
}

/// Parse and check one file.
pub fn parse(path: &Path, text: &str, scope: Scope) -> Result<Layer> {
    let cx = Ctx { path, text, scope };
    let doc = DeTable::parse(text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        Error::Config {
            where_: format!("{}:{}", path.display(), line_of(text, at)),
            key: "(syntax)".into(),
            message: format!("not valid TOML: {}", e.message().trim()),
            hint: "fix the syntax; `baton config init` writes a commented template to start from"
                .into(),
        }
    })?;
    let mut values = BTreeMap::new();
    let mut byo = Vec::new();
    let mut prices = Vec::new();
    // `agent`/`ask.agent` values that name no agent yet: they may name one
    // this file brings further down.
    let mut pending: Vec<Pending> = Vec::new();
    for (k, v) in doc.get_ref() {
        let key = k.get_ref().as_ref();
        let at = k.span().start;
        match key {
            "agent" => {
                let at = v.span().start;
                let val = check(&cx, "agent", Kind::AgentName, v.get_ref(), at, None)
                    .or_else(|e| defer(&cx, "agent", v.get_ref(), at, e, &mut pending))?;
                values.insert("agent".to_string(), (val, cx.line(at)));
            }
            "agents" => {
                let agents = table(&cx, "agents", v)?;
                for (name, t) in agents {
                    let n = name.get_ref().as_ref();
                    let prefix = format!("agents.{n}");
                    match Agent::builtin_named(n) {
                        Some(agent) if agent.name() == n => {
                            section(
                                &cx,
                                &prefix,
                                t,
                                AGENT_KEYS,
                                Some(agent),
                                &mut values,
                                &mut pending,
                            )?;
                        }
                        Some(agent) => {
                            return Err(shadow(&cx, n, name.span().start, agent));
                        }
                        None => byo.push(brought(&cx, n, name.span().start, t)?),
                    }
                }
            }
            "run" => section(&cx, "run", v, RUN_KEYS, None, &mut values, &mut pending)?,
            "ask" => section(&cx, "ask", v, ASK_KEYS, None, &mut values, &mut pending)?,
            "bench" => section(&cx, "bench", v, BENCH_KEYS, None, &mut values, &mut pending)?,
            "notify" => section(
                &cx,
                "notify",
                v,
                NOTIFY_KEYS,
                None,
                &mut values,
                &mut pending,
            )?,
            "prices" => prices = super::prices::section(&cx, v)?,
            "council" => {
                return Err(cx.err(
                    at,
                    "council",
                    "reserved for council defaults (members, chair, quorum, depth), which this \
                     version does not have yet",
                    "remove the [council] table",
                ));
            }
            other => {
                return Err(unknown(
                    &cx,
                    at,
                    other,
                    &["agent", "agents", "run", "ask", "bench", "notify", "prices"],
                ));
            }
        }
    }
    check_pending(&cx, pending, &byo)?;
    // Effort is checked against the model of the same file (a model that
    // narrows the efforts, like agy's pro, must agree with it).
    for agent in Agent::ALL {
        let get = |k: &str| match values.get(&format!("agents.{}.{k}", agent.name())) {
            Some((Val::Str(s), line)) => Some((s.clone(), *line)),
            _ => None,
        };
        let (model, effort) = (get("model"), get("effort"));
        if model.is_none() && effort.is_none() {
            continue;
        }
        if let Err(e) = crate::agent::models::resolve(
            agent,
            model.as_ref().map(|m| m.0.as_str()),
            effort.as_ref().map(|e| e.0.as_str()),
        ) {
            let (key, line) = match (&effort, &model) {
                (Some((_, l)), _) if e.to_string().contains("effort") => ("effort", *l),
                (_, Some((_, l))) => ("model", *l),
                (Some((_, l)), None) => ("effort", *l),
                (None, None) => unreachable!("checked above"),
            };
            return Err(Error::Config {
                where_: format!("{}:{line}", path.display()),
                key: format!("agents.{}.{key}", agent.name()),
                message: e.to_string(),
                hint: e.hint().unwrap_or_default(),
            });
        }
    }
    Ok(Layer {
        path: path.to_path_buf(),
        scope,
        values,
        byo,
        prices,
    })
}

pub(super) type Entry<'i> = (
    &'i toml::Spanned<std::borrow::Cow<'i, str>>,
    &'i toml::Spanned<DeValue<'i>>,
);

pub(super) fn table<'a, 'i>(
    cx: &Ctx,
    key: &str,
    v: &'a toml::Spanned<DeValue<'i>>,
) -> Result<Vec<Entry<'a>>> {
    match v.get_ref() {
        DeValue::Table(t) => Ok(t.iter().collect()),
        other => Err(cx.err(
            v.span().start,
            key,
            format!("expected a table, found {}", other.type_str()),
            &format!("write it as a section: [{key}]"),
        )),
    }
}

fn section(
    cx: &Ctx,
    prefix: &str,
    v: &toml::Spanned<DeValue>,
    keys: &[(&str, Kind)],
    agent: Option<Agent>,
    out: &mut BTreeMap<String, (Val, usize)>,
    pending: &mut Vec<Pending>,
) -> Result<()> {
    for (k, val) in table(cx, prefix, v)? {
        let name = k.get_ref().as_ref();
        let full = format!("{prefix}.{name}");
        let Some((_, kind)) = keys.iter().find(|(n, _)| *n == name) else {
            let known: Vec<&str> = keys.iter().map(|(n, _)| *n).collect();
            return Err(unknown(cx, k.span().start, &full, &known));
        };
        let at = val.span().start;
        let checked =
            check(cx, &full, *kind, val.get_ref(), at, agent).or_else(|e| match kind {
                Kind::Adviser => defer(cx, &full, val.get_ref(), at, e, pending),
                _ => Err(e),
            })?;
        out.insert(full, (checked, cx.line(val.span().start)));
    }
    Ok(())
}

pub(super) fn unknown(cx: &Ctx, at: usize, key: &str, known: &[&str]) -> Error {
    let leaf = key.rsplit('.').next().unwrap_or(key).to_ascii_lowercase();
    if ["key", "token", "secret", "password", "credential"]
        .iter()
        .any(|w| leaf.contains(w))
    {
        return cx.err(
            at,
            key,
            "unknown key: baton's config holds no credentials",
            "remove it; each CLI keeps its own login (see `baton doctor`), or set the CLI's \
             API key variable in your environment",
        );
    }
    cx.err(
        at,
        key,
        "unknown key",
        &format!("known keys here: {} (see docs/config.md)", known.join(", ")),
    )
}

pub(super) fn agent_names() -> String {
    names(&Agent::ALL)
}

pub(super) fn names(agents: &[Agent]) -> String {
    agents
        .iter()
        .map(|a| a.name())
        .collect::<Vec<_>>()
        .join(", ")
}

// `[agents.NAME]` for a name no built-in agent has: an agent the user
// brings (docs/agents-acp.md#bring-your-own-agent), and default-agent
// values that may name one. Part of this file's one pass over the keys
// (it reads the same `Ctx` and is called from the middle of it), so it
// stays here: see `LONG_FILES` in tests/layers.rs.

/// An `agent`/`ask.agent` value naming no agent yet: key, name, offset.
type Pending = (String, String, usize);

/// `[agents.NAME]` where NAME is another name (an alias) of a built-in.
fn shadow(cx: &Ctx, n: &str, at: usize, agent: crate::agent::Agent) -> Error {
    cx.err(
        at,
        &format!("agents.{n}"),
        format!(
            "`{n}` is a name of the built-in agent {}: a brought agent may not shadow it",
            agent.name()
        ),
        &format!(
            "configure the built-in under [agents.{}], or give your agent another name",
            agent.name()
        ),
    )
}

/// Every pending name must be one this file brings.
fn check_pending(cx: &Ctx, pending: Vec<Pending>, byo: &[Byo]) -> Result<()> {
    for (key, n, at) in pending {
        if !byo.iter().any(|b| b.name == n) {
            return Err(cx.err(
                at,
                &key,
                format!("unknown agent `{n}`"),
                &format!(
                    "use one of: {}, or an agent your user file brings ([agents.NAME] \
                     transport = \"acp\")",
                    agent_names()
                ),
            ));
        }
    }
    Ok(())
}

/// An agent name that no agent has yet: kept for the check after the whole
/// file is read (it may be one this file brings); any other error stands.
fn defer(
    cx: &Ctx,
    key: &str,
    v: &DeValue,
    at: usize,
    e: Error,
    pending: &mut Vec<(String, String, usize)>,
) -> Result<Val> {
    match v.as_str() {
        Some(s) if cx.scope == Scope::User && e.to_string().contains("unknown agent") => {
            pending.push((key.to_string(), s.trim().to_string(), at));
            Ok(Val::Str(s.trim().to_string()))
        }
        _ => Err(e),
    }
}

/// `[agents.NAME]` for a name no built-in agent has: an agent the user
/// brings. The user file only (the project file is committed with the
/// repository and may not choose a program to run); `transport = "acp"`
/// and `command` required, `full_access` optional.
fn brought(cx: &Ctx, n: &str, at: usize, t: &toml::Spanned<DeValue>) -> Result<Byo> {
    let prefix = format!("agents.{n}");
    // Without `transport`, the section is not meant to bring an agent: most
    // likely a misspelt built-in name.
    let meant = matches!(t.get_ref(), DeValue::Table(tb) if tb.get("transport").is_some());
    if !meant {
        return Err(cx.err(
            at,
            &prefix,
            "unknown agent",
            &format!(
                "use one of: {}; or, in your user file, bring your own ACP agent with \
                 transport = \"acp\" and command = [...] (docs/agents-acp.md)",
                agent_names()
            ),
        ));
    }
    if cx.scope == Scope::Project {
        return Err(cx.err(
            at,
            &prefix,
            format!(
                "a project file may not add an agent (`{n}` is no built-in agent, and adding one \
                 chooses the program baton runs)"
            ),
            &format!(
                "define [agents.{n}] in your user file (`baton config path`), or use one of: {}",
                agent_names()
            ),
        ));
    }
    if let Err(why) = argv::check_agent_name(n).and_then(|()| {
        (n == n.to_ascii_lowercase())
            .then_some(())
            .ok_or_else(|| "it has capital letters".to_string())
    }) {
        return Err(cx.err(
            at,
            &prefix,
            format!("`{n}` cannot name an agent: {why}"),
            "use lower-case letters, digits, `-`, `_` and `.`, not starting with `-`",
        ));
    }
    let (mut transport, mut command, mut full_access) = (None, None, false);
    for (k, val) in table(cx, &prefix, t)? {
        let key = k.get_ref().as_ref();
        let full = format!("{prefix}.{key}");
        let vat = val.span().start;
        match key {
            "transport" => {
                transport = Some(match val.get_ref().as_str() {
                    Some(s) if s.trim().eq_ignore_ascii_case("acp") => "acp",
                    Some(s) => {
                        return Err(cx.err(
                            vat,
                            &full,
                            format!("a brought agent speaks ACP; `{s}` is not a transport baton can drive it by"),
                            "write transport = \"acp\"",
                        ));
                    }
                    None => {
                        return Err(cx.err(
                            vat,
                            &full,
                            "expected a string",
                            "write transport = \"acp\"",
                        ));
                    }
                });
            }
            "command" => {
                let Val::List(argv) = check(cx, &full, Kind::Command, val.get_ref(), vat, None)?
                else {
                    unreachable!("a command checks into a list");
                };
                if let Err(why) = argv::check_command(&argv) {
                    return Err(cx.err(
                        vat,
                        &full,
                        format!("this command may not be run: {why}"),
                        "give the program and its switches, e.g. [\"my-agent\", \"--acp\"]",
                    ));
                }
                command = Some(argv);
            }
            "full_access" => match val.get_ref().as_bool() {
                Some(b) => full_access = b,
                None => {
                    return Err(cx.err(
                        vat,
                        &full,
                        format!("expected true or false, found {}", val.get_ref().type_str()),
                        "write full_access = true to allow --access full for this agent",
                    ));
                }
            },
            _ => {
                return Err(unknown(
                    cx,
                    k.span().start,
                    &full,
                    &["transport", "command", "full_access"],
                ));
            }
        }
    }
    let missing = |what: &str, example: &str| {
        cx.err(
            at,
            &prefix,
            format!(
                "`{n}` is no built-in agent, so this section brings one, and it needs `{what}`"
            ),
            &format!(
                "add {example}, or use one of the built-in agents: {}",
                agent_names()
            ),
        )
    };
    if transport.is_none() {
        return Err(missing("transport", "transport = \"acp\""));
    }
    let Some(command) = command else {
        return Err(missing("command", "command = [\"my-agent\", \"--acp\"]"));
    };
    Ok(Byo {
        name: n.to_string(),
        command,
        full_access,
        defined_at: format!("{}:{}", cx.path.display(), cx.line(at)),
    })
}
