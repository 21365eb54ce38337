//! Supervision of the peer process: timeouts, idle timeouts, a peer that
//! hangs after its final event, Ctrl-C and SIGTERM, grandchildren (in the
//! group and escaped from it), and bounded memory under a flood of output.
//!
//! Every fake here starts a grandchild `sleep` and writes its pid to a file,
//! so the tests can check that nothing outlives baton.

use std::fs;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::support::{Env, Run, fixture, pid_alive, record, wait_for};

/// Shell lines that start a grandchild `sleep` in the background and record
/// its pid (and the fake's own) under `$FAKE_DIR`.
fn grandchild(cmd: &str) -> String {
    format!(
        "{cmd} sleep 300 &\necho $! > \"$FAKE_DIR/grandchild.pid\"\necho $$ > \"$FAKE_DIR/leader.pid\""
    )
}

fn read_pid(env: &Env, name: &str) -> i32 {
    let p = env.fake_dir.join(format!("{name}.pid"));
    assert!(
        wait_for(Duration::from_secs(20), || fs::read_to_string(&p)
            .is_ok_and(|s| s.trim().parse::<i32>().is_ok())),
        "{name}.pid never written"
    );
    fs::read_to_string(&p).unwrap().trim().parse().unwrap()
}

/// Kill `pid` if a test left it running (only pids our fakes recorded).
fn cleanup(pid: i32) {
    if pid_alive(pid) {
        // SAFETY: plain syscall on a pid this test's fake started.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

fn assert_dead(env: &Env, names: &[&str]) {
    for n in names {
        let pid = read_pid(env, n);
        let dead = wait_for(Duration::from_secs(2), || !pid_alive(pid));
        cleanup(pid);
        assert!(dead, "{n} (pid {pid}) outlived baton");
    }
}

fn spawn(env: &Env, args: &[&str]) -> Child {
    env.baton()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn baton")
}

/// Wait for `child` with a deadline so a regression cannot hang the suite.
fn finish(mut child: Child, limit: Duration) -> Run {
    let until = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > until {
            let _ = child.kill();
            panic!("baton did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Run::from(child.wait_with_output().unwrap())
}

const THREAD_STARTED: &str = r#"echo '{"type":"thread.started","thread_id":"t-sup"}'"#;

#[test]
fn timeout_stops_the_whole_group() {
    let env = Env::new();
    env.fake(
        "codex",
        &format!(
            "{}\n{}\n{THREAD_STARTED}\nwait",
            record("codex"),
            grandchild("")
        ),
    );
    let started = Instant::now();
    let r = finish(
        spawn(&env, &["--timeout", "1s", "x"]),
        Duration::from_secs(30),
    );
    assert_eq!(r.code, 124, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "timeout");
    assert_eq!(j["error"]["kind"], "timeout");
    assert!(j["error"]["hint"].as_str().unwrap().contains("--timeout"));
    assert!(j["exit_code"].is_null(), "stopped by a signal: {j}");
    assert_eq!(j["session"], "t-sup", "what was learnt is kept");
    assert!(j["duration_ms"].as_u64().unwrap() >= 1000);
    // SIGTERM was enough, and the orphaned grandchild was reaped at once:
    // no kill grace spent waiting for a zombie.
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_dead(&env, &["leader", "grandchild"]);
}

#[test]
fn idle_timeout_stops_a_silent_peer() {
    let env = Env::new();
    // Prints once, then nothing: idle after 1 s although --timeout is long.
    env.fake(
        "codex",
        &format!(
            "{}\n{}\n{THREAD_STARTED}\nwait",
            record("codex"),
            grandchild("")
        ),
    );
    let r = finish(
        spawn(&env, &["--idle-timeout", "1s", "--timeout", "10m", "x"]),
        Duration::from_secs(30),
    );
    assert_eq!(r.code, 124, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "timeout");
    assert_eq!(j["error"]["kind"], "idle_timeout");
    assert!(
        j["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("--idle-timeout")
    );
    assert_dead(&env, &["leader", "grandchild"]);
}

#[test]
fn output_on_stderr_counts_as_activity() {
    let env = Env::new();
    // Talks on stderr every 200 ms for ~2 s with a 1 s idle timeout, then finishes.
    env.fake(
        "codex",
        &format!(
            "{}\nfor i in 1 2 3 4 5 6 7 8 9 10; do echo working >&2; sleep 0.2; done\ncat '{}'",
            record("codex"),
            fixture("codex/codex-exec-basic.jsonl").display()
        ),
    );
    let r = finish(
        spawn(&env, &["--idle-timeout", "1s", "x"]),
        Duration::from_secs(30),
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.json()["status"], "success");
}

#[test]
fn a_peer_ignoring_sigterm_is_killed_after_the_grace() {
    let env = Env::new();
    // SIGTERM is ignored by the fake and (inherited) by its grandchild.
    env.fake(
        "codex",
        &format!(
            "{}\ntrap '' TERM\n{}\n{THREAD_STARTED}\nwhile :; do sleep 1; done",
            record("codex"),
            grandchild("")
        ),
    );
    let started = Instant::now();
    let r = finish(
        spawn(&env, &["--timeout", "500ms", "x"]),
        Duration::from_secs(30),
    );
    let took = started.elapsed();
    assert_eq!(r.code, 124, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.json()["status"], "timeout");
    assert!(
        took >= Duration::from_secs(5),
        "SIGKILL came early: {took:?}"
    );
    assert!(took < Duration::from_secs(15), "{took:?}");
    assert_dead(&env, &["leader", "grandchild"]);
}

#[test]
fn hang_after_the_final_event_is_stopped_and_still_a_success() {
    let env = Env::new();
    env.fake(
        "codex",
        &format!(
            "{}\n{}\ncat '{}'\nwait",
            record("codex"),
            grandchild(""),
            fixture("codex/codex-exec-basic.jsonl").display()
        ),
    );
    let started = Instant::now();
    let child = env
        .baton()
        .env("BATON_FINAL_GRACE_MS", "300")
        .args(["x"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let r = finish(child, Duration::from_secs(30));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "success");
    assert_eq!(j["message"], "Hi from the mock model!");
    assert!(j["error"].is_null());
    assert!(
        j["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("did not exit")),
        "{j}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_dead(&env, &["leader", "grandchild"]);
}

#[test]
fn a_peer_that_exits_is_not_cut_short_by_the_final_grace() {
    let env = Env::new();
    // Exits 0.5 s after turn.completed; the (default 10 s) grace must not matter.
    env.fake(
        "codex",
        &format!(
            "{}\ncat '{}'\nsleep 0.5\nexit 0",
            record("codex"),
            fixture("codex/codex-exec-basic.jsonl").display()
        ),
    );
    let r = finish(spawn(&env, &["x"]), Duration::from_secs(30));
    assert_eq!(r.code, 0);
    let j = r.json();
    assert_eq!(j["exit_code"], 0);
    assert!(
        !j["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("did not exit"))
    );
}

#[test]
fn a_background_grandchild_left_behind_is_stopped() {
    let env = Env::new();
    // The peer finishes normally but leaves a grandchild holding its stdout.
    env.fake(
        "codex",
        &format!(
            "{}\n{}\ncat '{}'\nexit 0",
            record("codex"),
            grandchild(""),
            fixture("codex/codex-exec-basic.jsonl").display()
        ),
    );
    let started = Instant::now();
    let r = finish(spawn(&env, &["x"]), Duration::from_secs(30));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.json()["status"], "success");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    assert_dead(&env, &["grandchild"]);
}

#[test]
fn a_grandchild_that_escaped_the_group_is_stopped_too() {
    let env = Env::new();
    // `setsid` puts the grandchild in a new session and group: killpg of the
    // peer's group cannot reach it. It also keeps the stdout pipe open.
    env.fake(
        "codex",
        &format!(
            "{}\n{}\ncat '{}'\nexit 0",
            record("codex"),
            grandchild("setsid"),
            fixture("codex/codex-exec-basic.jsonl").display()
        ),
    );
    let started = Instant::now();
    let r = finish(spawn(&env, &["x"]), Duration::from_secs(30));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "success");
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    assert_dead(&env, &["grandchild"]);
}

fn interrupt(sig: i32, kind_hint: &str) {
    let env = Env::new();
    env.fake(
        "codex",
        &format!(
            "{}\n{}\n{THREAD_STARTED}\necho 1 > \"$FAKE_DIR/said.pid\"\nwait",
            record("codex"),
            grandchild("")
        ),
    );
    let child = spawn(&env, &["x"]);
    // Signal only once the peer and its grandchild exist and the session
    // line is in the pipe (under load the signal could come before it).
    read_pid(&env, "grandchild");
    read_pid(&env, "said");
    // SAFETY: plain syscall on the baton process this test started.
    unsafe {
        libc::kill(child.id() as i32, sig);
    }
    let r = finish(child, Duration::from_secs(30));
    assert_eq!(r.code, 130, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "cancelled");
    assert_eq!(j["error"]["kind"], "cancelled");
    assert!(
        j["error"]["message"].as_str().unwrap().contains(kind_hint),
        "{j}"
    );
    assert_eq!(j["session"], "t-sup");
    assert_dead(&env, &["leader", "grandchild"]);
}

#[test]
fn ctrl_c_cancels_and_stops_the_group() {
    interrupt(libc::SIGINT, "SIGINT");
}

#[test]
fn sigterm_cancels_and_stops_the_group() {
    interrupt(libc::SIGTERM, "SIGTERM");
}

#[test]
fn two_hundred_megabytes_of_output_with_flat_memory() {
    const MB: u64 = 200;
    let env = Env::new();
    // ~200 MB of codex-style JSONL (reasoning items of ~1 KiB each), then the
    // real transcript's final message and turn.completed.
    let pad = "x".repeat(1000);
    let line = format!(
        r#"{{"type":"item.completed","item":{{"id":"item_0","type":"reasoning","text":"{pad}"}}}}"#
    );
    let lines = MB * 1024 * 1024 / (line.len() as u64 + 1);
    env.fake(
        "codex",
        &format!(
            "{}\nyes '{line}' | head -n {lines}\ncat '{}'",
            record("codex"),
            fixture("codex/codex-exec-basic.jsonl").display()
        ),
    );
    let child = spawn(&env, &["x"]);
    let pid = child.id();
    let mut child = child;
    let mut peak = 0;
    let until = Instant::now() + Duration::from_secs(300);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < until, "baton took too long");
        if let Some(kb) = crate::support::vm_hwm_kb(pid) {
            peak = peak.max(kb);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let r = Run::from(child.wait_with_output().unwrap());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "success");
    assert_eq!(j["message"], "Hi from the mock model!");
    let log = fs::metadata(j["log_path"].as_str().unwrap()).unwrap().len();
    assert!(log >= MB * 1024 * 1024, "log has {log} bytes");
    assert!(peak > 0, "never sampled VmHWM");
    assert!(peak < 64 * 1024, "peak RSS {peak} kB for {MB} MB of output");
    eprintln!("peak RSS {} kB for {} bytes of output", peak, log);
}
