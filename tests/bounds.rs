//! Issue 29 §4, bounds everywhere: limits a caller or a peer could push
//! past what baton can hold (`--until-green`, usage counts and costs, a
//! claude run over its token budget).

use serde_json::{Value, json};

use crate::fanout::setup;
use crate::mcp::Client;
use crate::worktree::{baton, baton_cmd};

/// `--until-green` is capped at 10 as `--retry` is, before anything exists;
/// 0.3.2 took 4294967295 (122 repair rounds in 20 s of a fake).
#[test]
fn until_green_above_ten_is_refused_before_anything_runs() {
    let (env, fake) = setup();
    for r in ["11", "4294967295"] {
        let out = baton(
            &env,
            &[
                "run",
                "--agents",
                "codex,claude",
                "--test-cmd",
                "true",
                "--until-green",
                r,
                "x",
            ],
        );
        assert_eq!(out.code, 2, "{r}: {}", out.stdout);
        let j = out.json();
        assert_eq!(j["error"]["kind"], "usage", "{j}");
        assert_eq!(
            j["error"]["message"],
            format!("--until-green {r} is more than 10"),
            "{j}"
        );
        assert!(j["error"]["hint"].as_str().is_some_and(|h| !h.is_empty()));
    }
    // Ten is within the cap.
    let out = baton(
        &env,
        &[
            "run",
            "--agents",
            "codex,claude",
            "--test-cmd",
            "true",
            "--until-green",
            "10",
            "--dry-run",
            "x",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(out.json()["until_green"], 10, "{}", out.stdout);
    assert!(fake.calls().is_empty());
    assert!(!env.work.join(".baton").exists());
}

/// The same cap through `baton mcp`'s `run` and `job_start` tools.
#[test]
fn until_green_above_ten_is_refused_through_mcp() {
    let (env, fake) = setup();
    let mut c = Client::spawn(baton_cmd(&env, &["mcp"]));
    c.initialize();
    for tool in ["run", "job_start"] {
        let r = c.call(
            tool,
            json!({
                "task": "write the answer",
                "agents": ["codex", "claude"],
                "test_cmd": "true",
                "until_green": 4294967295u64,
            }),
        );
        assert_eq!(r["isError"], true, "{tool}: {r}");
        let e: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(e["error"]["kind"], "usage", "{tool}: {e}");
        assert_eq!(
            e["error"]["message"], "--until-green 4294967295 is more than 10",
            "{tool}: {e}"
        );
    }
    assert!(c.close().success());
    assert!(fake.calls().is_empty());
    assert!(!env.work.join(".baton").exists());
}
