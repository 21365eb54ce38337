//! Spending limits: `--max-usd` and `--budget-tokens` stop a run before a
//! call that would cross them and during a call that crosses them (the
//! peer's whole process group stopped, its partial usage kept), and a cost
//! the CLI did not report is estimated from the price table.

use std::fs;
use std::time::{Duration, Instant};

use serde_json::json;

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
    // A model of baton's alias table is priced (the generated table).
    let j = env.run(&["--model", "luna", "--max-usd", "1", "x"]).json();
    let expected = (600.0 * 0.2 + 400.0 * 0.02 + 50.0 * 1.2) / 1e6;
    let cost = j["usage"]["cost_usd"].as_f64().unwrap();
    assert!((cost - expected).abs() < 1e-12, "{cost} vs {expected}: {j}");
    assert_eq!(j["spending"]["unpriced_calls"], 0, "{j}");
}

/// `--max-usd` that could count nothing is refused before anything starts
/// (issue 29 §7): codex's own default model, and a model with no price.
#[test]
fn max_usd_on_a_model_without_a_price_refuses_to_start() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-usage.jsonl", 0);
    for args in [
        &["--max-usd", "0.50", "x"][..],
        &["--model", "gpt-7-nova", "--max-usd", "0.50", "x"],
        &["run", "--async", "--max-usd", "0.50", "x"],
        &[
            "run",
            "--fallback",
            "qwen",
            "--model",
            "sol",
            "--max-usd",
            "0.50",
            "x",
        ],
        &["ask", "--max-usd", "0.50", "q?"],
    ] {
        let r = env.run(args);
        let j = r.json();
        assert_eq!(r.code, 2, "{args:?}: {j}");
        assert_eq!(j["error"]["kind"], "unpriced_model", "{args:?}: {j}");
        let hint = j["error"]["hint"].as_str().unwrap();
        assert!(hint.contains("--budget-tokens"), "{hint}");
        assert!(
            !env.fake_dir.join("codex.argv").exists(),
            "{args:?}: codex started"
        );
    }
    let j = env.run(&["--max-usd", "0.50", "x"]).json();
    assert!(
        j["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("--model luna|terra|sol|astra"),
        "{j}"
    );
    // --budget-tokens needs no price.
    let r = env.run(&["--budget-tokens", "100000", "x"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
}

/// The user file prices a model the table lacks (or overrides one), and
/// then `--max-usd` counts it; `config show` and `baton agents` show it.
#[test]
fn a_price_from_the_user_file_lets_max_usd_count_a_model() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-usage.jsonl", 0);
    let cfg = env.tmp.path().join("user-config.toml");
    fs::write(
        &cfg,
        "[agents.codex]\nmodel = \"gpt-7-nova\"\n\n[prices.\"gpt-7-nova\"]\ninput = 10\ncached_input = 1\noutput = 100\n",
    )
    .unwrap();
    let with = |args: &[&str]| env.run(args);
    let j = with(&["--max-usd", "1", "x"]).json();
    assert_eq!(j["status"], "success", "{j}");
    let expected = (600.0 * 10.0 + 400.0 * 1.0 + 50.0 * 100.0) / 1e6;
    let cost = j["usage"]["cost_usd"].as_f64().unwrap();
    assert!((cost - expected).abs() < 1e-12, "{cost} vs {expected}: {j}");
    assert_eq!(j["usage"]["cost_estimated"], true);
    assert_eq!(j["spending"]["unpriced_calls"], 0, "{j}");
    // `config show` lists it with its line.
    let j = with(&["config", "show"]).json();
    let p = &j["prices"][0];
    assert_eq!(
        (&p["model"], &p["input"], &p["output"]),
        (&json!("gpt-7-nova"), &json!(10.0), &json!(100.0)),
        "{j}"
    );
    assert!(
        p["source"]
            .as_str()
            .unwrap()
            .ends_with("user-config.toml:4"),
        "{p}"
    );
    let t = with(&["config", "show", "--text"]).stdout;
    assert!(
        t.contains(
            "prices.\"gpt-7-nova\" = { input = 10, cached_input = 1, output = 100 }  # user "
        ),
        "{t}"
    );
    // `baton agents` lists it first, as the user's.
    let j = with(&["agents"]).json();
    assert_eq!(
        j["prices"]["models"][0]["provider"], "user",
        "{}",
        j["prices"]
    );
    assert_eq!(j["prices"]["models"][0]["model"], "gpt-7-nova");
}

/// `baton agents` says how each agent's cost is known and which of its
/// table's models have no price (none, for the built-in tables).
#[test]
fn agents_show_how_costs_are_known_and_what_is_unpriced() {
    let env = Env::new();
    let j = env.run(&["agents"]).json();
    let agent = |n: &str| {
        j["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == n)
            .unwrap()
            .clone()
    };
    assert_eq!(agent("codex")["cost"], "estimated");
    assert_eq!(agent("claude")["cost"], "reported");
    for a in j["agents"].as_array().unwrap() {
        assert_eq!(a["unpriced_models"], json!([]), "{a}");
    }
    assert!(
        j["prices"]["source"].as_str().unwrap().contains("LiteLLM"),
        "{j}"
    );
    let t = env.run(&["agents", "--text"]).stdout;
    assert!(t.contains("COST"), "{t}");
    assert!(t.contains("gpt-5.6-luna"), "{t}");
    assert!(
        t.contains("--max-usd needs a priced model for codex"),
        "{t}"
    );
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
