//! One view across repositories: `watch --all --once` and `jobs
//! --all-repos` over three repositories (one running job, one deleted
//! repository, one with an ended job), the `--repo` filter, and the live
//! index kept by the store (marked while running, cleared at the end).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::support::{Env, Run, wait_for};
use crate::watch::fake_working;

const LONG: Duration = Duration::from_secs(20);

/// `baton ARGS` run in `dir` (a repository of its own).
pub(crate) fn run_in(env: &Env, dir: &Path, args: &[&str]) -> Run {
    Run::from(
        env.baton()
            .current_dir(dir)
            .args(args)
            .output()
            .expect("run baton"),
    )
}

/// A job started with `run --async` in `dir`; its id.
pub(crate) fn start_in(env: &Env, dir: &Path, task: &str) -> String {
    let r = run_in(env, dir, &["run", "--async", "--agent", "codex", task]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    r.json()["job_id"].as_str().unwrap().to_string()
}

/// Three repositories: `alpha` with a running job (until `gate-a`), `beta`
/// with an ended job and then deleted, and the env's `work` with an ended
/// job. Their ids: (alpha, beta, work).
pub(crate) fn three(env: &Env) -> (PathBuf, String, String, String) {
    fake_working(
        env,
        "codex",
        "gate-a",
        &[r#"{"type":"item.started","item":{"type":"command_execution","command":"make all"}}"#],
        "codex/codex-exec-toolcall.jsonl",
    );
    let alpha = env.tmp.path().join("alpha");
    let beta = env.tmp.path().join("beta");
    fs::create_dir_all(&alpha).unwrap();
    fs::create_dir_all(&beta).unwrap();
    // Ended jobs first (the gate open), then alpha's, left running.
    fs::write(env.fake_dir.join("gate-a"), "").unwrap();
    let b = start_in(env, &beta, "task in beta");
    let w = start_in(env, &env.work, "task in work");
    for (dir, id) in [(&beta, &b), (&env.work, &w)] {
        assert!(wait_for(LONG, || {
            run_in(env, dir, &["status", id]).json()["status"] == "success"
        }));
    }
    fs::remove_file(env.fake_dir.join("gate-a")).unwrap();
    let a = start_in(env, &alpha, "task in alpha");
    fs::remove_dir_all(&beta).unwrap();
    (alpha, a, b, w)
}

fn row<'a>(snap: &'a Value, id: &str) -> &'a Value {
    snap["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["job_id"] == id)
        .unwrap_or_else(|| panic!("{id} not in {snap}"))
}

fn repo_status(snap: &Value, name: &str) -> String {
    snap["repos"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["repo"].as_str().unwrap().ends_with(name))
        .map_or("absent".into(), |r| r["status"].as_str().unwrap().into())
}

#[test]
fn watch_all_once_and_jobs_all_repos_span_three_repositories() {
    let env = Env::new();
    let (alpha, a, b, w) = three(&env);
    // Marked in alpha's live index while it runs; beta's mark cleared at its end.
    let index = |id: &str| {
        fs::read_dir(env.state.join("repos"))
            .unwrap()
            .flatten()
            .any(|p| p.path().join("live").join(format!("job.{id}")).exists())
    };
    assert!(index(&a), "a running job is marked");
    assert!(!index(&b), "an ended job is not");

    let r = run_in(&env, &env.work, &["watch", "--all", "--once"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let snap = r.json();
    assert_eq!(snap["repos"].as_array().unwrap().len(), 3, "{snap}");
    assert_eq!(repo_status(&snap, "/alpha"), "ok");
    assert_eq!(repo_status(&snap, "/beta"), "missing");
    assert_eq!(repo_status(&snap, "/work"), "ok");
    assert_eq!(row(&snap, &a)["status"], "running");
    assert!(row(&snap, &a)["repo"].as_str().unwrap().ends_with("/alpha"));
    assert_eq!(snap["jobs"][0]["job_id"], a.as_str(), "running first");
    // A deleted repository's records are still listed, as what they are.
    assert_eq!(row(&snap, &b)["status"], "success");
    assert!(row(&snap, &b)["repo"].as_str().unwrap().ends_with("/beta"));
    assert_eq!(row(&snap, &w)["status"], "success");

    // The filter: a substring of the root path.
    let r = run_in(
        &env,
        &alpha,
        &["watch", "--all", "--repo", "/beta", "--once"],
    );
    let snap = r.json();
    assert_eq!(snap["repos"].as_array().unwrap().len(), 1, "{snap}");
    assert_eq!(snap["jobs"].as_array().unwrap().len(), 1, "{snap}");
    assert_eq!(snap["jobs"][0]["job_id"], b.as_str());

    // The table for people: the repository column and the missing marker.
    let r = run_in(&env, &env.work, &["watch", "--all", "--once", "--text"]);
    assert!(r.stdout.contains("REPO"), "{}", r.stdout);
    assert!(r.stdout.contains("missing"), "{}", r.stdout);
    assert!(r.stdout.contains("$ make all"), "{}", r.stdout);

    // jobs --all-repos: one row per job with its repository.
    let r = run_in(&env, &env.work, &["jobs", "--all-repos"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let l = r.json();
    assert_eq!(l["jobs"].as_array().unwrap().len(), 3, "{l}");
    assert_eq!(l["jobs"][0]["job_id"], a.as_str());
    assert_eq!(l["jobs"][0]["kind"], "job");
    assert_eq!(l["total"], 3);
    let r = run_in(
        &env,
        &env.work,
        &["jobs", "--all-repos", "--repo", "alpha", "--text"],
    );
    assert!(
        r.stdout.contains("REPO") && r.stdout.contains(&a),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains(&w), "{}", r.stdout);
    // The filter needs the flag it narrows.
    let r = run_in(&env, &env.work, &["jobs", "--repo", "alpha"]);
    assert_eq!(r.code, 2, "{}", r.stderr);

    // Without --all, the cwd's repository only, as before.
    let snap = run_in(&env, &env.work, &["watch", "--once"]).json();
    assert_eq!(snap["jobs"].as_array().unwrap().len(), 1, "{snap}");

    // Ended: the mark goes.
    fs::write(env.fake_dir.join("gate-a"), "").unwrap();
    assert!(wait_for(LONG, || !index(&a)));
    let snap = run_in(&env, &env.work, &["watch", "--all", "--once"]).json();
    assert_eq!(row(&snap, &a)["status"], "success");
}

#[test]
fn a_corrupt_project_folder_never_hides_the_others() {
    let env = Env::new();
    fake_working(
        &env,
        "codex",
        "gate",
        &[],
        "codex/codex-exec-toolcall.jsonl",
    );
    fs::write(env.fake_dir.join("gate"), "").unwrap();
    let w = start_in(&env, &env.work, "task");
    let other = env.tmp.path().join("other");
    fs::create_dir_all(&other).unwrap();
    let o = start_in(&env, &other, "other task");
    assert!(wait_for(LONG, || {
        run_in(&env, &other, &["status", &o]).json()["status"] == "success"
    }));
    // `other`'s jobs folder replaced by a file: unreadable.
    let jobs = fs::read_dir(env.state.join("repos"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            fs::read_to_string(p.join("root")).is_ok_and(|r| r.trim_end().ends_with("/other"))
        })
        .unwrap()
        .join("jobs");
    fs::remove_dir_all(&jobs).unwrap();
    fs::write(&jobs, "not a folder").unwrap();
    let r = run_in(&env, &env.work, &["watch", "--all", "--once"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let snap = r.json();
    assert_eq!(repo_status(&snap, "/other"), "unreadable", "{snap}");
    assert!(
        snap["repos"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["error"].is_string())
    );
    assert!(wait_for(LONG, || {
        row(
            &run_in(&env, &env.work, &["watch", "--all", "--once"]).json(),
            &w,
        )["status"]
            == "success"
    }));
}
