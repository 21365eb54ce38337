//! The ACP client as a state machine: fed the agent's stdout one line at a
//! time (like every other agent's parser), it answers through an outbox the
//! supervisor drains into the agent's stdin, and ends as an `Outcome`.
//!
//! The exchange, with baton's fixed request ids (so a log can be read back
//! without what baton sent):
//! `initialize` (1) → `session/new` or `session/load` (2) → optionally
//! `session/set_mode` (3) → `session/prompt` (4) → stdin closed once the
//! prompt's response arrives. The agent's `session/request_permission`
//! requests are answered by the `Policy`; the file-system and terminal
//! methods are not offered (the client capabilities say so) and are refused
//! as unknown methods.
//!
//! Without an outbox (a log read back by `logs`, `watch` or a salvage) the
//! same code parses passively: responses are matched by their ids.

use std::sync::mpsc::Sender;

use serde_json::{Value, json};

use super::Profile;
use super::named::{after_notices, classify_with, prompt_failure};
use super::policy::Policy;
use super::requests::InitializeResponse;
use crate::agent::{Outcome, ProcessExit, Signal, clip, last_line};
use crate::failure::Named;
use crate::result::{Denial, Usage};

pub const ID_INITIALIZE: u64 = 1;
pub const ID_SESSION: u64 = 2;
pub const ID_MODE: u64 = 3;
pub const ID_PROMPT: u64 = 4;

/// The most of an agent's answer kept in memory and in `message` (bytes):
/// its end, where an answer concludes. An agent may stream any number of
/// chunks (1M chunks were 100 MB, 200 MB of RSS); the whole stream is in
/// the run's log.
pub const MAX_MESSAGE: usize = 1 << 20;

/// What the supervisor writes to the agent's stdin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outgoing {
    /// One JSON-RPC message: the bytes sent, and the line kept in the run's
    /// `sent.log` (the prompt's text left out: it is in `prompt.txt`).
    Line { wire: String, logged: String },
    /// Close stdin: the turn is over (ACP agents exit at end of input).
    Close,
}

/// Everything the client needs for one run.
#[derive(Debug, Clone)]
pub struct Setup {
    pub profile: Profile,
    pub policy: Policy,
    pub prompt: String,
    pub resume: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Stage {
    Initializing,
    OpeningSession,
    SettingMode,
    Prompting,
    Done,
}

#[derive(Debug, Clone)]
pub struct Client {
    pub(super) setup: Option<Setup>,
    pub(super) profile: Profile,
    pub(super) out: Option<Sender<Outgoing>>,
    pub(super) stage: Stage,
    pub(super) session: Option<String>,
    /// The agent's text since its last tool call: the final answer (its
    /// last `MAX_MESSAGE` bytes, up to twice that between cuts).
    pub(super) text: String,
    /// Bytes of that answer cut from the front of `text`.
    pub(super) text_cut: u64,
    pub(super) usage: Usage,
    /// The prompt's response carried usage: per-message counts are not added.
    pub(super) usage_final: bool,
    pub(super) denials: Vec<Denial>,
    pub(super) error: Option<String>,
    /// The kind of `error`, when the provider's status or code is in it.
    pub(super) failure: Option<Named>,
    pub(super) stop_reason: Option<String>,
    pub(super) agent_name: Option<String>,
    pub(super) recognised: bool,
    pub(super) not_protocol: u64,
    pub(super) cancel_sent: bool,
    pub(super) warnings: Vec<String>,
}

impl Client {
    /// A client that drives a run: its messages go to `out`.
    pub fn new(setup: Setup, out: Option<Sender<Outgoing>>) -> Client {
        let mut c = Client::passive(setup.profile.clone());
        c.setup = Some(setup);
        c.out = out;
        c
    }

    /// A client that only reads (a log of an earlier run).
    pub fn passive(profile: Profile) -> Client {
        Client {
            setup: None,
            profile,
            out: None,
            stage: Stage::Initializing,
            session: None,
            text: String::new(),
            text_cut: 0,
            usage: Usage::default(),
            usage_final: false,
            denials: Vec::new(),
            error: None,
            failure: None,
            stop_reason: None,
            agent_name: None,
            recognised: false,
            not_protocol: 0,
            cancel_sent: false,
            warnings: Vec::new(),
        }
    }

    /// Whether the agent answered `initialize`.
    pub fn initialized(&self) -> bool {
        self.stage > Stage::Initializing
    }

    /// Ask the agent to stop its turn (`session/cancel`), once, if a prompt is
    /// in flight. Returns whether it was sent.
    pub fn cancel(&mut self) -> bool {
        if self.stage != Stage::Prompting || self.cancel_sent {
            return false;
        }
        let Some(session) = self.session.clone() else {
            return false;
        };
        self.cancel_sent = true;
        let n = super::requests::Cancel {
            session_id: session,
        };
        self.send(
            json!({"jsonrpc": "2.0", "method": "session/cancel", "params": n}),
            None,
        );
        true
    }

    pub fn feed(&mut self, line: &[u8]) -> Signal {
        let Ok(msg) = serde_json::from_slice::<Value>(line) else {
            self.not_protocol += 1;
            return Signal::Nothing;
        };
        if msg.get("jsonrpc").is_none() {
            self.not_protocol += 1;
            return Signal::Nothing;
        }
        self.recognised = true;
        let method = msg.get("method").and_then(Value::as_str);
        let id = msg.get("id").filter(|v| !v.is_null());
        match (method, id) {
            (Some(m), Some(id)) => {
                let m = m.to_string();
                self.on_request(&m, id.clone(), msg.get("params").unwrap_or(&Value::Null));
                Signal::Nothing
            }
            (Some("session/update"), None) => {
                self.on_update(msg.get("params").unwrap_or(&Value::Null));
                Signal::Nothing
            }
            (Some(_), None) => Signal::Nothing,
            (None, Some(id)) => self.on_response(id.as_u64(), &msg),
            (None, None) => Signal::Nothing,
        }
    }

    fn on_response(&mut self, id: Option<u64>, msg: &Value) -> Signal {
        let err = msg.get("error").map(rpc_error);
        let result = msg.get("result").unwrap_or(&Value::Null);
        match id {
            Some(ID_INITIALIZE) if self.stage == Stage::Initializing => {
                if let Some(e) = err {
                    return self.fail(format!("the agent refused `initialize`: {e}"));
                }
                self.stage = Stage::OpeningSession;
                match serde_json::from_value::<InitializeResponse>(result.clone()) {
                    Ok(r) => {
                        self.agent_name = r.agent_info.map(|i| i.name);
                        if r.protocol_version != 1 {
                            return self.fail(format!(
                                "the agent speaks ACP protocol version {}; baton speaks 1",
                                serde_json::to_string(&r.protocol_version).unwrap_or_default()
                            ));
                        }
                        let resuming = self.setup.as_ref().is_some_and(|s| s.resume.is_some());
                        if resuming && !r.agent_capabilities.load_session {
                            return self.fail(
                                "the agent cannot load an earlier session (its `initialize` \
                                 answer has no `loadSession` capability), so --resume cannot work"
                                    .into(),
                            );
                        }
                    }
                    Err(e) => {
                        return self.fail(format!("the `initialize` answer is not ACP: {e}"));
                    }
                }
                self.open_session();
                Signal::Nothing
            }
            Some(ID_SESSION) if self.stage == Stage::OpeningSession => {
                let resume = self.setup.as_ref().and_then(|s| s.resume.clone());
                if let Some(e) = err {
                    return self.fail(match resume {
                        Some(r) => format!("the agent could not load session `{r}`: {e}"),
                        None => format!("the agent could not open a session: {e}"),
                    });
                }
                self.session = result
                    .get("sessionId")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .or(resume)
                    .or(self.session.take());
                self.set_mode_or_prompt(result);
                Signal::Nothing
            }
            Some(ID_MODE) if self.stage == Stage::SettingMode => {
                if let Some(e) = err {
                    return self.fail(format!(
                        "the agent refused the session mode baton needs for this access: {e}"
                    ));
                }
                self.send_prompt();
                Signal::Nothing
            }
            Some(ID_PROMPT) if self.stage >= Stage::Prompting => {
                self.stage = Stage::Done;
                if let Some(e) = err {
                    if self.error.is_none() {
                        self.failure = msg
                            .get("error")
                            .and_then(|e| prompt_failure(self.profile.said, e));
                    }
                    self.error.get_or_insert(e);
                } else {
                    self.on_prompt_result(result);
                }
                self.close();
                Signal::TurnFinished
            }
            _ => Signal::Nothing,
        }
    }

    fn on_prompt_result(&mut self, result: &Value) {
        // Any `stopReason` the agent names, even one newer than ACP v1's five.
        self.stop_reason = result
            .get("stopReason")
            .and_then(Value::as_str)
            .map(str::to_string);
        // `usage` (ACP's unstable end-of-turn token usage): its counts as they
        // are; `totalTokens`, which the schema requires, is not needed.
        if !self.usage_final
            && let Some(u) = result.get("usage").filter(|u| u.is_object())
        {
            let n = |k: &str| u.get(k).and_then(Value::as_u64);
            if let (Some(i), Some(o)) = (n("inputTokens"), n("outputTokens")) {
                self.usage =
                    self.profile
                        .usage
                        .normalise(i, n("cachedReadTokens"), o, n("thoughtTokens"));
                self.usage_final = true;
            }
        }
        // gemini-cli: `_meta.quota.token_count` {input_tokens, output_tokens}.
        if !self.usage_final
            && let Some(t) = result.pointer("/_meta/quota/token_count")
        {
            let n = |k: &str| t.get(k).and_then(Value::as_u64).unwrap_or(0);
            self.usage =
                self.profile
                    .usage
                    .normalise(n("input_tokens"), None, n("output_tokens"), None);
            self.usage_final = true;
        }
    }

    fn on_update(&mut self, params: &Value) {
        let Some(update) = params.get("update") else {
            return;
        };
        // Before the session is open, a `session/load` replays the earlier
        // turns: not this run's answer.
        if self.stage <= Stage::OpeningSession {
            return;
        }
        match update
            .get("sessionUpdate")
            .and_then(Value::as_str)
            .unwrap_or("")
        {
            "agent_message_chunk" => {
                if let Some(t) = update.pointer("/content/text").and_then(Value::as_str) {
                    self.text.push_str(t);
                    // Cut in bulk, not per chunk: the copy is then paid once
                    // per MAX_MESSAGE bytes streamed.
                    if self.text.len() > 2 * MAX_MESSAGE {
                        self.text_cut += keep_end(&mut self.text, MAX_MESSAGE);
                    }
                }
                // Qwen Code: per model call, on an empty chunk.
                if !self.usage_final
                    && let Some(u) = update.pointer("/_meta/usage")
                {
                    let n = |k: &str| u.get(k).and_then(Value::as_u64);
                    let part = self.profile.usage.normalise(
                        n("inputTokens").unwrap_or(0),
                        n("cachedReadTokens"),
                        n("outputTokens").unwrap_or(0),
                        n("thoughtTokens"),
                    );
                    self.usage.add(&part);
                }
            }
            // The answer is what follows the last tool activity (copilot
            // says "Info: <path>" while a tool runs).
            "tool_call" | "tool_call_update" => {
                self.text.clear();
                self.text_cut = 0;
            }
            _ => {}
        }
    }

    fn on_request(&mut self, method: &str, id: Value, params: &Value) {
        if method != "session/request_permission" {
            // fs/*, terminal/* and extensions: the client capabilities sent
            // in `initialize` offer none of them.
            self.send(
                json!({"jsonrpc": "2.0", "id": id, "error":
                    {"code": -32601, "message": format!("baton does not offer `{method}`")}}),
                None,
            );
            return;
        }
        // Reading a log: the verdict was recorded when it was given.
        let Some(setup) = &self.setup else {
            return;
        };
        let (outcome, denial) = setup.policy.answer(params);
        self.denials.extend(denial);
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "result": {"outcome": outcome}}),
            None,
        );
    }

    /// A failure that ends the exchange: recorded, and stdin closed so the
    /// agent exits.
    pub(super) fn fail(&mut self, e: String) -> Signal {
        self.error.get_or_insert(e);
        self.stage = Stage::Done;
        self.close();
        Signal::TurnFinished
    }

    pub fn finish(mut self, end: &ProcessExit) -> Outcome {
        let cut = self.text_cut + keep_end(&mut self.text, MAX_MESSAGE);
        if cut > 0 {
            self.warnings.push(format!(
                "the agent's answer was {} bytes: `message` keeps its last {} KiB (the whole \
                 stream is in log_path)",
                cut + self.text.len() as u64,
                MAX_MESSAGE >> 10
            ));
        }
        let message = (!self.text.trim().is_empty()).then(|| self.text.trim().to_string());
        if self.error.is_none()
            && let (Some(prefix), Some(m)) = (self.profile.error_prefix, &message)
            && let m = after_notices(m)
            && m.starts_with(prefix)
        {
            // Copilot reports a failed model call as text, not as an error:
            // `Error: 401 …`, the provider's status first, after a notice
            // for each retry of its own.
            self.failure = classify_with(self.profile.said, None, &m[prefix.len()..]);
            self.error = Some(m.to_string());
        }
        let ended_turn = self.stop_reason.as_deref() == Some("end_turn");
        if self.error.is_none() {
            self.error = match self.stop_reason.as_deref() {
                Some("end_turn") => None,
                Some("cancelled") => Some("the agent's turn was cancelled".into()),
                Some("refusal") => {
                    Some("the agent refused to continue (stop reason `refusal`)".into())
                }
                Some(r) => {
                    // Not one of ACP's stop reasons: an agent's own, which
                    // may carry the provider's status.
                    self.failure = classify_with(self.profile.said, None, r);
                    Some(format!("the agent stopped early (stop reason `{r}`)"))
                }
                None if self.recognised && !self.initialized() => Some(format!(
                    "the agent exited without answering `initialize`{}",
                    stderr_note(end)
                )),
                None if self.recognised => Some(format!(
                    "the agent exited before it finished its turn{}",
                    stderr_note(end)
                )),
                None => None,
            };
        }
        if self.not_protocol > 0 {
            self.warnings.push(format!(
                "{} line(s) the agent printed on stdout were not JSON-RPC (ignored; see log_path)",
                self.not_protocol
            ));
        }
        Outcome {
            failure: self.failure,
            success: ended_turn && self.error.is_none(),
            error: self.error,
            session: self.session,
            message,
            usage: self.usage,
            model: None,
            denials: self.denials,
            warnings: self.warnings,
            unparsable: !self.recognised,
        }
    }
}

/// Keep the last `max` bytes of `s` (from a character boundary); returns
/// how many bytes were cut.
fn keep_end(s: &mut String, max: usize) -> u64 {
    if s.len() <= max {
        return 0;
    }
    let mut from = s.len() - max;
    while !s.is_char_boundary(from) {
        from += 1;
    }
    s.drain(..from);
    from as u64
}

fn stderr_note(end: &ProcessExit) -> String {
    let code = match end.code {
        Some(c) => format!(" (exit code {c})"),
        None => " (killed by a signal)".into(),
    };
    match last_line(&end.stderr_tail) {
        Some(l) => format!("{code}: {}", clip(&l, 300)),
        None => code,
    }
}

fn rpc_error(e: &Value) -> String {
    let mut msg = e
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("unknown error")
        .to_string();
    // Qwen Code puts the API's words in `data.details` under a generic
    // "Internal error".
    if let Some(d) = e.pointer("/data/details").and_then(Value::as_str) {
        msg = format!("{msg}: {d}");
    }
    match e.get("code").and_then(Value::as_i64) {
        Some(c) => format!("{msg} (JSON-RPC error {c})"),
        None => msg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(text: &str) -> Vec<u8> {
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s",
            "update": {"sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": text}}}})
        .to_string()
        .into_bytes()
    }

    /// A client past the handshake, reading a log.
    fn prompting() -> Client {
        let mut c = Client::passive(super::super::builtin(crate::agent::Agent::Copilot).unwrap());
        c.stage = Stage::Prompting;
        c
    }

    #[test]
    fn an_endless_answer_keeps_its_end_and_says_so() {
        let mut c = prompting();
        // 3.5 MiB in 1000-byte chunks of two-byte characters, then the end.
        let piece = "é".repeat(500);
        let n = 7 * MAX_MESSAGE / 2 / piece.len();
        for _ in 0..n {
            c.feed(&chunk(&piece));
            assert!(c.text.len() <= 2 * MAX_MESSAGE + piece.len());
        }
        c.feed(&chunk("THE END"));
        let o = c.finish(&ProcessExit::default());
        let m = o.message.unwrap();
        assert!(m.len() <= MAX_MESSAGE, "{}", m.len());
        assert!(m.len() > MAX_MESSAGE - 2, "{}", m.len());
        assert!(m.ends_with("éTHE END"), "{}", &m[m.len() - 20..]);
        let total = n * piece.len() + "THE END".len();
        let w = o.warnings.join("\n");
        assert!(
            w.contains(&format!("the agent's answer was {total} bytes"))
                && w.contains("last 1024 KiB"),
            "{w}"
        );
    }

    #[test]
    fn a_tool_call_starts_the_answer_afresh() {
        let mut c = prompting();
        for _ in 0..(3 * MAX_MESSAGE / 1000) {
            c.feed(&chunk(&"x".repeat(1000)));
        }
        c.feed(br#"{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"tool_call"}}}"#);
        c.feed(&chunk("short answer"));
        let o = c.finish(&ProcessExit::default());
        assert_eq!(o.message.as_deref(), Some("short answer"));
        assert!(o.warnings.is_empty(), "{:?}", o.warnings);
    }

    /// `initialize` answers read as ACP v1's published types read them:
    /// only `protocolVersion` is required; a malformed optional part is absent.
    #[test]
    fn the_initialize_answer_is_read_leniently_but_needs_a_version() {
        let read = |v: Value| serde_json::from_value::<InitializeResponse>(v);
        let r = read(
            json!({"protocolVersion": 1, "agentCapabilities": {"loadSession": true},
            "agentInfo": {"name": "copilot", "version": "1.0"}, "authMethods": "?"}),
        )
        .unwrap();
        assert!(r.agent_capabilities.load_session);
        assert_eq!(r.agent_info.map(|i| i.name).as_deref(), Some("copilot"));
        let r = read(json!({"protocolVersion": 2, "agentCapabilities": "?",
            "agentInfo": {"name": "no version"}}))
        .unwrap();
        assert_eq!(r.protocol_version, 2);
        assert!(!r.agent_capabilities.load_session);
        assert!(r.agent_info.is_none());
        let r = read(json!({"protocolVersion": 1, "agentCapabilities": {"loadSession": "yes"}}));
        assert!(!r.unwrap().agent_capabilities.load_session);
        let e = |v: Value| read(v).err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(e(json!({})), "missing field `protocolVersion`");
        assert!(e(json!({"protocolVersion": "1.0.0"})).starts_with("invalid type: string"));
        assert!(e(json!({"protocolVersion": 100000})).starts_with("invalid value: integer"));
        assert_eq!(
            e(Value::Null),
            "invalid type: null, expected struct InitializeResponse"
        );
    }
}
