//! Background jobs (`run --async`, `wait`, `status`, `result`, `cancel`,
//! `jobs`, `logs`, `continue`, `prune`) against fake CLIs. Fakes that must
//! not finish yet wait for a gate file the test creates.

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{self, Env, Run, fixture, pid_alive, record, wait_for};

const LONG: Duration = Duration::from_secs(20);

/// A fake `name` that records its argv/stdin, waits for `$FAKE_DIR/gate`,
/// prints `transcript` and exits 0.
fn gated(env: &Env, name: &str, transcript: &str) {
    env.fake(
        name,
        &format!(
            "{}\nwhile [ ! -e \"$FAKE_DIR/gate\" ]; do sleep 0.02; done\ncat '{}'",
            record(name),
            fixture(transcript).display()
        ),
    );
}

fn open_gate(env: &Env) {
    fs::write(env.fake_dir.join("gate"), "").unwrap();
}

/// `baton run --async ARGS`: the job id (asserting the immediate answer).
fn start(env: &Env, args: &[&str]) -> String {
    let mut a = vec!["run", "--async"];
    a.extend_from_slice(args);
    let r = env.run(&a);
    assert_eq!(r.code, 0, "stdout {}\nstderr {}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "running", "{j}");
    let id = j["job_id"].as_str().expect("job_id").to_string();
    assert_eq!(id.len(), 13);
    id
}

fn job_dir(env: &Env, id: &str) -> PathBuf {
    env.records("jobs").join(id)
}

fn state(env: &Env, id: &str) -> Value {
    let b = fs::read(job_dir(env, id).join("state.json")).unwrap();
    serde_json::from_slice(&b).unwrap()
}

/// Wait until the runner has started the peer; its process group id.
fn peer_pgid(env: &Env, id: &str) -> i32 {
    assert!(
        wait_for(LONG, || state(env, id)["peer_pgid"].is_u64()),
        "peer never started: {}",
        state(env, id)
    );
    state(env, id)["peer_pgid"].as_i64().unwrap() as i32
}

fn runner_pid(env: &Env, id: &str) -> i32 {
    state(env, id)["runner_pid"].as_i64().expect("runner_pid") as i32
}

fn spawn(env: &Env, args: &[&str]) -> Child {
    env.baton()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Wait for a spawned baton with a deadline; its run and how long it took.
fn finish(mut c: Child, within: Duration) -> (Run, Duration) {
    let t = Instant::now();
    let done = wait_for(within, || c.try_wait().unwrap().is_some());
    if !done {
        let _ = c.kill();
        panic!("baton did not exit within {within:?}");
    }
    (Run::from(c.wait_with_output().unwrap()), t.elapsed())
}

fn group_alive(pgid: i32) -> bool {
    // Zombies waiting for init do not count: they run nothing.
    fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .any(|pid| {
            let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            let rest: Vec<&str> = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .collect();
            // state ppid pgrp …
            rest.len() > 2 && rest[0] != "Z" && rest[2] == pgid.to_string()
        })
}

#[test]
fn launch_then_status_result_and_wait() {
    let env = Env::new();
    gated(&env, "codex", "codex/codex-exec-basic.jsonl");
    let t = Instant::now();
    let id = start(&env, &["--agent", "codex", "say", "hi"]);
    // The answer came while the peer was still blocked.
    assert!(!env.fake_dir.join("gate").exists());
    assert!(t.elapsed() < Duration::from_secs(10));

    let s = env.run(&["status", &id]);
    assert_eq!(s.code, 0, "{}", s.stderr);
    let j = s.json();
    assert_eq!(j["status"], "running");
    assert_eq!(j["job_id"], id.as_str());
    assert_eq!(j["task"], "say hi");
    assert_eq!(j["agent"], "codex");

    let r = env.run(&["result", &id]);
    assert_eq!(r.code, 0);
    assert_eq!(r.json()["status"], "running");

    // The runner is in its own session: it survives the caller's terminal.
    let pid = runner_pid(&env, &id);
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(fields[3], pid.to_string(), "runner is not a session leader");

    open_gate(&env);
    let w = env.run(&["wait", &id]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    let j = w.json();
    assert_eq!(j["status"], "success");
    assert_eq!(j["job_id"], id.as_str());
    assert_eq!(j["message"], "Hi from the mock model!");
    assert_eq!(j["session"], "01a22af9-9e2e-70e3-ad11-07b983a9c1d0");
    assert!(env.stdin("codex").contains("say hi"));

    assert_eq!(env.run(&["result", &id]).json(), j);
    let s = env.run(&["status", &id]).json();
    assert_eq!(s["status"], "success");
    assert_eq!(s["session"], "01a22af9-9e2e-70e3-ad11-07b983a9c1d0");

    // Private store: 0700 directories, 0600 files.
    let dir = job_dir(&env, &id);
    assert_eq!(
        fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    for f in [
        "spec.json",
        "state.json",
        "result.json",
        "stdout.log",
        "prompt.txt",
        "lock",
    ] {
        let m = fs::metadata(dir.join(f)).unwrap().permissions().mode() & 0o777;
        assert_eq!(m, 0o600, "{f}");
    }
    let list = env.run(&["jobs"]).json();
    assert_eq!(list["jobs"][0]["job_id"], id.as_str());
    assert_eq!(list["jobs"][0]["status"], "success");
}

#[test]
fn wait_timeout_ends_the_wait_not_the_job() {
    let env = Env::new();
    gated(&env, "claude", "claude/claude-stream.jsonl");
    let id = start(&env, &["--agent", "claude", "task"]);
    let (w, took) = finish(spawn(&env, &["wait", &id, "--timeout", "300ms"]), LONG);
    assert_eq!(w.code, 0, "{}", w.stderr);
    let j = w.json();
    assert_eq!(j["status"], "running");
    assert!(took >= Duration::from_millis(250), "{took:?}");
    assert_eq!(env.run(&["status", &id]).json()["status"], "running");
    open_gate(&env);
    let w = env.run(&["wait", &id, "--timeout", "60s"]);
    assert_eq!(w.json()["status"], "success");
}

#[test]
fn exit_codes_follow_the_result() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-error.jsonl", 1);
    let id = start(&env, &["--agent", "codex", "x"]);
    let w = env.run(&["wait", &id]);
    assert_eq!(w.code, 1);
    assert_eq!(w.json()["status"], "failed");
    assert_eq!(env.run(&["result", &id]).code, 1);
    assert_eq!(env.run(&["status", &id]).code, 1);
}

#[test]
fn unknown_and_malformed_ids() {
    let env = Env::new();
    for cmd in ["status", "result", "wait", "cancel", "logs", "continue"] {
        let r = env.run(&[cmd, "0123456789abc"]);
        assert_eq!(r.code, 4, "{cmd}: {}", r.stdout);
        let j = r.json();
        assert_eq!(j["status"], "error");
        assert_eq!(j["error"]["kind"], "job_not_found");
        assert_eq!(j["exit_code"], 4);
        for bad in [
            "../etc",
            "0123456789ab\u{e9}",
            "../../../../etc/passwd",
            "0123456789ABC",
        ] {
            let r = env.run(&[cmd, bad]);
            assert_eq!(r.code, 2, "{cmd} {bad}: {}", r.stdout);
            assert_eq!(r.json()["error"]["kind"], "invalid_job_id");
        }
    }
    // A NUL byte cannot be passed through exec; the library entry point
    // takes the same OsString.
    let args: Vec<OsString> = vec!["baton".into(), "wait".into(), "0123456789a\0c".into()];
    assert_eq!(baton::run(args), 2);
    use std::os::unix::ffi::OsStringExt;
    let args = vec![
        OsString::from("baton"),
        OsString::from("status"),
        OsString::from_vec(b"0123456789ab\xff".to_vec()),
    ];
    assert_eq!(baton::run(args), 2);
    // Nothing was created by looking.
    assert!(!env.work.join(".baton").exists());
}

/// A council's id, unknown or malformed, is named as a council's, never as a
/// job's; the kinds and exit codes stay those of a job's (one contract).
#[test]
fn council_ids_are_named_as_councils() {
    let env = Env::new();
    for cmd in ["status", "result", "report", "cancel", "resume", "execute"] {
        let r = env.run(&["council", cmd, "0123456789abc"]);
        assert_eq!(r.code, 4, "{cmd}: {}", r.stdout);
        let e = &r.json()["error"];
        assert_eq!(e["kind"], "job_not_found", "{cmd}");
        let msg = e["message"].as_str().unwrap();
        assert!(
            msg.starts_with("no council `0123456789abc` in "),
            "{cmd}: {msg}"
        );
        assert!(
            e["hint"].as_str().unwrap().contains("`baton council list`"),
            "{cmd}: {e}"
        );
        let r = env.run(&["council", cmd, "../etc"]);
        assert_eq!(r.code, 2, "{cmd}: {}", r.stdout);
        let e = &r.json()["error"];
        assert_eq!(e["kind"], "invalid_job_id", "{cmd}");
        assert_eq!(e["message"], "`../etc` is not a valid council id", "{cmd}");
    }
    // The job commands still name a job for an id nothing knows.
    let r = env.run(&["status", "0123456789abc"]);
    let msg = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(msg.starts_with("no job `0123456789abc` in "), "{msg}");
}

#[test]
fn validation_errors_come_back_before_detaching() {
    let env = Env::new();
    let r = env.run(&["run", "--async", "--agent", "codex", "x"]);
    assert_eq!(r.code, 127, "{}", r.stdout);
    assert_eq!(r.json()["error"]["kind"], "agent_not_installed");
    let r = env.run(&["run", "--async", "--agent", "nope", "x"]);
    assert_eq!(r.code, 2);
    let r = env.run(&["run", "--async", "--agent", "gemini", "--read-only", "x"]);
    assert_eq!(r.code, 2);
    assert!(
        !env.state.exists(),
        "nothing is recorded for a job that never started"
    );
}

#[test]
fn killed_runner_is_lost_and_wait_returns() {
    let env = Env::new();
    // The peer also leaves a grandchild behind in its group.
    env.fake(
        "codex",
        &format!(
            "{}\n(while :; do sleep 0.1; done) &\necho $! > \"$FAKE_DIR/grandchild\"\nprintf '%s\\n' '{{\"type\":\"thread.started\",\"thread_id\":\"t-lost\"}}'\nwhile [ ! -e \"$FAKE_DIR/gate\" ]; do sleep 0.02; done",
            record("codex")
        ),
    );
    let id = start(&env, &["--agent", "codex", "x"]);
    let pgid = peer_pgid(&env, &id);
    assert!(wait_for(LONG, || env.fake_dir.join("grandchild").exists()));
    let waiter = spawn(&env, &["wait", &id]);
    // Let the wait block on the lock first (it has nothing else to do).
    assert!(wait_for(LONG, || {
        fs::read_dir(format!("/proc/{}/task", waiter.id()))
            .map(|d| d.count())
            .unwrap_or(0)
            >= 2
    }));
    let pid = runner_pid(&env, &id);
    // SAFETY: plain syscall on the runner we started.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let (w, took) = finish(waiter, LONG);
    assert!(took < Duration::from_secs(5), "wait took {took:?}");
    assert_eq!(w.code, 1, "{}", w.stderr);
    let j = w.json();
    assert_eq!(j["status"], "lost");
    assert_eq!(j["error"]["kind"], "lost");
    let hint = j["error"]["hint"].as_str().unwrap();
    assert!(hint.contains(&format!("{id}/stdout.log")), "{hint}");
    // What the peer said before is kept: the session can be continued.
    assert_eq!(j["session"], "t-lost");
    assert_eq!(env.run(&["status", &id]).json()["status"], "lost");
    // Nothing of the peer's group survives its runner.
    assert!(
        wait_for(LONG, || !group_alive(pgid)),
        "peer group {pgid} survived"
    );
}

#[test]
fn status_notices_a_dead_runner_without_a_waiter() {
    let env = Env::new();
    gated(&env, "pi", "pi/pi-json-basic.jsonl");
    let id = start(&env, &["--agent", "pi", "x"]);
    let pgid = peer_pgid(&env, &id);
    let pid = runner_pid(&env, &id);
    // SAFETY: plain syscall on the runner we started.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    assert!(wait_for(LONG, || !pid_alive(pid)));
    let s = env.run(&["status", &id]);
    assert_eq!(s.json()["status"], "lost");
    assert_eq!(s.code, 1);
    let list = env.run(&["jobs"]).json();
    assert_eq!(list["jobs"][0]["status"], "lost");
    assert!(wait_for(LONG, || !group_alive(pgid)));
}

/// A fake whose peer starts a grandchild in its own group and then waits.
fn fake_with_grandchild(env: &Env, name: &str) {
    env.fake(
        name,
        &format!(
            "{}\n(while :; do sleep 0.1; done) &\necho $! > \"$FAKE_DIR/grandchild\"\necho $$ > \"$FAKE_DIR/leader\"\nwhile [ ! -e \"$FAKE_DIR/gate\" ]; do sleep 0.02; done",
            record(name)
        ),
    );
}

fn read_pid(env: &Env, f: &str) -> i32 {
    assert!(wait_for(LONG, || fs::read_to_string(env.fake_dir.join(f))
        .map(|s| !s.trim().is_empty())
        .unwrap_or(false)));
    fs::read_to_string(env.fake_dir.join(f))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn cancel_stops_the_whole_group_and_is_idempotent() {
    let env = Env::new();
    fake_with_grandchild(&env, "codex");
    let id = start(&env, &["--agent", "codex", "x"]);
    let pgid = peer_pgid(&env, &id);
    let grandchild = read_pid(&env, "grandchild");
    let leader = read_pid(&env, "leader");
    let runner = runner_pid(&env, &id);
    assert!(pid_alive(grandchild) && pid_alive(leader));

    let c = env.run(&["cancel", &id]);
    assert_eq!(c.code, 130, "{}\n{}", c.stdout, c.stderr);
    let j = c.json();
    assert_eq!(j["status"], "cancelled");
    assert_eq!(j["job_id"], id.as_str());
    // When cancel returns, nothing of the job runs any more.
    assert!(!pid_alive(runner), "runner survived");
    assert!(!pid_alive(leader), "peer survived");
    assert!(!pid_alive(grandchild), "grandchild survived");
    assert!(!group_alive(pgid));

    let before = fs::read(job_dir(&env, &id).join("result.json")).unwrap();
    let again = env.run(&["cancel", &id]);
    assert_eq!(again.code, 130);
    assert_eq!(again.json(), j);
    assert_eq!(
        fs::read(job_dir(&env, &id).join("result.json")).unwrap(),
        before
    );
    assert_eq!(env.run(&["wait", &id]).json()["status"], "cancelled");
}

#[test]
fn cancel_after_finish_returns_the_result_unchanged() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    let id = start(&env, &["--agent", "codex", "x"]);
    let done = env.run(&["wait", &id]).json();
    let before = fs::read(job_dir(&env, &id).join("result.json")).unwrap();
    let c = env.run(&["cancel", &id]);
    assert_eq!(c.code, 0);
    assert_eq!(c.json(), done);
    assert_eq!(
        fs::read(job_dir(&env, &id).join("result.json")).unwrap(),
        before
    );
    assert_eq!(state(&env, &id)["status"], "success");
}

#[test]
fn thirty_two_jobs_with_concurrent_waits_and_a_cancel() {
    let env = Env::new();
    env.git_init();
    // Job n succeeds when n is even and fails when odd; all wait for the gate.
    env.fake(
        "codex",
        &format!(
            "p=$(cat)\nn=$(printf '%s' \"$p\" | sed -n 's/.*task-\\([0-9]*\\).*/\\1/p' | head -n 1)\n\
             while [ ! -e \"$FAKE_DIR/gate\" ]; do sleep 0.05; done\n\
             if [ $((n % 2)) -eq 0 ]; then cat '{}'; else cat '{}'; exit 1; fi",
            fixture("codex/codex-exec-basic.jsonl").display(),
            fixture("codex/codex-exec-error.jsonl").display()
        ),
    );
    let ids: Vec<(usize, String)> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..32)
            .map(|n| {
                let env = &env;
                s.spawn(move || (n, start(env, &["--agent", "codex", &format!("task-{n}")])))
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut unique: Vec<&String> = ids.iter().map(|(_, id)| id).collect();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 32);

    // A reader checks every state and result file while everything runs.
    let stop = AtomicBool::new(false);
    let store = env.records("jobs");
    let checked = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                for e in fs::read_dir(&store).unwrap().filter_map(|e| e.ok()) {
                    for f in ["state.json", "result.json"] {
                        if let Ok(b) = fs::read(e.path().join(f)) {
                            serde_json::from_slice::<Value>(&b)
                                .unwrap_or_else(|err| panic!("torn {f}: {err}"));
                            n += 1;
                        }
                    }
                }
            }
            n
        });
        let waiters: Vec<(usize, Child)> = ids
            .iter()
            .step_by(4)
            .map(|(n, id)| (*n, spawn(&env, &["wait", id])))
            .collect();
        let (_, cancelled) = &ids[1];
        let c = env.run(&["cancel", cancelled]);
        assert_eq!(c.code, 130, "{}", c.stderr);
        open_gate(&env);
        for (n, w) in waiters {
            let (r, _) = finish(w, Duration::from_secs(60));
            let want = if n % 2 == 0 { "success" } else { "failed" };
            assert_eq!(r.json()["status"], want, "job {n}");
        }
        for (_, id) in &ids {
            let w = env.run(&["wait", id]);
            assert!([0, 1, 130].contains(&w.code));
        }
        stop.store(true, Ordering::Relaxed);
        reader.join().unwrap()
    });
    assert!(checked > 0);
    for (n, id) in &ids {
        let want = match n {
            1 => "cancelled",
            n if n % 2 == 0 => "success",
            _ => "failed",
        };
        let s = state(&env, id);
        assert_eq!(s["status"], want, "job {n}: {s}");
        let r: Value =
            serde_json::from_slice(&fs::read(job_dir(&env, id).join("result.json")).unwrap())
                .unwrap();
        assert_eq!(r["status"], want, "job {n}");
        assert_eq!(env.run(&["result", id]).json()["job_id"], id.as_str());
        // No temp file was left behind by an atomic write.
        for e in fs::read_dir(job_dir(&env, id)).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            assert!(!name.ends_with(".tmp"), "{name}");
        }
    }
    let all = env.run(&["jobs", "--all"]).json();
    assert_eq!(all["jobs"].as_array().unwrap().len(), 32);
    assert_eq!(all["total"], 32);
    let some = env.run(&["jobs"]).json();
    assert_eq!(some["jobs"].as_array().unwrap().len(), 20);
    assert_eq!(some["hidden"], 12);
}

#[test]
fn jobs_lists_running_first() {
    let env = Env::new();
    env.replay("claude", "claude/claude-stream.jsonl", 0);
    let done = start(&env, &["--agent", "claude", "first\nsecond line"]);
    env.run(&["wait", &done]);
    gated(&env, "codex", "codex/codex-exec-basic.jsonl");
    let running = start(&env, &["--agent", "codex", "later"]);
    let j = env.run(&["jobs"]).json();
    let jobs = j["jobs"].as_array().unwrap();
    assert_eq!(jobs[0]["job_id"], running.as_str());
    assert_eq!(jobs[0]["status"], "running");
    assert_eq!(jobs[1]["job_id"], done.as_str());
    assert_eq!(jobs[1]["task"], "first");
    let t = env.run(&["jobs", "--text"]);
    let lines: Vec<&str> = t.stdout.lines().collect();
    assert!(lines[0].starts_with("ID"), "{}", t.stdout);
    assert!(lines[1].starts_with(&running) && lines[1].contains("running"));
    assert!(
        lines[2].starts_with(&done) && lines[2].contains("success") && lines[2].ends_with("first")
    );
    open_gate(&env);
    env.run(&["wait", &running]);
}

#[test]
fn continue_resumes_the_session_with_the_same_options() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    let first = start(
        &env,
        &["--agent", "codex", "--read-only", "-m", "gpt-5.5", "first"],
    );
    assert_eq!(env.run(&["wait", &first]).code, 0);
    let r = env.run(&["continue", &first, "and", "then"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let j = r.json();
    assert_eq!(j["status"], "running");
    let second = j["job_id"].as_str().unwrap().to_string();
    assert_ne!(second, first);
    assert_eq!(env.run(&["wait", &second]).code, 0);
    let argv = env.argv("codex");
    let i = argv.iter().position(|a| a == "resume").expect("resume");
    assert_eq!(argv[i + 1], "01a22af9-9e2e-70e3-ad11-07b983a9c1d0");
    let s = argv.iter().position(|a| a == "--sandbox").unwrap();
    assert_eq!(argv[s + 1], "read-only");
    assert!(argv.contains(&"gpt-5.5".to_string()), "{argv:?}");
    assert!(env.stdin("codex").contains("and then"));
    assert_eq!(state(&env, &second)["resumed_from"], first.as_str());

    env.replay("claude", "claude/claude-stream.jsonl", 0);
    let c1 = start(&env, &["--agent", "claude", "hello"]);
    env.run(&["wait", &c1]);
    let c2 = env.run(&["continue", &c1, "more"]).json()["job_id"]
        .as_str()
        .unwrap()
        .to_string();
    env.run(&["wait", &c2]);
    let argv = env.argv("claude");
    let i = argv.iter().position(|a| a == "--resume").expect("--resume");
    assert_eq!(argv[i + 1], "770ccbf4-0cf4-4a19-a0da-79d885d7bddc");
}

#[test]
fn continue_without_a_session_or_while_running_is_refused() {
    let env = Env::new();
    env.fake("codex", "cat > /dev/null\necho boom >&2\nexit 1");
    let id = start(&env, &["--agent", "codex", "x"]);
    assert_eq!(env.run(&["wait", &id]).code, 1);
    let r = env.run(&["continue", &id, "more"]);
    assert_eq!(r.code, 2);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no peer session")
    );

    gated(&env, "claude", "claude/claude-stream.jsonl");
    let running = start(&env, &["--agent", "claude", "x"]);
    let r = env.run(&["continue", &running, "more"]);
    assert_eq!(r.code, 2);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("still running")
    );
    open_gate(&env);
    env.run(&["wait", &running]);
}

#[test]
fn prune_removes_ended_jobs_never_running_ones() {
    let env = Env::new();
    env.replay("pi", "pi/pi-json-basic.jsonl", 0);
    let done = start(&env, &["--agent", "pi", "x"]);
    env.run(&["wait", &done]);
    gated(&env, "codex", "codex/codex-exec-basic.jsonl");
    let running = start(&env, &["--agent", "codex", "y"]);

    // Not old enough yet.
    let p = env.run(&["prune"]).json();
    assert_eq!(p["removed"].as_array().unwrap().len(), 0);

    let dry = env.run(&["prune", "--older-than", "0", "--dry-run"]).json();
    assert_eq!(dry["removed"][0]["job_id"], done.as_str());
    assert!(job_dir(&env, &done).exists());

    let p = env.run(&["prune", "--older-than", "0"]);
    assert_eq!(p.code, 0);
    let j = p.json();
    let removed = j["removed"].as_array().unwrap();
    assert_eq!(removed.len(), 1, "{j}");
    assert_eq!(removed[0]["job_id"], done.as_str());
    assert_eq!(j["running_kept"], 1);
    assert!(!job_dir(&env, &done).exists());
    assert!(job_dir(&env, &running).exists());
    assert_eq!(env.run(&["status", &done]).code, 4);
    assert_eq!(env.run(&["status", &running]).json()["status"], "running");

    open_gate(&env);
    env.run(&["wait", &running]);
    env.run(&["prune", "--older-than", "0"]);
    assert!(!job_dir(&env, &running).exists());
}

#[test]
fn logs_render_raw_and_follow() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-toolcall.jsonl", 0);
    let id = start(&env, &["--agent", "codex", "x"]);
    env.run(&["wait", &id]);
    let l = env.run(&["logs", &id]);
    assert_eq!(l.code, 0);
    let lines: Vec<&str> = l.stdout.lines().collect();
    assert_eq!(
        lines[..4],
        [
            "session 01a22af9-a071-7611-888e-982e8c37de31",
            "$ /bin/bash -lc 'echo hello > out.txt'",
            "» Created out.txt with hello.",
            "done (240 in, 24 out tokens)",
        ]
    );
    assert!(
        lines[4].starts_with("── success: codex succeeded"),
        "{}",
        l.stdout
    );
    let raw = env.run(&["logs", &id, "--raw"]);
    assert_eq!(
        raw.stdout.as_bytes(),
        fs::read(fixture("codex/codex-exec-toolcall.jsonl")).unwrap()
    );

    // Follow: the first event is shown while the peer still works, the rest
    // once it goes on, and the command ends with the job.
    env.fake(
        "claude",
        &format!(
            "{}\nhead -n 2 '{f}'\nwhile [ ! -e \"$FAKE_DIR/gate\" ]; do sleep 0.02; done\ntail -n +3 '{f}'",
            record("claude"),
            f = fixture("claude/claude-toolcall-stream.jsonl").display()
        ),
    );
    let id = start(&env, &["--agent", "claude", "x"]);
    let out = env.tmp.path().join("follow.txt");
    let follower = env
        .baton()
        .args(["logs", "--follow", &id])
        .stdout(fs::File::create(&out).unwrap())
        .spawn()
        .unwrap();
    assert!(
        wait_for(LONG, || fs::read_to_string(&out)
            .unwrap_or_default()
            .contains("» Creating out.txt.")),
        "follow showed nothing while the job ran"
    );
    open_gate(&env);
    let (r, _) = finish(follower, LONG);
    assert_eq!(r.code, 0);
    let text = fs::read_to_string(&out).unwrap();
    assert!(
        text.contains("write /tmp/scratch/run/w/c-tool-stream/out.txt"),
        "{text}"
    );
    assert!(
        text.lines().last().unwrap().starts_with("── success"),
        "{text}"
    );
}

#[test]
fn text_mode_for_people() {
    let env = Env::new();
    gated(&env, "codex", "codex/codex-exec-basic.jsonl");
    let r = env.run(&["run", "--async", "--text", "--agent", "codex", "x"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("started codex job "), "{}", r.stdout);
    let id = r.stdout.split_whitespace().nth(3).unwrap().to_string();
    let s = env.run(&["status", &id, "--text"]);
    assert!(s.stdout.contains("status:   running"), "{}", s.stdout);
    open_gate(&env);
    let w = env.run(&["wait", &id, "--text"]);
    assert!(w.stdout.contains("status:   success"), "{}", w.stdout);
    assert!(w.stdout.contains(&format!("job:      {id}")));
    let _ = support::BATON;
}

/// `baton` for worktree jobs: git without the machine's configuration.
fn git_env(env: &Env, args: &[&str]) -> Run {
    Run::from(
        env.baton()
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", env.tmp.path())
            .output()
            .unwrap(),
    )
}

fn git_out(dir: &std::path::Path, args: &[&str]) -> String {
    let o = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn async_worktree_job_commits_on_its_branch_and_continues_there() {
    let env = Env::new();
    env.git_init();
    let head = git_out(&env.work, &["rev-parse", "HEAD"]);
    // The peer writes a file named after its turn in its cwd (the worktree).
    env.fake(
        "codex",
        &format!(
            "{}\npwd > \"$FAKE_DIR/codex.pwd\"\nn=$(ls turn-*.txt 2>/dev/null | wc -l)\n\
             echo work > \"turn-$n.txt\"\n\
             while [ ! -e \"$FAKE_DIR/gate\" ]; do sleep 0.02; done\ncat '{}'",
            record("codex"),
            fixture("codex/codex-exec-basic.jsonl").display()
        ),
    );
    let r = git_env(
        &env,
        &[
            "run",
            "--async",
            "--worktree",
            "--agent",
            "codex",
            "write it",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let id = r.json()["job_id"].as_str().unwrap().to_string();
    let wt = env.work.join(".baton/worktrees").join(&id);
    assert!(wt.is_dir(), "the worktree exists when the launcher answers");
    assert!(wait_for(LONG, || env.called("codex")));

    // While it runs, the worktree is busy: listed running, not removable.
    let list = git_env(&env, &["worktree", "list"]).json();
    assert_eq!(list["worktrees"][0]["state"], "running", "{list}");
    assert_eq!(list["worktrees"][0]["job_id"], id.as_str());
    let rm = git_env(&env, &["worktree", "remove", &id]);
    assert_eq!(rm.code, 2, "{}", rm.stdout);

    open_gate(&env);
    let w = git_env(&env, &["wait", &id]);
    assert_eq!(w.code, 0, "{}", w.stdout);
    let j = w.json();
    assert_eq!(j["status"], "success");
    assert_eq!(j["worktree"]["branch"], format!("baton/{id}"));
    assert_eq!(
        fs::read_to_string(env.fake_dir.join("codex.pwd"))
            .unwrap()
            .trim(),
        wt.canonicalize().unwrap().to_str().unwrap()
    );
    let msg = git_out(
        &env.work,
        &["log", "-1", "--format=%B", &format!("baton/{id}")],
    );
    assert!(msg.contains(&format!("Baton-Job: {id}")), "{msg}");
    assert_eq!(
        git_out(
            &env.work,
            &["ls-tree", "--name-only", &format!("baton/{id}")]
        )
        .lines()
        .filter(|l| l.starts_with("turn-"))
        .count(),
        1
    );
    // The user's checkout did not move and has nothing new.
    assert_eq!(git_out(&env.work, &["rev-parse", "HEAD"]), head);
    assert!(!env.work.join("turn-0.txt").exists());
    assert_eq!(
        git_env(&env, &["worktree", "list"]).json()["worktrees"][0]["state"],
        "finished"
    );

    // `continue` works in the same worktree and commits there again.
    let c = git_env(&env, &["continue", &id, "one more"]);
    assert_eq!(c.code, 0, "{}\n{}", c.stdout, c.stderr);
    let next = c.json()["job_id"].as_str().unwrap().to_string();
    let w2 = git_env(&env, &["wait", &next]);
    assert_eq!(w2.json()["status"], "success", "{}", w2.stdout);
    assert_eq!(w2.json()["worktree"]["branch"], format!("baton/{id}"));
    // What this run changed, not the first run's work too (counted from
    // the files on disk, against the branch as this run found it).
    assert_eq!(
        w2.json()["changed_files"],
        serde_json::json!(["turn-1.txt"]),
        "{}",
        w2.stdout
    );
    let tree = git_out(
        &env.work,
        &["ls-tree", "--name-only", &format!("baton/{id}")],
    );
    assert_eq!(
        tree.lines().filter(|l| l.starts_with("turn-")).count(),
        2,
        "{tree}"
    );
    let msg = git_out(
        &env.work,
        &["log", "-1", "--format=%B", &format!("baton/{id}")],
    );
    assert!(msg.contains(&format!("Baton-Job: {next}")), "{msg}");

    // Pruning the jobs removes the worktree; the branch with the work stays.
    let p = git_env(&env, &["prune", "--older-than", "0"]).json();
    assert_eq!(p["removed"].as_array().unwrap().len(), 2, "{p}");
    assert_eq!(p["worktrees_removed"][0], id.as_str(), "{p}");
    assert!(!wt.exists());
    git_out(
        &env.work,
        &["rev-parse", "--verify", &format!("baton/{id}")],
    );
}

#[test]
fn async_worktree_errors_come_back_at_once() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    // Not a git repository.
    let r = git_env(
        &env,
        &["run", "--async", "--worktree", "--agent", "codex", "x"],
    );
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        !env.state.exists(),
        "nothing is recorded for a job that never started"
    );
}

/// Issue 10 item 4: a worktree job whose runner dies while baton commits
/// (here: during a slow `git add`, made slow by a `git` wrapper first on
/// PATH) is `lost`, not the provisional `success` written before the
/// commit; `worktree list` says `interrupted`, `continue` finishes the work
/// in the same worktree, and `worktree remove` cleans up.
#[test]
fn a_worktree_job_killed_while_committing_is_lost_not_success() {
    let env = Env::new();
    env.git_init();
    let head = git_out(&env.work, &["rev-parse", "HEAD"])
        .trim()
        .to_string();
    // Once the first turn's peer has finished, `git add` blocks (until killed).
    env.fake(
        "git",
        "if [ -e \"$FAKE_DIR/slow-add\" ]; then\n\
           for a in \"$@\"; do\n\
             if [ \"$a\" = add ]; then echo $$ > \"$FAKE_DIR/adding\"; while :; do sleep 0.05; done; fi\n\
           done\n\
         fi\n\
         PATH=/usr/local/bin:/usr/bin:/bin exec git \"$@\"",
    );
    env.fake(
        "codex",
        &format!(
            "{}\nn=$(ls turn-*.txt 2>/dev/null | wc -l)\necho work > \"turn-$n.txt\"\n\
             cat '{}'\n[ \"$n\" != 0 ] || touch \"$FAKE_DIR/slow-add\"",
            record("codex"),
            fixture("codex/codex-exec-basic.jsonl").display()
        ),
    );
    let r = git_env(
        &env,
        &[
            "run",
            "--async",
            "--worktree",
            "--agent",
            "codex",
            "write it",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let id = r.json()["job_id"].as_str().unwrap().to_string();
    let wt = env.work.join(".baton/worktrees").join(&id);
    assert!(
        wait_for(LONG, || env.fake_dir.join("adding").exists()),
        "baton never staged: {}",
        state(&env, &id)
    );
    // The runner leads its own session: kill it with the stuck `git add`.
    let pid = runner_pid(&env, &id);
    // SAFETY: plain syscall on the runner's group, which we started.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    // Whatever happens to the group, the stuck wrapper must not outlive the test.
    if let Ok(w) = fs::read_to_string(env.fake_dir.join("adding"))
        && let Ok(w) = w.trim().parse::<i32>()
    {
        // SAFETY: plain syscall on the wrapper this test made block.
        unsafe { libc::kill(w, libc::SIGKILL) };
    }
    fs::remove_file(env.fake_dir.join("slow-add")).unwrap();

    let w = git_env(&env, &["wait", &id]);
    assert_eq!(w.code, 1, "{}\n{}", w.stdout, w.stderr);
    let j = w.json();
    assert_eq!(j["status"], "lost", "{j}");
    assert_eq!(j["error"]["kind"], "lost");
    // Nothing was committed, and the result does not pretend otherwise.
    assert_eq!(
        git_out(&env.work, &["rev-parse", &format!("baton/{id}")]).trim(),
        head
    );
    assert!(wt.join("turn-0.txt").exists());
    let list = git_env(&env, &["worktree", "list"]).json();
    assert_eq!(list["worktrees"][0]["state"], "interrupted", "{list}");

    // `remove` does not discard the uncommitted work silently, and says why
    // it is there.
    let rm = git_env(&env, &["worktree", "remove", &id]);
    assert_eq!(rm.code, 2, "{}", rm.stdout);
    let msg = rm.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(
        msg.contains("turn-0.txt") && msg.contains("interrupted"),
        "{msg}"
    );

    // `continue` works there and commits both turns.
    let c = git_env(&env, &["continue", &id, "finish it"]);
    assert_eq!(c.code, 0, "{}\n{}", c.stdout, c.stderr);
    let next = c.json()["job_id"].as_str().unwrap().to_string();
    let w2 = git_env(&env, &["wait", &next]);
    assert_eq!(w2.json()["status"], "success", "{}", w2.stdout);
    let tree = git_out(
        &env.work,
        &["ls-tree", "--name-only", &format!("baton/{id}")],
    );
    assert_eq!(
        tree.lines().filter(|l| l.starts_with("turn-")).count(),
        2,
        "{tree}"
    );
    let list = git_env(&env, &["worktree", "list"]).json();
    assert_eq!(list["worktrees"][0]["state"], "finished", "{list}");
    let rm = git_env(&env, &["worktree", "remove", &id]);
    assert_eq!(rm.code, 0, "{}", rm.stdout);
    assert!(!wt.exists());
}

/// A watcher that looks while a worktree job is still being launched (its
/// worktree being made, no state written yet) sees it running, not `lost`:
/// the runner's lock is taken before the worktree is made.
#[test]
fn a_job_seen_while_its_worktree_is_made_is_not_lost() {
    let env = Env::new();
    env.git_init();
    // `git init` (making the writer's repository) waits for a gate the test removes.
    env.fake(
        "git",
        "for a in \"$@\"; do\n\
           if [ \"$a\" = init ] && [ -e \"$FAKE_DIR/gate\" ]; then\n\
             touch \"$FAKE_DIR/adding\"; while [ -e \"$FAKE_DIR/gate\" ]; do sleep 0.05; done; break\n\
           fi\n\
         done\n\
         PATH=/usr/local/bin:/usr/bin:/bin exec git \"$@\"",
    );
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    fs::write(env.fake_dir.join("gate"), "").unwrap();
    let launcher = env
        .baton()
        .args(["run", "--async", "--worktree", "--agent", "codex", "x"])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", env.tmp.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        wait_for(LONG, || env.fake_dir.join("adding").exists()),
        "the worktree was never made"
    );
    let seen = git_env(&env, &["jobs", "--all"]);
    fs::remove_file(env.fake_dir.join("gate")).unwrap();
    let out = launcher.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(seen.code, 0, "{}\n{}", seen.stdout, seen.stderr);
    let jobs = seen.json();
    let list = jobs["jobs"].as_array().expect("a jobs list");
    assert_eq!(list.len(), 1, "{jobs}");
    assert_eq!(list[0]["status"], "running", "{jobs}");
    let id: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let w = git_env(&env, &["wait", id["job_id"].as_str().unwrap()]);
    assert_eq!(w.json()["status"], "success", "{}", w.stdout);
}

/// `prune` removes every kind of record baton keeps once old enough: ended
/// jobs, foreground run records, ended councils with their members' runs;
/// never a run in progress, nor a council that has not ended (or its runs).
#[test]
fn prune_removes_every_kind_of_record_and_counts_each() {
    use crate::council::{council, good_scenario, setup};
    let (env, fake) = setup();
    fake.write(&good_scenario());
    // An ended council, and one waiting for approval (not ended).
    let members = ["--members", "codex,claude,pi", "--seed", "7"];
    let mut discuss = vec!["discuss"];
    discuss.extend(members);
    discuss.push("how should the cache be guarded?");
    let d = council(&env, &discuss);
    assert_eq!(d.code, 0, "{}", d.stderr);
    let ended = d.json()["council_id"].as_str().unwrap().to_string();
    let mut plan = vec!["plan"];
    plan.extend(members);
    plan.push("guard the cache");
    let p = council(&env, &plan);
    assert_eq!(p.code, 0, "{}", p.stderr);
    let waiting = p.json()["council_id"].as_str().unwrap().to_string();
    assert_eq!(p.json()["stage"], "awaiting_approval", "{}", p.stdout);
    let councils = env.records("councils");
    let member_runs = |id: &str| -> Vec<PathBuf> {
        fs::read_dir(councils.join(id).join("runs"))
            .unwrap()
            .flatten()
            .filter_map(|e| {
                let r: serde_json::Value =
                    serde_json::from_slice(&fs::read(e.path()).unwrap()).unwrap();
                Some(PathBuf::from(r["log"].as_str()?).parent()?.to_path_buf())
            })
            .collect()
    };
    let (ended_runs, waiting_runs) = (member_runs(&ended), member_runs(&waiting));
    assert!(ended_runs.len() >= 3 && !waiting_runs.is_empty());
    assert!(ended_runs.iter().chain(&waiting_runs).all(|r| r.is_dir()));

    // An ended foreground run, and one still running (its fake waits).
    env.replay("gemini", "gemini-cli/gemini-stream.jsonl", 0);
    let r = env.run(&["--agent", "gemini-cli", "say hi"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let done_run = PathBuf::from(r.json()["log_path"].as_str().unwrap())
        .parent()
        .unwrap()
        .to_path_buf();
    gated(&env, "opencode", "opencode/opencode-run-json-basic.jsonl");
    let mut live = env
        .baton()
        .args(["--agent", "opencode", "take your time"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    assert!(wait_for(Duration::from_secs(20), || env.called("opencode")));
    let runs = env.records("runs");
    let live_run = fs::read_dir(&runs)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            fs::read_to_string(p.join("prompt.txt")).is_ok_and(|t| t.contains("take your time"))
        })
        .expect("the live run's folder");
    // And an ended background job.
    env.replay("qwen", "qwen/qwen-stream-plain.jsonl", 0);
    let job = start(&env, &["--agent", "qwen", "x"]);
    assert_eq!(env.run(&["wait", &job]).code, 0);

    let j = env.run(&["prune", "--older-than", "0", "--dry-run"]).json();
    assert!(
        done_run.is_dir() && councils.join(&ended).is_dir(),
        "dry run"
    );
    let dry_counts = j["counts"].clone();

    let p = env.run(&["prune", "--older-than", "0"]);
    assert_eq!(p.code, 0, "{}", p.stdout);
    let j = p.json();
    assert_eq!(j["counts"], dry_counts, "{j}");
    assert_eq!(j["counts"]["jobs"], 1, "{j}");
    assert_eq!(j["counts"]["runs"], 1, "{j}");
    assert_eq!(j["counts"]["councils"], 1, "{j}");
    assert_eq!(j["counts"]["council_runs"], ended_runs.len(), "{j}");
    assert_eq!(j["runs_running_kept"], 1, "{j}");
    assert_eq!(j["councils_not_ended_kept"], 1, "{j}");
    assert_eq!(j["councils_removed"][0]["council_id"], ended.as_str());
    assert_eq!(j["councils_removed"][0]["stage"], "done");
    assert!(j["freed_bytes"].as_u64().unwrap() > 0);

    assert!(!done_run.exists());
    assert!(!councils.join(&ended).exists());
    assert!(ended_runs.iter().all(|r| !r.exists()), "{ended_runs:?}");
    assert!(!job_dir_exists(&env, &job));
    // Never touched: the run in progress, the council that has not ended.
    assert!(live_run.join("prompt.txt").is_file());
    assert!(councils.join(&waiting).join("state.json").is_file());
    assert!(waiting_runs.iter().all(|r| r.is_dir()), "{waiting_runs:?}");

    // The run in progress ends normally, and goes on the next prune.
    open_gate(&env);
    assert!(live.wait().unwrap().success());
    let j = env.run(&["prune", "--older-than", "0"]).json();
    assert_eq!(j["counts"]["runs"], 1, "{j}");
    assert!(!live_run.exists());
    assert!(councils.join(&waiting).is_dir());
}

fn job_dir_exists(env: &Env, id: &str) -> bool {
    env.records("jobs").join(id).exists()
}

/// The run folders a fan-out's records name (its judges' `runs/<id>/`).
fn fanout_runs(fanouts: &std::path::Path, id: &str) -> Vec<PathBuf> {
    fs::read_dir(fanouts.join(id).join("runs"))
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let r: Value = serde_json::from_slice(&fs::read(e.path()).unwrap()).unwrap();
            Some(PathBuf::from(r["log"].as_str()?).parent()?.to_path_buf())
        })
        .filter(|d| d.parent().is_some_and(|p| p.ends_with("runs")))
        .collect()
}

/// `prune` removes an ended fan-out as a whole record — its folder, its
/// judges' run folders, its candidates' worktrees (their branches stay) —
/// and never a run folder that a fan-out it keeps still names (issue 29
/// §7: fan-outs were never removed, and their judges' runs were pruned
/// from under them as foreground runs).
#[test]
fn prune_removes_ended_fanouts_whole_and_keeps_the_runs_of_those_that_stay() {
    use crate::fanout::{fan_out, setup, write_answer};
    use crate::support::council::{Scenario, Stage, Step};
    let (env, fake) = setup();
    let review = serde_json::json!({"candidates": [
        {"label": "A", "verdict": "accept", "summary": "fine", "findings": []}],
        "ranking": ["A"]});
    fake.write(
        &Scenario::new()
            .on("codex", Stage::Implement, write_answer("good one\n"))
            .on("claude", Stage::Implement, write_answer("good two\n"))
            .all(
                &["codex", "claude"],
                Stage::FanoutReview,
                Step::json(review),
            ),
    );
    let fan = |keep_all: bool| {
        let mut args = vec!["--agents", "codex,claude"];
        if keep_all {
            args.push("--keep-all");
        }
        let (r, j) = fan_out(&env, &args);
        assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
        assert_eq!(j["judge"]["mode"], "peers", "{j}");
        j
    };
    let (ended, kept) = (fan(true), fan(false));
    let (ended_id, kept_id) = (
        ended["fanout_id"].as_str().unwrap().to_string(),
        kept["fanout_id"].as_str().unwrap().to_string(),
    );
    let fanouts = env.records("fanouts");
    let (ended_runs, kept_runs) = (
        fanout_runs(&fanouts, &ended_id),
        fanout_runs(&fanouts, &kept_id),
    );
    assert_eq!(ended_runs.len(), 2, "one run folder per judge");
    assert!(ended_runs.iter().chain(&kept_runs).all(|r| r.is_dir()));
    let worktrees: Vec<PathBuf> = ended["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| PathBuf::from(c["worktree"].as_str().unwrap()))
        .collect();
    assert!(
        worktrees.iter().all(|w| w.is_dir()),
        "--keep-all keeps them"
    );
    // The second fan-out is still going, as far as prune can tell: a live
    // process drives it mid-stage, holding its record's lock (a live pid
    // alone says nothing: pids are reused).
    let state = fanouts.join(&kept_id).join("state.json");
    let mut rec: Value = serde_json::from_slice(&fs::read(&state).unwrap()).unwrap();
    rec["stage"] = "judging".into();
    rec["pid"] = std::process::id().into();
    fs::write(&state, rec.to_string()).unwrap();
    let runner = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(fanouts.join(&kept_id).join("lock"))
        .unwrap();
    runner.lock().unwrap();

    let dry = env.run(&["prune", "--older-than", "0", "--dry-run"]).json();
    assert!(fanouts.join(&ended_id).is_dir() && worktrees.iter().all(|w| w.is_dir()));
    let p = env.run(&["prune", "--older-than", "0"]);
    assert_eq!(p.code, 0, "{}", p.stdout);
    let j = p.json();
    assert_eq!(j["counts"], dry["counts"], "{j}");
    assert_eq!(j["counts"]["fanouts"], 1, "{j}");
    assert_eq!(j["counts"]["fanout_runs"], 2, "{j}");
    assert_eq!(
        j["counts"]["runs"], 0,
        "the judges' runs count with their fan-out: {j}"
    );
    assert_eq!(
        j["fanouts_removed"][0]["fanout_id"],
        ended_id.as_str(),
        "{j}"
    );
    assert_eq!(j["fanouts_removed"][0]["stage"], "done");
    assert_eq!(j["fanouts_not_ended_kept"], 1, "{j}");
    assert!(!fanouts.join(&ended_id).exists());
    assert!(ended_runs.iter().all(|r| !r.exists()), "{ended_runs:?}");
    assert!(worktrees.iter().all(|w| !w.exists()), "{worktrees:?}");
    let removed: Vec<&str> = j["worktrees_removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(removed.len(), 2, "{j}");
    // The branches hold the work: they stay.
    let branches = crate::fanout::branches(&env);
    for w in &removed {
        assert!(branches.contains(&format!("baton/{w}")), "{branches:?}");
    }
    // The fan-out that goes on keeps its folder and every run it names.
    assert!(state.is_file());
    assert!(kept_runs.iter().all(|r| r.is_dir()), "{kept_runs:?}");
    let t = env.run(&["prune", "--older-than", "0", "--text"]).stdout;
    assert!(t.contains("0 fan-out(s) with 0 run(s)"), "{t}");
    assert!(t.contains("1 fan-out(s) not ended"), "{t}");
    // Its process dies mid-stage (the kernel drops its lock): `lost`, as
    // `jobs` says, and removed.
    // Unlocked, not only closed: a child another test thread forks now
    // keeps a copy of the descriptor (and so the lock) until it execs.
    runner.unlock().unwrap();
    drop(runner);
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    rec["stage"] = "writing".into();
    rec["pid"] = dead.into();
    fs::write(&state, rec.to_string()).unwrap();
    let j = env.run(&["prune", "--older-than", "0"]).json();
    assert_eq!(j["fanouts_removed"][0]["stage"], "lost", "{j}");
    assert!(!state.exists() && kept_runs.iter().all(|r| !r.exists()));
}
