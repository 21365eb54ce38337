//! baton inside a real host agent's sandbox (issue 22 §5): the host is the
//! real Codex (or Claude Code), its model is the mock, and the mock makes it
//! run `baton run --agent pi …` through its shell tool, so the peer pi
//! would ask the same mock. Codex's shell is a login shell, and the system
//! profile resets root's PATH, so there the command sets it back first
//! (scenario `host-login-shell`); Claude Code's keeps PATH
//! (`host-baton-path`).
//! - Codex's default `--sandbox workspace-write` blocks the network of the
//!   commands it runs: baton answers `host_sandbox` within a second, the
//!   host gets that JSON line as its tool output, and the peer never starts;
//! - with `-c sandbox_workspace_write.network_access=true` the same
//!   delegation succeeds end to end, its records in the fallback state
//!   directory (the home is read-only in that sandbox);
//! - Claude Code with its sandbox on: `host_sandbox`; with baton in
//!   `sandbox.excludedCommands` the delegation runs outside it and succeeds.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::plugin::{Ran, run};
use crate::support::{Agent, BATON, Peer, mock};

/// `program` of the host's world, with the peer's config in its
/// environment too and the baton under test first on PATH.
fn host_cmd(host: &Peer, peer: &Peer, program: &str, args: &[&str]) -> Command {
    let mut c = host.cli(program);
    let mine: Vec<&str> = host.env_vars().iter().map(|(k, _)| k.as_str()).collect();
    for (k, v) in peer.env_vars() {
        if !mine.contains(&k.as_str()) {
            c.env(k, v);
        }
    }
    let path = host
        .env_vars()
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap();
    let dir = Path::new(BATON).parent().unwrap();
    let path = format!("{}:{path}", dir.display());
    c.env("PATH", &path).env("E2E_PATH", &path);
    c.args(args);
    c
}

/// baton's JSON line in a tool's output.
fn baton_line(output: &str, ran: &Ran) -> Value {
    output
        .lines()
        .filter(|l| l.trim_start().starts_with('{'))
        .find_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .unwrap_or_else(|| panic!("no JSON line from baton in the tool output\n{}", ran.dump()))
}

/// The one shell command a Codex session ran: its output, its exit code,
/// and how long baton took in it (the command times it: Codex's own "Wall
/// time" reads 0.0000 s for a command that ends before its first poll).
fn codex_tool_call(r: &Ran) -> (String, i64, u64) {
    let events: Vec<Value> = r
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let answer = events
        .iter()
        .map(|e| &e["item"])
        .find(|i| i["type"] == "agent_message")
        .and_then(|i| i["text"].as_str())
        .unwrap_or_else(|| panic!("no answer\n{}", r.dump()));
    assert!(answer.starts_with("HOST-DELEGATE-DONE"), "{}", r.dump());
    let (output, exit) = match events
        .iter()
        .map(|e| &e["item"])
        .find(|i| i["type"] == "command_execution" && i["status"] != "in_progress")
    {
        Some(cmd) => (
            cmd["aggregated_output"].as_str().unwrap_or("").to_string(),
            cmd["exit_code"].as_i64().unwrap_or(-1),
        ),
        None => last_tool_output(r).unwrap_or_else(|| panic!("codex ran no command\n{}", r.dump())),
    };
    let took = output
        .lines()
        .find_map(|l| l.strip_prefix("baton took "))
        .and_then(|s| s.strip_suffix(" ms"))
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no timing in the tool output\n{}", r.dump()));
    (output, exit, took)
}

/// What Codex handed back to its model for its last command, read from the
/// scripted answer (`HOST-DELEGATE-DONE tool_output=<…>`, the mock fills in
/// the tool result it received): its output and exit code. Codex 0.171 does
/// not always put a `command_execution` item in its `--json` stream for a
/// unified-exec command that ends at once with a non-zero code (seen in CI:
/// `baton wait` answering `lost` in 0.2 s, exit 1); the model still gets it.
fn last_tool_output(r: &Ran) -> Option<(String, i64)> {
    let text = r
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["item"]["type"] == "agent_message")
        .filter_map(|e| e["item"]["text"].as_str().map(str::to_string))
        .next_back()?;
    let inner = text
        .strip_prefix("HOST-DELEGATE-DONE tool_output=<")?
        .strip_suffix('>')?;
    let exit = inner
        .lines()
        .find_map(|l| l.strip_prefix("Process exited with code "))?
        .trim()
        .parse()
        .ok()?;
    let output = inner.split_once("Output:\n").map_or("", |(_, o)| o);
    Some((output.to_string(), exit))
}

fn codex_host(name: &str, peer: Agent, extra: &[&str]) -> (Peer, Peer, String, Ran) {
    let host = Peer::new(Agent::Codex, name);
    let pi = Peer::new(peer, &format!("{name}-peer"));
    let marker = match (peer, name.contains("async")) {
        (_, true) => "E2E-HOST-ASYNC",
        (Agent::Claude, _) => "E2E-HOST-CLAUDE-PEER",
        _ => "E2E-HOST-LOGIN-SHELL",
    };
    let (id, task) = host.prompt(marker);
    let extra: Vec<String> = extra
        .iter()
        .map(|a| a.replace("{peer_home}", &pi.home.display().to_string()))
        .collect();
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let mut args = vec![
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--sandbox",
        "workspace-write",
    ];
    args.extend(&extra);
    args.push("-");
    let r = run(
        &host,
        "codex-host",
        host_cmd(&host, &pi, "codex", &args),
        Some(&task),
    )
    .ok();
    (host, pi, id, r)
}

/// The records' project folder (`…/repos/<key>`) of a result's log.
fn project_folder(log: &str) -> PathBuf {
    Path::new(log).ancestors().nth(3).unwrap().to_path_buf()
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn codex_default_sandbox_gets_host_sandbox_at_once() {
    let (_host, _pi, id, r) = codex_host("host-sandbox-default", Agent::Pi, &[]);
    let (output, exit, took_ms) = codex_tool_call(&r);
    let j = baton_line(&output, &r);
    assert_eq!(j["status"], "error", "{}", r.dump());
    assert_eq!(j["error"]["kind"], "host_sandbox", "{}", r.dump());
    assert_eq!(exit, 1, "{}", r.dump());
    let message = j["error"]["message"].as_str().unwrap();
    for want in [
        "inside Codex's sandbox",
        "CODEX_SANDBOX_NETWORK_DISABLED=1",
        "socket() fails: Operation not permitted",
    ] {
        assert!(message.contains(want), "{want}: {message}");
    }
    let hint = j["error"]["hint"].as_str().unwrap();
    assert!(
        hint.contains("network_access = true") && hint.contains("require_escalated"),
        "{hint}"
    );
    // Within a second (measured around baton inside Codex's shell).
    eprintln!("baton answered inside Codex's sandbox in {took_ms} ms");
    assert!(
        took_ms < 1000,
        "baton took {took_ms} ms inside Codex's sandbox"
    );
    // The peer never started: the mock heard nothing from it.
    assert!(
        mock().requests_for(&format!("{id}-peer")).is_empty(),
        "the peer reached the mock"
    );
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn codex_sandbox_with_network_access_delegates_end_to_end() {
    // pi writes its sessions under its home, which the sandbox keeps
    // read-only (EROFS, measured): that folder is a writable root too.
    delegates(
        "host-sandbox-network",
        Agent::Pi,
        &[
            "-c",
            "sandbox_workspace_write.network_access=true",
            "-c",
            "sandbox_workspace_write.writable_roots=[\"{peer_home}/.pi/agent\"]",
        ],
    );
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn codex_sandbox_with_network_access_delegates_to_claude() {
    delegates(
        "host-sandbox-network-claude",
        Agent::Claude,
        &["-c", "sandbox_workspace_write.network_access=true"],
    );
}

fn delegates(name: &str, peer: Agent, extra: &[&str]) {
    let (_host, _pi, id, r) = codex_host(name, peer, extra);
    let (output, exit, _) = codex_tool_call(&r);
    let j = baton_line(&output, &r);
    let log = j["log_path"].as_str().map(str::to_string);
    // Whatever happens below, leave nothing in the temporary directory.
    let _cleanup = log.as_deref().map(|l| Cleanup(project_folder(l)));
    assert_eq!(
        (exit, &j["status"]),
        (0, &Value::from("success")),
        "{}",
        r.dump()
    );
    assert_eq!(j["agent"], peer.name());
    assert!(
        j["message"].as_str().unwrap_or("").contains("PLAIN-ANSWER"),
        "{}",
        r.dump()
    );
    assert!(
        !mock().requests_for(&format!("{id}-peer")).is_empty(),
        "the peer never reached the mock"
    );
    // The home is read-only in that sandbox, /tmp is not: the records are
    // in the fallback, and the result says so.
    // SAFETY: geteuid has no preconditions.
    let fallback = format!("/tmp/baton-{}", unsafe { libc::geteuid() });
    let warnings = j["warnings"].to_string();
    assert!(
        warnings.contains(&format!("records are kept in {fallback}"))
            && warnings.contains("Read-only file system"),
        "{warnings}"
    );
    let log = log.expect("records were kept");
    assert!(log.starts_with(&fallback), "{log}");
    assert!(Path::new(&log).with_file_name("result.json").is_file());
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn codex_sandbox_ends_a_job_with_the_command_that_started_it() {
    // `run --async` in one command, `wait` in the next: the second finds
    // the job in the same fallback store, but Codex's sandbox ended its
    // runner with the first command (measured, Codex 0.171): `lost`, as
    // the warning of the start said. A Codex that lets a job live on
    // fails here; then docs/host-sandbox.md, the warning
    // (`host_sandbox::job_note`) and the peer skill change with it.
    let (_host, _pi, id, r) = codex_host(
        "host-sandbox-async",
        Agent::Pi,
        &[
            "-c",
            "sandbox_workspace_write.network_access=true",
            "-c",
            "sandbox_workspace_write.writable_roots=[\"{peer_home}/.pi/agent\"]",
        ],
    );
    let calls: Vec<Value> = r
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "command_execution")
        .map(|e| e["item"].clone())
        .collect();
    // The second command (`wait`, exit 1 at once) may be missing from the
    // stream (see `last_tool_output`); its result reached the model anyway.
    let second = match calls.get(1) {
        Some(c) => c["aggregated_output"].as_str().unwrap().to_string(),
        None => last_tool_output(&r).map(|(o, _)| o).unwrap_or_default(),
    };
    assert!(!calls.is_empty() && !second.is_empty(), "{}", r.dump());
    let started = baton_line(calls[0]["aggregated_output"].as_str().unwrap(), &r);
    let waited = baton_line(&second, &r);
    let _cleanup = waited["log_path"]
        .as_str()
        .map(|l| Cleanup(project_folder(l)));
    assert_eq!(started["status"], "running", "{}", r.dump());
    let warnings = started["warnings"].to_string();
    assert!(warnings.contains("records are kept in"), "{warnings}");
    assert!(
        warnings.contains("ends every process a command started"),
        "{warnings}"
    );
    assert_eq!(waited["job_id"], started["job_id"], "{}", r.dump());
    assert_eq!(waited["status"], "lost", "{}", r.dump());
    let _ = id;
}

/// Removes a fallback project folder the test made under /tmp
/// (`E2E_KEEP=1` keeps it for a look).
struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        if std::env::var_os("E2E_KEEP").is_none()
            && self.0.starts_with("/tmp")
            && self.0.parent().is_some_and(|p| p.ends_with("repos"))
        {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// `claude -p` as host with `settings`; the tool result it got from baton.
fn claude_host(name: &str, settings: &str, extra: &[&str]) -> (String, String, Ran) {
    let host = Peer::new(Agent::Claude, name);
    let pi = Peer::new(Agent::Pi, &format!("{name}-peer"));
    let (id, task) = host.prompt("E2E-HOST-BATON-PATH");
    let mut args = vec![
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--settings",
        settings,
    ];
    args.extend(extra);
    let r = run(
        &host,
        "claude-host",
        host_cmd(&host, &pi, "claude", &args),
        Some(&task),
    )
    .ok();
    let result = r
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "user")
        .flat_map(|e| {
            e["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .find(|c| c["type"] == "tool_result")
        .unwrap_or_else(|| panic!("claude ran no tool\n{}", r.dump()));
    let text = match &result["content"] {
        Value::String(s) => s.clone(),
        v => crate::plugin::strings(v),
    };
    (id, text, r)
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn claude_code_with_its_sandbox_on_gets_host_sandbox() {
    let (id, output, r) = claude_host(
        "host-sandbox-on",
        r#"{"sandbox":{"enabled":true,"autoAllowBashIfSandboxed":true}}"#,
        // Headless, a command it does not auto-allow would be refused
        // before it runs; allowed, it still runs inside the sandbox.
        &["--allowedTools", "Bash"],
    );
    let j = baton_line(&output, &r);
    assert_eq!(j["error"]["kind"], "host_sandbox", "{}", r.dump());
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("inside Claude Code's sandbox (SANDBOX_RUNTIME=1"),
        "{}",
        r.dump()
    );
    let hint = j["error"]["hint"].as_str().unwrap();
    assert!(
        hint.contains("dangerouslyDisableSandbox") && hint.contains("excludedCommands"),
        "{hint}"
    );
    assert!(mock().requests_for(&format!("{id}-peer")).is_empty());
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn claude_code_runs_an_excluded_baton_outside_its_sandbox() {
    // What the hint tells the user to do: `baton:*` in excludedCommands.
    let (id, output, r) = claude_host(
        "host-sandbox-excluded",
        r#"{"sandbox":{"enabled":true,"autoAllowBashIfSandboxed":true,"excludedCommands":["baton:*"]}}"#,
        &["--allowedTools", "Bash(baton:*)"],
    );
    let j = baton_line(&output, &r);
    assert_eq!(j["status"], "success", "{}", r.dump());
    assert!(j["message"].as_str().unwrap_or("").contains("PLAIN-ANSWER"));
    assert!(!mock().requests_for(&format!("{id}-peer")).is_empty());
    // Outside the sandbox the home is writable: no fallback.
    assert!(!j["warnings"].to_string().contains("records are kept in"));
}
