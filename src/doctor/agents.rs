//! `baton agents`: what is supported, what is installed, and with which options.
//! It lists the CLIs that `doctor` (`agent.rs`) judges; it judges nothing.

use std::sync::mpsc;

use schemars::JsonSchema;
use serde::Serialize;

use crate::agent::Agent;
use crate::agent::models;
use crate::output::render::{Render, table};
use crate::output::{self, Mode};
use crate::process;
use crate::spend::prices;

/// `baton agents --json` (`baton schema agents`).
#[derive(Debug, Serialize, JsonSchema)]
pub struct Listing {
    pub schema_version: u32,
    pub agents: Vec<AgentInfo>,
    pub prices: Prices,
}

/// The price table `--max-usd` and `usage` cost runs with.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Prices {
    /// When the built-in table was generated, and from what.
    pub as_of: &'static str,
    pub source: &'static str,
    pub unit: &'static str,
    /// The user file's `[prices."MODEL"]` entries first (`provider: "user"`,
    /// with their `source`), then the built-in table.
    pub models: Vec<prices::Price>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct AgentInfo {
    pub name: &'static str,
    pub binary: &'static str,
    pub installed: bool,
    pub path: Option<String>,
    pub version: Option<String>,
    pub default_model: Option<&'static str>,
    /// `[alias, model]` pairs.
    #[schemars(schema_with = "crate::doctor::agents::pairs")]
    pub model_aliases: Vec<(&'static str, &'static str)>,
    pub default_effort: Option<&'static str>,
    pub efforts: &'static [&'static str],
    /// What a call cost: `reported` by the CLI, or `estimated` by baton from
    /// the price table (then `--max-usd` needs the model's price).
    pub cost: &'static str,
    /// Models of this agent's table (its default, alias targets and known
    /// ids) that have no price; `--max-usd` refuses a run on one of them.
    pub unpriced_models: Vec<&'static str>,
    pub access: Vec<&'static str>,
    /// How baton can talk to it; the first is the default (`--transport`).
    pub transports: Vec<&'static str>,
    /// `built-in`, or `user config <path:line>` for an agent the user brought.
    pub source: String,
    /// A brought agent's command (from the user file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    pub notes: Vec<String>,
    pub install_hint: &'static str,
}

pub fn list(mode: Mode) -> crate::error::Result<i32> {
    let (tx, rx) = mpsc::channel();
    // Versions are asked in parallel: some CLIs take seconds to start.
    for (i, a) in Agent::everyone().into_iter().enumerate() {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let _ = tx.send((i, info(a)));
        });
    }
    drop(tx);
    let mut infos: Vec<(usize, AgentInfo)> = rx.iter().collect();
    infos.sort_by_key(|(i, _)| *i);
    let infos: Vec<AgentInfo> = infos.into_iter().map(|(_, a)| a).collect();
    output::emit(
        &Listing {
            schema_version: crate::result::SCHEMA_VERSION,
            agents: infos,
            prices: Prices {
                as_of: prices::as_of(),
                source: prices::source(),
                unit: "USD per million tokens",
                models: prices::user()
                    .iter()
                    .chain(prices::builtin())
                    .cloned()
                    .collect(),
            },
        },
        mode,
    )
}

impl Render for Listing {
    /// A listing: a CLI that is missing is a row, not a failure (`doctor` judges).
    fn exit_code(&self) -> i32 {
        0
    }

    fn text(&self) -> String {
        format!("{}{}", text(&self.agents), price_text(&self.agents))
    }
}

/// A list of two-string arrays (a tuple's `prefixItems`, said plainly).
pub fn pairs(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "items": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2},
    })
}

/// The `--text` form: a table with a header, every column as wide as its
/// widest cell (agent names, binaries and versions vary in length), then
/// the notes and install commands below it, so no row is broken up.
fn text(infos: &[AgentInfo]) -> String {
    let mut rows: Vec<Vec<String>> = vec![
        [
            "AGENT",
            "BINARY",
            "STATUS",
            "VERSION",
            "MODEL",
            "EFFORT",
            "EFFORTS",
            "COST",
            "ACCESS",
            "TRANSPORT",
        ]
        .map(String::from)
        .to_vec(),
    ];
    let or_dash = |s: Option<&str>| s.unwrap_or("-").to_string();
    for a in infos {
        rows.push(vec![
            a.name.to_string(),
            a.binary.to_string(),
            if a.installed { "installed" } else { "missing" }.to_string(),
            or_dash(a.version.as_deref()),
            a.default_model.unwrap_or("(CLI default)").to_string(),
            or_dash(a.default_effort),
            match a.efforts {
                [] => "-".to_string(),
                e => e.join("|"),
            },
            a.cost.to_string(),
            a.access.join(", "),
            a.transports.join(", "),
        ]);
    }
    let mut t = table(&rows);
    let name_width = infos.iter().map(|a| a.name.len()).max().unwrap_or(0);
    let mut section = |title: &str, lines: Vec<(&str, &str)>| {
        if lines.is_empty() {
            return;
        }
        t.push_str(&format!("\n{title}:\n"));
        for (name, line) in lines {
            t.push_str(&format!("  {name:<name_width$}  {line}\n"));
        }
    };
    section(
        "notes",
        infos
            .iter()
            .flat_map(|a| a.notes.iter().map(|n| (a.name, n.as_str())))
            .collect(),
    );
    section(
        "install",
        infos
            .iter()
            .filter(|a| !a.installed)
            .map(|a| (a.name, a.install_hint))
            .collect(),
    );
    t
}

/// The models an agent's table names: its default, alias targets, known ids.
fn table_models(a: Agent) -> Vec<&'static str> {
    let t = models::table(a);
    let mut ids: Vec<&'static str> = t.default_model.into_iter().collect();
    for id in t
        .aliases
        .iter()
        .map(|(_, id)| *id)
        .chain(t.known.iter().copied())
    {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// The prices for people: the user's entries and the models baton's tables
/// name (the whole generated table is in `--json`), then what `--max-usd`
/// can count for each agent.
fn price_text(infos: &[AgentInfo]) -> String {
    let mut rows = vec![
        ["PROVIDER", "MODEL", "INPUT", "CACHED", "OUTPUT"]
            .map(String::from)
            .to_vec(),
    ];
    let named: Vec<&str> = Agent::ALL.into_iter().flat_map(table_models).collect();
    let shown: Vec<&prices::Price> = prices::user()
        .iter()
        .chain(
            prices::builtin()
                .iter()
                .filter(|p| named.contains(&p.model.as_str())),
        )
        .collect();
    for p in &shown {
        rows.push(vec![
            match &p.source {
                Some(s) => format!("user ({s})"),
                None => p.provider.clone(),
            },
            p.model.clone(),
            format!("{:.3}", p.input),
            format!("{:.3}", p.cached_input),
            format!("{:.3}", p.output),
        ]);
    }
    let mut t = format!(
        "\nprices (USD per million tokens, as of {}; only for costs a CLI does not report):\n{}",
        prices::as_of(),
        table(&rows)
    );
    let rest = prices::builtin().len() + prices::user().len() - shown.len();
    t.push_str(&format!(
        "  … and {rest} more models: `baton agents --json` lists them all ({})\n",
        prices::source()
    ));
    let names = |f: &dyn Fn(&AgentInfo) -> bool| {
        infos
            .iter()
            .filter(|a| f(a))
            .map(|a| a.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let blind = names(&|a| a.cost == "estimated" && a.default_model.is_none());
    if !blind.is_empty() {
        t.push_str(&format!(
            "\n--max-usd needs a priced model for {blind}: baton cannot price the model their \
             CLI picks by default, so name one (--model, or agents.<name>.model in the config)\n"
        ));
    }
    for a in infos.iter().filter(|a| !a.unpriced_models.is_empty()) {
        t.push_str(&format!(
            "unpriced ({}): {} — add [prices.\"MODEL\"] to your user file\n",
            a.name,
            a.unpriced_models.join(", ")
        ));
    }
    t
}

fn info(a: Agent) -> AgentInfo {
    let t = models::table(a);
    let path = process::find_program(a.binary());
    let mut notes = Vec::new();
    let brought = match a {
        Agent::Byo(b) => Some(crate::agent::byo::get(b)),
        _ => None,
    };
    // A brought agent is an ACP server, not a CLI with `--version`:
    // `baton doctor` asks it `initialize` instead.
    let version = match path
        .as_ref()
        .filter(|_| brought.is_none())
        .map(|p| version_of(p))
    {
        Some(Ok(v)) => v,
        Some(Err(why)) => {
            notes.push(format!("`{} --version` failed: {why}", a.binary()));
            None
        }
        None => None,
    };
    match a {
        Agent::Agy => {
            notes.push("no read-only mode: --access read-only is refused".into());
            notes.push("not installable from a package registry; adapter tested with fakes".into());
        }
        Agent::Claude if cfg!(target_os = "linux") => {
            let missing: Vec<&str> = ["bwrap", "socat"]
                .into_iter()
                .filter(|p| process::find_program(p).is_none())
                .collect();
            if !missing.is_empty() {
                notes.push(format!(
                    "workspace access needs {} for claude's sandbox: without them the peer can edit but not run commands",
                    missing.join(" and ")
                ));
            }
        }
        Agent::Zai | Agent::Pi => notes.push(
            "no sandbox of its own: baton's confines it (docs/sandbox.md); with --sandbox off \
             read-only is a tool allowlist and workspace is not confined"
                .into(),
        ),
        Agent::GeminiCli => notes.push(
            "under baton's sandbox yolo, confined (shell commands run; read-only held by the \
             file system); with --sandbox off read-only is default, workspace auto_edit (edits, \
             no shell commands)"
                .into(),
        ),
        Agent::Opencode => notes.push(
            "no sandbox: read-only is a baton-defined agent whose permissions deny all but \
             reading; workspace confines file tools to the project, and baton's sandbox the \
             rest (bash too; not with --sandbox off); full adds --auto"
                .into(),
        ),
        Agent::Qwen => notes.push(
            "under baton's sandbox yolo, confined (shell commands run; read-only held by the \
             file system); with --sandbox off read-only is --approval-mode plan, workspace \
             auto-edit (no shell commands); full is yolo"
                .into(),
        ),
        Agent::Kilo => notes.push(
            "ACP only: baton sets kilo's permission rules to ask (KILO_CONFIG_CONTENT) and \
             answers each request like copilot's"
                .into(),
        ),
        Agent::Nanocoder => notes.push(
            "ACP only: baton sets nanocoder's session to normal mode (its default, auto-accept, \
             writes without asking) and answers each request like copilot's; read-only and \
             workspace are refused while its agents.config.json pre-approves tools"
                .into(),
        ),
        Agent::Cline => notes.push(
            "ACP only: every cline tool asks; baton judges its patches by the files they name \
             and runs it without its background hub (CLINE_SESSION_BACKEND_MODE=local)"
                .into(),
        ),
        Agent::Copilot => notes.push(
            "ACP only: baton answers each permission request (read-only rejects every edit and \
             command; workspace allows edits inside the cwd and rejects commands)"
                .into(),
        ),
        Agent::Byo(b) => {
            let b = crate::agent::byo::get(b);
            notes.push(format!(
                "brought (ACP, user config {}): `{}`; baton answers each permission request it \
                 makes (read-only rejects every edit and command; workspace allows edits inside \
                 the cwd); what it does without asking cannot be policed; `baton doctor` checks \
                 its handshake",
                b.defined_at,
                b.command.join(" ")
            ));
        }
        _ => {}
    }
    AgentInfo {
        name: a.name(),
        binary: a.binary(),
        installed: path.is_some(),
        path: path.map(|p| p.display().to_string()),
        version,
        default_model: t.default_model,
        model_aliases: t.aliases.to_vec(),
        default_effort: t.default_effort,
        efforts: t.efforts,
        cost: if a.reports_cost() {
            "reported"
        } else {
            "estimated"
        },
        unpriced_models: table_models(a)
            .into_iter()
            .filter(|m| prices::lookup(m).is_none())
            .collect(),
        access: a.supported_access().iter().map(|x| x.as_str()).collect(),
        transports: a.transports().iter().map(|t| t.as_str()).collect(),
        source: match brought {
            Some(b) => format!("user config {}", b.defined_at),
            None => "built-in".into(),
        },
        command: brought.map(|b| b.command.clone()),
        notes,
        install_hint: a.install_hint(),
    }
}

/// `<cli> --version`: the first non-empty line of stdout, else of stderr
/// (pi prints its version there). A CLI that fails or does not answer within
/// `timeouts::AGENTS_VERSION` (15 s; its whole group is stopped then) is
/// reported as such, never with its error text as a "version".
fn version_of(p: &std::path::Path) -> Result<Option<String>, String> {
    let out = process::Command::new(p)
        .arg("--version")
        .deadline(process::timeouts::AGENTS_VERSION.get())
        .output()
        .map_err(|e| e.to_string())?;
    let first_line = |b: &[u8]| {
        String::from_utf8_lossy(b)
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(str::to_string)
    };
    if out.status.success() {
        Ok(first_line(&out.stdout).or_else(|| first_line(&out.stderr)))
    } else {
        Err(first_line(&out.stderr)
            .or_else(|| first_line(&out.stdout))
            .map(|l| crate::agent::clip(&l, 200))
            .unwrap_or_else(|| format!("exit status {}", out.status)))
    }
}
