//! Inside a host agent's sandbox (issue 22 §5): baton refuses at once with
//! `host_sandbox`, before any peer, job, worktree or record exists, where
//! a peer could not reach its model; and keeps its records in a fallback
//! state directory where the sandbox does not let it write its own.
//!
//! The network is blocked the way Codex blocks it: a real seccomp filter
//! (installed in the child before `exec`, inherited by baton and all it
//! starts) makes `socket(AF_INET|AF_INET6, …)` fail with EPERM. Nothing in
//! baton knows it is being tested. `make e2e` proves the same with the
//! real Codex as host (tests/e2e/host_sandbox.rs).

use std::fs;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{BATON, Env, Run, record};

/// Install a seccomp filter in `cmd`'s child that fails IPv4 and IPv6
/// `socket()` with EPERM, as Codex's workspace-write sandbox does on Linux;
/// every other system call passes.
fn without_network(cmd: &mut Command) -> &mut Command {
    seccomp(cmd, true)
}

/// A seccomp filter that denies IPv4/IPv6 `socket()` (`deny_inet`) or
/// nothing at all (Codex's sandbox with network access: a filter is there,
/// the network works).
fn seccomp(cmd: &mut Command, deny_inet: bool) -> &mut Command {
    #[cfg(target_arch = "x86_64")]
    const ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
    #[cfg(target_arch = "aarch64")]
    const ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64
    const LD_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const RET: u16 = 0x06; // BPF_RET | BPF_K
    const RET_ERRNO: u32 = 0x0005_0000;
    const RET_ALLOW: u32 = 0x7fff_0000;
    let op = |code: u16, jt: u8, jf: u8, k: u32| libc::sock_filter { code, jt, jf, k };
    // seccomp_data: nr at 0, arch at 4, args[0] (low half) at 16.
    let filter = [
        op(LD_ABS, 0, 0, 4),
        op(JEQ, 0, 6, ARCH),
        op(LD_ABS, 0, 0, 0),
        op(JEQ, 0, 4, libc::SYS_socket as u32),
        op(LD_ABS, 0, 0, 16),
        op(JEQ, 1, 0, libc::AF_INET as u32),
        op(JEQ, 0, 1, libc::AF_INET6 as u32),
        op(
            RET,
            0,
            0,
            if deny_inet {
                RET_ERRNO | libc::EPERM as u32
            } else {
                RET_ALLOW
            },
        ),
        op(RET, 0, 0, RET_ALLOW),
    ];
    // SAFETY: between fork and exec only prctl(2) runs, which is
    // async-signal-safe; `filter` is moved into the closure and outlives it.
    unsafe {
        cmd.pre_exec(move || {
            let prog = libc::sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_ptr() as *mut libc::sock_filter,
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    &prog as *const libc::sock_fprog,
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

/// Codex's markers in a command it runs in workspace-write.
fn codex_markers(cmd: &mut Command) -> &mut Command {
    cmd.env("CODEX_SANDBOX_NETWORK_DISABLED", "1")
        .env("CODEX_THREAD_ID", "019a-host-thread")
}

fn codex_peer(env: &Env) {
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
}

fn timed(cmd: &mut Command) -> (Run, Duration) {
    let t = Instant::now();
    let out = cmd.output().expect("run baton");
    (Run::from(out), t.elapsed())
}

fn assert_host_sandbox(r: &Run, sandbox: &str, hint_has: &[&str]) -> Value {
    assert_eq!(r.code, 1, "stdout {}\nstderr {}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "error", "{j}");
    assert_eq!(j["error"]["kind"], "host_sandbox", "{j}");
    let message = j["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("inside {sandbox}")),
        "message does not name {sandbox}: {message}"
    );
    assert!(message.contains("network"), "{message}");
    let hint = j["error"]["hint"].as_str().unwrap();
    for want in hint_has {
        assert!(hint.contains(want), "hint lacks {want}: {hint}");
    }
    assert!(r.stderr.contains("baton: error: baton is running inside"));
    j
}

/// Nothing was made for a peer: no run folder, no job, no worktree.
fn assert_nothing_made(env: &Env) {
    let repos = env.state.join("repos");
    let made: Vec<String> = walk(&repos)
        .into_iter()
        .filter(|p| {
            ["runs/", "jobs/", "worktrees/", "ask-budget/"]
                .iter()
                .any(|s| p.contains(s))
        })
        .collect();
    assert!(made.is_empty(), "records made for a peer: {made:?}");
    assert!(!env.work.join(".baton").exists());
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        out.push(p.display().to_string() + if p.is_dir() { "/" } else { "" });
        if p.is_dir() {
            out.extend(walk(&p));
        }
    }
    out
}

#[test]
fn codexs_sandbox_without_network_stops_a_run_at_once() {
    let env = Env::new();
    env.git_init();
    codex_peer(&env);
    let mut c = env.baton();
    codex_markers(without_network(&mut c)).args(["--agent", "codex", "say hi"]);
    let (r, took) = timed(&mut c);
    let j = assert_host_sandbox(
        &r,
        "Codex's sandbox",
        &[
            "require_escalated",
            "[sandbox_workspace_write]",
            "network_access = true",
            "-c sandbox_workspace_write.network_access=true",
        ],
    );
    let message = j["error"]["message"].as_str().unwrap();
    for want in [
        "CODEX_SANDBOX_NETWORK_DISABLED=1",
        "socket() fails: Operation not permitted",
        "not even one on 127.0.0.1",
        "no peer was started",
    ] {
        assert!(message.contains(want), "{want}: {message}");
    }
    assert_eq!(j["exit_code"], 1);
    assert!(!env.called("codex"), "the peer must never start");
    assert_nothing_made(&env);
    // At once: a process start and a socket() call, not a peer's retries.
    assert!(took < Duration::from_secs(2), "took {took:?}");
}

#[test]
fn every_way_to_start_a_peer_is_refused_before_it_makes_anything() {
    let env = Env::new();
    env.git_init();
    codex_peer(&env);
    // The fan-outs (sync and `--async`) made their record before this
    // check until issue 30 §3 gave every door one gate.
    let cases: [&[&str]; 7] = [
        &[
            "run",
            "--agents",
            "codex,claude",
            "--test-cmd",
            "true",
            "say hi",
        ],
        &[
            "run",
            "--async",
            "--attempts",
            "2",
            "--read-only",
            "--agent",
            "codex",
            "say hi",
        ],
        &["run", "--async", "--agent", "codex", "say hi"],
        &["run", "--worktree", "--agent", "codex", "say hi"],
        &[
            "ask",
            "--agent",
            "codex",
            "--task-id",
            "t1",
            "is this safe?",
        ],
        &[
            "council",
            "discuss",
            "--members",
            "codex,claude",
            "which cache?",
        ],
        &["--agent", "codex", "--access", "read-only", "say hi"],
    ];
    env.fake("claude", &record("claude"));
    for args in cases {
        let mut c = env.baton();
        codex_markers(without_network(&mut c)).args(args);
        let (r, _) = timed(&mut c);
        assert_host_sandbox(&r, "Codex's sandbox", &["network_access = true"]);
        assert!(!env.called("codex") && !env.called("claude"), "{args:?}");
        assert_nothing_made(&env);
    }
    // The dry run starts nothing, so it still answers.
    let mut c = env.baton();
    codex_markers(without_network(&mut c)).args(["--dry-run", "--agent", "codex", "say hi"]);
    let (r, _) = timed(&mut c);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.json()["dry_run"], true);
}

#[test]
fn a_blocked_network_without_markers_is_an_unknown_sandbox() {
    let env = Env::new();
    codex_peer(&env);
    let mut c = env.baton();
    without_network(&mut c)
        .env_remove("CODEX_SANDBOX_NETWORK_DISABLED")
        .env_remove("CODEX_THREAD_ID")
        .env_remove("SANDBOX_RUNTIME")
        .args(["--agent", "codex", "say hi"]);
    let (r, _) = timed(&mut c);
    let j = assert_host_sandbox(&r, "a sandbox", &["outside the sandbox"]);
    assert!(!j["error"]["hint"].as_str().unwrap().contains("codex"));
    assert!(!env.called("codex"));
}

#[test]
fn claude_codes_sandbox_is_refused_by_its_marker() {
    let env = Env::new();
    codex_peer(&env);
    // Claude Code's sandbox opens sockets (a network namespace of its own
    // behind its proxy): its marker decides.
    let (r, _) = timed(
        env.baton()
            .env("SANDBOX_RUNTIME", "1")
            .env("CLAUDECODE", "1")
            .args(["--agent", "codex", "say hi"]),
    );
    let j = assert_host_sandbox(
        &r,
        "Claude Code's sandbox",
        &[
            "dangerouslyDisableSandbox: true",
            "\"excludedCommands\": [\"baton:*\"]",
        ],
    );
    assert!(j["error"]["message"].as_str().unwrap().contains("proxy"));
    assert!(!env.called("codex"));
    // Claude Code running baton outside its sandbox (no SANDBOX_RUNTIME).
    let r = Run::from(
        env.baton()
            .env("CLAUDECODE", "1")
            .args(["--agent", "codex", "say hi"])
            .output()
            .unwrap(),
    );
    assert_eq!((r.code, &r.json()["status"]), (0, &Value::from("success")));
}

#[test]
fn codexs_marker_with_a_working_network_runs() {
    // A command the user let run outside Codex's sandbox may carry the
    // marker of the turn's policy: the socket decides, and it opens.
    let env = Env::new();
    codex_peer(&env);
    let mut c = env.baton();
    codex_markers(&mut c).args(["--agent", "codex", "say hi"]);
    let (r, _) = timed(&mut c);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "success");
    assert!(env.called("codex"));
    // Its records are where they always are: nothing about a fallback.
    assert!(
        !j["warnings"].to_string().contains("records are kept in"),
        "{j}"
    );
}

#[test]
fn a_job_started_inside_codexs_sandbox_is_told_it_will_be_lost() {
    let env = Env::new();
    codex_peer(&env);
    let note = "ends every process a command started";
    // Codex's sandbox with network access: a seccomp filter, and its marker.
    let mut c = env.baton();
    seccomp(&mut c, false)
        .env("CODEX_THREAD_ID", "019a-host-thread")
        .args(["run", "--async", "--agent", "codex", "say hi"]);
    let (r, _) = timed(&mut c);
    let j = r.json();
    assert_eq!(j["status"], "running", "{j}");
    let w = j["warnings"].to_string();
    assert!(w.contains(note) && w.contains("in the foreground"), "{w}");
    let id = j["job_id"].as_str().unwrap().to_string();
    assert_eq!(
        env.run(&["wait", &id, "--timeout", "30s"]).json()["status"],
        "success"
    );
    // Run by Codex outside its sandbox (no filter): nothing to warn about.
    let r = Run::from(
        env.baton()
            .env("CODEX_THREAD_ID", "019a-host-thread")
            .args(["run", "--async", "--agent", "codex", "say hi"])
            .output()
            .unwrap(),
    );
    let j = r.json();
    assert!(!j["warnings"].to_string().contains(note), "{j}");
    let id = j["job_id"].as_str().unwrap().to_string();
    assert_eq!(
        env.run(&["wait", &id, "--timeout", "30s"]).json()["status"],
        "success"
    );
}

/// `script` run by `sh -c` in a private mount namespace (`unshare -Urm`)
/// where `$HOME` is a read-only file system, as in Codex's workspace-write
/// sandbox; `BATON_STATE_DIR` and `XDG_STATE_HOME` unset, so baton's state
/// directory is `$HOME/.local/state/baton`. `None` where user namespaces
/// are not available.
fn in_read_only_home(env: &Env, vars: &[(&str, &str)], script: &str) -> Option<Run> {
    let probe = Command::new("unshare")
        .args(["-Urm", "true"])
        .stderr(Stdio::null())
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        eprintln!("skipped: `unshare -Urm` is not available here");
        return None;
    }
    let home = env.tmp.path().join("home");
    fs::create_dir_all(&home).unwrap();
    let mut c = Command::new("unshare");
    c.current_dir(&env.work)
        .env_clear()
        .env(
            "PATH",
            format!("{}:/usr/local/bin:/usr/bin:/bin", env.bin.display()),
        )
        .env("HOME", &home)
        .env("FAKE_DIR", &env.fake_dir)
        .env("BATON_CONFIG", env.tmp.path().join("user-config.toml"))
        .env("BATON", BATON)
        .envs(vars.iter().copied())
        .stdin(Stdio::null())
        .args(["-Urm", "sh", "-c"])
        .arg(format!(
            "set -u\nmount -t tmpfs -o ro,size=16k tmpfs \"$HOME\" || exit 99\n{script}"
        ));
    let r = Run::from(c.output().unwrap());
    assert_ne!(r.code, 99, "mounting a read-only home failed: {}", r.stderr);
    Some(r)
}

#[test]
fn inside_a_hosts_sandbox_records_move_to_the_temporary_directory() {
    let env = Env::new();
    env.git_init();
    codex_peer(&env);
    let tmp = env.tmp.path().join("tmpdir");
    fs::create_dir_all(&tmp).unwrap();
    let tmp_s = tmp.display().to_string();
    // A foreground run, then a job started and waited for in a later
    // command of the same sandbox (two tool calls of the host).
    let Some(r) = in_read_only_home(
        &env,
        &[("CODEX_THREAD_ID", "019a-host-thread"), ("TMPDIR", &tmp_s)],
        r#""$BATON" --agent codex "say hi" > "$FAKE_DIR/run.json" || exit 1
"$BATON" run --async --agent codex "say hi again" > "$FAKE_DIR/job.json" || exit 2
id=$(sed 's/.*"job_id":"\([a-z0-9]*\)".*/\1/' "$FAKE_DIR/job.json")
"$BATON" wait "$id" --timeout 60s"#,
    ) else {
        return;
    };
    assert_eq!(r.code, 0, "stdout {}\nstderr {}", r.stdout, r.stderr);
    let used = tmp.join("baton-0");
    let run: Value =
        serde_json::from_str(&fs::read_to_string(env.fake_dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["status"], "success", "{run}");
    let w = run["warnings"].to_string();
    assert!(
        w.contains(&format!("records are kept in {}", used.display()))
            && w.contains("Codex's sandbox")
            && w.contains("Read-only file system")
            && w.contains(&format!("BATON_STATE_DIR={}", used.display())),
        "{w}"
    );
    let log = run["log_path"].as_str().expect("records were kept");
    assert!(log.starts_with(used.to_str().unwrap()), "{log}");
    assert!(
        std::path::Path::new(log)
            .with_file_name("result.json")
            .is_file()
    );
    // The job was found by the later `wait`, in the same fallback store.
    let job: Value =
        serde_json::from_str(&fs::read_to_string(env.fake_dir.join("job.json")).unwrap()).unwrap();
    assert!(
        job["warnings"].to_string().contains("records are kept in"),
        "{job}"
    );
    let waited = r.json();
    assert_eq!(waited["status"], "success", "{waited}");
    assert_eq!(waited["job_id"], job["job_id"]);
    // Private, as the state directory itself is.
    use std::os::unix::fs::PermissionsExt;
    let mode = fs::metadata(&used).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
}

#[test]
fn outside_a_host_or_without_a_writable_fallback_nothing_is_moved() {
    let env = Env::new();
    codex_peer(&env);
    let tmp = env.tmp.path().join("tmpdir");
    fs::create_dir_all(&tmp).unwrap();
    let tmp_s = tmp.display().to_string();
    // No host marker: a read-only home is reported as it always was.
    let Some(r) = in_read_only_home(
        &env,
        &[("TMPDIR", &tmp_s)],
        r#""$BATON" --agent codex "say hi""#,
    ) else {
        return;
    };
    let j = r.json();
    assert_eq!(j["status"], "success", "{j}");
    let w = j["warnings"].to_string();
    assert!(w.contains("nothing of this run is saved"), "{w}");
    assert!(!w.contains("records are kept in"), "{w}");
    assert!(!tmp.join("baton-0").exists());

    // A host's sandbox whose temporary directory is not writable either.
    let Some(r) = in_read_only_home(
        &env,
        &[("CODEX_THREAD_ID", "x"), ("TMPDIR", "/proc/no-such-dir")],
        r#""$BATON" --agent codex "say hi""#,
    ) else {
        return;
    };
    let w = r.json()["warnings"].to_string();
    assert!(w.contains("nothing of this run is saved"), "{w}");

    // A fallback that is a link (planted before baton made it) is refused.
    std::os::unix::fs::symlink(env.tmp.path(), tmp.join("baton-0")).unwrap();
    let Some(r) = in_read_only_home(
        &env,
        &[("CODEX_THREAD_ID", "x"), ("TMPDIR", &tmp_s)],
        r#""$BATON" --agent codex "say hi""#,
    ) else {
        return;
    };
    let w = r.json()["warnings"].to_string();
    assert!(w.contains("nothing of this run is saved"), "{w}");
    assert!(!env.tmp.path().join("repos").exists());
}

#[test]
fn an_explicit_state_directory_is_never_moved() {
    let env = Env::new();
    codex_peer(&env);
    let mut c = env.baton();
    c.env("CODEX_THREAD_ID", "x")
        .args(["--agent", "codex", "say hi"]);
    let r = Run::from(c.output().unwrap());
    let j = r.json();
    assert!(
        j["log_path"]
            .as_str()
            .unwrap()
            .starts_with(env.state.to_str().unwrap())
    );
    assert!(!j["warnings"].to_string().contains("records are kept in"));
}
