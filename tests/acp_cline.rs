//! Cline over ACP against the fake agent (`support/fake_acp.py`) replaying
//! exchanges recorded with the real cline 3.0.65 against a local mock
//! (`tests/fixtures/acp/cline/`): no usage in its answers, every tool asks
//! (reads included), and its edits are `apply_patch` requests of kind
//! `other` that name their files only in the patch text.

use std::fs;

use serde_json::{Value, json};

use crate::support::{Env, Run, fixture};

/// An `Env` whose `cline` replays `acp/cline/<name>.acp`, recording what
/// baton sent and the hub switch it was started with.
fn cline(name: &str) -> Env {
    let env = Env::new();
    env.git_init();
    let rec = fixture(&format!("acp/cline/{name}.acp"));
    assert!(rec.exists(), "{}", rec.display());
    let fake = crate::support::acp::fake_acp(&env.fake_dir);
    env.fake(
        "cline",
        &format!(
            "printf '%s|%s\\n' \"$*\" \"${{CLINE_SESSION_BACKEND_MODE:-unset}}\" > \"$FAKE_DIR/cline.argv\"\n\
             exec {fake} '{}' --record \"$FAKE_DIR/sent.jsonl\"",
            rec.display()
        ),
    );
    env
}

fn sent(env: &Env) -> Vec<Value> {
    fs::read_to_string(env.fake_dir.join("sent.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn answers(env: &Env) -> Vec<String> {
    sent(env)
        .iter()
        .filter_map(|m| m.pointer("/result/outcome/optionId")?.as_str())
        .map(str::to_string)
        .collect()
}

fn run(env: &Env, args: &[&str]) -> (Run, Value) {
    let mut all = vec!["run", "--agent", "cline", "--timeout", "60s"];
    all.extend_from_slice(args);
    let r = env.run(&all);
    let j = r.json();
    (r, j)
}

fn ok(r: &Run, j: &Value) {
    assert_eq!(
        (r.code, j["status"].as_str()),
        (0, Some("success")),
        "{j}\n{}",
        r.stderr
    );
}

#[test]
fn a_plain_cline_answer_has_its_session_and_no_usage() {
    let env = cline("plain");
    let (r, j) = run(&env, &["--access", "read-only", "hello"]);
    ok(&r, &j);
    assert_eq!(j["agent"], "cline");
    assert_eq!(j["message"], "Hello from mock.");
    assert_eq!(j["session"], "1796191513034_33imv_cli");
    // cline reports no token counts over ACP (measured).
    assert!(
        j["usage"].is_null() || j["usage"]["input_tokens"].is_null(),
        "{j}"
    );
    // Started as `cline --acp`, without its background hub.
    let argv = fs::read_to_string(env.fake_dir.join("cline.argv")).unwrap();
    assert_eq!(argv.trim(), "--acp|local");
    let methods: Vec<String> = sent(&env)
        .iter()
        .filter_map(|m| m["method"].as_str().map(str::to_string))
        .collect();
    assert_eq!(methods, ["initialize", "session/new", "session/prompt"]);
}

#[test]
fn read_only_rejects_a_cline_patch_naming_its_file() {
    let env = cline("write-rejected");
    let (r, j) = run(&env, &["--access", "read-only", "write it"]);
    ok(&r, &j);
    let d = j["denials"].as_array().expect("denials");
    assert_eq!(d.len(), 1, "{j}");
    assert!(d[0]["tool"].as_str().unwrap().starts_with("edit"), "{j}");
    assert!(d[0]["detail"].as_str().unwrap().contains("out.txt"), "{j}");
    assert_eq!(answers(&env), ["reject_once"]);
    assert_eq!(j["message"], "Could not write.");
}

#[test]
fn workspace_allows_a_cline_patch_inside_and_rejects_one_outside() {
    let env = cline("write-allowed");
    let (r, j) = run(&env, &["--access", "workspace", "write it"]);
    ok(&r, &j);
    assert_eq!(answers(&env), ["allow_once"], "{j}");
    assert!(
        j.get("denials")
            .is_none_or(|d| d.as_array().unwrap().is_empty()),
        "{j}"
    );

    let env = cline("write-outside-rejected");
    let (r, j) = run(&env, &["--access", "workspace", "write outside"]);
    ok(&r, &j);
    assert_eq!(answers(&env), ["reject_once"], "{j}");
    let d = j["denials"].as_array().expect("denials");
    assert!(
        d[0]["detail"]
            .as_str()
            .unwrap()
            .contains("../outside.txt is outside the workspace"),
        "{j}"
    );
}

#[test]
fn cline_asks_before_reads_and_commands_and_the_policy_answers() {
    let env = cline("read-allowed");
    let (r, j) = run(&env, &["--access", "read-only", "read it"]);
    ok(&r, &j);
    assert_eq!(answers(&env), ["allow_once"], "a read is allowed: {j}");

    let env = cline("bash-rejected");
    let (r, j) = run(&env, &["--access", "workspace", "run it"]);
    ok(&r, &j);
    assert_eq!(answers(&env), ["reject_once"]);
    let d = j["denials"].as_array().expect("denials");
    assert!(d[0]["tool"].as_str().unwrap().starts_with("execute"), "{j}");
}

#[test]
fn a_cline_session_is_loaded_and_an_unknown_one_fails() {
    let env = cline("load");
    let sid = "1796191993455_ZBUnN_cli";
    let (r, j) = run(&env, &["--access", "read-only", "--resume", sid, "again"]);
    ok(&r, &j);
    assert_eq!(j["session"], sid);
    // The replayed turn ("Wrote out.txt.") is not the answer.
    assert_eq!(j["message"], "Resumed.");
    assert_eq!(sent(&env)[1]["method"], "session/load");

    let env = cline("load-unknown");
    let (r, j) = run(&env, &["--resume", "nope-unknown", "x"]);
    assert_eq!((r.code, j["status"].as_str()), (1, Some("failed")), "{j}");
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Resource not found"),
        "{j}"
    );
}

#[test]
fn a_cline_model_error_and_a_timeout_end_the_run() {
    let env = cline("error");
    let (r, j) = run(&env, &["hello"]);
    assert_eq!((r.code, j["status"].as_str()), (1, Some("failed")), "{j}");
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("mock error"),
        "{j}"
    );

    let env = cline("cancel");
    let r = env.run(&["run", "--agent", "cline", "--timeout", "2s", "slow"]);
    let j = r.json();
    assert_eq!(
        (r.code, j["status"].as_str()),
        (124, Some("timeout")),
        "{j}"
    );
    let s = sent(&env);
    assert_eq!(s.last().unwrap()["method"], "session/cancel", "{s:?}");
    assert_eq!(j["session"], json!("1796192005681_I03M4_cli"));
}
