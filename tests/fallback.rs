//! `--fallback` and `--retry`: a run whose agent cannot answer goes to the
//! next agent (never after it changed a file in place), a passing failure is
//! tried again after the wait the provider asked for, and the result lists
//! every attempt. The failing fakes print what the real CLIs print for each
//! fault (the shapes recorded in tests/fixtures/failures/), so the kinds
//! come from the adapters' own classifiers.

use std::fs;

use serde_json::Value;

use crate::support::{Env, fixture, record};

/// codex 0.171.0 after its own retries, on a 429 (tests/fixtures/failures/codex/rate_limit*).
pub const CODEX_RATE_LIMITED: &str = r#"{"type":"thread.started","thread_id":"t-limited"}
{"type":"turn.started"}
{"type":"error","message":"exceeded retry limit, last status: 429 Too Many Requests, request id: req_mockfault0001"}
{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 429 Too Many Requests, request id: req_mockfault0001"}}
"#;

/// pi's assistant message for a provider 429 that names its wait
/// (tests/fixtures/failures/pi/rate_limit*), after `tokens` of work.
fn pi_rate_limited(tokens: u32, wait_s: u32) -> String {
    let step = crate::spend::pi_step(1, tokens, 0.0);
    let msg = format!(
        r#"{{"role":"assistant","content":[],"api":"openai-completions","provider":"mock","model":"mock-model","usage":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}},"stopReason":"error","timestamp":1796174507769,"errorMessage":"429 Rate limit reached for mock-model in organization org-mock on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in {wait_s}s. Visit https://platform.openai.com/account/rate-limits to learn more."}}"#
    );
    format!(
        "{{\"type\":\"session\",\"id\":\"pi-limited\"}}\n{step}\n{{\"type\":\"message_end\",\"message\":{msg}}}\n{{\"type\":\"agent_end\"}}\n"
    )
}

/// A fake that prints `transcript` (and exits `code`) after recording its call.
pub fn fake_printing(env: &Env, name: &str, transcript: &str, code: i32) {
    let f = env.tmp.path().join(format!("{name}.out"));
    fs::write(&f, transcript).unwrap();
    env.fake(
        name,
        &format!("{}\ncat '{}'\nexit {code}", record(name), f.display()),
    );
}

/// A fake whose call number n prints `outs[n - 1]` (the last one after),
/// each call's start time (s.ns) appended to `$FAKE_DIR/<name>.times`.
fn fake_calls(env: &Env, name: &str, outs: &[String]) {
    for (i, o) in outs.iter().enumerate() {
        fs::write(env.fake_dir.join(format!("{name}.out.{}", i + 1)), o).unwrap();
    }
    let last = outs.len();
    env.fake(
        name,
        &format!(
            r#"date +%s.%N >> "$FAKE_DIR/{name}.times"
n=$(wc -l < "$FAKE_DIR/{name}.times")
[ "$n" -gt {last} ] && n={last}
{}
cat "$FAKE_DIR/{name}.out.$n""#,
            record(name)
        ),
    );
}

fn times(env: &Env, name: &str) -> Vec<f64> {
    fs::read_to_string(env.fake_dir.join(format!("{name}.times")))
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

fn attempts(j: &Value) -> &Vec<Value> {
    j["attempts"]
        .as_array()
        .unwrap_or_else(|| panic!("no attempts: {j}"))
}

#[test]
fn a_rate_limited_codex_falls_back_to_claude() {
    let env = Env::new();
    fake_printing(&env, "codex", CODEX_RATE_LIMITED, 1);
    env.replay("claude", "claude/claude-stream.jsonl", 0);
    let r = env.run(&["--fallback", "claude", "fix it"]);
    let j = r.json();
    assert_eq!(r.code, 0, "{j}");
    assert_eq!(j["status"], "success");
    assert_eq!(j["agent"], "claude", "the agent that served");
    assert_eq!(j["session"], "770ccbf4-0cf4-4a19-a0da-79d885d7bddc");
    let a = attempts(&j);
    assert_eq!(a.len(), 2);
    assert_eq!(a[0]["agent"], "codex");
    assert_eq!(a[0]["kind"], "rate_limited");
    assert_eq!(a[0]["status"], "failed");
    assert_eq!(a[0]["then"], "fallback");
    assert_eq!(a[1]["agent"], "claude");
    assert_eq!(a[1]["status"], "success");
    assert!(a[1]["then"].is_null());
    // The same task went to claude, with claude's own argv.
    assert_eq!(env.stdin("claude"), env.stdin("codex"));
    assert!(env.argv("claude").contains(&"stream-json".to_string()));
    let w = j["warnings"][0].as_str().unwrap();
    assert_eq!(
        w,
        "fell_back: codex (rate_limited) could not answer; claude served the run"
    );
    // Each attempt's log is kept; the serving one's where watchers look.
    let first = a[0]["log_path"].as_str().unwrap();
    assert!(first.ends_with("/attempt-1.stdout.log"), "{first}");
    assert!(fs::read_to_string(first).unwrap().contains("429"));
    assert!(j["log_path"].as_str().unwrap().ends_with("/stdout.log"));
    // In `baton usage`: one run, two calls, served after a fallback.
    let u = env.run(&["usage", "--by", "agent"]).json();
    assert_eq!(u["total"]["runs"], 1, "{u}");
    assert_eq!(u["total"]["calls"], 2);
    assert_eq!(u["total"]["fell_back"], 1);
    assert_eq!(u["total"]["ok"], 1);
    assert_eq!(u["groups"][1]["key"], "codex");
    assert_eq!(u["groups"][1]["calls"], 1);
    assert_eq!(
        u["groups"][1]["runs"], 0,
        "the run counts for the agent that served"
    );
}

#[test]
fn the_first_attempts_usage_is_kept_and_summed() {
    let env = Env::new();
    fake_printing(&env, "pi", &pi_rate_limited(1000, 7), 0);
    env.replay("claude", "claude/claude-stream.jsonl", 0);
    let j = env
        .run(&["--agent", "pi", "--fallback", "claude", "x"])
        .json();
    assert_eq!(j["status"], "success", "{j}");
    let a = attempts(&j);
    assert_eq!(a[0]["kind"], "rate_limited");
    assert_eq!(a[0]["retry_after_s"], 7);
    assert_eq!(a[0]["usage"]["input_tokens"], 1000);
    assert_eq!(a[1]["usage"]["input_tokens"], 2563);
    assert_eq!(j["usage"]["input_tokens"], 3563, "summed over the attempts");
    assert_eq!(j["usage"]["cost_usd"], 0.010512, "claude's reported cost");
}

#[test]
fn no_fallback_after_the_peer_changed_a_file() {
    let env = Env::new();
    env.git_init();
    let f = env.tmp.path().join("codex.out");
    fs::write(&f, CODEX_RATE_LIMITED).unwrap();
    env.fake(
        "codex",
        &format!(
            "{}\necho changed >> README\ncat '{}'\nexit 1",
            record("codex"),
            f.display()
        ),
    );
    env.replay("claude", "claude/claude-stream.jsonl", 0);
    let r = env.run(&["--fallback", "claude", "--retry", "2", "x"]);
    let j = r.json();
    assert_eq!(r.code, 1, "{j}");
    assert_eq!(j["agent"], "codex");
    assert_eq!(j["error"]["kind"], "rate_limited");
    assert_eq!(j["changed_files"], serde_json::json!(["README"]));
    assert!(
        !env.called("claude"),
        "claude must not start from codex's half-done work"
    );
    assert_eq!(
        times(&env, "codex").len(),
        0,
        "and codex was not retried either"
    );
    let w = j["warnings"].to_string();
    assert!(
        w.contains("did not fall back: codex changed files before it failed (README)"),
        "{w}"
    );
    assert!(j.get("attempts").is_none(), "one attempt: {j}");
}

#[test]
fn retry_waits_as_the_provider_asks() {
    let env = Env::new();
    let ok = fs::read_to_string(fixture("pi/pi-json-basic.jsonl")).unwrap();
    fake_calls(&env, "pi", &[pi_rate_limited(10, 2), ok]);
    let r = env.run(&["--agent", "pi", "--retry", "1", "x"]);
    let j = r.json();
    assert_eq!(j["status"], "success", "{j}");
    let t = times(&env, "pi");
    assert_eq!(t.len(), 2);
    // The wait asked for, 2 s, within 10 % (the first call's own end and
    // the second's start take a little of it too).
    let gap = t[1] - t[0];
    assert!((2.0..=2.2).contains(&gap), "{gap} s between the calls");
    let a = attempts(&j);
    assert_eq!(a[0]["then"], "retry");
    assert_eq!(a[0]["waited_ms"], 2000);
    assert_eq!(a[1]["agent"], "pi");
    assert!(
        j["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| !w.as_str().unwrap().starts_with("fell_back")),
        "a retry is no fallback: {j}"
    );
    assert_eq!(j["usage"]["input_tokens"], 130, "10 + 120");
}

#[test]
fn a_wait_longer_than_the_timeout_is_not_retried() {
    let env = Env::new();
    fake_calls(&env, "pi", &[pi_rate_limited(10, 30)]);
    let r = env.run(&["--agent", "pi", "--retry", "3", "--timeout", "5s", "x"]);
    let j = r.json();
    assert_eq!(j["error"]["kind"], "rate_limited", "{j}");
    assert_eq!(j["error"]["retry_after_s"], 30);
    assert_eq!(times(&env, "pi").len(), 1);
    let w = j["warnings"].to_string();
    assert!(w.contains("asked to wait 30s"), "{w}");
}

#[test]
fn without_retry_a_rate_limit_is_the_result() {
    let env = Env::new();
    fake_calls(&env, "pi", &[pi_rate_limited(10, 1)]);
    let j = env.run(&["--agent", "pi", "x"]).json();
    assert_eq!(j["error"]["kind"], "rate_limited");
    assert_eq!(times(&env, "pi").len(), 1);
    assert!(j.get("attempts").is_none());
}

#[test]
fn the_chain_is_checked_at_start() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    env.replay("claude", "claude/claude-stream.jsonl", 0);
    // agy cannot enforce read-only: refused before anything runs.
    let r = env.run(&["--read-only", "--fallback", "claude,gemini", "x"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    let j = r.json();
    assert_eq!(j["error"]["kind"], "unsupported_access");
    assert!(
        j["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("fallback chain"),
        "{j}"
    );
    assert!(!env.called("codex"));
    // A fallback agent that is not installed: 127, as for --agent.
    let r = env.run(&["--fallback", "qwen", "x"]);
    assert_eq!(r.code, 127, "{}", r.stdout);
    assert!(!env.called("codex"));
    // A model value the argv check refuses.
    let r = env.run(&["--fallback", "claude:--yolo", "x"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.json()["error"]["kind"], "unsafe_value");
    // Not with --resume: another agent cannot continue the session.
    let r = env.run(&["--fallback", "claude", "--resume", "s-1", "x"]);
    assert_eq!(r.code, 2);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--resume")
    );
    // --dry-run shows the chain with each agent's argv.
    let j = env
        .run(&[
            "--dry-run",
            "--fallback",
            "claude,pi:glm-5.2",
            "--retry",
            "2",
            "x",
        ])
        .json();
    assert_eq!(j["retry"], 2);
    let chain = j["fallback"].as_array().unwrap();
    assert_eq!(chain[0]["agent"], "claude");
    assert_eq!(chain[0]["argv"][0], "claude");
    assert_eq!(chain[1]["agent"], "pi");
    assert_eq!(chain[1]["model"], "glm-5.2");
    assert!(
        chain[1]["argv"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "glm-5.2")
    );
}

#[test]
fn the_config_gives_a_chain_and_its_checks_name_the_line() {
    let env = Env::new();
    fake_printing(&env, "codex", CODEX_RATE_LIMITED, 1);
    env.replay("claude", "claude/claude-stream.jsonl", 0);
    fs::write(
        env.work.join("baton.toml"),
        "[run]\nfallback = [\"claude\"]\n",
    )
    .unwrap();
    let j = env.run(&["x"]).json();
    assert_eq!(j["agent"], "claude", "{j}");
    // The flag wins over the config.
    let j = env.run(&["--fallback", "", "x"]).json();
    assert_eq!(j["agent"], "codex", "{j}");
    fs::write(
        env.work.join("baton.toml"),
        "[run]\nfallback = [\"claude\", \"nope\"]\n",
    )
    .unwrap();
    let r = env.run(&["x"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    let m = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(
        m.contains("baton.toml:2") && m.contains("run.fallback"),
        "{m}"
    );
}

#[test]
fn a_job_falls_back_and_continue_resumes_the_agent_that_served() {
    let env = Env::new();
    fake_printing(&env, "codex", CODEX_RATE_LIMITED, 1);
    env.replay("claude", "claude/claude-stream.jsonl", 0);
    let id = env
        .run(&["run", "--async", "--fallback", "claude", "x"])
        .json()["job_id"]
        .as_str()
        .unwrap()
        .to_string();
    let j = env.run(&["wait", &id, "--timeout", "60s"]).json();
    assert_eq!(j["agent"], "claude", "{j}");
    assert_eq!(attempts(&j).len(), 2);
    let _ = fs::remove_file(env.fake_dir.join("claude.argv"));
    let next = env.run(&["continue", &id, "and the tests"]).json()["job_id"]
        .as_str()
        .unwrap()
        .to_string();
    let j = env.run(&["wait", &next, "--timeout", "60s"]).json();
    assert_eq!(j["agent"], "claude", "{j}");
    let argv = env.argv("claude");
    assert!(
        argv.windows(2)
            .any(|w| w[0] == "--resume" && w[1] == "770ccbf4-0cf4-4a19-a0da-79d885d7bddc"),
        "{argv:?}"
    );
}

#[test]
fn in_worktree_mode_the_next_agent_starts_in_a_fresh_worktree() {
    let env = Env::new();
    env.git_init();
    let f = env.tmp.path().join("codex.out");
    fs::write(&f, CODEX_RATE_LIMITED).unwrap();
    env.fake(
        "codex",
        &format!(
            "{}\npwd > \"$FAKE_DIR/codex.pwd\"\necho half-done >> README\ncat '{}'\nexit 1",
            record("codex"),
            f.display()
        ),
    );
    env.fake(
        "claude",
        &format!(
            "{}\npwd > \"$FAKE_DIR/claude.pwd\"\ncat README > \"$FAKE_DIR/claude.readme\"\ncat '{}'",
            record("claude"),
            fixture("claude/claude-stream.jsonl").display()
        ),
    );
    let r = env.run(&["--worktree", "--fallback", "claude", "x"]);
    let j = r.json();
    assert_eq!(j["status"], "success", "{j}");
    assert_eq!(j["agent"], "claude");
    let pwd = |n: &str| fs::read_to_string(env.fake_dir.join(format!("{n}.pwd"))).unwrap();
    assert_ne!(pwd("codex"), pwd("claude"), "a fresh worktree");
    assert_eq!(
        fs::read_to_string(env.fake_dir.join("claude.readme")).unwrap(),
        "hello\n",
        "at the same base, without codex's half-done change"
    );
    let a = attempts(&j);
    assert_eq!(a[0]["changed_files"], serde_json::json!(["README"]));
    // codex's worktree, with its change, is kept for a person to look at.
    assert!(
        std::path::Path::new(pwd("codex").trim())
            .join("README")
            .exists()
    );
    let canon = |p: &str| fs::canonicalize(p.trim()).unwrap();
    assert_eq!(
        canon(j["worktree"]["path"].as_str().unwrap()),
        canon(&pwd("claude"))
    );
    // The user's checkout is untouched.
    let out = std::process::Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(&env.work)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "",
        "the checkout is clean"
    );
}

/// An ACP agent in the chain is driven over ACP, with the access of the run
/// translated as for `--agent copilot`: read-only rejects the edit copilot
/// asks for (the recorded `write-rejected` exchange).
#[test]
fn a_rate_limited_codex_falls_back_to_copilot_over_acp_with_the_same_access() {
    let env = crate::acp::copilot("write-rejected", "");
    fake_printing(&env, "codex", CODEX_RATE_LIMITED, 1);
    let r = env.run(&["--read-only", "--fallback", "copilot", "write it"]);
    let j = r.json();
    assert_eq!((r.code, j["status"].as_str()), (0, Some("success")), "{j}");
    assert_eq!(j["agent"], "copilot");
    let a = attempts(&j);
    assert_eq!(a[0]["agent"], "codex");
    assert_eq!(a[0]["kind"], "rate_limited");
    assert_eq!(a[1]["agent"], "copilot");
    assert!(j["session"].is_string(), "copilot's session: {j}");
    // The edit was refused by baton's read-only policy, as with --agent.
    assert!(!env.work.join("out.txt").exists());
    let d = j["denials"].as_array().expect("denials");
    assert!(d[0]["tool"].as_str().unwrap().starts_with("edit"), "{j}");
    let sent: Vec<Value> = fs::read_to_string(env.fake_dir.join("sent.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(sent[0]["method"], "initialize");
    let answer = sent.iter().find(|m| m.get("result").is_some()).unwrap();
    assert_eq!(answer["result"]["outcome"]["optionId"], "reject_once");
    // Its ACP exchange is kept beside its output, as for --agent copilot.
    let log = j["log_path"].as_str().unwrap();
    let sent_log = std::path::Path::new(log).with_file_name("sent.log");
    assert!(sent_log.exists(), "{}", sent_log.display());
    // --dry-run says how each agent of the chain is driven.
    let j = env
        .run(&["--dry-run", "--fallback", "claude,copilot", "x"])
        .json();
    let chain = j["fallback"].as_array().unwrap();
    assert_eq!(chain[0]["transport"], "headless");
    assert_eq!(chain[1]["transport"], "acp");
    assert_eq!(
        chain[1]["argv"],
        serde_json::json!(["copilot", "--acp", "--stdio"])
    );
}

/// A fallback agent is driven as `--agent` would drive it: its own
/// `agents.<name>.transport`, not the first agent's (`--transport` is the
/// first agent's alone).
#[test]
fn a_fallback_agent_takes_its_own_transport() {
    let env = Env::new();
    fs::write(
        env.work.join("baton.toml"),
        "[agents.qwen]\ntransport = \"acp\"\n",
    )
    .unwrap();
    let j = env
        .run(&[
            "--dry-run",
            "--agent",
            "gemini-cli",
            "--transport",
            "acp",
            "--fallback",
            "qwen,opencode,kilo",
            "x",
        ])
        .json();
    assert_eq!(j["transport"], "acp", "{j}");
    let chain = j["fallback"].as_array().unwrap();
    let t: Vec<(&str, &str)> = chain
        .iter()
        .map(|c| {
            (
                c["agent"].as_str().unwrap(),
                c["transport"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        t,
        [("qwen", "acp"), ("opencode", "headless"), ("kilo", "acp")]
    );
    assert_eq!(chain[0]["argv"][1], "--acp");
    assert_eq!(chain[2]["argv"], serde_json::json!(["kilo", "acp"]));
}

/// Under `BATON_MAX_ACCESS` (what `baton mcp` sets), a chain is held to the
/// cap like its first agent: over it, nothing starts; within it, the
/// fallback agent runs with the capped access (read-only: the edit refused).
#[test]
fn the_access_cap_holds_for_every_agent_of_the_chain() {
    let env = crate::acp::copilot("write-rejected", "");
    fake_printing(&env, "codex", CODEX_RATE_LIMITED, 1);
    let capped = |args: &[&str]| {
        crate::support::Run::from(
            env.baton()
                .env("BATON_MAX_ACCESS", "read-only")
                .args(args)
                .output()
                .unwrap(),
        )
    };
    for args in [
        &["--fallback", "copilot", "write it"][..],
        &[
            "--access",
            "full",
            "--fallback",
            "claude,copilot",
            "write it",
        ][..],
    ] {
        let r = capped(args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stdout);
        assert_eq!(r.json()["error"]["kind"], "access_capped", "{args:?}");
        assert!(!env.called("codex") && !env.called("copilot"));
    }
    fs::write(
        env.work.join("baton.toml"),
        "[run]\nfallback = [\"copilot\"]\naccess = \"workspace\"\n",
    )
    .unwrap();
    let r = capped(&["write it"]);
    assert_eq!(r.json()["error"]["kind"], "access_capped", "{}", r.stdout);
    assert!(!env.called("codex") && !env.called("copilot"));
    let r = capped(&["--read-only", "write it"]);
    let j = r.json();
    assert_eq!((r.code, j["agent"].as_str()), (0, Some("copilot")), "{j}");
    assert_eq!(j["access"], "read-only");
    assert!(!env.work.join("out.txt").exists());
    assert!(
        j["denials"][0]["tool"]
            .as_str()
            .unwrap()
            .starts_with("edit")
    );
}
