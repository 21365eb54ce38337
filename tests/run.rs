//! `baton run` against fake CLIs: every agent's success and failure with the
//! real transcripts, what reaches the peer (argv, stdin, env, cwd), usage
//! errors, state files, recursion guard and `changed_files`.
//!
//! Supervision (timeouts, signals, hangs, big output) is in `supervise.rs`.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;

use crate::support::{Env, Run, fixture, git, record};

/// A fake CLI that records argv, stdin, environment and cwd, prints the
/// `stdout` fixture (and `stderr` fixture to stderr), and exits `code`.
pub fn fake_cli(env: &Env, name: &str, stdout: &str, stderr: Option<&str>, code: i32) {
    let out = fixture(stdout);
    assert!(out.exists(), "missing fixture {}", out.display());
    let err = stderr
        .map(|s| format!("cat '{}' >&2", fixture(s).display()))
        .unwrap_or_default();
    env.fake(
        name,
        &format!(
            "{}\nenv > \"$FAKE_DIR/{name}.env\"\npwd > \"$FAKE_DIR/{name}.pwd\"\ncat '{}'\n{err}\nexit {code}",
            record(name),
            out.display()
        ),
    );
}

/// The environment the fake `name` saw.
pub fn peer_env(env: &Env, name: &str) -> HashMap<String, String> {
    fs::read_to_string(env.fake_dir.join(format!("{name}.env")))
        .unwrap_or_else(|_| panic!("{name} was not called"))
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Whether `needle` occurs in `argv` as consecutive arguments.
fn has_seq(argv: &[String], needle: &[&str]) -> bool {
    argv.windows(needle.len()).any(|w| w == needle)
}

fn run_with_stdin(env: &Env, args: &[&str], stdin: &str) -> Run {
    let mut child = env
        .baton()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    Run::from(child.wait_with_output().unwrap())
}

fn assert_no_error(j: &serde_json::Value) {
    assert!(j["error"].is_null(), "unexpected error: {j}");
}

// ---------------------------------------------------------------- codex

#[test]
fn codex_success_reports_the_transcript() {
    let env = Env::new();
    fake_cli(
        &env,
        "codex",
        "codex/codex-exec-basic.jsonl",
        Some("codex/codex-exec-basic.stderr.txt"),
        0,
    );
    let r = env.run(&["--agent", "codex", "say", "hi"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["schema_version"], 1);
    assert_eq!(j["status"], "success");
    assert_eq!(j["agent"], "codex");
    assert_eq!(j["message"], "Hi from the mock model!");
    assert_eq!(j["session"], "01a22af9-9e2e-70e3-ad11-07b983a9c1d0");
    assert_eq!(j["usage"]["input_tokens"], 120);
    assert_eq!(j["usage"]["output_tokens"], 12);
    assert_eq!(j["usage"]["cached_input_tokens"], 0);
    assert_eq!(j["exit_code"], 0);
    assert_eq!(j["effort"], "high");
    assert_eq!(j["access"], "workspace");
    assert!(j["summary"].as_str().unwrap().contains("codex succeeded"));
    assert_no_error(&j);
    // The prompt goes on stdin, never in argv.
    assert!(env.stdin("codex").contains("say hi"));
    assert!(!env.argv("codex").iter().any(|a| a.contains("say hi")));
    assert_eq!(
        env.argv("codex"),
        [
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--sandbox",
            "workspace-write",
            "-c",
            "model_reasoning_effort=\"high\"",
            "-"
        ]
    );
    // The raw streams are logged where the result says.
    let log = j["log_path"].as_str().unwrap();
    assert_eq!(
        fs::read(log).unwrap(),
        fs::read(fixture("codex/codex-exec-basic.jsonl")).unwrap()
    );
    let stderr_log = std::path::Path::new(log).with_file_name("stderr.log");
    assert!(
        fs::read_to_string(stderr_log)
            .unwrap()
            .contains("Reading additional input from stdin")
    );
}

#[test]
fn codex_api_error_is_a_failure_with_the_readable_message() {
    let env = Env::new();
    fake_cli(&env, "codex", "codex/codex-exec-error.jsonl", None, 1);
    let r = env.run(&["say hi"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "failed");
    assert_eq!(j["exit_code"], 1);
    assert_eq!(j["error"]["kind"], "agent_error");
    assert_eq!(
        j["error"]["message"],
        "mock: scripted bad request (invalid_request_error)"
    );
    assert!(j["error"]["hint"].is_string());
    assert_eq!(j["session"], "01a22af9-b7df-79a2-bbca-8f8afc603fd9");
    assert!(j["summary"].as_str().unwrap().contains("codex failed"));
}

#[test]
fn codex_stream_failure_and_server_error() {
    for (f, msg) in [
        (
            "codex/codex-exec-stream-failed.jsonl",
            "stream disconnected before completion",
        ),
        (
            "codex/codex-exec-server-error.jsonl",
            "currently experiencing high demand",
        ),
    ] {
        let env = Env::new();
        fake_cli(&env, "codex", f, None, 1);
        let r = env.run(&["say hi"]);
        assert_eq!(r.code, 1, "{f}: {}", r.stderr);
        let j = r.json();
        assert_eq!(j["status"], "failed", "{f}");
        assert!(
            j["error"]["message"].as_str().unwrap().contains(msg),
            "{f}: {j}"
        );
    }
}

#[test]
fn codex_exit_zero_without_turn_completed_is_not_success() {
    let env = Env::new();
    env.fake(
        "codex",
        &format!(
            "{}\necho '{{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}}'\nexit 0",
            record("codex")
        ),
    );
    let r = env.run(&["say hi"]);
    assert_eq!(r.code, 1);
    let j = r.json();
    assert_eq!(j["status"], "failed");
    assert_eq!(j["exit_code"], 0);
    assert_eq!(j["error"]["kind"], "nonzero_exit");
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("without reporting success")
    );
}

#[test]
fn unparsable_output_is_a_failure_with_the_raw_output_logged() {
    let env = Env::new();
    env.fake(
        "codex",
        &format!(
            "{}\necho 'this is not json'\necho 'neither is this'\nexit 0",
            record("codex")
        ),
    );
    let r = env.run(&["say hi"]);
    assert_eq!(r.code, 1);
    let j = r.json();
    assert_eq!(j["status"], "failed");
    assert_eq!(j["error"]["kind"], "unparsable_output");
    let log = fs::read_to_string(j["log_path"].as_str().unwrap()).unwrap();
    assert_eq!(log, "this is not json\nneither is this\n");
}

#[test]
fn codex_model_alias_effort_profile_and_unknown_model_warning() {
    let env = Env::new();
    fake_cli(&env, "codex", "codex/codex-exec-basic.jsonl", None, 0);
    let r = env.run(&[
        "--model",
        "sol",
        "--effort",
        "xhigh",
        "--profile",
        "work",
        "task",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["model"], "gpt-5.6-sol");
    assert_eq!(j["effort"], "xhigh");
    let argv = env.argv("codex");
    assert!(has_seq(&argv, &["-m", "gpt-5.6-sol"]), "{argv:?}");
    assert!(has_seq(&argv, &["-c", "model_reasoning_effort=\"xhigh\""]));
    assert!(has_seq(&argv, &["--profile", "work"]));

    let r = env.run(&["--model", "gpt-7-nova", "task"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["model"], "gpt-7-nova");
    assert!(
        j["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("gpt-7-nova")),
        "{j}"
    );
    assert!(has_seq(&env.argv("codex"), &["-m", "gpt-7-nova"]));
}

#[test]
fn codex_resume_keeps_the_sandbox_and_reports_this_runs_usage() {
    let env = Env::new();
    // First turn of the thread: two model calls, 240 tokens in.
    fake_cli(&env, "codex", "codex/codex-exec-toolcall.jsonl", None, 0);
    let j = env.run(&["create out.txt"]).json();
    let session = j["session"].as_str().unwrap().to_string();
    assert_eq!(j["usage"]["input_tokens"], 240);

    // Resumed turn: codex reports the thread's cumulative 360.
    fake_cli(&env, "codex", "codex/codex-exec-resume.jsonl", None, 0);
    let r = env.run(&["--resume", &session, "follow up"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["session"], session.as_str());
    assert_eq!(j["usage"]["input_tokens"], 120, "{j}");
    assert_eq!(j["usage"]["output_tokens"], 12);
    let argv = env.argv("codex");
    let resume = argv.iter().position(|a| a == "resume").unwrap();
    let sandbox = argv.iter().position(|a| a == "--sandbox").unwrap();
    assert!(sandbox < resume, "exec flags must precede resume: {argv:?}");
    assert_eq!(argv[sandbox + 1], "workspace-write");
    assert_eq!(argv[resume + 1], session);
    assert_eq!(argv.last().unwrap(), "-");

    // A session baton has no record of: the total, with a warning.
    let other = Env::new();
    fake_cli(&other, "codex", "codex/codex-exec-resume.jsonl", None, 0);
    let j = other.run(&["--resume", &session, "follow up"]).json();
    assert_eq!(j["usage"]["input_tokens"], 360);
    assert!(
        j["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("session's total"))
    );
}

#[test]
fn codex_usage_counts_cached_tokens_inside_input() {
    let env = Env::new();
    fake_cli(&env, "codex", "codex/codex-exec-usage.jsonl", None, 0);
    let j = env.run(&["think"]).json();
    assert_eq!(j["usage"]["input_tokens"], 1000);
    assert_eq!(j["usage"]["cached_input_tokens"], 400);
    assert_eq!(j["usage"]["output_tokens"], 50);
    assert_eq!(j["usage"]["reasoning_output_tokens"], 20);
    assert!(j["usage"]["cost_usd"].is_null());
}

#[test]
fn codex_read_only_denial_is_reported() {
    let env = Env::new();
    fake_cli(&env, "codex", "codex/codex-exec-readonly.jsonl", None, 0);
    let r = env.run(&["--read-only", "try to write"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["access"], "read-only");
    let d = j["denials"].as_array().unwrap();
    assert_eq!(d.len(), 1, "{j}");
    assert_eq!(d[0]["tool"], "shell");
    assert!(
        d[0]["detail"]
            .as_str()
            .unwrap()
            .contains("Read-only file system")
    );
}

// ---------------------------------------------------------------- claude

#[test]
fn claude_success_strips_nesting_vars_and_normalises_usage() {
    let env = Env::new();
    fake_cli(&env, "claude", "claude/claude-stream.jsonl", None, 0);
    let r = env
        .baton()
        .env("CLAUDECODE", "1")
        .env("CLAUDE_CODE_ENTRYPOINT", "cli")
        .env("USER_AUTH_TOKEN_FOR_TEST", "kept")
        .args(["--agent", "claude", "--model", "opus", "say hi"])
        .output()
        .unwrap();
    let r = Run::from(r);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "success");
    assert_eq!(j["message"], "Hi from the mock server!");
    assert_eq!(j["session"], "770ccbf4-0cf4-4a19-a0da-79d885d7bddc");
    // The model the CLI reported, not the alias asked for.
    assert_eq!(j["model"], "claude-opus-5-5");
    assert_eq!(j["effort"], "xhigh");
    // claude's input_tokens excludes cache reads/writes; baton's includes them.
    assert_eq!(j["usage"]["input_tokens"], 2563);
    assert_eq!(j["usage"]["output_tokens"], 13);
    assert_eq!(j["usage"]["cost_usd"], 0.010512);
    let penv = peer_env(&env, "claude");
    assert!(!penv.contains_key("CLAUDECODE"), "{penv:?}");
    assert!(!penv.contains_key("CLAUDE_CODE_ENTRYPOINT"));
    assert_eq!(penv["USER_AUTH_TOKEN_FOR_TEST"], "kept");
    assert_eq!(penv["BATON_DEPTH"], "1");
    // Marks the peer's descendants (to stop those that escape its group).
    let token = &penv["BATON_PEER_TOKEN"];
    assert!(
        token
            .split_once('.')
            .is_some_and(|(pid, n)| pid.parse::<u32>().is_ok() && n.parse::<u32>().is_ok()),
        "{token}"
    );
    assert!(env.stdin("claude").contains("say hi"));
    let argv = env.argv("claude");
    assert!(!argv.iter().any(|a| a.contains("say hi")));
    assert!(has_seq(
        &argv,
        &["-p", "--output-format", "stream-json", "--verbose"]
    ));
    assert!(has_seq(&argv, &["--model", "opus", "--effort", "xhigh"]));
}

#[test]
fn claude_api_error_and_not_logged_in_are_failures() {
    // A 400 the provider did not explain stays `agent_error`; no login is
    // named (docs/failures.md).
    for (f, msg, kind) in [
        (
            "claude/claude-api-error.json",
            "API Error: 400 mock: scripted invalid request",
            "agent_error",
        ),
        (
            "claude/claude-no-api-key.json",
            "Not logged in · Please run /login",
            "auth_required",
        ),
    ] {
        let env = Env::new();
        fake_cli(&env, "claude", f, None, 1);
        let r = env.run(&["--agent", "claude", "say hi"]);
        assert_eq!(r.code, 1, "{f}: {}", r.stderr);
        let j = r.json();
        assert_eq!(j["status"], "failed");
        assert_eq!(j["error"]["kind"], kind, "{f}: {j}");
        assert!(
            j["error"]["message"].as_str().unwrap().contains(msg),
            "{f}: {j}"
        );
        assert!(j["message"].is_null());
    }
}

#[test]
fn claude_permission_denials_are_listed() {
    let env = Env::new();
    fake_cli(
        &env,
        "claude",
        "claude/claude-permission-denied.json",
        None,
        0,
    );
    let j = env.run(&["--agent", "claude", "write out.txt"]).json();
    assert_eq!(j["status"], "success");
    assert_eq!(j["denials"][0]["tool"], "Write");
}

#[test]
fn claude_crash_without_result_reports_stderr() {
    let env = Env::new();
    env.fake(
        "claude",
        &format!(
            "{}\necho 'Error: When using --print, --output-format=stream-json requires --verbose' >&2\nexit 1",
            record("claude")
        ),
    );
    let r = env.run(&["--agent", "claude", "x"]);
    assert_eq!(r.code, 1);
    let j = r.json();
    assert_eq!(j["status"], "failed");
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("requires --verbose")
    );
}

// ---------------------------------------------------------------- gemini (agy)

#[test]
fn agy_success_takes_the_prompt_as_last_argument() {
    let env = Env::new();
    fake_cli(&env, "agy", "agy/agy-json-success.json", None, 0);
    let r = env.run(&["--agent", "antigravity", "--raw", "add a flag"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "success");
    assert_eq!(j["agent"], "gemini");
    assert_eq!(j["message"], "Added the --verbose flag and a test for it.");
    assert_eq!(j["session"], "c0ffee00-agy0-4e1d-9a2b-5a5a5a5a5a5a");
    assert_eq!(j["usage"]["input_tokens"], 1200);
    assert_eq!(j["usage"]["cached_input_tokens"], 300);
    assert_eq!(j["model"], "gemini-3.7-flash");
    let argv = env.argv("agy");
    assert_eq!(argv[argv.len() - 2..], ["--print", "add a flag"]);
    let sandbox = argv.iter().position(|a| a == "--sandbox").unwrap();
    let skip = argv
        .iter()
        .position(|a| a == "--dangerously-skip-permissions")
        .unwrap();
    assert!(sandbox < skip, "{argv:?}");
    assert!(has_seq(&argv, &["--print-timeout", "3600s"]));
    // stdin is /dev/null: nothing to read.
    assert_eq!(env.stdin("agy"), "");
}

#[test]
fn agy_stream_result_event_is_understood() {
    let env = Env::new();
    fake_cli(&env, "agy", "agy/agy-stream.jsonl", None, 0);
    let j = env.run(&["--agent", "gemini", "x"]).json();
    assert_eq!(j["status"], "success");
    assert_eq!(j["message"], "stream done");
}

#[test]
fn agy_failures_including_exit_zero_false_success() {
    let env = Env::new();
    fake_cli(&env, "agy", "agy/agy-json-error.json", None, 1);
    let r = env.run(&["--agent", "agy", "x"]);
    assert_eq!(r.code, 1);
    let j = r.json();
    assert_eq!(j["status"], "failed");
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("quota exceeded")
    );

    // agy exits 0 on a timeout; the text gives it away.
    fake_cli(&env, "agy", "agy/agy-timed-out.txt", None, 0);
    let r = env.run(&["--agent", "agy", "x"]);
    assert_eq!(r.code, 1);
    let j = r.json();
    assert_eq!(j["status"], "failed");
    assert_eq!(j["exit_code"], 0);
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("timed out waiting for response"),
        "{j}"
    );
}

#[test]
fn agy_read_only_is_refused_before_anything_runs() {
    let env = Env::new();
    fake_cli(&env, "agy", "agy/agy-json-success.json", None, 0);
    let r = env.run(&["--agent", "gemini", "--read-only", "look"]);
    assert_eq!(r.code, 2);
    let j = r.json();
    assert_eq!(j["status"], "error");
    assert_eq!(j["error"]["kind"], "unsupported_access");
    assert!(j["error"]["hint"].as_str().unwrap().contains("gemini-cli"));
    assert!(!env.called("agy"));
}

// ---------------------------------------------------------------- zai and pi

#[test]
fn zai_runs_pi_with_the_zai_provider_and_glm() {
    let env = Env::new();
    fake_cli(&env, "pi", "pi/pi-json-basic.jsonl", None, 0);
    let r = env.run(&["--agent", "GLM", "say hi"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "success");
    assert_eq!(j["agent"], "zai");
    assert_eq!(j["message"], "Hi from the mock model!");
    assert_eq!(j["session"], "01a22af9-de6b-7251-aba9-57e300095b0c");
    assert_eq!(j["effort"], "high");
    let argv = env.argv("pi");
    assert!(has_seq(&argv, &["-p", "--mode", "json"]), "{argv:?}");
    assert!(has_seq(
        &argv,
        &[
            "--provider",
            "zai",
            "--model",
            "glm-5.2",
            "--thinking",
            "high"
        ]
    ));
    assert!(env.stdin("pi").contains("say hi"));
    assert!(!argv.iter().any(|a| a.contains("say hi")));
}

#[test]
fn zai_exit_zero_with_error_stop_reason_is_a_failure() {
    let env = Env::new();
    fake_cli(&env, "pi", "pi/pi-json-error.jsonl", None, 0);
    let r = env.run(&["--agent", "zai", "trigger an error"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let j = r.json();
    assert_eq!(j["status"], "failed");
    assert_eq!(j["exit_code"], 0);
    assert_eq!(j["error"]["kind"], "agent_error");
    assert_eq!(j["error"]["message"], "400 mock: scripted bad request");
}

#[test]
fn pi_success_with_provider_and_failure_on_server_error() {
    let env = Env::new();
    fake_cli(&env, "pi", "pi/pi-json-toolcall.jsonl", None, 0);
    let r = env.run(&[
        "--agent",
        "pi",
        "--provider",
        "openai",
        "--effort",
        "minimal",
        "x",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "success");
    assert_eq!(j["agent"], "pi");
    // Summed over the run's two model calls.
    assert_eq!(j["usage"]["input_tokens"], 240);
    assert_eq!(j["model"], "mock-model");
    let argv = env.argv("pi");
    assert!(has_seq(&argv, &["--provider", "openai"]));
    assert!(has_seq(&argv, &["--thinking", "minimal"]));

    fake_cli(&env, "pi", "pi/pi-json-server-error.jsonl", None, 0);
    let r = env.run(&["--agent", "pi", "x"]);
    assert_eq!(r.code, 1);
    let j = r.json();
    assert_eq!(j["status"], "failed");
    assert_eq!(j["error"]["message"], "500 mock: scripted server error");
}

#[test]
fn pi_not_finding_an_api_key_fails_with_its_stderr() {
    let env = Env::new();
    env.fake(
        "pi",
        &format!(
            "{}\necho 'No API key found for zai.' >&2\nexit 1",
            record("pi")
        ),
    );
    let r = env.run(&["--agent", "zai", "x"]);
    assert_eq!(r.code, 1);
    let j = r.json();
    assert_eq!(j["status"], "failed");
    assert_eq!(j["error"]["message"], "No API key found for zai.");
}

// ---------------------------------------------------------------- gemini-cli

#[test]
fn gemini_cli_success() {
    let env = Env::new();
    fake_cli(&env, "gemini", "gemini-cli/gemini-stream.jsonl", None, 0);
    let r = env.run(&["--agent", "gemini-cli", "say hi"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "success");
    assert_eq!(j["agent"], "gemini-cli");
    assert_eq!(j["message"], "Hi from the mock server!");
    assert_eq!(j["session"], "7b71b6d4-24df-4508-b0be-4f4d00af201c");
    assert_eq!(j["model"], "gemini-3.8-flash");
    assert_eq!(j["usage"]["input_tokens"], 287);
    assert!(env.stdin("gemini").contains("say hi"));
    let argv = env.argv("gemini");
    assert!(!argv.iter().any(|a| a.contains("say hi")));
    assert!(has_seq(&argv, &["--skip-trust"]));
}

#[test]
fn gemini_cli_api_errors_on_stdout_or_stderr() {
    let env = Env::new();
    fake_cli(
        &env,
        "gemini",
        "gemini-cli/gemini-stream-error.jsonl",
        None,
        144,
    );
    let r = env.run(&["--agent", "gemini-cli", "x"]);
    assert_eq!(r.code, 1);
    let j = r.json();
    assert_eq!(j["status"], "failed");
    assert_eq!(j["exit_code"], 144);
    assert_eq!(
        j["error"]["message"],
        "mock: scripted invalid request (Error)"
    );

    // Empty stdout, the error JSON after a stack trace on stderr.
    let empty = env.tmp.path().join("empty");
    fs::write(&empty, "").unwrap();
    env.fake(
        "gemini",
        &format!(
            "{}\ncat '{}' >&2\nexit 144",
            record("gemini"),
            fixture("gemini-cli/gemini-api-error.stderr.txt").display()
        ),
    );
    let r = env.run(&["--agent", "gemini-cli", "x"]);
    assert_eq!(r.code, 1);
    let j = r.json();
    assert_eq!(j["status"], "failed");
    assert_eq!(j["error"]["message"], "mock: scripted invalid request");

    // Untrusted folder: exit 55 and a sentence on stderr.
    env.fake(
        "gemini",
        &format!(
            "{}\ncat '{}' >&2\nexit 55",
            record("gemini"),
            fixture("gemini-cli/gemini-untrusted.stderr.txt").display()
        ),
    );
    let j = env.run(&["--agent", "gemini-cli", "x"]).json();
    assert_eq!(j["status"], "failed");
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not running in a trusted directory")
    );
}

// ---------------------------------------------------------------- access mapping

#[test]
fn access_modes_reach_every_cli_as_its_own_switches() {
    // (agent flag, binary, access, switches that must appear in argv)
    let cases: &[(&str, &str, &str, &[&str])] = &[
        ("codex", "codex", "read-only", &["--sandbox", "read-only"]),
        (
            "codex",
            "codex",
            "workspace",
            &["--sandbox", "workspace-write"],
        ),
        (
            "codex",
            "codex",
            "full",
            &["--dangerously-bypass-approvals-and-sandbox"],
        ),
        (
            "claude",
            "claude",
            "read-only",
            &["--tools", "Read,Grep,Glob", "--strict-mcp-config"],
        ),
        (
            "claude",
            "claude",
            "workspace",
            &[
                "--permission-mode",
                "acceptEdits",
                "--settings",
                r#"{"sandbox":{"enabled":true,"autoAllowBashIfSandboxed":true}}"#,
            ],
        ),
        (
            "claude",
            "claude",
            "full",
            &["--dangerously-skip-permissions"],
        ),
        (
            "gemini",
            "agy",
            "workspace",
            &[
                "--mode",
                "accept-edits",
                "--sandbox",
                "--dangerously-skip-permissions",
            ],
        ),
        (
            "gemini",
            "agy",
            "full",
            &["--mode", "accept-edits", "--dangerously-skip-permissions"],
        ),
        ("zai", "pi", "read-only", &["--tools", "read,grep,find,ls"]),
        ("pi", "pi", "read-only", &["--tools", "read,grep,find,ls"]),
        (
            "gemini-cli",
            "gemini",
            "read-only",
            &["--approval-mode", "default"],
        ),
        (
            "gemini-cli",
            "gemini",
            "workspace",
            &["--approval-mode", "auto_edit"],
        ),
        ("gemini-cli", "gemini", "full", &["--approval-mode", "yolo"]),
    ];
    let env = Env::new();
    for bin in ["codex", "claude", "agy", "pi", "gemini"] {
        env.fake(bin, &format!("{}\nexit 0", record(bin)));
    }
    for (agent, bin, access, switches) in cases {
        let _ = fs::remove_file(env.fake_dir.join(format!("{bin}.argv")));
        let r = env.run(&["--agent", agent, "--access", access, "x"]);
        assert!(r.code == 1, "{agent} {access}: {}{}", r.stdout, r.stderr);
        assert_eq!(r.json()["access"], *access);
        let argv = env.argv(bin);
        assert!(
            has_seq(&argv, switches),
            "{agent} --access {access}: {switches:?} not in {argv:?}"
        );
    }
    // The shorthands.
    env.run(&["--read-only", "x"]);
    assert!(has_seq(&env.argv("codex"), &["--sandbox", "read-only"]));
    env.run(&["--full-access", "x"]);
    assert!(has_seq(
        &env.argv("codex"),
        &["--dangerously-bypass-approvals-and-sandbox"]
    ));
    // Sandbox-free agents never get the stronger switches by accident.
    env.run(&["--agent", "pi", "--access", "workspace", "x"]);
    assert!(!env.argv("pi").contains(&"--tools".to_string()));
    env.run(&["--agent", "agy", "--access", "full", "x"]);
    assert!(!env.argv("agy").contains(&"--sandbox".to_string()));
}

#[test]
fn claude_full_access_as_root_sets_is_sandbox() {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let env = Env::new();
    fake_cli(&env, "claude", "claude/claude-stream.jsonl", None, 0);
    let r = env
        .baton()
        .env_remove("IS_SANDBOX")
        .args(["--agent", "claude", "--full-access", "x"])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(0));
    let penv = peer_env(&env, "claude");
    assert_eq!(
        penv.get("IS_SANDBOX").map(String::as_str),
        root.then_some("1")
    );
}

// ---------------------------------------------------------------- usage errors

#[test]
fn unknown_flag_is_a_usage_error_with_json_on_stdout() {
    let env = Env::new();
    fake_cli(&env, "codex", "codex/codex-exec-basic.jsonl", None, 0);
    for args in [
        &["--frobnicate", "fix it"][..],
        &["fix", "it", "--frobnicate"][..],
        &["run", "--frobnicate", "x"][..],
    ] {
        let r = env.run(args);
        assert_eq!(r.code, 2, "{args:?}");
        let j = r.json();
        assert_eq!(j["status"], "error");
        assert_eq!(j["error"]["kind"], "usage");
        assert_eq!(j["exit_code"], 2);
        assert!(
            j["error"]["message"]
                .as_str()
                .unwrap()
                .contains("--frobnicate"),
            "{j}"
        );
        assert!(r.stderr.contains("--frobnicate"));
    }
    assert!(!env.called("codex"));
    // After `--` it is task text.
    let r = env.run(&["--", "--frobnicate", "this"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(env.stdin("codex").contains("--frobnicate this"));
}

/// Issue 29 §7: the JSON error carries clap's whole message (what is
/// missing) and its suggestion, not only its first line.
#[test]
fn a_usage_error_in_json_carries_what_is_missing_and_the_suggestion() {
    let env = Env::new();
    let r = env.run(&["wait"]);
    assert_eq!(r.code, 2);
    let j = r.json();
    assert_eq!(
        j["error"]["message"],
        "the following required arguments were not provided: <ID>"
    );
    assert!(
        j["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("usage: baton wait <ID>"),
        "{j}"
    );
    let r = env.run(&["--agnet", "codex", "fix it"]);
    assert_eq!(r.code, 2);
    let j = r.json();
    assert_eq!(j["error"]["message"], "unexpected argument '--agnet' found");
    assert!(
        j["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("a similar argument exists: '--agent'"),
        "{j}"
    );
    let j = env.run(&["worktree"]).json();
    assert_eq!(
        j["error"]["message"],
        "a command is missing: one of list, remove"
    );
}

#[test]
fn usage_errors_exit_2_and_run_nothing() {
    let env = Env::new();
    fake_cli(&env, "codex", "codex/codex-exec-basic.jsonl", None, 0);
    fake_cli(&env, "pi", "pi/pi-json-basic.jsonl", None, 0);
    let cases: &[(&[&str], &str)] = &[
        (&["--agent", "gpt", "x"], "unknown agent"),
        (&["--access", "root", "x"], "unknown access mode"),
        (&["--effort", "max", "x"], "effort `max`"),
        (&["--agent", "zai", "--model", "glm-4.7", "x"], "glm-5.2"),
        (
            &["--agent", "gemini-cli", "--effort", "high", "x"],
            "effort",
        ),
        (&["--timeout", "10x", "x"], "invalid duration"),
        (&["--timeout", "0", "x"], "--timeout"),
        (&["--agent", "claude", "--profile", "p", "x"], "--profile"),
        (&["--provider", "openai", "x"], "--provider"),
        (&["--resume=-x", "x"], "session id"),
        (&["--cwd", "/definitely/not/here", "x"], "--cwd"),
        (&["--read-only", "--full-access", "x"], "cannot be used"),
    ];
    for (args, needle) in cases {
        let r = env.run(args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stdout);
        let j = r.json();
        assert_eq!(j["status"], "error", "{args:?}");
        let msg = j["error"]["message"].as_str().unwrap();
        assert!(msg.contains(needle), "{args:?}: {msg}");
    }
    assert!(!env.called("codex"));
    assert!(!env.called("pi"));
}

/// Issue 29 §7: `baton stauts ID` must not start a paid run on the task
/// "stauts ID". Bare words starting a keystroke away from a command are
/// refused; prose, `--`, `run` and words far from any command are tasks.
#[test]
fn a_misspelled_command_is_refused_and_a_real_task_is_not() {
    let env = Env::new();
    fake_cli(&env, "codex", "codex/codex-exec-basic.jsonl", None, 0);
    for (args, name) in [
        (&["stauts", "1m96abcdefghj"][..], "status"),
        (&["jbos"][..], "jobs"),
        (&["wiat", "1m96abcdefghj"][..], "wait"),
        (
            &["--agent", "codex", "reslt", "1m96abcdefghj"][..],
            "result",
        ),
    ] {
        let r = env.run(args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stdout);
        let j = r.json();
        assert_eq!(j["error"]["kind"], "usage");
        let msg = j["error"]["message"].as_str().unwrap();
        assert!(
            msg.contains(&format!("did you mean `baton {name}`?")),
            "{args:?}: {msg}"
        );
        let hint = j["error"]["hint"].as_str().unwrap();
        assert!(hint.contains("`baton -- "), "{hint}");
        assert!(r.stderr.contains(&format!("did you mean `baton {name}`?")));
    }
    let r = env.run(&["--text", "stauts", "1m96abcdefghj"]);
    assert_eq!((r.code, r.stdout.as_str()), (2, ""));
    assert!(
        r.stderr.contains("did you mean `baton status`?"),
        "{}",
        r.stderr
    );
    assert!(!env.called("codex"), "a typo started the peer");

    for (args, task) in [
        (&["fix the status bar"][..], "fix the status bar"),
        (
            &["--", "stauts", "1m96abcdefghj"][..],
            "stauts 1m96abcdefghj",
        ),
        (&["run", "jbos"][..], "jbos"),
        (&["refactor"][..], "refactor"),
    ] {
        let r = env.run(args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert!(env.stdin("codex").contains(task), "{args:?}");
    }
    let r = run_with_stdin(&env, &[], "stauts");
    assert_eq!(r.code, 0, "a task on stdin: {}", r.stderr);
}

#[test]
fn no_task_is_a_usage_error() {
    let env = Env::new();
    fake_cli(&env, "codex", "codex/codex-exec-basic.jsonl", None, 0);
    for r in [
        env.run(&[]),
        env.run(&["run"]),
        env.run(&["--agent", "codex"]),
        run_with_stdin(&env, &[], "  \n"),
    ] {
        assert_eq!(r.code, 2);
        let j = r.json();
        assert_eq!(j["error"]["kind"], "usage");
        assert_eq!(j["error"]["message"], "no task given");
        assert!(j["error"]["hint"].as_str().unwrap().contains("stdin"));
    }
    assert!(!env.called("codex"));
}

#[test]
fn text_mode_usage_error_prints_nothing_on_stdout() {
    let env = Env::new();
    let r = env.run(&["--text", "--frobnicate"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.stdout, "");
    assert!(r.stderr.contains("--frobnicate"));
}

#[test]
fn missing_cli_exits_127_with_an_install_hint() {
    let env = Env::new();
    for (agent, bin, hint) in [
        ("codex", "codex", "npm install -g @openai/codex"),
        (
            "claude",
            "claude",
            "npm install -g @anthropic-ai/claude-code",
        ),
        ("gemini", "agy", "Antigravity"),
        ("zai", "pi", "@mariozechner/pi-coding-agent"),
        ("gemini-cli", "gemini", "@google/gemini-cli"),
    ] {
        // Only the (empty) fake directory on PATH: no real CLI can be found.
        let r = Run::from(
            env.baton()
                .env("PATH", &env.bin)
                .args(["--agent", agent, "x"])
                .output()
                .unwrap(),
        );
        assert_eq!(r.code, 127, "{agent}: {}", r.stdout);
        let j = r.json();
        assert_eq!(j["status"], "error");
        assert_eq!(j["error"]["kind"], "agent_not_installed");
        assert!(j["error"]["message"].as_str().unwrap().contains(bin));
        assert!(
            j["error"]["hint"].as_str().unwrap().contains(hint),
            "{agent}: {j}"
        );
        assert!(r.stderr.contains("hint"));
    }
    // No run directory is left behind for a run that never started.
    assert!(!env.state.exists());
}

// ---------------------------------------------------------------- task, prompt

#[test]
fn the_brief_wraps_the_task_unless_raw() {
    let env = Env::new();
    fake_cli(&env, "codex", "codex/codex-exec-basic.jsonl", None, 0);
    env.run(&["fix", "the", "test"]);
    let p = env.stdin("codex");
    assert!(p.contains("<task>\nfix the test\n</task>"), "{p}");
    assert!(p.contains("Do not delegate"));
    assert!(p.contains(
        "do not run baton, codex, claude, agy, pi, gemini, opencode, qwen, copilot, kilo, cline or \
         nanocoder."
    ));
    assert!(p.contains(&format!(
        "Work in this directory: {}",
        env.work.canonicalize().unwrap().display()
    )));
    assert!(p.contains("concise report"));

    env.run(&["--raw", "fix", "the", "test"]);
    assert_eq!(env.stdin("codex"), "fix the test");

    // The prompt is kept beside the logs.
    let j = env.run(&["--raw", "again"]).json();
    let dir = std::path::Path::new(j["log_path"].as_str().unwrap())
        .parent()
        .unwrap()
        .to_path_buf();
    assert_eq!(fs::read_to_string(dir.join("prompt.txt")).unwrap(), "again");
}

#[test]
fn prompt_file_and_piped_stdin() {
    let env = Env::new();
    fake_cli(&env, "codex", "codex/codex-exec-basic.jsonl", None, 0);
    let pf = env.work.join("task.md");
    fs::write(&pf, "task from a file\nsecond line\n").unwrap();
    let r = env.run(&["--raw", "--prompt-file", "task.md"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(env.stdin("codex"), "task from a file\nsecond line\n");

    let r = run_with_stdin(&env, &["--raw", "--prompt-file", "-"], "from stdin dash");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(env.stdin("codex"), "from stdin dash");

    let r = run_with_stdin(&env, &["--raw"], "piped task");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(env.stdin("codex"), "piped task");

    // Words win over piped stdin (a host may leave stdin open).
    let r = run_with_stdin(&env, &["--raw", "words"], "ignored");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(env.stdin("codex"), "words");

    let r = env.run(&["--prompt-file", "task.md", "and", "words"]);
    assert_eq!(r.code, 2);
    let r = env.run(&["--prompt-file", "missing.md"]);
    assert_eq!(r.code, 2);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("missing.md")
    );
}

#[test]
fn dry_run_prints_argv_env_and_prompt_and_runs_nothing() {
    let env = Env::new();
    fake_cli(&env, "claude", "claude/claude-stream.jsonl", None, 0);
    let r = env.run(&[
        "--agent",
        "claude",
        "--dry-run",
        "--read-only",
        "--timeout",
        "90s",
        "review",
        "it",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["dry_run"], true);
    assert_eq!(j["program"], "claude");
    let argv: Vec<&str> = j["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(argv[0], "claude");
    assert!(has_seq(
        &argv.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        &["--tools", "Read,Grep,Glob", "--strict-mcp-config"]
    ));
    assert_eq!(j["env_set"]["BATON_DEPTH"], "1");
    assert_eq!(
        j["env_set_per_run"],
        serde_json::json!(["BATON_PEER_TOKEN"])
    );
    assert_eq!(
        j["env_remove"],
        serde_json::json!(["CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"])
    );
    assert!(
        j["prompt"]
            .as_str()
            .unwrap()
            .contains("<task>\nreview it\n</task>")
    );
    assert_eq!(j["stdin"], j["prompt"]);
    assert_eq!(j["timeout_ms"], 90_000);
    assert_eq!(j["idle_timeout_ms"], 900_000);
    assert!(!env.called("claude"));
    assert!(!env.work.join(".baton").exists());

    // Works without the CLI installed: it is for inspecting.
    let r = Run::from(
        env.baton()
            .env("PATH", env.tmp.path())
            .args(["--agent", "gemini", "--dry-run", "--raw", "x"])
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    let argv = j["argv"].as_array().unwrap();
    assert_eq!(argv[argv.len() - 1], "x");
    assert_eq!(argv[argv.len() - 2], "--print");
    assert!(j["stdin"].is_null());
}

#[test]
fn text_mode_prints_for_people() {
    let env = Env::new();
    fake_cli(&env, "codex", "codex/codex-exec-basic.jsonl", None, 0);
    let r = env.run(&["--text", "say hi"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("codex succeeded in "), "{}", r.stdout);
    assert!(r.stdout.contains("status:   success"));
    assert!(
        r.stdout
            .contains("session:  01a22af9-9e2e-70e3-ad11-07b983a9c1d0")
    );
    assert!(r.stdout.contains("\nHi from the mock model!\n"));
    assert!(serde_json::from_str::<serde_json::Value>(&r.stdout).is_err());
}

#[test]
fn cwd_option_sets_where_the_peer_works() {
    let env = Env::new();
    fake_cli(&env, "codex", "codex/codex-exec-basic.jsonl", None, 0);
    let sub = env.work.join("sub dir");
    fs::create_dir(&sub).unwrap();
    let r = env.run(&["--cwd", "sub dir", "x"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    let sub = sub.canonicalize().unwrap();
    assert_eq!(j["cwd"], sub.display().to_string());
    let pwd = fs::read_to_string(env.fake_dir.join("codex.pwd")).unwrap();
    assert_eq!(pwd.trim_end(), sub.display().to_string());
    // Logs go to baton's state directory, never into the work tree.
    assert!(
        j["log_path"]
            .as_str()
            .unwrap()
            .starts_with(&env.state.display().to_string())
    );
    assert!(!sub.join(".baton").exists());
}

// ---------------------------------------------------------------- state files

#[test]
fn state_is_private_and_ignored_by_git() {
    let env = Env::new();
    env.git_init();
    fake_cli(&env, "codex", "codex/codex-exec-basic.jsonl", None, 0);
    fs::create_dir(env.work.join("nested")).unwrap();
    let r = env.run(&["--cwd", "nested", "x"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    // In baton's state directory, in the folder of the repository (keyed
    // by its top, not by the cwd), never in the work tree.
    assert!(!env.work.join(".baton").exists());
    assert!(!env.work.join("nested/.baton").exists());
    let project = env.records("runs").parent().unwrap().to_path_buf();
    assert_eq!(
        fs::read_to_string(project.join("root")).unwrap().trim_end(),
        env.work.canonicalize().unwrap().display().to_string()
    );
    let log = std::path::PathBuf::from(j["log_path"].as_str().unwrap());
    let run_dir = log.parent().unwrap();
    assert_eq!(run_dir.parent().unwrap(), project.join("runs"));
    let mode = |p: &std::path::Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    for d in [project.as_path(), &project.join("runs"), run_dir] {
        assert_eq!(mode(d), 0o700, "{}", d.display());
    }
    let mut files = 0;
    for e in fs::read_dir(run_dir).unwrap() {
        let p = e.unwrap().path();
        assert_eq!(mode(&p), 0o600, "{}", p.display());
        files += 1;
    }
    assert_eq!(
        files, 4,
        "prompt.txt, stdout.log, stderr.log, result.json (the run's lock is an flock on the \
         folder itself: no file)"
    );
    let saved: serde_json::Value =
        serde_json::from_slice(&fs::read(run_dir.join("result.json")).unwrap()).unwrap();
    assert_eq!(saved, j);
    // `git status` stays clean.
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(&env.work)
        .args(["status", "--porcelain", "--untracked-files=all"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(j["changed_files"], serde_json::json!([]));
}

// ---------------------------------------------------------------- recursion guard

#[test]
fn recursion_guard_refuses_a_nested_delegation() {
    let env = Env::new();
    fake_cli(&env, "codex", "codex/codex-exec-basic.jsonl", None, 0);
    let r = Run::from(
        env.baton()
            .env("BATON_DEPTH", "1")
            .args(["x"])
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 2);
    let j = r.json();
    assert_eq!(j["error"]["kind"], "recursion_limit");
    assert!(
        j["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("BATON_MAX_DEPTH")
    );
    assert!(!env.called("codex"));

    // The user may raise the limit; the peer then sees the next depth.
    let r = Run::from(
        env.baton()
            .env("BATON_DEPTH", "1")
            .env("BATON_MAX_DEPTH", "2")
            .args(["x"])
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(peer_env(&env, "codex")["BATON_DEPTH"], "2");

    // A first-level run hands BATON_DEPTH=1 to its peer, which the guard stops.
    env.run(&["x"]);
    assert_eq!(peer_env(&env, "codex")["BATON_DEPTH"], "1");
}

// ---------------------------------------------------------------- changed_files

#[test]
fn changed_files_counts_only_what_the_run_changed() {
    let env = Env::new();
    env.git_init();
    let w = &env.work;
    for f in ["a.txt", "b.txt", "c.txt", "d.txt"] {
        fs::write(w.join(f), format!("{f}\n")).unwrap();
    }
    fs::write(w.join(".gitignore"), "ignored.log\n").unwrap();
    git(w, &["add", "."]);
    git(w, &["commit", "-qm", "files"]);
    // Dirty before the run: a.txt (left alone), b.txt (changed again),
    // untracked u.txt (left alone), untracked v.txt (changed again).
    fs::write(w.join("a.txt"), "a dirty\n").unwrap();
    fs::write(w.join("b.txt"), "b dirty\n").unwrap();
    fs::write(w.join("u.txt"), "u\n").unwrap();
    fs::write(w.join("v.txt"), "v\n").unwrap();
    let transcript = fixture("codex/codex-exec-basic.jsonl");
    env.fake(
        "codex",
        &format!(
            "{}\necho 'b dirty again' > b.txt\necho 'c changed' > c.txt\nrm d.txt\n\
             echo v2 > v.txt\nmkdir -p new/deep\necho n > new/deep/n.txt\n\
             echo log > ignored.log\nprintf 'a dirty\\n' > a.txt\ncat '{}'",
            record("codex"),
            transcript.display()
        ),
    );
    let r = env.run(&["x"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(
        j["changed_files"],
        serde_json::json!(["b.txt", "c.txt", "d.txt", "new/deep/n.txt", "v.txt"])
    );
    assert!(j["summary"].as_str().unwrap().contains("5 files changed"));
    assert!(
        !j["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("git"))
    );
}

#[test]
fn changed_files_include_the_peers_commits_and_paths_from_the_top() {
    let env = Env::new();
    env.git_init();
    fs::create_dir(env.work.join("sub")).unwrap();
    let transcript = fixture("codex/codex-exec-basic.jsonl");
    env.fake(
        "codex",
        &format!(
            "{}\necho x > x.txt\ngit add x.txt\n\
             GIT_AUTHOR_NAME=p GIT_AUTHOR_EMAIL=p@p GIT_COMMITTER_NAME=p GIT_COMMITTER_EMAIL=p@p \
             git commit -qm peer\necho y > ../README\ncat '{}'",
            record("codex"),
            transcript.display()
        ),
    );
    let r = env.run(&["--cwd", "sub", "x"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.json()["changed_files"],
        serde_json::json!(["README", "sub/x.txt"])
    );
}

#[test]
fn outside_git_changed_files_is_empty_with_a_warning() {
    let env = Env::new();
    fake_cli(&env, "codex", "codex/codex-exec-basic.jsonl", None, 0);
    let j = env.run(&["x"]).json();
    assert_eq!(j["changed_files"], serde_json::json!([]));
    assert!(
        j["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("not in a git repository"))
    );
}

#[test]
fn changed_files_in_a_linked_worktree() {
    // `.git` is a file there; the top level is still the directory holding it.
    let env = Env::new();
    env.git_init();
    let wt = env.tmp.path().join("linked");
    git(&env.work, &["worktree", "add", "-q", wt.to_str().unwrap()]);
    fs::write(wt.join("pre.txt"), "dirty before\n").unwrap();
    let transcript = fixture("codex/codex-exec-basic.jsonl");
    env.fake(
        "codex",
        &format!(
            "{}\necho changed > README\ncat '{}'",
            record("codex"),
            transcript.display()
        ),
    );
    let r = Run::from(env.baton().current_dir(&wt).args(["x"]).output().unwrap());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["changed_files"], serde_json::json!(["README"]));
    // Its records are those of the linked worktree (its own top level).
    let project = std::path::PathBuf::from(j["log_path"].as_str().unwrap())
        .ancestors()
        .nth(3)
        .unwrap()
        .to_path_buf();
    assert_eq!(
        fs::read_to_string(project.join("root")).unwrap().trim_end(),
        wt.canonicalize().unwrap().display().to_string()
    );
}

#[test]
fn a_prompt_larger_than_the_pipe_reaches_the_peer_whole() {
    let env = Env::new();
    fake_cli(&env, "codex", "codex/codex-exec-basic.jsonl", None, 0);
    // 3 MiB: more than a pipe holds, so it is written while the peer reads.
    let big: String = "0123456789abcdef\n".repeat(3 << 16);
    fs::write(env.work.join("big.md"), &big).unwrap();
    let r = env.run(&["--raw", "--prompt-file", "big.md"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        env.stdin("codex") == big,
        "the prompt arrived cut or altered"
    );
}
