//! `baton watch --once` over fake jobs (running, stalled, lost, ended), and
//! the live progress line of a foreground run, drawn in a real pseudo-terminal.

use std::fs::{self, File};
use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::support::{Env, Run, fixture, pid_alive, record, wait_for};

const LONG: Duration = Duration::from_secs(20);

pub(crate) fn start(env: &Env, args: &[&str]) -> String {
    let mut a = vec!["run", "--async"];
    a.extend_from_slice(args);
    let r = env.run(&a);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    r.json()["job_id"].as_str().unwrap().to_string()
}

pub(crate) fn state(env: &Env, id: &str) -> Value {
    let b = fs::read(env.records("jobs").join(id).join("state.json")).unwrap();
    serde_json::from_slice(&b).unwrap()
}

/// The fake `name` prints `events` (one JSON per line), then waits for
/// `$FAKE_DIR/<gate>` and ends as the recorded `final_transcript` did.
pub(crate) fn fake_working(
    env: &Env,
    name: &str,
    gate: &str,
    events: &[&str],
    final_transcript: &str,
) {
    let mut script = record(name);
    for e in events {
        script.push_str(&format!("\nprintf '%s\\n' '{e}'"));
    }
    script.push_str(&format!(
        "\nwhile [ ! -e \"$FAKE_DIR/{gate}\" ]; do sleep 0.02; done\ncat '{}'",
        fixture(final_transcript).display()
    ));
    env.fake(name, &script);
}

fn watch(env: &Env) -> Value {
    let r = env.run(&["watch", "--once", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.json()
}

fn job<'a>(snap: &'a Value, id: &str) -> &'a Value {
    snap["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["job_id"] == id)
        .unwrap_or_else(|| panic!("{id} not in {snap}"))
}

/// Set a file's modification time `ago` into the past.
fn age(path: &std::path::Path, ago: Duration) {
    let f = File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - ago).unwrap();
}

#[test]
fn once_shows_every_job_with_state_activity_and_order() {
    let env = Env::new();
    // An ended job, with usage in its result.
    env.replay("claude", "claude/claude-toolcall-stream.jsonl", 0);
    let ended = start(&env, &["--agent", "claude", "write it"]);
    assert_eq!(env.run(&["wait", &ended]).code, 0);

    // A running job in the middle of a command.
    fake_working(
        &env,
        "codex",
        "gate",
        &[
            r#"{"type":"thread.started","thread_id":"t-1"}"#,
            r#"{"type":"item.completed","item":{"type":"file_change","changes":[{"path":"src/a.rs","kind":"update"}]}}"#,
            r#"{"type":"item.started","item":{"type":"command_execution","command":"cargo test"}}"#,
        ],
        "codex/codex-exec-toolcall.jsonl",
    );
    let running = start(&env, &["--agent", "codex", "test it"]);
    // A running job that went quiet: its logs are older than half its idle timeout.
    let stalled = start(
        &env,
        &["--agent", "codex", "--idle-timeout", "10m", "quiet"],
    );
    // A job whose runner was killed.
    let lost = start(&env, &["--agent", "codex", "doomed"]);
    for id in [&running, &stalled, &lost] {
        assert!(wait_for(LONG, || {
            fs::read_to_string(env.records("jobs").join(id).join("stdout.log"))
                .is_ok_and(|l| l.contains("cargo test"))
        }));
    }
    let dir = env.records("jobs").join(&stalled);
    for f in ["stdout.log", "stderr.log"] {
        age(&dir.join(f), Duration::from_secs(6 * 60));
    }
    let pid = state(&env, &lost)["runner_pid"].as_i64().unwrap() as i32;
    // SAFETY: plain syscall on the runner this test started.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    assert!(wait_for(LONG, || !pid_alive(pid)));

    let snap = watch(&env);
    assert_eq!(snap["schema_version"], 1, "{snap}");
    let order: Vec<&str> = snap["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["job_id"].as_str().unwrap())
        .collect();
    // Running first, then what needs attention (newest first), then the rest.
    assert_eq!(order, [&running, &lost, &stalled, &ended], "{snap}");

    let r = job(&snap, &running);
    assert_eq!(r["status"], "running");
    assert_eq!(r["agent"], "codex");
    assert_eq!(r["doing"], "$ cargo test");
    assert_eq!(r["files_changed"], serde_json::json!(["src/a.rs"]));
    assert!(r["last_activity_age_ms"].as_u64().unwrap() < 60_000, "{r}");

    let s = job(&snap, &stalled);
    assert_eq!(s["status"], "stalled", "{s}");
    assert!(s["last_activity_age_ms"].as_u64().unwrap() >= 6 * 60 * 1000);

    let l = job(&snap, &lost);
    assert_eq!(l["status"], "lost");
    assert_eq!(
        state(&env, &lost)["status"],
        "lost",
        "recorded, not guessed"
    );

    let e = job(&snap, &ended);
    assert_eq!(e["status"], "success");
    assert_eq!(e["usage"]["input_tokens"], 5261);
    assert!(e["usage"]["cost_usd"].as_f64().unwrap() > 0.02);
    assert!(e["doing"].as_str().unwrap().contains("succeeded"), "{e}");
    assert!(e["elapsed_ms"].is_u64());

    let t = env.run(&["watch", "--once", "--text"]);
    assert_eq!(t.code, 0);
    let lines: Vec<&str> = t.stdout.lines().collect();
    assert!(lines[0].starts_with("ID "), "{}", t.stdout);
    assert!(lines[1].contains(&running) && lines[1].contains("$ cargo test"));
    assert!(lines[3].contains(&stalled) && lines[3].contains("stalled"));
    assert!(
        lines[4].contains(&ended) && lines[4].contains("5.4k $0.02"),
        "{}",
        t.stdout
    );

    fs::write(env.fake_dir.join("gate"), "").unwrap();
    for id in [&running, &stalled] {
        assert_eq!(env.run(&["wait", id]).code, 0);
    }
    let snap = watch(&env);
    assert_eq!(job(&snap, &running)["status"], "success");
}

#[test]
fn once_with_no_jobs_and_watch_without_once() {
    let env = Env::new();
    let snap = watch(&env);
    assert_eq!(snap["jobs"], serde_json::json!([]));
    assert_eq!(env.run(&["watch", "--once", "--text"]).stdout, "no jobs\n");
    // The interactive view needs a terminal; without one it says what to use.
    let r = env.run(&["watch"]);
    assert_eq!(r.code, 2);
    let j = r.json();
    assert_eq!(j["error"]["kind"], "usage");
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("needs a terminal"),
        "{j}"
    );
    assert!(
        j["error"]["hint"].as_str().unwrap().contains("--once"),
        "{j}"
    );
    let r = env.run(&["watch", "--once", "--on-change", "true"]);
    assert_eq!(r.code, 2, "--on-change is for the interactive view");
}

/// A fake codex that starts a command, stays at it for a while, then finishes.
fn slow_codex(env: &Env) {
    env.fake(
        "codex",
        &format!(
            "{}\nprintf '%s\\n' '{}' '{}'\nsleep 1\ncat '{}'",
            record("codex"),
            r#"{"type":"thread.started","thread_id":"t-9"}"#,
            r#"{"type":"item.started","item":{"type":"command_execution","command":"cargo test"}}"#,
            fixture("codex/codex-exec-toolcall.jsonl").display()
        ),
    );
}

/// Run baton with stderr on a new pseudo-terminal: (stdout, what the terminal got).
pub(crate) fn run_on_pty(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> (Run, String) {
    let (master, slave) = baton::sys::fd::openpty().expect("openpty");
    let master = File::from(master);
    let reader = std::thread::spawn(move || {
        let mut master = master;
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        // EIO once the last holder of the terminal's other side is gone.
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&got).into_owned()
    });
    let mut cmd = env.baton();
    cmd.args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::from(slave));
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let child = cmd.spawn().unwrap();
    drop(cmd);
    let out = child.wait_with_output().unwrap();
    (Run::from(out), reader.join().unwrap())
}

#[test]
fn progress_line_is_drawn_on_a_terminal_and_erased() {
    let env = Env::new();
    slow_codex(&env);
    let (r, tty) = run_on_pty(&env, &["--agent", "codex", "do it"], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["status"], "success");
    assert!(tty.contains("\r\x1b[2K"), "{tty:?}");
    assert!(tty.contains(" codex · $ cargo test"), "{tty:?}");
    // The last thing written is the erase: the line is gone before the result.
    assert!(tty.ends_with("\r\x1b[2K"), "{tty:?}");
    assert!(
        !r.stdout.contains('\x1b'),
        "stdout stays clean: {:?}",
        r.stdout
    );
}

#[test]
fn no_progress_line_when_not_a_terminal_or_turned_off() {
    let env = Env::new();
    slow_codex(&env);
    let r = env.run(&["--agent", "codex", "do it"]);
    assert_eq!(r.code, 0);
    assert_eq!(r.json()["status"], "success");
    assert_eq!(r.stderr, "", "nothing extra on a non-terminal stderr");
    for (args, vars) in [
        (vec!["--agent", "codex", "--quiet", "do it"], vec![]),
        (vec!["run", "--quiet", "--agent", "codex", "x"], vec![]),
        (
            vec!["--agent", "codex", "do it"],
            vec![("BATON_PROGRESS", "0")],
        ),
    ] {
        let (r, tty) = run_on_pty(&env, &args, &vars);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert_eq!(r.json()["status"], "success");
        assert_eq!(tty, "", "{args:?} {vars:?}");
    }
}
