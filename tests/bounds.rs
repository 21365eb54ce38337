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

/// A candidate's diff of 600 KB: its judge is shown its head and its tail
/// (within `MAX_DIFF_BYTES`, 120,000 bytes) with a note between them, and
/// the fan-out says so in its warnings. 0.3.2 read the whole diff into
/// memory (107 MB → 315 MB RSS; `bench/bounds.sh` measures that one) and
/// showed only its head.
#[test]
fn a_huge_diff_reaches_the_judges_as_head_and_tail_with_a_warning() {
    use crate::fanout::{fan_out, write_answer};
    use crate::support::council::{Scenario, Stage, Step};
    let (env, fake) = setup();
    let big: String = (0..20_000)
        .map(|i| format!("good line {i:06} of codex's long answer\n"))
        .collect();
    let review = json!({"candidates": [
        {"label": "A", "verdict": "accept", "summary": "fine", "findings": []},
        {"label": "B", "verdict": "accept", "summary": "fine", "findings": []}],
        "ranking": ["A", "B"]});
    fake.write(
        &Scenario::new()
            .on("codex", Stage::Implement, write_answer(&big))
            .on("claude", Stage::Implement, write_answer("good and short\n"))
            .on(
                "pi",
                Stage::Implement,
                write_answer("good, from the third\n"),
            )
            .all(
                &["codex", "claude", "pi"],
                Stage::FanoutReview,
                Step::json(review),
            ),
    );
    let (r, j) = fan_out(&env, &["--agents", "codex,claude", "--judge", "pi"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let shown = fake.stage(Stage::FanoutReview);
    assert_eq!(shown.len(), 1, "one judge");
    let p = &shown[0].stdin;
    assert!(p.contains("+good line 000000 of "), "the head");
    assert!(p.contains("+good line 019999 of "), "the tail");
    assert!(
        !p.contains("+good line 010000 of "),
        "the middle is left out"
    );
    assert!(p.contains("bytes of this diff ("), "the note");
    // The diff is 740 KB; the prompt holds at most 120,000 bytes of it.
    assert!(p.len() < 200_000, "the judge's prompt is {} bytes", p.len());
    assert!(p.contains("+good and short"), "the other candidate whole");
    let w = j["warnings"].to_string();
    let c1 = crate::fanout::candidate(&j, "c1");
    assert_eq!(c1["agent"], "codex", "{c1}");
    assert!(
        w.contains("c1: its diff is ") && w.contains("more than a judge is shown"),
        "{w}"
    );
    assert!(!w.contains("c2: its diff"), "{w}");
}
