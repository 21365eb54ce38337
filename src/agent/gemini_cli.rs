//! Google's Gemini CLI: `gemini -o stream-json`, prompt on stdin.
//!
//! Facts this relies on (`shared/realcli/claude-gemini.md`, gemini-cli
//! 0.61.0): headless mode needs a trusted folder (`--skip-trust`), else exit
//! 55; in `default` approval mode the mutating tools are not even declared to
//! the model (so read-only is enforced by the CLI), `auto_edit` declares edit
//! tools but not shell, `yolo` allows everything; an API error ends the stream
//! with `{"type":"result","status":"error"}` and exit = HTTP status mod 256.

use std::borrow::Cow;

use serde::Deserialize;

use super::{Access, CommandSpec, Outcome, ProcessExit, Request, Signal, clip, last_line};
use crate::failure::{self, Failure, Named};
use crate::result::{Denial, Usage};

pub fn command(req: &Request) -> CommandSpec {
    let mut c = CommandSpec::new("gemini");
    c.args(["--output-format", "stream-json", "--skip-trust"]);
    let mode = match req.access {
        // Under baton's sandbox the file system holds the access mode (in
        // read-only nothing of the checkout is writable): the shell may run
        // the project's tests, confined as every tool is.
        Access::ReadOnly | Access::Workspace if req.confined => "yolo",
        Access::ReadOnly => "default",
        Access::Workspace => "auto_edit",
        Access::Full => "yolo",
    };
    c.args(["--approval-mode", mode]);
    if req.access == Access::Workspace && !req.extra.no_tools && !req.confined {
        c.warnings.push(
            "gemini-cli's auto_edit mode allows file edits but not shell commands: the peer \
             cannot run tests; use --access full if it must"
                .into(),
        );
    }
    if let Some(m) = &req.model {
        c.args(["--model", m]);
    }
    if let Some(id) = &req.resume {
        c.args(["--resume", id]);
    }
    c.stdin = Some(req.prompt.clone());
    c
}

/// `baton attach`: gemini-cli's interactive mode on the job's session
/// (`gemini --resume <id>`), in the job's approval mode.
pub fn interactive_resume(req: &Request, session: &str) -> CommandSpec {
    let mut c = CommandSpec::new("gemini");
    c.arg("--skip-trust");
    // Headless `default` denies what needs approval; interactively it would
    // ask the person, so read-only takes gemini-cli's read-only `plan` mode.
    let mode = match req.access {
        Access::ReadOnly => "plan",
        Access::Workspace => "auto_edit",
        Access::Full => "yolo",
    };
    c.args(["--approval-mode", mode]);
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
    session_id: Option<String>,
    model: Option<String>,
    role: Option<Cow<'a, str>>,
    content: Option<String>,
    #[serde(default)]
    delta: bool,
    tool_name: Option<String>,
    tool_id: Option<String>,
    status: Option<String>,
    error: Option<ErrObj>,
    output: Option<serde_json::Value>,
    stats: Option<Stats>,
}

#[derive(Deserialize)]
struct ErrObj {
    message: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
}

#[derive(Deserialize)]
struct Stats {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cached: Option<u64>,
    models: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Debug, Clone, Default)]
pub struct Parser {
    session: Option<String>,
    model: Option<String>,
    /// Assistant text since the last tool call: the final answer.
    text: String,
    tools: Vec<(String, String)>,
    status: Option<String>,
    error: Option<String>,
    /// The provider's error as the result event carried it (the JSON body
    /// inside `[API Error: …]`, or gemini-cli's own words).
    raw_error: Option<String>,
    usage: Usage,
    denials: Vec<Denial>,
    recognised: bool,
}

impl Parser {
    pub fn feed(&mut self, line: &[u8]) -> Signal {
        let Ok(ev) = serde_json::from_slice::<Event>(line) else {
            return Signal::Nothing;
        };
        self.recognised = true;
        match ev.kind.as_ref() {
            "init" => {
                self.session = ev.session_id.or(self.session.take());
                self.model = ev.model.filter(|m| m != "auto");
            }
            "message" if ev.role.as_deref() == Some("assistant") => {
                let c = ev.content.unwrap_or_default();
                if ev.delta {
                    self.text.push_str(&c);
                } else {
                    self.text = c;
                }
            }
            "tool_use" => {
                self.text.clear();
                if let (Some(id), Some(name)) = (ev.tool_id, ev.tool_name) {
                    self.tools.push((id, name));
                }
            }
            "tool_result" if ev.status.as_deref().is_some_and(|s| s != "success") => {
                let name = ev
                    .tool_id
                    .as_ref()
                    .and_then(|id| self.tools.iter().find(|(i, _)| i == id))
                    .map(|(_, n)| n.clone())
                    .unwrap_or_else(|| "tool".into());
                let detail = ev
                    .error
                    .and_then(|e| e.message)
                    .or_else(|| ev.output.map(|o| o.to_string()))
                    .unwrap_or_default();
                // Undeclared (mutating) tools in default mode, denied policy calls.
                if detail.contains("not found")
                    || detail.contains("denied")
                    || detail.contains("not allowed")
                {
                    self.denials.push(Denial {
                        tool: name,
                        detail: clip(&detail, 300),
                    });
                }
            }
            "result" => {
                self.status = ev.status;
                if let Some(e) = ev.error {
                    let m = e.message.unwrap_or_default();
                    self.raw_error = Some(m.clone());
                    self.error = Some(match e.kind {
                        // The real CLI (0.61.0) says `"type":"unknown"` for API errors.
                        Some(k) if !m.is_empty() && k != "unknown" => {
                            format!("{} ({k})", readable(&m))
                        }
                        _ => readable(&m),
                    });
                }
                if let Some(s) = ev.stats {
                    self.usage = Usage {
                        input_tokens: s.input_tokens,
                        output_tokens: s.output_tokens,
                        cached_input_tokens: s.cached,
                        reasoning_output_tokens: None,
                        cost_usd: None,
                        cost_estimated: false,
                    };
                    if self.model.is_none() {
                        self.model = s.models.and_then(|m| main_model(&m));
                    }
                }
                return Signal::TurnFinished;
            }
            _ => {}
        }
        Signal::Nothing
    }

    pub fn finish(self, end: &ProcessExit) -> Outcome {
        let success = self.status.as_deref() == Some("success");
        let error = if success {
            None
        } else {
            self.error
                .or_else(|| stderr_error(&end.stderr_tail))
                .or_else(|| Some("gemini ended without a result".into()))
        };
        let failure = if success {
            None
        } else {
            self.raw_error
                .as_deref()
                .and_then(|raw| classify(raw, end.code))
        };
        Outcome {
            failure,
            success,
            error,
            session: self.session,
            message: (!self.text.is_empty()).then_some(self.text),
            usage: self.usage,
            model: self.model,
            denials: self.denials,
            warnings: Vec::new(),
            unparsable: !self.recognised,
        }
    }
}

/// The kind of gemini-cli's error (0.61.0, measured in
/// tests/fixtures/failures/gemini-cli): the provider's JSON body inside
/// `[API Error: …]` when it kept it, else its own words. Its exit code is
/// the HTTP status modulo 256 (400–511 → 144–255), the status when the
/// message lost it.
fn classify(raw: &str, code: Option<i32>) -> Option<Named> {
    let body = raw
        .trim()
        .strip_prefix("[API Error:")
        .map_or(raw, |r| r.rsplit_once(']').map_or(r, |(b, _)| b))
        .trim();
    let status = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.pointer("/error/code").and_then(|c| c.as_u64()))
        .and_then(|c| u16::try_from(c).ok())
        .or_else(|| {
            code.filter(|c| (144..=255).contains(c))
                .map(|c| c as u16 + 256)
        });
    let failure = if raw.contains("exhausted your daily quota") {
        // gemini-cli's `TerminalQuotaError`: the per-day quota.
        Failure::QuotaExhausted
    } else if status == Some(429) && raw.contains("exceeded your current quota") {
        // The same words for a minute's rate and a day's quota; gemini-cli
        // tells them apart by the quota id and says the day's one in the
        // words above, so what is left is the rate it retried.
        Failure::RateLimited
    } else {
        failure::from_provider(status, body)
            .or_else(|| failure::is_network(body).then_some(Failure::Network))?
    };
    Some(Named {
        failure,
        retry_after_s: failure::retry_after_in(raw),
    })
}

/// The router model (`…-lite`) answers a helper call on every turn; the
/// model that did the work is the other one.
fn main_model(models: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
    models
        .keys()
        .find(|k| !k.contains("lite"))
        .or_else(|| models.keys().next())
        .cloned()
}

/// API errors carry the provider's JSON body as the message; in the
/// stream-json result gemini-cli 0.61.0 wraps it: `[API Error: {…}]`.
fn readable(m: &str) -> String {
    let body = m
        .trim()
        .strip_prefix("[API Error:")
        .and_then(|r| r.strip_suffix(']'))
        .map_or(m, str::trim);
    let v: serde_json::Value = match serde_json::from_str(body) {
        Ok(v) => v,
        Err(_) => return m.to_string(),
    };
    v.pointer("/error/message")
        .and_then(|x| x.as_str())
        .map(str::to_string)
        .unwrap_or_else(|| m.to_string())
}

/// With json output an API error leaves stdout empty and puts
/// `{"error":{"message":…}}` on stderr after a stack trace.
fn stderr_error(stderr: &str) -> Option<String> {
    if let Some(i) = stderr.find("\"message\":") {
        let rest = &stderr[i + "\"message\":".len()..];
        let mut de = serde_json::Deserializer::from_str(rest.trim_start()).into_iter::<String>();
        if let Some(Ok(s)) = de.next() {
            return Some(readable(&s));
        }
    }
    last_line(stderr)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Agent;

    fn req(access: Access) -> Request {
        Request::test(access)
    }

    #[test]
    fn approval_modes() {
        for (a, m) in [
            (Access::ReadOnly, "default"),
            (Access::Workspace, "auto_edit"),
            (Access::Full, "yolo"),
        ] {
            let args = Agent::GeminiCli.command(&req(a)).unwrap().args_lossy();
            assert_eq!(
                args,
                [
                    "--output-format",
                    "stream-json",
                    "--skip-trust",
                    "--approval-mode",
                    m
                ]
            );
        }
        let mut r = req(Access::ReadOnly);
        r.model = Some("gemini-3.8-flash".into());
        r.resume = Some("s-1".into());
        let args = Agent::GeminiCli.command(&r).unwrap().args_lossy();
        assert_eq!(
            args[5..],
            ["--model", "gemini-3.8-flash", "--resume", "s-1"]
        );
    }

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/tests/fixtures/gemini-cli/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    #[test]
    fn parses_stream() {
        let o = Agent::GeminiCli.parse_transcript(
            &fixture("gemini-stream.jsonl"),
            &ProcessExit {
                code: Some(0),
                stderr_tail: String::new(),
            },
        );
        assert!(o.success);
        assert_eq!(
            o.session.as_deref(),
            Some("7b71b6d4-24df-4508-b0be-4f4d00af201c")
        );
        assert_eq!(o.message.as_deref(), Some("Hi from the mock server!"));
        assert_eq!(o.usage.input_tokens, Some(287));
        assert_eq!(o.usage.output_tokens, Some(27));
        assert_eq!(o.model.as_deref(), Some("gemini-3.8-flash"));
    }

    #[test]
    fn final_message_is_text_after_last_tool() {
        let o = Agent::GeminiCli.parse_transcript(
            &fixture("gemini-toolcall-stream.jsonl"),
            &ProcessExit {
                code: Some(0),
                stderr_tail: String::new(),
            },
        );
        assert!(o.success);
        assert!(o.message.unwrap().starts_with("WRITE-DONE"));
    }

    #[test]
    fn api_error_from_stderr_when_stdout_is_empty() {
        let stderr = String::from_utf8(fixture("gemini-api-error.stderr.txt")).unwrap();
        let o = Agent::GeminiCli.parse_transcript(
            b"",
            &ProcessExit {
                code: Some(144),
                stderr_tail: stderr,
            },
        );
        assert!(!o.success);
        assert_eq!(o.error.as_deref(), Some("mock: scripted invalid request"));
    }

    #[test]
    fn stream_error_result() {
        let line = br#"{"type":"result","status":"error","error":{"type":"Error","message":"{\"error\":{\"code\":400,\"message\":\"bad thing\"}}"},"stats":{}}"#;
        let o = Agent::GeminiCli.parse_transcript(
            line,
            &ProcessExit {
                code: Some(144),
                stderr_tail: String::new(),
            },
        );
        assert!(!o.success);
        assert_eq!(o.error.as_deref(), Some("bad thing (Error)"));
    }

    /// Real gemini-cli 0.61.0 output (e2e suite): HTTP 400 in stream-json.
    #[test]
    fn real_stream_api_error_is_readable() {
        let o = Agent::GeminiCli.parse_transcript(
            &fixture("gemini-stream-api-error.jsonl"),
            &ProcessExit {
                code: Some(144),
                stderr_tail: String::new(),
            },
        );
        assert!(!o.success);
        assert_eq!(o.error.as_deref(), Some("mock: scripted bad request"));
        assert_eq!(
            o.session.as_deref(),
            Some("01249849-c798-4134-b471-6738c4853aa2")
        );
    }
}
