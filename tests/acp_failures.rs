//! Every provider fault recorded over ACP (tests/fixtures/failures/acp: the
//! real copilot, kilo, cline and nanocoder against the e2e mock's faults)
//! replayed by the fake ACP agent (`support/fake_acp.py`) through the built
//! baton: the run fails with the `error.kind` (and `retry_after_s`) that
//! `expected.json` names, with the agent's words in `error.message` and a
//! hint; where the agent recovers on its own, the run succeeds.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::Env;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/failures/acp")
}

fn expected() -> Value {
    serde_json::from_slice(&fs::read(root().join("expected.json")).unwrap()).unwrap()
}

/// Replays every recording of `agent`; returns how many were checked.
fn replay_all(agent: &str) -> usize {
    let want = expected()[agent].clone();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (fault, w) in want.as_object().unwrap() {
        let rec = root().join(agent).join(format!("{fault}.acp"));
        if w["timeout_s"].is_u64() {
            // The agent never gave up: no recording, only the e2e cell.
            assert!(!rec.exists(), "{}", rec.display());
            continue;
        }
        assert!(rec.exists(), "no recording {}", rec.display());
        let env = Env::new();
        env.git_init();
        let fake = crate::support::acp::fake_acp(&env.fake_dir);
        env.fake(agent, &format!("exec {fake} '{}'", rec.display()));
        let r = env.run(&[
            "run",
            "--agent",
            agent,
            "--access",
            "workspace",
            "--timeout",
            "60s",
            "--",
            "the task",
        ]);
        let j = r.json();
        let status = w["status"].as_str().unwrap_or("failed");
        let e = &j["error"];
        let mut problems = Vec::new();
        if j["status"] != status {
            problems.push(format!("status {} (want {status})", j["status"]));
        }
        if status == "failed" {
            if r.code != 1 {
                problems.push(format!("exit {}", r.code));
            }
            if e["kind"] != w["kind"] {
                problems.push(format!("kind {} (want {})", e["kind"], w["kind"]));
            }
            if e["retry_after_s"].as_u64() != w["retry_after_s"].as_u64() {
                problems.push(format!(
                    "retry_after_s {} (want {})",
                    e["retry_after_s"], w["retry_after_s"]
                ));
            }
            if e["hint"].as_str().is_none_or(str::is_empty)
                || e["message"].as_str().is_none_or(str::is_empty)
            {
                problems.push("no hint or message".into());
            }
        } else if !e.is_null() {
            problems.push(format!("an error on a {status} run: {e}"));
        }
        if !problems.is_empty() {
            wrong.push(format!("{agent}/{fault}: {}\n{j}", problems.join("; ")));
        }
        checked += 1;
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
    checked
}

#[test]
fn copilot_faults_are_named() {
    assert_eq!(replay_all("copilot"), 9);
}

#[test]
fn kilo_faults_are_named() {
    assert_eq!(replay_all("kilo"), 7);
}

#[test]
fn cline_faults_are_named() {
    assert_eq!(replay_all("cline"), 9);
}

#[test]
fn nanocoder_faults_are_named() {
    assert_eq!(replay_all("nanocoder"), 9);
}
