//! Where baton keeps its records, and results that survive a hostile
//! workspace or a full disk: a peer's `git clean -fdx`, a tmpfs with no
//! space left (a real ENOSPC, in a private mount namespace), job records cut
//! short by a kill or corrupted, worktree liveness.

use std::fs;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::support::{Env, Run, fixture, record, wait_for};

const LONG: Duration = Duration::from_secs(20);

fn warnings(j: &Value) -> String {
    j["warnings"]
        .as_array()
        .map(|w| {
            w.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

#[test]
fn a_peer_running_git_clean_keeps_its_result_and_the_other_jobs() {
    let env = Env::new();
    env.git_init();
    // A background job that is still running when the peer below cleans up.
    env.fake(
        "claude",
        &format!(
            "{}\nwhile [ ! -e \"$FAKE_DIR/gate\" ]; do sleep 0.02; done\ncat '{}'",
            record("claude"),
            fixture("claude/claude-stream.jsonl").display()
        ),
    );
    let r = env.run(&["run", "--async", "--agent", "claude", "wait for me"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let job = r.json()["job_id"].as_str().unwrap().to_string();

    // The common agent command: delete everything untracked, ignored included.
    env.fake(
        "codex",
        &format!(
            "{}\ngit clean -fdxq\necho new > made-by-peer.txt\ncat '{}'",
            record("codex"),
            fixture("codex/codex-exec-basic.jsonl").display()
        ),
    );
    let r = env.run(&["--agent", "codex", "clean up"]);
    assert_eq!(r.code, 0, "stdout {}\nstderr {}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "success", "{j}");
    assert_eq!(j["message"], "Hi from the mock model!");
    assert_eq!(j["session"], "01a22af9-9e2e-70e3-ad11-07b983a9c1d0");
    assert_eq!(j["changed_files"], serde_json::json!(["made-by-peer.txt"]));
    // Its log is still where the result says.
    let log = PathBuf::from(j["log_path"].as_str().unwrap());
    assert!(log.is_file(), "{}", log.display());
    assert!(
        fs::read_to_string(&log)
            .unwrap()
            .contains("Hi from the mock")
    );

    // The other job survived and ends normally.
    fs::write(env.fake_dir.join("gate"), "").unwrap();
    let w = env.run(&["wait", &job, "--timeout", "20s"]);
    assert_eq!(w.code, 0, "stdout {}\nstderr {}", w.stdout, w.stderr);
    assert_eq!(w.json()["status"], "success");
}

#[test]
fn records_live_outside_the_work_tree() {
    let env = Env::new();
    env.git_init();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    let r = env.run(&["--agent", "codex", "x"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let log = PathBuf::from(r.json()["log_path"].as_str().unwrap());
    assert!(log.starts_with(&env.state), "{}", log.display());
    let r = env.run(&["run", "--async", "--agent", "codex", "x"]);
    let log = PathBuf::from(r.json()["log_path"].as_str().unwrap());
    assert!(log.starts_with(&env.state), "{}", log.display());
    let w = env.run(&["wait", r.json()["job_id"].as_str().unwrap()]);
    assert_eq!(w.json()["status"], "success");
    assert!(
        !env.work.join(".baton").exists(),
        "nothing is written into the work tree"
    );
}

/// What the full-disk scripts leave for the test to read (the tmpfs goes
/// away with its namespace).
fn listing(env: &Env) -> String {
    fs::read_to_string(env.fake_dir.join("listing")).unwrap_or_default()
}

/// Temp files (`.<name>.<pid>.<random>.tmp`) in a listing.
fn temp_files(listing: &str) -> Vec<&str> {
    listing.lines().filter(|l| l.ends_with(".tmp")).collect()
}

#[test]
fn a_full_disk_keeps_the_result_and_says_what_was_not_saved() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    // Fill the state tmpfs completely before baton starts.
    let Some(mut c) = env.in_small_tmpfs(
        256,
        r#"head -c 10000000 /dev/zero > "$BATON_STATE_DIR/filler" 2>/dev/null
"$BATON" --agent codex "say hi"; rc=$?
find "$BATON_STATE_DIR" > "$FAKE_DIR/listing"
exit $rc"#,
    ) else {
        return;
    };
    let r = Run::from(c.output().unwrap());
    assert_eq!(r.code, 0, "stdout {}\nstderr {}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "success", "{j}");
    assert_eq!(j["message"], "Hi from the mock model!");
    let w = warnings(&j);
    assert!(w.contains("No space left on device"), "{w}");
    assert!(w.contains("result.json"), "{w}");
    assert!(w.contains("stdout.log"), "{w}");
    let l = listing(&env);
    assert!(temp_files(&l).is_empty(), "temp files left behind:\n{l}");
}

#[test]
fn a_log_cut_short_by_a_full_disk_is_reported() {
    let env = Env::new();
    // 2 MiB of progress events before the answer, on a 512 KiB disk.
    let line = format!(
        "{{\"type\":\"item.completed\",\"item\":{{\"id\":\"r\",\"type\":\"reasoning\",\"text\":\"{}\"}}}}",
        "x".repeat(1000)
    );
    fs::write(
        env.fake_dir.join("noise.jsonl"),
        format!("{line}\n").repeat(2048),
    )
    .unwrap();
    env.fake(
        "codex",
        &format!(
            "cat > /dev/null\ncat \"$FAKE_DIR/noise.jsonl\" '{}'",
            fixture("codex/codex-exec-basic.jsonl").display()
        ),
    );
    let Some(mut c) = env.in_small_tmpfs(
        512,
        r#""$BATON" --agent codex "say hi"; rc=$?
find "$BATON_STATE_DIR" > "$FAKE_DIR/listing"
exit $rc"#,
    ) else {
        return;
    };
    let r = Run::from(c.output().unwrap());
    assert_eq!(r.code, 0, "stdout {}\nstderr {}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "success", "{j}");
    assert_eq!(j["message"], "Hi from the mock model!");
    let w = warnings(&j);
    assert!(w.contains("stdout.log") && w.contains("incomplete"), "{w}");
    assert!(temp_files(&listing(&env)).is_empty(), "{}", listing(&env));
}

#[test]
fn a_job_whose_result_cannot_be_stored_ends_failed_not_running() {
    let env = Env::new();
    // The peer fills the disk, then answers with more than fits anywhere.
    let big = "y".repeat(600_000);
    let transcript = format!(
        "{}\n{}\n",
        serde_json::json!({"type":"thread.started","thread_id":"t-full"}),
        serde_json::json!({"type":"item.completed","item":{"id":"i","type":"agent_message","text": big}}),
    ) + "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}\n";
    fs::write(env.fake_dir.join("answer.jsonl"), transcript).unwrap();
    env.fake(
        "codex",
        "cat > /dev/null\nhead -c 100000000 /dev/zero > \"$BATON_STATE_DIR/filler\" 2>/dev/null || true\ncat \"$FAKE_DIR/answer.jsonl\"",
    );
    let Some(mut c) = env.in_small_tmpfs(
        1024,
        r#""$BATON" run --async --agent codex "fill it" > "$FAKE_DIR/start.json" || exit 98
id=$(sed 's/.*"job_id":"\([0-9a-z]*\)".*/\1/' "$FAKE_DIR/start.json")
"$BATON" wait "$id" --timeout 30s > "$FAKE_DIR/wait.json"; rc=$?
"$BATON" status "$id" > "$FAKE_DIR/status.json"
find "$BATON_STATE_DIR" > "$FAKE_DIR/listing"
exit $rc"#,
    ) else {
        return;
    };
    let r = Run::from(c.output().unwrap());
    let wait = fs::read_to_string(env.fake_dir.join("wait.json")).unwrap_or_default();
    assert_eq!(r.code, 1, "wait: {wait}\nstderr {}", r.stderr);
    let j: Value = serde_json::from_str(wait.trim()).unwrap_or_else(|e| panic!("{e}: {wait}"));
    assert_eq!(j["status"], "failed", "{j}");
    let m = j["error"]["message"].as_str().unwrap_or("");
    assert!(m.contains("No space left on device"), "{j}");
    assert!(m.contains("result"), "{j}");
    let status = fs::read_to_string(env.fake_dir.join("status.json")).unwrap();
    let s: Value = serde_json::from_str(status.trim()).unwrap();
    assert_eq!(s["status"], "failed", "{s}");
    assert!(temp_files(&listing(&env)).is_empty(), "{}", listing(&env));
}

/// The one store's guarantees hold for a fan-out as for a job: its runner
/// keeps a reserve, and the end is recorded (result first, then a terminal
/// stage) even when a peer filled the disk: never left to read as `lost`.
#[test]
fn a_fanout_whose_result_cannot_be_stored_ends_failed_not_lost() {
    let env = Env::new();
    let big = "y".repeat(600_000);
    let transcript = format!(
        "{}\n{}\n",
        serde_json::json!({"type":"thread.started","thread_id":"t-full"}),
        serde_json::json!({"type":"item.completed","item":{"id":"i","type":"agent_message","text": big}}),
    ) + "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}\n";
    fs::write(env.fake_dir.join("answer.jsonl"), transcript).unwrap();
    env.fake(
        "codex",
        "cat > /dev/null\nhead -c 100000000 /dev/zero > \"$BATON_STATE_DIR/filler\" 2>/dev/null || true\ncat \"$FAKE_DIR/answer.jsonl\"",
    );
    env.replay("claude", "claude/claude-stream.jsonl", 0);
    let Some(mut c) = env.in_small_tmpfs(
        1024,
        r#""$BATON" run --agents codex,claude --read-only --async "fill it" > "$FAKE_DIR/start.json" || exit 98
id=$(sed 's/.*"fanout_id":"\([0-9a-z]*\)".*/\1/' "$FAKE_DIR/start.json")
"$BATON" wait "$id" --timeout 30s > "$FAKE_DIR/wait.json"; rc=$?
find "$BATON_STATE_DIR" > "$FAKE_DIR/listing"
cat "$BATON_STATE_DIR"/repos/*/fanouts/*/state.json > "$FAKE_DIR/state.json"
exit $rc"#,
    ) else {
        return;
    };
    let r = Run::from(c.output().unwrap());
    let start = fs::read_to_string(env.fake_dir.join("start.json")).unwrap_or_default();
    let wait = fs::read_to_string(env.fake_dir.join("wait.json")).unwrap_or_default();
    assert_eq!(
        r.code, 1,
        "start: {start}\nwait: {wait}\nstderr {}",
        r.stderr
    );
    let j: Value = serde_json::from_str(wait.trim()).unwrap_or_else(|e| panic!("{e}: {wait}"));
    assert_eq!(j["status"], "failed", "{j}");
    assert_eq!(j["error"]["kind"], "result_not_stored", "{j}");
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("No space left on device"),
        "{j}"
    );
    let state: Value =
        serde_json::from_str(&fs::read_to_string(env.fake_dir.join("state.json")).unwrap())
            .unwrap();
    assert_eq!(state["stage"], "failed", "{state}");
    let l = listing(&env);
    assert!(!l.contains("/reserve"), "the reserve is freed:\n{l}");
    assert!(temp_files(&l).is_empty(), "{l}");
}

/// The job directory of `id` (the parent of its log).
fn job_dir(env: &Env, id: &str) -> PathBuf {
    let r = env.run(&["status", id]);
    let log = r.json()["log_path"].as_str().unwrap().to_string();
    PathBuf::from(log).parent().unwrap().to_path_buf()
}

#[test]
fn a_launch_cut_short_is_lost_and_pruned() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    let r = env.run(&["run", "--async", "--agent", "codex", "x"]);
    let id = r.json()["job_id"].as_str().unwrap().to_string();
    assert_eq!(env.run(&["wait", &id]).code, 0);
    let store = job_dir(&env, &id).parent().unwrap().to_path_buf();
    // What a kill -9 between mkdir and the first state leaves: a lock and
    // the runner's log, nothing else. (An old id: long abandoned.)
    let cut = store.join("0123456789abc");
    fs::create_dir(&cut).unwrap();
    fs::write(cut.join("lock"), "").unwrap();
    fs::write(cut.join("runner.log"), "").unwrap();

    let s = env.run(&["status", "0123456789abc"]);
    assert_eq!(s.code, 1, "stdout {}\nstderr {}", s.stdout, s.stderr);
    assert_eq!(s.json()["status"], "lost", "{}", s.stdout);
    let l = env.run(&["jobs", "--all"]);
    let listed: Vec<Value> = l.json()["jobs"].as_array().unwrap().clone();
    assert!(
        listed
            .iter()
            .any(|v| v["job_id"] == "0123456789abc" && v["status"] == "lost"),
        "{}",
        l.stdout
    );
    let p = env.run(&["prune", "--older-than", "0"]);
    assert_eq!(p.code, 0, "{}", p.stdout);
    assert!(!cut.exists(), "{}", p.stdout);
}

#[test]
fn a_corrupt_record_is_reported_as_such_and_pruned() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    let r = env.run(&["run", "--async", "--agent", "codex", "x"]);
    let id = r.json()["job_id"].as_str().unwrap().to_string();
    assert_eq!(env.run(&["wait", &id]).code, 0);
    let dir = job_dir(&env, &id);
    fs::write(dir.join("state.json"), "{\"version\":1,\"id\":").unwrap();

    for cmd in ["status", "result", "wait"] {
        let s = env.run(&[cmd, &id]);
        assert_eq!(s.code, 1, "{cmd}: {}", s.stdout);
        let j = s.json();
        assert_eq!(j["error"]["kind"], "corrupt_job", "{cmd}: {j}");
        let all = j.to_string();
        assert!(!all.contains("bug in baton"), "{cmd}: {j}");
        assert!(all.contains("prune"), "{cmd}: {j}");
    }
    let l = env.run(&["jobs"]);
    assert!(
        l.json()["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["job_id"] == id.as_str() && v["status"] == "corrupt"),
        "{}",
        l.stdout
    );
    let p = env.run(&["prune", "--older-than", "0"]);
    assert_eq!(p.code, 0, "{}", p.stdout);
    assert!(!dir.exists(), "{}", p.stdout);
}

/// A job folder whose `state.json` names another job (copied or renamed by
/// hand) is corrupt: listed once under its own id, never as a second row of
/// the job it names.
#[test]
fn a_folder_whose_state_names_another_job_is_corrupt() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    let r = env.run(&["run", "--async", "--agent", "codex", "x"]);
    let id = r.json()["job_id"].as_str().unwrap().to_string();
    assert_eq!(env.run(&["wait", &id]).code, 0);
    let dir = job_dir(&env, &id);
    // A copy under another (valid, older) id.
    let other = "0123456789abc";
    let copy = dir.parent().unwrap().join(other);
    fs::create_dir(&copy).unwrap();
    for e in fs::read_dir(&dir).unwrap() {
        let e = e.unwrap();
        fs::copy(e.path(), copy.join(e.file_name())).unwrap();
    }

    let rows = |j: &Value| -> Vec<(String, String)> {
        j["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                (
                    v["job_id"].as_str().unwrap().to_string(),
                    v["status"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let want = vec![
        (id.clone(), "success".to_string()),
        (other.to_string(), "corrupt".to_string()),
    ];
    let l = env.run(&["jobs", "--all"]);
    assert_eq!(l.code, 0, "{}", l.stdout);
    assert_eq!(rows(&l.json()), want, "{}", l.stdout);
    let w = env.run(&["watch", "--once", "--json"]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    let (mut got, mut want) = (rows(&w.json()), want);
    got.sort();
    want.sort();
    assert_eq!(got, want, "{}", w.stdout);

    let s = env.run(&["status", other]);
    assert_eq!(s.code, 1, "{}", s.stdout);
    let j = s.json();
    assert_eq!(j["error"]["kind"], "corrupt_job", "{j}");
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("it names job `{id}`, not `{other}`")),
        "{j}"
    );
    // The job it names is untouched.
    assert_eq!(env.run(&["status", &id]).json()["status"], "success");
    let p = env.run(&["prune", "--older-than", "0"]);
    assert_eq!(p.code, 0, "{}", p.stdout);
    assert!(!copy.exists(), "{}", p.stdout);
}

#[test]
fn a_zombie_baton_does_not_keep_its_worktree_busy() {
    let env = Env::new();
    env.git_init();
    env.fake(
        "codex",
        &format!(
            "{}\ntouch \"$FAKE_DIR/started\"\nwhile :; do sleep 0.05; done",
            record("codex")
        ),
    );
    let mut child = env
        .baton()
        .args(["--agent", "codex", "--worktree", "work on it"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(wait_for(LONG, || env.fake_dir.join("started").exists()));
    // Killed and not reaped: a zombie whose pid still "exists".
    // SAFETY: plain kill on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    assert!(wait_for(LONG, || {
        fs::read_to_string(format!("/proc/{}/stat", child.id())).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    }));

    let l = env.run(&["worktree", "list"]);
    assert_eq!(l.code, 0, "{}", l.stdout);
    let j = l.json();
    let entry = &j["worktrees"][0];
    assert_eq!(entry["state"], "interrupted", "{j}");
    let id = entry["id"].as_str().unwrap().to_string();
    let rm = env.run(&["worktree", "remove", &id, "--force"]);
    assert_eq!(rm.code, 0, "stdout {}\nstderr {}", rm.stdout, rm.stderr);
    child.wait().unwrap();
}

/// A symlink planted inside the state directory (`repos/<p>/runs` →
/// elsewhere) is never followed: `run` refuses before the peer starts and
/// writes nothing where the link points; the same for `jobs`.
#[test]
fn a_symlink_planted_in_the_state_directory_is_refused() {
    let env = Env::new();
    env.git_init();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    let r = env.run(&["--agent", "codex", "first"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let runs = env.records("runs");
    let elsewhere = env.tmp.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    fs::remove_dir_all(&runs).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &runs).unwrap();
    fs::remove_file(env.fake_dir.join("codex.argv")).unwrap();

    let r = env.run(&["--agent", "codex", "second"]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["error"]["kind"], "unsafe_state_dir", "{j}");
    let msg = j["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains(&format!("{} is a symlink", runs.display())),
        "{msg}"
    );
    assert!(j["error"]["hint"].as_str().unwrap().contains("rm "), "{j}");
    assert!(!env.called("codex"), "the peer must not start");
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);

    // Every command that uses the folder says the same.
    for args in [
        &["jobs"][..],
        &["run", "--async", "--agent", "codex", "x"][..],
        &["prune"][..],
    ] {
        let r = env.run(args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stdout);
        assert_eq!(r.json()["error"]["kind"], "unsafe_state_dir", "{args:?}");
    }
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
    // Removing the link is the fix.
    fs::remove_file(&runs).unwrap();
    assert_eq!(env.run(&["--agent", "codex", "third"]).code, 0);
}

/// A state directory that others may write is refused, as ssh refuses a
/// key file others can write, with the `chmod` that fixes it.
#[test]
fn a_state_directory_writable_by_others_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    fs::create_dir(&env.state).unwrap();
    fs::set_permissions(&env.state, fs::Permissions::from_mode(0o777)).unwrap();
    for args in [&["--agent", "codex", "x"][..], &["jobs"][..]] {
        let r = env.run(args);
        assert_eq!(r.code, 2, "{args:?}: {}\n{}", r.stdout, r.stderr);
        let j = r.json();
        assert_eq!(j["error"]["kind"], "unsafe_state_dir", "{j}");
        let msg = j["error"]["message"].as_str().unwrap();
        assert!(
            msg.contains("writable by group and others (mode 0777)"),
            "{msg}"
        );
        assert_eq!(
            j["error"]["hint"].as_str().unwrap(),
            format!("chmod 700 {}", env.state.display())
        );
    }
    assert!(!env.called("codex"));
    fs::set_permissions(&env.state, fs::Permissions::from_mode(0o700)).unwrap();
    assert_eq!(env.run(&["--agent", "codex", "x"]).code, 0);
}
