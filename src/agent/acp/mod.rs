//! The Agent Client Protocol (ACP) as baton's second transport: any agent
//! that speaks it over stdio is a table entry here, not a new parser.
//!
//! Theory of operation:
//! - The agent is started like every other peer (`process::supervise`: its
//!   own process group, timeouts, cancel, leftovers stopped), but its stdin
//!   stays open: the `Client` (client.rs) sends `initialize`, opens or loads
//!   the session, sets the session mode the access needs, sends the prompt,
//!   and closes stdin when the prompt's response arrives.
//! - Every `session/request_permission` is answered by the `Policy`
//!   (policy.rs) for the run's access; each refusal is a `denials` entry.
//!   Where an agent acts without asking in some mode (measured: qwen's
//!   default `auto` mode, opencode without an `ask` rule), the profile sets
//!   the mode or configuration that makes it ask, or that access is not
//!   offered.
//! - The messages are the protocol's own types (the `agent-client-protocol`
//!   crate's v1 schema); the framing (one JSON-RPC message per line) is the
//!   supervisor's line pump, so logs, idle time and cut lines work as for
//!   every other agent.

pub mod client;
mod named;
mod patch;
pub mod policy;
mod requests;

use serde::{Deserialize, Serialize};

use super::{Access, Agent, CommandSpec, Parser, Request};
use crate::error::{Error, Result};
use crate::result::Usage;

pub use client::{Client, Outgoing, Setup};
pub use named::Said;
pub use policy::Policy;
pub use requests::initialize_params;

/// How baton talks to an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Transport {
    /// The CLI's own headless mode (argv in, its JSON events out).
    #[default]
    Headless,
    /// The Agent Client Protocol over stdio.
    Acp,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Headless => "headless",
            Transport::Acp => "acp",
        }
    }

    pub fn parse(s: &str) -> Result<Transport> {
        match s.trim().to_ascii_lowercase().as_str() {
            "headless" => Ok(Transport::Headless),
            "acp" => Ok(Transport::Acp),
            _ => Err(Error::usage_hint(
                format!("unknown transport `{s}`"),
                "use headless or acp",
            )),
        }
    }
}

/// What an agent's token counts mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageStyle {
    /// `inputTokens` counts cached input too (copilot, qwen).
    InputIncludesCached,
    /// `inputTokens` leaves cached input out (opencode).
    InputExcludesCached,
}

impl UsageStyle {
    /// One count in baton's meaning: input includes cached input.
    pub fn normalise(
        self,
        input: u64,
        cached: Option<u64>,
        output: u64,
        thought: Option<u64>,
    ) -> Usage {
        let cached_n = cached.unwrap_or(0);
        Usage {
            input_tokens: Some(match self {
                UsageStyle::InputIncludesCached => input,
                UsageStyle::InputExcludesCached => input.saturating_add(cached_n),
            }),
            output_tokens: Some(output),
            cached_input_tokens: cached,
            reasoning_output_tokens: thought.filter(|t| *t > 0),
            cost_usd: None,
            cost_estimated: false,
        }
    }
}

/// One ACP agent: how to start it and what baton can enforce with it.
#[derive(Debug, Clone)]
pub struct Profile {
    /// The name baton uses for it.
    pub name: String,
    pub program: String,
    pub args: Vec<String>,
    /// Variables the agent needs set (or unset) to behave headless.
    pub env_set: Vec<(String, String)>,
    /// Access modes baton can enforce over ACP (measured).
    pub access: Vec<Access>,
    /// The session mode (`session/set_mode`) each access needs, where the
    /// agent's default mode would act without asking.
    pub modes: [Option<&'static str>; 3],
    pub usage: UsageStyle,
    /// A final message starting with this is the agent reporting a failed
    /// model call as text (copilot: "Error: 400 …").
    pub error_prefix: Option<&'static str>,
    /// The agent's own sentences for a failed model call, where it puts one
    /// of its own in place of the provider's status and codes (measured:
    /// docs/failures.md), at the start of its error text.
    pub said: &'static [(&'static str, Said)],
    /// The switch that passes a model (`--model`), if the agent takes one.
    pub model_flag: Option<&'static str>,
    /// How the agent authenticates, for people (`agents`, `doctor`).
    pub auth: &'static str,
    /// A variable holding inline JSON config, and the object baton merges
    /// into it (the caller's own keys are kept, baton's win).
    pub config_env: Option<(&'static str, &'static str)>,
    /// A check of the agent's own configuration before a run, where a file
    /// baton does not control could make the agent act without asking: it
    /// returns why the access cannot be enforced.
    pub guard: Option<fn(&Request) -> Option<String>>,
}

impl Profile {
    pub fn mode_for(&self, access: Access) -> Option<&'static str> {
        self.modes[match access {
            Access::ReadOnly => 0,
            Access::Workspace => 1,
            Access::Full => 2,
        }]
    }

    /// A user's own ACP agent (`[agents.NAME] transport = "acp"`): its
    /// command from the user file, baton's policy, and no session modes
    /// (baton cannot know them; `doctor` shows what the agent offers).
    /// Full access only where the entry says `full_access = true`.
    pub fn brought(b: &super::byo::Byo) -> Profile {
        Profile {
            access: b.access().to_vec(),
            ..Profile::custom(&b.name, &b.command)
        }
    }

    /// An ACP agent known by name only (a passive reader of its log).
    pub fn custom(name: &str, command: &[String]) -> Profile {
        Profile {
            name: name.to_string(),
            program: command.first().cloned().unwrap_or_default(),
            args: command.iter().skip(1).cloned().collect(),
            env_set: Vec::new(),
            access: vec![Access::ReadOnly, Access::Workspace, Access::Full],
            modes: [None; 3],
            usage: UsageStyle::InputIncludesCached,
            error_prefix: None,
            said: &[],
            model_flag: None,
            auth: "as the agent's own documentation says (`baton doctor` lists its auth methods)",
            config_env: None,
            guard: None,
        }
    }
}

impl Agent {
    /// The transports the agent can be driven by; the first is its default.
    /// Headless stays the default where it is proven (docs/agents-acp.md).
    pub fn transports(self) -> &'static [Transport] {
        match self {
            Agent::Copilot | Agent::Kilo | Agent::Cline | Agent::Nanocoder | Agent::Byo(_) => {
                &[Transport::Acp]
            }
            Agent::GeminiCli | Agent::Qwen => &[Transport::Headless, Transport::Acp],
            _ => &[Transport::Headless],
        }
    }

    /// The agent's ACP profile (`Transport::Acp`).
    pub fn acp_profile(self) -> Result<Profile> {
        if let Agent::Byo(b) = self {
            return Ok(Profile::brought(super::byo::get(b)));
        }
        builtin(self).ok_or_else(|| {
            Error::usage_hint(
                format!("{} has no ACP transport in baton", self.name()),
                format!("drop --transport acp; {} runs headless", self.name()),
            )
        })
    }

    /// A parser for the agent's output over `transport` (an ACP log is read
    /// passively: the run's own client answers while it runs).
    pub fn parser_for(self, transport: Transport) -> Parser {
        match (transport, self.acp_profile().ok()) {
            (Transport::Acp, Some(p)) => Parser::Acp(Box::new(Client::passive(p))),
            (Transport::Acp, None) => {
                Parser::Acp(Box::new(Client::passive(Profile::custom(self.name(), &[]))))
            }
            (Transport::Headless, _) if !self.transports().contains(&Transport::Headless) => {
                self.parser_for(Transport::Acp)
            }
            (Transport::Headless, _) => self.parser(),
        }
    }
}

/// `baton attach` for copilot: its interactive interface on the session
/// (`copilot --resume <id>`). Read-only denies its write and shell tools;
/// workspace denies shell (the person is asked about edits); full allows all.
pub fn copilot_interactive_resume(req: &Request, session: &str) -> CommandSpec {
    let mut c = CommandSpec::new("copilot");
    match req.access {
        Access::ReadOnly => {
            c.args(["--deny-tool", "write", "--deny-tool", "shell"]);
        }
        Access::Workspace => {
            c.args(["--deny-tool", "shell"]);
        }
        Access::Full => {
            c.arg("--allow-all");
        }
    }
    if let Some(m) = &req.model {
        c.args(["--model", m]);
    }
    c.arg(format!("--resume={session}"));
    c
}

/// The built-in ACP profile of an agent, if it has one.
pub fn builtin(agent: Agent) -> Option<Profile> {
    let p = |program: &str, args: &[&str]| Profile {
        name: agent.name().to_string(),
        program: program.to_string(),
        args: args.iter().map(|s| s.to_string()).collect(),
        env_set: Vec::new(),
        access: vec![Access::ReadOnly, Access::Workspace, Access::Full],
        modes: [None; 3],
        usage: UsageStyle::InputIncludesCached,
        error_prefix: None,
        said: &[],
        model_flag: Some("--model"),
        auth: "",
        config_env: None,
        guard: None,
    };
    Some(match agent {
        // Measured (docs/agents-acp.md): in its default `agent` mode every
        // edit and command asks, reads do not; a rejection ends the turn;
        // usage is exact per prompt.
        Agent::Copilot => Profile {
            error_prefix: Some("Error: "),
            said: named::COPILOT_SAID,
            auth: "COPILOT_PROVIDER_BASE_URL/COPILOT_PROVIDER_API_KEY (a model provider of \
                   your own) or `copilot login`",
            ..p("copilot", &["--acp", "--stdio"])
        },
        // Default mode asks before edits and commands.
        Agent::GeminiCli => Profile {
            modes: [Some("default"), Some("default"), Some("yolo")],
            auth: "GEMINI_API_KEY, or a login in ~/.gemini",
            ..p("gemini", &["--experimental-acp"])
        },
        // Qwen's ACP default is `auto` (a model classifier approves edits
        // without asking): `default` makes it ask for edits and commands.
        Agent::Qwen => Profile {
            modes: [Some("default"), Some("default"), Some("yolo")],
            model_flag: Some("--model"),
            auth: "OPENAI_API_KEY/OPENAI_BASE_URL (or qwen's own login)",
            ..p("qwen", &["--acp"])
        },
        // Kilo (an opencode fork) acts without asking unless its permission
        // rules say "ask": baton's rules go in KILO_CONFIG_CONTENT (merged
        // into the caller's own), so every edit, command, fetch and path
        // outside the project asks (measured).
        Agent::Kilo => Profile {
            config_env: Some(("KILO_CONFIG_CONTENT", ASK_EVERYTHING)),
            usage: UsageStyle::InputExcludesCached,
            auth: "a provider in kilo's config (~/.config/kilo/kilo.json), or `kilo auth login`",
            ..p("kilo", &["acp"])
        },
        // Measured (docs/agents-acp.md): in its default `act` mode every
        // tool asks, reads included; its patches name their files only in
        // the patch text (patch.rs). Without CLINE_SESSION_BACKEND_MODE=local
        // it starts a background hub daemon in a session of its own that
        // outlives the run, out of reach of the process group.
        Agent::Cline => Profile {
            env_set: vec![("CLINE_SESSION_BACKEND_MODE".into(), "local".into())],
            // Over ACP the model comes from CLINE_MODEL or its settings.
            model_flag: None,
            auth: "CLINE_API_KEY with CLINE_PROVIDER (a provider set up with `cline auth`), or \
                   `cline auth`",
            ..p("cline", &["--acp"])
        },
        // Nanocoder's ACP sessions start in `auto-accept`, which writes files
        // without asking (measured); `normal` asks before every edit and
        // command (measured), so baton sets it for every access and answers
        // each request itself. A rejection goes back to the model. Usage is
        // the sum of the turn's model calls, input counting cached input.
        Agent::Nanocoder => Profile {
            modes: [Some("normal"); 3],
            auth: "a provider in nanocoder's agents.config.json, or NANOCODER_PROVIDERS \
                   (JSON: name, baseUrl, apiKey, models)",
            guard: Some(nanocoder_guard),
            said: named::NANOCODER_SAID,
            ..p("nanocoder", &["--acp"])
        },
        _ => return None,
    })
}

/// opencode-style permission rules that make every change ask.
const ASK_EVERYTHING: &str = r#"{"permission":{"edit":"ask","bash":"ask","webfetch":"ask","external_directory":"ask","doom_loop":"ask"}}"#;

/// `baton attach` for kilo: its own interface on the session
/// (`kilo --session <id>`); the person answers its permission prompts.
pub fn kilo_interactive_resume(req: &Request, session: &str) -> CommandSpec {
    let mut c = CommandSpec::new("kilo");
    if let Some(m) = &req.model {
        c.args(["--model", m]);
    }
    c.args(["--session", session]);
    c
}

/// `baton attach` for cline: its interactive interface on the session
/// (`cline --tui --id <id>`), asking the person before each tool
/// (`--auto-approve false`; cline's own default approves everything).
pub fn cline_interactive_resume(req: &Request, session: &str) -> CommandSpec {
    let mut c = CommandSpec::new("cline");
    c.env_set
        .push(("CLINE_SESSION_BACKEND_MODE".into(), "local".into()));
    if let Some(m) = &req.model {
        c.args(["--model", m]);
    }
    c.args(["--tui", "--auto-approve", "false", "--id", session]);
    c
}

/// `baton attach` for nanocoder: its own interface on the session
/// (`nanocoder --mode normal --resume <id>`); in `normal` it asks the person
/// before every edit and command.
pub fn nanocoder_interactive_resume(req: &Request, session: &str) -> CommandSpec {
    let mut c = CommandSpec::new("nanocoder");
    if let Some(m) = &req.model {
        c.args(["--model", m]);
    }
    c.args(["--mode", "normal", "--resume", session]);
    c
}

/// Nanocoder reads `alwaysAllow` (tools it then runs without asking, in any
/// mode) from `agents.config.json` in the working directory first, then its
/// config directory, and no variable overrides it: a repository could turn
/// the permission requests baton answers off. Read-only and workspace are
/// refused while either file names a tool there.
fn nanocoder_guard(req: &Request) -> Option<String> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let dir = std::env::var_os("NANOCODER_CONFIG_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CONFIG_HOME")
                .map(std::path::PathBuf::from)
                .or_else(|| home.map(|h| h.join(".config")))
                .map(|d| d.join("nanocoder"))
        });
    let files = [Some(req.cwd.clone()), dir]
        .into_iter()
        .flatten()
        .map(|d| d.join("agents.config.json"));
    for f in files {
        if let Some(tools) = std::fs::read_to_string(&f)
            .ok()
            .and_then(|t| nanocoder_always_allowed(&t))
        {
            return Some(format!(
                "{} lets nanocoder run {} without asking",
                f.display(),
                tools.join(", ")
            ));
        }
    }
    None
}

/// The tools a nanocoder `agents.config.json` pre-approves
/// (`nanocoder.alwaysAllow`), if any.
fn nanocoder_always_allowed(text: &str) -> Option<Vec<String>> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let tools: Vec<String> = v
        .get("nanocoder")?
        .get("alwaysAllow")?
        .as_array()?
        .iter()
        .filter_map(|t| t.as_str().map(str::to_string))
        .collect();
    (!tools.is_empty()).then_some(tools)
}

/// The command that starts an ACP agent: its program and switches, the
/// model where it takes one. The prompt goes over the protocol, never argv.
pub fn command(profile: &Profile, req: &Request) -> Result<CommandSpec> {
    if req.access != Access::Full
        && let Some(reason) = profile.guard.and_then(|g| g(req))
    {
        return Err(Error::UnsupportedAccess {
            agent: leak(&profile.name),
            access: req.access.as_str(),
            reason: leak(&reason),
            hint: "remove the `alwaysAllow` entries, or use --access full".into(),
        });
    }
    if !profile.access.contains(&req.access) {
        return Err(Error::UnsupportedAccess {
            agent: leak(&profile.name),
            access: req.access.as_str(),
            reason: "over ACP this agent acts without asking in that mode (measured), so baton \
                     could not enforce it",
            hint: "use another access mode, or the agent's headless transport".into(),
        });
    }
    let mut c = CommandSpec::new(&profile.program);
    c.args(&profile.args);
    if let (Some(flag), Some(m)) = (profile.model_flag, &req.model) {
        c.args([flag, m.as_str()]);
    }
    c.env_set.extend(profile.env_set.iter().cloned());
    if let Some((var, ours)) = profile.config_env {
        c.env_set.push((
            var.to_string(),
            merge_config(std::env::var(var).ok().as_deref(), ours),
        ));
    }
    if req.access == Access::Workspace && !req.extra.no_tools && !req.confined {
        c.warnings.push(
            "over ACP, workspace access refuses every command the agent asks to run (baton \
             cannot confine a command to the workspace): use --access full if it must run tests"
                .into(),
        );
    }
    Ok(c)
}

/// The caller's inline JSON config with baton's keys laid over it (a value
/// that is not a JSON object is replaced).
fn merge_config(theirs: Option<&str>, ours: &str) -> String {
    let ours: serde_json::Value = serde_json::from_str(ours).unwrap_or_default();
    let mut base = theirs
        .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
        .filter(serde_json::Value::is_object)
        .unwrap_or_else(|| serde_json::json!({}));
    if let (Some(b), Some(o)) = (base.as_object_mut(), ours.as_object()) {
        for (k, v) in o {
            b.insert(k.clone(), v.clone());
        }
    }
    base.to_string()
}

/// Error names are `&'static str`; a custom agent's name lives for the run.
fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}
