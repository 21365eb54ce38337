//! `baton logs`: a peer's event stream rendered for people — its messages,
//! the commands it ran, the files it changed, its errors — one agent at a
//! time. Pure (bytes in, lines out) so each agent's rendering is tested on the
//! recorded transcripts in `tests/fixtures/`.
//!
//! Kept beside the job commands rather than in `agent/<cli>.rs`: the parsers
//! there extract a result and must stay strict about what counts as success;
//! rendering is lenient display of every event, and reads the events as
//! generic JSON so that a new field or event type never breaks `logs`.

use serde_json::Value;

use crate::agent::{Agent, clip};

/// Buffered agy output kept for the final parse (agy prints one object at the end).
const AGY_MAX: usize = 16 << 20;

/// Renders one job's stream, line by line.
pub struct Renderer {
    agent: Agent,
    /// gemini-cli streams assistant text in pieces; joined until the next event.
    pending: String,
    /// agy prints one (pretty-printed) object at the end: kept until `flush`.
    agy: Vec<u8>,
}

impl Renderer {
    pub fn new(agent: Agent) -> Renderer {
        Renderer {
            agent,
            pending: String::new(),
            agy: Vec::new(),
        }
    }

    /// Lines for people from one line of the peer's stdout.
    pub fn feed(&mut self, line: &[u8]) -> Vec<String> {
        if self.agent == Agent::Gemini {
            if self.agy.len() + line.len() < AGY_MAX {
                self.agy.extend_from_slice(line);
                self.agy.push(b'\n');
            }
            return Vec::new();
        }
        let text = String::from_utf8_lossy(line);
        let text = text.trim();
        if text.is_empty() {
            return Vec::new();
        }
        let Ok(v) = serde_json::from_str::<Value>(text) else {
            // Not an event (a CLI warning on stdout): show it as it is.
            let mut out = self.flush_pending();
            out.push(clip(text, 500));
            return out;
        };
        match self.agent {
            Agent::Codex => codex(&v),
            // Qwen Code's stream-json is claude's event shape.
            Agent::Claude | Agent::Qwen => claude(&v),
            Agent::Opencode => opencode(&v),
            Agent::Zai | Agent::Pi => pi(&v),
            Agent::GeminiCli => self.gemini_cli(&v),
            Agent::Gemini => Vec::new(),
        }
    }

    /// Whatever is still held back (end of the stream).
    pub fn flush(&mut self) -> Vec<String> {
        let mut out = self.flush_pending();
        if !self.agy.is_empty() {
            out.extend(agy(&String::from_utf8_lossy(&self.agy)));
            self.agy.clear();
        }
        out
    }

    fn flush_pending(&mut self) -> Vec<String> {
        if self.pending.trim().is_empty() {
            self.pending.clear();
            return Vec::new();
        }
        vec![message(&std::mem::take(&mut self.pending))]
    }

    fn gemini_cli(&mut self, v: &Value) -> Vec<String> {
        let kind = s(v, "type");
        if kind == "message" && s(v, "role") == "assistant" {
            let c = s(v, "content");
            if v.get("delta").and_then(Value::as_bool).unwrap_or(false) {
                self.pending.push_str(c);
                return Vec::new();
            }
            self.pending.clear();
            return vec![message(c)];
        }
        let mut out = self.flush_pending();
        match kind {
            "init" => out.push(session(s(v, "session_id"), v.get("model"))),
            "tool_use" => {
                let p = v.get("parameters").unwrap_or(&Value::Null);
                out.push(tool(s(v, "tool_name"), p));
            }
            "tool_result" if s(v, "status") != "success" => {
                let msg = v
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or(s(v, "status"));
                out.push(format!("  failed: {}", clip(msg, 300)));
            }
            "result" => {
                if s(v, "status") == "success" {
                    let tokens = v.pointer("/stats/total_tokens").and_then(Value::as_u64);
                    out.push(match tokens {
                        Some(t) => format!("done ({t} tokens)"),
                        None => "done".into(),
                    });
                } else {
                    let msg = v
                        .pointer("/error/message")
                        .and_then(Value::as_str)
                        .unwrap_or("the turn failed");
                    out.push(error(msg));
                }
            }
            "error" => {
                let msg = v
                    .pointer("/error/message")
                    .or_else(|| v.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("error");
                out.push(error(msg));
            }
            _ => {}
        }
        out
    }
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn session(id: &str, model: Option<&Value>) -> String {
    match model.and_then(Value::as_str).filter(|m| !m.is_empty()) {
        Some(m) => format!("session {id} (model {m})"),
        None => format!("session {id}"),
    }
}

/// An agent message: `» ` on the first line, the rest indented.
fn message(text: &str) -> String {
    let mut out = String::new();
    for (i, l) in text.trim().lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(if i == 0 { "» " } else { "  " });
        out.push_str(l);
    }
    out
}

fn error(msg: &str) -> String {
    format!("error: {}", clip(&readable(msg), 500))
}

/// API error bodies arrive as JSON text; keep their message.
fn readable(msg: &str) -> String {
    serde_json::from_str::<Value>(msg)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| msg.to_string())
}

fn thinking(text: &str) -> String {
    format!("thinking: {}", clip(text.lines().next().unwrap_or(""), 160))
}

/// A tool call, named the way people think of it: commands as `$ …`,
/// file tools as the verb and the path.
fn tool(name: &str, input: &Value) -> String {
    let arg = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| input.get(*k).and_then(Value::as_str))
            .unwrap_or("")
            .to_string()
    };
    let path = || arg(&["file_path", "path", "filePath", "notebook_path"]);
    match name.to_ascii_lowercase().as_str() {
        "bash" | "shell" | "run_shell_command" | "exec_command" => {
            format!("$ {}", clip(&arg(&["command", "cmd"]), 300))
        }
        "write" | "write_file" | "create" => format!("write {}", path()),
        "edit" | "multiedit" | "replace" | "str_replace" | "notebookedit" => {
            format!("edit {}", path())
        }
        "read" | "read_file" | "read_many_files" => format!("read {}", path()),
        "grep" | "glob" | "find" | "ls" | "search_file_content" | "list_directory" => {
            let what = arg(&["pattern", "query", "path", "dir_path"]);
            format!("{} {}", name.to_ascii_lowercase(), clip(&what, 200))
                .trim_end()
                .to_string()
        }
        _ => format!("tool {name}"),
    }
}

fn codex(v: &Value) -> Vec<String> {
    let item = v.get("item").unwrap_or(&Value::Null);
    let item_type = s(item, "type");
    match (s(v, "type"), item_type) {
        ("thread.started", _) => vec![session(s(v, "thread_id"), None)],
        ("item.started", "command_execution") => {
            vec![format!("$ {}", clip(s(item, "command"), 300))]
        }
        ("item.completed", "command_execution") => {
            let code = item.get("exit_code").and_then(Value::as_i64);
            if s(item, "status") == "failed" || code.is_some_and(|c| c != 0) {
                let out = s(item, "aggregated_output");
                let last = out
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("");
                let code = code.map_or("failed".to_string(), |c| format!("exit {c}"));
                vec![
                    format!("  {code}: {}", clip(last, 300))
                        .trim_end()
                        .to_string(),
                ]
            } else {
                Vec::new()
            }
        }
        ("item.completed", "agent_message") => vec![message(s(item, "text"))],
        ("item.completed", "reasoning") => vec![thinking(s(item, "text"))],
        ("item.completed", "file_change") => item
            .get("changes")
            .and_then(Value::as_array)
            .map(|cs| {
                cs.iter()
                    .map(|c| {
                        let verb = match s(c, "kind") {
                            "add" => "add",
                            "delete" => "delete",
                            _ => "edit",
                        };
                        format!("{verb} {}", s(c, "path"))
                    })
                    .collect()
            })
            .unwrap_or_default(),
        ("item.completed", "mcp_tool_call") => {
            vec![format!("tool {}.{}", s(item, "server"), s(item, "tool"))]
        }
        ("item.completed", "web_search") => vec![format!("search {}", s(item, "query"))],
        ("item.completed", "error") => vec![error(s(item, "message"))],
        ("turn.completed", _) => {
            let u = v.get("usage").unwrap_or(&Value::Null);
            let n = |k: &str| u.get(k).and_then(Value::as_u64);
            match (n("input_tokens"), n("output_tokens")) {
                (Some(i), Some(o)) => vec![format!("done ({i} in, {o} out tokens)")],
                _ => vec!["done".into()],
            }
        }
        ("turn.failed", _) => {
            let m = v
                .pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or("the turn failed");
            vec![error(m)]
        }
        ("error", _) => vec![error(s(v, "message"))],
        _ => Vec::new(),
    }
}

fn opencode(v: &Value) -> Vec<String> {
    let part = v.get("part").unwrap_or(&Value::Null);
    match s(v, "type") {
        "text" => vec![message(s(part, "text"))],
        "tool_use" => {
            let state = part.get("state").unwrap_or(&Value::Null);
            let mut out = vec![tool(
                s(part, "tool"),
                state.get("input").unwrap_or(&Value::Null),
            )];
            if s(state, "status") == "error" {
                out.push(format!("  failed: {}", clip(s(state, "error"), 300)));
            }
            out
        }
        "step_finish" if s(part, "reason") == "stop" => {
            match part.pointer("/tokens/total").and_then(Value::as_u64) {
                Some(t) => vec![format!("done ({t} tokens)")],
                None => vec!["done".into()],
            }
        }
        "error" => {
            let msg = v
                .pointer("/error/data/message")
                .or_else(|| v.pointer("/error/name"))
                .and_then(Value::as_str)
                .unwrap_or("error");
            vec![error(msg)]
        }
        _ => Vec::new(),
    }
}

fn claude(v: &Value) -> Vec<String> {
    let blocks = || {
        v.pointer("/message/content")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    match s(v, "type") {
        "system" if s(v, "subtype") == "init" => {
            vec![session(s(v, "session_id"), v.get("model"))]
        }
        "assistant" => blocks()
            .iter()
            .filter_map(|b| match s(b, "type") {
                "text" => Some(message(s(b, "text"))).filter(|m| !m.is_empty()),
                "thinking" => Some(thinking(s(b, "thinking"))),
                "tool_use" => Some(tool(s(b, "name"), b.get("input").unwrap_or(&Value::Null))),
                _ => None,
            })
            .collect(),
        "user" => blocks()
            .iter()
            .filter(|b| {
                s(b, "type") == "tool_result"
                    && b.get("is_error").and_then(Value::as_bool).unwrap_or(false)
            })
            .map(|b| {
                let c = match b.get("content") {
                    Some(Value::String(t)) => t.clone(),
                    Some(Value::Array(parts)) => parts
                        .iter()
                        .map(|p| s(p, "text"))
                        .collect::<Vec<_>>()
                        .join(" "),
                    _ => String::new(),
                };
                format!("  failed: {}", clip(&c, 300))
            })
            .collect(),
        "result" => {
            let mut out: Vec<String> = v
                .get("permission_denials")
                .and_then(Value::as_array)
                .map(|ds| {
                    ds.iter()
                        .map(|d| {
                            let input = d.get("tool_input").unwrap_or(&Value::Null);
                            let what = ["file_path", "command", "path", "url"]
                                .iter()
                                .find_map(|k| input.get(*k).and_then(Value::as_str))
                                .unwrap_or("");
                            format!("denied: {} {}", s(d, "tool_name"), clip(what, 200))
                                .trim_end()
                                .to_string()
                        })
                        .collect()
                })
                .unwrap_or_default();
            if v.get("is_error").and_then(Value::as_bool).unwrap_or(false) {
                out.push(error(s(v, "result")));
            } else {
                let turns = v.get("num_turns").and_then(Value::as_u64);
                let cost = v.get("total_cost_usd").and_then(Value::as_f64);
                out.push(match (turns, cost) {
                    (Some(t), Some(c)) => format!("done ({t} turns, ${c:.4})"),
                    (Some(t), None) => format!("done ({t} turns)"),
                    _ => "done".into(),
                });
            }
            out
        }
        _ => Vec::new(),
    }
}

fn pi(v: &Value) -> Vec<String> {
    match s(v, "type") {
        "session" => vec![session(s(v, "id"), None)],
        "message_end"
            if v.pointer("/message/role").and_then(Value::as_str) == Some("assistant") =>
        {
            let m = &v["message"];
            let mut out: Vec<String> = m
                .get("content")
                .and_then(Value::as_array)
                .map(|bs| {
                    bs.iter()
                        .filter_map(|b| match s(b, "type") {
                            "text" => Some(message(s(b, "text"))).filter(|t| !t.is_empty()),
                            "thinking" => Some(thinking(s(b, "thinking"))),
                            "toolCall" => Some(tool(
                                s(b, "name"),
                                b.get("arguments").unwrap_or(&Value::Null),
                            )),
                            _ => None,
                        })
                        .collect()
                })
                .unwrap_or_default();
            if s(m, "stopReason") == "error" {
                let e = s(m, "errorMessage");
                out.push(error(if e.is_empty() {
                    "the model call failed"
                } else {
                    e
                }));
            }
            out
        }
        "tool_execution_end" if v.get("isError").and_then(Value::as_bool) == Some(true) => {
            let text = v
                .pointer("/result/content/0/text")
                .and_then(Value::as_str)
                .unwrap_or("");
            vec![format!("  failed: {}", clip(text, 300))]
        }
        _ => Vec::new(),
    }
}

fn agy(out: &str) -> Vec<String> {
    let obj = serde_json::from_str::<Value>(out.trim()).ok().or_else(|| {
        out.lines()
            .rev()
            .find_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
    });
    let Some(mut v) = obj.filter(Value::is_object) else {
        return out
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| clip(l, 500))
            .collect();
    };
    if v.get("event").is_some()
        && let Some(r) = v.get("result")
    {
        v = r.clone();
    }
    let mut lines = Vec::new();
    let id = v
        .get("conversation_id")
        .or_else(|| v.get("session_id"))
        .and_then(Value::as_str);
    if let Some(id) = id {
        lines.push(session(id, v.get("model")));
    }
    let resp = s(&v, "response");
    if !resp.trim().is_empty() {
        lines.push(message(resp));
    }
    let ok = s(&v, "status").eq_ignore_ascii_case("success")
        && !v.get("is_error").and_then(Value::as_bool).unwrap_or(false);
    if ok {
        lines.push("done".into());
    } else {
        let e = match v.get("error") {
            Some(Value::String(e)) => e.clone(),
            Some(e) if !e.is_null() => s(e, "message").to_string(),
            _ => format!("agy status: {}", s(&v, "status")),
        };
        lines.push(error(&e));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(agent: Agent, fixture: &str) -> Vec<String> {
        let path = format!("{}/tests/fixtures/{fixture}", env!("CARGO_MANIFEST_DIR"));
        let bytes = std::fs::read(path).unwrap();
        let mut r = Renderer::new(agent);
        let mut out = Vec::new();
        for line in bytes.split(|b| *b == b'\n') {
            out.extend(r.feed(line));
        }
        out.extend(r.flush());
        out
    }

    #[test]
    fn codex_commands_files_messages_and_errors() {
        assert_eq!(
            render(Agent::Codex, "codex/codex-exec-toolcall.jsonl"),
            [
                "session 01a22af9-a071-7611-888e-982e8c37de31",
                "$ /bin/bash -lc 'echo hello > out.txt'",
                "» Created out.txt with hello.",
                "done (240 in, 24 out tokens)",
            ]
        );
        let patch = render(Agent::Codex, "codex/codex-exec-patch.jsonl");
        assert!(
            patch.contains(&"add /tmp/scratch/run-all/ws/codex-patch/hello.txt".to_string()),
            "{patch:?}"
        );
        let ro = render(Agent::Codex, "codex/codex-exec-readonly.jsonl");
        assert!(
            ro.contains(&"  exit 1: /bin/bash: line 1: blocked.txt: Read-only file system".into()),
            "{ro:?}"
        );
        let err = render(Agent::Codex, "codex/codex-exec-error.jsonl");
        assert_eq!(err.last().unwrap(), "error: mock: scripted bad request");
    }

    #[test]
    fn claude_tools_and_result() {
        let out = render(Agent::Claude, "claude/claude-toolcall-stream.jsonl");
        assert_eq!(
            out[0],
            "session d31686a2-cfc7-4ad2-89bb-ee3962bd308a (model claude-opus-5-5)"
        );
        assert_eq!(out[1], "» Creating out.txt.");
        assert_eq!(out[2], "write /tmp/scratch/run/w/c-tool-stream/out.txt");
        assert!(out[3].starts_with("» WRITE-DONE"), "{out:?}");
        assert!(
            out.last().unwrap().starts_with("done (2 turns, $0.0232"),
            "{out:?}"
        );
        let denied = render(Agent::Claude, "claude/claude-permission-denied.json");
        assert!(
            denied
                .iter()
                .any(|l| l.starts_with("denied: Write ") && l.ends_with("out.txt")),
            "{denied:?}"
        );
        let err = render(Agent::Claude, "claude/claude-api-error.json");
        assert!(
            err.last()
                .unwrap()
                .contains("API Error: 400 mock: scripted invalid request"),
            "{err:?}"
        );
    }

    #[test]
    fn pi_tool_calls_without_the_streaming_deltas() {
        assert_eq!(
            render(Agent::Pi, "pi/pi-json-toolcall.jsonl"),
            [
                "session 01a22af9-e997-750e-96cf-856ecc4dc565",
                "$ echo hello > out.txt",
                "» Created out.txt with hello.",
            ]
        );
        let w = render(Agent::Zai, "pi/pi-json-write.jsonl");
        assert_eq!(w[1], "write hello.txt");
        let e = render(Agent::Pi, "pi/pi-json-error.jsonl");
        assert_eq!(e.last().unwrap(), "error: 400 mock: scripted bad request");
    }

    #[test]
    fn opencode_and_qwen() {
        let out = render(Agent::Opencode, "opencode/opencode-write.jsonl");
        assert!(
            out.iter()
                .any(|l| l.starts_with("write /tmp/scratch/ws/out.txt")),
            "{out:?}"
        );
        assert!(out.iter().any(|l| l.starts_with("» WRITE-DONE")), "{out:?}");
        let err = render(Agent::Opencode, "opencode/opencode-api-error.jsonl");
        assert_eq!(err, ["error: mock: scripted bad request"]);
        let q = render(Agent::Qwen, "qwen/qwen-stream-plan-write.jsonl");
        assert!(
            q.iter()
                .any(|l| l.starts_with("write /tmp/scratch/ws/out.txt")),
            "{q:?}"
        );
        assert!(
            q.iter()
                .any(|l| l.starts_with("  failed: Qwen Code requires permission")),
            "{q:?}"
        );
    }

    #[test]
    fn gemini_cli_joins_deltas() {
        let out = render(Agent::GeminiCli, "gemini-cli/gemini-toolcall-stream.jsonl");
        assert_eq!(
            out[0],
            "session d579685c-4a5d-4989-a79e-59d0050d5da3 (model auto)"
        );
        assert_eq!(out[1], "write /tmp/scratch/run/w/g-tool-stream/out.txt");
        assert!(out[2].starts_with("» WRITE-DONE"), "{out:?}");
        assert!(out[3].starts_with("done ("), "{out:?}");
        let mut r = Renderer::new(Agent::GeminiCli);
        for piece in ["Hel", "lo"] {
            let line = format!(
                r#"{{"type":"message","role":"assistant","content":"{piece}","delta":true}}"#
            );
            assert!(r.feed(line.as_bytes()).is_empty());
        }
        assert_eq!(
            r.feed(br#"{"type":"result","status":"success"}"#),
            ["» Hello", "done"]
        );
    }

    #[test]
    fn agy_object_at_the_end_and_plain_errors() {
        let mut r = Renderer::new(Agent::Gemini);
        for l in [
            "{",
            r#"  "response": "all done","#,
            r#"  "conversation_id": "c-9","#,
            r#"  "status": "SUCCESS""#,
            "}",
        ] {
            assert!(r.feed(l.as_bytes()).is_empty());
        }
        assert_eq!(r.flush(), ["session c-9", "» all done", "done"]);
        let mut r = Renderer::new(Agent::Gemini);
        r.feed(b"Error: request timed out waiting for response");
        assert_eq!(r.flush(), ["Error: request timed out waiting for response"]);
    }

    #[test]
    fn non_json_lines_are_shown_and_unknown_events_skipped() {
        let mut r = Renderer::new(Agent::Codex);
        assert_eq!(r.feed(b"WARNING: something"), ["WARNING: something"]);
        assert!(r.feed(br#"{"type":"future.event","x":1}"#).is_empty());
        assert!(r.feed(b"   ").is_empty());
    }

    #[test]
    fn multi_line_messages_are_indented() {
        assert_eq!(message("a\nb\n"), "» a\n  b");
    }
}
