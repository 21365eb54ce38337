//! Nanocoder over ACP against the fake agent (`support/fake_acp.py`)
//! replaying exchanges recorded from the real `@nanocollective/nanocoder`
//! 1.30.0 (`tests/fixtures/acp/nanocoder/`): its session is set to `normal`
//! mode (its default, `auto-accept`, writes without asking), every request
//! is answered by baton's policy, and a repository or user config that
//! pre-approves tools (`alwaysAllow`) makes read-only and workspace refused.

use std::fs;

use serde_json::{Value, json};

use crate::support::{Env, Run, fixture};

/// An `Env` whose `nanocoder` replays `tests/fixtures/acp/nanocoder/<name>.acp`,
/// recording what baton sent into `$FAKE_DIR/sent.jsonl`.
fn nanocoder(name: &str) -> Env {
    let env = Env::new();
    env.git_init();
    let rec = fixture(&format!("acp/nanocoder/{name}.acp"));
    assert!(rec.exists(), "{}", rec.display());
    let fake = crate::support::acp::fake_acp(&env.fake_dir);
    env.fake(
        "nanocoder",
        &format!(
            "exec {fake} '{}' --record \"$FAKE_DIR/sent.jsonl\"",
            rec.display()
        ),
    );
    fs::create_dir_all(config_dir(&env)).unwrap();
    env
}

/// Nanocoder's config directory for the test (never the real user's).
fn config_dir(env: &Env) -> std::path::PathBuf {
    env.tmp.path().join("nanocoder-config")
}

fn run(env: &Env, args: &[&str]) -> (Run, Value) {
    let mut all = vec!["run", "--agent", "nanocoder", "--timeout", "60s"];
    all.extend_from_slice(args);
    let r = Run::from(
        env.baton()
            .env("NANOCODER_CONFIG_DIR", config_dir(env))
            .args(&all)
            .output()
            .expect("run baton"),
    );
    let j = r.json();
    (r, j)
}

fn sent(env: &Env) -> Vec<Value> {
    fs::read_to_string(env.fake_dir.join("sent.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn answer(env: &Env) -> Value {
    sent(env)
        .into_iter()
        .find(|m| m.get("result").is_some())
        .expect("baton answered a permission request")
}

#[test]
fn nanocoder_runs_in_normal_mode_and_its_usage_is_the_turns_sum() {
    let env = nanocoder("plain");
    let (r, j) = run(&env, &["--access", "read-only", "hello"]);
    assert_eq!(
        (r.code, j["status"].as_str()),
        (0, Some("success")),
        "{j}\n{}",
        r.stderr
    );
    assert_eq!(j["message"], "first answer");
    assert_eq!(j["session"], "3b309e3f-ceaf-4ae4-8eea-ffb3cd1f60b9");
    // Nanocoder reports the prompt tokens (cached input included) and no
    // cached count.
    assert_eq!(j["usage"]["input_tokens"], 100);
    assert_eq!(j["usage"]["output_tokens"], 10);
    assert_eq!(j["usage"]["cached_input_tokens"], Value::Null);
    let s = sent(&env);
    let methods: Vec<&str> = s.iter().filter_map(|m| m["method"].as_str()).collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "session/new",
            "session/set_mode",
            "session/prompt"
        ]
    );
    assert_eq!(s[2]["params"]["modeId"], "normal");
}

#[test]
fn read_only_rejects_nanocoders_edit_and_the_turn_goes_on() {
    let env = nanocoder("write-rejected");
    let (r, j) = run(&env, &["--access", "read-only", "write it"]);
    assert_eq!(
        (r.code, j["status"].as_str()),
        (0, Some("success")),
        "{j}\n{}",
        r.stderr
    );
    assert!(!env.work.join("hello.txt").exists());
    let d = j["denials"].as_array().expect("denials");
    assert_eq!(d.len(), 1, "{j}");
    assert!(d[0]["tool"].as_str().unwrap().starts_with("edit"), "{j}");
    assert!(
        d[0]["detail"].as_str().unwrap().contains("hello.txt"),
        "{j}"
    );
    assert_eq!(answer(&env)["result"]["outcome"]["optionId"], "deny");
    // The rejection went back to the model, which answered.
    assert_eq!(j["message"], "done writing");
    assert_eq!(j["usage"]["input_tokens"], 201);
}

#[test]
fn read_only_rejects_nanocoders_command() {
    let env = nanocoder("bash-rejected");
    let (r, j) = run(&env, &["--access", "read-only", "run it"]);
    assert_eq!((r.code, j["status"].as_str()), (0, Some("success")), "{j}");
    let d = j["denials"].as_array().expect("denials");
    assert!(d[0]["tool"].as_str().unwrap().starts_with("execute"), "{j}");
    assert!(d[0]["detail"].as_str().unwrap().contains("touch ran.txt"));
    assert!(!env.work.join("ran.txt").exists());
}

#[test]
fn workspace_allows_nanocoders_edit_inside_the_working_directory() {
    let env = nanocoder("write-allowed");
    let (r, j) = run(&env, &["--access", "workspace", "write it"]);
    assert_eq!((r.code, j["status"].as_str()), (0, Some("success")), "{j}");
    assert_eq!(answer(&env)["result"]["outcome"]["optionId"], "allow");
    assert_eq!(
        fs::read_to_string(env.work.join("hello.txt")).unwrap(),
        "hi\n"
    );
    assert_eq!(j["changed_files"], json!(["hello.txt"]));
}

#[test]
fn resume_loads_nanocoders_session_and_sets_normal_mode_again() {
    let env = nanocoder("load");
    let id = "3b309e3f-ceaf-4ae4-8eea-ffb3cd1f60b9";
    let (r, j) = run(&env, &["--access", "read-only", "--resume", id, "again"]);
    assert_eq!((r.code, j["status"].as_str()), (0, Some("success")), "{j}");
    assert_eq!(j["session"], id);
    let s = sent(&env);
    assert_eq!(s[1]["method"], "session/load");
    assert_eq!(s[1]["params"]["sessionId"], id);
    // A loaded session is back in nanocoder's `auto-accept` (measured):
    // baton sets `normal` again before the prompt.
    assert_eq!(s[2]["method"], "session/set_mode");
    assert_eq!(s[2]["params"]["modeId"], "normal");
    assert_eq!(j["usage"]["input_tokens"], 101);
}

/// Nanocoder reads `alwaysAllow` from `agents.config.json` in the working
/// directory (a repository's file) and in its config directory: the tools
/// named there run without a permission request, so baton refuses the
/// access modes it could not enforce, before starting the agent.
#[test]
fn an_agents_config_that_pre_approves_tools_refuses_read_only_and_workspace() {
    for (in_repo, access) in [(true, "read-only"), (false, "workspace")] {
        let env = nanocoder("plain");
        let cfg = json!({"nanocoder": {"alwaysAllow": ["execute_bash"]}}).to_string();
        let dir = if in_repo {
            env.work.clone()
        } else {
            config_dir(&env)
        };
        fs::write(dir.join("agents.config.json"), cfg).unwrap();
        let (r, j) = run(&env, &["--access", access, "hello"]);
        assert_ne!(r.code, 0, "{j}");
        assert_eq!(j["error"]["kind"], "unsupported_access", "{j}");
        let msg = j["error"]["message"].as_str().unwrap();
        assert!(
            msg.contains("agents.config.json") && msg.contains("execute_bash"),
            "{msg}"
        );
        assert!(sent(&env).is_empty(), "the agent must not be started");
    }
    // Full access does not depend on the agent asking.
    let env = nanocoder("plain");
    fs::write(
        env.work.join("agents.config.json"),
        json!({"nanocoder": {"alwaysAllow": ["write_file"]}}).to_string(),
    )
    .unwrap();
    let (r, j) = run(&env, &["--access", "full", "hello"]);
    assert_eq!((r.code, j["status"].as_str()), (0, Some("success")), "{j}");
}

#[test]
fn an_agents_config_without_always_allow_is_no_obstacle() {
    let env = nanocoder("plain");
    fs::write(
        env.work.join("agents.config.json"),
        json!({"nanocoder": {"alwaysAllow": [], "providers": []}}).to_string(),
    )
    .unwrap();
    let (r, j) = run(&env, &["--access", "read-only", "hello"]);
    assert_eq!((r.code, j["status"].as_str()), (0, Some("success")), "{j}");
}
