//! `[agents.NAME]` for a name no built-in agent has: an agent the user
//! brings (docs/agents-acp.md#bring-your-own-agent), and default-agent
//! values that may name one.

use toml::de::DeValue;

use super::file::{Ctx, Kind, Scope, Val, agent_names, check, table, unknown};
use crate::agent::argv;
use crate::agent::byo::Byo;
use crate::error::{Error, Result};

/// An `agent`/`ask.agent` value naming no agent yet: key, name, offset.
pub type Pending = (String, String, usize);

/// `[agents.NAME]` where NAME is another name (an alias) of a built-in.
pub fn shadow(cx: &Ctx, n: &str, at: usize, agent: crate::agent::Agent) -> Error {
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
pub fn check_pending(cx: &Ctx, pending: Vec<Pending>, byo: &[Byo]) -> Result<()> {
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
pub fn defer(
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
pub fn brought(cx: &Ctx, n: &str, at: usize, t: &toml::Spanned<DeValue>) -> Result<Byo> {
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
