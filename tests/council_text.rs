//! The council for people (issue 29 §7): `approve` says the plan is
//! approved and that nothing runs until `execute` (stage `approved`, not
//! `implementing`), and the `--text` outputs show what the JSON has: the
//! synthesis and its disagreements, the next command, the branch, the test,
//! each reviewer's verdict and the merge hint.

use serde_json::json;

use crate::council::{AGENTS, council, good_scenario, review, setup};
use crate::support::council::Stage;

const TEST: &str = "grep -q locked a.txt";

/// Every member deliberates, writes `locked` into a.txt and approves.
fn scenario() -> serde_json::Value {
    let mut j = good_scenario().to_json();
    for a in AGENTS {
        j["agents"][a]["implement"] =
            json!([{"edits": [{"path": "a.txt", "content": "one\ntwo\nlocked\n"}]}]);
        j["agents"][a]["review"] = json!([{"json": review("approve", json!([]))}]);
    }
    j
}

#[test]
fn approve_says_approved_and_nothing_runs_until_execute() {
    let (env, fake) = setup();
    fake.write_json(&scenario());
    let plan = [
        "plan",
        "--members",
        "codex,claude,pi",
        "--seed",
        "3",
        "--writer",
        "claude",
        "--test-cmd",
        TEST,
        "lock the cache insert",
    ];
    let r = council(&env, &plan);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let id = v["council_id"].as_str().unwrap().to_string();
    let sha = v["plan"]["sha256"].as_str().unwrap().to_string();

    // Waiting for approval: the plan, its disputes, and the next command.
    let t = council(&env, &["result", &id, "--text"]).stdout;
    for want in [
        "synthesis (chair): lock the cache insert".to_string(),
        format!("plan (sha256 {sha}):"),
        "  1. add the lock".into(),
        "files:   a.txt".into(),
        format!("test:    {TEST}"),
        "disagreement: lock kind: ruled mutex (would settle it: a benchmark)".into(),
        format!("`baton council approve {id} --plan-sha256 {sha}`"),
    ] {
        assert!(t.contains(&want), "{want:?} not in:\n{t}");
    }

    // Approved, not started: said so, and nothing runs.
    let r = council(&env, &["approve", &id, "--plan-sha256", &sha]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["stage"], "approved", "{v}");
    let summary = v["summary"].as_str().unwrap();
    assert!(
        summary.contains("approved") && summary.contains(&format!("baton council execute {id}")),
        "{summary}"
    );
    assert!(!summary.contains("implementing"), "{summary}");
    let s = council(&env, &["status", &id]).json();
    assert_eq!(
        (s["stage"].as_str(), s["running"].as_bool()),
        (Some("approved"), Some(false))
    );
    assert!(
        fake.stage(Stage::Implement).is_empty(),
        "approve started the writer"
    );
    let t = council(&env, &["result", &id, "--text"]).stdout;
    assert!(
        t.contains(&format!("next:    `baton council execute {id}`")),
        "{t}"
    );
    // `execute` carries it out, and its text shows what came of it.
    let r = council(&env, &["execute", &id, "--text"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let t = r.stdout;
    let v = council(&env, &["result", &id]).json();
    assert_eq!(v["stage"], "ready", "{v}");
    let commit = &v["worktree"]["commit"].as_str().unwrap()[..12];
    for want in [
        format!("council {id} is ready"),
        format!("branch:  baton/council-{id} (commit {commit}), 1 file(s) changed"),
        "writer:  claude".into(),
        format!("test:    passed: {TEST}"),
        "approve: read it".into(),
        "merge:   nothing was merged: review with `git diff ".into(),
        format!("`git merge {}`", v["worktree"]["commit"].as_str().unwrap()),
    ] {
        assert!(t.contains(&want), "{want:?} not in:\n{t}");
    }
    assert_eq!(t.matches("\nreview:  ").count(), 2, "{t}");
    assert!(!fake.stage(Stage::Implement).is_empty());
}

#[test]
fn plan_yes_and_discuss_text_show_what_the_json_has() {
    let (env, fake) = setup();
    fake.write_json(&scenario());
    let r = council(
        &env,
        &[
            "plan",
            "--yes",
            "--members",
            "codex,claude,pi",
            "--seed",
            "3",
            "--writer",
            "claude",
            "--test-cmd",
            TEST,
            "--text",
            "lock the cache insert",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    for want in [
        "synthesis (chair): ",
        "disagreement: lock kind",
        "branch:  baton/council-",
        "test:    passed: ",
        "review:  ",
        "merge:   nothing was merged",
        "`git merge ",
    ] {
        assert!(r.stdout.contains(want), "{want:?} not in:\n{}", r.stdout);
    }
    let r = council(
        &env,
        &[
            "discuss",
            "--members",
            "codex,claude,pi",
            "--text",
            "how should it be guarded?",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    for want in [
        "answered: lock the cache insert",
        "synthesis (chair): lock the cache insert",
        "disagreement: lock kind: ruled mutex",
    ] {
        assert!(r.stdout.contains(want), "{want:?} not in:\n{}", r.stdout);
    }
    assert!(!r.stdout.contains("plan (sha256"), "{}", r.stdout);
}
