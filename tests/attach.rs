//! `baton attach` against fake CLIs: the exact interactive argv per CLI and
//! access mode, the working directory (the worktree for a worktree job), the
//! exit code passed through, and refusals; and the `handoff` of `run --async`.

use std::fs;
use std::time::Duration;

use serde_json::Value;

use crate::support::{self, Env, Run, fixture, record, wait_for};

const LONG: Duration = Duration::from_secs(20);

/// `run --async ARGS`, waited for: the job id and its result.
fn finished_job(env: &Env, args: &[&str]) -> (String, Value) {
    let mut a = vec!["run", "--async"];
    a.extend_from_slice(args);
    let r = env.run(&a);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let id = r.json()["job_id"].as_str().unwrap().to_string();
    let w = env.run(&["wait", &id]);
    (id, w.json())
}

fn dry(env: &Env, id: &str) -> Value {
    let r = env.run(&["attach", id, "--dry-run"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    r.json()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn attach_resumes_each_cli_interactively_with_the_jobs_access() {
    let env = Env::new();
    let work = env.work.canonicalize().unwrap();
    // (fake binary, fixture, run flags, expected argv after the program, with S for the session)
    let cases: &[(&str, &str, &[&str], &[&str])] = &[
        (
            "codex",
            "codex/codex-exec-basic.jsonl",
            &[
                "--agent",
                "codex",
                "--read-only",
                "-m",
                "gpt-5.5",
                "-e",
                "low",
            ],
            &[
                "resume",
                "--sandbox",
                "read-only",
                "--ask-for-approval",
                "on-request",
                "-c",
                "approvals_reviewer=\"user\"",
                "-m",
                "gpt-5.5",
                "-c",
                "model_reasoning_effort=\"low\"",
                "S",
            ],
        ),
        (
            "codex",
            "codex/codex-exec-basic.jsonl",
            &["--agent", "codex", "--full-access"],
            &[
                "resume",
                "--dangerously-bypass-approvals-and-sandbox",
                "-c",
                "model_reasoning_effort=\"high\"",
                "S",
            ],
        ),
        (
            "claude",
            "claude/claude-stream.jsonl",
            &["--agent", "claude"],
            &[
                "--resume",
                "S",
                "--effort",
                "xhigh",
                "--permission-mode",
                "acceptEdits",
                "--settings",
                r#"{"sandbox":{"enabled":true,"autoAllowBashIfSandboxed":true}}"#,
            ],
        ),
        (
            "claude",
            "claude/claude-stream.jsonl",
            &["--agent", "claude", "--read-only"],
            &[
                "--resume",
                "S",
                "--effort",
                "xhigh",
                "--tools",
                "Read,Grep,Glob",
                "--strict-mcp-config",
            ],
        ),
        (
            "pi",
            "pi/pi-json-basic.jsonl",
            &["--agent", "pi", "--read-only"],
            &["--session", "S", "--tools", "read,grep,find,ls"],
        ),
        (
            "pi",
            "pi/pi-json-basic.jsonl",
            &["--agent", "zai", "--full-access"],
            &[
                "--provider",
                "zai",
                "--model",
                "glm-5.2",
                "--thinking",
                "high",
                "--session",
                "S",
            ],
        ),
        (
            "gemini",
            "gemini-cli/gemini-stream.jsonl",
            &["--agent", "gemini-cli", "--full-access"],
            &["--skip-trust", "--approval-mode", "yolo", "--resume", "S"],
        ),
        (
            "gemini",
            "gemini-cli/gemini-stream.jsonl",
            &["--agent", "gemini-cli", "--read-only"],
            &["--skip-trust", "--approval-mode", "plan", "--resume", "S"],
        ),
        (
            "opencode",
            "opencode/opencode-run-json-basic.jsonl",
            &["--agent", "opencode", "--full-access"],
            &["--auto", "--session", "S"],
        ),
        (
            "opencode",
            "opencode/opencode-run-json-basic.jsonl",
            &["--agent", "opencode", "--read-only"],
            &["--agent", "baton-read-only", "--session", "S"],
        ),
        (
            "qwen",
            "qwen/qwen-stream-plain.jsonl",
            &["--agent", "qwen", "--read-only"],
            &["--approval-mode", "plan", "--resume", "S"],
        ),
    ];
    for (bin, transcript, flags, want) in cases {
        env.replay(bin, transcript, 0);
        let mut args = flags.to_vec();
        args.push("first turn");
        let (id, result) = finished_job(&env, &args);
        let session = result["session"]
            .as_str()
            .unwrap_or_else(|| panic!("{bin}: no session in {result}"));
        let j = dry(&env, &id);
        let mut expected = vec![bin.to_string()];
        expected.extend(
            want.iter()
                .map(|a| if *a == "S" { session } else { a }.to_string()),
        );
        assert_eq!(strings(&j["argv"]), expected, "{flags:?}");
        assert_eq!(j["session"], session);
        assert_eq!(j["job_id"], id.as_str());
        assert_eq!(j["cwd"], work.to_str().unwrap(), "{flags:?}");
        // The session may delegate only as deep as the job could.
        assert_eq!(j["env_set"]["BATON_DEPTH"], "1", "{flags:?}");
    }
    // opencode's read-only agent travels in its inline config, as for the job.
    env.replay("opencode", "opencode/opencode-run-json-basic.jsonl", 0);
    let (id, _) = finished_job(&env, &["--agent", "opencode", "--read-only", "x"]);
    let cfg = dry(&env, &id)["env_set"]["OPENCODE_CONFIG_CONTENT"].clone();
    assert!(cfg.as_str().unwrap().contains("baton-read-only"), "{cfg}");
    // claude must not see that it runs inside Claude Code.
    env.replay("claude", "claude/claude-stream.jsonl", 0);
    let (id, _) = finished_job(&env, &["--agent", "claude", "x"]);
    assert!(strings(&dry(&env, &id)["env_remove"]).contains(&"CLAUDECODE".to_string()));
}

#[test]
fn attach_becomes_the_cli_in_the_jobs_directory_and_exits_with_its_code() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    fs::create_dir(env.work.join("sub")).unwrap();
    let (id, result) = finished_job(&env, &["--agent", "codex", "--cwd", "sub", "x"]);
    let session = result["session"].as_str().unwrap().to_string();
    // Now the "interactive" CLI: records argv, cwd and environment, exits 7.
    env.fake(
        "codex",
        &format!(
            "{}\npwd > \"$FAKE_DIR/codex.pwd\"\necho \"${{BATON_DEPTH:-unset}}\" > \"$FAKE_DIR/codex.depth\"\nexit 7",
            record("codex")
        ),
    );
    // Run from elsewhere in the project: the cwd is the job's, not the caller's.
    let r = Run::from(env.baton().args(["attach", &id]).output().unwrap());
    assert_eq!(r.code, 7, "baton exits with the CLI's code: {}", r.stderr);
    assert_eq!(r.stdout, "", "baton prints nothing of its own on success");
    assert_eq!(
        env.argv("codex"),
        [
            "resume",
            "--sandbox",
            "workspace-write",
            "--ask-for-approval",
            "on-request",
            "-c",
            "model_reasoning_effort=\"high\"",
            &session
        ]
    );
    let pwd = fs::read_to_string(env.fake_dir.join("codex.pwd")).unwrap();
    assert_eq!(
        pwd.trim(),
        env.work
            .join("sub")
            .canonicalize()
            .unwrap()
            .to_str()
            .unwrap()
    );
    assert_eq!(
        fs::read_to_string(env.fake_dir.join("codex.depth"))
            .unwrap()
            .trim(),
        "1"
    );
}

#[test]
fn attach_refuses_a_running_job_a_job_without_session_and_agy() {
    let env = Env::new();
    // Running: the peer waits on a gate.
    env.fake(
        "claude",
        &format!(
            "{}\nwhile [ ! -e \"$FAKE_DIR/gate\" ]; do sleep 0.02; done\ncat '{}'",
            record("claude"),
            fixture("claude/claude-stream.jsonl").display()
        ),
    );
    let r = env.run(&["run", "--async", "--agent", "claude", "x"]);
    let running = r.json()["job_id"].as_str().unwrap().to_string();
    assert!(wait_for(LONG, || env.called("claude")));
    for args in [
        vec!["attach", &running],
        vec!["attach", &running, "--dry-run"],
    ] {
        let r = env.run(&args);
        assert_eq!(r.code, 2, "{}", r.stdout);
        let e = &r.json()["error"];
        assert_eq!(e["kind"], "job_running", "{e}");
        let hint = e["hint"].as_str().unwrap();
        assert!(hint.contains(&format!("baton wait {running}")), "{hint}");
        assert!(hint.contains(&format!("baton cancel {running}")), "{hint}");
    }
    fs::write(env.fake_dir.join("gate"), "").unwrap();
    env.run(&["wait", &running]);
    assert_eq!(env.run(&["attach", &running, "--dry-run"]).code, 0);

    // No session: the peer failed before starting one.
    env.fake("codex", "cat > /dev/null\necho boom >&2\nexit 1");
    let (id, _) = finished_job(&env, &["--agent", "codex", "x"]);
    let r = env.run(&["attach", &id]);
    assert_eq!(r.code, 2);
    assert_eq!(r.json()["error"]["kind"], "no_session");
    assert!(
        r.json()["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("baton logs")
    );

    // agy has no interactive resume: refused with what to do instead.
    env.replay("agy", "agy/agy-json-success.json", 0);
    let (id, result) = finished_job(&env, &["--agent", "gemini", "x"]);
    assert!(result["session"].is_string(), "{result}");
    let r = env.run(&["attach", &id]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.json()["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("baton continue")
    );

    // Unknown and malformed ids, as for every job command.
    assert_eq!(env.run(&["attach", "aaaaaaaaaaaaa"]).code, 4);
    assert_eq!(env.run(&["attach", "../x"]).code, 2);
}

#[test]
fn attach_to_a_worktree_job_works_in_its_worktree() {
    let env = Env::new();
    env.git_init();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    let git = |args: &[&str]| {
        Run::from(
            env.baton()
                .args(args)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", env.tmp.path())
                .output()
                .unwrap(),
        )
    };
    let r = git(&["run", "--async", "--worktree", "--agent", "codex", "x"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let id = r.json()["job_id"].as_str().unwrap().to_string();
    assert_eq!(git(&["wait", &id]).code, 0);
    let r = git(&["attach", &id, "--dry-run"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let wt = env.work.join(".baton/worktrees").join(&id);
    assert_eq!(
        r.json()["cwd"],
        wt.canonicalize().unwrap().to_str().unwrap()
    );
    // The linked worktree's git metadata stays writable, as for the job.
    let argv = strings(&r.json()["argv"]);
    assert!(argv.contains(&"--add-dir".to_string()), "{argv:?}");
    // A worktree removed since is refused, not silently replaced by the checkout.
    assert_eq!(git(&["worktree", "remove", &id]).code, 0);
    let r = git(&["attach", &id, "--dry-run"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("gone")
    );
}

#[test]
fn run_async_prints_the_handoff_commands() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    let r = env.run(&["run", "--async", "--agent", "codex", "x"]);
    let j = r.json();
    let id = j["job_id"].as_str().unwrap();
    let h = &j["handoff"];
    assert_eq!(h["job_id"], id);
    assert_eq!(h["watch"], "baton watch");
    assert_eq!(h["logs"], format!("baton logs --follow {id}"));
    assert_eq!(h["wait"], format!("baton wait {id}"));
    assert_eq!(
        h["continue"],
        format!("baton continue {id} \"<next instruction>\"")
    );
    assert_eq!(h["cancel"], format!("baton cancel {id}"));
    assert_eq!(h["attach"], format!("baton attach {id}"));
    assert!(
        h["text"]
            .as_str()
            .unwrap()
            .contains(&format!("baton attach {id}"))
    );
    env.run(&["wait", id]);
    // The stored result has no hand-off: it is advice for the moment of start.
    assert!(env.run(&["result", id]).json().get("handoff").is_none());

    // `continue` starts a job too, and says the same for it.
    let c = env.run(&["continue", id, "more"]).json();
    let id2 = c["job_id"].as_str().unwrap();
    assert_eq!(c["handoff"]["attach"], format!("baton attach {id2}"));
    env.run(&["wait", id2]);

    // --text prints the block for a person.
    let t = env.run(&["run", "--async", "--text", "--agent", "codex", "y"]);
    assert!(t.stdout.contains("take over: baton attach"), "{}", t.stdout);
    let _ = support::BATON;
}
