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

/// The same cap through `baton mcp`'s `run` tool, in the foreground and
/// with `async`.
#[test]
fn until_green_above_ten_is_refused_through_mcp() {
    let (env, fake) = setup();
    let mut c = Client::spawn(baton_cmd(&env, &["mcp", "--allow-test-cmd"]));
    c.initialize();
    for detach in [false, true] {
        let tool = if detach { "run (async)" } else { "run" };
        let r = c.call(
            "run",
            json!({
                "task": "write the answer",
                "agents": ["codex", "claude"],
                "test_cmd": "true",
                "until_green": 4294967295u64,
                "async": detach,
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

/// `tests/fixtures/claude/<name>`, its `result` event changed by `edit`,
/// as the transcript a fake `claude` prints (after reading its stdin).
fn claude_printing(env: &crate::support::Env, name: &str, edit: impl Fn(&mut Value)) {
    let text = std::fs::read_to_string(crate::support::fixture(&format!("claude/{name}"))).unwrap();
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if v["type"] == "result" {
                edit(&mut v);
            }
            v.to_string()
        })
        .collect();
    let path = env.fake_dir.join(format!("claude-{name}"));
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    env.fake(
        "claude",
        &format!(
            "{}\ncat '{}'",
            crate::support::record("claude"),
            path.display()
        ),
    );
}

/// claude streams `usage` on each assistant message: a call that crosses
/// `--budget-tokens` mid-call is stopped there, as pi's is, with its whole
/// group. 0.3.2 looked at claude's usage only between calls: the call ran
/// on (here until its timeout).
#[test]
fn a_claude_call_streaming_past_its_token_budget_is_stopped() {
    use std::time::{Duration, Instant};
    let env = crate::support::Env::new();
    let fixture = crate::support::fixture("claude/claude-toolcall-stream.jsonl");
    // init, then the first message's two blocks (2567 input tokens each,
    // one message), then it works on for ever.
    env.fake(
        "claude",
        &format!(
            "{}\nhead -n 3 '{}'\nsleep 300 &\necho $! > \"$FAKE_DIR/grandchild.pid\"\nwait",
            crate::support::record("claude"),
            fixture.display()
        ),
    );
    let started = Instant::now();
    let r = env.run(&[
        "--agent",
        "claude",
        "--budget-tokens",
        "2000",
        "--timeout",
        "15s",
        "x",
    ]);
    let j = r.json();
    assert_eq!((r.code, j["status"].as_str()), (1, Some("failed")), "{j}");
    assert_eq!(j["error"]["kind"], "budget_exceeded", "{j}");
    let msg = j["error"]["message"].as_str().unwrap();
    // The message counts once for its two blocks (2567 in, 1 out), not
    // twice (5136).
    assert!(
        msg.contains("--budget-tokens 2000: 2568 tokens spent"),
        "{msg}"
    );
    assert_eq!(j["usage"]["input_tokens"], 2567, "{j}");
    assert_eq!(j["spending"]["exceeded"], true, "{j}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "stopped mid-call"
    );
    let gc: i32 = std::fs::read_to_string(env.fake_dir.join("grandchild.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        crate::support::wait_for(Duration::from_secs(2), || !crate::support::pid_alive(gc)),
        "the peer's group outlived the stop"
    );
}

/// A call whose usage crossed the limit only in its last event (too late
/// to stop): `spending.exceeded` and a warning say so. 0.3.2 reported a
/// run 26 times over `--budget-tokens` as `exceeded: false`, silently.
#[test]
fn a_claude_run_over_its_budget_after_the_fact_says_so() {
    let env = crate::support::Env::new();
    claude_printing(&env, "claude-stream.jsonl", |_| {});
    let r = env.run(&["--agent", "claude", "--budget-tokens", "100", "x"]);
    let j = r.json();
    assert_eq!(j["spending"]["exceeded"], true, "{j}");
    assert_eq!(j["spending"]["spent_tokens"], 2576, "{j}");
    if j["status"] == "success" {
        let w = j["warnings"].to_string();
        assert!(
            w.contains("budget_exceeded: --budget-tokens 100: 2576 tokens spent")
                && w.contains("too late to stop it"),
            "{w}"
        );
    } else {
        // The watch looked while the stream was still being read.
        assert_eq!(j["error"]["kind"], "budget_exceeded", "{j}");
    }
}

/// A negative cost is no price: the call counts as one without a known
/// cost, with a warning, and gives no budget back. Huge counts saturate
/// (0.3.2: `u64::MAX` + 2 wrapped to 1 in a release build) and dollar
/// totals stay finite (two costs of 1e308 printed `null`).
#[test]
fn negative_costs_are_refused_and_huge_usage_saturates() {
    let env = crate::support::Env::new();
    claude_printing(&env, "claude-stream.jsonl", |v| {
        v["total_cost_usd"] = json!(-5.0)
    });
    // A model the price table knows: the refused cost is replaced by the
    // table's estimate, and the warning says so.
    let j = env
        .run(&["--agent", "claude", "--max-usd", "1", "x"])
        .json();
    assert_eq!(j["status"], "success", "{j}");
    assert!(
        j["usage"]["cost_usd"].as_f64().is_some_and(|c| c > 0.0),
        "{j}"
    );
    assert_eq!(j["usage"]["cost_estimated"], true, "{j}");
    assert!(
        j["warnings"].to_string().contains(
            "claude reported a cost of -5 USD, which is no price: estimated from the price table instead"
        ),
        "{j}"
    );

    // A model it does not know: the call counts as unpriced.
    let env = crate::support::Env::new();
    claude_printing(&env, "claude-stream.jsonl", |v| {
        v["total_cost_usd"] = json!(-5.0);
    });
    let path = env.fake_dir.join("claude-claude-stream.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("claude-opus-5-5", "claude-nobody-knows"),
    )
    .unwrap();
    let j = env
        .run(&["--agent", "claude", "--max-usd", "1", "x"])
        .json();
    assert_eq!(j["status"], "success", "{j}");
    assert_eq!(j["usage"]["cost_usd"], Value::Null, "{j}");
    assert_eq!(j["spending"]["spent_usd"], Value::Null, "{j}");
    assert_eq!(j["spending"]["unpriced_calls"], 1, "{j}");
    assert!(
        j["warnings"]
            .to_string()
            .contains("claude reported a cost of -5 USD, which is no price"),
        "{j}"
    );

    let env = crate::support::Env::new();
    claude_printing(&env, "claude-stream.jsonl", |v| {
        v["usage"]["input_tokens"] = json!(u64::MAX);
        v["usage"]["cache_read_input_tokens"] = json!(2);
        v["total_cost_usd"] = json!(1e308);
    });
    let j = env
        .run(&["--agent", "claude", "--budget-tokens", "1000", "x"])
        .json();
    assert_eq!(j["usage"]["input_tokens"], u64::MAX, "{j}");
    assert_eq!(j["spending"]["spent_tokens"], u64::MAX, "{j}");
    assert_eq!(j["spending"]["exceeded"], true, "{j}");
    let again = env.run(&["--agent", "claude", "x"]).json();
    assert_eq!(again["status"], "success", "{again}");
    let u = env.run(&["usage", "--json"]).json();
    assert_eq!(u["total"]["calls"], 2, "{u}");
    assert_eq!(u["total"]["input_tokens"], u64::MAX, "{u}");
    assert_eq!(u["total"]["cost_usd"].as_f64(), Some(f64::MAX), "{u}");
}

/// pi's own cost, negative: refused with a warning, as claude's (pi's 0,
/// its "no price", stays a silent unknown). 0.3.2 dropped it silently.
#[test]
fn a_negative_cost_from_pi_is_refused_with_a_warning() {
    let env = crate::support::Env::new();
    let text = std::fs::read_to_string(crate::support::fixture("pi/pi-json-basic.jsonl")).unwrap();
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if v["type"] == "message_end" && v["message"]["role"] == "assistant" {
                v["message"]["usage"]["cost"]["total"] = json!(-0.5);
            }
            v.to_string()
        })
        .collect();
    let path = env.fake_dir.join("pi.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    env.fake(
        "pi",
        &format!("{}\ncat '{}'", crate::support::record("pi"), path.display()),
    );
    let j = env.run(&["--agent", "pi", "--max-usd", "1", "x"]).json();
    assert_eq!(j["status"], "success", "{j}");
    assert_eq!(j["usage"]["cost_usd"], Value::Null, "{j}");
    assert_eq!(j["spending"]["unpriced_calls"], 1, "{j}");
    assert!(
        j["warnings"]
            .to_string()
            .contains("pi reported a cost of -0.5 USD, which is no price"),
        "{j}"
    );
}
