//! Anthropic Claude Code: `claude -p --output-format stream-json --verbose`,
//! prompt on stdin.
//!
//! Facts this relies on (`shared/realcli/claude-gemini.md`,
//! `claude-workspace.md`, claude 2.1.332): in `-p` mode an unapproved tool is
//! silently denied (listed in `permission_denials`, exit 0); `acceptEdits`
//! alone denies commands, so workspace access adds Claude Code's own OS
//! sandbox (bubblewrap + socat on Linux) with sandboxed Bash auto-allowed;
//! variadic flags (`--tools`, …) would swallow a prompt argument, which is one
//! more reason the prompt goes on stdin; as root, skipping permissions needs
//! `IS_SANDBOX=1`; a nested claude must not see `CLAUDECODE`.

use std::borrow::Cow;

use serde::Deserialize;

use super::{Access, CommandSpec, Failing, Outcome, ProcessExit, Request, Signal, clip, last_line};
use crate::failure::{self, Failure, Named};
use crate::result::{Denial, Usage};

/// Tools a read-only peer keeps: reading and searching, nothing that writes or runs.
pub const READ_ONLY_TOOLS: &str = "Read,Grep,Glob";

/// Claude Code's sandbox settings that make workspace access behave like
/// codex's `workspace-write`: edits and commands inside the cwd, nothing outside.
pub const WORKSPACE_SETTINGS: &str =
    r#"{"sandbox":{"enabled":true,"autoAllowBashIfSandboxed":true}}"#;

/// `WORKSPACE_SETTINGS`, plus `sandbox.filesystem.denyWrite` for paths the
/// sandbox must keep read-only. claude 2.1.332 opens a linked worktree's
/// whole main `.git` (the user's HEAD, index and branches) to sandboxed
/// commands on its own, whatever `--add-dir` says; a deny wins over that and
/// over any grant (measured in the e2e suite).
fn workspace_settings(protected: &[std::path::PathBuf]) -> String {
    if protected.is_empty() {
        return WORKSPACE_SETTINGS.to_string();
    }
    let mut v: serde_json::Value =
        serde_json::from_str(WORKSPACE_SETTINGS).expect("WORKSPACE_SETTINGS is JSON");
    v["sandbox"]["filesystem"] = serde_json::json!({
        "denyWrite": protected.iter().map(|p| p.to_string_lossy()).collect::<Vec<_>>(),
    });
    v.to_string()
}

pub fn command(req: &Request) -> CommandSpec {
    let mut c = CommandSpec::new("claude");
    c.args(["-p", "--output-format", "stream-json", "--verbose"]);
    if let Some(m) = &req.model {
        c.args(["--model", m]);
    }
    if let Some(e) = &req.effort {
        c.args(["--effort", e]);
    }
    if let Some(id) = &req.resume {
        c.args(["--resume", id]);
    }
    if let Some((schema, _)) = &req.extra.output_schema {
        c.args(["--json-schema", schema]);
    }
    if req.extra.no_tools {
        c.args(["--tools", "", "--strict-mcp-config"]);
    } else {
        match req.access {
            Access::ReadOnly => {
                // Only reading tools, and no MCP servers (they could write).
                c.args(["--tools", READ_ONLY_TOOLS, "--strict-mcp-config"]);
            }
            Access::Workspace => {
                c.args(["--permission-mode", "acceptEdits", "--settings"]);
                c.arg(workspace_settings(&req.extra.protected_paths));
                // One flag per directory: `--add-dir` is variadic, and the
                // prompt is on stdin, so nothing positional can be swallowed.
                for d in &req.extra.writable_dirs {
                    c.arg("--add-dir").arg(d);
                }
                if !req.missing_sandbox_deps.is_empty() {
                    c.warnings.push(format!(
                        "claude's sandbox needs {} on PATH (not found): the peer can edit files \
                         but its commands (tests, builds) will be denied; install them \
                         (Debian: apt-get install bubblewrap socat)",
                        req.missing_sandbox_deps.join(" and ")
                    ));
                }
            }
            Access::Full => {
                c.arg("--dangerously-skip-permissions");
                if req.is_root {
                    // claude refuses to skip permissions as root otherwise.
                    c.env_set.push(("IS_SANDBOX".into(), "1".into()));
                }
            }
        }
    }
    // A claude started from inside Claude Code hangs or refuses with these set.
    c.env_remove = vec!["CLAUDECODE".into(), "CLAUDE_CODE_ENTRYPOINT".into()];
    c.stdin = Some(req.prompt.clone());
    c
}

/// `baton attach`: Claude Code's interactive interface on the job's session
/// (`claude --resume <id>`), with the same tools, permission mode and
/// sandbox as the job had, so taking over grants nothing the job lacked.
pub fn interactive_resume(req: &Request, session: &str) -> CommandSpec {
    let mut c = CommandSpec::new("claude");
    c.args(["--resume", session]);
    if let Some(m) = &req.model {
        c.args(["--model", m]);
    }
    if let Some(e) = &req.effort {
        c.args(["--effort", e]);
    }
    match req.access {
        Access::ReadOnly => {
            c.args(["--tools", READ_ONLY_TOOLS, "--strict-mcp-config"]);
        }
        Access::Workspace => {
            c.args(["--permission-mode", "acceptEdits", "--settings"]);
            c.arg(workspace_settings(&req.extra.protected_paths));
            for d in &req.extra.writable_dirs {
                c.arg("--add-dir").arg(d);
            }
        }
        Access::Full => {
            c.arg("--dangerously-skip-permissions");
            if req.is_root {
                c.env_set.push(("IS_SANDBOX".into(), "1".into()));
            }
        }
    }
    c.env_remove = vec!["CLAUDECODE".into(), "CLAUDE_CODE_ENTRYPOINT".into()];
    c
}

#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    subtype: Option<Cow<'a, str>>,
    session_id: Option<String>,
    model: Option<String>,
    message: Option<Message>,
    // `result` event fields
    is_error: Option<bool>,
    result: Option<String>,
    usage: Option<ClaudeUsage>,
    total_cost_usd: Option<f64>,
    permission_denials: Option<Vec<PermissionDenial>>,
    api_error_status: Option<serde_json::Value>,
    api_error_type: Option<String>,
    structured_output: Option<serde_json::Value>,
    // `system`/`api_retry` event fields
    attempt: Option<u64>,
    max_retries: Option<u64>,
    error_status: Option<u16>,
    error: Option<String>,
}

#[derive(Deserialize)]
struct Message {
    id: Option<String>,
    model: Option<String>,
    usage: Option<ClaudeUsage>,
    #[serde(default)]
    content: Vec<Block>,
}

#[derive(Deserialize)]
struct Block {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
    /// tool_use: its id and tool name.
    id: Option<String>,
    name: Option<String>,
    /// tool_result: which call it answers, and whether it failed.
    tool_use_id: Option<String>,
    is_error: Option<bool>,
    content: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct ClaudeUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
}

impl ClaudeUsage {
    /// In baton's meaning: claude's `input_tokens` excludes cache reads and
    /// writes, baton's counts them.
    fn usage(&self, cost_usd: Option<f64>) -> Usage {
        let cached = self.cache_read_input_tokens.unwrap_or(0);
        let created = self.cache_creation_input_tokens.unwrap_or(0);
        Usage {
            input_tokens: self
                .input_tokens
                .map(|i| i.saturating_add(cached).saturating_add(created)),
            output_tokens: self.output_tokens,
            cached_input_tokens: Some(cached),
            reasoning_output_tokens: None,
            cost_usd,
            cost_estimated: false,
        }
    }
}

#[derive(Deserialize)]
struct PermissionDenial {
    tool_name: Option<String>,
    tool_input: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Default)]
pub struct Parser {
    session: Option<String>,
    model: Option<String>,
    last_text: Option<String>,
    result: Option<ResultEvent>,
    /// tool_use id → tool name, to name the tool a refusal was about.
    tool_names: Vec<(String, String)>,
    /// Calls the CLI refused because the tool is not available in this
    /// session (`--tools` allowlist): not in `permission_denials`.
    unavailable: Vec<Denial>,
    recognised: bool,
    /// The failure claude is retrying (its latest `api_retry` event): what
    /// it said, and its kind.
    retrying: Option<(String, Failure)>,
    /// Usage streamed on the assistant messages before the `result` event
    /// (which carries the call's own total): the messages that ended,
    /// summed, and the latest message's id and usage. claude repeats a
    /// message's usage on each of its content blocks, so a message counts
    /// once, with the last counts it showed. This is what the spending
    /// watch sees while the call runs (`--budget-tokens` stops it). Boxed:
    /// the `Parser` enum stays small.
    streamed: Box<(Usage, Option<(String, Usage)>)>,
}

#[derive(Debug, Clone)]
struct ResultEvent {
    is_error: bool,
    text: Option<String>,
    usage: Usage,
    denials: Vec<Denial>,
    api_status: Option<String>,
    api_error_type: Option<String>,
}

impl Parser {
    pub fn feed(&mut self, line: &[u8]) -> Signal {
        let Ok(ev) = serde_json::from_slice::<Event>(line) else {
            return Signal::Nothing;
        };
        self.recognised = true;
        if ev.session_id.is_some() {
            self.session = ev.session_id.clone();
        }
        match ev.kind.as_ref() {
            "system" if ev.subtype.as_deref() == Some("init") && ev.model.is_some() => {
                self.model = ev.model;
            }
            // Claude announces each retry of a failed API call (up to 10 by
            // default, over about three minutes for a 401: measured).
            "system" if ev.subtype.as_deref() == Some("api_retry") => {
                let category = ev.error.unwrap_or_default();
                let Some(kind) = retry_kind(ev.error_status, &category) else {
                    return Signal::Nothing;
                };
                let status = ev
                    .error_status
                    .map_or(String::new(), |s| format!("HTTP {s} "));
                let what = format!(
                    "{status}{category} (claude was retrying: attempt {} of {})",
                    ev.attempt.unwrap_or(0),
                    ev.max_retries.unwrap_or(0)
                );
                self.retrying = Some((what, kind));
                return Failing::bounded(kind);
            }
            "assistant" => {
                if let Some(m) = ev.message {
                    if m.model.is_some() {
                        self.model = m.model.clone();
                    }
                    if let Some(u) = &m.usage {
                        self.stream(m.id.clone().unwrap_or_default(), u.usage(None));
                    }
                    let text: String = m
                        .content
                        .iter()
                        .filter(|b| b.kind == "text")
                        .filter_map(|b| b.text.as_deref())
                        .collect();
                    if !text.is_empty() {
                        self.last_text = Some(text);
                    }
                    for b in &m.content {
                        if let (Some(id), Some(name)) = (&b.id, &b.name) {
                            self.tool_names.push((id.clone(), name.clone()));
                        }
                    }
                }
            }
            "user" => {
                for b in ev.message.map(|m| m.content).unwrap_or_default() {
                    self.tool_result(b);
                }
            }
            "result" => {
                let usage = ev
                    .usage
                    .map(|u| u.usage(ev.total_cost_usd))
                    .unwrap_or_default();
                let denials = ev
                    .permission_denials
                    .unwrap_or_default()
                    .into_iter()
                    .map(|d| Denial {
                        tool: d.tool_name.unwrap_or_else(|| "tool".into()),
                        detail: d
                            .tool_input
                            .map(|v| clip(&denial_detail(&v), 300))
                            .unwrap_or_default(),
                    })
                    .collect();
                // With --json-schema the validated object is the answer.
                let text = match ev.structured_output {
                    Some(v) if !v.is_null() => Some(v.to_string()),
                    _ => ev.result,
                };
                self.result = Some(ResultEvent {
                    is_error: ev.is_error.unwrap_or(false),
                    text,
                    usage,
                    denials,
                    api_status: ev
                        .api_error_status
                        .filter(|v| !v.is_null())
                        .map(|v| v.to_string()),
                    api_error_type: ev.api_error_type,
                });
                return Signal::TurnFinished;
            }
            _ => {}
        }
        Signal::Nothing
    }

    /// One assistant event's usage: the same message again replaces what
    /// it showed before, another one ends it.
    fn stream(&mut self, id: String, u: Usage) {
        let (done, current) = &mut *self.streamed;
        match current {
            Some((cur, last)) if *cur == id => *last = u,
            _ => {
                if let Some((_, ended)) = current.replace((id, u)) {
                    done.add(&ended);
                }
            }
        }
    }

    /// What the assistant messages streamed so far add up to.
    fn streamed(&self) -> Usage {
        let (done, current) = &*self.streamed;
        let mut u = done.clone();
        if let Some((_, last)) = current {
            u.add(last);
        }
        u
    }

    /// With `--tools Read,Grep,Glob` (read-only) a call to Write or Bash is
    /// answered `<tool_use_error>Error: No such tool available: Write. …` and
    /// is not listed in `permission_denials` (claude 2.1.332), so it is
    /// picked up from the tool result itself.
    fn tool_result(&mut self, b: Block) {
        if b.kind != "tool_result" || b.is_error != Some(true) {
            return;
        }
        let text = match &b.content {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => return,
        };
        if !text.contains("No such tool available") {
            return;
        }
        let tool = b
            .tool_use_id
            .and_then(|id| self.tool_names.iter().find(|(i, _)| *i == id))
            .map(|(_, n)| n.clone())
            .unwrap_or_else(|| "tool".into());
        let detail = text
            .trim_start_matches("<tool_use_error>")
            .trim_end_matches("</tool_use_error>")
            .trim_start_matches("Error: ");
        self.unavailable.push(Denial {
            tool,
            detail: clip(detail, 300),
        });
    }

    pub fn finish(self, end: &ProcessExit) -> Outcome {
        // Until its `result` event, a call has spent what it streamed.
        let streamed = self.streamed();
        let mut o = Outcome {
            session: self.session,
            model: self.model,
            usage: streamed,
            unparsable: !self.recognised,
            ..Outcome::default()
        };
        match self.result {
            Some(r) => {
                o.success = !r.is_error;
                if !r.usage.is_empty() {
                    o.usage = r.usage;
                }
                o.denials = r.denials;
                o.denials.extend(self.unavailable);
                if r.is_error {
                    let msg = r.text.unwrap_or_else(|| "claude reported is_error".into());
                    o.failure =
                        classify(r.api_status.as_deref(), r.api_error_type.as_deref(), &msg);
                    o.error = Some(match r.api_status {
                        Some(s) if !msg.contains(&s) => format!("{msg} (HTTP {s})"),
                        _ => msg,
                    });
                } else {
                    o.message = r.text.or(self.last_text);
                }
            }
            // Stopped while it retried: what it was retrying is the error.
            None if self.retrying.is_some() => {
                let (what, kind) = self.retrying.expect("checked");
                o.message = self.last_text;
                o.error = Some(what);
                o.failure = Some(Named::new(kind));
            }
            None => {
                o.message = self.last_text;
                o.error = last_line(&end.stderr_tail)
                    .or_else(|| Some("claude ended without a result event".into()));
            }
        }
        o
    }
}

/// The kind of an `api_retry` event: its HTTP status and claude's own
/// category (`authentication_failed`, `rate_limit`, `overloaded`,
/// `server_error`, `billing_error`, …; `unknown` with no status for a
/// refused or reset connection, which says too little to name).
fn retry_kind(status: Option<u16>, category: &str) -> Option<Failure> {
    match category {
        "authentication_failed" => Some(Failure::AuthRequired),
        "billing_error" => Some(Failure::QuotaExhausted),
        "rate_limit" => Some(Failure::RateLimited),
        "overloaded" | "server_error" => Some(Failure::ProviderUnavailable),
        _ => failure::from_provider(status, category),
    }
}

/// The kind of claude's final error (2.1.332, measured in
/// tests/fixtures/failures/claude): `api_error_status`, `api_error_type`
/// (the provider's `error.type`) and its message, which keeps the
/// provider's words for most faults and names the connection error
/// (`ECONNREFUSED`, `ECONNRESET`) for the network ones.
fn classify(status: Option<&str>, kind: Option<&str>, msg: &str) -> Option<Named> {
    // No key at all: claude says so before any request (no status).
    if msg.starts_with("Not logged in") {
        return Some(Named::new(Failure::AuthRequired));
    }
    let status = status.and_then(|s| s.parse::<u16>().ok());
    let text = format!("{} {msg}", kind.unwrap_or(""));
    let failure = failure::from_provider(status, &text)
        .or_else(|| failure::is_network(msg).then_some(Failure::Network))?;
    Some(Named {
        failure,
        retry_after_s: failure::retry_after_in(msg),
    })
}

/// What a denied tool call was aimed at (qwen's denials have the same shape).
pub(super) fn denial_detail(v: &serde_json::Value) -> String {
    for k in ["file_path", "command", "path", "url"] {
        if let Some(s) = v.get(k).and_then(|x| x.as_str()) {
            return s.to_string();
        }
    }
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Agent;
    use std::path::PathBuf;

    fn req(access: Access) -> Request {
        Request {
            model: Some("opus".into()),
            effort: Some("xhigh".into()),
            ..Request::test(access)
        }
    }

    const BASE: [&str; 9] = [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--model",
        "opus",
        "--effort",
        "xhigh",
        "",
    ];

    fn argv(r: &Request) -> Vec<String> {
        Agent::Claude.command(r).unwrap().args_lossy()
    }

    #[test]
    fn argv_per_access() {
        let base: Vec<&str> = BASE[..8].to_vec();
        let ro = argv(&req(Access::ReadOnly));
        assert_eq!(ro[..8], base[..]);
        assert_eq!(ro[8..], ["--tools", READ_ONLY_TOOLS, "--strict-mcp-config"]);
        let ws = argv(&req(Access::Workspace));
        assert_eq!(
            ws[8..],
            [
                "--permission-mode",
                "acceptEdits",
                "--settings",
                WORKSPACE_SETTINGS
            ]
        );
        let full = argv(&req(Access::Full));
        assert_eq!(full[8..], ["--dangerously-skip-permissions"]);
    }

    #[test]
    fn writable_dirs_are_add_dirs_in_workspace_mode_only() {
        let mut r = req(Access::Workspace);
        r.extra.writable_dirs = vec![
            PathBuf::from("/r/.git/worktrees/x"),
            PathBuf::from("/r/.git/objects"),
        ];
        let a = argv(&r);
        assert_eq!(
            a[8..],
            [
                "--permission-mode",
                "acceptEdits",
                "--settings",
                WORKSPACE_SETTINGS,
                "--add-dir",
                "/r/.git/worktrees/x",
                "--add-dir",
                "/r/.git/objects"
            ]
        );
        for access in [Access::ReadOnly, Access::Full] {
            let mut r = req(access);
            r.extra.writable_dirs = vec![PathBuf::from("/r/.git/objects")];
            assert!(!argv(&r).iter().any(|a| a == "--add-dir"), "{access:?}");
        }
    }

    #[test]
    fn protected_paths_become_sandbox_deny_writes() {
        let mut r = req(Access::Workspace);
        r.extra.protected_paths = vec![
            PathBuf::from("/r/.git/HEAD"),
            PathBuf::from("/r/.git/refs/heads/main"),
        ];
        let a = argv(&r);
        let i = a.iter().position(|x| x == "--settings").unwrap();
        let v: serde_json::Value = serde_json::from_str(&a[i + 1]).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": true,
                "filesystem": {"denyWrite": ["/r/.git/HEAD", "/r/.git/refs/heads/main"]}}})
        );
        // Without any, the plain workspace settings (and read-only never
        // gets a sandbox to configure).
        assert!(argv(&req(Access::Workspace)).contains(&WORKSPACE_SETTINGS.to_string()));
        let mut ro = req(Access::ReadOnly);
        ro.extra.protected_paths = vec![PathBuf::from("/r/.git/HEAD")];
        assert!(!argv(&ro).iter().any(|x| x == "--settings"));
    }

    #[test]
    fn full_as_root_sets_is_sandbox_and_strips_nesting_vars() {
        let mut r = req(Access::Full);
        r.is_root = true;
        let spec = Agent::Claude.command(&r).unwrap();
        assert_eq!(
            spec.env_set,
            vec![("IS_SANDBOX".to_string(), "1".to_string())]
        );
        assert_eq!(spec.env_remove, ["CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"]);
        assert_eq!(spec.stdin.as_deref(), Some("task"));
        let not_root = Agent::Claude.command(&req(Access::Full)).unwrap();
        assert!(not_root.env_set.is_empty());
    }

    #[test]
    fn resume_and_missing_sandbox_warning() {
        let mut r = req(Access::Workspace);
        r.resume = Some("abc".into());
        r.missing_sandbox_deps = vec!["bwrap", "socat"];
        let spec = Agent::Claude.command(&r).unwrap();
        let a = spec.args_lossy();
        let i = a.iter().position(|x| x == "--resume").unwrap();
        assert_eq!(a[i + 1], "abc");
        assert_eq!(spec.warnings.len(), 1);
        assert!(spec.warnings[0].contains("bwrap and socat"));
    }

    #[test]
    fn no_tools_for_packet_advice() {
        let mut r = req(Access::ReadOnly);
        r.extra.no_tools = true;
        let a = argv(&r);
        assert_eq!(a[8..], ["--tools", "", "--strict-mcp-config"]);
    }

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/tests/fixtures/claude/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    fn parse(name: &str, code: i32) -> Outcome {
        Agent::Claude.parse_transcript(
            &fixture(name),
            &ProcessExit {
                code: Some(code),
                stderr_tail: String::new(),
            },
        )
    }

    #[test]
    fn parses_stream() {
        let o = parse("claude-stream.jsonl", 0);
        assert!(o.success);
        assert_eq!(
            o.session.as_deref(),
            Some("770ccbf4-0cf4-4a19-a0da-79d885d7bddc")
        );
        assert_eq!(o.message.as_deref(), Some("Hi from the mock server!"));
        assert_eq!(o.model.as_deref(), Some("claude-opus-5-5"));
        assert_eq!(o.usage.input_tokens, Some(2563));
        assert_eq!(o.usage.output_tokens, Some(13));
        assert_eq!(o.usage.cost_usd, Some(0.010512));
    }

    #[test]
    fn parses_tool_stream_final_text() {
        let o = parse("claude-toolcall-stream.jsonl", 0);
        assert!(o.success);
        assert!(o.message.unwrap().starts_with("WRITE-DONE"));
    }

    #[test]
    fn json_output_forms_parse_too() {
        // `--output-format json` prints the same result object on one line.
        let o = parse("claude-api-error.json", 1);
        assert!(!o.success);
        assert!(
            o.error
                .unwrap()
                .contains("API Error: 400 mock: scripted invalid request")
        );
        let d = parse("claude-permission-denied.json", 0);
        assert!(d.success);
        assert_eq!(d.denials.len(), 1);
        assert_eq!(d.denials[0].tool, "Write");
        assert!(d.denials[0].detail.ends_with("out.txt"));
    }

    /// Real claude 2.1.332 output (e2e suite): read-only (`--tools
    /// Read,Grep,Glob`), the model calls Write anyway.
    #[test]
    fn unavailable_tool_is_a_denial() {
        let o = parse("claude-readonly-no-such-tool-stream.jsonl", 0);
        assert!(o.success);
        assert_eq!(o.denials.len(), 1, "{:?}", o.denials);
        assert_eq!(o.denials[0].tool, "Write");
        assert!(
            o.denials[0]
                .detail
                .starts_with("No such tool available: Write."),
            "{}",
            o.denials[0].detail
        );
        // A successful tool call is not a denial.
        assert!(parse("claude-toolcall-stream.jsonl", 0).denials.is_empty());
    }

    /// Real claude 2.1.332 output (e2e suite, `baton ask`): with
    /// `--json-schema` the model answers through the `StructuredOutput`
    /// tool, and the result event carries `structured_output`.
    #[test]
    fn json_schema_answer_is_the_structured_output() {
        let raw = fixture("claude-json-schema-structured-output-stream.jsonl");
        let o = parse("claude-json-schema-structured-output-stream.jsonl", 0);
        assert!(o.success);
        assert!(o.denials.is_empty(), "{:?}", o.denials);
        let msg = o.message.expect("message");
        let advice = crate::ask::advice::extract(&msg).expect("valid advice");
        assert_eq!(
            advice.advice.recommendation,
            "ASK-RECOMMENDATION: add a lock."
        );
        // The object comes from `structured_output`, not from `result`.
        let text = String::from_utf8(raw).unwrap();
        let mut lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let last = lines.last_mut().unwrap();
        let structured = last["structured_output"].clone();
        last["result"] = serde_json::Value::String(String::new());
        let stripped: String = lines.iter().map(|v| format!("{v}\n")).collect();
        let o = Agent::Claude.parse_transcript(stripped.as_bytes(), &ProcessExit::default());
        let got: serde_json::Value = serde_json::from_str(&o.message.unwrap()).unwrap();
        assert_eq!(got, structured);
    }

    /// Real claude 2.1.332 output: the model answered `--json-schema` with
    /// text, claude nudged once (`[structured-output-enforce]`), got text
    /// again and ended without `structured_output`: the text is the answer
    /// (and `baton ask` repairs it).
    #[test]
    fn json_schema_text_answer_falls_back_to_the_result_text() {
        let o = parse("claude-json-schema-text-answer-stream.jsonl", 0);
        assert!(o.success);
        assert_eq!(
            o.message.as_deref(),
            Some(r#"ASK-BAD: it is a race, add a lock. {"assessment": "a race"}"#)
        );
        let errors = crate::ask::advice::extract(o.message.as_deref().unwrap()).unwrap_err();
        assert!(
            errors
                .iter()
                .any(|e| e.contains("`recommendation` is missing"))
        );
    }

    #[test]
    fn usage_streams_per_message_until_the_result_replaces_it() {
        // The recorded tool-call stream: two messages (the first shown on
        // two content blocks, each with the same usage), then the result.
        let lines: Vec<Vec<u8>> = fixture("claude-toolcall-stream.jsonl")
            .split(|b| *b == b'\n')
            .map(<[u8]>::to_vec)
            .collect();
        let mut p = Parser::default();
        let mut seen = Vec::new();
        for l in &lines {
            if serde_json::from_slice::<serde_json::Value>(l).is_ok_and(|v| v["type"] == "result") {
                break;
            }
            p.feed(l);
            seen.push(p.clone().finish(&ProcessExit::default()).usage.input_tokens);
        }
        // Each message counts once (2567, then 2567 + 2694): never twice
        // for its two blocks.
        assert!(seen.contains(&Some(2567)), "{seen:?}");
        assert_eq!(seen.last(), Some(&Some(2567 + 2694)), "{seen:?}");
        assert!(
            seen.iter().all(|s| s.unwrap_or(0) <= 2567 + 2694),
            "{seen:?}"
        );
        // Stopped there (a budget, a timeout): the streamed usage stays.
        let o = p.clone().finish(&ProcessExit::default());
        assert_eq!(o.usage.output_tokens, Some(2));
        assert_eq!(o.usage.cost_usd, None);
        // The result event's totals replace it.
        let o = parse("claude-toolcall-stream.jsonl", 0);
        assert_eq!(o.usage.input_tokens, Some(5261));
        assert_eq!(o.usage.output_tokens, Some(108));
    }

    #[test]
    fn huge_counts_saturate_instead_of_wrapping() {
        let mut p = Parser::default();
        p.feed(
            br#"{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s","usage":{"input_tokens":18446744073709551615,"cache_read_input_tokens":2,"cache_creation_input_tokens":0,"output_tokens":1}}"#,
        );
        let o = p.finish(&ProcessExit::default());
        assert_eq!(o.usage.input_tokens, Some(u64::MAX));
    }

    #[test]
    fn no_result_event_is_a_failure() {
        let o = Agent::Claude.parse_transcript(
            b"",
            &ProcessExit {
                code: Some(1),
                stderr_tail: "Error: something broke\n".into(),
            },
        );
        assert!(!o.success);
        assert_eq!(o.error.as_deref(), Some("Error: something broke"));
    }
}
