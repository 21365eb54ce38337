//! The interactive `baton watch`, the real binary in a pseudo-terminal
//! (tmux, 100×30): two fake jobs seen, one cancelled after its confirmation,
//! the other continued once it ended; the store checked afterwards.
//!
//! Skipped with a note where tmux is missing, failed in CI (`CI` set), where
//! .ci/run installs it.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

use crate::support::{Env, wait_for};
use crate::text_safety::{HOSTILE, SEEN, hostile_claude};
use crate::watch::{fake_working, start, state};

const LONG: Duration = Duration::from_secs(30);

/// A tmux server of its own (socket in the test's directory), killed on drop.
struct Tmux {
    sock: PathBuf,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-S")
            .arg(&self.sock)
            .args(args)
            .output()
            .expect("run tmux")
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", "w"]).stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let mut a = vec!["send-keys", "-t", "w"];
        a.extend_from_slice(keys);
        assert!(self.cmd(&a).status.success());
    }

    /// Wait until the screen shows `what`; the screen.
    fn see(&self, what: &str) -> String {
        let mut last = String::new();
        let seen = wait_for(LONG, || {
            last = self.screen();
            last.contains(what)
        });
        assert!(seen, "never saw {what:?} on the screen:\n{last}");
        last
    }

    /// Move the selection (`›`) to the row of job `id`.
    fn select(&self, id: &str) {
        for _ in 0..10 {
            let s = self.screen();
            let row = s.lines().find(|l| l.contains(id)).unwrap_or("");
            if row.starts_with('›') {
                return;
            }
            let above = s
                .lines()
                .take_while(|l| !l.contains(id))
                .any(|l| l.starts_with('›'));
            self.keys(&[if above { "Down" } else { "Up" }]);
            wait_for(Duration::from_secs(2), || self.screen() != s);
        }
        panic!("could not select {id}:\n{}", self.screen());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

fn have_tmux() -> bool {
    let found = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "`tmux` is not installed; .ci/run installs it (apt-get)"
        );
        eprintln!("skipped: `tmux` is not installed (CI installs it)");
    }
    found
}

/// `baton watch ARGS` in a new tmux session `w`, with the environment
/// `Env::baton` gives (through `env`, so no shell is involved).
fn watch(env: &Env, args: &[&str]) -> Tmux {
    // A server per session: a new one on the socket of a server being
    // killed can meet it still exiting.
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmux = Tmux {
        sock: env.tmp.path().join(format!("tmux-{n}.sock")),
    };
    let baton = env.baton();
    // `env -u NAME…` (options first), then `NAME=VALUE…`.
    let mut argv: Vec<String> = vec!["env".into()];
    let mut set = Vec::new();
    for (k, v) in baton.get_envs() {
        match v {
            Some(v) => set.push(format!("{}={}", k.to_string_lossy(), v.to_string_lossy())),
            None => argv.extend(["-u".into(), k.to_string_lossy().into_owned()]),
        }
    }
    argv.extend(set);
    argv.push(baton.get_program().to_string_lossy().into_owned());
    argv.push("watch".into());
    argv.extend(args.iter().map(|s| s.to_string()));
    let work = env.work.to_string_lossy().into_owned();
    // No user configuration; the pane is kept after baton exits, to read how it exited.
    let conf = env.tmp.path().join("tmux.conf");
    fs::write(&conf, "set-option -g remain-on-exit on\n").unwrap();
    let conf = conf.to_string_lossy().into_owned();
    let mut a = vec![
        "-f",
        &conf,
        "new-session",
        "-d",
        "-s",
        "w",
        "-x",
        "100",
        "-y",
        "30",
        "-c",
        &work,
    ];
    a.extend(argv.iter().map(String::as_str));
    let out = Command::new("tmux")
        .arg("-S")
        .arg(&tmux.sock)
        .args(&a)
        .env("TERM", "xterm-256color")
        .output()
        .expect("start tmux");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    tmux
}

#[test]
fn watch_sees_two_jobs_cancels_one_and_continues_the_other() {
    if !have_tmux() {
        return;
    }
    let env = Env::new();
    fake_working(
        &env,
        "codex",
        "gate-a",
        &[
            r#"{"type":"thread.started","thread_id":"t-1"}"#,
            r#"{"type":"item.started","item":{"type":"command_execution","command":"cargo test"}}"#,
        ],
        "codex/codex-exec-toolcall.jsonl",
    );
    fake_working(
        &env,
        "claude",
        "gate-b",
        &[],
        "claude/claude-toolcall-stream.jsonl",
    );
    let a = start(&env, &["--agent", "codex", "task a"]);
    let b = start(&env, &["--agent", "claude", "task b"]);
    let changes = env.tmp.path().join("changes.log");
    let hook = env.tmp.path().join("on-change");
    fs::write(
        &hook,
        format!(
            "#!/bin/sh\necho \"$BATON_JOB_ID $BATON_JOB_STATUS $1\" >> '{}'\n",
            changes.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let cmd = format!("'{}' 'an arg'", hook.display());
    let t = watch(&env, &["--on-change", &cmd]);

    // Both jobs, with what the running codex is doing.
    t.see(&a);
    let s = t.see(&b);
    assert!(s.contains("baton watch · 2 jobs"), "{s}");
    t.see("$ cargo test");

    // The detail pane of job a: its transcript.
    t.select(&a);
    t.keys(&["Enter"]);
    let s = t.see("transcript (following)");
    assert!(s.contains("$ cargo test") && s.contains(&a), "{s}");

    // Cancel a: asked first, and nothing happens on a no.
    t.keys(&["c"]);
    t.see(&format!("cancel job {a}? y/n"));
    t.keys(&["n"]);
    t.see("not cancelled");
    assert_eq!(state(&env, &a)["status"], "running");
    t.keys(&["c"]);
    t.see(&format!("cancel job {a}? y/n"));
    t.keys(&["y"]);
    t.see(&format!("job {a} cancelled"));
    assert_eq!(state(&env, &a)["status"], "cancelled");
    t.keys(&["Escape"]);
    t.see("Enter open");

    // b cannot be continued while it runs; once it ended, it can.
    t.select(&b);
    t.keys(&["n"]);
    t.see("is still running");
    fs::write(env.fake_dir.join("gate-b"), "").unwrap();
    assert!(wait_for(LONG, || state(&env, &b)["status"] == "success"));
    let s = t.see("✓");
    t.select(&b);
    assert!(s.contains(&b), "{s}");
    t.keys(&["n"]);
    t.see(&format!("continue job {b}:"));
    t.keys(&["-l", "now the changelog"]);
    t.keys(&["Enter"]);
    t.see(&format!("job {b} continues as job"));

    // The store: a new job resuming b's session with the typed turn.
    let jobs = env.records("jobs");
    let mut next = None;
    assert!(wait_for(LONG, || {
        next = fs::read_dir(&jobs).unwrap().flatten().find_map(|e| {
            let id = e.file_name().to_string_lossy().into_owned();
            // A launch stages the job's folder under a hidden name.
            (id != a && id != b && !id.starts_with('.')).then_some(id)
        });
        next.is_some()
    }));
    let next = next.unwrap();
    let st = state(&env, &next);
    assert_eq!(st["resumed_from"], b.as_str(), "{st}");
    assert_eq!(st["task"], "now the changelog", "{st}");
    assert!(wait_for(LONG, || state(&env, &next)["status"] == "success"));
    let argv = env.argv("claude");
    assert!(argv.iter().any(|x| x == "--resume"), "{argv:?}");

    // The alerts ran the hook (no shell: the quoted argument arrived whole).
    assert!(
        wait_for(LONG, || {
            fs::read_to_string(&changes).is_ok_and(|c| {
                c.contains(&format!("{a} cancelled an arg"))
                    && c.contains(&format!("{b} success an arg"))
                    && c.contains(&format!("{next} success an arg"))
            })
        }),
        "the hook's log: {:?}",
        fs::read_to_string(&changes)
    );

    // q leaves cleanly and gives the terminal back (the alternate screen is gone).
    t.keys(&["q"]);
    assert_eq!(exit_status(&t).as_deref().unwrap_or("0"), "0");
    assert!(!t.screen().contains("baton watch ·"), "{}", t.screen());
}

/// Wait until the pane's process exited; its exit code. tmux can show the
/// pane dead (its terminal closed) a moment before it has reaped the process
/// and knows the code; a code that never shows up is `None`, a death by
/// signal fails the test.
fn exit_status(t: &Tmux) -> Option<String> {
    let mut st = String::new();
    let look = |st: &mut String| {
        let out = t.cmd(&[
            "display",
            "-p",
            "-t",
            "w",
            "#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}",
        ]);
        *st = String::from_utf8_lossy(&out.stdout).trim().to_string();
    };
    let dead = wait_for(LONG, || {
        look(&mut st);
        st.starts_with("1:")
    });
    assert!(dead, "baton watch did not exit: {st}\n{}", t.screen());
    wait_for(Duration::from_secs(5), || {
        look(&mut st);
        st != "1::"
    });
    let parts: Vec<&str> = st.split(':').collect();
    assert_eq!(
        parts[2], "",
        "baton watch was killed by signal {}",
        parts[2]
    );
    (!parts[1].is_empty()).then(|| parts[1].to_string())
}

#[test]
fn ctrl_c_and_sigterm_leave_with_the_terminal_restored() {
    if !have_tmux() {
        return;
    }
    let env = Env::new();
    {
        let t = watch(&env, &[]);
        t.see("no jobs yet");
        t.keys(&["C-c"]);
        assert_eq!(exit_status(&t).as_deref().unwrap_or("0"), "0");
        assert!(!t.screen().contains("baton watch ·"), "{}", t.screen());
    }
    let t = watch(&env, &[]);
    t.see("no jobs yet");
    let out = t.cmd(&["display", "-p", "-t", "w", "#{pane_pid}"]);
    let pid: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    // SAFETY: plain syscall on the process this test started.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    assert_eq!(exit_status(&t).as_deref().unwrap_or("0"), "0");
    assert!(!t.screen().contains("baton watch ·"), "{}", t.screen());
}

/// A peer's model, task and message holding terminal sequences (issue 29
/// §5): the fleet and the detail pane show them escaped (`\u{1b}`), and the
/// pane's title is not the one the peer asked for.
#[test]
fn a_peers_control_characters_show_escaped_and_never_reach_the_terminal() {
    if !have_tmux() {
        return;
    }
    let env = Env::new();
    hostile_claude(&env);
    let id = start(&env, &["--agent", "claude", &format!("task {HOSTILE}")]);
    assert!(wait_for(LONG, || state(&env, &id)["status"] == "success"));
    let t = watch(&env, &[]);
    t.see(&id);
    t.select(&id);
    t.keys(&["Enter"]);
    let s = t.see("transcript");
    assert!(s.contains(&format!("task: task {SEEN}")), "{s}");
    assert!(s.contains(&format!("claude{SEEN}")), "the model: {s}");
    t.see(&format!("first line {SEEN}"));
    let title = t.cmd(&["display", "-p", "-t", "w", "#{pane_title}"]);
    let title = String::from_utf8_lossy(&title.stdout);
    assert!(!title.contains("pwned"), "the peer set the title: {title}");
    t.keys(&["q"]);
    assert_eq!(exit_status(&t).as_deref().unwrap_or("0"), "0");
}

#[test]
fn watch_shows_a_council_as_a_group_opens_a_run_and_cancels_the_council() {
    if !have_tmux() {
        return;
    }
    let (env, fake) = crate::council::setup();
    let mut j = crate::council::good_scenario().to_json();
    j["agents"]["codex"]["proposal"] =
        serde_json::json!([{"hang": true, "progress": "rg -n cache src"}]);
    fake.write_json(&j);
    let r = crate::council::council(
        &env,
        &["discuss", "--async", "--members", "codex,claude,pi", "q?"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let id = r.json()["council_id"].as_str().unwrap().to_string();
    let t = watch(&env, &[]);

    // The header row, then its runs in a tree; codex says what it does.
    let s = t.see("─ m0");
    // Runs are drawn as they are recorded: under load a member's run may
    // not exist yet, so only the tree's shape is checked here.
    assert!(s.contains("├─ m"), "a tree: {s}");
    let header = s.lines().find(|l| l.contains(&id)).unwrap_or("");
    assert!(header.contains("council"), "{s}");
    assert!(s.contains("1 council"), "{s}");
    t.see("proposing · $ rg -n cache src");

    // Enter on a run: its transcript, from its log.
    t.select("─ m0");
    t.keys(&["Enter"]);
    let s = t.see("transcript (following)");
    assert!(s.contains(&format!("{id}/proposing-m0")), "{s}");
    t.see("$ rg -n cache src");
    t.keys(&["Escape"]);
    t.see("Enter open");

    // Continue does not apply; c on the header cancels the council.
    t.select(&id);
    t.keys(&["n"]);
    t.see("does not apply to a council");
    t.keys(&["c"]);
    t.see(&format!("cancel council {id}? y/n"));
    t.keys(&["y"]);
    t.see(&format!("council {id}: cancelled"));
    let st = crate::council::council(&env, &["status", &id]).json();
    assert_eq!(st["stage"], "cancelled", "{st}");
    t.keys(&["q"]);
}

#[test]
fn watch_all_shows_each_repository_and_cancels_a_job_of_another() {
    if !have_tmux() {
        return;
    }
    let env = Env::new();
    let (alpha, a, b, w) = crate::all_repos::three(&env);
    // Started in `work`: alpha's running job is another repository's.
    let t = watch(&env, &["--all"]);
    let s = t.see(&a);
    assert!(s.contains("REPO"), "{s}");
    assert!(s.contains("--all · 3 repositories"), "{s}");
    t.see(&b);
    let s = t.see(&w);
    let row = |id: &str| s.lines().find(|l| l.contains(id)).unwrap_or("").to_string();
    assert!(row(&a).contains("alpha"), "{s}");
    assert!(row(&b).contains("beta (gone)"), "{s}");

    // r narrows to one repository at a time, then back to all.
    t.keys(&["r"]);
    let s = t.see("(1/3)");
    assert!(s.contains(&a) && !s.contains(&w), "{s}");
    t.keys(&["r"]);
    t.keys(&["r"]);
    t.see("(3/3)");
    t.keys(&["r"]);
    t.see("every repository");

    // Cancel alpha's job from here: alpha's store says cancelled.
    t.see(&w);
    t.select(&a);
    t.keys(&["c"]);
    t.see(&format!("cancel job {a}? y/n"));
    t.keys(&["y"]);
    t.see(&format!("job {a} cancelled"));
    let st = crate::all_repos::run_in(&env, &alpha, &["status", &a]).json();
    assert_eq!(st["status"], "cancelled", "{st}");
    t.keys(&["q"]);
    assert_eq!(exit_status(&t).as_deref().unwrap_or("0"), "0");
}
