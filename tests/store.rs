//! The one store of background work: records that baton 0.3.2 wrote (a job,
//! an `--async` council, an `--async` fan-out; tests/fixtures/store-0.3.2)
//! still read through `jobs`, `status`, `result` and `prune`; and a group
//! is alive only while its runner holds the record's lock, never because
//! its recorded pid names a live process (pids are reused).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use serde_json::Value;

use crate::support::{Env, fixture};

const JOB: &str = "1m97bjbnnttax";
const COUNCIL: &str = "1m97bjeg83kq9";
const FANOUT: &str = "1m97bjhgyv2fx";

/// Copy `from` into `to`, filling the fixtures' placeholders.
fn copy_tree(from: &Path, to: &Path, fill: &dyn Fn(String) -> String) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type().unwrap().is_dir() {
            copy_tree(&src, &dst, fill);
        } else if e.file_name() != "README.md" {
            let text = String::from_utf8(fs::read(&src).unwrap()).unwrap();
            fs::write(&dst, fill(text)).unwrap();
        }
    }
}

/// The 0.3.2 records planted in the project's state folder of `env.work`;
/// that folder.
fn plant(env: &Env) -> PathBuf {
    // `council list` makes the project's state folder (and its councils/).
    let r = env.run(&["council", "list"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let project = env.records("councils").parent().unwrap().to_path_buf();
    // The records name the project by its real path, as baton saw its cwd.
    let work = fs::canonicalize(&env.work).unwrap();
    let (p, w, b) = (
        project.display().to_string(),
        work.display().to_string(),
        env.bin.display().to_string(),
    );
    copy_tree(&fixture("store-0.3.2"), &project, &|s| {
        s.replace("@PROJECT@", &p)
            .replace("@WORK@", &w)
            .replace("@BIN@", &b)
    });
    project
}

/// `baton jobs --all`: each row's status by id.
fn statuses(env: &Env) -> Vec<(String, String)> {
    let r = env.run(&["jobs", "--all"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut rows: Vec<(String, String)> = r.json()["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["job_id"].as_str().unwrap().to_string(),
                j["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    rows.sort();
    rows
}

fn edit_state(path: &Path, f: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_slice(&fs::read(path).unwrap()).unwrap();
    f(&mut v);
    fs::write(path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

#[test]
fn records_of_0_3_2_read_through_jobs_status_result_and_prune() {
    let env = Env::new();
    let project = plant(&env);
    assert_eq!(
        statuses(&env),
        vec![
            (JOB.into(), "success".into()),
            (COUNCIL.into(), "failed".into()),
            (FANOUT.into(), "success".into()),
        ]
    );

    let job = env.run(&["status", JOB]).json();
    assert_eq!(
        (job["job_id"].as_str(), job["status"].as_str()),
        (Some(JOB), Some("success"))
    );
    let council = env.run(&["status", COUNCIL]).json();
    assert_eq!(council["stage"], "needs_human");
    assert_eq!(council["running"], false);
    let fanout = env.run(&["status", FANOUT]).json();
    assert_eq!(
        (fanout["fanout_id"].as_str(), fanout["status"].as_str()),
        (Some(FANOUT), Some("success"))
    );

    let r = env.run(&["result", JOB]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["message"], "Hi from the mock model!");
    let r = env.run(&["result", COUNCIL]);
    assert_eq!(r.json()["council_id"], COUNCIL, "{}", r.stderr);
    assert_eq!(r.json()["stage"], "needs_human");
    let r = env.run(&["result", FANOUT]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["fanout_id"], FANOUT);
    assert_eq!(r.json()["status"], "success");

    let r = env.run(&["prune", "--older-than", "0"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for (kind, id) in [("jobs", JOB), ("councils", COUNCIL), ("fanouts", FANOUT)] {
        assert!(
            !project.join(kind).join(id).exists(),
            "{kind}/{id} stays: {}",
            r.stdout
        );
    }
    assert_eq!(statuses(&env), vec![]);
}

/// A live process that is not the record's runner.
struct Stranger(Child);

impl Stranger {
    fn start() -> Stranger {
        Stranger(Command::new("sleep").arg("60").spawn().unwrap())
    }
    fn pid(&self) -> u32 {
        self.0.id()
    }
    fn alive(&mut self) -> bool {
        self.0.try_wait().unwrap().is_none()
    }
}

impl Drop for Stranger {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_council_or_fanout_whose_pid_was_reused_reads_lost_and_cancel_signals_no_one() {
    let env = Env::new();
    let project = plant(&env);
    // Their runners died mid-stage; the pids they recorded now name another
    // live process.
    let mut stranger = Stranger::start();
    let pid = stranger.pid();
    edit_state(
        &project.join("councils").join(COUNCIL).join("state.json"),
        |v| {
            v["stage"] = "proposing".into();
            v["pid"] = pid.into();
        },
    );
    edit_state(
        &project.join("fanouts").join(FANOUT).join("state.json"),
        |v| {
            v["stage"] = "writing".into();
            v["pid"] = pid.into();
        },
    );

    assert_eq!(
        statuses(&env),
        vec![
            (JOB.into(), "success".into()),
            (COUNCIL.into(), "lost".into()),
            (FANOUT.into(), "lost".into()),
        ]
    );
    assert_eq!(env.run(&["status", COUNCIL]).json()["running"], false);
    assert_eq!(env.run(&["status", FANOUT]).json()["status"], "lost");
    let r = env.run(&["wait", FANOUT, "--timeout", "5s"]);
    assert_eq!(r.json()["status"], "lost", "{}", r.stderr);

    // Cancel marks them, and signals no process the lock does not vouch for.
    env.run(&["cancel", COUNCIL]);
    env.run(&["cancel", FANOUT]);
    assert!(
        stranger.alive(),
        "cancel signalled a pid that was no runner"
    );
    assert_eq!(
        statuses(&env),
        vec![
            (JOB.into(), "success".into()),
            (COUNCIL.into(), "cancelled".into()),
            (FANOUT.into(), "cancelled".into()),
        ]
    );
}

/// One prune for all background work: a council or fan-out whose runner
/// died mid-stage (lost) goes like an ended one; a council that waits for
/// approval stays.
#[test]
fn lost_councils_and_fanouts_are_pruned_and_one_awaiting_approval_stays() {
    let env = Env::new();
    let project = plant(&env);
    edit_state(
        &project.join("councils").join(COUNCIL).join("state.json"),
        |v| {
            v["stage"] = "proposing".into();
        },
    );
    edit_state(
        &project.join("fanouts").join(FANOUT).join("state.json"),
        |v| {
            v["stage"] = "writing".into();
        },
    );
    assert_eq!(
        statuses(&env),
        vec![
            (JOB.into(), "success".into()),
            (COUNCIL.into(), "lost".into()),
            (FANOUT.into(), "lost".into()),
        ]
    );
    let r = env.run(&["prune", "--older-than", "0"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for (kind, id) in [("councils", COUNCIL), ("fanouts", FANOUT)] {
        assert!(
            !project.join(kind).join(id).exists(),
            "lost {kind}/{id} stays: {}",
            r.stdout
        );
    }
    // A council waiting for a person is not lost, and not pruned.
    let env = Env::new();
    let project = plant(&env);
    edit_state(
        &project.join("councils").join(COUNCIL).join("state.json"),
        |v| {
            v["stage"] = "awaiting_approval".into();
        },
    );
    let r = env.run(&["prune", "--older-than", "0"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        project.join("councils").join(COUNCIL).exists(),
        "{}",
        r.stdout
    );
}
