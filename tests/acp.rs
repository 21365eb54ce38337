//! The ACP transport against a fake agent (`support/fake_acp.py`) replaying
//! recorded real exchanges with GitHub Copilot CLI 1.0.102
//! (`tests/fixtures/acp/copilot/`): the handshake, permission answers per
//! access mode and the denials they leave, cancel, an agent that never
//! answers `initialize`, output that is not JSON-RPC, and a crash.

use std::fs;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::support::{Env, Run, fixture, wait_for};

/// An `Env` whose `copilot` replays `tests/fixtures/acp/copilot/<name>.acp`
/// with `flags`, recording what baton sent into `$FAKE_DIR/sent.jsonl`.
pub fn copilot(name: &str, flags: &str) -> Env {
    let env = Env::new();
    env.git_init();
    let rec = fixture(&format!("acp/copilot/{name}.acp"));
    assert!(rec.exists(), "{}", rec.display());
    replay(env, &rec, flags)
}

/// `env`'s `copilot` replays the recording at `rec`.
pub fn replay(env: Env, rec: &std::path::Path, flags: &str) -> Env {
    let fake = crate::support::acp::fake_acp(&env.fake_dir);
    env.fake(
        "copilot",
        &format!(
            "exec {fake} '{}' {flags} --record \"$FAKE_DIR/sent.jsonl\"",
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

fn run(env: &Env, args: &[&str]) -> (Run, Value) {
    let mut all = vec!["run", "--agent", "copilot", "--timeout", "60s"];
    all.extend_from_slice(args);
    let r = env.run(&all);
    let j = r.json();
    (r, j)
}

#[test]
fn a_plain_answer_has_the_session_and_the_usage_copilot_reported() {
    let env = copilot("plain", "");
    let (r, j) = run(&env, &["hello"]);
    assert_eq!((r.code, j["status"].as_str()), (0, Some("success")), "{j}");
    assert_eq!(j["message"], "PLAIN-ANSWER: hello from the mock model.");
    assert_eq!(j["session"], "af4c8f75-a42b-46f5-a391-0dffc6e24872");
    assert_eq!(j["usage"]["input_tokens"], 1234);
    assert_eq!(j["usage"]["cached_input_tokens"], 200);
    assert_eq!(j["usage"]["output_tokens"], 56);
    // What baton sent: initialize (protocol 1, no fs or terminal offered),
    // session/new in the work dir, the prompt with baton's brief.
    let s = sent(&env);
    let methods: Vec<&str> = s.iter().filter_map(|m| m["method"].as_str()).collect();
    assert_eq!(methods, ["initialize", "session/new", "session/prompt"]);
    assert_eq!(s[0]["params"]["protocolVersion"], 1);
    assert_eq!(
        s[0]["params"]["clientCapabilities"]["fs"]["writeTextFile"],
        false
    );
    assert_eq!(s[0]["params"]["clientCapabilities"]["terminal"], false);
    let cwd = s[1]["params"]["cwd"].as_str().unwrap();
    assert_eq!(PathBuf::from(cwd), env.work.canonicalize().unwrap());
    let prompt = s[2]["params"]["prompt"][0]["text"].as_str().unwrap();
    assert!(
        prompt.contains("hello") && prompt.contains("<task>"),
        "{prompt}"
    );
    // The run's sent.log holds the same messages, the prompt's text left out.
    let log = PathBuf::from(j["log_path"].as_str().unwrap()).with_file_name("sent.log");
    let logged = fs::read_to_string(log).unwrap();
    assert!(
        logged.contains("session/prompt") && !logged.contains("<task>"),
        "{logged}"
    );
}

#[test]
fn read_only_rejects_an_edit_and_lists_the_denial() {
    let env = copilot("write-rejected", "");
    let (r, j) = run(&env, &["--access", "read-only", "write it"]);
    assert_eq!(
        (r.code, j["status"].as_str()),
        (0, Some("success")),
        "{j}\n{}",
        r.stderr
    );
    assert!(!env.work.join("out.txt").exists());
    let d = j["denials"].as_array().expect("denials");
    assert_eq!(d.len(), 1, "{j}");
    assert!(d[0]["tool"].as_str().unwrap().starts_with("edit"), "{j}");
    assert!(d[0]["detail"].as_str().unwrap().contains("out.txt"), "{j}");
    assert_eq!(j["changed_files"], serde_json::json!([]));
    // The answer baton sent picked the recorded "reject_once" option.
    let answer = sent(&env)
        .into_iter()
        .find(|m| m.get("result").is_some())
        .unwrap();
    assert_eq!(answer["result"]["outcome"]["optionId"], "reject_once");
}

#[test]
fn read_only_rejects_a_command() {
    let env = copilot("bash-rejected", "");
    let (r, j) = run(&env, &["--access", "read-only", "run the check"]);
    assert_eq!(
        (r.code, j["status"].as_str()),
        (0, Some("success")),
        "{j}\n{}",
        r.stderr
    );
    let d = j["denials"].as_array().expect("denials");
    assert!(d[0]["tool"].as_str().unwrap().starts_with("execute"), "{j}");
    assert!(
        d[0]["detail"].as_str().unwrap().contains("sh ./check.sh"),
        "{j}"
    );
}

#[test]
fn workspace_allows_an_edit_inside_and_changed_files_sees_it() {
    let env = copilot("write-allowed", "");
    let (r, j) = run(&env, &["--access", "workspace", "write it"]);
    assert_eq!(
        (r.code, j["status"].as_str()),
        (0, Some("success")),
        "{j}\n{}",
        r.stderr
    );
    assert_eq!(fs::read_to_string(env.work.join("out.txt")).unwrap(), "x\n");
    assert_eq!(j["changed_files"], serde_json::json!(["out.txt"]));
    assert!(
        j.get("denials")
            .is_none_or(|d| d.as_array().unwrap().is_empty()),
        "{j}"
    );
    assert!(j["message"].as_str().unwrap().starts_with("DONE"), "{j}");
}

#[test]
fn workspace_rejects_an_edit_outside_the_working_directory() {
    let env = copilot("write-outside-rejected", "");
    let (r, j) = run(&env, &["--access", "workspace", "write outside"]);
    assert_eq!(
        (r.code, j["status"].as_str()),
        (0, Some("success")),
        "{j}\n{}",
        r.stderr
    );
    let d = j["denials"].as_array().expect("denials");
    assert_eq!(
        d.len(),
        1,
        "the read-access request is allowed, the edit is not: {j}"
    );
    assert!(
        d[0]["detail"]
            .as_str()
            .unwrap()
            .contains("outside the workspace"),
        "{j}"
    );
}

#[test]
fn a_model_error_copilot_reports_as_text_fails_the_run() {
    let env = copilot("error", "");
    let (r, j) = run(&env, &["fail"]);
    assert_eq!((r.code, j["status"].as_str()), (1, Some("failed")), "{j}");
    assert_eq!(j["error"]["kind"], "agent_error");
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("mock: scripted bad request"),
        "{j}"
    );
}

/// An agent that answers `session/prompt` with this JSON-RPC error: the
/// recorded copilot exchange up to the prompt, then `error`. Not a
/// recording of copilot (it reports a failed model call as text, see
/// `error.acp`): the shape of an ACP agent that passes the provider's words
/// on in its error (Qwen Code's `data.details` under "Internal error").
fn prompt_error(error: Value) -> Env {
    let env = Env::new();
    env.git_init();
    let recorded = fs::read_to_string(fixture("acp/copilot/error.acp")).unwrap();
    let mut lines: Vec<String> = Vec::new();
    for l in recorded.lines() {
        lines.push(l.to_string());
        if l.starts_with(">> ") && l.contains("\"session/prompt\"") {
            break;
        }
    }
    lines.push(format!(
        "<< {}",
        serde_json::json!({"jsonrpc": "2.0", "id": 3, "error": error})
    ));
    let rec = env.fake_dir.join("prompt-error.acp");
    fs::write(&rec, lines.join("\n") + "\n").unwrap();
    replay(env, &rec, "")
}

#[test]
fn a_prompt_error_with_the_providers_401_is_auth_required() {
    let env = prompt_error(
        serde_json::json!({"code": -32603, "message": "Internal error",
        "data": {"details": "[API Error: 401 Incorrect API key provided: e2e-key]"}}),
    );
    let (r, j) = run(&env, &["fail"]);
    assert_eq!((r.code, j["status"].as_str()), (1, Some("failed")), "{j}");
    assert_eq!(j["error"]["kind"], "auth_required", "{j}");
    assert!(
        j["error"]["hint"].as_str().is_some_and(|h| !h.is_empty()),
        "{j}"
    );
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("401 Incorrect API key"),
        "{j}"
    );
}

#[test]
fn a_prompt_error_with_the_providers_429_is_rate_limited_with_its_wait() {
    let env = prompt_error(serde_json::json!({"code": -32603,
        "message": "429 Rate limit reached for requests. Please try again in 7s."}));
    let (r, j) = run(&env, &["fail"]);
    assert_eq!((r.code, j["status"].as_str()), (1, Some("failed")), "{j}");
    assert_eq!(j["error"]["kind"], "rate_limited", "{j}");
    assert_eq!(j["error"]["retry_after_s"], 7, "{j}");
}

#[test]
fn a_prompt_error_without_the_providers_status_stays_agent_error() {
    let env = prompt_error(serde_json::json!({"code": -32603, "message": "Internal error"}));
    let (_, j) = run(&env, &["fail"]);
    assert_eq!(j["error"]["kind"], "agent_error", "{j}");
}

#[test]
fn resume_loads_the_session_and_the_replayed_turns_are_not_the_answer() {
    let env = copilot("load", "");
    let sid = "af4c8f75-a42b-46f5-a391-0dffc6e24872";
    let (r, j) = run(&env, &["--resume", sid, "again"]);
    assert_eq!(
        (r.code, j["status"].as_str()),
        (0, Some("success")),
        "{j}\n{}",
        r.stderr
    );
    assert_eq!(j["session"], sid);
    assert_eq!(j["message"], "PLAIN-ANSWER: hello from the mock model.");
    let s = sent(&env);
    assert_eq!(s[1]["method"], "session/load");
    assert_eq!(s[1]["params"]["sessionId"], sid);
}

#[test]
fn resuming_an_unknown_session_fails_with_the_agents_words() {
    let env = copilot("load-unknown", "");
    let (r, j) = run(
        &env,
        &["--resume", "00000000-0000-4000-8000-000000000000", "x"],
    );
    assert_eq!((r.code, j["status"].as_str()), (1, Some("failed")), "{j}");
    let m = j["error"]["message"].as_str().unwrap();
    assert!(
        m.contains("could not load session") && m.contains("not found"),
        "{m}"
    );
}

#[test]
fn a_timeout_mid_prompt_sends_session_cancel_then_stops_the_agent() {
    let env = copilot("cancel", "");
    let r = env.run(&["run", "--agent", "copilot", "--timeout", "2s", "slow"]);
    let j = r.json();
    assert_eq!(
        (r.code, j["status"].as_str()),
        (124, Some("timeout")),
        "{j}"
    );
    let s = sent(&env);
    assert_eq!(
        s.last().and_then(|m| m["method"].as_str()),
        Some("session/cancel"),
        "{s:?}"
    );
    assert_eq!(s.last().unwrap()["params"]["sessionId"], j["session"]);
}

#[test]
fn a_signal_cancels_the_turn_over_acp_first() {
    let env = copilot("cancel", "");
    let child = env
        .baton()
        .args(["run", "--agent", "copilot", "--timeout", "60s", "slow"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the prompt is out, interrupt baton as `baton cancel` does.
    assert!(wait_for(Duration::from_secs(20), || {
        sent(&env).iter().any(|m| m["method"] == "session/prompt")
    }));
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let r = Run::from(child.wait_with_output().unwrap());
    let j = r.json();
    assert_eq!(j["status"], "cancelled", "{j}");
    assert_eq!(
        sent(&env)
            .last()
            .and_then(|m| m["method"].as_str().map(String::from)),
        Some("session/cancel".to_string())
    );
}

#[test]
fn an_agent_that_never_answers_initialize_times_out_with_a_clear_error() {
    let env = copilot("plain", "--hang-init");
    let r = env
        .baton()
        .env("BATON_ACP_INIT_TIMEOUT_MS", "1500")
        .args(["run", "--agent", "copilot", "--timeout", "60s", "hello"])
        .output()
        .unwrap();
    let r = Run::from(r);
    let j = r.json();
    assert_eq!(
        (r.code, j["status"].as_str()),
        (124, Some("timeout")),
        "{j}"
    );
    assert_eq!(j["error"]["kind"], "acp_handshake_timeout");
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did not answer the ACP `initialize` request within 1.5s"),
        "{j}"
    );
}

#[test]
fn lines_that_are_not_json_rpc_are_skipped_with_a_warning() {
    let env = copilot("plain", "--garbage");
    let (r, j) = run(&env, &["hello"]);
    assert_eq!((r.code, j["status"].as_str()), (0, Some("success")), "{j}");
    let w = j["warnings"].to_string();
    assert!(
        w.contains("2 line(s) the agent printed on stdout were not JSON-RPC"),
        "{w}"
    );
}

#[test]
fn an_agent_that_crashes_fails_the_run_with_its_stderr() {
    let env = copilot("plain", "--crash-after-init");
    let (r, j) = run(&env, &["hello"]);
    assert_eq!((r.code, j["status"].as_str()), (1, Some("failed")), "{j}");
    let m = j["error"]["message"].as_str().unwrap();
    assert!(
        m.contains("exited before it finished its turn")
            && m.contains("exit code 3")
            && m.contains("crashed on purpose"),
        "{m}"
    );
}

#[test]
fn dry_run_shows_the_acp_messages_and_the_policy() {
    let env = copilot("plain", "");
    let r = env.run(&[
        "run",
        "--agent",
        "copilot",
        "--access",
        "read-only",
        "--dry-run",
        "hello",
    ]);
    let j = r.json();
    assert_eq!(j["transport"], "acp", "{j}");
    assert_eq!(
        j["argv"],
        serde_json::json!(["copilot", "--acp", "--stdio"])
    );
    let m: Vec<&str> = j["acp"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["method"].as_str())
        .collect();
    assert_eq!(m, ["initialize", "session/new", "session/prompt"]);
    assert!(
        j["acp"]["policy"]["reject"].to_string().contains("execute"),
        "{j}"
    );
}

#[test]
fn the_transport_comes_from_the_flag_or_the_config_and_is_checked() {
    let env = Env::new();
    env.fake("qwen", "exit 0");
    env.fake("codex", "exit 0");
    // Headless by default.
    let j = env
        .run(&["run", "--agent", "qwen", "--dry-run", "x"])
        .json();
    assert_eq!(j["transport"], "headless", "{j}");
    assert_eq!(j["acp"], Value::Null);
    // The user's config picks ACP; qwen is then set to its `default` mode
    // (its ACP default, `auto`, writes without asking: measured).
    fs::write(
        env.tmp.path().join("user-config.toml"),
        "[agents.qwen]\ntransport = \"acp\"\n",
    )
    .unwrap();
    let j = env
        .run(&["run", "--agent", "qwen", "--read-only", "--dry-run", "x"])
        .json();
    assert_eq!(j["transport"], "acp", "{j}");
    assert_eq!(j["argv"], serde_json::json!(["qwen", "--acp"]));
    assert_eq!(j["acp"]["session_mode"], "default");
    let methods: Vec<&str> = j["acp"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["method"].as_str())
        .collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "session/new",
            "session/set_mode",
            "session/prompt"
        ]
    );
    // The flag wins over the config.
    let j = env
        .run(&[
            "run",
            "--agent",
            "qwen",
            "--transport",
            "headless",
            "--dry-run",
            "x",
        ])
        .json();
    assert_eq!(j["transport"], "headless");
    // An agent without that transport is a usage error, from the flag…
    let r = env.run(&[
        "run",
        "--agent",
        "codex",
        "--transport",
        "acp",
        "--dry-run",
        "x",
    ]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stdout.contains("codex has no acp transport"),
        "{}",
        r.stdout
    );
    // …and from the config, with the file and line.
    fs::write(
        env.tmp.path().join("user-config.toml"),
        "[agents.codex]\ntransport = \"acp\"\n",
    )
    .unwrap();
    let r = env.run(&["run", "--agent", "codex", "--dry-run", "x"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stdout.contains("user-config.toml:2"), "{}", r.stdout);
}

/// Over ACP every agent reports usage per prompt: a resumed qwen run must
/// not have the session's earlier usage subtracted (qwen's headless total is
/// per session, its ACP counts are not). The recorded copilot exchanges
/// stand in for qwen here (the same session id in both runs).
#[test]
fn a_resumed_acp_run_reports_its_own_usage_not_a_difference() {
    let env = copilot("plain", "");
    let fake = crate::support::acp::fake_acp(&env.fake_dir);
    let rec = |n: &str| {
        fixture(&format!("acp/copilot/{n}.acp"))
            .display()
            .to_string()
    };
    env.fake(
        "qwen",
        &format!("exec {fake} \"$(cat \"$FAKE_DIR/next\")\" --no-modes"),
    );
    fs::write(env.fake_dir.join("next"), rec("plain")).unwrap();
    let args = [
        "run",
        "--agent",
        "qwen",
        "--transport",
        "acp",
        "--timeout",
        "60s",
    ];
    let first = env.run(&[&args[..], &["hello"]].concat()).json();
    assert_eq!(first["status"], "success", "{first}");
    assert_eq!(first["usage"]["input_tokens"], 1234);
    let sid = first["session"].as_str().unwrap().to_string();
    fs::write(env.fake_dir.join("next"), rec("load")).unwrap();
    let second = env
        .run(&[&args[..], &["--resume", &sid, "again"]].concat())
        .json();
    assert_eq!(second["status"], "success", "{second}");
    assert_eq!(second["usage"]["input_tokens"], 1234, "{second}");
    assert_eq!(second["usage"]["output_tokens"], 56, "{second}");
}

/// ACP agents are fan-out candidates like any other (issue 21 × 23): each
/// runs in its own worktree (the session's `cwd` is the worktree, so the
/// agent's edit lands there and not in the user's checkout) and baton's own
/// test command picks the winner.
#[test]
fn acp_agents_are_fanout_candidates_each_in_its_own_worktree() {
    let env = copilot("write-allowed", "");
    let fake = crate::support::acp::fake_acp(&env.fake_dir);
    // kilo answers without editing.
    env.fake(
        "kilo",
        &format!(
            "exec {fake} '{}' --record \"$FAKE_DIR/kilo.jsonl\"",
            fixture("acp/copilot/plain.acp").display()
        ),
    );
    let r = env.run(&[
        "run",
        "--agents",
        "kilo,copilot",
        "--judge",
        "none",
        "--test-cmd",
        "grep -q x out.txt",
        "--timeout",
        "60s",
        "write it",
    ]);
    let j = r.json();
    assert_eq!(
        (r.code, j["status"].as_str()),
        (0, Some("success")),
        "{j}\n{}",
        r.stderr
    );
    assert_eq!(j["kind"], "fanout");
    assert_eq!(j["winner"]["agent"], "copilot", "{j}");
    let cands = j["candidates"].as_array().unwrap();
    let kilo = cands.iter().find(|c| c["agent"] == "kilo").unwrap();
    assert_eq!(kilo["eligible"], false, "{kilo}");
    // It left nothing to test: excluded for that, its tests failing too.
    assert_eq!(kilo["excluded_reason"], "it changed nothing", "{kilo}");
    assert_eq!(kilo["tests"]["passed"], false, "{kilo}");
    let cop = cands.iter().find(|c| c["agent"] == "copilot").unwrap();
    assert_eq!(
        cop["changed_files"],
        serde_json::json!(["out.txt"]),
        "{cop}"
    );
    assert_eq!(cop["session"], "d58add59-e11a-4345-b317-008369ec5d0e");
    // The edit is on the winner's branch, in its worktree, not in the checkout.
    assert!(!env.work.join("out.txt").exists());
    let wt = PathBuf::from(cop["worktree"].as_str().unwrap());
    assert_eq!(fs::read_to_string(wt.join("out.txt")).unwrap(), "x\n");
    // Each agent's session was opened in its own worktree, over ACP.
    let cwd_of = |file: &str| -> PathBuf {
        let lines = fs::read_to_string(env.fake_dir.join(file)).unwrap();
        let new = lines
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|m| m["method"] == "session/new")
            .expect("session/new");
        PathBuf::from(new["params"]["cwd"].as_str().unwrap())
    };
    assert_eq!(cwd_of("sent.jsonl"), wt.canonicalize().unwrap());
    let kilo_cwd = cwd_of("kilo.jsonl");
    assert_ne!(kilo_cwd, wt.canonicalize().unwrap());
    assert!(
        kilo_cwd.to_string_lossy().contains(".baton"),
        "{}",
        kilo_cwd.display()
    );
}
