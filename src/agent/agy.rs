//! Google Antigravity (`agy`): `agy --output-format json … --print <prompt>`.
//!
//! No package registry ships agy, so this adapter follows the public record in
//! `shared/realcli/agy.md` and is tested with fakes only. Facts it relies on:
//! the prompt must be the value of `--print`, last (no stdin prompt; stdin is
//! /dev/null because some versions hang on a non-TTY stdin); headless agy
//! cannot ask for approval, so `--dangerously-skip-permissions` is always
//! needed and `--sandbox` (before it) confines terminal commands; there is no
//! read-only mode at all (refused in `Agent::command`); several failures exit
//! 0 and are recognised from the last line of output.

use super::{Access, CommandSpec, Outcome, ProcessExit, Request, Signal, last_line};
use crate::error::{Error, Result};
use crate::failure::{self, Failure, Named};
use crate::result::Usage;

/// Linux's limit for one argument (`MAX_ARG_STRLEN`, 32 pages, with its
/// terminating NUL); the prompt is one argument for agy.
pub const MAX_PROMPT_ARG: usize = 32 * 4096;

/// agy output beyond this is not kept for parsing (it is still logged).
const MAX_BUFFER: usize = 16 << 20;

/// Usage errors the pure `command` cannot express: the prompt is one
/// argument, the value of `--print`.
pub fn check(req: &Request) -> Result<()> {
    if req.prompt.starts_with('-') {
        // Only `--raw` leaves the task first; baton's brief never starts with `-`.
        return Err(Error::usage_hint(
            "agy takes the prompt as the value of its `--print`, and a prompt that starts \
             with `-` would be read as an option of agy's",
            "start the task with another character, or drop --raw",
        ));
    }
    if req.prompt.len() >= MAX_PROMPT_ARG {
        // Refused here rather than as an obscure E2BIG from exec.
        return Err(Error::usage_hint(
            format!(
                "the prompt is {} bytes; agy takes it as one argument, and Linux allows \
                 less than {} KiB in one argument",
                req.prompt.len(),
                MAX_PROMPT_ARG / 1024
            ),
            "shorten the task (point to files instead of pasting them), or use an agent \
             that reads the prompt on stdin",
        ));
    }
    Ok(())
}

pub fn command(req: &Request) -> CommandSpec {
    let mut c = CommandSpec::new("agy");
    c.args(["--output-format", "json"]);
    if let Some(m) = &req.model {
        c.args(["--model", m]);
    }
    if let Some(e) = &req.effort {
        c.args(["--effort", e]);
    }
    c.args(["--mode", "accept-edits"]);
    if req.access != Access::Full {
        // Must precede --dangerously-skip-permissions: agy applies flags left to right.
        c.arg("--sandbox");
    }
    c.arg("--dangerously-skip-permissions");
    c.arg("--add-dir").arg(&req.cwd);
    for d in &req.extra.writable_dirs {
        c.arg("--add-dir").arg(d);
    }
    // agy's own print timeout defaults to 5 minutes; baton's timeout governs.
    c.arg("--print-timeout")
        .arg(format!("{}s", req.timeout_secs));
    if let Some(id) = &req.resume {
        c.args(["--conversation", id]);
    }
    c.arg("--print").arg(&req.prompt);
    c.stdin = None;
    c
}

#[derive(Debug, Clone, Default)]
pub struct Parser {
    buf: Vec<u8>,
    last_line: String,
    truncated: bool,
}

impl Parser {
    pub fn feed(&mut self, line: &[u8]) -> Signal {
        if self.buf.len() + line.len() < MAX_BUFFER {
            self.buf.extend_from_slice(line);
            self.buf.push(b'\n');
        } else {
            self.truncated = true;
        }
        self.last_line = String::from_utf8_lossy(line).into_owned();
        // stream-json form: the last event carries the outcome.
        if line.starts_with(b"{\"event\":\"result\"") {
            return Signal::TurnFinished;
        }
        Signal::Nothing
    }

    pub fn finish(self, end: &ProcessExit) -> Outcome {
        let mut o = Outcome::default();
        let text = String::from_utf8_lossy(&self.buf);
        let obj = serde_json::from_str::<serde_json::Value>(text.trim())
            .ok()
            .or_else(|| serde_json::from_str(self.last_line.trim()).ok());
        let obj = obj.map(|v| match v.get("result") {
            // stream-json: {"event":"result","result":{…}}
            Some(r) if v.get("event").is_some() => r.clone(),
            _ => v,
        });
        let Some(v) = obj.filter(|v| v.is_object()) else {
            o.unparsable = true;
            let known = false_success(&self.last_line, &end.stderr_tail);
            o.failure = known.as_deref().and_then(classify);
            o.error = known
                .or_else(|| last_line(&end.stderr_tail))
                .or_else(|| Some("agy printed no JSON result".into()));
            return o;
        };
        let s = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
        let n = |k: &str| v.get(k).and_then(|x| x.as_u64());
        o.session = s("conversation_id").or_else(|| s("session_id"));
        o.message = s("response");
        o.model = s("model");
        let status_ok = s("status").is_some_and(|st| st.eq_ignore_ascii_case("success"));
        let is_error = v.get("is_error").and_then(|x| x.as_bool()).unwrap_or(false);
        let cached = n("cache_read_tokens");
        o.usage = Usage {
            input_tokens: n("input_tokens").map(|i| i.saturating_add(cached.unwrap_or(0))),
            output_tokens: n("output_tokens"),
            cached_input_tokens: cached,
            reasoning_output_tokens: None,
            cost_usd: None,
            cost_estimated: false,
        };
        let false_success = false_success(&self.last_line, &end.stderr_tail);
        o.success = status_ok && !is_error && false_success.is_none();
        if !o.success {
            // Its documented failure texts, and the provider's error in
            // `error` (Gemini's codes and words).
            o.failure = false_success
                .as_deref()
                .and_then(classify)
                .or_else(|| classify(&v.get("error").map(|e| e.to_string()).unwrap_or_default()));
            o.error = false_success
                .or_else(|| match v.get("error") {
                    Some(serde_json::Value::String(e)) => Some(e.clone()),
                    Some(e) if !e.is_null() => e
                        .get("message")
                        .and_then(|m| m.as_str())
                        .map(str::to_string)
                        .or_else(|| Some(e.to_string())),
                    _ => None,
                })
                .or_else(|| s("status").map(|st| format!("agy status: {st}")))
                .or_else(|| Some("agy reported no status".into()));
        }
        if self.truncated {
            o.warnings
                .push("agy output exceeded 16 MiB; the rest is only in the log".into());
        }
        o
    }
}

/// The kind of an agy failure, from its documented output only (no agy
/// binary is available to measure; shared/realcli/agy.md): its login that
/// is missing or timed out, a tool call headless mode had to deny, and the
/// provider's codes or a connection error in its `error` field. A timeout
/// waiting for the model could be the provider or agy: not named.
fn classify(text: &str) -> Option<Named> {
    let failure =
        if text.contains("authentication required") || text.contains("authentication timed out") {
            Failure::AuthRequired
        } else if text.contains("auto-denied") {
            Failure::SandboxDenied
        } else {
            failure::from_provider(None, text)
                .or_else(|| failure::is_network(text).then_some(Failure::Network))?
        };
    Some(Named {
        failure,
        retry_after_s: failure::retry_after_in(text),
    })
}

/// agy exits 0 on some failures; public wrappers recognise them by text.
fn false_success(stdout_last: &str, stderr: &str) -> Option<String> {
    let err_last = last_line(stderr).unwrap_or_default();
    for l in [stdout_last.trim(), err_last.as_str()] {
        if l.starts_with("Error:")
            && (l.contains("timed out waiting for response")
                || l.contains("authentication required")
                || l.contains("authentication timed out"))
        {
            return Some(l.to_string());
        }
    }
    if stderr.contains("headless mode cannot prompt for") && stderr.contains("auto-denied") {
        return Some("agy needed an approval that headless mode cannot give (auto-denied)".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Agent;
    use std::path::PathBuf;

    fn req(access: Access) -> Request {
        Request {
            prompt: "the task".into(),
            model: Some("gemini-3.7-flash".into()),
            effort: Some("high".into()),
            cwd: PathBuf::from("/repo"),
            ..Request::test(access)
        }
    }

    #[test]
    fn argv_workspace_and_full() {
        let ws = Agent::Agy.command(&req(Access::Workspace)).unwrap();
        assert_eq!(
            ws.args_lossy(),
            [
                "--output-format",
                "json",
                "--model",
                "gemini-3.7-flash",
                "--effort",
                "high",
                "--mode",
                "accept-edits",
                "--sandbox",
                "--dangerously-skip-permissions",
                "--add-dir",
                "/repo",
                "--print-timeout",
                "3600s",
                "--print",
                "the task"
            ]
        );
        assert_eq!(ws.stdin, None);
        let mut r = req(Access::Full);
        r.resume = Some("conv-1".into());
        let full = Agent::Agy.command(&r).unwrap().args_lossy();
        assert!(!full.contains(&"--sandbox".to_string()));
        let i = full.iter().position(|a| a == "--conversation").unwrap();
        assert_eq!(full[i + 1], "conv-1");
        assert_eq!(full[full.len() - 2..], ["--print", "the task"]);
    }

    #[test]
    fn writable_dirs_follow_the_cwd_add_dir() {
        let mut r = req(Access::Workspace);
        r.extra.writable_dirs = vec![PathBuf::from("/r/.git/objects")];
        let a = Agent::Agy.command(&r).unwrap().args_lossy();
        let i = a.iter().position(|x| x == "/repo").unwrap();
        assert_eq!(a[i + 1..i + 3], ["--add-dir", "/r/.git/objects"]);
        assert_eq!(a[a.len() - 2..], ["--print", "the task"]);
    }

    #[test]
    fn a_prompt_too_long_for_one_argument_is_a_usage_error() {
        let mut r = req(Access::Workspace);
        r.prompt = "x".repeat(MAX_PROMPT_ARG - 1);
        assert!(Agent::Agy.command(&r).is_ok());
        r.prompt.push('x');
        let e = Agent::Agy.command(&r).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("one argument"), "{e}");
        // Agents that read stdin take it.
        assert!(Agent::Codex.command(&r).is_ok());
    }

    #[test]
    fn read_only_is_refused() {
        let e = Agent::Agy.command(&req(Access::ReadOnly)).unwrap_err();
        assert_eq!(e.kind(), "unsupported_access");
        assert_eq!(e.exit_code(), 2);
    }

    fn parse(out: &str, code: i32, stderr: &str) -> Outcome {
        Agent::Agy.parse_transcript(
            out.as_bytes(),
            &ProcessExit {
                code: Some(code),
                stderr_tail: stderr.into(),
            },
        )
    }

    #[test]
    fn parses_json_object() {
        let o = parse(
            "{\n  \"response\": \"done\",\n  \"conversation_id\": \"c-9\",\n  \"status\": \"SUCCESS\",\n  \"input_tokens\": 10, \"cache_read_tokens\": 4, \"output_tokens\": 3\n}\n",
            0,
            "",
        );
        assert!(o.success, "{o:?}");
        assert_eq!(o.session.as_deref(), Some("c-9"));
        assert_eq!(o.message.as_deref(), Some("done"));
        assert_eq!(o.usage.input_tokens, Some(14));
        assert_eq!(o.usage.cached_input_tokens, Some(4));
    }

    #[test]
    fn false_successes() {
        let o = parse("Error: request timed out waiting for response\n", 0, "");
        assert!(!o.success);
        assert!(o.error.unwrap().contains("timed out"));
        let o = parse(
            "{\"response\":\"\",\"status\":\"success\"}",
            0,
            "headless mode cannot prompt for permission; auto-denied\n",
        );
        assert!(!o.success);
        assert!(o.error.unwrap().contains("auto-denied"));
    }

    #[test]
    fn stream_result_event_and_errors() {
        let o = parse(
            "{\"event\":\"result\",\"result\":{\"conversation_id\":\"c1\",\"status\":\"success\",\"response\":\"ok\"}}\n",
            0,
            "",
        );
        assert!(o.success);
        assert_eq!(o.session.as_deref(), Some("c1"));
        let o = parse(
            "{\"status\":\"ERROR\",\"is_error\":true,\"error\":\"quota\"}",
            0,
            "",
        );
        assert!(!o.success);
        assert_eq!(o.error.as_deref(), Some("quota"));
        let o = parse("plain text only", 0, "");
        assert!(!o.success);
        assert!(o.unparsable);
    }
}
