//! `baton doctor --probe`: send each ready agent a tiny prompt through
//! `baton run --read-only` (this same binary) and report the round trip.
//! It costs tokens, so it only runs when asked.

use std::process::Stdio;
use std::time::{Duration, Instant};

use super::{Check, Severity};
use crate::agent::{Access, Agent};

pub const PROMPT: &str = "Reply with the single word: pong";
const TIMEOUT: &str = "120s";

pub fn probe(agent: Agent) -> Check {
    let id = format!("agent.{}.probe", agent.name());
    if !agent.supported_access().contains(&Access::ReadOnly) {
        return Check::ok(
            id,
            format!("not probed: {} has no read-only mode", agent.name()),
        );
    }
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            return Check::problem(
                id,
                Severity::Error,
                format!("cannot find baton's own binary: {e}"),
                "run `baton run --read-only` by hand",
            );
        }
    };
    let start = Instant::now();
    // A child baton in baton's own group, as a user's command would be:
    // Ctrl-C reaches it, and it stops its own peer.
    let out = crate::process::Command::new(&exe)
        .args([
            "run",
            "--read-only",
            "--raw",
            "--timeout",
            TIMEOUT,
            "--agent",
        ])
        .arg(agent.name())
        .arg("--")
        .arg(PROMPT)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .group(crate::process::Group::Inherit)
        .parent_death(None)
        .output();
    let took = start.elapsed();
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            return Check::problem(
                id,
                Severity::Error,
                format!("could not start {}: {e}", exe.display()),
                "run `baton run --read-only` by hand",
            );
        }
    };
    let j: serde_json::Value = String::from_utf8_lossy(&out.stdout)
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_default();
    let secs = |d: Duration| format!("{:.1} s", d.as_secs_f64());
    if out.status.success() && j["status"] == "success" {
        let model = j["model"].as_str().unwrap_or("the CLI's default model");
        Check::ok(id, format!("round trip in {} ({model})", secs(took)))
    } else {
        let why = j["error"]["message"]
            .as_str()
            .or(j["summary"].as_str())
            .unwrap_or("no result")
            .to_string();
        let hint = j["error"]["hint"]
            .as_str()
            .unwrap_or("run the same task with `baton run --read-only --text` to see more")
            .to_string();
        Check::problem(
            id,
            Severity::Error,
            format!(
                "the probe failed after {} (exit {}): {why}",
                secs(took),
                out.status
                    .code()
                    .map_or("by signal".into(), |c| c.to_string())
            ),
            &hint,
        )
    }
}
