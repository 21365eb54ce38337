//! `baton logs`: a peer's event stream rendered for people — its messages,
//! the commands it ran, the files it changed, its errors — one agent at a
//! time. Pure (bytes in, lines out) so each agent's rendering is tested on the
//! recorded transcripts in `tests/fixtures/`.
//!
//! What each event means is the reducer's (`view::activity`); this file only
//! says how each `Activity` reads as a line of `logs`.

use crate::agent::{Agent, clip};
use crate::view::{Activity, Reducer, Tally};

/// Renders one job's stream, line by line.
pub struct Renderer {
    reducer: Reducer,
}

impl Renderer {
    pub fn new(agent: Agent) -> Renderer {
        Renderer {
            reducer: Reducer::without_usage(agent),
        }
    }

    /// Lines for people from one line of the peer's stdout.
    pub fn feed(&mut self, line: &[u8]) -> Vec<String> {
        lines(self.reducer.feed(line))
    }

    /// Whatever is still held back (end of the stream).
    pub fn flush(&mut self) -> Vec<String> {
        lines(self.reducer.flush())
    }
}

fn lines(acts: Vec<Activity>) -> Vec<String> {
    acts.iter().filter_map(line).collect()
}

/// One activity as `logs` shows it; `None` for what `logs` leaves out
/// (token counts, plans, commands that succeeded).
pub fn line(a: &Activity) -> Option<String> {
    Some(match a {
        Activity::Session { id, model } => match model {
            Some(m) => format!("session {id} (model {m})"),
            None => format!("session {id}"),
        },
        Activity::Message { text } => message(text),
        Activity::Thinking { text } => {
            format!("thinking: {}", clip(text.lines().next().unwrap_or(""), 160))
        }
        Activity::Command { command } => format!("$ {}", clip(command, 300)),
        Activity::CommandEnd {
            exit_code,
            failed,
            last_line,
        } => {
            if !failed {
                return None;
            }
            let code = exit_code.map_or("failed".to_string(), |c| format!("exit {c}"));
            format!("  {code}: {}", clip(last_line, 300))
                .trim_end()
                .to_string()
        }
        Activity::FileChange { change, path } => format!("{} {path}", change.verb()),
        Activity::Tool { label } => label.clone(),
        Activity::ToolFailed { message } => format!("  failed: {}", clip(message, 300)),
        Activity::Plan { .. } | Activity::Usage { .. } => return None,
        Activity::Denied { tool, target } => format!("denied: {tool} {}", clip(target, 200))
            .trim_end()
            .to_string(),
        Activity::Done { tally } => match tally {
            Tally::None => "done".into(),
            Tally::InOut { input, output } => format!("done ({input} in, {output} out tokens)"),
            Tally::Total { tokens } => format!("done ({tokens} tokens)"),
            Tally::Turns {
                turns,
                cost_usd: Some(c),
            } => format!("done ({turns} turns, ${c:.4})"),
            Tally::Turns {
                turns,
                cost_usd: None,
            } => format!("done ({turns} turns)"),
        },
        // codex announces its retries as error events; shown as it says them.
        Activity::Error { message } | Activity::Waiting { reason: message } => {
            format!("error: {}", clip(message, 500))
        }
        Activity::Text { line } => clip(line, 500),
    })
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
        let mut r = Renderer::new(Agent::Agy);
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
        let mut r = Renderer::new(Agent::Agy);
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

    /// `logs` as it was before the reducer existed, byte for byte: the
    /// golden files were written by the pre-reducer renderer.
    #[test]
    fn every_transcript_renders_as_its_golden_file() {
        for t in crate::view::fixtures::transcripts() {
            let mut r = Renderer::new(t.agent);
            let mut out = Vec::new();
            for line in t.bytes.split(|b| *b == b'\n') {
                out.extend(r.feed(line));
            }
            out.extend(r.flush());
            let mut text = out.join("\n");
            text.push('\n');
            crate::view::fixtures::check_golden("logs", &t, ".txt", &text);
        }
    }

    #[test]
    fn multi_line_messages_are_indented() {
        assert_eq!(message("a\nb\n"), "» a\n  b");
    }
}
