//! The cases of the contract test (`json.rs`): each group makes real output
//! with fake CLIs and hands every JSON line to `Contract::check`, which
//! validates it against the published schema and counts its `error.kind`.
//! A new kind needs a case here (or an `EXEMPT` reason in `json.rs`).

use std::fs;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::ask::{Advisers, claude_reply, codex_reply, good_advice};
use crate::json::{Contract, Shape};
use crate::support::{Env, Run, fixture, git, record, wait_for};

const LONG: Duration = Duration::from_secs(30);

/// A fake that records its call, marks `started`, waits for the `gate`
/// file, then prints `transcript`.
fn gated(env: &Env, name: &str, transcript: &str) {
    env.fake(
        name,
        &format!(
            "{}\n: > \"$FAKE_DIR/{name}.started\"\nwhile [ ! -e \"$FAKE_DIR/gate\" ]; do sleep 0.02; done\ncat '{}'",
            record(name),
            fixture(transcript).display()
        ),
    );
}

/// A codex that starts session `thread`, marks `started`, and works on
/// until it is stopped.
fn session_then_wait(env: &Env, thread: &str) {
    env.fake(
        "codex",
        &format!(
            "{}\necho '{{\"type\":\"thread.started\",\"thread_id\":\"{thread}\"}}'\n: > \"$FAKE_DIR/codex.started\"\nexec sleep 30",
            record("codex")
        ),
    );
    let _ = fs::remove_file(env.fake_dir.join("codex.started"));
}

fn spawn(env: &Env, args: &[&str]) -> Child {
    env.baton()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(mut c: Child) -> Run {
    assert!(
        wait_for(LONG, || c.try_wait().unwrap().is_some()),
        "baton did not exit"
    );
    Run::from(c.wait_with_output().unwrap())
}

fn job_state(env: &Env, id: &str) -> Value {
    let p = env.records("jobs").join(id).join("state.json");
    fs::read(&p)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null)
}

/// `run --async …`: the start line (with its `handoff`) and the job id.
fn start(c: &Contract, case: &str, env: &Env, args: &[&str]) -> String {
    let mut a = vec!["run", "--async"];
    a.extend_from_slice(args);
    let r = env.run(&a);
    assert_eq!(r.code, 0, "{case}: {}\n{}", r.stdout, r.stderr);
    let v = c.check(case, Shape::Result, &r);
    assert_eq!(v["status"], "running", "{case}: {v}");
    let id = v["job_id"].as_str().unwrap().to_string();
    assert_eq!(
        v["handoff"]["wait"],
        format!("baton wait {id}"),
        "{case}: {v}"
    );
    id
}

/// Foreground runs: every way a peer can end.
pub fn runs(c: &Contract) {
    let env = Env::new();
    env.git_init();
    env.replay("codex", "codex/codex-exec-usage.jsonl", 0);
    let v = c.check("codex success", Shape::Result, &env.run(&["x"]));
    assert_eq!(v["status"], "success");
    c.check_value("run (run-or-fanout)", Shape::Named("run-or-fanout"), &v);
    let v = c.check("agents", Shape::Named("agents"), &env.run(&["agents"]));
    assert!(v["agents"].as_array().is_some_and(|a| !a.is_empty()), "{v}");
    let v = c.check("doctor", Shape::Named("doctor"), &env.run(&["doctor"]));
    assert!(v["checks"].as_array().is_some_and(|a| !a.is_empty()), "{v}");
    c.check(
        "doctor of one agent",
        Shape::Named("doctor"),
        &env.run(&["doctor", "--agent", "codex"]),
    );

    env.replay("claude", "claude/claude-stream.jsonl", 0);
    let v = c.check(
        "claude success",
        Shape::Result,
        &env.run(&["--agent", "claude", "x"]),
    );
    assert!(v["usage"]["cost_usd"].is_number(), "{v}");

    env.replay("claude", "claude/claude-permission-denied.json", 0);
    let v = c.check(
        "read-only with denials",
        Shape::Result,
        &env.run(&["--agent", "claude", "--read-only", "x"]),
    );
    assert_eq!(v["access"], "read-only");
    assert!(!v["denials"].as_array().unwrap().is_empty(), "{v}");

    // `--network provider`: the proxy refuses a host the peer asks for,
    // and the result's `sandbox` lists it (where this machine has a sandbox).
    let answer = crate::support::fixture("pi/pi-json-basic.jsonl");
    env.fake(
        "pi",
        &format!(
            "cat > /dev/null\n/usr/bin/python3 -c 'import os, socket\nh, p = os.environ[\"HTTPS_PROXY\"].split(\"//\")[1].rsplit(\":\", 1)\ns = socket.create_connection((h, int(p)), 5)\ns.sendall(b\"CONNECT refused.example:443 HTTP/1.1\\r\\n\\r\\n\")\ns.recv(64)' || true\ncat '{}'",
            answer.display()
        ),
    );
    let v = c.check(
        "provider network, a host refused",
        Shape::Result,
        &Run::from(
            env.baton()
                .env("BATON_SANDBOX", "auto")
                .args(["--agent", "pi", "--network", "provider", "x"])
                .output()
                .unwrap(),
        ),
    );
    if v["sandbox"]["by"] != "none" {
        assert_eq!(
            v["sandbox"]["refused_hosts"][0], "refused.example:443",
            "{v}"
        );
    }

    // An agent over ACP that never answers `initialize`.
    let acp = crate::acp::copilot("plain", "--hang-init");
    let r = Run::from(
        acp.baton()
            .env("BATON_ACP_INIT_TIMEOUT_MS", "1000")
            .args(["run", "--agent", "copilot", "--timeout", "60s", "x"])
            .output()
            .unwrap(),
    );
    c.expect_kind("acp handshake", Shape::Result, &r, "acp_handshake_timeout");
    let acp = crate::acp::copilot("plain", "");
    c.check(
        "copilot over acp",
        Shape::Result,
        &acp.run(&["--agent", "copilot", "x"]),
    );

    env.replay("claude", "claude/claude-api-error.json", 1);
    c.expect_kind(
        "agent error",
        Shape::Result,
        &env.run(&["--agent", "claude", "x"]),
        "agent_error",
    );

    env.fake(
        "codex",
        "cat > /dev/null\necho '{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}'",
    );
    c.expect_kind(
        "no success",
        Shape::Result,
        &env.run(&["x"]),
        "nonzero_exit",
    );

    env.fake("codex", "cat > /dev/null\necho 'this is not json'");
    c.expect_kind(
        "unparsable",
        Shape::Result,
        &env.run(&["x"]),
        "unparsable_output",
    );

    env.fake("codex", "cat > /dev/null\nexec sleep 30");
    c.expect_kind(
        "timeout",
        Shape::Result,
        &env.run(&["--timeout", "300ms", "x"]),
        "timeout",
    );
    c.expect_kind(
        "idle timeout",
        Shape::Result,
        &env.run(&["--idle-timeout", "300ms", "x"]),
        "idle_timeout",
    );

    // Ctrl-C: the peer's session can be resumed with `--resume`.
    session_then_wait(&env, "t-f");
    let child = spawn(&env, &["--agent", "codex", "x"]);
    assert!(wait_for(LONG, || env
        .fake_dir
        .join("codex.started")
        .exists()));
    // SAFETY: plain syscall on the baton we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let r = finish(child);
    let v = c.expect_kind("ctrl-c", Shape::Result, &r, "cancelled");
    assert_eq!(r.code, 130);
    let hint = v["error"]["hint"].as_str().unwrap();
    assert!(hint.contains("`--resume t-f`"), "{hint}");

    // What it cost: estimated from the price table where the CLI says
    // nothing; a budget, and a call stopped as it streams past it.
    env.replay("codex", "codex/codex-exec-usage.jsonl", 0);
    let v = c.check(
        "estimated cost",
        Shape::Result,
        &env.run(&["--model", "gpt-5.4", "--max-usd", "5", "x"]),
    );
    assert_eq!(v["usage"]["cost_estimated"], true, "{v}");
    assert_eq!(v["spending"]["exceeded"], false, "{v}");
    crate::spend::streaming_pi(&env, 3, 1000, 0.0);
    let v = c.expect_kind(
        "over budget",
        Shape::Result,
        &env.run(&[
            "--agent",
            "pi",
            "--budget-tokens",
            "1500",
            "--timeout",
            "20s",
            "x",
        ]),
        "budget_exceeded",
    );
    assert_eq!(v["spending"]["exceeded"], true, "{v}");

    // A rate-limited codex hands the task to claude: `attempts`.
    crate::fallback::fake_printing(&env, "codex", crate::fallback::CODEX_RATE_LIMITED, 1);
    env.replay("claude", "claude/claude-stream.jsonl", 0);
    let v = c.check(
        "fell back",
        Shape::Result,
        &env.run(&["--agent", "codex", "--fallback", "claude", "x"]),
    );
    assert_eq!(v["attempts"][0]["then"], "fallback", "{v}");

    // Found on PATH, cannot be started.
    env.fake("pi", "");
    fs::write(env.bin.join("pi"), "#!/nonexistent/interpreter\n").unwrap();
    c.expect_kind(
        "spawn failed",
        Shape::Error,
        &env.run(&["--agent", "pi", "x"]),
        "spawn_failed",
    );
}

/// Tool errors: baton could not do its job (`baton schema error`).
pub fn tool_errors(c: &Contract) {
    let env = Env::new();
    env.git_init();
    let e = |case: &str, args: &[&str], kind: &str| {
        c.expect_kind(case, Shape::Error, &env.run(args), kind)
    };
    e("usage", &["--frobnicate"], "usage");
    e(
        "agy read-only",
        &["--agent", "gemini", "--read-only", "x"],
        "unsupported_access",
    );
    e(
        "not installed",
        &["--agent", "codex", "x"],
        "agent_not_installed",
    );
    e("no such job", &["wait", "0000000000000"], "job_not_found");
    e(
        "max-usd without a price",
        &["--agent", "qwen", "--max-usd", "1", "x"],
        "unpriced_model",
    );
    e("bad job id", &["wait", "../etc"], "invalid_job_id");
    let r = Run::from(
        env.baton()
            .env("BATON_DEPTH", "1")
            .args(["x"])
            .output()
            .unwrap(),
    );
    c.expect_kind("recursion", Shape::Error, &r, "recursion_limit");

    // Claude Code's sandbox, by its marker (tests/host_sandbox.rs has
    // Codex's, under a real seccomp filter).
    let r = Run::from(
        env.baton()
            .env("SANDBOX_RUNTIME", "1")
            .env("CLAUDECODE", "1")
            .args(["--agent", "codex", "x"])
            .output()
            .unwrap(),
    );
    c.expect_kind("host sandbox", Shape::Error, &r, "host_sandbox");

    e(
        "unknown worktree",
        &["worktree", "remove", "0000000000000"],
        "worktree_not_found",
    );
    {
        // A model that would reach the CLI's argv as an option; a state
        // directory others may write.
        use std::os::unix::fs::PermissionsExt;
        let env = Env::new();
        env.git_init();
        env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
        let r = Run::from(
            env.baton()
                .env("BATON_MODEL", "--yolo")
                .args(["--agent", "codex", "x"])
                .output()
                .unwrap(),
        );
        c.expect_kind("unsafe model", Shape::Error, &r, "unsafe_value");
        let r = Run::from(
            env.baton()
                .env("BATON_MAX_ACCESS", "read-only")
                .args(["--agent", "codex", "--access", "workspace", "x"])
                .output()
                .unwrap(),
        );
        c.expect_kind("access over the cap", Shape::Error, &r, "access_capped");
        fs::create_dir_all(&env.state).unwrap();
        fs::set_permissions(&env.state, fs::Permissions::from_mode(0o777)).unwrap();
        let r = env.run(&["--agent", "codex", "x"]);
        c.expect_kind("unsafe state dir", Shape::Error, &r, "unsafe_state_dir");
        fs::set_permissions(&env.state, fs::Permissions::from_mode(0o700)).unwrap();
    }

    // Config: a bad project file; `config init` over a file, and where a
    // directory cannot be made.
    fs::write(env.work.join("baton.toml"), "nonsense = 1\n").unwrap();
    e("bad config", &["x"], "config");
    fs::remove_file(env.work.join("baton.toml")).unwrap();
    let user = env.tmp.path().join("user-config.toml");
    fs::write(&user, "").unwrap();
    e(
        "config init over a file",
        &["config", "init"],
        "config_exists",
    );
    let r = Run::from(
        env.baton()
            .env("BATON_CONFIG", env.work.join("README/baton.toml"))
            .args(["config", "init"])
            .output()
            .unwrap(),
    );
    c.expect_kind("config dir is a file", Shape::Error, &r, "io");

    // A job whose record is damaged.
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    let id = start(c, "async for corrupt", &env, &["x"]);
    c.check("wait", Shape::Result, &env.run(&["wait", &id]));
    let state = env.records("jobs").join(&id).join("state.json");
    fs::write(&state, "{\"version\":1,\"id\":").unwrap();
    e("corrupt job", &["status", &id], "corrupt_job");

    // attach: a running job, a job without a session.
    gated(&env, "claude", "claude/claude-stream.jsonl");
    let running = start(c, "async to attach", &env, &["--agent", "claude", "x"]);
    assert!(wait_for(LONG, || env.called("claude")));
    e("attach running", &["attach", &running], "job_running");
    fs::write(env.fake_dir.join("gate"), "").unwrap();
    c.check("wait attach", Shape::Result, &env.run(&["wait", &running]));
    env.fake("codex", "cat > /dev/null\necho boom >&2\nexit 1");
    let id = start(c, "async without session", &env, &["x"]);
    let v = c.check("wait no session", Shape::Result, &env.run(&["wait", &id]));
    assert_eq!(v["status"], "failed", "{v}");
    e("attach no session", &["attach", &id], "no_session");

    // ask refusals, before any adviser runs.
    fs::write(env.work.join(".env"), "TOKEN=x\n").unwrap();
    e(
        "credential file",
        &["ask", "--agent", "claude", "--file", ".env", "q"],
        "credential_file",
    );
    e(
        "packet too large",
        &[
            "ask",
            "--agent",
            "claude",
            "--max-chars",
            "10",
            "a question longer than ten",
        ],
        "packet_too_large",
    );
    e(
        "agy adviser",
        &["ask", "--agent", "gemini", "q"],
        "unsupported_access",
    );

    // setup: a manifest baton did not write.
    let home = env.tmp.path().join("home");
    fs::create_dir_all(home.join(".local/state/baton")).unwrap();
    fs::write(home.join(".local/state/baton/setup.json"), "garbage").unwrap();
    let r = Run::from(
        env.baton()
            .env("HOME", &home)
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .args(["setup", "claude"])
            .output()
            .unwrap(),
    );
    c.expect_kind("setup manifest", Shape::Error, &r, "setup_manifest");
}

/// Background jobs: the start line, the result, a continued job, a job
/// cancelled, lost, and one in a worktree whose runner died.
pub fn jobs(c: &Contract) {
    let env = Env::new();
    env.git_init();
    env.replay("claude", "claude/claude-stream.jsonl", 0);
    let id = start(c, "async", &env, &["--agent", "claude", "x"]);
    let v = c.check("job result", Shape::Result, &env.run(&["wait", &id]));
    assert_eq!(v["job_id"], id.as_str());
    c.check_value("wait (job-result)", Shape::Named("job-result"), &v);
    let s = c.check(
        "status",
        Shape::Named("job-status"),
        &env.run(&["status", &id]),
    );
    assert_eq!(s["job_id"], id.as_str(), "{s}");
    assert!(v.get("handoff").is_none(), "{v}");
    let r = env.run(&["continue", &id, "and then"]);
    let v = c.check("continue", Shape::Result, &r);
    c.check_value(
        "continue (run-or-fanout)",
        Shape::Named("run-or-fanout"),
        &v,
    );
    let next = v["job_id"].as_str().unwrap().to_string();
    assert_eq!(v["handoff"]["job_id"], next.as_str());
    c.check(
        "continued result",
        Shape::Result,
        &env.run(&["wait", &next]),
    );
    c.check("result", Shape::Result, &env.run(&["result", &next]));

    // Cancelled after the peer started a session: the hint names the tool
    // that continues a job (`baton continue`, not `--resume`).
    session_then_wait(&env, "t-c");
    let id = start(c, "async to cancel", &env, &["x"]);
    assert!(wait_for(LONG, || env
        .fake_dir
        .join("codex.started")
        .exists()));
    let r = env.run(&["cancel", &id]);
    let v = c.expect_kind("job cancelled", Shape::Result, &r, "cancelled");
    c.check_value("cancel (job-result)", Shape::Named("job-result"), &v);
    assert_eq!(v["session"], "t-c", "{v}");
    let hint = v["error"]["hint"].as_str().unwrap();
    assert!(hint.contains(&format!("baton continue {id} ")), "{hint}");
    assert!(!hint.contains("--resume"), "{hint}");

    // Lost, in a worktree: its runner killed while the peer works.
    gated(&env, "codex", "codex/codex-exec-basic.jsonl");
    let _ = fs::remove_file(env.fake_dir.join("codex.started"));
    let id = start(c, "async in a worktree", &env, &["--worktree", "x"]);
    assert!(wait_for(LONG, || env
        .fake_dir
        .join("codex.started")
        .exists()));
    assert!(wait_for(LONG, || job_state(&env, &id)["runner_pid"].is_u64()));
    let pid = job_state(&env, &id)["runner_pid"].as_i64().unwrap() as i32;
    // SAFETY: plain syscall on the runner this test started.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let v = c.expect_kind("lost", Shape::Result, &env.run(&["wait", &id]), "lost");
    assert_eq!(v["worktree"]["interrupted"], true, "{v}");
    fs::write(env.fake_dir.join("gate"), "").unwrap();
    // Every job above (succeeded, continued, cancelled, lost) in one list.
    let v = c.check("jobs", Shape::Named("jobs"), &env.run(&["jobs", "--all"]));
    assert!(v["jobs"].as_array().unwrap().len() >= 4, "{v}");
    let v = c.check("jobs", Shape::Named("jobs"), &env.run(&["jobs"]));
    assert_eq!(v["hidden"], 0, "{v}");
    // The same work across repositories: every row names its repository.
    let v = c.check(
        "jobs --all-repos",
        Shape::Named("jobs-all-repos"),
        &env.run(&["jobs", "--all-repos", "--all"]),
    );
    assert!(v["jobs"].as_array().unwrap().len() >= 4, "{v}");
    assert!(
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["repo"].is_string()),
        "{v}"
    );
    assert_eq!(v["repos"][0]["status"], "ok", "{v}");
}

/// `run --worktree`: a branch with reverted and carried files and a check;
/// a peer that tampers; a peer that hides a change from git's index.
pub fn worktrees(c: &Contract) {
    let env = Env::new();
    env.git_init();
    fs::write(env.work.join("notes.txt"), "the user's own\n").unwrap();
    let peer = |body: &str| {
        env.fake(
            "codex",
            &format!(
                "{}\n{body}\ncat '{}'",
                record("codex"),
                fixture("codex/codex-exec-basic.jsonl").display()
            ),
        );
    };
    peer("echo mine > allowed.txt\necho not yours >> README");
    let r = env.run(&[
        "--worktree",
        "--include-dirty",
        "--allow",
        "allowed.txt",
        "--test-cmd",
        "true",
        "x",
    ]);
    let v = c.check("worktree", Shape::Result, &r);
    assert_eq!(v["worktree"]["reverted"], json!(["README"]), "{v}");
    assert_eq!(v["worktree"]["carried"], json!(["notes.txt"]), "{v}");
    assert_eq!(v["verification"]["passed"], true, "{v}");

    peer("rm -rf .git\necho peer > peer.txt");
    let v = c.expect_kind(
        "tampered",
        Shape::Result,
        &env.run(&["--worktree", "x"]),
        "worktree_tampered",
    );
    assert_eq!(v["worktree"]["tampered"], true, "{v}");

    // The peer holds the branch's ref lock: baton's commit fails.
    peer(
        "echo x >> README\n\
         touch \"$(git rev-parse --path-format=absolute --git-common-dir)/refs/heads/$(git symbolic-ref --short HEAD).lock\"",
    );
    let v = c.expect_kind(
        "commit failed",
        Shape::Result,
        &env.run(&["--worktree", "x"]),
        "worktree_commit_failed",
    );
    assert!(v["worktree"]["uncommitted"].is_array(), "{v}");

    // A peer that hides its change from git's index (issue 20, item 5):
    // whatever baton makes of that, it is a result the schema describes.
    peer("echo changed >> README\ngit update-index --skip-worktree README\necho y > new.txt");
    c.check(
        "skip-worktree",
        Shape::Result,
        &env.run(&["--worktree", "x"]),
    );
}

/// `ask`: one adviser (with a task budget), a repair, advice that stays
/// invalid, several advisers with one missing, the budget used up.
pub fn asks(c: &Contract) {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("claude", "").install("codex", "");
    a.reply(
        "claude",
        1,
        &claude_reply(Some("c-1"), "x", Some(good_advice())),
        0,
    );
    let ask = |args: &[&str]| {
        Run::from(
            env.baton()
                .env("BATON_ASK_BUDGET", "2")
                .arg("ask")
                .args(args)
                .output()
                .unwrap(),
        )
    };
    fs::write(env.work.join("notes.md"), "one\ntwo\n").unwrap();
    let v = c.check(
        "ask",
        Shape::Result,
        &ask(&[
            "--agent",
            "claude",
            "--task-id",
            "t1",
            "--file",
            "notes.md",
            "q",
        ]),
    );
    assert_eq!(v["advice"], good_advice(), "{v}");
    assert_eq!(v["context"]["files"][0]["path"], "notes.md", "{v}");
    c.check_value("ask (the MCP tool's schema)", Shape::Named("ask"), &v);
    assert_eq!(v["budget"]["used"], 1, "{v}");

    let mut partial = good_advice();
    partial.as_object_mut().unwrap().remove("confidence");
    a.reply("codex", 1, &codex_reply("t-9", &partial.to_string(), 10), 0)
        .reply(
            "codex",
            2,
            &codex_reply("t-9", &good_advice().to_string(), 20),
            0,
        );
    let v = c.check(
        "ask repaired",
        Shape::Result,
        &ask(&["--agent", "codex", "q"]),
    );
    assert_eq!(v["repair"]["mode"], "resume", "{v}");

    a.reply("claude", 2, &claude_reply(Some("c-2"), "retry it", None), 0)
        .reply(
            "claude",
            3,
            &claude_reply(Some("c-2"), "just retry", None),
            0,
        );
    let v = c.expect_kind(
        "ask invalid",
        Shape::Result,
        &ask(&["--agent", "claude", "q"]),
        "invalid_advice",
    );
    assert!(v["advice_errors"].is_array(), "{v}");

    a.reply(
        "codex",
        3,
        &codex_reply("t", &good_advice().to_string(), 1),
        0,
    )
    .reply(
        "claude",
        4,
        &claude_reply(Some("c-4"), "x", Some(good_advice())),
        0,
    );
    let r = ask(&["--agents", "codex,claude,pi", "--task-id", "t1", "q"]);
    let v = c.check("ask several", Shape::Envelope, &r);
    assert_eq!(v["status"], "partial", "{v}");
    c.check_value(
        "ask several (the MCP tool's schema)",
        Shape::Named("ask"),
        &v,
    );
    assert_eq!(v["results"][2]["error"]["kind"], "agent_not_installed");
    assert_eq!(v["budget"]["used"], 2, "{v}");
    c.expect_kind(
        "budget used up",
        Shape::Error,
        &ask(&["--agent", "claude", "--task-id", "t1", "q"]),
        "budget_exhausted",
    );
}

/// A council's result and its refusals.
pub fn councils(c: &Contract) {
    use crate::council::{AGENTS, council, good_scenario, review, setup};
    let (env, fake) = setup();
    let r = council(&env, &["discuss", "--members", "codex", "q?"]);
    c.expect_kind("quorum", Shape::Error, &r, "quorum_unreachable");

    // Every member can also write (the plan's one file) and review.
    let mut j = good_scenario().to_json();
    for a in AGENTS {
        j["agents"][a]["implement"] =
            json!([{"edits": [{"path": "a.txt", "content": "one\ntwo\nlocked\n"}]}]);
        j["agents"][a]["review"] = json!([{"json": review("approve", json!([]))}]);
    }
    fake.write_json(&j);
    let r = council(
        &env,
        &[
            "discuss",
            "--members",
            "codex,claude,pi",
            "--seed",
            "7",
            "q?",
        ],
    );
    let v = c.check("council discuss", Shape::Council, &r);
    assert_eq!(v["status"], "done", "{v}");

    let r = council(&env, &["plan", "--members", "codex,claude,pi", "lock it"]);
    let v = c.check("council plan", Shape::Council, &r);
    assert_eq!(v["status"], "awaiting_approval", "{v}");
    let id = v["council_id"].as_str().unwrap().to_string();
    let sha = v["plan"]["sha256"].as_str().unwrap().to_string();
    // The job commands accept a council's id.
    let s = c.check(
        "council status",
        Shape::Named("job-status"),
        &env.run(&["status", &id]),
    );
    assert_eq!(s["council_id"], id.as_str(), "{s}");
    let r = c.check(
        "council result",
        Shape::Named("job-result"),
        &env.run(&["result", &id]),
    );
    assert_eq!(r["council_id"], id.as_str(), "{r}");
    let path = PathBuf::from(v["plan"]["path"].as_str().unwrap());
    let approve = |case: &str, sha: &str, kind: &str| {
        let r = council(&env, &["approve", &id, "--plan-sha256", sha]);
        c.expect_kind(case, Shape::Error, &r, kind);
    };
    approve("wrong hash", &"0".repeat(64), "plan_sha256_mismatch");
    let original = fs::read(&path).unwrap();
    fs::write(&path, b"{\"edited\": true}").unwrap();
    approve("plan edited", &sha, "plan_changed");
    fs::write(&path, &original).unwrap();
    fs::write(env.work.join("b.txt"), "x").unwrap();
    git(&env.work, &["add", "."]);
    git(&env.work, &["commit", "-qm", "moved"]);
    approve("base moved", &sha, "base_moved");
    git(&env.work, &["reset", "-q", "--hard", "HEAD~1"]);

    // Another council holds the repository's writing lock.
    let lock = env.records("councils").join("lock");
    let held = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock)
        .unwrap();
    held.lock().unwrap();
    let r = council(&env, &["approve", &id, "--plan-sha256", &sha]);
    c.check("approved", Shape::Council, &r);
    let r = council(&env, &["execute", &id]);
    c.expect_kind("council busy", Shape::Error, &r, "council_busy");
    // Unlocked, not only closed: a child another test thread forks now
    // keeps a copy of the descriptor (and so the lock) until it execs.
    held.unlock().unwrap();
    drop(held);
    let r = council(&env, &["execute", &id]);
    let v = c.check("council executed", Shape::Council, &r);
    assert!(v["worktree"].is_object(), "{v}");
    assert!(!v["reviews"].as_array().unwrap().is_empty(), "{v}");
}

/// `run --agents`: a winner chosen by judges (one candidate tampers), no
/// eligible candidate, a background fan-out (its start line and result),
/// read-only answers side by side, and none answering.
pub fn fanouts(c: &Contract) {
    use crate::fanout::{TEST, setup, write_answer};
    use crate::support::council::{Scenario, Stage, Step};
    let (env, fake) = setup();
    let review = json!({"candidates": [
        {"label": "A", "verdict": "accept", "summary": "fine", "findings": [
            {"severity": "nit", "file": "answer.txt", "line": 1, "description": "terse"}]}],
        "ranking": ["A"]});
    fake.write(
        &Scenario::new()
            .on("codex", Stage::Implement, write_answer("good\n"))
            .on(
                "claude",
                Stage::Implement,
                write_answer("good, longer\nanswer\n"),
            )
            .on(
                "pi",
                Stage::Implement,
                write_answer("good\n").edit(".git/config", "[core]\n\tfsmonitor = true\n"),
            )
            .all(
                &["codex", "claude", "pi"],
                Stage::FanoutReview,
                Step::json(review),
            ),
    );
    let fan = |extra: &[&str]| {
        let mut a = vec!["run", "--test-cmd", TEST];
        a.extend_from_slice(extra);
        a.push("write the answer");
        env.run(&a)
    };
    let v = c.check(
        "fan-out",
        Shape::Fanout,
        &fan(&["--agents", "codex,claude,pi"]),
    );
    assert_eq!(v["status"], "success", "{v}");
    // pi's candidate tampered, yet pi judges the other two (and, shown two
    // labels, gives the one-label answer: abstained after its repair).
    let outcomes: Vec<&str> = v["judge"]["reviews"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["ok", "ok", "abstained"], "{v}");
    let r = fan(&["--agents", "codex,claude", "--async"]);
    let v = c.check("fan-out --async", Shape::Fanout, &r);
    c.check_value(
        "fan-out --async (run-or-fanout)",
        Shape::Named("run-or-fanout"),
        &v,
    );
    let id = v["job_id"].as_str().unwrap().to_string();
    let s = c.check(
        "fan-out status",
        Shape::Named("job-status"),
        &env.run(&["status", &id]),
    );
    assert_eq!(s["fanout_id"], id.as_str(), "{s}");
    let v = c.check("fan-out wait", Shape::Fanout, &env.run(&["wait", &id]));
    c.check_value("fan-out wait (job-result)", Shape::Named("job-result"), &v);
    c.check("fan-out in jobs", Shape::Named("jobs"), &env.run(&["jobs"]));
    // A candidate that moves its sibling's tested branch (`branch_moved`).
    let base = crate::worktree::git(&env.work, &["rev-parse", "HEAD"]);
    fake.write(
        &Scenario::new()
            .on("codex", Stage::Implement, write_answer("good\n"))
            .on(
                "claude",
                Stage::Implement,
                write_answer("good\n").sh(&crate::fanout::move_sibling_branch(base.trim())),
            ),
    );
    let v = c.check(
        "fan-out, a branch moved",
        Shape::Fanout,
        &fan(&["--agents", "codex,claude", "--judge", "none"]),
    );
    assert_eq!(v["candidates"][0]["branch_moved"], true, "{v}");
    fake.write(&Scenario::new().all(
        &["codex", "claude"],
        Stage::Implement,
        write_answer("bad\n"),
    ));
    c.expect_kind(
        "no eligible candidate",
        Shape::Fanout,
        &fan(&[
            "--agents",
            "codex,claude",
            "--until-green",
            "1",
            "--pick",
            "first-green",
        ]),
        "no_eligible_candidate",
    );
    // A candidate whose codex is rate-limited, served by claude in a fresh
    // worktree (`agent_requested`, `attempts`), under a dollar budget that
    // then holds back the repair round of the other (`spending`,
    // `budget_exceeded` when nothing is eligible).
    fake.write(
        &Scenario::new()
            .on(
                "codex",
                Stage::Implement,
                Step::fail("exceeded retry limit, last status: 429 Too Many Requests"),
            )
            .on(
                "claude",
                Stage::Implement,
                write_answer("good\n").cost(0.01),
            ),
    );
    let v = c.check(
        "fan-out with a fallback",
        Shape::Fanout,
        &fan(&[
            "--agents",
            "codex:gpt-5.4",
            "--fallback",
            "claude",
            "--max-usd",
            "1",
        ]),
    );
    assert_eq!(v["candidates"][0]["agent_requested"], "codex", "{v}");
    assert_eq!(v["candidates"][0]["attempts"][0]["then"], "fallback", "{v}");
    fake.write(&Scenario::new().on("claude", Stage::Implement, write_answer("bad\n").cost(0.05)));
    let v = c.expect_kind(
        "fan-out over its budget",
        Shape::Fanout,
        &fan(&[
            "--agents",
            "claude",
            "--until-green",
            "1",
            "--max-usd",
            "0.08",
        ]),
        "budget_exceeded",
    );
    assert_eq!(v["spending"]["exceeded"], true, "{v}");
    // codex reports tokens, not dollars: the cost is estimated from the
    // price table for a model it lists.
    fake.write(&Scenario::new().on("codex", Stage::Implement, Step::say("A").usage(1000, 100)));
    let v = c.check(
        "read-only fan-out",
        Shape::Fanout,
        &env.run(&["run", "--agents", "codex:gpt-5.4", "--read-only", "which?"]),
    );
    assert_eq!(v["mode"], "read-only", "{v}");
    assert!(v.to_string().contains("\"cost_estimated\":true"), "{v}");
    fake.write(&Scenario::new().on("codex", Stage::Implement, Step::fail("down")));
    c.expect_kind(
        "no answer",
        Shape::Fanout,
        &env.run(&["run", "--agents", "codex", "--read-only", "which?"]),
        "no_answer",
    );
    // A candidate's named failure, with the wait the provider asked for:
    // pi's recorded 429.
    let raw = fs::read_to_string(crate::support::fixture(
        "failures/pi/rate_limit.no-retry.stdout",
    ))
    .unwrap();
    fake.write(&Scenario::new().on("pi", Stage::Implement, Step::stdout(&raw)));
    let v = c.expect_kind(
        "rate-limited candidate",
        Shape::Fanout,
        &env.run(&["run", "--agents", "pi", "--read-only", "which?"]),
        "no_answer",
    );
    let e = &v["candidates"][0]["error"];
    assert_eq!(e["kind"], "rate_limited", "{v}");
    assert_eq!(e["retry_after_s"], 7, "{v}");
}

/// A job whose result cannot be stored: a real full disk (a tmpfs in a
/// private mount namespace, as `state.rs` makes one).
pub fn full_disk(c: &Contract) {
    let env = Env::new();
    let big = "y".repeat(600_000);
    let transcript = format!(
        "{}\n{}\n",
        json!({"type":"thread.started","thread_id":"t-full"}),
        json!({"type":"item.completed","item":{"id":"i","type":"agent_message","text": big}}),
    ) + "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}\n";
    fs::write(env.fake_dir.join("answer.jsonl"), transcript).unwrap();
    env.fake(
        "codex",
        "cat > /dev/null\nhead -c 100000000 /dev/zero > \"$BATON_STATE_DIR/filler\" 2>/dev/null || true\ncat \"$FAKE_DIR/answer.jsonl\"",
    );
    let Some(mut cmd) = env.in_small_tmpfs(
        1024,
        r#""$BATON" run --async --agent codex "fill it" > "$FAKE_DIR/start.json" || exit 98
id=$(sed 's/.*"job_id":"\([0-9a-z]*\)".*/\1/' "$FAKE_DIR/start.json")
"$BATON" wait "$id" --timeout 30s > "$FAKE_DIR/wait.json""#,
    ) else {
        c.skipped.lock().unwrap().insert(
            "result_not_stored".into(),
            "needs a full disk: `unshare -Urm` (user namespaces) is not available".into(),
        );
        return;
    };
    let r = Run::from(cmd.output().unwrap());
    let read = |f: &str| fs::read_to_string(env.fake_dir.join(f)).unwrap_or_default();
    let wait = read("wait.json");
    assert_eq!(r.code, 1, "wait: {wait}\nstderr {}", r.stderr);
    let start: Value = serde_json::from_str(read("start.json").trim()).unwrap();
    c.check_value("full disk start", Shape::Result, &start);
    let v: Value = serde_json::from_str(wait.trim()).unwrap();
    c.check_value("full disk", Shape::Result, &v);
    assert_eq!(v["error"]["kind"], "result_not_stored", "{v}");
}

/// A peer's failure, named: each kind from a recording of the real CLI
/// (tests/fixtures/failures), replayed.
pub fn failures(c: &Contract) {
    let env = Env::new();
    env.git_init();
    let pi = [
        "--agent",
        "pi",
        "--provider",
        "mock",
        "--model",
        "mock-model",
    ];
    for (case, cli, fixture_rel, code, args, kind) in [
        (
            "wrong key",
            "claude",
            "failures/claude/auth.no-retry.stdout",
            1,
            &["--agent", "claude"][..],
            "auth_required",
        ),
        (
            "rate limit",
            "pi",
            "failures/pi/rate_limit.no-retry.stdout",
            0,
            &pi[..],
            "rate_limited",
        ),
        (
            "quota",
            "codex",
            "failures/codex/quota.no-retry.stdout",
            1,
            &[][..],
            "quota_exhausted",
        ),
        (
            "model",
            "codex",
            "failures/codex/model_not_found.no-retry.stdout",
            1,
            &[][..],
            "model_not_found",
        ),
        (
            "context",
            "claude",
            "failures/claude/context_too_long.no-retry.stdout",
            1,
            &["--agent", "claude"][..],
            "context_too_long",
        ),
        (
            "overloaded",
            "claude",
            "failures/claude/overloaded.no-retry.stdout",
            1,
            &["--agent", "claude"][..],
            "provider_unavailable",
        ),
        (
            "reset",
            "codex",
            "failures/codex/reset.no-retry.stdout",
            1,
            &[][..],
            "network",
        ),
    ] {
        env.replay(cli, fixture_rel, code);
        let mut a = args.to_vec();
        a.push("x");
        let v = c.expect_kind(case, Shape::Result, &env.run(&a), kind);
        if kind == "rate_limited" {
            assert_eq!(v["error"]["retry_after_s"], 7, "{v}");
        }
    }
    // agy's documented refusal in headless mode (no agy to record).
    env.fake(
        "agy",
        "echo '{\"status\":\"SUCCESS\",\"response\":\"done\"}'\necho 'headless mode cannot prompt for approval: write_file auto-denied' >&2",
    );
    c.expect_kind(
        "headless refusal",
        Shape::Result,
        &env.run(&["--agent", "agy", "x"]),
        "sandbox_denied",
    );
}
