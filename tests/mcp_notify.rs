//! `baton mcp` announces the end of every job, fan-out and council its
//! calls started in the background: one
//! `notifications/message` (level `info`, logger `baton`) with the job's id,
//! status and summary cleaned of control characters and secrets; none for a
//! job started elsewhere; none below the level the host set.

use std::fs;
use std::time::Duration;

use serde_json::{Value, json};

use crate::mcp::Client;
use crate::support::{Env, record, wait_for};

const LONG: Duration = Duration::from_secs(20);
/// A token-shaped secret the peer prints in its last message.
const SECRET: &str = "ghp_1234567890abcdefghijABCDEFGHIJ123456";

/// A fake codex that waits for `$FAKE_DIR/gate`, then answers with a
/// message holding terminal escapes, a bell and a secret.
fn noisy_codex(env: &Env) {
    let message = format!("\\u001b[31mDONE\\u001b[0m\\u0007 with {SECRET} in it");
    env.fake(
        "codex",
        &format!(
            "{}\n\
             printf '%s\\n' '{{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}}'\n\
             while [ ! -e \"$FAKE_DIR/gate\" ]; do sleep 0.02; done\n\
             printf '%s\\n' '{{\"type\":\"item.completed\",\"item\":{{\"id\":\"i\",\"type\":\"agent_message\",\"text\":\"{message}\"}}}}'\n\
             printf '%s\\n' '{{\"type\":\"turn.completed\",\"usage\":{{\"input_tokens\":1,\"cached_input_tokens\":0,\"output_tokens\":1}}}}'",
            record("codex"),
        ),
    );
}

/// `run` with `async`: the job's id.
fn start_job(c: &mut Client) -> String {
    let r = c.call("run", json!({"task": "t", "agent": "codex", "async": true}));
    assert_eq!(r["structuredContent"]["status"], "running", "{r}");
    r["structuredContent"]["job_id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn announcements(c: &Client) -> Vec<&Value> {
    c.notes
        .iter()
        .filter(|n| n["method"] == "notifications/message")
        .map(|n| &n["params"])
        .collect()
}

#[test]
fn an_ended_job_is_announced_once_with_its_summary_cleaned() {
    let env = Env::new();
    noisy_codex(&env);
    let mut c = Client::start(&env, &[]);
    let init = c.initialize();
    assert!(
        init["result"]["capabilities"]["logging"].is_object(),
        "{init}"
    );
    let id = start_job(&mut c);
    // Nothing while it runs.
    c.listen(Duration::from_millis(500));
    assert!(announcements(&c).is_empty(), "{:?}", c.notes);
    fs::write(env.fake_dir.join("gate"), "").unwrap();
    assert!(
        c.wait_note("notifications/message", LONG),
        "no announcement: {:?}",
        c.notes
    );
    let a = announcements(&c)[0].clone();
    assert_eq!(a["level"], "info", "{a}");
    assert_eq!(a["logger"], "baton", "{a}");
    let d = &a["data"];
    assert_eq!(d["job_id"], json!(id), "{a}");
    assert_eq!(d["id"], json!(id), "{a}");
    assert_eq!(d["status"], "success", "{a}");
    assert_eq!(d["trigger"], "ended", "{a}");
    assert_eq!(d["work"], "job", "{a}");
    assert_eq!(d["agent"], "codex", "{a}");
    for field in ["summary", "message"] {
        let text = d[field].as_str().unwrap();
        assert!(text.contains("DONE"), "{field}: {text:?}");
        assert!(!text.chars().any(char::is_control), "{field}: {text:?}");
        assert!(!text.contains(SECRET), "{field}: {text:?}");
        assert!(text.contains("[REDACTED"), "{field}: {text:?}");
    }
    assert!(
        d["message"].as_str().unwrap().contains(&id),
        "{}",
        d["message"]
    );

    // A job started from the command line in the same project (the gate
    // is open: it ends at once) is not this server's to announce.
    let out = env
        .baton()
        .args(["run", "--async", "--agent", "codex", "--", "t"])
        .output()
        .unwrap();
    let other: Value = serde_json::from_slice(&out.stdout).unwrap();
    let other = other["job_id"].as_str().unwrap().to_string();
    let waited = env
        .baton()
        .args(["wait", &other, "--timeout", "20s"])
        .output()
        .unwrap();
    assert!(waited.status.success(), "{waited:?}");
    // Awaiting this server's job to its end announces nothing more.
    let w = c.call("job_wait", json!({"id": id, "timeout": "5s"}));
    assert_eq!(w["structuredContent"]["status"], "success", "{w}");
    c.listen(Duration::from_millis(1500));
    let all = announcements(&c);
    assert_eq!(all.len(), 1, "{all:?}");
}

#[test]
fn set_level_above_info_silences_the_announcements() {
    let env = Env::new();
    noisy_codex(&env);
    let mut c = Client::start(&env, &[]);
    c.initialize();
    let r = c.request("logging/setLevel", json!({"level": "error"}));
    assert!(r["result"].is_object(), "{r}");
    let id = start_job(&mut c);
    fs::write(env.fake_dir.join("gate"), "").unwrap();
    let w = c.call("job_wait", json!({"id": id, "timeout": "20s"}));
    assert_eq!(w["structuredContent"]["status"], "success", "{w}");
    c.listen(Duration::from_millis(1500));
    assert!(announcements(&c).is_empty(), "{:?}", c.notes);
    // `info` again: the next job is announced.
    let r = c.request("logging/setLevel", json!({"level": "info"}));
    assert!(r["result"].is_object(), "{r}");
    let next = start_job(&mut c);
    assert!(
        c.wait_note("notifications/message", LONG),
        "no announcement: {:?}",
        c.notes
    );
    assert_eq!(announcements(&c)[0]["data"]["job_id"], json!(next));
}

/// The `state.json` of job `id` in `env`'s state directory.
fn state_of(env: &Env, id: &str) -> Option<Value> {
    fn find(dir: &std::path::Path, id: &str) -> Option<std::path::PathBuf> {
        for e in fs::read_dir(dir).ok()?.flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n == id) && p.join("state.json").is_file() {
                    return Some(p.join("state.json"));
                }
                if let Some(f) = find(&p, id) {
                    return Some(f);
                }
            }
        }
        None
    }
    let p = find(&env.state, id)?;
    serde_json::from_str(&fs::read_to_string(p).ok()?).ok()
}

/// A runner killed outright writes no end: the kernel closing its lock wakes
/// the server (well before its 30 s look), which records and announces the
/// job `lost`.
#[test]
fn a_job_whose_runner_dies_is_announced_lost() {
    let env = Env::new();
    noisy_codex(&env);
    let mut c = Client::start(&env, &[]);
    c.initialize();
    let id = start_job(&mut c);
    let mut pid = 0;
    assert!(wait_for(LONG, || {
        pid = state_of(&env, &id)
            .and_then(|s| s["runner_pid"].as_i64())
            .unwrap_or(0);
        pid > 0
    }));
    // The peer has started (the gate is never opened).
    assert!(wait_for(LONG, || env.called("codex")));
    // SAFETY: a plain signal to the runner this test's server started.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGKILL) }, 0);
    assert!(
        c.wait_note("notifications/message", Duration::from_secs(10)),
        "no announcement: {:?}",
        c.notes
    );
    let d = &announcements(&c)[0]["data"];
    assert_eq!(d["job_id"], json!(id), "{d}");
    assert_eq!(d["status"], "lost", "{d}");
}

/// The data of the one announcement that comes (none other follows
/// within a second).
fn the_one_announcement(c: &mut Client) -> Value {
    assert!(
        c.wait_note("notifications/message", LONG),
        "no announcement: {:?}",
        c.notes
    );
    c.listen(Duration::from_millis(1000));
    let all = announcements(c);
    assert_eq!(all.len(), 1, "{all:?}");
    all[0]["data"].clone()
}

/// A fan-out a call started (`run` with `agents` and `async`) is announced
/// once when it ends, as a fan-out, with the id the job tools take.
#[test]
fn an_async_fan_out_is_announced_once_when_it_ends() {
    use crate::support::council::{Scenario, Stage};
    let (env, fake) = crate::fanout::setup();
    let answer = crate::fanout::write_answer;
    fake.write(
        &Scenario::new()
            .on("codex", Stage::Implement, answer("good\n"))
            .on("claude", Stage::Implement, answer("bad\n")),
    );
    let mut c = Client::start(&env, &["--allow-test-cmd"]);
    c.initialize();
    let r = c.call(
        "run",
        json!({"task": "write the answer", "agents": "codex,claude",
               "test_cmd": crate::fanout::TEST, "async": true}),
    );
    let s = &r["structuredContent"];
    assert_eq!(s["status"], "running", "{r}");
    let id = s["job_id"].as_str().unwrap().to_string();
    let d = &the_one_announcement(&mut c);
    assert_eq!(d["work"], "fanout", "{d}");
    assert_eq!(d["trigger"], "ended", "{d}");
    assert_eq!(d["job_id"], json!(id), "{d}");
    assert_eq!(d["id"], json!(id), "{d}");
    assert_eq!(d["status"], "success", "{d}");
    assert_eq!(d["agent"], "codex", "the winner: {d}");
    let m = d["message"].as_str().unwrap();
    assert!(
        m.starts_with(&format!("baton fan-out {id} (codex) ended: success")),
        "{m}"
    );
}

/// A council a call started with `async` is announced once when it ends,
/// or when its plan waits for `council_approve`; one called without
/// `async` is not (its answer is the call's result).
#[test]
fn an_async_council_is_announced_when_it_ends_or_waits_for_approval() {
    let (env, fake) = crate::council::setup();
    fake.write(&crate::council::good_scenario());
    let mut c = Client::start(&env, &[]);
    c.initialize();
    let r = c.call(
        "council_discuss",
        json!({"task": "how should the cache be guarded?",
               "members": "codex,claude,pi", "async": true}),
    );
    let id = r["structuredContent"]["council_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .to_string();
    let d = &the_one_announcement(&mut c);
    assert_eq!(
        (&d["work"], &d["trigger"], &d["status"]),
        (&json!("council"), &json!("ended"), &json!("success")),
        "{d}"
    );
    assert_eq!(d["job_id"], json!(id), "{d}");
    assert_eq!(d["agent"], "codex,claude,pi", "{d}");
    assert!(
        d["message"].as_str().unwrap().starts_with(&format!(
            "baton council {id} (codex,claude,pi) ended: success"
        )),
        "{d}"
    );
    // The same council called without `async` is the call's answer, not
    // an announcement.
    let r = c.call(
        "council_discuss",
        json!({"task": "and the index?", "members": "codex,claude,pi"}),
    );
    assert!(r["structuredContent"]["council_id"].is_string(), "{r}");
    c.listen(Duration::from_millis(1500));
    assert_eq!(announcements(&c).len(), 1, "{:?}", c.notes);

    let r = c.call(
        "council_plan",
        json!({"task": "guard the cache", "members": "codex,claude,pi", "async": true}),
    );
    let plan = r["structuredContent"]["council_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        wait_for(LONG, || {
            c.listen(Duration::from_millis(100));
            announcements(&c).len() == 2
        }),
        "{:?}",
        c.notes
    );
    let d = &announcements(&c)[1]["data"];
    assert_eq!(d["trigger"], "needs_approval", "{d}");
    assert_eq!(d["job_id"], json!(plan), "{d}");
    let m = d["message"].as_str().unwrap();
    assert!(m.contains("waits for approval: council_approve"), "{m}");
}
