//! Honest model identity: `model` is what the CLI says served the run,
//! `model_requested` what baton asked for, and a `model_fallback:` warning
//! when they differ.

use crate::run::fake_cli;
use crate::support::Env;

fn run_claude(model: &str) -> serde_json::Value {
    let env = Env::new();
    // The fixture's init and usage metadata report `claude-opus-5-5`.
    fake_cli(&env, "claude", "claude/claude-stream.jsonl", None, 0);
    let r = env.run(&["run", "--agent", "claude", "--model", model, "say hi"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.json()
}

fn fallback_warnings(j: &serde_json::Value) -> Vec<String> {
    j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .filter(|w| w.starts_with("model_fallback:"))
        .map(str::to_string)
        .collect()
}

#[test]
fn another_model_serving_the_run_is_reported_with_a_warning() {
    let j = run_claude("sonnet");
    assert_eq!(j["model"], "claude-opus-5-5");
    assert_eq!(j["model_requested"], "sonnet");
    let w = fallback_warnings(&j);
    assert_eq!(w.len(), 1, "{j}");
    assert!(
        w[0].contains("`sonnet`") && w[0].contains("`claude-opus-5-5`"),
        "{w:?}"
    );
}

#[test]
fn an_alias_the_cli_expands_is_no_fallback() {
    let j = run_claude("opus");
    assert_eq!(j["model"], "claude-opus-5-5");
    assert_eq!(j["model_requested"], "opus");
    assert!(fallback_warnings(&j).is_empty(), "{j}");
}

#[test]
fn a_cli_that_does_not_report_the_model_keeps_the_one_asked_for() {
    let env = Env::new();
    fake_cli(&env, "codex", "codex/codex-exec-basic.jsonl", None, 0);
    let r = env.run(&["run", "--agent", "codex", "--model", "sol", "say hi"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["model"], "gpt-5.6-sol");
    assert_eq!(j["model_requested"], "gpt-5.6-sol");
    assert!(fallback_warnings(&j).is_empty(), "{j}");
}
