//! Qwen Code (`@qwen-code/qwen-code`, a fork of Google's gemini CLI):
//! `qwen --output-format stream-json`, prompt on stdin.
//!
//! Facts this relies on (measured with qwen 0.24.4 against the e2e mock, see
//! docs/agents-opencode-qwen.md): headless, a tool that needs approval is
//! declined, not asked for; `plan` and `default` decline `write_file` and
//! `run_shell_command`, `auto-edit` allows edits but declines the shell,
//! `yolo` allows everything. The events are claude's shape (`system/init`,
//! `assistant`, `user` tool results, `result` with `permission_denials`), but
//! `usage.input_tokens` already includes cached tokens, an API error is
//! `result.subtype: "error_during_execution"` with `error.message` (exit 1),
//! and `--output-format json` prints the same events as one array.

use std::borrow::Cow;

use serde::Deserialize;

use super::{Access, CommandSpec, Failing, Outcome, ProcessExit, Request, Signal, clip, last_line};
use crate::error::{Error, Result};
use crate::failure::{self, Failure, Named};
use crate::result::{Denial, Usage};

/// `--auth-type` values of qwen 0.24.4; baton's `--provider` picks one.
pub const AUTH_TYPES: [&str; 6] = [
    "openai",
    "openai-responses",
    "anthropic",
    "qwen-oauth",
    "gemini",
    "vertex-ai",
];

/// Usage errors the pure `command` cannot express.
pub fn check(req: &Request) -> Result<()> {
    req.provider.as_deref().map_or(Ok(()), check_provider)
}

/// baton's provider for qwen is one of qwen's auth types (the flag or
/// `[agents.qwen] provider`).
pub fn check_provider(p: &str) -> Result<()> {
    if AUTH_TYPES.contains(&p) {
        return Ok(());
    }
    Err(Error::usage_hint(
        format!("qwen has no auth type `{p}` (baton's provider picks qwen's `--auth-type`)"),
        format!("use one of: {}", AUTH_TYPES.join(", ")),
    ))
}

pub fn command(req: &Request) -> CommandSpec {
    let mut c = CommandSpec::new("qwen");
    c.args(["--output-format", "stream-json"]);
    let mode = match req.access {
        // Under baton's sandbox the file system holds the access mode (in
        // read-only nothing of the checkout is writable): the shell may run
        // the project's tests, confined as every tool is.
        Access::ReadOnly | Access::Workspace if req.confined => "yolo",
        Access::ReadOnly => "plan",
        Access::Workspace => "auto-edit",
        Access::Full => "yolo",
    };
    c.args(["--approval-mode", mode]);
    if req.access == Access::Workspace && !req.extra.no_tools && !req.confined {
        c.warnings.push(
            "qwen's auto-edit mode allows file edits but declines shell commands: the peer \
             cannot run tests; use --access full if it must"
                .into(),
        );
    }
    if let Some(p) = &req.provider {
        c.args(["--auth-type", p]);
    }
    if let Some(m) = &req.model {
        c.args(["--model", m]);
    }
    if let Some(id) = &req.resume {
        c.args(["--resume", id]);
    }
    if let Some((schema, _)) = &req.extra.output_schema {
        c.args(["--json-schema", schema]);
    }
    for d in &req.extra.writable_dirs {
        c.arg("--include-directories").arg(d);
    }
    c.stdin = Some(req.prompt.clone());
    c
}

/// `baton attach`: Qwen Code's interactive mode on the job's session
/// (`qwen --resume <id>`), in the job's approval mode.
pub fn interactive_resume(req: &Request, session: &str) -> CommandSpec {
    let mut c = CommandSpec::new("qwen");
    let mode = match req.access {
        Access::ReadOnly => "plan",
        Access::Workspace => "auto-edit",
        Access::Full => "yolo",
    };
    c.args(["--approval-mode", mode]);
    if let Some(p) = &req.provider {
        c.args(["--auth-type", p]);
    }
    if let Some(m) = &req.model {
        c.args(["--model", m]);
    }
    for d in &req.extra.writable_dirs {
        c.arg("--include-directories").arg(d);
    }
    c.args(["--resume", session]);
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
    is_error: Option<bool>,
    result: Option<serde_json::Value>,
    usage: Option<QwenUsage>,
    permission_denials: Option<Vec<PermissionDenial>>,
    error: Option<ErrObj>,
    structured_output: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Message {
    model: Option<String>,
    #[serde(default)]
    content: Vec<Block>,
}

#[derive(Deserialize)]
struct Block {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
}

#[derive(Deserialize)]
struct QwenUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct PermissionDenial {
    tool_name: Option<String>,
    tool_input: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct ErrObj {
    message: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Parser {
    session: Option<String>,
    model: Option<String>,
    last_text: Option<String>,
    /// The `result` event: (is_error, text, error message).
    result: Option<(bool, Option<String>, Option<String>)>,
    usage: Usage,
    denials: Vec<Denial>,
    recognised: bool,
    /// The error qwen is retrying (`Retrying in 60s (attempt 1/10): …` on
    /// stderr).
    retrying: Option<String>,
}

impl Parser {
    pub fn feed(&mut self, line: &[u8]) -> Signal {
        // `--output-format json`: every event in one array at the end.
        if line.first() == Some(&b'[') {
            let Ok(events) = serde_json::from_slice::<Vec<serde_json::Value>>(line) else {
                return Signal::Nothing;
            };
            let mut signal = Signal::Nothing;
            for ev in events {
                if self.feed(ev.to_string().as_bytes()) == Signal::TurnFinished {
                    signal = Signal::TurnFinished;
                }
            }
            return signal;
        }
        let Ok(ev) = serde_json::from_slice::<Event>(line) else {
            return Signal::Nothing;
        };
        self.recognised = true;
        if ev.session_id.is_some() {
            self.session = ev.session_id.clone();
        }
        match ev.kind.as_ref() {
            "system" if ev.subtype.as_deref() == Some("init") => {
                self.model = ev.model.or(self.model.take());
            }
            "assistant" => {
                if let Some(m) = ev.message {
                    self.model = m.model.or(self.model.take());
                    let text: String = m
                        .content
                        .iter()
                        .filter(|b| b.kind == "text")
                        .filter_map(|b| b.text.as_deref())
                        .collect();
                    if !text.is_empty() {
                        self.last_text = Some(text);
                    }
                }
            }
            "result" => {
                if let Some(u) = ev.usage {
                    self.usage = Usage {
                        input_tokens: u.input_tokens,
                        output_tokens: u.output_tokens,
                        cached_input_tokens: u.cache_read_input_tokens,
                        reasoning_output_tokens: None,
                        cost_usd: None,
                        cost_estimated: false,
                    };
                }
                self.denials = ev
                    .permission_denials
                    .unwrap_or_default()
                    .into_iter()
                    .map(|d| Denial {
                        tool: d.tool_name.unwrap_or_else(|| "tool".into()),
                        detail: d
                            .tool_input
                            .map(|v| clip(&super::claude::denial_detail(&v), 300))
                            .unwrap_or_default(),
                    })
                    .collect();
                let text = match (ev.structured_output, ev.result) {
                    (Some(v), _) if !v.is_null() => Some(v.to_string()),
                    (_, Some(serde_json::Value::String(s))) => Some(s),
                    (_, Some(v)) if !v.is_null() => Some(v.to_string()),
                    _ => None,
                };
                let is_error = ev.is_error.unwrap_or(false)
                    || ev.subtype.as_deref().is_some_and(|s| s != "success");
                let error = ev.error.and_then(|e| e.message).map(|m| readable(&m));
                self.result = Some((is_error, text, error));
                return Signal::TurnFinished;
            }
            _ => {}
        }
        Signal::Nothing
    }

    /// qwen announces its own retries on stderr only (0.24.4): up to 10
    /// for a 429 or a 5xx, the first after 60 s (measured: still going
    /// after 5 minutes).
    pub fn feed_stderr(&mut self, line: &[u8]) -> Signal {
        let Ok(l) = std::str::from_utf8(line) else {
            return Signal::Nothing;
        };
        let Some(rest) = l.strip_prefix("Retrying in ") else {
            return Signal::Nothing;
        };
        let Some((_, what)) = rest.split_once("): ") else {
            return Signal::Nothing;
        };
        let what = readable(what);
        let kind = classify(&what);
        self.retrying = Some(what);
        kind.map_or(Signal::Nothing, Failing::bounded)
    }

    pub fn finish(self, end: &ProcessExit) -> Outcome {
        let mut o = Outcome {
            session: self.session,
            model: self.model,
            usage: self.usage,
            denials: self.denials,
            unparsable: !self.recognised,
            ..Outcome::default()
        };
        match self.result {
            Some((false, text, _)) => {
                o.success = true;
                o.message = text.or(self.last_text);
            }
            Some((true, _, error)) => {
                // Kept for `ask`'s repair when the prose was the failure.
                if answered_in_plain_text(error.as_deref()) {
                    o.message = self.last_text.clone();
                }
                o.failure = error.as_deref().and_then(named);
                o.error = error
                    .or_else(|| self.last_text.as_deref().map(readable))
                    .or_else(|| Some("qwen reported an error".into()));
            }
            // Stopped while it retried: what it was retrying is the error.
            None if self.retrying.is_some() => {
                let what = self.retrying.expect("checked");
                o.message = self.last_text;
                o.failure = named(&what);
                o.error = Some(what);
            }
            None => {
                o.message = self.last_text;
                o.error = last_line(&end.stderr_tail)
                    .or_else(|| Some("qwen ended without a result event".into()));
            }
        }
        o
    }
}

/// The failure qwen reports when the model answered in prose although
/// `--json-schema` asked for its `structured_output` tool (measured, 0.24.4):
/// for `ask` an invalid answer to repair, not a broken adviser.
pub fn answered_in_plain_text(error: Option<&str>) -> bool {
    error.is_some_and(|e| e.contains("instead of calling the structured_output tool"))
}

/// The kind of a qwen API error (0.24.4, measured in
/// tests/fixtures/failures/qwen), unwrapped: the provider's status and
/// message (`429 Rate limit reached…`), or the OpenAI SDK's `Connection
/// error. (cause: connect ECONNREFUSED …)`.
fn classify(m: &str) -> Option<Failure> {
    failure::from_provider(failure::leading_status(m), m)
        .or_else(|| failure::is_network(m).then_some(Failure::Network))
}

fn named(error: &str) -> Option<Named> {
    let m = readable(error);
    Some(Named {
        failure: classify(&m)?,
        retry_after_s: failure::retry_after_in(&m),
    })
}

/// qwen wraps API errors: `[API Error: 400 mock: scripted bad request]`.
/// A note may follow on the next line (`…]\nPossible quota limitations in
/// place…`): it is qwen's generic advice, left out.
fn readable(m: &str) -> String {
    let t = m.trim();
    t.strip_prefix("[API Error:")
        .and_then(|r| r.split_once("]\n").map(|(a, _)| a).or(r.strip_suffix(']')))
        .map_or(t, str::trim)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Agent;
    use std::path::PathBuf;

    fn req(access: Access) -> Request {
        Request::test(access)
    }

    #[test]
    fn approval_modes_model_provider_resume() {
        for (a, m, warns) in [
            (Access::ReadOnly, "plan", false),
            (Access::Workspace, "auto-edit", true),
            (Access::Full, "yolo", false),
        ] {
            let spec = Agent::Qwen.command(&req(a)).unwrap();
            assert_eq!(
                spec.args_lossy(),
                ["--output-format", "stream-json", "--approval-mode", m]
            );
            assert_eq!(spec.warnings.is_empty(), !warns, "{m}");
            assert_eq!(spec.stdin.as_deref(), Some("task"));
        }
        let mut r = req(Access::ReadOnly);
        r.provider = Some("openai".into());
        r.model = Some("qwen3-coder-plus".into());
        r.resume = Some("s-1".into());
        r.extra.writable_dirs = vec![PathBuf::from("/g")];
        let args = Agent::Qwen.command(&r).unwrap().args_lossy();
        assert_eq!(
            args[4..],
            [
                "--auth-type",
                "openai",
                "--model",
                "qwen3-coder-plus",
                "--resume",
                "s-1",
                "--include-directories",
                "/g"
            ]
        );
    }

    #[test]
    fn unknown_auth_type_is_a_usage_error() {
        let mut r = req(Access::ReadOnly);
        r.provider = Some("zai".into());
        let e = Agent::Qwen.command(&r).unwrap_err();
        assert_eq!(e.kind(), "usage");
    }

    #[test]
    fn output_schema_is_passed() {
        let mut r = req(Access::ReadOnly);
        r.extra.output_schema = Some(("{\"type\":\"object\"}".into(), PathBuf::from("/s")));
        let args = Agent::Qwen.command(&r).unwrap().args_lossy();
        assert_eq!(args[4..], ["--json-schema", "{\"type\":\"object\"}"]);
    }

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/tests/fixtures/qwen/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    fn parse(name: &str, code: i32) -> Outcome {
        Agent::Qwen.parse_transcript(
            &fixture(name),
            &ProcessExit {
                code: Some(code),
                stderr_tail: String::new(),
            },
        )
    }

    #[test]
    fn parses_json_array() {
        let o = parse("qwen-json-basic.json", 0);
        assert!(o.success);
        assert_eq!(
            o.session.as_deref(),
            Some("3840af1a-1352-47fa-b729-8188315aa386")
        );
        assert_eq!(o.message.as_deref(), Some("bars plain answer 7731"));
        // The result's usage counts qwen's memory helper call too.
        assert_eq!(o.usage.input_tokens, Some(240));
        assert_eq!(o.usage.output_tokens, Some(24));
        assert_eq!(o.model.as_deref(), Some("m"));
    }

    #[test]
    fn parses_stream() {
        let o = parse("qwen-stream-plain.jsonl", 0);
        assert!(o.success);
        assert_eq!(
            o.message.as_deref(),
            Some("PLAIN-ANSWER: hello from the mock model.")
        );
        assert_eq!(o.usage.input_tokens, Some(2468));
        assert_eq!(o.usage.cached_input_tokens, Some(400));
        assert!(o.denials.is_empty());
    }

    #[test]
    fn plan_mode_denial_is_reported() {
        let o = parse("qwen-stream-plan-write.jsonl", 0);
        assert!(o.success);
        assert_eq!(o.denials.len(), 1);
        assert_eq!(o.denials[0].tool, "write_file");
        assert!(o.denials[0].detail.ends_with("/out.txt"));
    }

    #[test]
    fn api_error_is_a_failure() {
        let o = parse("qwen-stream-api-error.jsonl", 1);
        assert!(!o.success);
        assert_eq!(o.error.as_deref(), Some("400 mock: scripted bad request"));
        assert!(o.session.is_some());
    }

    /// `--json-schema` and a prose answer: qwen fails the turn (exit 1);
    /// the prose is kept so `ask` can repair it.
    #[test]
    fn prose_instead_of_structured_output() {
        let o = parse("qwen-stream-json-schema-prose.jsonl", 1);
        assert!(!o.success);
        assert!(answered_in_plain_text(o.error.as_deref()));
        assert!(o.message.unwrap().starts_with("ASK-BAD: it is a race"));
        assert!(!answered_in_plain_text(Some("400 bad request")));
    }

    #[test]
    fn no_result_event_is_a_failure() {
        let o = Agent::Qwen.parse_transcript(
            b"",
            &ProcessExit {
                code: Some(1),
                stderr_tail: "boom\n".into(),
            },
        );
        assert!(!o.success);
        assert_eq!(o.error.as_deref(), Some("boom"));
    }
}
