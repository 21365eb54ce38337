//! OpenAI Codex CLI: `codex exec --json`, prompt on stdin (`-`).
//!
//! Facts this relies on (`shared/realcli/codex-pi.md`, codex 0.171.0):
//! exec-level flags go *before* `resume <id>`, and without `--sandbox` a
//! resumed turn is read-only, so the sandbox is always passed; stdin must be
//! closed or codex waits; `turn.completed.usage` is cumulative per thread.

use std::borrow::Cow;

use serde::Deserialize;

use super::{Access, CommandSpec, Failing, Outcome, ProcessExit, Request, Signal, clip, last_line};
use crate::failure::{self, Failure, Named};
use crate::result::{Denial, Usage};

pub fn command(req: &Request) -> CommandSpec {
    let mut c = CommandSpec::new("codex");
    c.args(["exec", "--json", "--skip-git-repo-check"]);
    match req.access {
        Access::ReadOnly => {
            c.args(["--sandbox", "read-only"]);
            // A reported bypass: an automatic approvals reviewer could grant
            // escalations; pin approvals to the (absent) user so none happen.
            c.args(["-c", "approvals_reviewer=\"user\""]);
        }
        Access::Workspace => {
            c.args(["--sandbox", "workspace-write"]);
            // Writable roots beside the cwd (a linked worktree's git metadata).
            for d in &req.extra.writable_dirs {
                c.arg("--add-dir").arg(d);
            }
        }
        Access::Full => {
            c.arg("--dangerously-bypass-approvals-and-sandbox");
        }
    }
    if let Some(m) = &req.model {
        c.args(["-m", m]);
    }
    if let Some(e) = &req.effort {
        c.arg("-c").arg(format!("model_reasoning_effort=\"{e}\""));
    }
    if let Some(p) = &req.profile {
        c.args(["--profile", p]);
    }
    if let Some((_, path)) = &req.extra.output_schema {
        c.arg("--output-schema").arg(path);
    }
    if let Some(id) = &req.resume {
        c.args(["resume", id]);
    }
    c.arg("-");
    c.stdin = Some(req.prompt.clone());
    c
}

/// `baton attach`: codex's own TUI on the job's thread (`codex resume
/// <id>`), under the same sandbox as the job. Unlike `exec`, the TUI has a
/// person to ask, so approvals go to them (`on-request`); read-only still
/// pins the reviewer to the user so nothing automatic grants an escalation.
pub fn interactive_resume(req: &Request, session: &str) -> CommandSpec {
    let mut c = CommandSpec::new("codex");
    c.arg("resume");
    match req.access {
        Access::ReadOnly => {
            c.args(["--sandbox", "read-only", "--ask-for-approval", "on-request"]);
            c.args(["-c", "approvals_reviewer=\"user\""]);
        }
        Access::Workspace => {
            c.args([
                "--sandbox",
                "workspace-write",
                "--ask-for-approval",
                "on-request",
            ]);
            for d in &req.extra.writable_dirs {
                c.arg("--add-dir").arg(d);
            }
        }
        Access::Full => {
            c.arg("--dangerously-bypass-approvals-and-sandbox");
        }
    }
    if let Some(m) = &req.model {
        c.args(["-m", m]);
    }
    if let Some(e) = &req.effort {
        c.arg("-c").arg(format!("model_reasoning_effort=\"{e}\""));
    }
    if let Some(p) = &req.profile {
        c.args(["--profile", p]);
    }
    c.arg(session);
    c
}

#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    thread_id: Option<String>,
    item: Option<Item<'a>>,
    usage: Option<CodexUsage>,
    error: Option<ErrorObj>,
    message: Option<String>,
}

/// Borrowed where it can be: most items (reasoning, command output) are
/// parsed only to be ignored, and need not be copied.
#[derive(Deserialize)]
struct Item<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    message: Option<Cow<'a, str>>,
    command: Option<String>,
    #[serde(borrow)]
    aggregated_output: Option<Cow<'a, str>>,
    status: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Clone, Copy)]
struct CodexUsage {
    input_tokens: Option<u64>,
    cached_input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    reasoning_output_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct ErrorObj {
    message: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Parser {
    session: Option<String>,
    message: Option<String>,
    usage: Option<Usage>,
    completed: bool,
    failed: Option<String>,
    last_error_event: Option<String>,
    denials: Vec<Denial>,
    warnings: Vec<String>,
    recognised: bool,
    /// The failure codex is retrying ("Reconnecting… n/5 (…)"): what it
    /// said, and its kind.
    retrying: Option<(String, Failure)>,
}

impl Parser {
    pub fn feed(&mut self, line: &[u8]) -> Signal {
        let Ok(ev) = serde_json::from_slice::<Event>(line) else {
            return Signal::Nothing;
        };
        self.recognised = true;
        match ev.kind.as_ref() {
            "thread.started" if ev.thread_id.is_some() => {
                self.session = ev.thread_id;
            }
            "item.completed" => {
                if let Some(item) = ev.item {
                    self.item_completed(item);
                }
            }
            "turn.completed" => {
                self.completed = true;
                if let Some(u) = ev.usage {
                    self.usage = Some(Usage {
                        input_tokens: u.input_tokens,
                        output_tokens: u.output_tokens,
                        cached_input_tokens: u.cached_input_tokens,
                        reasoning_output_tokens: u.reasoning_output_tokens,
                        cost_usd: None,
                        cost_estimated: false,
                    });
                }
                return Signal::TurnFinished;
            }
            "turn.failed" => {
                let msg = ev
                    .error
                    .and_then(|e| e.message)
                    .or_else(|| self.last_error_event.clone())
                    .unwrap_or_else(|| "codex reported turn.failed".into());
                self.failed = Some(msg);
                return Signal::TurnFinished;
            }
            "error" => {
                if let Some(m) = ev.message {
                    // Retries are announced as errors; they are not the
                    // outcome, but they say early what it will be.
                    if let Some(r) = retry_notice(&m) {
                        return self.retry(r);
                    }
                    self.last_error_event = Some(m);
                }
            }
            _ => {}
        }
        Signal::Nothing
    }

    fn retry(&mut self, r: Retry) -> Signal {
        let Some(kind) = classify(r.cause) else {
            return Signal::Nothing;
        };
        self.retrying = Some((r.cause.to_string(), kind));
        Signal::Failing(Failing {
            failure: kind,
            endless: r.endless,
        })
    }

    fn item_completed(&mut self, item: Item) {
        match item.kind.as_ref() {
            "agent_message" => {
                if let Some(t) = item.text {
                    self.message = Some(t.into_owned());
                }
            }
            "error" => {
                if let Some(m) = item.message.or(item.text) {
                    self.warnings.push(format!("codex: {}", clip(&m, 300)));
                }
            }
            "command_execution" if item.status.as_deref() == Some("failed") => {
                let out = item.aggregated_output.unwrap_or_default();
                // The sandbox refusing a write is what read-only looks like from here.
                if let Some(l) = out.lines().find(|l| {
                    l.contains("Read-only file system") || l.contains("Operation not permitted")
                }) {
                    self.denials.push(Denial {
                        tool: "shell".into(),
                        detail: format!(
                            "{}: {}",
                            clip(item.command.as_deref().unwrap_or("command"), 200),
                            clip(l, 200)
                        ),
                    });
                }
            }
            _ => {}
        }
    }

    pub fn finish(mut self, end: &ProcessExit) -> Outcome {
        self.denials.extend(stderr_denials(&end.stderr_tail));
        let error = self
            .failed
            .clone()
            .or_else(|| {
                (!self.completed)
                    .then(|| self.last_error_event.clone())
                    .flatten()
            })
            .map(|m| readable_error(&m))
            // Stopped while it retried: what it was retrying is the error.
            .or_else(|| {
                (!self.completed)
                    .then(|| self.retrying.as_ref().map(|(m, _)| m.clone()))
                    .flatten()
            })
            .or_else(|| {
                (end.code != Some(0) && !self.completed)
                    .then(|| last_line(&end.stderr_tail))
                    .flatten()
            });
        let failure = error.as_deref().and_then(|e| {
            let kind = classify(e)?;
            Some(Named {
                failure: kind,
                retry_after_s: failure::retry_after_in(e),
            })
        });
        Outcome {
            failure,
            success: self.completed && self.failed.is_none(),
            error,
            session: self.session,
            message: self.message,
            usage: self.usage.unwrap_or_default(),
            model: None,
            denials: self.denials,
            warnings: self.warnings,
            unparsable: !self.recognised,
        }
    }
}

/// A refused `apply_patch` leaves no item in the JSONL stream (codex 0.171):
/// the model gets "patch rejected: writing is blocked by read-only sandbox;
/// …" as the tool result, and the only trace a wrapper can see is a log line
/// on stderr, `ERROR codex_core::tools::router: error=patch rejected: …`.
/// Shell commands the sandbox blocks do show as failed `command_execution`
/// items (handled above), so only the router's rejections are read here.
fn stderr_denials(stderr: &str) -> Vec<Denial> {
    const MARK: &str = "codex_core::tools::router: error=";
    stderr
        .lines()
        .filter_map(|l| l.split_once(MARK).map(|(_, e)| e.trim()))
        .filter(|e| e.contains("rejected") || e.contains("blocked"))
        .map(|e| Denial {
            tool: if e.starts_with("patch rejected") {
                "apply_patch".into()
            } else {
                "tool".into()
            },
            detail: clip(e, 300),
        })
        .collect()
}

/// A retry codex announced: `Reconnecting... 2/5 (<cause>)`, or, with no
/// count, `Reconnecting... waiting for network (<cause>)`, which it repeats
/// without end (measured: over 5 minutes with retries off).
struct Retry<'a> {
    cause: &'a str,
    endless: bool,
}

fn retry_notice(m: &str) -> Option<Retry<'_>> {
    let rest = m
        .strip_prefix("Reconnecting")?
        .trim_start_matches('.')
        .trim_start();
    let (head, cause) = rest.split_once('(')?;
    Some(Retry {
        cause: cause.strip_suffix(')').unwrap_or(cause),
        endless: head.trim() == "waiting for network",
    })
}

/// What kind of failure a codex error message is (codex 0.171.0, measured
/// against each fault in tests/fixtures/failures/codex). Codex replaces
/// several provider errors with words of its own and drops their codes;
/// those words are read here, the rest by the shared table.
fn classify(m: &str) -> Option<Failure> {
    const OWN: &[(&str, Failure)] = &[
        // context_length_exceeded
        (
            "ran out of room in the model's context window",
            Failure::ContextTooLong,
        ),
        // insufficient_quota
        (
            "Quota exceeded. Check your plan and billing details",
            Failure::QuotaExhausted,
        ),
        // 503 server_is_overloaded
        (
            "Selected model is at capacity",
            Failure::ProviderUnavailable,
        ),
        // any other 5xx
        (
            "currently experiencing high demand",
            Failure::ProviderUnavailable,
        ),
    ];
    if let Some((_, f)) = OWN.iter().find(|(w, _)| m.contains(w)) {
        return Some(*f);
    }
    // "unexpected status 401 Unauthorized: …", "last status: 429 Too Many Requests".
    let status = ["unexpected status ", "last status: "]
        .iter()
        .find_map(|lead| {
            let i = m.find(lead)?;
            failure::leading_status(&m[i + lead.len()..])
        });
    failure::from_provider(status, m).or_else(|| failure::is_network(m).then_some(Failure::Network))
}

/// Codex passes API error bodies through verbatim (`{"error": {"message": …}}`);
/// keep the message people need, and the rest when it is not that shape.
fn readable_error(m: &str) -> String {
    #[derive(Deserialize)]
    struct Body {
        error: Inner,
    }
    #[derive(Deserialize)]
    struct Inner {
        message: String,
        #[serde(rename = "type")]
        kind: Option<String>,
    }
    match serde_json::from_str::<Body>(m) {
        Ok(b) => match b.error.kind {
            Some(k) => format!("{} ({k})", b.error.message),
            None => b.error.message,
        },
        Err(_) => m.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Agent;
    use std::path::PathBuf;

    fn req(access: Access) -> Request {
        Request {
            prompt: "do it".into(),
            effort: Some("high".into()),
            ..Request::test(access)
        }
    }

    fn argv(r: &Request) -> Vec<String> {
        Agent::Codex.command(r).unwrap().args_lossy()
    }

    #[test]
    fn argv_per_access() {
        assert_eq!(
            argv(&req(Access::Workspace)),
            [
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--sandbox",
                "workspace-write",
                "-c",
                "model_reasoning_effort=\"high\"",
                "-"
            ]
        );
        assert_eq!(
            argv(&req(Access::ReadOnly)),
            [
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--sandbox",
                "read-only",
                "-c",
                "approvals_reviewer=\"user\"",
                "-c",
                "model_reasoning_effort=\"high\"",
                "-"
            ]
        );
        assert_eq!(
            argv(&req(Access::Full)),
            [
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox",
                "-c",
                "model_reasoning_effort=\"high\"",
                "-"
            ]
        );
    }

    #[test]
    fn writable_dirs_are_add_dirs_in_workspace_mode_only() {
        let mut r = req(Access::Workspace);
        r.extra.writable_dirs = vec![
            PathBuf::from("/r/.git/worktrees/x"),
            PathBuf::from("/r/.git/objects"),
        ];
        r.resume = Some("t-1".into());
        let a = argv(&r);
        assert_eq!(
            a,
            [
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--sandbox",
                "workspace-write",
                "--add-dir",
                "/r/.git/worktrees/x",
                "--add-dir",
                "/r/.git/objects",
                "-c",
                "model_reasoning_effort=\"high\"",
                "resume",
                "t-1",
                "-"
            ]
        );
        // Full access has no sandbox to widen; read-only must stay read-only.
        for access in [Access::Full, Access::ReadOnly] {
            let mut r = req(access);
            r.extra.writable_dirs = vec![PathBuf::from("/r/.git/objects")];
            assert!(!argv(&r).iter().any(|a| a == "--add-dir"), "{access:?}");
        }
    }

    #[test]
    fn resume_keeps_exec_flags_before_resume() {
        let mut r = req(Access::Workspace);
        r.resume = Some("t-1".into());
        r.model = Some("gpt-5.6-sol".into());
        r.profile = Some("work".into());
        let a = argv(&r);
        assert_eq!(
            a,
            [
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--sandbox",
                "workspace-write",
                "-m",
                "gpt-5.6-sol",
                "-c",
                "model_reasoning_effort=\"high\"",
                "--profile",
                "work",
                "resume",
                "t-1",
                "-"
            ]
        );
        let spec = Agent::Codex.command(&r).unwrap();
        assert_eq!(spec.stdin.as_deref(), Some("do it"));
        assert!(
            !a.iter().any(|x| x.contains("do it")),
            "prompt must not be in argv"
        );
    }

    /// `--output-schema` is an exec-level flag: it goes before `resume <id>`,
    /// where real codex 0.171.0 honours it on the resumed turn (the e2e
    /// suite's `ask` repair round sees the json_schema text format again).
    #[test]
    fn output_schema_goes_before_resume() {
        let mut r = req(Access::ReadOnly);
        r.effort = None;
        r.extra.output_schema = Some(("{}".into(), PathBuf::from("/r/.baton/ask/s.json")));
        r.resume = Some("t-1".into());
        assert_eq!(
            argv(&r),
            [
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--sandbox",
                "read-only",
                "-c",
                "approvals_reviewer=\"user\"",
                "--output-schema",
                "/r/.baton/ask/s.json",
                "resume",
                "t-1",
                "-"
            ]
        );
    }

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/tests/fixtures/codex/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    fn parse(name: &str, code: i32) -> Outcome {
        Agent::Codex.parse_transcript(
            &fixture(name),
            &ProcessExit {
                code: Some(code),
                stderr_tail: String::new(),
            },
        )
    }

    #[test]
    fn parses_basic() {
        let o = parse("codex-exec-basic.jsonl", 0);
        assert!(o.success);
        assert_eq!(
            o.session.as_deref(),
            Some("01a22af9-9e2e-70e3-ad11-07b983a9c1d0")
        );
        assert_eq!(o.message.as_deref(), Some("Hi from the mock model!"));
        assert_eq!(o.usage.input_tokens, Some(120));
        assert_eq!(o.usage.output_tokens, Some(12));
        assert_eq!(o.error, None);
    }

    #[test]
    fn parses_usage_with_cache_and_reasoning() {
        let o = parse("codex-exec-usage.jsonl", 0);
        assert_eq!(o.usage.input_tokens, Some(1000));
        assert_eq!(o.usage.cached_input_tokens, Some(400));
        assert_eq!(o.usage.output_tokens, Some(50));
        assert_eq!(o.usage.reasoning_output_tokens, Some(20));
    }

    #[test]
    fn parses_api_error() {
        let o = parse("codex-exec-error.jsonl", 1);
        assert!(!o.success);
        let e = o.error.unwrap();
        assert!(e.contains("mock: scripted bad request"), "{e}");
    }

    #[test]
    fn parses_stream_failure() {
        let o = parse("codex-exec-stream-failed.jsonl", 1);
        assert!(!o.success);
        assert!(o.error.unwrap().contains("stream disconnected"));
    }

    #[test]
    fn readonly_write_is_a_denial() {
        let o = parse("codex-exec-readonly.jsonl", 0);
        assert!(o.success);
        assert_eq!(o.denials.len(), 1);
        assert!(o.denials[0].detail.contains("Read-only file system"));
    }

    /// Real codex 0.171.0 output (e2e suite): a freeform `apply_patch` under
    /// `--sandbox read-only` is refused, and only stderr says so.
    #[test]
    fn readonly_patch_rejection_on_stderr_is_a_denial() {
        let o = Agent::Codex.parse_transcript(
            &fixture("codex-exec-readonly-patch.jsonl"),
            &ProcessExit {
                code: Some(0),
                stderr_tail: String::from_utf8(fixture("codex-exec-readonly-patch.stderr.txt"))
                    .unwrap(),
            },
        );
        assert!(o.success);
        assert_eq!(o.denials.len(), 1, "{:?}", o.denials);
        assert_eq!(o.denials[0].tool, "apply_patch");
        assert!(
            o.denials[0]
                .detail
                .starts_with("patch rejected: writing is blocked by read-only sandbox")
        );
        // Other stderr noise is not a denial.
        let quiet = Agent::Codex.parse_transcript(
            &fixture("codex-exec-basic.jsonl"),
            &ProcessExit {
                code: Some(0),
                stderr_tail: "WARNING: proceeding, even though we could not create PATH aliases\n\
                              Reading additional input from stdin...\n"
                    .into(),
            },
        );
        assert!(quiet.denials.is_empty());
    }

    #[test]
    fn unknown_model_is_a_warning_not_a_failure() {
        let o = parse("codex-exec-unknown-model.jsonl", 0);
        assert!(o.success);
        assert_eq!(o.warnings.len(), 1);
        assert!(o.warnings[0].contains("Model metadata"));
    }

    #[test]
    fn garbage_is_unparsable() {
        let o = Agent::Codex.parse_transcript(b"hello\nworld\n", &ProcessExit::default());
        assert!(o.unparsable);
        assert!(!o.success);
    }

    #[test]
    fn zero_exit_without_turn_completed_is_not_success() {
        let o = Agent::Codex.parse_transcript(
            b"{\"type\":\"thread.started\",\"thread_id\":\"x\"}\n",
            &ProcessExit {
                code: Some(0),
                stderr_tail: String::new(),
            },
        );
        assert!(!o.success);
    }
}
