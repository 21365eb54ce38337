//! Who announces what (issue 33, docs/notify.md "When baton notifies"):
//! every piece of work the user started is announced once, by the process
//! that owns it, through `[notify] command` (a recorder that appends each
//! event it reads on stdin to a JSON-lines file). Fan-out candidates and
//! judges, council members never announce (their stalls are the group's);
//! a channel that fails never changes the work's result.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::council::{Scenario, Stage};
use crate::support::{BATON, Env, Run, fixture, record, wait_for};

const OK: &str = "codex/codex-exec-basic.jsonl";
const QUOTA: &str = "failures/codex/quota.no-retry.stdout";

/// The command channel's far end: each event (JSON on stdin) appended as
/// one line to the file named by its argument.
const RECORDER: &str = "import sys\n\
data = sys.stdin.read()\n\
with open(sys.argv[1], 'a') as f:\n    f.write(data.strip().replace('\\n', ' ') + '\\n')\n";

/// `[notify]` in the user's file (`BATON_CONFIG` of `Env::baton`): the
/// command channel only, with `extra` lines; returns the events file.
pub(crate) fn notify_config(env: &Env, extra: &str) -> PathBuf {
    let recorder = env.tmp.path().join("recorder.py");
    fs::write(&recorder, RECORDER).unwrap();
    let out = env.tmp.path().join("events.jsonl");
    let command = format!(
        "[\"python3\", \"{}\", \"{}\"]",
        recorder.display(),
        out.display()
    );
    write_config(env, &format!("command = {command}\n{extra}"));
    out
}

fn write_config(env: &Env, notify: &str) {
    fs::write(
        env.tmp.path().join("user-config.toml"),
        format!("[notify]\ndesktop = false\nterminal = false\n{notify}"),
    )
    .unwrap();
}

fn events(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The events once `n` have come, and no more after a pause (the owner
/// announces after the work reads as ended).
pub(crate) fn settled(path: &Path, n: usize) -> Vec<Value> {
    assert!(
        wait_for(Duration::from_secs(20), || events(path).len() >= n),
        "expected {n} events, got {:?}",
        events(path)
    );
    std::thread::sleep(Duration::from_millis(700));
    let all = events(path);
    assert_eq!(all.len(), n, "{all:?}");
    all
}

fn peer(env: &Env, before: &str, transcript: &str, code: i32) {
    env.fake(
        "codex",
        &format!(
            "{}\n{before}\ncat '{}'\nexit {code}",
            record("codex"),
            fixture(transcript).display()
        ),
    );
}

fn work_root(env: &Env) -> PathBuf {
    fs::canonicalize(&env.work).unwrap()
}

fn job_id(r: &Run) -> String {
    let v = r.json();
    v["job_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no job_id: {v}"))
        .to_string()
}

#[test]
fn a_foreground_run_announces_its_end_once_with_summary_agent_and_repo() {
    let env = Env::new();
    env.git_init();
    peer(&env, "", OK, 0);
    let out = notify_config(&env, "");
    let r = env.run(&["run", "--agent", "codex", "fix it"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let res = r.json();
    // Announced before the command returned: no wait.
    let all = events(&out);
    assert_eq!(all.len(), 1, "{all:?}");
    let e = &all[0];
    assert_eq!(e["trigger"], "ended", "{e}");
    assert_eq!(e["work"], "run");
    assert_eq!(e["status"], "success");
    assert_eq!(e["agent"], "codex");
    assert_eq!(e["summary"], res["summary"], "{e}");
    assert_eq!(Path::new(e["repo"].as_str().unwrap()), work_root(&env));
    // The run's id: its folder under runs/.
    let id = e["id"].as_str().expect("the run's id");
    assert!(env.records("runs").join(id).is_dir(), "{e}");
}

#[test]
fn an_async_job_is_announced_by_its_runner_with_no_terminal_left() {
    let env = Env::new();
    env.git_init();
    peer(&env, "", OK, 0);
    let out = notify_config(&env, "");
    // Started from a new session with no controlling terminal; the
    // process that started it is gone when the job ends.
    let o = Command::new("setsid")
        .arg("-w")
        .arg(BATON)
        .args(["run", "--async", "--agent", "codex", "fix it"])
        .envs(env_of(&env))
        .current_dir(&env.work)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let r = Run::from(o);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let id = job_id(&r);
    let w = env.run(&["wait", &id]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    // The runner stored its spec (it came on stdin): no terminal to ring.
    let spec: Value =
        serde_json::from_slice(&fs::read(env.records("jobs").join(&id).join("spec.json")).unwrap())
            .unwrap();
    assert_eq!(spec["notify"], "config", "{spec}");
    assert!(spec["origin"].get("tty").is_none(), "{spec}");
    let all = settled(&out, 1);
    let e = &all[0];
    assert_eq!(e["trigger"], "ended", "{e}");
    assert_eq!(e["work"], "job");
    assert_eq!(e["id"], id.as_str());
    assert_eq!(e["agent"], "codex");
    assert_eq!(e["summary"], w.json()["summary"], "{e}");
    assert_eq!(Path::new(e["repo"].as_str().unwrap()), work_root(&env));
}

/// `Env::baton`'s environment, for a command that does not start baton
/// itself (`setsid`).
fn env_of(env: &Env) -> Vec<(String, String)> {
    let c = env.baton();
    c.get_envs()
        .filter_map(|(k, v)| Some((k.to_str()?.to_string(), v?.to_str()?.to_string())))
        .collect()
}

#[test]
fn no_notify_silences_the_work_and_notify_overrides_on() {
    let env = Env::new();
    env.git_init();
    peer(&env, "", OK, 0);
    let out = notify_config(&env, "");
    let r = env.run(&["run", "--no-notify", "--agent", "codex", "fix it"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(events(&out), Vec::<Value>::new());
    // A job's runner obeys the command line that started it.
    let r = env.run(&[
        "run",
        "--async",
        "--no-notify",
        "--agent",
        "codex",
        "fix it",
    ]);
    let id = job_id(&r);
    assert_eq!(env.run(&["wait", &id]).code, 0);
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(events(&out), Vec::<Value>::new());
    // The two exclude each other.
    let r = env.run(&["run", "--notify", "--no-notify", "fix it"]);
    assert_eq!(r.code, 2, "{}", r.stdout);

    // `on` without `ended`: a plain run is not announced, a --notify one is.
    let out = notify_config(&env, "on = [\"stalled\"]\n");
    let r = env.run(&["run", "--agent", "codex", "fix it"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(events(&out), Vec::<Value>::new());
    let r = env.run(&["run", "--notify", "--agent", "codex", "fix it"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let all = events(&out);
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0]["trigger"], "ended");
}

#[test]
fn a_fan_out_of_three_is_announced_once_by_its_driver() {
    let (env, fake) = crate::fanout::setup();
    fake.write(
        &Scenario::new()
            .on(
                "codex",
                Stage::Implement,
                crate::fanout::write_answer("good\n"),
            )
            .on(
                "claude",
                Stage::Implement,
                crate::fanout::write_answer("good\n"),
            )
            .on("pi", Stage::Implement, crate::fanout::write_answer("bad\n")),
    );
    let out = notify_config(&env, "");
    let (r, j) = crate::fanout::fan_out(&env, &["--agents", "codex,claude,pi"]);
    assert_eq!(r.code, 0, "{}\n{j}", r.stderr);
    // Three candidates and their judges ran; one event, the fan-out's.
    assert_eq!(j["candidates"].as_array().unwrap().len(), 3);
    let all = settled(&out, 1);
    let e = &all[0];
    assert_eq!(e["work"], "fanout", "{e}");
    assert_eq!(e["trigger"], "ended");
    assert_eq!(e["id"], j["fanout_id"]);
    assert_eq!(e["summary"], j["summary"]);
    assert_eq!(e["agent"], j["winner"]["agent"]);
}

#[test]
fn a_background_fan_out_is_announced_once_by_its_runner() {
    let (env, fake) = crate::fanout::setup();
    fake.write(
        &Scenario::new()
            .on(
                "codex",
                Stage::Implement,
                crate::fanout::write_answer("good\n"),
            )
            .on(
                "claude",
                Stage::Implement,
                crate::fanout::write_answer("bad\n"),
            )
            .on("pi", Stage::Implement, crate::fanout::write_answer("bad\n")),
    );
    let out = notify_config(&env, "");
    let (r, j) = crate::fanout::fan_out(&env, &["--agents", "codex,claude,pi", "--async"]);
    assert_eq!(r.code, 0, "{}\n{j}", r.stderr);
    let id = j["job_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{j}"))
        .to_string();
    let w = crate::worktree::baton(&env, &["wait", &id]);
    let all = settled(&out, 1);
    assert_eq!(all[0]["work"], "fanout", "{all:?}");
    assert_eq!(all[0]["id"], id.as_str());
    assert_eq!(all[0]["summary"], w.json()["summary"]);
}

#[test]
fn a_council_of_three_is_announced_once_and_when_it_waits_for_approval() {
    let (env, fake) = crate::council::setup();
    fake.write(&crate::council::good_scenario());
    let out = notify_config(&env, "");
    let r = crate::council::council(
        &env,
        &[
            "discuss",
            "--members",
            "codex,claude,pi",
            "how should the cache be guarded?",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let all = settled(&out, 1);
    let e = &all[0];
    assert_eq!(e["work"], "council", "{e}");
    assert_eq!(e["trigger"], "ended");
    assert_eq!(e["status"], "success");
    assert_eq!(e["id"], v["council_id"]);
    assert_eq!(e["agent"], "codex,claude,pi");

    fs::remove_file(&out).unwrap();
    let r = crate::council::council(
        &env,
        &["plan", "--members", "codex,claude,pi", "guard the cache"],
    );
    let v = r.json();
    assert_eq!(v["status"], "awaiting_approval", "{v}");
    let all = settled(&out, 1);
    assert_eq!(all[0]["trigger"], "needs_approval", "{all:?}");
    assert_eq!(all[0]["id"], v["council_id"]);
}

#[test]
fn a_quota_failure_is_announced_as_stopped() {
    let env = Env::new();
    env.git_init();
    peer(&env, "", QUOTA, 1);
    let out = notify_config(&env, "");
    let r = env.run(&["run", "--agent", "codex", "fix it"]);
    assert_eq!(r.json()["error"]["kind"], "quota_exhausted", "{}", r.stdout);
    let all = events(&out);
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0]["trigger"], "stopped");
    assert_eq!(all[0]["failure_kind"], "quota_exhausted");
    assert_eq!(all[0]["status"], "failed");
}

#[test]
fn a_silent_job_is_announced_stalled_once_then_ended() {
    let env = Env::new();
    env.git_init();
    // Silent for well over the threshold, then done.
    peer(&env, "sleep 2", OK, 0);
    let out = notify_config(&env, "stall_after = \"400ms\"\n");
    let r = env.run(&["run", "--async", "--agent", "codex", "fix it"]);
    let id = job_id(&r);
    assert_eq!(env.run(&["wait", &id]).code, 0);
    let all = settled(&out, 2);
    assert_eq!(all[0]["trigger"], "stalled", "{all:?}");
    assert_eq!(all[0]["work"], "job");
    assert_eq!(all[0]["id"], id.as_str());
    assert_eq!(all[0]["status"], "running");
    assert_eq!(all[1]["trigger"], "ended", "{all:?}");
}

/// The events once the work's end has come, and no more after a pause.
fn until_ended(path: &Path) -> Vec<Value> {
    let ended = || (events(path).iter()).any(|e| e["trigger"] != "stalled");
    assert!(
        wait_for(Duration::from_secs(30), ended),
        "{:?}",
        events(path)
    );
    std::thread::sleep(Duration::from_millis(700));
    events(path)
}

/// A group's stalls are its own: every event is the group's (never a
/// candidate's or member's run), the silent peer is named in exactly one
/// stall, and the end comes last, once. Peers slowed by a loaded machine
/// may stall too, so only the silent one is counted.
fn stalled_as_the_group(all: &[Value], work: &str, id: &Value, silent: &str) {
    assert!(
        all.iter().all(|e| e["work"] == work && e["id"] == *id),
        "{all:?}"
    );
    let (last, stalls) = all.split_last().unwrap();
    assert_ne!(last["trigger"], "stalled", "{all:?}");
    assert!(stalls.iter().all(|e| e["trigger"] == "stalled"), "{all:?}");
    let named: Vec<&Value> = (stalls.iter())
        .filter(|e| e["summary"].as_str().unwrap().contains(silent))
        .collect();
    assert_eq!(named.len(), 1, "{all:?}");
    assert_eq!(named[0]["status"], "running");
    assert!(
        named[0]["agent"].as_str().unwrap().contains("codex"),
        "{all:?}"
    );
}

#[test]
fn a_silent_candidate_is_announced_as_the_fan_outs_stall_once() {
    let (env, fake) = crate::fanout::setup();
    let answer = crate::fanout::write_answer;
    fake.write(
        &Scenario::new()
            .on("codex", Stage::Implement, answer("good\n").delay_ms(2500))
            .on("claude", Stage::Implement, answer("good\n"))
            .on("pi", Stage::Implement, answer("bad\n")),
    );
    let out = notify_config(&env, "stall_after = \"600ms\"\n");
    let (r, j) = crate::fanout::fan_out(&env, &["--agents", "codex,claude,pi"]);
    assert_eq!(r.code, 0, "{}\n{j}", r.stderr);
    let all = until_ended(&out);
    stalled_as_the_group(&all, "fanout", &j["fanout_id"], "codex (writing c");
}

#[test]
fn a_silent_member_is_announced_as_the_councils_stall_once() {
    let (env, fake) = crate::council::setup();
    let mut s = crate::council::good_scenario().to_json();
    s["agents"]["codex"]["proposal"][0]["delay_ms"] = 2500.into();
    fake.write_json(&s);
    let out = notify_config(&env, "stall_after = \"600ms\"\n");
    let r = crate::council::council(
        &env,
        &[
            "discuss",
            "--members",
            "codex,claude,pi",
            "guard the cache?",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let all = until_ended(&out);
    stalled_as_the_group(&all, "council", &r.json()["council_id"], "codex (proposing");
}

#[test]
fn a_failing_channel_changes_neither_result_nor_exit_code() {
    let env = Env::new();
    env.git_init();
    peer(&env, "", OK, 0);
    // One that reads the event, then fails; one that cannot start.
    let failing = env.tmp.path().join("failing.py");
    let seen = env.tmp.path().join("seen.jsonl");
    fs::write(&failing, format!("{RECORDER}sys.exit(1)\n")).unwrap();
    let commands = [
        format!(
            "[\"python3\", \"{}\", \"{}\"]",
            failing.display(),
            seen.display()
        ),
        "[\"/nonexistent/notifier\"]".to_string(),
    ];
    for command in &commands {
        write_config(&env, &format!("command = {command}\n"));
        let r = env.run(&["run", "--agent", "codex", "fix it"]);
        assert_eq!(r.code, 0, "{command}: {}", r.stderr);
        assert_eq!(r.json()["status"], "success", "{command}");
        let r = env.run(&["run", "--async", "--agent", "codex", "fix it"]);
        assert_eq!(r.code, 0, "{command}: {}", r.stderr);
        let id = job_id(&r);
        let w = env.run(&["wait", &id]);
        assert_eq!(w.code, 0, "{command}: {}", w.stderr);
        assert_eq!(w.json()["status"], "success", "{command}");
    }
    // The failing channel was reached, by the run and by the job's runner.
    settled(&seen, 2);
}

/// Starts `argv` on a new pseudo-terminal as its controlling terminal,
/// waits for it, prints the terminal's path, then closes the terminal for
/// good: its `/dev/pts/N` is gone when this script exits.
const ON_A_PTY: &str = "import os, pty, sys\n\
pid, master = pty.fork()\n\
if pid == 0:\n    os.execvp(sys.argv[1], sys.argv[1:])\n\
out = b''\n\
while True:\n    try:\n        b = os.read(master, 65536)\n    except OSError:\n        break\n    if not b:\n        break\n    out += b\n\
_, status = os.waitpid(pid, 0)\n\
sys.stdout.buffer.write(out)\n\
os.close(master)\n\
sys.exit(os.waitstatus_to_exitcode(status))\n";

#[test]
fn a_job_whose_terminal_closed_still_notifies_through_the_other_channels() {
    let env = Env::new();
    env.git_init();
    // The peer waits until the terminal that started it is gone.
    let gate = env.tmp.path().join("gate");
    peer(
        &env,
        &format!("while [ ! -e '{}' ]; do sleep 0.05; done", gate.display()),
        OK,
        0,
    );
    let out = notify_config(&env, "");
    // The terminal channel too: the one that started the job.
    let cfg = env.tmp.path().join("user-config.toml");
    let text = fs::read_to_string(&cfg)
        .unwrap()
        .replace("terminal = false", "terminal = true");
    fs::write(&cfg, text).unwrap();
    let script = env.tmp.path().join("on_a_pty.py");
    fs::write(&script, ON_A_PTY).unwrap();
    let o = Command::new("python3")
        .arg(&script)
        .arg(BATON)
        .args(["run", "--async", "--agent", "codex", "fix it"])
        .envs(env_of(&env))
        .current_dir(&env.work)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The pty's output: the JSON line of `run --async` (CRLF from the tty).
    let shown = String::from_utf8_lossy(&o.stdout);
    let line = shown
        .lines()
        .find(|l| l.trim_start().starts_with('{'))
        .unwrap_or_else(|| panic!("no JSON line on the terminal: {shown:?}"));
    let v: Value = serde_json::from_str(line.trim()).unwrap();
    let id = v["job_id"].as_str().unwrap().to_string();
    // The runner was told which terminal started the job; it is gone now.
    // The runner writes `spec.json` from its stdin, after `run --async` has
    // already answered: wait for it (a loaded CI machine lost this race).
    let spec_path = env.records("jobs").join(&id).join("spec.json");
    assert!(
        wait_for(Duration::from_secs(10), || fs::read(&spec_path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .is_some()),
        "the runner never wrote {}",
        spec_path.display()
    );
    let spec: Value = serde_json::from_slice(&fs::read(&spec_path).unwrap()).unwrap();
    let tty = PathBuf::from(
        spec["origin"]["tty"]
            .as_str()
            .expect("the origin's terminal"),
    );
    assert!(tty.starts_with("/dev/pts"), "{spec}");
    assert!(
        wait_for(Duration::from_secs(5), || !tty.exists()),
        "{} still exists after its terminal closed",
        tty.display()
    );
    fs::write(&gate, "").unwrap();
    let w = env.run(&["wait", &id]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    // The command channel still delivered the end …
    let all = settled(&out, 1);
    assert_eq!(all[0]["trigger"], "ended", "{all:?}");
    assert_eq!(all[0]["id"], id.as_str());
    // … and the terminal channel's failure is recorded, not raised.
    let record = env.records("jobs").join(&id).join("notify.json");
    assert!(wait_for(Duration::from_secs(5), || record.exists()));
    let rec = fs::read_to_string(&record).unwrap();
    assert!(rec.contains("\"terminal\""), "{rec}");
    let r: Value = serde_json::from_str(&rec).unwrap();
    let deliveries: Vec<&Value> = r["notifications"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|a| a["deliveries"].as_array().into_iter().flatten())
        .collect();
    let of = |c: &str| deliveries.iter().find(|d| d["channel"] == c).copied();
    assert_eq!(
        of("command").map(|d| d["ok"].clone()),
        Some(Value::Bool(true)),
        "{rec}"
    );
    assert_eq!(
        of("terminal").map(|d| d["ok"].clone()),
        Some(Value::Bool(false)),
        "{rec}"
    );
    assert_eq!(w.json()["status"], "success");
}
