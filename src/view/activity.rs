//! The pure reducer: one line of a peer's output in, what the peer did out,
//! as `Activity` values that every face (`logs`, `watch`, the live line) shares.
//!
//! Lenient by design: events are read as generic JSON, unknown types and
//! fields are skipped, and a line that is not JSON is kept as `Text`. The
//! agent parsers in `agent/<cli>.rs` stay the strict judges of success; the
//! reducer only describes, and asks the agent's own parser for token counts
//! (so a live total is computed exactly as the final result's).

use serde::Serialize;
use serde_json::Value;

use crate::agent::{Agent, Parser, ProcessExit};
use crate::result::Usage;

use super::{acp_events, events};

/// Buffered agy output kept for the final parse (agy prints one object at the end).
const AGY_MAX: usize = 16 << 20;

/// What a file change did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    Add,
    Edit,
    Delete,
    /// A whole-file write (the CLI does not say whether the file existed).
    Write,
}

impl Change {
    pub fn verb(self) -> &'static str {
        match self {
            Change::Add => "add",
            Change::Edit => "edit",
            Change::Delete => "delete",
            Change::Write => "write",
        }
    }
}

/// How a turn's end was reported, in the terms the CLI used.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Tally {
    None,
    /// codex: the turn's input and output tokens.
    InOut {
        input: u64,
        output: u64,
    },
    /// gemini-cli: one total.
    Total {
        tokens: u64,
    },
    /// claude: turns taken and the cost it reported.
    Turns {
        turns: u64,
        cost_usd: Option<f64>,
    },
}

/// One plan (todo list) item.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    pub text: String,
    pub done: bool,
}

/// One thing a peer did, as its output told it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Activity {
    /// The session began (or was resumed).
    Session { id: String, model: Option<String> },
    /// Text the peer wrote for the user.
    Message { text: String },
    /// A reasoning summary.
    Thinking { text: String },
    /// A shell command was started.
    Command { command: String },
    /// A shell command ended (codex reports this; the others only failures).
    CommandEnd {
        exit_code: Option<i64>,
        failed: bool,
        /// The last non-empty line of its output.
        last_line: String,
    },
    /// A file was created, edited, written or deleted.
    FileChange { change: Change, path: String },
    /// Another tool: reading, searching, an MCP tool. `label` says it for people.
    Tool { label: String },
    /// A tool call failed (its error text).
    ToolFailed { message: String },
    /// The peer's plan or todo list, as it now stands.
    Plan { steps: Vec<Step> },
    /// Token counts (and cost) so far, as the agent's own parser counts them.
    Usage { usage: Usage },
    /// A tool call the CLI's permission rules refused.
    Denied { tool: String, target: String },
    /// The turn ended successfully.
    Done { tally: Tally },
    /// The peer reported an error (an API error body is reduced to its message).
    Error { message: String },
    /// The peer is waiting (a retry after an API error, a rate limit).
    Waiting { reason: String },
    /// A line that is not an event (a CLI warning on stdout), as printed.
    Text { line: String },
}

impl Activity {
    /// The "now doing" line: what this says the peer is doing, for people.
    pub fn doing(&self) -> String {
        use crate::agent::clip;
        let first = |t: &str| clip(t.lines().find(|l| !l.trim().is_empty()).unwrap_or(""), 120);
        match self {
            Activity::Session { .. } => "started".into(),
            Activity::Message { text } => format!("» {}", first(text)),
            Activity::Thinking { text } => format!("thinking: {}", first(text)),
            Activity::Command { command } => format!("$ {}", clip(command, 120)),
            Activity::CommandEnd {
                exit_code, failed, ..
            } => match exit_code {
                Some(c) => format!("command exited {c}"),
                None if *failed => "command failed".into(),
                None => "command ended".into(),
            },
            Activity::FileChange { change, path } => format!("{} {path}", change.verb()),
            Activity::Tool { label } => label.clone(),
            Activity::ToolFailed { message } => format!("tool failed: {}", first(message)),
            Activity::Plan { steps } => {
                let done = steps.iter().filter(|s| s.done).count();
                match steps.iter().find(|s| !s.done) {
                    Some(s) => format!("plan {done}/{}: {}", steps.len(), first(&s.text)),
                    None => format!("plan {done}/{} done", steps.len()),
                }
            }
            Activity::Usage { .. } => "counting tokens".into(),
            Activity::Denied { tool, target } => {
                format!("denied: {tool} {target}").trim_end().to_string()
            }
            Activity::Done { .. } => "done".into(),
            Activity::Error { message } => format!("error: {}", first(message)),
            Activity::Waiting { reason } => format!("waiting: {}", first(reason)),
            Activity::Text { line } => first(line),
        }
    }
}

/// Reduces one peer's output, line by line, to activities.
pub struct Reducer {
    agent: Agent,
    /// gemini-cli streams assistant text in pieces; joined until the next event.
    pending: String,
    /// agy prints one (pretty-printed) object at the end: kept until `flush`.
    agy: Vec<u8>,
    /// The agent's own parser, asked for token counts when an event carries them.
    parser: Option<Parser>,
    /// The counts last reported, so an unchanged total is not repeated.
    usage: Usage,
    /// `parser` was swapped for an ACP client (the log is ACP).
    acp_parser: bool,
}

impl Reducer {
    pub fn new(agent: Agent) -> Reducer {
        Reducer {
            agent,
            pending: String::new(),
            agy: Vec::new(),
            parser: Some(agent.parser()),
            usage: Usage::default(),
            acp_parser: false,
        }
    }

    /// Without token counting (`logs` does not show them; saves a second parse).
    pub fn without_usage(agent: Agent) -> Reducer {
        Reducer {
            parser: None,
            ..Reducer::new(agent)
        }
    }

    pub fn agent(&self) -> Agent {
        self.agent
    }

    /// The activities one line of the peer's stdout tells of.
    pub fn feed(&mut self, line: &[u8]) -> Vec<Activity> {
        if self.agent == Agent::Agy {
            if self.agy.len() + line.len() < AGY_MAX {
                self.agy.extend_from_slice(line);
                self.agy.push(b'\n');
            }
            if let Some(p) = self.parser.as_mut() {
                p.feed(line);
            }
            return Vec::new();
        }
        let text = String::from_utf8_lossy(line);
        let text = text.trim();
        if text.is_empty() {
            return Vec::new();
        }
        let Ok(v) = serde_json::from_str::<Value>(text) else {
            let mut out = self.flush_pending();
            out.push(Activity::Text {
                line: text.to_string(),
            });
            return out;
        };
        // An ACP log (any agent driven over ACP) is read by its protocol.
        if v.get("jsonrpc").is_some() {
            return self.acp(line, &v);
        }
        let mut out = match self.agent {
            Agent::Codex => events::codex(&v),
            Agent::Claude | Agent::Qwen => events::claude(&v),
            Agent::Opencode => events::opencode(&v),
            Agent::Zai | Agent::Pi => events::pi(&v),
            Agent::GeminiCli => self.gemini_cli(&v),
            Agent::Agy
            | Agent::Copilot
            | Agent::Kilo
            | Agent::Nanocoder
            | Agent::Cline
            | Agent::Byo(_) => Vec::new(),
        };
        if let Some(p) = self.parser.as_mut() {
            p.feed(line);
            if events::carries_usage(self.agent, &v) {
                let usage = p.snapshot(&ProcessExit::default()).usage;
                if !usage.is_empty() && usage != self.usage {
                    self.usage = usage.clone();
                    // Before the `Done` it came with, so `Done` stays last.
                    let at = out
                        .iter()
                        .position(|a| matches!(a, Activity::Done { .. }))
                        .unwrap_or(out.len());
                    out.insert(at, Activity::Usage { usage });
                }
            }
        }
        out
    }

    /// Whatever is still held back (end of the stream).
    pub fn flush(&mut self) -> Vec<Activity> {
        let mut out = self.flush_pending();
        if !self.agy.is_empty() {
            let text = String::from_utf8_lossy(&self.agy).into_owned();
            let mut acts = events::agy(&text);
            if let Some(p) = self.parser.as_ref() {
                let usage = p.snapshot(&ProcessExit::default()).usage;
                if !usage.is_empty() {
                    acts.insert(acts.len().saturating_sub(1), Activity::Usage { usage });
                }
            }
            out.extend(acts);
            self.agy.clear();
        }
        out
    }

    fn flush_pending(&mut self) -> Vec<Activity> {
        if self.pending.trim().is_empty() {
            self.pending.clear();
            return Vec::new();
        }
        vec![Activity::Message {
            text: std::mem::take(&mut self.pending),
        }]
    }

    fn acp(&mut self, line: &[u8], v: &Value) -> Vec<Activity> {
        let read = acp_events::acp(v);
        let mut out = Vec::new();
        match read.text {
            Some(t) => self.pending.push_str(&t),
            None if !read.acts.is_empty() => out = self.flush_pending(),
            None => {}
        }
        out.extend(read.acts);
        if self.parser.is_some() && !self.acp_parser {
            self.parser = Some(self.agent.parser_for(crate::agent::Transport::Acp));
            self.acp_parser = true;
        }
        if let Some(p) = self.parser.as_mut() {
            p.feed(line);
            // Only these carry counts: no copy of the client per chunk.
            let counts = |k: &[u8]| line.windows(k.len()).any(|w| w == k);
            if !counts(b"\"usage\"") && !counts(b"\"quota\"") {
                return out;
            }
            let usage = p.snapshot(&ProcessExit::default()).usage;
            if !usage.is_empty() && usage != self.usage {
                self.usage = usage.clone();
                let at = out
                    .iter()
                    .position(|a| matches!(a, Activity::Done { .. }))
                    .unwrap_or(out.len());
                out.insert(at, Activity::Usage { usage });
            }
        }
        out
    }

    fn gemini_cli(&mut self, v: &Value) -> Vec<Activity> {
        if events::s(v, "type") == "message" && events::s(v, "role") == "assistant" {
            let c = events::s(v, "content");
            if v.get("delta").and_then(Value::as_bool).unwrap_or(false) {
                self.pending.push_str(c);
                return Vec::new();
            }
            self.pending.clear();
            return vec![Activity::Message { text: c.into() }];
        }
        let mut out = self.flush_pending();
        out.extend(events::gemini_cli(v));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::fixtures::{check_golden, transcripts};

    fn reduce(agent: Agent, bytes: &[u8]) -> Vec<Activity> {
        let mut r = Reducer::new(agent);
        let mut out = Vec::new();
        for line in bytes.split(|b| *b == b'\n') {
            out.extend(r.feed(line));
        }
        out.extend(r.flush());
        out
    }

    /// The activity sequence of every real transcript, pinned in
    /// `tests/fixtures/activities/` (one JSON object per activity).
    #[test]
    fn every_transcript_reduces_to_its_golden_activities() {
        for t in transcripts() {
            let text: String = reduce(t.agent, &t.bytes)
                .iter()
                .map(|a| serde_json::to_string(a).unwrap() + "\n")
                .collect();
            check_golden("activities", &t, ".jsonl", &text);
        }
    }

    #[test]
    fn codex_commands_carry_exit_codes_and_usage_comes_from_the_parser() {
        let acts = reduce(
            Agent::Codex,
            &std::fs::read(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/codex/codex-exec-readonly.jsonl"
            ))
            .unwrap(),
        );
        assert!(acts.iter().any(|a| matches!(
            a,
            Activity::CommandEnd {
                exit_code: Some(1),
                failed: true,
                ..
            }
        )));
        let usage = acts.iter().find_map(|a| match a {
            Activity::Usage { usage } => Some(usage.clone()),
            _ => None,
        });
        assert!(usage.is_some_and(|u| u.input_tokens.is_some()), "{acts:?}");
        assert!(matches!(acts.last(), Some(Activity::Done { .. })));
    }

    #[test]
    fn plans_and_retries() {
        let mut r = Reducer::new(Agent::Codex);
        let plan = r.feed(
            br#"{"type":"item.updated","item":{"type":"todo_list","items":[{"text":"a","completed":true},{"text":"b","completed":false}]}}"#,
        );
        assert_eq!(plan[0].doing(), "plan 1/2: b");
        let retry = r.feed(br#"{"type":"error","message":"Reconnecting... 1/5 (timeout)"}"#);
        assert!(matches!(&retry[0], Activity::Waiting { .. }), "{retry:?}");
        let mut r = Reducer::new(Agent::Claude);
        let todo = r.feed(
            br#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"TodoWrite","input":{"todos":[{"content":"x","status":"completed"}]}}]}}"#,
        );
        assert_eq!(todo.len(), 2, "{todo:?}");
        assert_eq!(todo[1].doing(), "plan 1/1 done");
    }

    #[test]
    fn unknown_events_and_text_lines() {
        let mut r = Reducer::new(Agent::Pi);
        assert!(r.feed(br#"{"type":"something_new"}"#).is_empty());
        assert_eq!(
            r.feed(b"warning: x"),
            [Activity::Text {
                line: "warning: x".into()
            }]
        );
    }
}
