//! Spending limits: `--max-usd` and `--budget-tokens` stop a run before a
//! call that would cross them and during a call that crosses them (the
//! peer's whole process group stopped, its partial usage kept), and a cost
//! the CLI did not report is estimated from the price table.

use std::fs;
use std::time::{Duration, Instant};

use crate::support::{Env, pid_alive, record, wait_for};

/// One pi `message_end` of an assistant step: `tokens` input, `usd` cost.
pub fn pi_step(n: u32, tokens: u32, usd: f64) -> String {
    format!(
        r#"{{"type":"message_end","message":{{"role":"assistant","content":[{{"type":"text","text":"step {n}"}}],"model":"mock-model","usage":{{"input":{tokens},"output":0,"cacheRead":0,"cacheWrite":0,"cost":{{"total":{usd}}}}},"stopReason":"toolUse"}}}}"#
    )
}

/// A pi that streams `steps` assistant steps (each `tokens` input tokens,
/// `usd` dollars) and then works on for ever, with a grandchild `sleep` in
/// its group; the pids go to `$FAKE_DIR`.
pub fn streaming_pi(env: &Env, steps: u32, tokens: u32, usd: f64) {
    let mut lines = String::new();
    for n in 1..=steps {
        lines.push_str(&format!("echo '{}'\n", pi_step(n, tokens, usd)));
    }
    env.fake(
        "pi",
        &format!(
            "{}\nsleep 300 &\necho $! > \"$FAKE_DIR/grandchild.pid\"\necho $$ > \"$FAKE_DIR/leader.pid\"\n\
             echo '{{\"type\":\"session\",\"id\":\"s-budget\"}}'\n{lines}wait",
            record("pi")
        ),
    );
}

fn pid(env: &Env, name: &str) -> i32 {
    let p = env.fake_dir.join(format!("{name}.pid"));
    assert!(wait_for(Duration::from_secs(20), || fs::read_to_string(&p)
        .is_ok_and(|s| s.trim().parse::<i32>().is_ok())));
    fs::read_to_string(&p).unwrap().trim().parse().unwrap()
}

fn assert_group_gone(env: &Env) {
    for n in ["leader", "grandchild"] {
        let p = pid(env, n);
        let dead = wait_for(Duration::from_secs(2), || !pid_alive(p));
        if !dead {
            // SAFETY: a pid this test's fake started.
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
        assert!(dead, "{n} (pid {p}) outlived the budget stop");
    }
}

#[test]
fn a_call_that_streams_past_its_token_budget_is_stopped_with_its_group() {
    let env = Env::new();
    streaming_pi(&env, 3, 1000, 0.0);
    let started = Instant::now();
    let r = env.run(&[
        "--agent",
        "pi",
        "--budget-tokens",
        "2500",
        "--timeout",
        "20s",
        "x",
    ]);
    let j = r.json();
    assert_eq!(r.code, 1, "{j}");
    assert_eq!(j["status"], "failed");
    assert_eq!(j["error"]["kind"], "budget_exceeded", "{j}");
    let msg = j["error"]["message"].as_str().unwrap();
    assert!(msg.contains("--budget-tokens 2500: 3000 tokens"), "{msg}");
    // The partial usage is the result's.
    assert_eq!(j["usage"]["input_tokens"], 3000, "{j}");
    assert_eq!(j["session"], "s-budget");
    assert_eq!(j["spending"]["max_tokens"], 2500);
    assert_eq!(j["spending"]["spent_tokens"], 3000);
    assert_eq!(j["spending"]["exceeded"], true);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_group_gone(&env);
}

#[test]
fn a_call_that_streams_past_its_dollar_budget_is_stopped() {
    let env = Env::new();
    // pi reports its own cost: that is what counts, not an estimate.
    streaming_pi(&env, 3, 10, 0.004);
    let r = env.run(&[
        "--agent",
        "pi",
        "--max-usd",
        "0.01",
        "--timeout",
        "20s",
        "x",
    ]);
    let j = r.json();
    assert_eq!(j["error"]["kind"], "budget_exceeded", "{j}");
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--max-usd 0.01: $0.0120 spent"),
        "{j}"
    );
    assert!((j["usage"]["cost_usd"].as_f64().unwrap() - 0.012).abs() < 1e-9);
    assert!(j["usage"].get("cost_estimated").is_none(), "reported: {j}");
    assert_eq!(j["spending"]["cost_estimated"], false);
    assert_group_gone(&env);
}

#[test]
fn a_run_within_its_budget_is_untouched_and_says_what_it_spent() {
    let env = Env::new();
    env.replay("pi", "pi/pi-json-basic.jsonl", 0);
    let r = env.run(&["--agent", "pi", "--budget-tokens", "100000", "x"]);
    let j = r.json();
    assert_eq!(j["status"], "success", "{j}");
    assert_eq!(j["spending"]["spent_tokens"], 132);
    assert_eq!(j["spending"]["exceeded"], false);
    assert_eq!(j["spending"]["calls"], 1);
    // Without a limit there is no budget object.
    let j = env.run(&["--agent", "pi", "x"]).json();
    assert!(j.get("spending").is_none(), "{j}");
}

#[test]
fn a_cost_the_cli_does_not_report_is_estimated_from_the_table() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-usage.jsonl", 0);
    // 1000 input (400 cached) and 50 output at gpt-5.4's price.
    let j = env.run(&["--model", "gpt-5.4", "x"]).json();
    let expected = (600.0 * 2.50 + 400.0 * 0.25 + 50.0 * 15.00) / 1e6;
    let cost = j["usage"]["cost_usd"].as_f64().unwrap();
    assert!((cost - expected).abs() < 1e-12, "{cost} vs {expected}: {j}");
    assert_eq!(j["usage"]["cost_estimated"], true);
    // A model without a price: tokens only, and a budget in dollars says so.
    let j = env
        .run(&["--model", "gpt-5.6-luna", "--max-usd", "1", "x"])
        .json();
    assert!(j["usage"]["cost_usd"].is_null(), "{j}");
    assert_eq!(j["spending"]["unpriced_calls"], 1, "{j}");
    assert!(j["spending"]["spent_usd"].is_null());
    let w = j["warnings"].to_string();
    assert!(w.contains("counted tokens only"), "{w}");
}

#[test]
fn limits_that_allow_nothing_are_usage_errors() {
    let env = Env::new();
    for args in [
        ["--max-usd", "0"],
        ["--max-usd", "-1"],
        ["--max-usd", "NaN"],
        ["--budget-tokens", "0"],
    ] {
        let r = env.run(&[args[0], args[1], "x"]);
        assert_eq!(r.code, 2, "{args:?}: {}{}", r.stdout, r.stderr);
    }
}

/// A background job keeps its budget: its runner stops the peer that
/// streams past it, and the job ends `budget_exceeded`.
#[test]
fn a_job_is_held_to_its_budget_by_its_runner() {
    let env = Env::new();
    streaming_pi(&env, 3, 1000, 0.0);
    let r = env.run(&[
        "run",
        "--async",
        "--agent",
        "pi",
        "--budget-tokens",
        "2500",
        "--timeout",
        "30s",
        "x",
    ]);
    let id = r.json()["job_id"].as_str().unwrap().to_string();
    let j = env.run(&["wait", &id, "--timeout", "60s"]).json();
    assert_eq!(j["status"], "failed", "{j}");
    assert_eq!(j["error"]["kind"], "budget_exceeded");
    assert_eq!(j["usage"]["input_tokens"], 3000);
    assert_eq!(j["spending"]["exceeded"], true);
    assert_group_gone(&env);
}
