//! `baton mcp` driven over stdio with raw JSON-RPC, as a host would: the
//! handshake, tools/list, calls against fake peers, jobs, progress, cancel
//! (no peer left), the access cap, the recursion guard, and malformed input
//! (never a panic, always a JSON-RPC error, stdout only protocol lines).

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::schema::Validator;
use crate::support::{BATON, Env, fixture, pid_alive, record, wait_for};

const LONG: Duration = Duration::from_secs(20);

/// A line the server wrote on stdout: a JSON-RPC message, or not.
enum Out {
    Message(Value),
    NotJson(String),
}

/// A client speaking JSON-RPC to `baton mcp` over its stdin and stdout.
pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    out: Receiver<Out>,
    /// Notifications received while waiting for responses.
    pub notes: Vec<Value>,
    next: i64,
    /// Each tool's `outputSchema`, from `tools/list` (read at the first call).
    schemas: Option<std::collections::BTreeMap<String, Value>>,
}

impl Client {
    pub fn start(env: &Env, args: &[&str]) -> Client {
        let mut cmd = env.baton();
        cmd.arg("mcp").args(args);
        Client::spawn(cmd)
    }

    pub fn spawn(mut cmd: Command) -> Client {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start baton mcp");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let out = match serde_json::from_str::<Value>(&line) {
                    Ok(v) if v["jsonrpc"] == "2.0" => Out::Message(v),
                    _ => Out::NotJson(line),
                };
                if tx.send(out).is_err() {
                    break;
                }
            }
        });
        Client {
            stdin: child.stdin.take(),
            child,
            out: rx,
            notes: Vec::new(),
            next: 1,
            schemas: None,
        }
    }

    pub fn raw(&mut self, line: &str) {
        let s = self.stdin.as_mut().expect("stdin open");
        s.write_all(line.as_bytes()).unwrap();
        s.write_all(b"\n").unwrap();
        s.flush().unwrap();
    }

    pub fn send(&mut self, v: &Value) {
        self.raw(&v.to_string());
    }

    /// The next message within `t`.
    fn next_message(&mut self, t: Duration) -> Option<Value> {
        match self.out.recv_timeout(t) {
            Ok(Out::Message(v)) => Some(v),
            Ok(Out::NotJson(l)) => {
                panic!("stdout carried a line that is no JSON-RPC message: {l:?}")
            }
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Send a request and wait for its response (notifications are kept).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(id, LONG)
            .unwrap_or_else(|| panic!("no response to {method} #{id}"))
    }

    /// The response with `id`, within `t`.
    pub fn response(&mut self, id: i64, t: Duration) -> Option<Value> {
        let until = Instant::now() + t;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let m = self.next_message(left)?;
            if m.get("id") == Some(&json!(id)) {
                return Some(m);
            }
            self.notes.push(m);
        }
    }

    pub fn initialize(&mut self) -> Value {
        let r = self.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        r
    }

    /// `tools/call`: the result object (panics on a protocol error). A
    /// result that is no error is checked against the tool's output schema.
    pub fn call(&mut self, name: &str, args: Value) -> Value {
        let r = self.request("tools/call", json!({"name": name, "arguments": args}));
        let r = r
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("tools/call {name}: {r}"));
        if r["isError"] == false {
            self.check_output(name, &r);
        }
        r
    }

    /// Tool `name`'s result `r` as the spec asks of structured output: the
    /// `structuredContent` valid for the tool's `outputSchema` (strictly:
    /// no field the schema does not describe), and the same JSON serialised
    /// in the one text block beside it.
    pub fn check_output(&mut self, name: &str, r: &Value) {
        if self.schemas.is_none() {
            let list = self.request("tools/list", json!({}));
            let tools = list["result"]["tools"].as_array().expect("tools").clone();
            self.schemas = Some(
                tools
                    .iter()
                    .map(|t| {
                        (
                            t["name"].as_str().unwrap().to_string(),
                            t["outputSchema"].clone(),
                        )
                    })
                    .collect(),
            );
        }
        let schema = self.schemas.as_ref().unwrap()[name].clone();
        assert!(schema.is_object(), "{name} has no outputSchema");
        let s = r
            .get("structuredContent")
            .unwrap_or_else(|| panic!("{name}: {r}"));
        // The shape the tool lists, and the whole schema it names.
        let whole = Command::new(BATON)
            .args(["schema", published_name(&schema)])
            .output()
            .expect("baton schema");
        let whole: Value = serde_json::from_slice(&whole.stdout).expect("a schema");
        for (what, schema) in [("outputSchema", schema), ("published schema", whole)] {
            if let Err(e) = Validator::new(schema).validate(s) {
                panic!(
                    "{name}: structuredContent does not match its {what}:\n  {}\n{s}",
                    e.join("\n  ")
                );
            }
        }
        let blocks = r["content"].as_array().expect("content");
        assert_eq!(blocks.len(), 1, "{name}: {r}");
        assert_eq!(blocks[0]["type"], "text", "{name}: {r}");
        let text: Value = serde_json::from_str(blocks[0]["text"].as_str().unwrap())
            .unwrap_or_else(|e| panic!("{name}: the text block is not the JSON: {e}: {r}"));
        assert_eq!(
            &text, s,
            "{name}: the text block is not the structured content"
        );
    }

    /// Read what the server sends for `t`, keeping its notifications.
    pub fn listen(&mut self, t: Duration) {
        let until = Instant::now() + t;
        while let Some(m) = self.next_message(until.saturating_duration_since(Instant::now())) {
            self.notes.push(m);
        }
    }

    /// Wait at most `t` for a notification `method`, kept or new; whether one came.
    pub fn wait_note(&mut self, method: &str, t: Duration) -> bool {
        let until = Instant::now() + t;
        while !self.notes.iter().any(|n| n["method"] == method) {
            match self.next_message(until.saturating_duration_since(Instant::now())) {
                Some(m) => self.notes.push(m),
                None => return false,
            }
        }
        true
    }

    /// The `params` of every progress notification for `token`, in order.
    pub fn progress(&self, token: &Value) -> Vec<&Value> {
        self.notes
            .iter()
            .filter(|n| n["method"] == "notifications/progress")
            .map(|n| &n["params"])
            .filter(|p| &p["progressToken"] == token)
            .collect()
    }

    /// The messages of the progress notifications for `token`.
    pub fn progress_messages(&self, token: &Value) -> Vec<&str> {
        self.progress(token)
            .into_iter()
            .filter_map(|p| p["message"].as_str())
            .collect()
    }

    /// Close stdin (the client is gone) and wait for the server to exit.
    pub fn close(&mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        let until = Instant::now() + LONG;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(Instant::now() < until, "baton mcp did not exit");
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Everything the server wrote on stderr (after it exited).
    pub fn stderr(&mut self) -> String {
        let mut s = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            use std::io::Read;
            let _ = e.read_to_string(&mut s);
        }
        s
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fake codex that records its argv, writes its pid, prints a command
/// it is running, then waits for `$FAKE_DIR/gate` before the transcript.
fn gated_codex(env: &Env) {
    env.fake(
        "codex",
        &format!(
            "{}\necho $$ > \"$FAKE_DIR/pid\"\n\
             printf '%s\\n' '{{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}}'\n\
             printf '%s\\n' '{{\"type\":\"item.started\",\"item\":{{\"type\":\"command_execution\",\"command\":\"cargo test\"}}}}'\n\
             while [ ! -e \"$FAKE_DIR/gate\" ]; do sleep 0.02; done\ncat '{}'",
            record("codex"),
            fixture("codex/codex-exec-basic.jsonl").display()
        ),
    );
}

/// The name of the `baton schema` an output schema is the top level of.
pub fn published_name(out: &Value) -> &str {
    let d = out["description"].as_str().unwrap_or_default();
    let after = d.split("`baton schema ").nth(1).unwrap_or_default();
    &after[..after.find('`').unwrap_or(after.len())]
}

fn structured(r: &Value) -> &Value {
    assert_eq!(r["isError"], false, "{r}");
    &r["structuredContent"]
}

/// The error envelope in an error result's text.
fn tool_error(r: &Value) -> Value {
    assert_eq!(r["isError"], true, "{r}");
    assert!(r.get("structuredContent").is_none(), "{r}");
    serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap()
}

fn peer_pid(env: &Env) -> i32 {
    assert!(wait_for(LONG, || env.fake_dir.join("pid").exists()));
    let mut pid = String::new();
    assert!(wait_for(LONG, || {
        pid = fs::read_to_string(env.fake_dir.join("pid")).unwrap_or_default();
        pid.ends_with('\n')
    }));
    pid.trim().parse().unwrap()
}

#[test]
fn initialize_then_tools_list_names_every_tool_with_its_schemas() {
    let env = Env::new();
    let mut c = Client::start(&env, &[]);
    let init = c.initialize();
    let r = &init["result"];
    assert_eq!(r["protocolVersion"], "2025-11-25");
    assert_eq!(r["serverInfo"]["name"], "baton");
    assert!(r["capabilities"]["tools"].is_object());
    assert!(
        r["instructions"]
            .as_str()
            .unwrap()
            .contains("`async: true`")
    );
    let list = c.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "run",
            "ask",
            "council_discuss",
            "council_plan",
            "council_approve",
            "council_execute",
            "job_status",
            "job_wait",
            "job_result",
            "job_cancel",
            "jobs",
            "continue",
            "agents",
            "doctor"
        ]
    );
    let tool = |n: &str| tools.iter().find(|t| t["name"] == n).unwrap();
    let run = tool("run");
    assert_eq!(run["inputSchema"]["required"], json!(["task"]));
    assert_eq!(run["inputSchema"]["additionalProperties"], false);
    assert_eq!(run["inputSchema"]["properties"]["allow"]["type"], "array");
    // The output schema is the top level of what `baton schema` publishes
    // for a run, and of what `baton schema fanout` does for a call that
    // fans out (`agents`, `attempts`): every field of either.
    let published: Value =
        serde_json::from_str(&env.run(&["schema"]).stdout).expect("baton schema");
    let out = &run["outputSchema"];
    assert_eq!(out["type"], "object");
    let fanout: Value =
        serde_json::from_str(&env.run(&["schema", "fanout"]).stdout).expect("schema fanout");
    for s in [&published, &fanout] {
        for k in s["properties"].as_object().unwrap().keys() {
            assert!(out["properties"].get(k).is_some(), "{k}: {out}");
        }
    }
    assert!(out.get("$defs").is_none(), "{out}");
    assert_eq!(out["properties"]["status"]["type"], "string");
    for flag in [
        "agents",
        "attempts",
        "test_cmd",
        "until_green",
        "pick",
        "judge",
    ] {
        assert!(
            run["inputSchema"]["properties"].get(flag).is_some(),
            "{flag}"
        );
    }
    // Every tool has an output schema, the top level of one `baton schema`
    // publishes, which it names.
    for (tool_name, schema) in [
        ("council_plan", "council"),
        ("run", "run-or-fanout"),
        ("continue", "run-or-fanout"),
        ("ask", "ask"),
        ("council_discuss", "council"),
        ("council_approve", "council"),
        ("council_execute", "council"),
        ("job_status", "job-status"),
        ("job_wait", "job-result"),
        ("job_result", "job-result"),
        ("job_cancel", "job-result"),
        ("jobs", "jobs"),
        ("agents", "agents"),
        ("doctor", "doctor"),
    ] {
        let out = &tool(tool_name)["outputSchema"];
        assert_eq!(out["type"], "object", "{tool_name}");
        assert_eq!(published_name(out), schema, "{tool_name}");
    }
    assert_eq!(run["annotations"]["destructiveHint"], true);
    for n in ["ask", "job_status", "jobs", "agents", "doctor"] {
        assert_eq!(tool(n)["annotations"]["readOnlyHint"], true, "{n}");
    }
    assert_eq!(
        tool("job_wait")["inputSchema"]["required"],
        json!(["id", "timeout"])
    );
    assert!(c.close().success());
}

#[test]
fn agents_and_a_run_against_a_fake_peer_come_back_structured() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    let mut c = Client::start(&env, &[]);
    c.initialize();
    let agents = c.call("agents", json!({}));
    let list = structured(&agents)["agents"].as_array().unwrap();
    assert!(
        list.iter()
            .any(|a| a["name"] == "codex" && a["installed"] == true)
    );

    let r = c.call(
        "run",
        json!({"task": "--say hi; rm -rf /", "agent": "codex", "access": "read-only"}),
    );
    let s = structured(&r);
    assert_eq!(s["status"], "success", "{s}");
    assert_eq!(s["agent"], "codex");
    assert_eq!(s["access"], "read-only");
    assert_eq!(s["message"], "Hi from the mock model!");
    // The text beside it is the same JSON (checked by `call`).
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("Hi from the mock model!"), "{text}");
    // The task reached the peer as text, never as an option of baton's.
    assert!(env.stdin("codex").contains("--say hi; rm -rf /"));
    assert!(env.argv("codex").iter().any(|a| a == "read-only"));
    assert!(c.close().success());
}

#[test]
fn bad_arguments_are_an_error_result_before_anything_runs() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    let mut c = Client::start(&env, &[]);
    c.initialize();
    for args in [
        json!({"task": "t", "frobnicate": true}),
        json!({"task": 5}),
        json!({}),
    ] {
        let e = tool_error(&c.call("run", args.clone()));
        assert_eq!(e["error"]["kind"], "usage", "{args}: {e}");
    }
    // The command line's own checks answer too (here: an unknown agent).
    let e = tool_error(&c.call("run", json!({"task": "t", "agent": "nope"})));
    assert_eq!(e["error"]["kind"], "usage", "{e}");
    assert!(!env.called("codex"));
    // An unknown tool is a protocol error.
    let r = c.request("tools/call", json!({"name": "nope", "arguments": {}}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[test]
fn run_with_async_returns_at_once_and_job_wait_is_bounded() {
    let env = Env::new();
    gated_codex(&env);
    let mut c = Client::start(&env, &[]);
    c.initialize();
    // `run --async`: the result is the job's start line (0.3.2's `job_start`).
    let started = c.call("run", json!({"task": "t", "agent": "codex", "async": true}));
    c.check_output("run", &started);
    let s = structured(&started);
    assert_eq!(s["status"], "running", "{s}");
    let id = s["job_id"].as_str().unwrap().to_string();
    // Bounded: still running after the timeout, the wait returns.
    let t0 = Instant::now();
    let w = c.call("job_wait", json!({"id": id, "timeout": "200ms"}));
    assert_eq!(structured(&w)["status"], "running");
    assert!(t0.elapsed() < Duration::from_secs(5));
    let st = c.call("job_status", json!({"id": id}));
    assert_eq!(structured(&st)["status"], "running");
    fs::write(env.fake_dir.join("gate"), "").unwrap();
    let w = c.call("job_wait", json!({"id": id, "timeout": "20s"}));
    assert_eq!(structured(&w)["status"], "success", "{w}");
    assert_eq!(structured(&w)["job_id"], json!(id));
    let r = c.call("job_result", json!({"id": id}));
    assert_eq!(structured(&r)["message"], "Hi from the mock model!");
    let jobs = c.call("jobs", json!({}));
    assert_eq!(structured(&jobs)["total"], 1);
    // job_wait needs its bound.
    let e = tool_error(&c.call("job_wait", json!({"id": id})));
    assert!(
        e["error"]["message"].as_str().unwrap().contains("timeout"),
        "{e}"
    );
    // `job_start` is gone, not hidden (MCP lists every tool it serves).
    let r = c.request(
        "tools/call",
        json!({"name": "job_start", "arguments": {"task": "t"}}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[test]
fn progress_streams_the_peers_activity_and_the_result_follows() {
    let env = Env::new();
    gated_codex(&env);
    let mut c = Client::start(&env, &[]);
    c.initialize();
    c.send(
        &json!({"jsonrpc": "2.0", "id": 100, "method": "tools/call", "params": {
        "name": "run", "arguments": {"task": "t", "agent": "codex"},
        "_meta": {"progressToken": "tok-1"}}}),
    );
    // The activity arrives while the peer still works.
    let mut seen = Vec::new();
    let until = Instant::now() + LONG;
    while !seen.iter().any(|m: &String| m.contains("cargo test")) {
        assert!(Instant::now() < until, "no progress: {seen:?}");
        if let Some(m) = c.next_message(Duration::from_millis(100)) {
            assert_eq!(m["method"], "notifications/progress", "{m}");
            assert_eq!(m["params"]["progressToken"], "tok-1");
            seen.push(m["params"]["message"].as_str().unwrap().to_string());
        }
    }
    assert!(seen.iter().any(|m| m == "codex: $ cargo test"), "{seen:?}");
    fs::write(env.fake_dir.join("gate"), "").unwrap();
    let r = c.response(100, LONG).expect("the result");
    assert_eq!(r["result"]["structuredContent"]["status"], "success", "{r}");
    c.check_output("run", &r["result"]);
    // Progress values only grow.
    let values: Vec<f64> = c
        .notes
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .map(|n| n["params"]["progress"].as_f64().unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
}

#[test]
fn job_wait_streams_the_jobs_activity_while_it_waits() {
    let env = Env::new();
    gated_codex(&env);
    let mut c = Client::start(&env, &[]);
    c.initialize();
    let started = c.call("run", json!({"task": "t", "agent": "codex", "async": true}));
    let id = structured(&started)["job_id"].as_str().unwrap().to_string();
    peer_pid(&env);
    c.send(
        &json!({"jsonrpc": "2.0", "id": 50, "method": "tools/call", "params": {
        "name": "job_wait", "arguments": {"id": id, "timeout": "2s"},
        "_meta": {"progressToken": 5}}}),
    );
    let r = c.response(50, LONG).expect("job_wait answers");
    assert_eq!(r["result"]["structuredContent"]["status"], "running", "{r}");
    c.check_output("job_wait", &r["result"]);
    assert!(
        c.progress_messages(&json!(5))
            .contains(&"codex: $ cargo test"),
        "{:?}",
        c.notes
    );
    fs::write(env.fake_dir.join("gate"), "").unwrap();
    let w = c.call("job_wait", json!({"id": id, "timeout": "20s"}));
    assert_eq!(structured(&w)["status"], "success");
}

#[test]
fn cancel_stops_the_peer_and_leaves_no_process() {
    let env = Env::new();
    gated_codex(&env);
    let mut c = Client::start(&env, &[]);
    c.initialize();
    c.send(
        &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "run", "arguments": {"task": "t", "agent": "codex"}}}),
    );
    let pid = peer_pid(&env);
    assert!(pid_alive(pid));
    c.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 7, "reason": "user"}}),
    );
    assert!(wait_for(LONG, || !pid_alive(pid)), "peer {pid} still runs");
    // The server goes on serving; the cancelled call gets no response.
    let ping = c.request("ping", json!({}));
    assert!(ping["result"].is_object(), "{ping}");
    assert!(c.response(7, Duration::from_millis(300)).is_none());
    // The run was recorded as cancelled.
    let runs = env.records("runs");
    let cancelled = wait_for(LONG, || {
        fs::read_dir(&runs)
            .into_iter()
            .flatten()
            .flatten()
            .any(|d| {
                fs::read_to_string(d.path().join("result.json"))
                    .is_ok_and(|s| s.contains("\"status\":\"cancelled\""))
            })
    });
    assert!(cancelled, "no cancelled result under {}", runs.display());
}

#[test]
fn a_client_that_goes_away_takes_its_peers_with_it() {
    let env = Env::new();
    gated_codex(&env);
    let mut c = Client::start(&env, &[]);
    c.initialize();
    c.send(
        &json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "run", "arguments": {"task": "t", "agent": "codex"}}}),
    );
    let pid = peer_pid(&env);
    let status = c.close();
    assert!(status.success(), "{status:?}");
    assert!(!pid_alive(pid), "peer {pid} outlived the server");
}

#[test]
fn full_access_is_refused_unless_allowed_and_max_access_caps_every_call() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    let mut c = Client::start(&env, &[]);
    c.initialize();
    let e = tool_error(&c.call("run", json!({"task": "t", "access": "full"})));
    assert_eq!(e["error"]["kind"], "access_capped", "{e}");
    assert!(!env.called("codex"));
    drop(c);

    let mut c = Client::start(&env, &["--allow-full-access"]);
    c.initialize();
    let r = c.call("run", json!({"task": "t", "access": "full"}));
    assert_eq!(structured(&r)["access"], "full");
    drop(c);

    let mut c = Client::start(&env, &["--max-access", "read-only"]);
    c.initialize();
    let list = c.request("tools/list", json!({}));
    let run = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "run")
        .unwrap()
        .clone();
    assert_eq!(run["annotations"]["readOnlyHint"], true);
    // Asked for, or left to the default: the cap holds either way.
    for args in [
        json!({"task": "t", "access": "workspace"}),
        json!({"task": "t"}),
    ] {
        let e = tool_error(&c.call("run", args.clone()));
        assert_eq!(e["error"]["kind"], "access_capped", "{args}: {e}");
    }
    let r = c.call("run", json!({"task": "t", "access": "read-only"}));
    assert_eq!(structured(&r)["access"], "read-only");
    // `--max-access full` is no cap.
    let mut bad = env.baton();
    let out = bad.args(["mcp", "--max-access", "full"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_peer_cannot_reach_baton_through_its_own_mcp_config() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    // The server inherits the peer's depth…
    let mut c = Client::spawn({
        let mut cmd = env.baton();
        cmd.arg("mcp").env("BATON_DEPTH", "1");
        cmd
    });
    c.initialize();
    let e = tool_error(&c.call("run", json!({"task": "t"})));
    assert_eq!(e["error"]["kind"], "recursion_limit", "{e}");
    drop(c);
    // …or, when the host scrubbed its environment (as codex does for MCP
    // servers), finds it in an ancestor's: here a host shell that has it
    // starts the server without it.
    let host = env.tmp.path().join("host.sh");
    fs::write(
        &host,
        format!("env -u BATON_DEPTH '{BATON}' mcp\nexit $?\n"),
    )
    .unwrap();
    let mut cmd2 = Command::new("sh");
    cmd2.arg(&host)
        .current_dir(&env.work)
        .env("PATH", format!("{}:/usr/bin:/bin", env.bin.display()))
        .env("FAKE_DIR", &env.fake_dir)
        .env("BATON_STATE_DIR", &env.state)
        .env("BATON_CONFIG", env.tmp.path().join("user-config.toml"))
        .env("BATON_DEPTH", "1");
    let mut c = Client::spawn(cmd2);
    c.initialize();
    let e = tool_error(&c.call("run", json!({"task": "t"})));
    assert_eq!(e["error"]["kind"], "recursion_limit", "{e}");
    assert!(!env.called("codex"));
    // What only reads still works.
    let a = c.call("agents", json!({}));
    assert!(structured(&a)["agents"].is_array());
}

#[test]
fn malformed_and_out_of_order_input_gets_errors_and_the_server_lives() {
    let env = Env::new();
    let mut c = Client::start(&env, &[]);
    // Before the handshake: a stray notification and response are dropped,
    // a request without the lifecycle gets an error with its id.
    c.raw(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    c.raw(r#"{"jsonrpc":"2.0","id":99,"result":{}}"#);
    let r = c.request("tools/list", json!({}));
    assert!(r["error"]["code"].is_i64(), "{r}");
    c.raw("this is not json");
    let e = c.next_message(LONG).unwrap();
    assert_eq!(e["error"]["code"], -32700, "{e}");
    c.initialize();
    c.raw(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":"x"}"#);
    let e = c.response(5, LONG).unwrap();
    assert_eq!(e["error"]["code"], -32602, "{e}");
    let r = c.request("no/such/method", json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    assert!(c.request("ping", json!({}))["result"].is_object());
    assert!(c.close().success());
    let err = c.stderr();
    assert!(!err.contains("panicked"), "{err}");
}

mod fuzz {
    //! Malformed and out-of-order JSON-RPC, generated: the server answers
    //! every request (by id) and every line that is not JSON (-32700),
    //! writes nothing but JSON-RPC on stdout, never panics, and still
    //! answers a ping at the end.

    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;

    const SEEDS: &[&str] = &[
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"jobs","arguments":{"all":"yes"}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"run","arguments":{"task":7}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#,
        r#"{"jsonrpc":"2.0","id":"s","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"resources/list"}"#,
        r#"[{"jsonrpc":"2.0","id":9,"method":"ping"}]"#,
    ];

    #[derive(Debug, Clone)]
    enum Piece {
        Seed(usize, Vec<(usize, u8)>, Option<usize>),
        Bytes(Vec<u8>),
    }

    fn piece() -> impl Strategy<Value = Piece> {
        prop_oneof![
            3 => (
                any::<usize>(),
                prop::collection::vec((any::<usize>(), 1u8..=255), 0..3),
                prop::option::of(any::<usize>()),
            )
                .prop_map(|(s, flips, cut)| Piece::Seed(s, flips, cut)),
            1 => prop::collection::vec(any::<u8>(), 0..40).prop_map(Piece::Bytes),
        ]
    }

    fn bytes_of(p: &Piece) -> Vec<u8> {
        match p {
            Piece::Seed(s, flips, cut) => {
                let mut b = SEEDS[s % SEEDS.len()].as_bytes().to_vec();
                for (i, x) in flips {
                    let n = b.len();
                    b[i % n] ^= x;
                }
                if let Some(c) = cut {
                    b.truncate(c % (b.len() + 1));
                }
                b
            }
            Piece::Bytes(b) => b.clone(),
        }
    }

    fn id_of(v: &Value) -> Option<String> {
        match v.get("id")? {
            Value::Number(n) if n.is_i64() => Some(n.to_string()),
            Value::String(s) => Some(format!("{s:?}")),
            _ => None,
        }
    }

    proptest! {
        // Each case starts the real server.
        #![proptest_config(ProptestConfig::with_cases(40))]

        #[test]
        fn garbage_never_kills_or_pollutes_the_server(
            pieces in prop::collection::vec(piece(), 1..10),
        ) {
            let env = Env::new();
            let mut c = Client::start(&env, &[]);
            let mut all: Vec<u8> = Vec::new();
            for p in &pieces {
                all.extend(bytes_of(p));
                all.push(b'\n');
            }
            // What must be answered: each request with a usable id (ids
            // seen once: a duplicated id is the client's error), and each
            // line that is not JSON.
            let mut ids: HashMap<String, usize> = HashMap::new();
            let mut not_json = 0;
            for line in all.split(|b| *b == b'\n') {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match serde_json::from_slice::<Value>(line) {
                    Err(_) => not_json += 1,
                    Ok(v) => {
                        if v["jsonrpc"] == "2.0" && v["method"].is_string()
                            && let Some(id) = id_of(&v)
                        {
                            *ids.entry(id).or_default() += 1;
                        }
                    }
                }
            }
            let stdin = c.stdin.as_mut().unwrap();
            stdin.write_all(&all).unwrap();
            stdin.flush().unwrap();
            c.raw(r#"{"jsonrpc":"2.0","id":"final-init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}"#);
            c.raw(r#"{"jsonrpc":"2.0","id":"final-ping","method":"ping"}"#);
            let mut got: Vec<Value> = Vec::new();
            let want: Vec<&String> = ids.iter().filter(|(_, n)| **n == 1).map(|(k, _)| k).collect();
            let until = Instant::now() + LONG;
            loop {
                let answered = |k: &String| got.iter().any(|m| id_of(m).as_ref() == Some(k));
                if answered(&"\"final-ping\"".to_string()) && want.iter().all(|k| answered(k)) {
                    break;
                }
                prop_assert!(Instant::now() < until, "unanswered: want {want:?}, got {got:?}");
                if let Some(m) = c.next_message(Duration::from_millis(50)) {
                    got.push(m);
                }
            }
            let ping = got.iter().find(|m| m["id"] == "final-ping").unwrap();
            prop_assert!(ping["result"].is_object(), "{ping}");
            let parse_errors = got.iter().filter(|m| m["error"]["code"] == -32700).count();
            prop_assert!(parse_errors >= not_json, "{parse_errors} < {not_json}: {got:?}");
            prop_assert!(c.close().success());
            let err = c.stderr();
            prop_assert!(!err.contains("panicked"), "{}", err);
        }
    }
}

/// Issue 24 × 21: the `run` tool fans out when the call names `agents`
/// (with `test_cmd`, `judge`, …): the fan-out's result comes back as the
/// structured content, one of the two shapes the output schema admits.
#[test]
fn the_run_tool_fans_out_with_agents_and_test_cmd() {
    use crate::fanout::{TEST, setup, write_answer};
    use crate::support::council::{Scenario, Stage};
    let (env, fake) = setup();
    fake.write(
        &Scenario::new()
            .on("codex", Stage::Implement, write_answer("bad\n"))
            .on("claude", Stage::Implement, write_answer("good\n")),
    );
    let mut c = Client::spawn(crate::worktree::baton_cmd(
        &env,
        &["mcp", "--allow-test-cmd"],
    ));
    c.initialize();
    let r = c.call(
        "run",
        json!({
            "task": "write the answer",
            "agents": ["codex", "claude"],
            "test_cmd": TEST,
            "until_green": 0,
            "pick": "best",
            "judge": "none",
        }),
    );
    let s = structured(&r);
    assert_eq!(s["kind"], "fanout", "{s}");
    assert_eq!(s["status"], "success", "{s}");
    assert_eq!(s["winner"]["agent"], "claude", "{s}");
    assert_eq!(s["candidates"].as_array().unwrap().len(), 2);
    assert_eq!(s["judge"]["mode"], "none", "{s}");
    let text: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(&text, s);
    assert_eq!(fake.calls().len(), 2);
    assert!(c.close().success());
}

/// A fan-out started with `run` and `async`, waited for with a progress token:
/// the server follows the fan-out's records (its id names no job log), so
/// the host sees its candidates at work, then the fan-out's result.
#[test]
fn job_wait_on_a_fan_out_streams_its_candidates() {
    use crate::fanout::{TEST, setup, write_answer};
    use crate::support::council::{Scenario, Stage};
    let (env, fake) = setup();
    fake.write(
        &Scenario::new()
            .on(
                "codex",
                Stage::Implement,
                write_answer("bad\n").delay_ms(1500),
            )
            .on(
                "claude",
                Stage::Implement,
                write_answer("good\n").delay_ms(1500),
            ),
    );
    let mut c = Client::spawn(crate::worktree::baton_cmd(
        &env,
        &["mcp", "--allow-test-cmd"],
    ));
    c.initialize();
    let started = c.call(
        "run",
        json!({"task": "write the answer", "agents": ["codex", "claude"], "test_cmd": TEST,
               "until_green": 0, "pick": "best", "judge": "none", "async": true}),
    );
    let s = structured(&started);
    let id = s["job_id"]
        .as_str()
        .or_else(|| s["fanout_id"].as_str())
        .unwrap_or_else(|| panic!("an id: {s}"))
        .to_string();
    c.send(
        &json!({"jsonrpc": "2.0", "id": 72, "method": "tools/call", "params": {
        "name": "job_wait", "arguments": {"id": id, "timeout": "60s"},
        "_meta": {"progressToken": "fan-1"}}}),
    );
    let w = c
        .response(72, Duration::from_secs(90))
        .expect("job_wait answers");
    assert_eq!(w["result"]["structuredContent"]["status"], "success", "{w}");
    assert_eq!(
        w["result"]["structuredContent"]["winner"]["agent"], "claude",
        "{w}"
    );
    let said = c.progress_messages(&json!("fan-1"));
    assert!(
        said.iter()
            .any(|m| m.starts_with("fan-out: writing — 2 peers")),
        "{said:?}"
    );
    assert!(c.close().success());
}
