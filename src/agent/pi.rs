//! Pi (`@mariozechner/pi-coding-agent`): `pi -p --mode json`, prompt on stdin.
//! Also Z.AI GLM through `pi --provider zai --model glm-5.2`.
//!
//! Facts this relies on (`shared/realcli/codex-pi.md`, pi 0.73.1): JSON mode
//! exits 0 even when the model call failed, so success is read from the last
//! assistant `message_end` (`stopReason: "error"` is a failure); the session id
//! is the first line's `id`; pi has no sandbox, only a tool allowlist, so
//! read-only is `--tools read,grep,find,ls` and workspace cannot be confined.

use std::borrow::Cow;

use serde::Deserialize;

use super::{Access, CommandSpec, Failing, Outcome, ProcessExit, Request, Signal, clip, last_line};
use crate::failure::{self, Failure, Named};
use crate::result::{Denial, Usage};

pub const READ_ONLY_TOOLS: &str = "read,grep,find,ls";

pub fn command(req: &Request, fixed_provider: Option<&str>) -> CommandSpec {
    let mut c = CommandSpec::new("pi");
    c.args(["-p", "--mode", "json"]);
    if let Some(p) = fixed_provider.or(req.provider.as_deref()) {
        c.args(["--provider", p]);
    }
    if let Some(m) = &req.model {
        c.args(["--model", m]);
    }
    if let Some(e) = &req.effort {
        c.args(["--thinking", e]);
    }
    if let Some(id) = &req.resume {
        c.args(["--session", id]);
    }
    if req.extra.no_tools {
        c.arg("--no-tools");
    } else {
        match req.access {
            // Under baton's sandbox the file system holds the access mode
            // (read-only: the checkout cannot be written), so pi keeps its
            // shell to run the project's tests; a write fails by the kernel.
            Access::ReadOnly | Access::Workspace if req.confined => {}
            Access::ReadOnly => {
                c.args(["--tools", READ_ONLY_TOOLS]);
            }
            Access::Workspace => c.warnings.push(
                "pi has no sandbox: with workspace access its bash/write/edit tools are not \
                 confined to the working directory (only read-only is enforced, by tool allowlist)"
                    .into(),
            ),
            Access::Full => {}
        }
    }
    c.stdin = Some(req.prompt.clone());
    c
}

/// `baton attach`: pi's interactive mode on the job's session file
/// (`pi --session <id>`), with the job's provider, model and tool allowlist.
pub fn interactive_resume(
    req: &Request,
    session: &str,
    fixed_provider: Option<&str>,
) -> CommandSpec {
    let mut c = CommandSpec::new("pi");
    if let Some(p) = fixed_provider.or(req.provider.as_deref()) {
        c.args(["--provider", p]);
    }
    if let Some(m) = &req.model {
        c.args(["--model", m]);
    }
    if let Some(e) = &req.effort {
        c.args(["--thinking", e]);
    }
    c.args(["--session", session]);
    if req.access == Access::ReadOnly {
        c.args(["--tools", READ_ONLY_TOOLS]);
    }
    c
}

#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    id: Option<String>,
    message: Option<Message>,
    #[serde(rename = "toolName")]
    tool_name: Option<String>,
    #[serde(rename = "isError")]
    is_error: Option<bool>,
    result: Option<ToolResult>,
    /// `auto_retry_start`: the error pi is retrying.
    #[serde(rename = "errorMessage")]
    error_message: Option<String>,
}

#[derive(Deserialize)]
struct Message {
    role: Option<String>,
    #[serde(default)]
    content: Vec<Block>,
    model: Option<String>,
    usage: Option<PiUsage>,
    #[serde(rename = "stopReason")]
    stop_reason: Option<String>,
    #[serde(rename = "errorMessage")]
    error_message: Option<String>,
}

#[derive(Deserialize)]
struct Block {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
}

#[derive(Deserialize)]
struct ToolResult {
    #[serde(default)]
    content: Vec<Block>,
}

#[derive(Deserialize)]
struct PiUsage {
    input: Option<u64>,
    output: Option<u64>,
    #[serde(rename = "cacheRead")]
    cache_read: Option<u64>,
    #[serde(rename = "cacheWrite")]
    cache_write: Option<u64>,
    cost: Option<Cost>,
}

#[derive(Deserialize)]
struct Cost {
    total: Option<f64>,
}

#[derive(Debug, Clone, Default)]
pub struct Parser {
    session: Option<String>,
    model: Option<String>,
    /// Last assistant message with text.
    message: Option<String>,
    last_stop: Option<String>,
    last_error: Option<String>,
    usage: Usage,
    ended: bool,
    denials: Vec<Denial>,
    recognised: bool,
    /// The error pi is retrying (its latest `auto_retry_start`).
    retrying: Option<String>,
}

impl Parser {
    pub fn feed(&mut self, line: &[u8]) -> Signal {
        // message_update lines repeat the whole partial message; skip them
        // unparsed (they are most of pi's output).
        if line.starts_with(br#"{"type":"message_update""#) {
            self.recognised = true;
            return Signal::Nothing;
        }
        let Ok(ev) = serde_json::from_slice::<Event>(line) else {
            return Signal::Nothing;
        };
        self.recognised = true;
        match ev.kind.as_ref() {
            "session" if self.session.is_none() => {
                self.session = ev.id;
            }
            "message_end" => {
                if let Some(m) = ev
                    .message
                    .filter(|m| m.role.as_deref() == Some("assistant"))
                {
                    self.assistant_end(m);
                }
            }
            "tool_execution_end" if ev.is_error == Some(true) => {
                let text: String = ev
                    .result
                    .map(|r| r.content.into_iter().filter_map(|b| b.text).collect())
                    .unwrap_or_default();
                // A tool left out by the allowlist comes back as "Tool X not found".
                if text.contains("not found") && text.starts_with("Tool ") {
                    self.denials.push(Denial {
                        tool: ev.tool_name.unwrap_or_else(|| "tool".into()),
                        detail: clip(&text, 300),
                    });
                }
            }
            "agent_end" => {
                self.ended = true;
                return Signal::TurnFinished;
            }
            // pi retries a failed call up to 3 times (with the SDK's own 2
            // retries under each: 12 requests, about 30 s, measured) and
            // says so first.
            "auto_retry_start" => {
                if let Some(m) = ev.error_message {
                    let kind = classify(&m);
                    self.retrying = Some(m);
                    if let Some(k) = kind {
                        return Failing::bounded(k);
                    }
                }
            }
            _ => {}
        }
        Signal::Nothing
    }

    fn assistant_end(&mut self, m: Message) {
        if m.model.is_some() {
            self.model = m.model;
        }
        if let Some(u) = m.usage {
            let cached = u.cache_read.unwrap_or(0);
            // 0 is pi's "no price known"; a negative cost is kept, for
            // `run::execute` to refuse with a warning.
            let cost = u.cost.and_then(|c| c.total).filter(|c| *c != 0.0);
            self.usage.add(&Usage {
                // pi's `input` excludes cached tokens.
                input_tokens: u.input.map(|i| {
                    i.saturating_add(cached)
                        .saturating_add(u.cache_write.unwrap_or(0))
                }),
                output_tokens: u.output,
                cached_input_tokens: Some(cached),
                reasoning_output_tokens: None,
                cost_usd: cost,
                cost_estimated: false,
            });
        }
        let text: String = m
            .content
            .iter()
            .filter(|b| b.kind == "text")
            .filter_map(|b| b.text.as_deref())
            .collect();
        if !text.trim().is_empty() {
            self.message = Some(text);
        }
        self.last_error = m.error_message;
        self.last_stop = m.stop_reason;
    }

    pub fn finish(self, end: &ProcessExit) -> Outcome {
        let failed_stop = matches!(self.last_stop.as_deref(), Some("error" | "aborted"));
        let own = failed_stop || self.retrying.is_some();
        let success = self.last_stop.is_some() && !failed_stop;
        let error = if failed_stop {
            Some(
                self.last_error
                    .unwrap_or_else(|| format!("pi stopped with {}", self.last_stop.unwrap())),
            )
        } else if success {
            None
        } else if let Some(m) = self.retrying {
            // Stopped while it retried: what it was retrying is the error.
            Some(m)
        } else {
            last_line(&end.stderr_tail).or_else(|| Some("pi ended without an answer".into()))
        };
        // Only pi's own error fields are classified (a last stderr line
        // could be anything), and its one fatal line about credentials.
        let failure = error.as_deref().and_then(|e| {
            let kind = if own {
                classify(e)?
            } else if e.starts_with("No API key found for") {
                Failure::AuthRequired
            } else {
                return None;
            };
            Some(Named {
                failure: kind,
                retry_after_s: failure::retry_after_in(e),
            })
        });
        Outcome {
            failure,
            success,
            error,
            session: self.session,
            message: self.message,
            usage: self.usage,
            model: self.model,
            denials: self.denials,
            warnings: Vec::new(),
            unparsable: !self.recognised,
        }
    }
}

/// The kind of a pi error message (0.73.1, measured in
/// tests/fixtures/failures/pi and zai): the provider's status, then its
/// message (`429 Rate limit reached…`), or the SDK's `Connection error.`.
fn classify(m: &str) -> Option<Failure> {
    failure::from_provider(failure::leading_status(m), m)
        .or_else(|| failure::is_network(m).then_some(Failure::Network))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Agent;

    fn req(access: Access) -> Request {
        Request::test(access)
    }

    #[test]
    fn zai_argv() {
        let mut r = req(Access::ReadOnly);
        r.model = Some("glm-5.2".into());
        r.effort = Some("high".into());
        r.resume = Some("sess".into());
        let a = Agent::Zai.command(&r).unwrap().args_lossy();
        assert_eq!(
            a,
            [
                "-p",
                "--mode",
                "json",
                "--provider",
                "zai",
                "--model",
                "glm-5.2",
                "--thinking",
                "high",
                "--session",
                "sess",
                "--tools",
                "read,grep,find,ls"
            ]
        );
    }

    #[test]
    fn pi_argv_workspace_warns_no_sandbox() {
        let mut r = req(Access::Workspace);
        r.provider = Some("openai".into());
        let spec = Agent::Pi.command(&r).unwrap();
        assert_eq!(
            spec.args_lossy(),
            ["-p", "--mode", "json", "--provider", "openai"]
        );
        assert_eq!(spec.warnings.len(), 1);
        assert_eq!(spec.stdin.as_deref(), Some("task"));
        let full = Agent::Pi.command(&req(Access::Full)).unwrap();
        assert_eq!(full.args_lossy(), ["-p", "--mode", "json"]);
        assert!(full.warnings.is_empty());
    }

    #[test]
    fn no_tools() {
        let mut r = req(Access::ReadOnly);
        r.extra.no_tools = true;
        let a = Agent::Pi.command(&r).unwrap().args_lossy();
        assert_eq!(a.last().unwrap(), "--no-tools");
    }

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/tests/fixtures/pi/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    fn parse(name: &str) -> Outcome {
        Agent::Pi.parse_transcript(
            &fixture(name),
            &ProcessExit {
                code: Some(0),
                stderr_tail: String::new(),
            },
        )
    }

    #[test]
    fn parses_basic() {
        let o = parse("pi-json-basic.jsonl");
        assert!(o.success);
        assert_eq!(
            o.session.as_deref(),
            Some("01a22af9-de6b-7251-aba9-57e300095b0c")
        );
        assert_eq!(o.message.as_deref(), Some("Hi from the mock model!"));
        assert_eq!(o.usage.input_tokens, Some(120));
        assert_eq!(o.usage.output_tokens, Some(12));
        assert_eq!(o.model.as_deref(), Some("mock-model"));
    }

    #[test]
    fn exit_zero_with_error_stop_is_a_failure() {
        let o = parse("pi-json-error.jsonl");
        assert!(!o.success);
        assert_eq!(o.error.as_deref(), Some("400 mock: scripted bad request"));
    }

    #[test]
    fn usage_sums_over_model_calls() {
        let o = parse("pi-json-toolcall.jsonl");
        assert!(o.success);
        assert_eq!(o.usage.input_tokens, Some(240));
    }

    #[test]
    fn resume_keeps_session() {
        let o = parse("pi-json-resume.jsonl");
        assert!(o.success);
        assert!(o.session.is_some());
    }
}
