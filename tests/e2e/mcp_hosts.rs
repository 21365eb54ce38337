//! Real MCP hosts call `baton mcp`'s tools (issue 24, "Proof with real
//! clients"). The host is the real Claude Code, Codex or gemini-cli, its
//! model is the mock, and the mock makes it call baton's `run` tool
//! (`mcp__baton__run` and the like: `mock::tool_name`) with a task for a
//! real pi, which asks the same mock. The host gets the run's result back
//! as a tool result, hands it to its model (the mock records that request)
//! and ends its turn.
//!
//! The server gets its environment from the host's MCP configuration, not
//! from the host: Codex and gemini-cli pass their servers only a few
//! variables of their own, so pi's configuration and the test's tag
//! (`BATON_E2E_TAG`, to find leftover processes) are written there.
//!
//! Cancel: each host stops waiting for a tool call after its time-out
//! (Claude Code's `MCP_TOOL_TIMEOUT`, the server's `tool_timeout_sec` in
//! Codex, `timeout` in gemini-cli) and then sends `notifications/cancelled`
//! for it; the server stops the call's process group, and the test sees the
//! peer gone while the host is still alive (its model is made to think for a
//! while after the time-out), so it was the cancel and not the host's exit
//! that ended the peer.

use std::fs;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::plugin::{Ran, run};
use crate::support::{Agent, BATON, Peer, eventually, mock, tagged_processes};

/// A host and its peer pi, with a prompt that selects `marker`.
pub(crate) struct World {
    pub(crate) host: Peer,
    pub(crate) pi: Peer,
    pub(crate) id: String,
    pub(crate) task: String,
    pub(crate) tag: String,
}

impl World {
    pub(crate) fn new(host: Agent, name: &str, marker: &str) -> World {
        let host = Peer::new(host, name);
        let pi = Peer::new(Agent::Pi, &format!("{}-{name}-peer", host.agent.label()));
        let (id, task) = host.prompt(marker);
        let tag = format!("{}-{}", host.name, std::process::id());
        World {
            host,
            pi,
            id,
            task,
            tag,
        }
    }

    /// The environment `baton mcp` is given in the host's configuration:
    /// pi's (its config dir, key, home, PATH with the CLIs) and the tag.
    pub(crate) fn server_env(&self) -> serde_json::Map<String, Value> {
        let mut env: serde_json::Map<String, Value> = self
            .pi
            .env_vars()
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
            .collect();
        env.insert("BATON_E2E_TAG".into(), self.tag.clone().into());
        env
    }

    /// The host CLI with its own environment (the tag only reaches the
    /// server, through the host's MCP configuration).
    fn host_cmd(&self, program: &str, args: &[&str]) -> Command {
        let mut c = self.host.cli(program);
        c.args(args);
        c
    }

    /// Tagged processes but the server itself: the child baton of a call,
    /// pi, and whatever pi started.
    fn peer_side(&self) -> Vec<String> {
        self.tagged(false)
    }

    /// The `baton mcp` server's own process(es).
    fn servers(&self) -> Vec<String> {
        self.tagged(true)
    }

    fn tagged(&self, server: bool) -> Vec<String> {
        let me = format!("{BATON} mcp");
        tagged_processes(&self.tag)
            .into_iter()
            .filter(|p| p.split_once(": ").is_some_and(|(_, cmd)| cmd.trim() == me) == server)
            .collect()
    }

    /// The `result.json` of every run pi's baton recorded.
    fn recorded_runs(&self) -> Vec<Value> {
        let mut out = Vec::new();
        for p in self.pi.files_mentioning("schema_version") {
            if p.file_name().is_some_and(|n| n == "result.json")
                && let Ok(v) = serde_json::from_str(&fs::read_to_string(&p).unwrap_or_default())
            {
                out.push(v);
            }
        }
        out
    }

    /// The request in which the host handed the tool's result back to the
    /// model, and that result's text.
    fn tool_result(&self, r: &Ran) -> String {
        mock()
            .requests_for(&self.id)
            .into_iter()
            .filter(|q| !q.helper)
            .find_map(|q| q.tool_output)
            .unwrap_or_else(|| {
                panic!(
                    "the host sent no tool result to the model\n{}\n{}",
                    r.dump(),
                    self.server_log(),
                )
            })
    }

    /// What pi's run left, and the tools the host offered its model (for
    /// failure messages).
    pub(crate) fn server_log(&self) -> String {
        let first = mock()
            .requests_for(&self.id)
            .into_iter()
            .find(|q| !q.helper);
        // Names only (gemini groups its declarations).
        let tools = first.map(|q| {
            let mut names = Vec::new();
            for t in q.body["tools"].as_array().into_iter().flatten() {
                let decl = t["functionDeclarations"].as_array();
                for d in decl.into_iter().flatten().chain([t]) {
                    if let Some(n) = d["name"].as_str().or(d["type"].as_str()) {
                        names.push(n.to_string());
                    }
                }
            }
            names.join(" ")
        });
        let mut out = format!("--- tools offered\n{}\n", tools.unwrap_or_default());
        for p in self.pi.files_mentioning("E2E-") {
            if p.extension().is_some_and(|e| e == "log") {
                out.push_str(&format!("--- {}\n", p.display()));
                out.push_str(&fs::read_to_string(&p).unwrap_or_default());
            }
        }
        out
    }
}

/// What the host put in front of its model for baton's tools, in the first
/// request of the turn: the compact JSON of every tool entry that is
/// baton's (Codex: the `mcp__baton` namespace; Claude Code: `mcp__baton__*`;
/// gemini-cli: its declarations named after baton's tools), and how many.
/// Printed for docs/mcp.md ("What hosts send their model") and held to a
/// ceiling, so a host or a change of baton's that doubles it is seen.
fn offered(w: &World) -> (usize, usize) {
    let names: Vec<&str> = baton::mcp::tools::TOOLS.iter().map(|t| t.name).collect();
    let first = mock()
        .requests_for(&w.id)
        .into_iter()
        .find(|q| !q.helper)
        .expect("the host asked its model");
    let ours = |t: &Value| {
        t["name"].as_str().is_some_and(|n| {
            n.contains("baton")
                || names
                    .iter()
                    .any(|b| n == *b || n.ends_with(&format!("_{b}")))
        })
    };
    let (mut bytes, mut count) = (0, 0);
    for t in first.body["tools"].as_array().into_iter().flatten() {
        let entries: Vec<&Value> = match t["functionDeclarations"].as_array() {
            Some(d) => d.iter().collect(),
            None => vec![t],
        };
        for e in entries {
            if e["type"] == "namespace" {
                if ours(e) {
                    bytes += e.to_string().len();
                    count += e["tools"].as_array().map_or(0, Vec::len);
                }
            } else if ours(e) {
                bytes += e.to_string().len();
                count += 1;
            }
        }
    }
    eprintln!(
        "{}: baton's {count} tools, {bytes} B in the model's request",
        w.host.name
    );
    (bytes, count)
}

/// The ceiling `offered` is held to: the model-visible budget of the tool
/// list (bench/mcp.py) with room for each host's own wrapping.
const OFFERED_MAX: usize = 24 << 10;

fn assert_offered(w: &World) {
    let (bytes, count) = offered(w);
    assert_eq!(count, baton::mcp::tools::TOOLS.len(), "{}", w.server_log());
    assert!(
        bytes <= OFFERED_MAX,
        "{}: {bytes} B of baton's tools",
        w.host.name
    );
}

/// The run's JSON result inside the tool result the host sent its model:
/// the first JSON object in it that has a `status`.
fn run_json(text: &str) -> Option<Value> {
    let mut from = 0;
    while let Some(i) = text[from..].find('{').map(|i| i + from) {
        let mut de = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        if let Some(Ok(v)) = de.next()
            && v.get("status").is_some()
        {
            return Some(v);
        }
        // Not a result (or not JSON): try the next brace.
        from = i + 1;
    }
    // A host that quotes the result as a string: unescape and look again.
    let unquoted = text.replace("\\\"", "\"");
    (unquoted != text).then(|| run_json(&unquoted)).flatten()
}

/// What every host test asserts: pi reached the mock, the tool result the
/// host gave its model holds a successful run of pi, and the host ended
/// its turn (exit 0, the scripted last answer).
///
/// Every host sees the run's JSON: Claude Code and Codex hand their model
/// the `structuredContent`, gemini-cli (0.61) only the `content` text,
/// which is the same JSON serialised (MCP 2025-06-18).
fn assert_delegated(w: &World, r: &Ran, answer_seen: bool) {
    let text = w.tool_result(r);
    let j = run_json(&text).unwrap_or_else(|| {
        panic!(
            "no run result in the tool result\n{text}\n{}\n{}",
            r.dump(),
            w.server_log()
        )
    });
    assert_eq!(
        j["status"],
        "success",
        "{text}\n{}\n{}",
        r.dump(),
        w.server_log()
    );
    assert_eq!(j["agent"], "pi", "{text}");
    assert!(
        j["message"].as_str().unwrap_or("").contains("PLAIN-ANSWER"),
        "{text}"
    );
    assert_ran(w, r, answer_seen);
}

/// pi reached the mock, the host exited 0 after its last answer, and no
/// process of the call is left.
fn assert_ran(w: &World, r: &Ran, answer_seen: bool) {
    assert!(
        !mock().requests_for(&format!("{}-peer", w.id)).is_empty(),
        "pi never reached the mock\n{}",
        r.dump()
    );
    assert_eq!(r.code, Some(0), "{}", r.dump());
    assert!(answer_seen, "the host did not end its turn\n{}", r.dump());
    // The host closed the server's stdin when it exited; the server ends
    // soon after.
    assert!(
        eventually(Duration::from_secs(20), || tagged_processes(&w.tag)
            .is_empty()),
        "left behind: {:?}",
        tagged_processes(&w.tag)
    );
}

pub(crate) fn claude_mcp_config(w: &World) -> String {
    let cfg = json!({"mcpServers": {"baton": {
        "type": "stdio", "command": BATON, "args": ["mcp"], "env": w.server_env()}}});
    let path = w.host.root.join("mcp.json");
    fs::write(&path, cfg.to_string()).unwrap();
    path.display().to_string()
}

/// `claude -p` with baton as its one MCP server and `run` allowed.
pub(crate) fn claude_host(w: &World, env: &[(&str, &str)]) -> Command {
    let cfg = claude_mcp_config(w);
    let mut c = w.host_cmd(
        "claude",
        &[
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--strict-mcp-config",
            "--mcp-config",
            &cfg,
            "--allowedTools",
            "mcp__baton__run",
        ],
    );
    // Claude Code defers MCP tools behind its ToolSearch tool (the model
    // would have to search for `run` first); the scripted model calls it
    // at once, so every tool is offered up front.
    c.env("ENABLE_TOOL_SEARCH", "false");
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

/// The text of claude's last `result` event.
pub(crate) fn claude_answer(r: &Ran) -> String {
    r.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "result")
        .filter_map(|e| e["result"].as_str().map(str::to_string))
        .next_back()
        .unwrap_or_default()
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn claude_code_calls_baton_run_over_mcp() {
    let w = World::new(Agent::Claude, "mcp-host", "E2E-MCP-HOST-RUN");
    let r = run(
        &w.host,
        "claude-mcp-host",
        claude_host(&w, &[]),
        Some(&w.task),
    );
    let answer = claude_answer(&r);
    assert_delegated(&w, &r, answer.starts_with("MCP-HOST-DONE"));
    assert_offered(&w);
}

/// `baton setup --mcp codex` (plus `args`) run for the host, its report.
fn codex_setup(w: &World, label: &str, args: &[&str]) -> Value {
    let mut all = vec!["setup", "--mcp", "codex"];
    all.extend_from_slice(args);
    let r = run(&w.host, label, w.host_cmd(BATON, &all), None).ok();
    let v: Value =
        serde_json::from_str(r.stdout.trim()).unwrap_or_else(|e| panic!("{e}\n{}", r.dump()));
    assert_eq!(v["status"], "ok", "{v}");
    v
}

/// baton as an MCP server in the Codex host's own config.toml, next to the
/// mock provider `support::configure` wrote, as `baton setup --mcp codex`
/// registers it (the host's HOME and CODEX_HOME), then what only these
/// tests need in the same table (setup's block is the file's last): where
/// the server runs, pi's environment (Codex passes its servers only a few
/// variables). `run` is marked destructive, and `codex
/// exec` (approval policy `never`) refuses a call that needs approval
/// unless the server's tools are approved beforehand: setup's block says
/// so, and these tests prove it is enough. The config file, and its text
/// before and after setup.
pub(crate) fn codex_registers_baton(w: &World) -> (std::path::PathBuf, String, String) {
    let cfg = w.host.home.join(".codex/config.toml");
    let before = fs::read_to_string(&cfg).unwrap();
    let rep = codex_setup(w, "codex-mcp-setup", &[]);
    assert_eq!(rep["hosts"][0]["written"], json!([cfg]), "{rep}");
    let registered = fs::read_to_string(&cfg).unwrap();
    assert!(registered.starts_with(&before), "{registered}");
    let env: Vec<String> = w
        .server_env()
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect();
    fs::write(
        &cfg,
        format!(
            "{registered}cwd = {}\nenv = {{ {} }}\n",
            Value::from(w.host.work.display().to_string()),
            env.join(", ")
        ),
    )
    .unwrap();
    (cfg, before, registered)
}

/// The Codex host, headless, on a model it has no catalog entry for: it
/// then offers MCP tools to the model directly, where for its own models
/// (gpt-5.5) it defers them behind `tool_search` (the scripted model would
/// have to search for `run` first).
pub(crate) fn codex_host(w: &World) -> Command {
    w.host_cmd(
        "codex",
        &[
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--model",
            "mock-host-model",
            "-",
        ],
    )
}

/// The Codex host's last message.
pub(crate) fn codex_answer(r: &Ran) -> String {
    r.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "agent_message")
        .filter_map(|e| e["item"]["text"].as_str().map(str::to_string))
        .next_back()
        .unwrap_or_default()
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn codex_calls_baton_run_over_mcp() {
    let w = World::new(Agent::Codex, "mcp-host", "E2E-MCP-HOST-RUN");
    let (cfg, before, registered) = codex_registers_baton(&w);
    let r = run(&w.host, "codex-mcp-host", codex_host(&w), Some(&w.task));
    assert_delegated(&w, &r, codex_answer(&r).starts_with("MCP-HOST-DONE"));
    assert_offered(&w);
    // `--uninstall` removes exactly what setup wrote.
    fs::write(&cfg, &registered).unwrap();
    codex_setup(&w, "codex-mcp-uninstall", &["--uninstall"]);
    assert_eq!(fs::read_to_string(&cfg).unwrap(), before);
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn gemini_cli_calls_baton_run_over_mcp() {
    let w = World::new(Agent::GeminiCli, "mcp-host", "E2E-MCP-HOST-RUN");
    gemini_registers_baton(&w, 180_000);
    let r = run(&w.host, "gemini-mcp-host", gemini_host(&w), Some(&w.task));
    // gemini-cli gives its model the `content` text and drops the
    // `structuredContent`: the text is the result's JSON.
    assert_delegated(&w, &r, gemini_answer(&r).starts_with("MCP-HOST-DONE"));
    assert_offered(&w);
}

/// baton in the gemini host's settings.json: `trust`, no confirmation for
/// the server's tools (headless mode could not ask); `cwd`, where the
/// server runs its calls; `timeout` (ms), how long gemini-cli waits for a
/// call.
pub(crate) fn gemini_registers_baton(w: &World, timeout_ms: u64) {
    let path = w.host.home.join(".gemini/settings.json");
    let mut settings: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    settings["mcpServers"] = json!({"baton": {
        "command": BATON, "args": ["mcp"], "cwd": w.host.work, "env": w.server_env(),
        "trust": true, "timeout": timeout_ms}});
    fs::write(&path, settings.to_string()).unwrap();
}

pub(crate) fn gemini_host(w: &World) -> Command {
    w.host_cmd(
        "gemini",
        &[
            "--output-format",
            "stream-json",
            "--skip-trust",
            "--approval-mode",
            "yolo",
        ],
    )
}

/// The gemini host's answer: its assistant messages, joined.
pub(crate) fn gemini_answer(r: &Ran) -> String {
    r.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "message" && e["role"] == "assistant")
        .filter_map(|e| e["content"].as_str().map(str::to_string))
        .collect()
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn claude_code_cancels_a_run_it_stopped_waiting_for_and_no_peer_is_left() {
    let w = World::new(Agent::Claude, "mcp-host-cancel", "E2E-MCP-HOST-CANCEL");
    // Claude Code gives up on the call after 30 s (MCP_TOOL_TIMEOUT, ms):
    // long enough for pi to start on a loaded machine (15 s was not, once,
    // with the other e2e tests beside it: 2026-12-07).
    cancels(
        w,
        |w| claude_host(w, &[("MCP_TOOL_TIMEOUT", "30000")]),
        Some(claude_answer),
    );
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn codex_cancels_a_run_it_stopped_waiting_for_and_no_peer_is_left() {
    let w = World::new(Agent::Codex, "mcp-host-cancel", "E2E-MCP-HOST-CANCEL");
    // Codex gives up on a call after the server's `tool_timeout_sec`
    // (setup writes an hour for baton; 30 s here, for pi to start under load).
    let (cfg, _, _) = codex_registers_baton(&w);
    let toml = fs::read_to_string(&cfg).unwrap();
    assert!(toml.contains("\ntool_timeout_sec = 3660\n"), "{toml}");
    fs::write(
        &cfg,
        toml.replace("\ntool_timeout_sec = 3660\n", "\ntool_timeout_sec = 30\n"),
    )
    .unwrap();
    cancels(w, codex_host, Some(codex_answer));
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn gemini_cli_cancels_a_run_it_stopped_waiting_for_and_no_peer_is_left() {
    let w = World::new(Agent::GeminiCli, "mcp-host-cancel", "E2E-MCP-HOST-CANCEL");
    // gemini-cli gives up on a call after the server's `timeout` (ms).
    gemini_registers_baton(&w, 30_000);
    // Its model's next answer is not checked: stalled 20 s by the mock (which
    // keeps a stream alive with SSE comment lines, as the real Gemini API
    // does not), gemini-cli 0.61.0 ended it with "[API Error: Incomplete
    // JSON segment at the end]" after 87 s and exit 1 (measured
    // 2026-12-02). Everything about the cancel is checked.
    cancels(w, gemini_host, None);
}

/// The host, whose model calls `run` for a pi that stalls, gives up on the
/// call after its time-out and tells the server; the peer's whole tree must
/// be gone while host and server still run.
fn cancels(w: World, host_cmd: fn(&World) -> Command, answer: Option<fn(&Ran) -> String>) {
    let w = Arc::new(w);
    let peer_run = format!("{}-peer", w.id);
    let ended = Arc::new(AtomicBool::new(false));
    let host = {
        let (w, ended) = (Arc::clone(&w), Arc::clone(&ended));
        std::thread::spawn(move || {
            let label = format!("{}-mcp-host-cancel", w.host.agent.label());
            let r = run(&w.host, &label, host_cmd(&w), Some(&w.task));
            ended.store(true, Ordering::SeqCst);
            r
        })
    };
    // pi is running: its request (which stalls) reached the mock.
    let started = mock().wait_for(&peer_run, Duration::from_secs(120));
    let running = w.peer_side();
    let server_then = w.servers();
    // Claude Code gave up and told its model so: the step-1 request.
    let told = started
        && eventually(Duration::from_secs(60), || {
            mock()
                .requests_for(&w.id)
                .iter()
                .any(|q| q.tool_output.is_some())
        });
    // Its model now thinks for 20 s (scenario): host and server still up.
    // Within that time pi's whole tree must be gone.
    let gone = told && eventually(Duration::from_secs(15), || w.peer_side().is_empty());
    let host_alive = !ended.load(Ordering::SeqCst);
    let left = w.peer_side();
    let server_now = w.servers();
    let r = host.join().unwrap();
    assert!(started, "pi never reached the mock\n{}", r.dump());
    assert!(
        running.iter().any(|p| p.contains("pi")),
        "pi is not among the tagged processes while it runs: {running:?}"
    );
    assert!(
        told,
        "the host never handed a tool result to its model\n{}",
        r.dump()
    );
    assert!(
        host_alive,
        "the host had already exited: that proves disconnect, not cancel\n{}",
        r.dump()
    );
    assert!(
        gone,
        "still running after the cancel: {left:?}\n{}",
        r.dump()
    );
    // The same server process before and after: the host cancelled the
    // call, it did not restart (or kill) its server.
    assert!(!server_then.is_empty(), "no server process seen");
    assert_eq!(server_then, server_now, "the server was replaced");
    // The child baton recorded pi's run as cancelled (SIGTERM from the
    // server), not as a success or a time-out of its own.
    let runs = w.recorded_runs();
    assert!(
        runs.len() == 1 && runs[0]["status"] == "cancelled",
        "{runs:?}"
    );
    let text = w.tool_result(&r);
    assert!(
        text.to_lowercase().contains("timed out"),
        "{text}\n{}",
        r.dump()
    );
    assert!(run_json(&text).is_none(), "a result came back: {text}");
    // The host went on to its model's last answer and ended its turn.
    if let Some(answer) = answer {
        assert_eq!(r.code, Some(0), "{}", r.dump());
        assert!(
            answer(&r).starts_with("MCP-HOST-CANCEL-DONE"),
            "{}",
            r.dump()
        );
    }
    // Nothing of the call is left once the host is gone either.
    assert!(
        eventually(Duration::from_secs(10), || tagged_processes(&w.tag)
            .is_empty()),
        "left behind: {:?}",
        tagged_processes(&w.tag)
    );
}
