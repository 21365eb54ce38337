//! `baton serve --all`: every repository of the state directory on one
//! page — the listing (a deleted project shown as such), the repository key
//! on every job, the actions on another repository's work, and the refusal
//! of any repository or id the server did not list; the usage panel's
//! repository filter.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::serve::{Server, gated};
use crate::support::Env;

/// `baton ARGS` run in `dir`: its JSON answer.
fn run_in(env: &Env, dir: &Path, args: &[&str]) -> Value {
    let out = env.baton().current_dir(dir).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("{e}: {text}\n{}", String::from_utf8_lossy(&out.stderr)))
}

fn project(env: &Env, name: &str) -> PathBuf {
    let d = env.tmp.path().join(name);
    fs::create_dir_all(&d).unwrap();
    d
}

/// The key the server lists for the project at `root`.
fn key_of(repos: &Value, root: &Path) -> String {
    let label = root.canonicalize().unwrap_or(root.to_path_buf());
    repos["repos"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            Path::new(r["label"].as_str().unwrap()) == label
                || Path::new(r["label"].as_str().unwrap()) == root
        })
        .unwrap_or_else(|| panic!("{} not listed: {repos}", root.display()))["repo"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn every_repository_is_shown_and_only_a_listed_one_is_acted_on() {
    let env = Env::new();
    gated(&env, "codex", "gate", "codex/codex-exec-basic.jsonl");
    env.replay("claude", "claude/claude-stream.jsonl", 0);
    let (a, b, c) = (
        env.work.clone(),
        project(&env, "beta"),
        project(&env, "gamma"),
    );
    // a: an ended job; b: a running one; c: an ended one, then c is deleted.
    let ended = run_in(&env, &a, &["run", "--async", "--agent", "claude", "first"]);
    let ended = ended["job_id"].as_str().unwrap().to_string();
    assert_eq!(run_in(&env, &a, &["wait", &ended])["status"], "success");
    let running = run_in(&env, &b, &["run", "--async", "--agent", "codex", "work"]);
    let running = running["job_id"].as_str().unwrap().to_string();
    let old = run_in(&env, &c, &["run", "--async", "--agent", "claude", "old"]);
    let old = old["job_id"].as_str().unwrap().to_string();
    assert_eq!(run_in(&env, &c, &["wait", &old])["status"], "success");
    fs::remove_dir_all(&c).unwrap();

    let srv = Server::start_with(&env, &["--all"]);
    let session = srv.login();
    let repos = srv.get("/api/repos", &session).json();
    assert_eq!(repos["all"], true, "{repos}");
    assert_eq!(repos["repos"].as_array().unwrap().len(), 3, "{repos}");
    let (ka, kb) = (key_of(&repos, &a), key_of(&repos, &b));
    let gone = repos["repos"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["exists"] == false)
        .unwrap_or_else(|| panic!("the deleted project is listed: {repos}"));
    assert_eq!(gone["shown"], false, "{repos}");
    assert!(
        gone["label"].as_str().unwrap().ends_with("gamma"),
        "{repos}"
    );
    let kc = gone["repo"].as_str().unwrap().to_string();

    // The fleet: both live projects' jobs, each with its repository's key;
    // none of the deleted project's.
    let mut s = srv.stream("/api/events", &session);
    let t = s.until("the snapshot", |t| t.contains("event: snapshot"));
    assert!(
        t.contains(&format!(r#"{{"repo":"{ka}","job_id":"{ended}""#)),
        "{t}"
    );
    assert!(
        t.contains(&format!(r#"{{"repo":"{kb}","job_id":"{running}""#)),
        "{t}"
    );
    assert!(
        !t.contains(&old),
        "a deleted project's work is not watched: {t}"
    );

    // Refused: a repository the server did not list, a deleted one, none
    // while several are shown, and a job asked of the wrong repository.
    for q in [
        "?repo=nope-0123456789abcdef",
        &format!("?repo={kc}"),
        "",
        "?repo=..%2F..%2Fetc",
    ] {
        let r = srv.post(&format!("/api/jobs/{running}/cancel{q}"), &session, "{}");
        assert_eq!(r.code, 400, "{q}: {}", r.body);
        assert_eq!(r.json()["status"], "error", "{q}");
    }
    let r = srv.post(
        &format!("/api/jobs/{running}/cancel?repo={ka}"),
        &session,
        "{}",
    );
    assert_eq!(r.code, 404, "job of b asked of a: {}", r.body);
    let r = srv.get(&format!("/api/jobs/{ended}/events?repo={kb}"), &session);
    assert_eq!(r.code, 404, "{}", r.body);
    assert_eq!(run_in(&env, &b, &["status", &running])["status"], "running");

    // Cancel another repository's job: b's store acts.
    let r = srv.post(
        &format!("/api/jobs/{running}/cancel?repo={kb}"),
        &session,
        "{}",
    );
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(r.json()["status"], "cancelled");
    assert_eq!(
        run_in(&env, &b, &["status", &running])["status"],
        "cancelled"
    );
    let cancelled = format!(r#"{{"repo":"{kb}","job_id":"{running}","status":"cancelled""#);
    s.until("the cancel in the fleet", |t| t.contains(&cancelled));

    // Continue a's job: the follow-up is a job of a.
    let r = srv.post(
        &format!("/api/jobs/{ended}/continue?repo={ka}"),
        &session,
        r#"{"prompt":"-- and now the tests"}"#,
    );
    assert_eq!(r.code, 202, "{}", r.body);
    let next = r.json()["job_id"].as_str().unwrap().to_string();
    assert_eq!(run_in(&env, &a, &["wait", &next])["status"], "success");
    assert!(env.stdin("claude").contains("-- and now the tests"));
    let r = srv.post(
        &format!("/api/jobs/{ended}/continue?repo={kb}"),
        &session,
        r#"{"prompt":"x"}"#,
    );
    assert_eq!(r.code, 404, "a's job continued in b: {}", r.body);

    // The usage panel: every project, or one listed project (a deleted one
    // too: its ledger is kept), never an unlisted one.
    let all = srv.get("/api/usage", &session).json();
    // a: the first job and its follow-up; b: the cancelled one; c: one.
    assert_eq!(all["total"]["runs"], 4, "{all}");
    let one = srv.get(&format!("/api/usage?repo={ka}"), &session).json();
    assert_eq!(one["total"]["runs"], 2, "{one}");
    assert_eq!(one["repos"].as_array().unwrap().len(), 1, "{one}");
    let cli = run_in(&env, &a, &["usage", "--by", "agent", "--repo", "."]);
    assert_eq!(one["total"], cli["total"]);
    assert_eq!(one["groups"], cli["groups"]);
    let deleted = srv.get(&format!("/api/usage?repo={kc}"), &session).json();
    assert_eq!(deleted["total"]["runs"], 1, "{deleted}");
    let r = srv.get("/api/usage?repo=nope-0123456789abcdef", &session);
    assert_eq!(r.code, 400, "{}", r.body);
}

/// `--repo PATTERN` narrows `--all`; plain `serve` lists every project
/// (for the usage filter) but shows and acts on its own only.
#[test]
fn a_pattern_narrows_all_and_plain_serve_acts_on_its_project_only() {
    let env = Env::new();
    env.replay("claude", "claude/claude-stream.jsonl", 0);
    let (a, b) = (env.work.clone(), project(&env, "beta"));
    let ja = run_in(&env, &a, &["run", "--async", "--agent", "claude", "a"]);
    let ja = ja["job_id"].as_str().unwrap().to_string();
    let jb = run_in(&env, &b, &["run", "--async", "--agent", "claude", "b"]);
    let jb = jb["job_id"].as_str().unwrap().to_string();
    for (dir, id) in [(&a, &ja), (&b, &jb)] {
        assert_eq!(run_in(&env, dir, &["wait", id])["status"], "success");
    }

    let srv = Server::start_with(&env, &["--all", "--repo", "beta"]);
    let session = srv.login();
    let repos = srv.get("/api/repos", &session).json();
    let shown: Vec<&Value> = repos["repos"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["shown"] == true)
        .collect();
    assert_eq!(shown.len(), 1, "{repos}");
    assert!(shown[0]["label"].as_str().unwrap().ends_with("beta"));
    let t = srv
        .stream("/api/events", &session)
        .until("the snapshot", |t| t.contains("event: snapshot"));
    assert!(t.contains(&jb) && !t.contains(&ja), "{t}");
    drop(srv);

    let srv = Server::start(&env);
    let session = srv.login();
    let repos = srv.get("/api/repos", &session).json();
    assert_eq!(repos["all"], false);
    assert_eq!(repos["repos"].as_array().unwrap().len(), 2, "{repos}");
    let kb = key_of(&repos, &b);
    let r = srv.get(&format!("/api/jobs/{jb}/events?repo={kb}"), &session);
    assert_eq!(
        r.code, 400,
        "another project's work is not this page's: {}",
        r.body
    );
    let r = srv.get(&format!("/api/usage?repo={kb}"), &session).json();
    assert_eq!(r["total"]["runs"], 1, "{r}");
}

/// While the server runs: a new project's first job appears (the folder of
/// the projects is watched), and a project whose root is deleted becomes
/// `exists: false` (a `repos` event) and its jobs leave the page (`gone`).
#[test]
fn projects_that_appear_or_lose_their_root_while_serving() {
    let env = Env::new();
    env.replay("claude", "claude/claude-stream.jsonl", 0);
    let a = env.work.clone();
    let ja = run_in(&env, &a, &["run", "--async", "--agent", "claude", "a"]);
    let ja = ja["job_id"].as_str().unwrap().to_string();
    assert_eq!(run_in(&env, &a, &["wait", &ja])["status"], "success");
    let srv = Server::start_with(&env, &["--all"]);
    let session = srv.login();
    let mut s = srv.stream("/api/events", &session);
    s.until("the snapshot", |t| t.contains("event: snapshot"));

    let late = project(&env, "late");
    let jl = run_in(
        &env,
        &late,
        &["run", "--async", "--agent", "claude", "late"],
    );
    let jl = jl["job_id"].as_str().unwrap().to_string();
    s.until("the new project's job", |t| {
        t.contains(&format!(r#""job_id":"{jl}""#))
    });
    let repos = srv.get("/api/repos", &session).json();
    let kl = key_of(&repos, &late);

    assert_eq!(run_in(&env, &late, &["wait", &jl])["status"], "success");
    fs::remove_dir_all(&late).unwrap();
    let gone = format!(r#""job_id":"{jl}","repo":"{kl}""#);
    let t = s.until("its jobs gone", |t| t.contains(&gone));
    assert!(t.contains("event: repos"), "{t}");
    let repos = srv.get("/api/repos", &session).json();
    let r = repos["repos"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["repo"] == kl.as_str())
        .unwrap_or_else(|| panic!("{repos}"));
    assert_eq!(
        (&r["exists"], &r["shown"]),
        (&Value::Bool(false), &Value::Bool(false))
    );
    let r = srv.post(&format!("/api/jobs/{jl}/cancel?repo={kl}"), &session, "{}");
    assert_eq!(r.code, 400, "a deleted project is not acted on: {}", r.body);
}
