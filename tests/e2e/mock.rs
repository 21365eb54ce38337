//! A scripted mock model server for the real agent CLIs (std + serde_json).
//!
//! It listens on 127.0.0.1 with an OS-chosen port, one thread per
//! connection, and answers every request with `Connection: close` so no
//! keep-alive state has to be modelled. It speaks, streaming (SSE):
//! - the OpenAI Responses API (`POST …/responses`: codex),
//! - the Anthropic Messages API (`POST …/messages`: claude),
//! - OpenAI Chat Completions (`POST …/chat/completions`: pi, zai via pi,
//!   opencode and qwen; each CLI's own tool names and arguments, and their
//!   helper calls — opencode's title, qwen's memory extractor — answered
//!   generically),
//!   (codex's interactive task title, a Responses call of its own, is a
//!   helper call too),
//! - the Gemini API (`…:streamGenerateContent` for turns, `…:generateContent`
//!   for gemini-cli's helper calls — router, next-speaker check — which are
//!   answered generically and never use up a scripted step).
//!
//! What to answer is data (`scenarios.json`, see its `_doc`). Every request
//! is recorded (method, path, headers, body, which scenario/step answered it
//! and the usage the mock reported) so tests can assert on what the CLI sent.

#![allow(dead_code)] // fields and helpers are there for assertions other modules make

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::faults::{self, Fault};

/// The wire format a request used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Responses,
    Anthropic,
    Chat,
    Gemini,
    Other,
}

/// Usage in one meaning for every API: `input` counts all input tokens,
/// cached ones included; each API's encoding is derived from it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MockUsage {
    pub input: u64,
    pub cached: u64,
    pub output: u64,
}

impl MockUsage {
    pub fn add(&mut self, o: &MockUsage) {
        self.input += o.input;
        self.cached += o.cached;
        self.output += o.output;
    }
}

/// One request as the mock saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Lower-cased names.
    pub headers: BTreeMap<String, String>,
    pub body: Value,
    pub raw_body: String,
    pub api: Api,
    /// A helper call (gemini-cli router etc.), answered generically.
    pub helper: bool,
    /// The latest real user prompt found in the request.
    pub prompt: String,
    /// The prompt's `id=` token: which test run sent it.
    pub run: Option<String>,
    pub scenario: String,
    pub step: usize,
    /// What the mock reported for this request (none for errors).
    pub usage: Option<MockUsage>,
    /// When it arrived (retry timings).
    pub at: Instant,
    /// The fault it was answered with, if any.
    pub fault: Option<Fault>,
    /// The latest tool result after the prompt, as the CLI sent it back to
    /// the model (an MCP tool's result, a command's output).
    pub tool_output: Option<String>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// The script (`scenarios.json`).
pub fn script() -> Value {
    serde_json::from_str(include_str!("scenarios.json"))
        .expect("tests/e2e/scenarios.json is valid JSON")
}

/// Step `i` of scenario `name`, as written in the script (tests compare
/// what baton reports with what the mock was told to answer).
pub fn scenario_step(name: &str, i: usize) -> Value {
    script()["scenarios"]
        .as_array()
        .and_then(|l| l.iter().find(|s| s["name"] == name))
        .and_then(|s| s["steps"].get(i))
        .cloned()
        .unwrap_or_else(|| panic!("no step {i} in scenario {name}"))
}

pub struct Mock {
    pub addr: SocketAddr,
    log: Arc<Mutex<Vec<Recorded>>>,
}

impl Mock {
    pub fn start() -> Mock {
        let script = script();
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(script);
        let l2 = Arc::clone(&log);
        std::thread::Builder::new()
            .name("mock-accept".into())
            .spawn(move || {
                for stream in listener.incoming().flatten() {
                    let log = Arc::clone(&l2);
                    let script = Arc::clone(&script);
                    std::thread::spawn(move || {
                        let _ = serve(stream, &script, &log);
                    });
                }
            })
            .unwrap();
        Mock { addr, log }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.log.lock().unwrap().clone()
    }

    /// Requests sent for one run (its prompt's `id=` token).
    pub fn requests_for(&self, run: &str) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.run.as_deref() == Some(run))
            .collect()
    }

    /// The usage the mock reported to one run, summed.
    pub fn usage_for(&self, run: &str) -> MockUsage {
        let mut u = MockUsage::default();
        for r in self.requests_for(run) {
            if let Some(x) = r.usage {
                u.add(&x);
            }
        }
        u
    }

    /// Poll until a request of `run` has arrived.
    pub fn wait_for(&self, run: &str, within: Duration) -> bool {
        let end = Instant::now() + within;
        while Instant::now() < end {
            if !self.requests_for(run).is_empty() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }
}

// ---------------------------------------------------------------- HTTP ----

struct HttpRequest {
    method: String,
    path: String,
    headers: BTreeMap<String, String>,
    body: Vec<u8>,
}

fn read_request(stream: &TcpStream) -> std::io::Result<HttpRequest> {
    let mut r = BufReader::new(stream);
    let mut line = String::new();
    r.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = BTreeMap::new();
    loop {
        let mut h = String::new();
        if r.read_line(&mut h)? == 0 {
            break;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let mut body = Vec::new();
    if headers
        .get("transfer-encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        loop {
            let mut size = String::new();
            r.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16)
                .unwrap_or(0);
            if n == 0 {
                let mut end = String::new();
                r.read_line(&mut end)?;
                break;
            }
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk)?;
            chunk.truncate(n);
            body.extend_from_slice(&chunk);
        }
    } else if let Some(n) = headers
        .get("content-length")
        .and_then(|v| v.parse::<usize>().ok())
    {
        body.resize(n, 0);
        r.read_exact(&mut body)?;
    }
    Ok(HttpRequest {
        method,
        path,
        headers,
        body,
    })
}

fn respond_json(mut s: &TcpStream, status: u16, body: &Value) -> std::io::Result<()> {
    let b = body.to_string();
    write!(
        s,
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{b}",
        reason(status),
        b.len()
    )?;
    s.flush()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        _ => "Status",
    }
}

/// An SSE response in progress.
struct Sse<'a> {
    s: &'a TcpStream,
}

impl<'a> Sse<'a> {
    fn start(mut s: &'a TcpStream) -> std::io::Result<Sse<'a>> {
        write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n"
        )?;
        s.flush()?;
        Ok(Sse { s })
    }

    /// `event:` + `data:` (Responses, Anthropic) or `data:` only.
    fn send(&mut self, event: Option<&str>, data: &Value) -> std::io::Result<()> {
        let mut out = String::new();
        if let Some(e) = event {
            out.push_str(&format!("event: {e}\n"));
        }
        out.push_str(&format!("data: {data}\n\n"));
        self.s.write_all(out.as_bytes())?;
        self.s.flush()
    }

    fn raw(&mut self, text: &str) -> std::io::Result<()> {
        self.s.write_all(text.as_bytes())?;
        self.s.flush()
    }

    /// Stall like a slow model: SSE comments keep the connection honest and
    /// end the wait as soon as the client has gone away.
    fn stall(&mut self, ms: u64) -> std::io::Result<()> {
        let end = Instant::now() + Duration::from_millis(ms);
        while Instant::now() < end {
            std::thread::sleep(Duration::from_millis(250));
            self.raw(": still thinking\n\n")?;
        }
        Ok(())
    }
}

// ----------------------------------------------------------- dispatch ----

fn serve(stream: TcpStream, script: &Value, log: &Mutex<Vec<Recorded>>) -> std::io::Result<()> {
    let req = read_request(&stream)?;
    let raw_body = String::from_utf8_lossy(&req.body).into_owned();
    let body: Value = serde_json::from_str(&raw_body).unwrap_or(Value::Null);
    let path_only = req.path.split('?').next().unwrap_or("").to_string();
    let api = if req.method == "POST" && path_only.ends_with("/responses") {
        Api::Responses
    } else if req.method == "POST" && path_only.ends_with("/messages") {
        Api::Anthropic
    } else if req.method == "POST" && path_only.ends_with("/chat/completions") {
        Api::Chat
    } else if req.method == "POST"
        && (path_only.contains(":streamGenerateContent") || path_only.contains(":generateContent"))
    {
        Api::Gemini
    } else {
        Api::Other
    };

    let conv = conversation(api, &body);
    let prompt = conv.prompt.clone().unwrap_or_default();
    let run = token(&prompt, "id=").or_else(|| last_token(&raw_body, "id="));
    let (scenario, steps) = pick(script, &prompt, api);
    let helper = match api {
        Api::Gemini => !path_only.contains(":streamGenerateContent"),
        Api::Anthropic => {
            scenario == "default"
                && body
                    .get("tools")
                    .is_none_or(|t| t.as_array().is_none_or(Vec::is_empty))
        }
        Api::Chat => chat_helper(&body),
        Api::Responses => responses_title(&body),
        _ => false,
    };
    let step_idx = conv.tool_results_after_prompt;
    let step = steps
        .get(step_idx.min(steps.len().saturating_sub(1)))
        .cloned()
        .unwrap_or(json!({"say": "E2E default answer."}));
    let ctx = Ctx {
        id: run.clone().unwrap_or_default(),
        dir: token(&prompt, "dir=").unwrap_or_default(),
        cwd: token(&prompt, BRIEF_CWD)
            .or_else(|| token(&prompt, "dir="))
            .unwrap_or_default(),
        tool_output: conv.last_tool_result.clone().unwrap_or_default(),
        history: conv.history_before_prompt.clone(),
    };
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| gemini_model(&path_only))
        .unwrap_or_else(|| "mock-model".into());

    // A fault the whole account has (a wrong key, a rate limit) fails the
    // CLI's helper calls too; one about the turn (its model, its length)
    // only the turn.
    let fault = step
        .get("fault")
        .and_then(Value::as_str)
        .map(|f| Fault::parse(f).unwrap_or_else(|| panic!("unknown fault {f:?} in scenarios.json")))
        .filter(|f| !helper || f.account_wide())
        .filter(|_| api != Api::Other);
    let usage = if fault.is_some() || api == Api::Other || step.get("error").is_some() && !helper {
        None
    } else if helper && api == Api::Chat && chat_title(&body) {
        // opencode leaves its title call out of the usage it reports, so
        // the mock bills it nothing (baton could not see it either way).
        Some(MockUsage::default())
    } else if helper {
        Some(MockUsage {
            input: 40,
            cached: 0,
            output: 4,
        })
    } else {
        Some(step_usage(&step))
    };
    log.lock().unwrap().push(Recorded {
        method: req.method.clone(),
        path: req.path.clone(),
        headers: req.headers.clone(),
        body: body.clone(),
        raw_body,
        api,
        helper,
        prompt,
        run,
        scenario: scenario.clone(),
        step: step_idx,
        usage,
        at: Instant::now(),
        fault,
        tool_output: conv.last_tool_result.clone(),
    });

    if let Some(f) = fault {
        let after = step
            .get("retry_after_s")
            .and_then(Value::as_u64)
            .unwrap_or(faults::RETRY_AFTER_S);
        return faults::answer(&stream, api, f, &model, after);
    }

    if api == Api::Other {
        return respond_json(
            &stream,
            404,
            &json!({"error": {"message": "mock: no such route"}}),
        );
    }
    if helper && matches!(api, Api::Chat | Api::Responses) {
        let u = usage.unwrap_or_default();
        let say = Action::Say("Mock helper answer.".into());
        return match api {
            Api::Chat => chat_stream(&stream, &body, &model, &say, u, 0),
            _ => responses_stream(&stream, &body, &model, &say, u, 0),
        };
    }
    if helper {
        return gemini_or_anthropic_helper(&stream, api, &body, &model);
    }
    if let Some(e) = step.get("error") {
        let status = e.get("status").and_then(Value::as_u64).unwrap_or(400) as u16;
        let msg = e
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("mock error");
        return respond_json(&stream, status, &error_body(api, status, msg));
    }
    let action = Action::from_step(&step, &ctx);
    let delay = step.get("delay_ms").and_then(Value::as_u64).unwrap_or(0);
    let usage = usage.unwrap_or_default();
    match api {
        Api::Responses => responses_stream(&stream, &body, &model, &action, usage, delay),
        Api::Anthropic => anthropic_stream(&stream, &body, &model, &action, usage, delay),
        Api::Chat => chat_stream(&stream, &body, &model, &action, usage, delay),
        Api::Gemini => gemini_stream(&stream, &body, &model, &action, usage, delay),
        Api::Other => unreachable!(),
    }
}

fn error_body(api: Api, status: u16, msg: &str) -> Value {
    match api {
        Api::Anthropic => {
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": msg}})
        }
        Api::Gemini => {
            json!({"error": {"code": status, "message": msg, "status": "INVALID_ARGUMENT"}})
        }
        _ => {
            json!({"error": {"message": msg, "type": "invalid_request_error", "code": "mock_error", "param": null}})
        }
    }
}

fn step_usage(step: &Value) -> MockUsage {
    let u = step.get("usage");
    let get = |k: &str, d: u64| {
        u.and_then(|u| u.get(k))
            .and_then(Value::as_u64)
            .unwrap_or(d)
    };
    MockUsage {
        input: get("input", 120),
        cached: get("cached", 0),
        output: get("output", 12),
    }
}

fn pick(script: &Value, prompt: &str, api: Api) -> (String, Vec<Value>) {
    let api_name = match api {
        Api::Responses => "responses",
        Api::Anthropic => "anthropic",
        Api::Chat => "chat",
        Api::Gemini => "gemini",
        Api::Other => "other",
    };
    if let Some(list) = script.get("scenarios").and_then(Value::as_array) {
        for s in list {
            let m = s.get("match").and_then(Value::as_str).unwrap_or("\u{0}");
            // A scenario may answer one wire format only (one CLI of a fan-out).
            let for_api = s
                .get("api")
                .and_then(Value::as_str)
                .is_none_or(|a| a == api_name);
            if prompt.contains(m) && for_api {
                return (
                    s.get("name")
                        .and_then(Value::as_str)
                        .unwrap_or(m)
                        .to_string(),
                    s.get("steps")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default(),
                );
            }
        }
    }
    let d = script
        .pointer("/default/steps")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    ("default".into(), d)
}

/// `key<value>` up to the next whitespace, first occurrence.
fn token(text: &str, key: &str) -> Option<String> {
    let i = text.find(key)?;
    let v: String = text[i + key.len()..]
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '"' && *c != '\\' && *c != '<')
        .collect();
    (!v.is_empty()).then_some(v)
}

fn last_token(text: &str, key: &str) -> Option<String> {
    let i = text.rfind(key)?;
    token(&text[i..], key)
}

fn gemini_model(path: &str) -> Option<String> {
    let i = path.find("/models/")?;
    let rest = &path[i + "/models/".len()..];
    Some(rest.split(':').next()?.to_string())
}

// ------------------------------------------------------- conversation ----

/// What the mock needs from a request, API-neutral.
#[derive(Debug, Default)]
struct Conv {
    prompt: Option<String>,
    tool_results_after_prompt: usize,
    last_tool_result: Option<String>,
    /// Everything (text and tool results) before the prompt, for resume checks.
    history_before_prompt: String,
}

enum Item {
    Prompt(String),
    ToolResult(String),
    /// Other history (assistant text, tool calls, injected context).
    Other(String),
}

/// Context the CLIs add as user messages is not the user's prompt: XML-ish
/// blocks (codex `<environment_context>`, claude `<system-reminder>`,
/// gemini-cli `<session_context>`) and codex's AGENTS.md preamble.
fn real_prompt_text(text: &str) -> Option<String> {
    // claude's nudge when a `--json-schema` answer came as text, not a prompt.
    if text.trim_start().starts_with("[structured-output-enforce]") {
        return None;
    }
    // claude's injected SKILL.md body after a `Skill` tool call.
    if text
        .trim_start()
        .starts_with("Base directory for this skill:")
    {
        return None;
    }
    let mut t = text.to_string();
    for tag in [
        "system-reminder",
        "session_context",
        "environment_context",
        "user_instructions",
        // copilot's user message starts with the time.
        "current_datetime",
    ] {
        let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
        while let Some(a) = t.find(&open) {
            let b = t[a..].find(&close).map_or(t.len(), |b| a + b + close.len());
            t.replace_range(a..b, "");
        }
    }
    let trimmed = t.trim();
    if trimmed.is_empty() || trimmed.starts_with('<') || trimmed.starts_with("# AGENTS.md") {
        None
    } else {
        Some(trimmed.to_string())
    }
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(text_of).collect::<Vec<_>>().join("\n"),
        Value::Object(o) => {
            if let Some(t) = o.get("text").and_then(Value::as_str) {
                t.to_string()
            } else if let Some(c) = o.get("content") {
                text_of(c)
            } else if let Some(c) = o.get("output") {
                text_of(c)
            } else {
                v.to_string()
            }
        }
        _ => String::new(),
    }
}

fn items(api: Api, body: &Value) -> Vec<Item> {
    let mut out = Vec::new();
    let arr = |k: &str| {
        body.get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    match api {
        Api::Responses => {
            for it in arr("input") {
                let kind = it.get("type").and_then(Value::as_str).unwrap_or("message");
                let role = it.get("role").and_then(Value::as_str).unwrap_or("");
                match kind {
                    "message" if role == "user" => {
                        let t = text_of(it.get("content").unwrap_or(&Value::Null));
                        match real_prompt_text(&t) {
                            Some(p) => out.push(Item::Prompt(p)),
                            None => out.push(Item::Other(t)),
                        }
                    }
                    "function_call_output" | "custom_tool_call_output" => out.push(
                        Item::ToolResult(text_of(it.get("output").unwrap_or(&Value::Null))),
                    ),
                    _ => out.push(Item::Other(it.to_string())),
                }
            }
        }
        Api::Anthropic => {
            for m in arr("messages") {
                let role = m.get("role").and_then(Value::as_str).unwrap_or("");
                let content = m.get("content").cloned().unwrap_or(Value::Null);
                if role != "user" {
                    out.push(Item::Other(content.to_string()));
                    continue;
                }
                let blocks = match content {
                    Value::String(s) => vec![json!({"type": "text", "text": s})],
                    Value::Array(a) => a,
                    _ => vec![],
                };
                let mut texts = Vec::new();
                for b in blocks {
                    match b.get("type").and_then(Value::as_str) {
                        Some("tool_result") => out.push(Item::ToolResult(text_of(
                            b.get("content").unwrap_or(&Value::Null),
                        ))),
                        Some("text") => {
                            let t = b.get("text").and_then(Value::as_str).unwrap_or("");
                            match real_prompt_text(t) {
                                Some(p) => texts.push(p),
                                None => out.push(Item::Other(t.to_string())),
                            }
                        }
                        _ => out.push(Item::Other(b.to_string())),
                    }
                }
                if !texts.is_empty() {
                    out.push(Item::Prompt(texts.join("\n")));
                }
            }
        }
        Api::Chat => {
            for m in arr("messages") {
                let role = m.get("role").and_then(Value::as_str).unwrap_or("");
                let t = text_of(m.get("content").unwrap_or(&Value::Null));
                match role {
                    "user" => match real_prompt_text(&t) {
                        Some(p) => out.push(Item::Prompt(p)),
                        None => out.push(Item::Other(t)),
                    },
                    "tool" => out.push(Item::ToolResult(t)),
                    _ => out.push(Item::Other(m.to_string())),
                }
            }
        }
        Api::Gemini => {
            for c in arr("contents") {
                let role = c.get("role").and_then(Value::as_str).unwrap_or("user");
                let parts = c
                    .get("parts")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                if role != "user" {
                    out.push(Item::Other(c.to_string()));
                    continue;
                }
                let mut texts = Vec::new();
                for p in parts {
                    if let Some(fr) = p.get("functionResponse") {
                        out.push(Item::ToolResult(fr.get("response").map_or_else(
                            || fr.to_string(),
                            |r| {
                                r.get("output")
                                    .or_else(|| r.get("error"))
                                    .map_or_else(|| r.to_string(), text_of)
                            },
                        )));
                    } else if let Some(t) = p.get("text").and_then(Value::as_str) {
                        match real_prompt_text(t) {
                            Some(x) => texts.push(x),
                            None => out.push(Item::Other(t.to_string())),
                        }
                    }
                }
                if !texts.is_empty() {
                    out.push(Item::Prompt(texts.join("\n")));
                }
            }
        }
        Api::Other => {}
    }
    out
}

fn conversation(api: Api, body: &Value) -> Conv {
    let items = items(api, body);
    let mut c = Conv::default();
    let Some(pi) = items.iter().rposition(|i| matches!(i, Item::Prompt(_))) else {
        return c;
    };
    if let Item::Prompt(p) = &items[pi] {
        c.prompt = Some(p.clone());
    }
    for it in &items[..pi] {
        match it {
            Item::Prompt(t) | Item::ToolResult(t) | Item::Other(t) => {
                c.history_before_prompt.push_str(t);
                c.history_before_prompt.push('\n');
            }
        }
    }
    for it in &items[pi + 1..] {
        if let Item::ToolResult(t) = it {
            c.tool_results_after_prompt += 1;
            c.last_tool_result = Some(t.clone());
        }
    }
    c
}

// ------------------------------------------------------------ answers ----

/// How baton's brief names the peer's working directory (`prompt::brief`).
const BRIEF_CWD: &str = "Work in this directory: ";

struct Ctx {
    /// The prompt's `id=` token (a step can give a nested run its own id).
    id: String,
    dir: String,
    /// Where baton told the peer to work (a worktree), else `dir`.
    cwd: String,
    tool_output: String,
    history: String,
}

impl Ctx {
    /// `fill` on every string inside a JSON value (a tool call's arguments).
    fn fill_value(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.fill(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.fill_value(x)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (k.clone(), self.fill_value(x)))
                    .collect(),
            ),
            x => x.clone(),
        }
    }

    fn fill(&self, s: &str) -> String {
        let mut out = s
            .replace("{id}", &self.id)
            .replace("{dir}", &self.dir)
            .replace("{cwd}", &self.cwd)
            .replace("{tool_output}", self.tool_output.trim());
        while let Some(a) = out.find("{history_has:") {
            let Some(b) = out[a..].find('}') else { break };
            let word = &out[a + "{history_has:".len()..a + b];
            let yes = if self.history.contains(word) {
                "yes"
            } else {
                "no"
            };
            out.replace_range(a..a + b + 1, yes);
        }
        out
    }
}

/// A step, API-neutral.
#[derive(Clone)]
enum Action {
    Say(String),
    Write {
        path: String,
        content: String,
    },
    Shell(String),
    /// Invoke a skill by name (claude's `Skill` tool; elsewhere said as text).
    Skill(String),
    /// A JSON answer, through the structured-output channel the request
    /// offers (claude's `StructuredOutput` tool), else as the text.
    Json(Value),
    /// Call a tool the request offers by its name, or by the name an MCP
    /// host gave it (`mcp__baton__run` for `run`), with these arguments.
    Tool {
        name: String,
        args: Value,
    },
}

impl Action {
    /// For APIs whose structured output is plain text (codex's `text.format`
    /// json_schema, pi, gemini-cli): a JSON answer is its text.
    fn json_as_text(&self) -> Action {
        match self {
            Action::Json(v) => Action::Say(v.to_string()),
            Action::Skill(name) => Action::Say(format!("(no skill tool here: {name})")),
            a => a.clone(),
        }
    }

    fn from_step(step: &Value, ctx: &Ctx) -> Action {
        if let Some(w) = step.get("write") {
            let g = |k: &str| ctx.fill(w.get(k).and_then(Value::as_str).unwrap_or(""));
            return Action::Write {
                path: g("path"),
                content: g("content"),
            };
        }
        if let Some(s) = step.get("shell").and_then(Value::as_str) {
            return Action::Shell(ctx.fill(s));
        }
        if let Some(j) = step.get("json") {
            return Action::Json(j.clone());
        }
        if let Some(s) = step.get("skill").and_then(Value::as_str) {
            return Action::Skill(ctx.fill(s));
        }
        if let Some(name) = step.get("tool").and_then(Value::as_str) {
            return Action::Tool {
                name: name.to_string(),
                args: ctx.fill_value(step.get("args").unwrap_or(&json!({}))),
            };
        }
        Action::Say(
            ctx.fill(
                step.get("say")
                    .and_then(Value::as_str)
                    .unwrap_or("E2E default answer."),
            ),
        )
    }
}

static SEQ: AtomicU64 = AtomicU64::new(1);

fn next_id(prefix: &str) -> String {
    format!("{prefix}_mock{:06}", SEQ.fetch_add(1, Ordering::Relaxed))
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Which tools the request offers, by name (Responses and Chat use `name`
/// or `function.name`; the kind is `function` or codex's freeform `custom`).
fn offered_tools(body: &Value) -> Vec<(String, String)> {
    body.get("tools")
        .and_then(Value::as_array)
        .map(|a| {
            // Gemini groups its tools: `[{functionDeclarations: [{name}…]}]`.
            let flat: Vec<Value> = a
                .iter()
                .flat_map(
                    |t| match t.get("functionDeclarations").and_then(Value::as_array) {
                        Some(d) => d.clone(),
                        None => vec![t.clone()],
                    },
                )
                .collect();
            flat.into_iter()
                .filter_map(|t| {
                    let kind = t
                        .get("type")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    let name = t
                        .get("name")
                        .or_else(|| t.pointer("/function/name"))
                        .and_then(Value::as_str)?;
                    Some((kind, name.to_string()))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The namespace (Responses API) that offers a tool named `name`, one of
/// baton's first.
fn namespace_of(body: &Value, name: &str) -> Option<String> {
    let spaces: Vec<&Value> = body
        .get("tools")
        .and_then(Value::as_array)?
        .iter()
        .filter(|t| t.get("type").and_then(Value::as_str) == Some("namespace"))
        .filter(|t| {
            t.get("tools").and_then(Value::as_array).is_some_and(|a| {
                a.iter()
                    .any(|x| x.get("name").and_then(Value::as_str) == Some(name))
            })
        })
        .collect();
    let ns = |t: &&Value| t.get("name").and_then(Value::as_str).map(str::to_string);
    spaces
        .iter()
        .filter_map(ns)
        .find(|n| n.contains("baton"))
        .or_else(|| spaces.first().and_then(ns))
}

/// The name the request offers for tool `name`: itself, else an MCP host's
/// name for it (Claude Code and Codex: `mcp__<server>__<tool>`; gemini-cli:
/// `mcp_<server>_<tool>` or the bare name). The name as given when none fits,
/// so the CLI's own error shows in the test's dump.
fn tool_name(tools: &[(String, String)], name: &str) -> String {
    let fits = |t: &str| {
        t == name || t.ends_with(&format!("__{name}")) || t.ends_with(&format!("_{name}"))
    };
    tools
        .iter()
        .map(|(_, t)| t)
        .find(|t| t.as_str() == name)
        .or_else(|| {
            tools
                .iter()
                .map(|(_, t)| t)
                .find(|t| t.contains("baton") && fits(t))
        })
        .or_else(|| tools.iter().map(|(_, t)| t).find(|t| fits(t)))
        .cloned()
        .unwrap_or_else(|| name.to_string())
}

fn add_file_patch(path: &str, content: &str) -> String {
    let mut p = format!("*** Begin Patch\n*** Add File: {path}\n");
    for l in content.lines() {
        p.push('+');
        p.push_str(l);
        p.push('\n');
    }
    p.push_str("*** End Patch\n");
    p
}

fn responses_stream(
    s: &TcpStream,
    body: &Value,
    model: &str,
    action: &Action,
    u: MockUsage,
    delay: u64,
) -> std::io::Result<()> {
    let action = &action.json_as_text();
    let rid = next_id("resp");
    let tools = offered_tools(body);
    let has = |n: &str| tools.iter().any(|(_, t)| t == n);
    let item = match action {
        Action::Say(text) => json!({"type": "message", "id": next_id("msg"), "role": "assistant",
            "status": "completed", "content": [{"type": "output_text", "text": text, "annotations": []}]}),
        Action::Write { path, content } => {
            let patch = add_file_patch(path, content);
            if tools
                .iter()
                .any(|(k, t)| t == "apply_patch" && k == "custom")
            {
                json!({"type": "custom_tool_call", "id": next_id("ctc"), "call_id": next_id("call"),
                    "name": "apply_patch", "input": patch, "status": "completed"})
            } else if has("apply_patch") {
                json!({"type": "function_call", "id": next_id("fc"), "call_id": next_id("call"),
                    "name": "apply_patch", "arguments": json!({"input": patch}).to_string(), "status": "completed"})
            } else {
                shell_call(
                    &tools,
                    &format!(
                        "printf '%s' '{}' > '{path}'",
                        content.replace('\'', "'\\''")
                    ),
                )
            }
        }
        Action::Shell(cmd) => shell_call(&tools, cmd),
        Action::Tool { name, args } => {
            let mut call = json!({"type": "function_call", "id": next_id("fc"),
                "call_id": next_id("call"), "name": tool_name(&tools, name),
                "arguments": args.to_string(), "status": "completed"});
            // Codex offers an MCP server's tools as a namespace
            // (`{type: namespace, name: mcp__baton, tools: [{name: run}…]}`);
            // a call names both.
            if let Some(ns) = namespace_of(body, name) {
                call["name"] = json!(name);
                call["namespace"] = json!(ns);
            }
            call
        }
        Action::Json(_) | Action::Skill(_) => unreachable!("json_as_text"),
    };
    let mut sse = Sse::start(s)?;
    let resp = |status: &str, output: Value, usage: Value| {
        json!({"id": rid, "object": "response", "created_at": now(), "status": status,
            "model": model, "output": output, "usage": usage})
    };
    sse.send(
        Some("response.created"),
        &json!({"type": "response.created", "response": resp("in_progress", json!([]), Value::Null)}),
    )?;
    if delay > 0 {
        sse.stall(delay)?;
    }
    sse.send(
        Some("response.output_item.added"),
        &json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
    )?;
    if let Action::Say(text) = action {
        let item_id = item["id"].clone();
        sse.send(
            Some("response.output_text.delta"),
            &json!({"type": "response.output_text.delta", "item_id": item_id, "output_index": 0,
                "content_index": 0, "delta": text}),
        )?;
    }
    sse.send(
        Some("response.output_item.done"),
        &json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
    )?;
    let usage = json!({"input_tokens": u.input, "input_tokens_details": {"cached_tokens": u.cached},
        "output_tokens": u.output, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": u.input + u.output});
    sse.send(
        Some("response.completed"),
        &json!({"type": "response.completed", "response": resp("completed", json!([item]), usage)}),
    )
}

fn shell_call(tools: &[(String, String)], cmd: &str) -> Value {
    let has = |n: &str| tools.iter().any(|(_, t)| t == n);
    let (name, args) = if has("exec_command") || !(has("shell_command") || has("shell")) {
        // Codex answers "still running" after `yield_time_ms` (10 s by
        // default); a command that delegates to a peer (host_sandbox.rs)
        // takes longer on a loaded machine. Shorter commands return when
        // they end, so the longer wait changes nothing for them.
        ("exec_command", json!({"cmd": cmd, "yield_time_ms": 30000}))
    } else if has("shell_command") {
        ("shell_command", json!({"command": cmd}))
    } else {
        ("shell", json!({"command": ["bash", "-lc", cmd]}))
    };
    json!({"type": "function_call", "id": next_id("fc"), "call_id": next_id("call"),
        "name": name, "arguments": args.to_string(), "status": "completed"})
}

fn anthropic_stream(
    s: &TcpStream,
    body: &Value,
    model: &str,
    action: &Action,
    u: MockUsage,
    delay: u64,
) -> std::io::Result<()> {
    let mut sse = Sse::start(s)?;
    sse.send(
        Some("message_start"),
        &json!({"type": "message_start", "message": {"id": next_id("msg"), "type": "message",
            "role": "assistant", "model": model, "content": [], "stop_reason": null,
            "stop_sequence": null, "usage": {"input_tokens": u.input - u.cached,
            "cache_read_input_tokens": u.cached, "cache_creation_input_tokens": 0, "output_tokens": 1}}}),
    )?;
    if delay > 0 {
        sse.stall(delay)?;
    }
    let (block, delta, stop) = match action {
        Action::Say(t) => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": t}),
            "end_turn",
        ),
        Action::Write { path, content } => {
            tool_use_block("Write", json!({"file_path": path, "content": content}))
        }
        Action::Shell(cmd) => tool_use_block(
            "Bash",
            json!({"command": cmd, "description": "run the check"}),
        ),
        Action::Skill(name) => tool_use_block("Skill", json!({"skill": name})),
        Action::Tool { name, args } => {
            tool_use_block(&tool_name(&offered_tools(body), name), args.clone())
        }
        // `--json-schema` offers this tool and takes its input as the answer.
        Action::Json(v)
            if offered_tools(body)
                .iter()
                .any(|(_, n)| n == STRUCTURED_OUTPUT) =>
        {
            tool_use_block(STRUCTURED_OUTPUT, v.clone())
        }
        Action::Json(v) => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": v.to_string()}),
            "end_turn",
        ),
    };
    sse.send(
        Some("content_block_start"),
        &json!({"type": "content_block_start", "index": 0, "content_block": block}),
    )?;
    sse.send(
        Some("content_block_delta"),
        &json!({"type": "content_block_delta", "index": 0, "delta": delta}),
    )?;
    sse.send(
        Some("content_block_stop"),
        &json!({"type": "content_block_stop", "index": 0}),
    )?;
    sse.send(
        Some("message_delta"),
        &json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
            "usage": {"output_tokens": u.output}}),
    )?;
    sse.send(Some("message_stop"), &json!({"type": "message_stop"}))
}

/// claude's structured-output tool (`--json-schema`).
const STRUCTURED_OUTPUT: &str = "StructuredOutput";

fn tool_use_block(name: &str, input: Value) -> (Value, Value, &'static str) {
    (
        json!({"type": "tool_use", "id": next_id("toolu"), "name": name, "input": {}}),
        json!({"type": "input_json_delta", "partial_json": input.to_string()}),
        "tool_use",
    )
}

/// Which CLI sent a Chat Completions request, by its system prompt: each
/// names its file and shell tools (and their arguments) its own way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChatCli {
    Pi,
    Opencode,
    Qwen,
    Copilot,
    /// Kilo Code (an opencode fork: opencode's tool names).
    Kilo,
    /// Cline: edits are `apply_patch` payloads, commands `run_commands`.
    Cline,
    Nanocoder,
}

fn system_text(body: &Value) -> String {
    body.get("messages")
        .and_then(Value::as_array)
        .map(|ms| {
            ms.iter()
                .filter(|m| m.get("role").and_then(Value::as_str) == Some("system"))
                .map(|m| text_of(m.get("content").unwrap_or(&Value::Null)))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn chat_cli(body: &Value) -> ChatCli {
    let sys = system_text(body);
    if sys.contains("You are opencode") {
        ChatCli::Opencode
    } else if sys.contains("Qwen Code") {
        ChatCli::Qwen
    } else if sys.contains("You are GitHub Copilot") {
        ChatCli::Copilot
    } else if sys.contains("You are Kilo") {
        ChatCli::Kilo
    } else if sys.contains("You are Cline") {
        ChatCli::Cline
    } else if sys.contains("You are Nanocoder") {
        ChatCli::Nanocoder
    } else {
        ChatCli::Pi
    }
}

/// Calls that are not the user's turn: opencode's session title (its first
/// user message asks for one) and qwen's memory extractor (a subagent run
/// after the answer).
fn chat_helper(body: &Value) -> bool {
    chat_title(body) || system_text(body).contains("managed memory extraction subagent")
}

fn chat_title(body: &Value) -> bool {
    let first_user = body
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|ms| {
            ms.iter()
                .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        })
        .map(|m| text_of(m.get("content").unwrap_or(&Value::Null)))
        .unwrap_or_default();
    first_user.starts_with("Generate a title for this conversation")
}

/// codex's task title: its interactive interface asks for one in a call of
/// its own, beside the turn (read-only, the turn's text quoted), which can
/// reach the mock first on a busy machine. `codex exec` does not make it.
fn responses_title(body: &Value) -> bool {
    body.get("input")
        .and_then(Value::as_array)
        .is_some_and(|items| {
            items.iter().any(|m| {
                m.get("role").and_then(Value::as_str) == Some("user")
                    && text_of(m.get("content").unwrap_or(&Value::Null))
                        .starts_with("Generate a concise, single-line task title")
            })
        })
}

fn chat_stream(
    s: &TcpStream,
    body: &Value,
    model: &str,
    action: &Action,
    u: MockUsage,
    delay: u64,
) -> std::io::Result<()> {
    let cli = chat_cli(body);
    // qwen's `--json-schema` offers a `structured_output` tool for the answer.
    let structured = offered_tools(body)
        .iter()
        .any(|(_, n)| n == "structured_output");
    let action = &match action {
        Action::Json(v) if structured => Action::Json(v.clone()),
        a => a.json_as_text(),
    };
    let id = next_id("chatcmpl");
    let chunk = |delta: Value, finish: Value| {
        json!({"id": id, "object": "chat.completion.chunk", "created": now(), "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut sse = Sse::start(s)?;
    sse.send(
        None,
        &chunk(json!({"role": "assistant", "content": ""}), Value::Null),
    )?;
    if delay > 0 {
        sse.stall(delay)?;
    }
    let call = |name: &str, args: Value| {
        json!({"tool_calls": [{"index": 0, "id": next_id("call"), "type": "function",
            "function": {"name": name, "arguments": args.to_string()}}]})
    };
    let finish = match action {
        Action::Say(t) => {
            sse.send(None, &chunk(json!({"content": t}), Value::Null))?;
            "stop"
        }
        Action::Write { path, content } => {
            let (name, args) = match cli {
                ChatCli::Pi => ("write", json!({"path": path, "content": content})),
                ChatCli::Opencode | ChatCli::Kilo => {
                    ("write", json!({"filePath": path, "content": content}))
                }
                ChatCli::Qwen => ("write_file", json!({"file_path": path, "content": content})),
                ChatCli::Copilot => ("create", json!({"path": path, "file_text": content})),
                ChatCli::Cline => (
                    "apply_patch",
                    json!({"input": add_file_patch(path, content)}),
                ),
                ChatCli::Nanocoder => ("write_file", json!({"path": path, "content": content})),
            };
            sse.send(None, &chunk(call(name, args), Value::Null))?;
            "tool_calls"
        }
        Action::Shell(cmd) => {
            let (name, args) = match cli {
                ChatCli::Pi => ("bash", json!({"command": cmd})),
                ChatCli::Opencode | ChatCli::Kilo => {
                    ("bash", json!({"command": cmd, "description": "run it"}))
                }
                ChatCli::Qwen => ("run_shell_command", json!({"command": cmd})),
                ChatCli::Copilot => ("bash", json!({"command": cmd, "description": "run it"})),
                ChatCli::Cline => ("run_commands", json!({"commands": [cmd]})),
                ChatCli::Nanocoder => ("execute_bash", json!({"command": cmd})),
            };
            sse.send(None, &chunk(call(name, args), Value::Null))?;
            "tool_calls"
        }
        Action::Json(v) => {
            sse.send(
                None,
                &chunk(call("structured_output", v.clone()), Value::Null),
            )?;
            "tool_calls"
        }
        Action::Tool { name, args } => {
            let name = tool_name(&offered_tools(body), name);
            sse.send(None, &chunk(call(&name, args.clone()), Value::Null))?;
            "tool_calls"
        }
        Action::Skill(_) => unreachable!("json_as_text"),
    };
    sse.send(None, &chunk(json!({}), json!(finish)))?;
    sse.send(
        None,
        &json!({"id": id, "object": "chat.completion.chunk", "created": now(), "model": model,
            "choices": [], "usage": {"prompt_tokens": u.input, "completion_tokens": u.output,
            "total_tokens": u.input + u.output, "prompt_tokens_details": {"cached_tokens": u.cached}}}),
    )?;
    sse.raw("data: [DONE]\n\n")
}

fn gemini_usage(u: MockUsage) -> Value {
    json!({"promptTokenCount": u.input, "cachedContentTokenCount": u.cached,
        "candidatesTokenCount": u.output, "totalTokenCount": u.input + u.output})
}

fn gemini_stream(
    s: &TcpStream,
    body: &Value,
    model: &str,
    action: &Action,
    u: MockUsage,
    delay: u64,
) -> std::io::Result<()> {
    let action = &action.json_as_text();
    let part = match action {
        Action::Say(t) => json!({"text": t}),
        Action::Write { path, content } => {
            json!({"functionCall": {"name": "write_file", "args": {"file_path": path, "content": content}}})
        }
        Action::Shell(cmd) => {
            json!({"functionCall": {"name": "run_shell_command", "args": {"command": cmd}}})
        }
        Action::Tool { name, args } => {
            json!({"functionCall": {"name": tool_name(&offered_tools(body), name), "args": args}})
        }
        Action::Json(_) | Action::Skill(_) => unreachable!("json_as_text"),
    };
    let mut sse = Sse::start(s)?;
    if delay > 0 {
        sse.stall(delay)?;
    }
    sse.send(
        None,
        &json!({"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP",
            "index": 0}], "usageMetadata": gemini_usage(u), "modelVersion": model,
            "responseId": next_id("gem")}),
    )
}

/// gemini-cli's helper calls (router, next-speaker check, summaries) and any
/// Anthropic request that is not an agent turn get a generic answer: a
/// minimal instance of the requested JSON schema, else a short text.
fn gemini_or_anthropic_helper(
    s: &TcpStream,
    api: Api,
    body: &Value,
    model: &str,
) -> std::io::Result<()> {
    let u = MockUsage {
        input: 40,
        cached: 0,
        output: 4,
    };
    if api == Api::Anthropic {
        return anthropic_stream(
            s,
            body,
            model,
            &Action::Say("Mock helper answer.".into()),
            u,
            0,
        );
    }
    let cfg = body.get("generationConfig").cloned().unwrap_or(Value::Null);
    let schema = cfg
        .get("responseJsonSchema")
        .or_else(|| cfg.get("responseSchema"));
    let text = match schema {
        Some(sc) => instance(sc).to_string(),
        None => "Mock session summary".to_string(),
    };
    respond_json(
        s,
        200,
        &json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
            "finishReason": "STOP", "index": 0}], "usageMetadata": gemini_usage(u), "modelVersion": model}),
    )
}

/// A minimal value that satisfies a JSON schema (enough for gemini-cli's
/// router and next-speaker schemas): required fields filled, enums take
/// `user` when offered (the next-speaker check must hand the turn back),
/// numbers take their minimum or 1.
fn instance(schema: &Value) -> Value {
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        return e
            .iter()
            .find(|v| v.as_str() == Some("user"))
            .or_else(|| e.first())
            .cloned()
            .unwrap_or(Value::Null);
    }
    let kind = schema
        .get("type")
        .and_then(|t| t.as_str().map(str::to_ascii_lowercase))
        .unwrap_or_else(|| "object".into());
    match kind.as_str() {
        "object" => {
            let mut o = serde_json::Map::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (k, v) in props {
                    o.insert(k.clone(), instance(v));
                }
            }
            Value::Object(o)
        }
        "string" => json!("mock"),
        "integer" | "number" => schema
            .get("minimum")
            .cloned()
            .filter(|m| m.as_f64().unwrap_or(0.0) >= 1.0)
            .unwrap_or(json!(1)),
        "boolean" => json!(false),
        "array" => json!([]),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn injected_context_is_not_the_prompt() {
        assert_eq!(
            real_prompt_text("<environment_context>x</environment_context>"),
            None
        );
        assert_eq!(real_prompt_text("# AGENTS.md instructions for /w"), None);
        assert_eq!(
            real_prompt_text("Base directory for this skill: /p/skills/peer\n\n# Peer"),
            None
        );
        assert_eq!(
            real_prompt_text("<system-reminder>r</system-reminder>\nE2E-PLAIN id=a").as_deref(),
            Some("E2E-PLAIN id=a")
        );
    }

    #[test]
    fn cwd_is_where_the_brief_says() {
        let p = "You are a peer.\nWork in this directory: /r/.baton/worktrees/x\n<task>\nE2E-X id=a dir=/r\n</task>";
        assert_eq!(
            token(p, BRIEF_CWD).as_deref(),
            Some("/r/.baton/worktrees/x")
        );
    }

    #[test]
    fn tokens() {
        assert_eq!(
            token("E2E-WRITE id=ab-1 dir=/x/y\n", "dir=").as_deref(),
            Some("/x/y")
        );
        assert_eq!(last_token("id=a … id=b\"", "id=").as_deref(), Some("b"));
    }

    #[test]
    fn an_mcp_hosts_name_for_a_tool_is_found() {
        let offered = |names: &[&str]| -> Vec<(String, String)> {
            names
                .iter()
                .map(|n| ("function".to_string(), n.to_string()))
                .collect()
        };
        let claude = offered(&["Bash", "mcp__other__run", "mcp__baton__run"]);
        assert_eq!(tool_name(&claude, "run"), "mcp__baton__run");
        let gemini = offered(&["run_shell_command", "mcp_baton_run"]);
        assert_eq!(tool_name(&gemini, "run"), "mcp_baton_run");
        assert_eq!(tool_name(&offered(&["run"]), "run"), "run");
        assert_eq!(tool_name(&offered(&["Bash"]), "run"), "run");
        // Gemini's grouped declarations count as offered.
        let body = json!({"tools": [{"functionDeclarations": [{"name": "mcp_baton_run"}]}]});
        assert_eq!(tool_name(&offered_tools(&body), "run"), "mcp_baton_run");
        // Codex: the server's tools in a namespace.
        let body = json!({"tools": [{"type": "function", "name": "exec_command"},
            {"type": "namespace", "name": "mcp__baton", "tools": [{"type": "function", "name": "run"}]}]});
        assert_eq!(namespace_of(&body, "run").as_deref(), Some("mcp__baton"));
        assert_eq!(namespace_of(&body, "ask"), None);
    }

    #[test]
    fn history_placeholder() {
        let c = Ctx {
            id: "run-1".into(),
            dir: String::new(),
            cwd: String::new(),
            tool_output: String::new(),
            history: "the word PAPAYA-7 was said".into(),
        };
        assert_eq!(
            c.fill("has={history_has:PAPAYA-7} no={history_has:KIWI}"),
            "has=yes no=no"
        );
        assert_eq!(c.fill("id={id}-peer"), "id=run-1-peer");
    }
}
