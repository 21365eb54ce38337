//! `baton doctor` for an agent the user brought: start its command, send
//! ACP `initialize` (what a run sends first), and report what it answered —
//! protocol version, capabilities, auth methods — and which access modes
//! baton can enforce for it. Nothing else is sent (no session, no prompt:
//! no tokens are spent). A broken agent is a finding, never fatal.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};

use super::agent::{AgentReport, access_lines};
use super::{Check, Severity};
use crate::agent::{Agent, acp, byo};
use crate::process;

/// How long `initialize` may take in `doctor` (shorter than a run's: doctor
/// is a quick look; node agents answer in 5-25 s on a loaded machine).
pub const INIT_TIMEOUT: Duration = process::timeouts::DOCTOR_ACP_INIT.default;

/// What the agent answered to `initialize`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Handshake {
    pub protocol_version: Value,
    /// `agentCapabilities` as the agent sent them.
    pub capabilities: Value,
    /// `authMethods`: id and name of each.
    pub auth_methods: Vec<Value>,
    /// `agentInfo` (name, version), if it sent one.
    pub agent_info: Option<Value>,
    /// The access modes baton can enforce for this agent.
    pub enforceable_access: Vec<&'static str>,
}

fn timeout() -> Duration {
    // The run's override (tests) shortens doctor's wait too.
    process::timeouts::DOCTOR_ACP_INIT.shortened()
}

/// The report of a brought agent: its command, and its `initialize` answer.
pub fn inspect(agent: Agent, target: bool) -> AgentReport {
    let Agent::Byo(id) = agent else {
        unreachable!("doctor::acp inspects brought agents only");
    };
    let b = byo::get(id);
    let check_id = |what: &str| format!("agent.{}.{what}", b.name);
    let mut r = AgentReport {
        name: agent.name(),
        binary: agent.binary(),
        command: Some(b.command.clone()),
        path: None,
        version: None,
        version_source: None,
        tested: None,
        ready: false,
        reports_model: false,
        access: access_lines(agent),
        acp: None,
        checks: Vec::new(),
    };
    let sev = if target {
        Severity::Error
    } else {
        Severity::Warning
    };
    let fix = format!(
        "fix agents.{}.command at {} (your user file)",
        b.name, b.defined_at
    );
    let Some(path) = process::find_program(&b.command[0]).filter(|p| p.is_file()) else {
        r.checks.push(Check::problem(
            check_id("cli"),
            sev,
            format!(
                "`{}` from agents.{}.command is not installed",
                b.command[0], b.name
            ),
            &fix,
        ));
        return r;
    };
    r.checks.push(Check::ok(
        check_id("cli"),
        format!(
            "{} (agents.{}.command, {})",
            b.command.join(" "),
            b.name,
            b.defined_at
        ),
    ));
    r.path = Some(path.clone());
    match initialize(&path, &b.command[1..], timeout()) {
        Ok(answer) => {
            let h = handshake(&answer, b);
            r.version = h
                .agent_info
                .as_ref()
                .and_then(|i| i.get("version"))
                .and_then(Value::as_str)
                .map(str::to_string);
            r.version_source = r.version.as_ref().map(|_| "initialize");
            let v1 = h.protocol_version == json!(1);
            let auth: Vec<&str> = h
                .auth_methods
                .iter()
                .filter_map(|m| m.get("id").and_then(Value::as_str))
                .collect();
            let message = format!(
                "answered `initialize`: protocol {}, loadSession {}, auth methods: {}; baton can \
                 enforce {} (what the agent does without asking cannot be policed)",
                h.protocol_version,
                h.capabilities
                    .get("loadSession")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                if auth.is_empty() {
                    "none".to_string()
                } else {
                    auth.join(", ")
                },
                h.enforceable_access.join(", ")
            );
            r.checks.push(if v1 {
                Check::ok(check_id("acp"), message)
            } else {
                Check::problem(
                    check_id("acp"),
                    sev,
                    format!("speaks ACP protocol {}; baton speaks 1", h.protocol_version),
                    "use a version of the agent that speaks ACP protocol 1",
                )
            });
            r.acp = Some(h);
        }
        Err(why) => r.checks.push(Check::problem(
            check_id("acp"),
            sev,
            format!("`initialize` failed: {why}"),
            &format!(
                "check that `{}` starts an ACP agent on stdio; {fix}",
                b.command.join(" ")
            ),
        )),
    }
    r.ready = !r
        .checks
        .iter()
        .any(|c| c.severity == Severity::Error && !c.ok)
        && r.acp.is_some();
    r
}

fn handshake(answer: &Value, b: &byo::Byo) -> Handshake {
    Handshake {
        protocol_version: answer
            .get("protocolVersion")
            .cloned()
            .unwrap_or(Value::Null),
        capabilities: answer
            .get("agentCapabilities")
            .cloned()
            .unwrap_or_else(|| json!({})),
        auth_methods: answer
            .get("authMethods")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|m| json!({"id": m.get("id"), "name": m.get("name")}))
                    .collect()
            })
            .unwrap_or_default(),
        agent_info: answer.get("agentInfo").cloned(),
        enforceable_access: b.access().iter().map(|a| a.as_str()).collect(),
    }
}

/// Start `program args` in its own process group, send `initialize`, and
/// return the `result` of its answer. The group is stopped in every case.
fn initialize(
    program: &std::path::Path,
    args: &[String],
    limit: Duration,
) -> Result<Value, String> {
    let mut child = process::Command::new(program)
        .args(args)
        .env("BATON_DEPTH", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("could not start it: {e}"))?;
    let pid = child.id() as libc::pid_t;
    let msg = json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": acp::initialize_params(),
    });
    let mut stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        // The answer is the response with our id; notifications and lines
        // that are not JSON-RPC are skipped.
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let Ok(v) = serde_json::from_str::<Value>(line.trim()) else {
                continue;
            };
            if v.get("id") == Some(&json!(0))
                && (v.get("result").is_some() || v.get("error").is_some())
            {
                let _ = tx.send(Some(v));
                return;
            }
        }
        let _ = tx.send(None);
    });
    let wrote = writeln!(stdin, "{msg}").and_then(|()| stdin.flush());
    let answer = match wrote {
        Err(e) => Err(format!("it closed its input: {e}")),
        Ok(()) => match rx.recv_timeout(limit) {
            Ok(Some(v)) => match (v.get("result"), v.get("error")) {
                (_, Some(e)) => Err(format!("it answered with an error: {e}")),
                (Some(r), _) => Ok(r.clone()),
                _ => Err("its answer has no result".into()),
            },
            Ok(None) => Err("it exited without answering".into()),
            Err(_) => Err(format!("no answer within {} s", limit.as_secs_f32())),
        },
    };
    drop(stdin);
    process::killpg(pid, libc::SIGKILL);
    let _ = child.wait();
    answer
}
