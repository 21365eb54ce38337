//! The peer agent CLIs baton can delegate to: a closed enum, one file per CLI.
//!
//! Each adapter is pure: `command(&Request) -> CommandSpec` builds the exact
//! argv/env/stdin (no I/O), and a streaming `Parser` turns the CLI's output,
//! line by line, into an `Outcome`. Supervision (spawning, timeouts, killing)
//! lives in `process`, and the public result in `result`.

pub mod acp;
pub mod agy;
pub mod argv;
pub mod byo;
pub mod claude;
pub mod codex;
pub mod gemini_cli;
pub mod homes;
pub mod models;
pub mod opencode;
mod parser;
pub mod pi;
pub mod qwen;
pub mod vendor;

use std::ffi::OsString;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub use acp::Transport;
pub use parser::{Failing, Outcome, Parser, ProcessExit, Signal};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Agent {
    /// OpenAI Codex CLI: `codex exec --json`.
    Codex,
    /// Anthropic Claude Code: `claude -p --output-format stream-json`.
    Claude,
    /// Google Antigravity: `agy --print`.
    Agy,
    /// Z.AI GLM 5.2 through `pi --provider zai`.
    Zai,
    /// Pi with any `--provider`.
    Pi,
    /// Google's Gemini CLI: `gemini -o stream-json`.
    GeminiCli,
    /// opencode: `opencode run --format json`.
    Opencode,
    /// Qwen Code: `qwen --output-format stream-json`.
    Qwen,
    /// GitHub Copilot CLI: `copilot --acp --stdio` (ACP only).
    Copilot,
    /// Kilo Code's CLI: `kilo acp` (ACP only).
    Kilo,
    /// Cline's CLI: `cline --acp` (ACP only).
    Cline,
    /// Nanocoder (the Nano Collective's CLI): `nanocoder --acp` (ACP only).
    Nanocoder,
    /// An ACP agent the user brought (`[agents.NAME]` in the user file).
    Byo(byo::ByoId),
}

/// By name, as records and plans always wrote it (a brought agent's name is
/// looked up again when read back).
impl Serialize for Agent {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Agent {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Agent::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl Agent {
    pub const ALL: [Agent; 12] = [
        Agent::Codex,
        Agent::Claude,
        Agent::Agy,
        Agent::Zai,
        Agent::Pi,
        Agent::GeminiCli,
        Agent::Opencode,
        Agent::Qwen,
        Agent::Copilot,
        Agent::Kilo,
        Agent::Cline,
        Agent::Nanocoder,
    ];

    /// Agents whose CLI takes baton's `--provider` (pi's provider,
    /// opencode's `provider/model`, qwen's auth type).
    pub const TAKES_PROVIDER: [Agent; 3] = [Agent::Pi, Agent::Opencode, Agent::Qwen];

    pub fn name(self) -> &'static str {
        match self {
            Agent::Codex => "codex",
            Agent::Claude => "claude",
            Agent::Agy => "gemini",
            Agent::Zai => "zai",
            Agent::Pi => "pi",
            Agent::GeminiCli => "gemini-cli",
            Agent::Opencode => "opencode",
            Agent::Qwen => "qwen",
            Agent::Copilot => "copilot",
            Agent::Kilo => "kilo",
            Agent::Cline => "cline",
            Agent::Nanocoder => "nanocoder",
            Agent::Byo(b) => &byo::get(b).name,
        }
    }

    /// Case-insensitive, with the aliases users type.
    pub fn parse(s: &str) -> Result<Agent> {
        let l = s.trim().to_ascii_lowercase();
        Ok(match l.as_str() {
            "codex" => Agent::Codex,
            "claude" | "claude-code" => Agent::Claude,
            "gemini" | "agy" | "antigravity" => Agent::Agy,
            "zai" | "glm" | "z.ai" | "glm-5.2" => Agent::Zai,
            "pi" => Agent::Pi,
            "gemini-cli" | "geminicli" => Agent::GeminiCli,
            "opencode" | "open-code" => Agent::Opencode,
            "qwen" | "qwen-code" | "qwencode" => Agent::Qwen,
            "copilot" | "github-copilot" | "copilot-cli" => Agent::Copilot,
            "kilo" | "kilocode" | "kilo-code" => Agent::Kilo,
            "cline" | "cline-cli" => Agent::Cline,
            "nanocoder" | "nano-coder" => Agent::Nanocoder,
            _ => {
                if let Some(a) = byo::lookup(&l) {
                    return Ok(a);
                }
                let mut hint = "use one of: codex, claude, gemini (agy), zai (glm), pi, \
                                gemini-cli, opencode, qwen, copilot, kilo, cline, nanocoder"
                    .to_string();
                for a in byo::all() {
                    hint.push_str(", ");
                    hint.push_str(a.name());
                }
                hint.push_str(
                    " (or bring your own ACP agent: [agents.NAME] in your user file, \
                     docs/agents-acp.md)",
                );
                return Err(Error::usage_hint(format!("unknown agent `{s}`"), hint));
            }
        })
    }

    /// The built-in agent a name stands for (its name or an alias), if any:
    /// a brought agent may not take one of these names.
    pub fn builtin_named(s: &str) -> Option<Agent> {
        Agent::parse(s).ok().filter(|a| !matches!(a, Agent::Byo(_)))
    }

    /// Every agent: the built-in ones, then those the user brought.
    pub fn everyone() -> Vec<Agent> {
        let mut all = Agent::ALL.to_vec();
        all.extend(byo::all());
        all
    }

    /// The executable looked up on PATH.
    pub fn binary(self) -> &'static str {
        match self {
            Agent::Codex => "codex",
            Agent::Claude => "claude",
            Agent::Agy => "agy",
            Agent::Zai | Agent::Pi => "pi",
            Agent::GeminiCli => "gemini",
            Agent::Opencode => "opencode",
            Agent::Qwen => "qwen",
            Agent::Copilot => "copilot",
            Agent::Kilo => "kilo",
            Agent::Cline => "cline",
            Agent::Nanocoder => "nanocoder",
            Agent::Byo(b) => byo::get(b).command.first().map_or("", String::as_str),
        }
    }

    /// How to install the CLI (shown when it is missing).
    pub fn install_hint(self) -> &'static str {
        match self {
            Agent::Codex => "npm install -g @openai/codex",
            Agent::Claude => "npm install -g @anthropic-ai/claude-code@latest",
            Agent::Agy => {
                "install Google Antigravity (it provides `agy`) from its own installer; no package registry ships it"
            }
            Agent::Zai | Agent::Pi => "npm install -g @mariozechner/pi-coding-agent",
            Agent::GeminiCli => "npm install -g @google/gemini-cli",
            Agent::Opencode => "npm install -g opencode-ai",
            Agent::Qwen => "npm install -g @qwen-code/qwen-code",
            Agent::Copilot => "npm install -g @github/copilot",
            Agent::Kilo => "npm install -g @kilocode/cli",
            Agent::Cline => "npm install -g cline",
            Agent::Nanocoder => "npm install -g @nanocollective/nanocoder (it needs node >= 22)",
            Agent::Byo(_) => {
                "fix the agent's `command` in your user file (`baton config path`), or install \
                 its program"
            }
        }
    }

    /// Access modes the CLI can enforce with its own switches.
    pub fn supported_access(self) -> &'static [Access] {
        match self {
            Agent::Agy => &[Access::Workspace, Access::Full],
            Agent::Byo(b) => byo::get(b).access(),
            _ => &[Access::ReadOnly, Access::Workspace, Access::Full],
        }
    }

    /// Whether the CLI reports what each call cost (claude; pi, zai and
    /// opencode from their own model registries). For the others baton
    /// estimates it from `spend::prices`, so `--max-usd` needs the price of
    /// the model they run.
    pub fn reports_cost(self) -> bool {
        matches!(
            self,
            Agent::Claude | Agent::Zai | Agent::Pi | Agent::Opencode
        )
    }

    /// Whether the usage the CLI reports is a running total over the
    /// session, so a resumed run must subtract what came before (codex's
    /// thread counters; qwen's `result.usage`, measured on a resumed session).
    pub fn usage_is_cumulative(self) -> bool {
        matches!(self, Agent::Codex | Agent::Qwen)
    }

    /// Whether the CLI streams progress events while it works. For those that
    /// do not (agy prints one object at the end) the idle timeout cannot tell
    /// a stuck peer from a busy one, so it is not applied.
    pub fn streams_progress(self) -> bool {
        !matches!(self, Agent::Agy)
    }

    pub fn command(self, req: &Request) -> Result<CommandSpec> {
        // First: no value reaches an argv unchecked, whichever path built `req`
        // (an ACP agent's model and the session it loads included).
        argv::check_request(req)?;
        if let Agent::Byo(b) = self {
            byo::get(b).check(req.access)?;
        }
        if req.transport == Transport::Acp || !self.transports().contains(&Transport::Headless) {
            return acp::command(&self.acp_profile()?, req);
        }
        if !self.supported_access().contains(&req.access) {
            return Err(self.access_refusal(req.access));
        }
        match self {
            Agent::Agy => agy::check(req)?,
            Agent::Opencode => opencode::check(req)?,
            Agent::Qwen => qwen::check(req)?,
            _ => {}
        }
        Ok(match self {
            Agent::Codex => codex::command(req),
            Agent::Claude => claude::command(req),
            Agent::Agy => agy::command(req),
            Agent::Zai => pi::command(req, Some("zai")),
            Agent::Pi => pi::command(req, None),
            Agent::GeminiCli => gemini_cli::command(req),
            // The caller's own inline config is kept (see opencode::command).
            Agent::Opencode => {
                opencode::command(req, std::env::var(opencode::CONFIG_ENV).ok().as_deref())
            }
            Agent::Qwen => qwen::command(req),
            Agent::Copilot | Agent::Kilo | Agent::Cline | Agent::Nanocoder | Agent::Byo(_) => {
                return acp::command(&self.acp_profile()?, req);
            }
        })
    }

    /// `baton attach`: the CLI's own interactive interface on `session`, with
    /// the switches of `req.access`. Pure, like `command`; the prompt and
    /// stdin are unused (the person types). agy has no documented way to
    /// open its interface on a conversation id, so it is refused. `session`
    /// is checked like every value of `req`, its origin `req.origins.resume`.
    pub fn interactive_resume(self, req: &Request, session: &str) -> Result<CommandSpec> {
        argv::check_request(req)?;
        argv::check_value(argv::Field::Session, session, req.origins.resume.as_ref())?;
        if !self.supported_access().contains(&req.access) {
            return Err(self.access_refusal(req.access));
        }
        Ok(match self {
            Agent::Codex => codex::interactive_resume(req, session),
            Agent::Claude => claude::interactive_resume(req, session),
            Agent::Zai => pi::interactive_resume(req, session, Some("zai")),
            Agent::Pi => pi::interactive_resume(req, session, None),
            Agent::GeminiCli => gemini_cli::interactive_resume(req, session),
            Agent::Opencode => opencode::interactive_resume(
                req,
                session,
                std::env::var(opencode::CONFIG_ENV).ok().as_deref(),
            ),
            Agent::Qwen => qwen::interactive_resume(req, session),
            Agent::Copilot => acp::copilot_interactive_resume(req, session),
            Agent::Kilo => acp::kilo_interactive_resume(req, session),
            Agent::Cline => acp::cline_interactive_resume(req, session),
            Agent::Nanocoder => acp::nanocoder_interactive_resume(req, session),
            Agent::Byo(_) => {
                return Err(Error::usage_hint(
                    format!(
                        "baton does not know how to open {}'s own interface on a session",
                        self.name()
                    ),
                    format!(
                        "open the agent yourself on session `{session}`, or send the next turn \
                         with `baton continue ID \"…\"`"
                    ),
                ));
            }
            Agent::Agy => {
                return Err(Error::usage_hint(
                    "agy (gemini) has no command-line switch that opens its interactive \
                     interface on an existing conversation",
                    format!(
                        "open Antigravity and pick conversation `{session}`, or send the next \
                         turn with `baton continue ID \"…\"`"
                    ),
                ));
            }
        })
    }

    fn access_refusal(self, access: Access) -> Error {
        match self {
            Agent::Agy => Error::UnsupportedAccess {
                agent: self.name(),
                access: access.as_str(),
                reason: "agy has no enforceable read-only mode (its sandbox confines terminal \
                         commands only, not its file tools), so baton will not pretend",
                hint: "use `--agent gemini-cli --access read-only` or another agent for read-only work"
                    .into(),
            },
            _ => Error::Internal(format!("{} lacks access {}", self.name(), access.as_str())),
        }
    }

    pub fn parser(self) -> Parser {
        match self {
            Agent::Codex => Parser::Codex(codex::Parser::default()),
            Agent::Claude => Parser::Claude(claude::Parser::default()),
            Agent::Agy => Parser::Agy(agy::Parser::default()),
            Agent::Zai | Agent::Pi => Parser::Pi(pi::Parser::default()),
            Agent::GeminiCli => Parser::GeminiCli(gemini_cli::Parser::default()),
            Agent::Opencode => Parser::Opencode(opencode::Parser::default()),
            Agent::Qwen => Parser::Qwen(qwen::Parser::default()),
            Agent::Copilot | Agent::Kilo | Agent::Cline | Agent::Nanocoder | Agent::Byo(_) => {
                self.parser_for(Transport::Acp)
            }
        }
    }

    /// Pure: parse a whole transcript (used by tests and by `logs`).
    pub fn parse_transcript(self, stdout: &[u8], end: &ProcessExit) -> Outcome {
        let mut p = self.parser();
        for line in stdout.split(|b| *b == b'\n') {
            p.feed(line);
        }
        p.finish(end)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    ReadOnly,
    Workspace,
    Full,
}

impl Access {
    pub fn as_str(self) -> &'static str {
        match self {
            Access::ReadOnly => "read-only",
            Access::Workspace => "workspace",
            Access::Full => "full",
        }
    }

    pub fn parse(s: &str) -> Result<Access> {
        match s.to_ascii_lowercase().as_str() {
            "read-only" | "readonly" | "ro" => Ok(Access::ReadOnly),
            "workspace" | "workspace-write" | "write" => Ok(Access::Workspace),
            "full" | "full-access" | "danger-full-access" => Ok(Access::Full),
            _ => Err(Error::usage_hint(
                format!("unknown access mode `{s}`"),
                "use read-only, workspace or full",
            )),
        }
    }
}

/// Everything an adapter needs to build a command line. Built by `run`.
#[derive(Debug, Clone)]
pub struct Request {
    /// The full text sent to the peer (brief + task, or the raw task).
    pub prompt: String,
    pub access: Access,
    pub model: Option<String>,
    pub effort: Option<String>,
    pub resume: Option<String>,
    pub cwd: PathBuf,
    /// codex `--profile`.
    pub profile: Option<String>,
    /// `--provider`: pi's provider, opencode's (`-m <provider>/<model>`),
    /// qwen's `--auth-type`.
    pub provider: Option<String>,
    /// Total time allowed (agy has its own print timeout that must not be shorter).
    pub timeout_secs: u64,
    /// The process runs as root (claude needs `IS_SANDBOX=1` for full access then).
    pub is_root: bool,
    /// The peer runs under baton's sandbox (`run::confine`): its file
    /// system enforces the access mode, so a shell may be allowed.
    pub confined: bool,
    /// Programs claude's own sandbox needs that are not on PATH (Linux:
    /// `bwrap`, `socat`). Found by `run`, so adapters stay pure.
    pub missing_sandbox_deps: Vec<&'static str>,
    /// Headless (the CLI's own switches) or ACP (the protocol over stdio).
    pub transport: Transport,
    /// Extra CLI-level switches for special uses (`ask`): see `Extra`.
    pub extra: Extra,
    /// Where model, effort, profile, provider and resume came from, so that
    /// a value `argv::check_request` refuses is named with its source.
    pub origins: argv::Origins,
}

#[cfg(test)]
impl Request {
    /// The request the adapters' unit tests start from: task "task" in
    /// `/w`, the CLI's default model, nothing resumed.
    pub(crate) fn test(access: Access) -> Request {
        Request {
            prompt: "task".into(),
            access,
            model: None,
            effort: None,
            resume: None,
            cwd: PathBuf::from("/w"),
            profile: None,
            provider: None,
            timeout_secs: 3600,
            is_root: false,
            confined: false,
            missing_sandbox_deps: vec![],
            transport: Transport::Headless,
            extra: Extra::default(),
            origins: Default::default(),
        }
    }
}

/// Additions used by `baton ask` and friends; empty for plain runs.
#[derive(Debug, Clone, Default)]
pub struct Extra {
    /// Disable every tool (not only writing ones): packet-scope advice.
    pub no_tools: bool,
    /// A JSON Schema the final message must follow (claude `--json-schema`,
    /// codex `--output-schema <file>`), with its file path for codex.
    pub output_schema: Option<(String, PathBuf)>,
    /// More directories the peer may write besides its cwd (`run --worktree`:
    /// the linked worktree's git metadata, so the peer can commit). Mapped to
    /// the CLI's own switch where its sandbox would otherwise refuse.
    pub writable_dirs: Vec<PathBuf>,
    /// Paths the peer must not write even where its CLI's sandbox would let
    /// it (`run --worktree`: the user's HEAD, index and branches, which
    /// claude's sandbox opens up in a linked worktree). Only CLIs that widen
    /// grants on their own need it.
    pub protected_paths: Vec<PathBuf>,
}

/// The exact process baton will start. No shell is involved anywhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
    pub program: String,
    pub args: Vec<OsString>,
    /// Variables set (or overridden) in the child's environment.
    pub env_set: Vec<(String, String)>,
    /// Variables removed from the child's environment.
    pub env_remove: Vec<String>,
    /// Written to the child's stdin, which is then closed. `None`: stdin is /dev/null.
    pub stdin: Option<String>,
    pub warnings: Vec<String>,
}

impl CommandSpec {
    pub fn new(program: &str) -> Self {
        CommandSpec {
            program: program.to_string(),
            args: Vec::new(),
            env_set: Vec::new(),
            env_remove: Vec::new(),
            stdin: None,
            warnings: Vec::new(),
        }
    }

    pub fn arg(&mut self, a: impl Into<OsString>) -> &mut Self {
        self.args.push(a.into());
        self
    }

    pub fn args<I, S>(&mut self, it: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(it.into_iter().map(Into::into));
        self
    }

    pub fn args_lossy(&self) -> Vec<String> {
        self.args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }
}

/// The last non-empty line of a text, trimmed (for error messages from stderr).
pub(crate) fn last_line(s: &str) -> Option<String> {
    s.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// Cut a text to at most `max` characters for a one-line message.
pub(crate) fn clip(s: &str, max: usize) -> String {
    let s = s.trim();
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_aliases() {
        for (s, a) in [
            ("codex", Agent::Codex),
            ("Claude", Agent::Claude),
            ("AGY", Agent::Agy),
            ("antigravity", Agent::Agy),
            ("gemini", Agent::Agy),
            ("glm", Agent::Zai),
            ("Z.AI", Agent::Zai),
            ("glm-5.2", Agent::Zai),
            ("zai", Agent::Zai),
            ("pi", Agent::Pi),
            ("gemini-cli", Agent::GeminiCli),
            ("opencode", Agent::Opencode),
            ("qwen-code", Agent::Qwen),
            ("Qwen", Agent::Qwen),
        ] {
            assert_eq!(Agent::parse(s).unwrap(), a, "{s}");
        }
        assert!(Agent::parse("gpt").is_err());
    }

    #[test]
    fn access_parse() {
        assert_eq!(Access::parse("read-only").unwrap(), Access::ReadOnly);
        assert_eq!(Access::parse("workspace").unwrap(), Access::Workspace);
        assert_eq!(Access::parse("full").unwrap(), Access::Full);
        assert!(Access::parse("root").is_err());
    }

    /// Invariants over every agent × access × resume × model/effort: the
    /// prompt travels on stdin (agy: as the last argument, after `--print`),
    /// the resume id and the model reach argv, and read-only is enforced or
    /// refused, never dropped. (ACP agents: `acp::tests`.)
    #[test]
    fn every_agent_access_resume_and_model_combination() {
        for agent in Agent::ALL {
            if !agent.transports().contains(&Transport::Headless) {
                continue;
            }
            let t = crate::agent::models::table(agent);
            for access in [Access::ReadOnly, Access::Workspace, Access::Full] {
                for resume in [None, Some("sess-42")] {
                    let model = t.default_model.or(t.aliases.first().map(|a| a.1));
                    let req = Request {
                        prompt: "PROMPT-TEXT".into(),
                        access,
                        model: model.map(str::to_string),
                        effort: t.default_effort.map(str::to_string),
                        resume: resume.map(str::to_string),
                        cwd: PathBuf::from("/w"),
                        profile: None,
                        provider: None,
                        timeout_secs: 60,
                        is_root: false,
                        confined: false,
                        missing_sandbox_deps: vec![],
                        transport: Transport::Headless,
                        extra: Extra::default(),
                        origins: Default::default(),
                    };
                    let what = format!("{} {} {resume:?}", agent.name(), access.as_str());
                    let spec = match agent.command(&req) {
                        Ok(s) => s,
                        Err(e) => {
                            assert_eq!(
                                (agent, access),
                                (Agent::Agy, Access::ReadOnly),
                                "{what}: {e}"
                            );
                            assert_eq!(e.kind(), "unsupported_access");
                            continue;
                        }
                    };
                    assert_eq!(spec.program, agent.binary(), "{what}");
                    let argv = spec.args_lossy();
                    if agent == Agent::Agy {
                        assert_eq!(spec.stdin, None, "{what}");
                        assert_eq!(argv[argv.len() - 2..], ["--print", "PROMPT-TEXT"], "{what}");
                    } else {
                        assert_eq!(spec.stdin.as_deref(), Some("PROMPT-TEXT"), "{what}");
                        assert!(!argv.iter().any(|a| a.contains("PROMPT-TEXT")), "{what}");
                    }
                    if let Some(id) = resume {
                        assert!(argv.iter().any(|a| a == id), "{what}: {argv:?}");
                    }
                    if let Some(m) = model {
                        assert!(argv.iter().any(|a| a == m), "{what}: {argv:?}");
                    }
                    if let Some(e) = t.default_effort {
                        assert!(argv.iter().any(|a| a.contains(e)), "{what}: {argv:?}");
                    }
                    // agy has none: read-only was refused above.
                    let read_only_switch = match agent {
                        Agent::Codex => "read-only",
                        Agent::Claude => "Read,Grep,Glob",
                        Agent::Zai | Agent::Pi => "read,grep,find,ls",
                        Agent::GeminiCli => "default",
                        Agent::Opencode => opencode::READ_ONLY_AGENT,
                        Agent::Qwen => "plan",
                        Agent::Agy
                        | Agent::Copilot
                        | Agent::Kilo
                        | Agent::Cline
                        | Agent::Nanocoder
                        | Agent::Byo(_) => continue,
                    };
                    assert_eq!(
                        argv.iter().any(|a| a == read_only_switch),
                        access == Access::ReadOnly,
                        "{what}: {argv:?}"
                    );
                }
            }
        }
    }

    /// Under baton's sandbox read-only access is held by the file system:
    /// the CLIs without a sandbox of their own get the same grants as in
    /// workspace access (their shell runs the project's tests, a write fails
    /// by the kernel), and none of their read-only switches is passed.
    #[test]
    fn confined_read_only_is_held_by_the_file_system_not_a_tool_list() {
        for (agent, read_only_switch) in [
            (Agent::Pi, "read,grep,find,ls"),
            (Agent::Zai, "read,grep,find,ls"),
            (Agent::GeminiCli, "default"),
            (Agent::Qwen, "plan"),
            (Agent::Opencode, opencode::READ_ONLY_AGENT),
        ] {
            let mut req = Request::test(Access::ReadOnly);
            req.confined = true;
            let ro = agent.command(&req).unwrap();
            req.access = Access::Workspace;
            let ws = agent.command(&req).unwrap();
            let what = agent.name();
            assert_eq!(ro.args_lossy(), ws.args_lossy(), "{what}");
            assert!(
                !ro.args_lossy().iter().any(|a| a == read_only_switch),
                "{what}"
            );
            assert!(ro.warnings.is_empty(), "{what}: {:?}", ro.warnings);
            // Unconfined, the switch is back.
            req.access = Access::ReadOnly;
            req.confined = false;
            let free = agent.command(&req).unwrap().args_lossy();
            assert!(
                free.iter().any(|a| a == read_only_switch),
                "{what}: {free:?}"
            );
        }
    }

    /// Every recorded fault (tests/fixtures/failures, the real CLIs
    /// against the mock's faults) is named as expected.json says, from
    /// the transcript's lines in the order they came (stdout and stderr
    /// merged by their recorded times), stopping where the supervisor
    /// would stop the CLI by default. Recordings the recorder itself had
    /// to stop (the CLI still retrying after its cap) are skipped unless
    /// baton stops them early: their end is not the CLI's.
    #[test]
    fn every_recorded_failure_is_named() {
        use serde_json::Value;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/failures");
        let expected: Value =
            serde_json::from_slice(&std::fs::read(root.join("expected.json")).unwrap()).unwrap();
        let mut checked = 0;
        let mut wrong = Vec::new();
        for (name, faults) in expected.as_object().unwrap() {
            if name.starts_with('_') {
                continue;
            }
            let agent = Agent::parse(name).unwrap();
            for (fault, want) in faults.as_object().unwrap() {
                for mode in ["defaults", "no-retry"] {
                    let base = match mode {
                        "defaults" => fault.clone(),
                        _ => format!("{fault}.no-retry"),
                    };
                    let dir = root.join(name);
                    let read = |ext: &str| std::fs::read(dir.join(format!("{base}.{ext}")));
                    let Ok(meta) = read("meta.json") else {
                        panic!("no recording {name}/{base}");
                    };
                    let meta: Value = serde_json::from_slice(&meta).unwrap();
                    // Where the supervisor stops it: "stdout:3" (the 3rd line).
                    let stops_at = want["stops_early"][mode].as_str();
                    let stops = stops_at.is_some();
                    if !meta["killed_after_ms"].is_null() && !stops {
                        continue;
                    }
                    let (out, err) = (read("stdout").unwrap(), read("stderr").unwrap());
                    let times = |k: &str| -> Vec<u64> {
                        meta[k]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|t| t.as_u64().unwrap())
                            .collect()
                    };
                    let mut lines: Vec<(u64, bool, usize, &[u8])> = Vec::new();
                    for (stream, text, at) in [
                        (true, &out, times("stdout_ms")),
                        (false, &err, times("stderr_ms")),
                    ] {
                        let split: Vec<&[u8]> = text.split_inclusive(|b| *b == b'\n').collect();
                        assert_eq!(split.len(), at.len(), "{name}/{base}: lines vs times");
                        lines.extend(
                            at.into_iter()
                                .zip(split)
                                .enumerate()
                                .map(|(i, (t, l))| (t, stream, i + 1, l)),
                        );
                    }
                    lines.sort_by_key(|(t, _, _, _)| *t);
                    let mut p = agent.parser();
                    let mut stopped_at = None;
                    for (_, stdout, n, l) in &lines {
                        let sig = if *stdout { p.feed(l) } else { p.feed_stderr(l) };
                        if let Signal::Failing(f) = sig
                            && f.stops_by_default()
                        {
                            let stream = if *stdout { "stdout" } else { "stderr" };
                            stopped_at = Some(format!("{stream}:{n}"));
                            break;
                        }
                    }
                    let stopped = stopped_at.is_some();
                    if stopped_at.as_deref() != stops_at {
                        wrong.push(format!(
                            "{name}/{base}: stopped at {stopped_at:?}, want {stops_at:?}"
                        ));
                    }
                    let what = format!("{name}/{base}");
                    let end = ProcessExit {
                        code: if stopped {
                            None
                        } else {
                            meta["exit_code"].as_i64().map(|c| c as i32)
                        },
                        stderr_tail: String::from_utf8_lossy(&err).into_owned(),
                    };
                    let o = p.finish(&end);
                    let got = (
                        stopped,
                        o.success,
                        o.failure.map(|n| n.failure.kind()),
                        o.failure.and_then(|n| n.retry_after_s),
                    );
                    let wanted = (
                        stops,
                        false,
                        want["kind"].as_str(),
                        want["retry_after_s"].as_u64(),
                    );
                    if got != wanted || o.error.is_none() {
                        wrong.push(format!(
                            "{what}: (stopped, success, kind, retry_after) = {got:?}, want {wanted:?}; error: {:?}",
                            o.error
                        ));
                    }
                    checked += 1;
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        assert!(checked > 100, "only {checked} recordings checked");
    }

    /// The check sits where every path meets: whatever built the request,
    /// no agent's `command` or `interactive_resume` puts a value that starts
    /// with `-` (or is otherwise refused by `argv::check`) into argv.
    #[test]
    fn no_agent_builds_an_argv_with_an_unsafe_value() {
        let base = Request {
            prompt: "p".into(),
            timeout_secs: 60,
            ..Request::test(Access::Workspace)
        };
        let bad = ["--yolo", "-m", "", "gpt 5", "x\ny", "\u{2013}yolo"];
        for agent in Agent::ALL {
            for v in bad {
                type Set = fn(&mut Request, String);
                let set: [(&str, Set); 5] = [
                    ("model", |r, v| r.model = Some(v)),
                    ("effort", |r, v| r.effort = Some(v)),
                    ("profile", |r, v| r.profile = Some(v)),
                    ("provider", |r, v| r.provider = Some(v)),
                    ("session id", |r, v| r.resume = Some(v)),
                ];
                for (field, f) in set {
                    let mut req = base.clone();
                    f(&mut req, v.to_string());
                    let what = format!("{} {field} {v:?}", agent.name());
                    let e = agent.command(&req).expect_err(&what);
                    assert_eq!(e.kind(), "unsafe_value", "{what}: {e}");
                    assert!(e.to_string().starts_with(field), "{what}: {e}");
                    if agent != Agent::Agy {
                        let e = agent.interactive_resume(&req, "s-1").expect_err(&what);
                        assert_eq!(e.kind(), "unsafe_value", "{what}: {e}");
                    }
                }
                // The session `attach` passes beside the request.
                if agent != Agent::Agy {
                    let mut req = base.clone();
                    req.origins.resume = Some(argv::Origin::Recorded {
                        what: "the session recorded for job `j`".into(),
                        hint: "h".into(),
                    });
                    let e = agent.interactive_resume(&req, v).expect_err(agent.name());
                    assert_eq!(e.kind(), "unsafe_value");
                    assert!(
                        e.to_string()
                            .contains("from the session recorded for job `j`"),
                        "{e}"
                    );
                }
            }
            // A relative path could start with `-` too: only baton makes
            // them, always absolute, so one that is not is a bug.
            let mut req = base.clone();
            req.cwd = PathBuf::from("-rf");
            assert_eq!(agent.command(&req).unwrap_err().kind(), "internal");
        }
        // agy takes the prompt as the value of `--print`.
        let mut req = base.clone();
        req.prompt = "--yolo do it".into();
        let e = Agent::Agy.command(&req).unwrap_err();
        assert!(e.to_string().contains("--print"), "{e}");
        assert!(
            Agent::Codex.command(&req).is_ok(),
            "stdin prompts may start with `-`"
        );
    }
}
