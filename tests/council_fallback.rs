//! The council's writer through the one fallback/retry chain of every run
//! (`run.fallback`, `run.retry` of the config, as for its members): a
//! fallback writer starts in a fresh worktree at the same base
//! (`council-<id>-a2`), the council reports it and its branch, and the
//! repair rounds continue that agent's session there.

use std::fs;
use std::time::Duration;

use serde_json::{Value, json};

use crate::council::{AGENTS, checkout, council, good_scenario, review, setup};
use crate::support::council::{CouncilFake, Stage};
use crate::support::{Env, wait_for};

/// codex after its own retries on a 429 (tests/fixtures/failures/codex/rate_limit*).
const CODEX_429: &str =
    "exceeded retry limit, last status: 429 Too Many Requests, request id: req_mockfault0001";

const ARGS: [&str; 11] = [
    "plan",
    "--yes",
    "--members",
    "codex,claude,pi",
    "--seed",
    "3",
    "--writer",
    "codex",
    "--test-cmd",
    "grep -q locked a.txt",
    "lock the cache insert",
];

/// The user's config (`BATON_CONFIG` of `Env::baton`): the chain every
/// member, and now the writer, goes through.
fn config(env: &Env, text: &str) {
    fs::write(env.tmp.path().join("user-config.toml"), text).unwrap();
}

/// Every member deliberates and approves; codex, the writer chosen, is
/// rate-limited (after `codex_edits` when given); claude writes.
fn scenario(codex_edits: bool, claude: Value) -> Value {
    let mut j = good_scenario().to_json();
    for a in AGENTS {
        j["agents"][a]["review"] = json!([{"json": review("approve", json!([]))}]);
    }
    let mut fail = json!({"fail": CODEX_429});
    if codex_edits {
        fail["edits"] = json!([{"path": "a.txt", "content": "one\nhalf done\n"}]);
    }
    j["agents"]["codex"]["implement"] = json!([fail]);
    j["agents"]["claude"]["implement"] = claude;
    j
}

fn warned(v: &Value, text: &str) -> bool {
    v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains(text))
}

fn branch_list(env: &Env) -> Vec<String> {
    let out = std::process::Command::new("git")
        .args([
            "-C",
            env.work.to_str().unwrap(),
            "branch",
            "--list",
            "baton/*",
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim_start_matches(['*', '+', ' ']).to_string())
        .collect()
}

fn run(env: &Env, fake: &CouncilFake, j: &Value) -> Value {
    fake.write_json(j);
    let r = council(env, &ARGS);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    r.json()
}

#[test]
fn a_rate_limited_writer_falls_back_in_a_fresh_worktree_and_the_council_names_it() {
    let (env, fake) = setup();
    config(&env, "[run]\nfallback = [\"claude\"]\n");
    let before = checkout(&env);
    let v = run(
        &env,
        &fake,
        &scenario(
            false,
            json!([{"edits": [{"path": "a.txt", "content": "one\ntwo\nlocked\n"}]}]),
        ),
    );
    assert_eq!(v["status"], "ready", "{v}");
    let id = v["council_id"].as_str().unwrap();
    let wt = &v["worktree"];
    // The result names the agent that wrote, and the one chosen.
    assert_eq!(wt["writer"], "claude", "{wt}");
    assert_eq!(wt["writer_requested"], "codex", "{wt}");
    let a = wt["attempts"].as_array().unwrap();
    assert_eq!(a.len(), 2, "{wt}");
    assert_eq!(
        (&a[0]["agent"], &a[0]["kind"], &a[0]["then"]),
        (&json!("codex"), &json!("rate_limited"), &json!("fallback")),
        "{wt}"
    );
    assert_eq!(
        (&a[1]["agent"], &a[1]["status"]),
        (&json!("claude"), &json!("success"))
    );
    assert!(
        warned(
            &v,
            "fell_back: the writer codex (rate_limited) could not answer; claude served the run"
        ),
        "{v}"
    );
    // claude wrote in a fresh worktree at the same base, named after the
    // council's; the one codex left untouched is gone with its branch.
    let a2 = format!("council-{id}-a2");
    let branch = format!("baton/{a2}");
    assert_eq!(wt["branch"], json!(branch), "{wt}");
    assert!(wt["path"].as_str().unwrap().ends_with(&a2), "{wt}");
    assert_eq!(wt["changed_files"], json!(["a.txt"]));
    assert!(
        v["merge_hint"]
            .as_str()
            .unwrap()
            .contains(wt["commit"].as_str().unwrap()),
        "{}",
        v["merge_hint"]
    );
    assert_eq!(branch_list(&env), [branch]);
    let codex = fake.calls_for("codex", Stage::Implement);
    assert_eq!(codex.len(), 1);
    assert!(codex[0].cwd.ends_with(format!("council-{id}")));
    assert!(!codex[0].cwd.exists());
    let claude = fake.calls_for("claude", Stage::Implement);
    assert_eq!(claude.len(), 1);
    assert!(claude[0].cwd.ends_with(&a2), "{:?}", claude[0].cwd);
    // The others review the serving writer's work, in its worktree: claude
    // does not review its own.
    let reviews: Vec<_> = fake
        .stage(Stage::Review)
        .into_iter()
        .filter(|c| c.cwd.to_string_lossy().contains(id))
        .collect();
    let mut reviewers: Vec<&str> = reviews.iter().map(|c| c.agent.as_str()).collect();
    reviewers.sort();
    assert_eq!(reviewers, ["codex", "pi"]);
    assert!(reviews.iter().all(|c| c.cwd.ends_with(&a2)));
    assert_eq!(checkout(&env), before, "the user's checkout changed");
}

#[test]
fn a_repair_round_after_a_fallback_resumes_the_fallback_writer_in_its_worktree() {
    let (env, fake) = setup();
    config(&env, "[run]\nfallback = [\"claude\"]\n");
    let mut j = scenario(
        false,
        json!([
            {"edits": [{"path": "a.txt", "content": "one\nlocked\n"}], "session": "claude-writer-1"},
            {"edits": [{"path": "a.txt", "content": "one\nlocked\nreleased\n"}]}]),
    );
    let major = json!([{"severity": "major", "category": "correctness", "file": "a.txt",
        "line": 1, "description": "the lock is never released"}]);
    for a in AGENTS {
        j["agents"][a]["review"] = json!([
            {"json": review("request_changes", major.clone())},
            {"json": review("approve", json!([]))}]);
    }
    let v = run(&env, &fake, &j);
    assert_eq!(v["status"], "ready", "{v}");
    assert_eq!(v["repair_rounds"], 1, "{v}");
    let id = v["council_id"].as_str().unwrap();
    assert_eq!(v["worktree"]["writer"], "claude");
    // codex was asked once; the repair went to claude, resuming its session
    // in the worktree it wrote in.
    assert_eq!(fake.calls_for("codex", Stage::Implement).len(), 1);
    let turns = fake.calls_for("claude", Stage::Implement);
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[0].resume, None);
    assert_eq!(turns[1].resume.as_deref(), Some("claude-writer-1"));
    assert!(
        turns[1].has_pair("--resume", "claude-writer-1"),
        "{:?}",
        turns[1].argv
    );
    assert_eq!(turns[1].cwd, turns[0].cwd);
    assert!(turns[1].cwd.ends_with(format!("council-{id}-a2")));
    assert!(
        turns[1].stdin.contains("the lock is never released"),
        "{}",
        turns[1].stdin
    );
    assert_eq!(
        v["worktree"]["branch"],
        json!(format!("baton/council-{id}-a2"))
    );
    // The round-1 reviewers read the repaired work there too.
    let r1: Vec<_> = fake
        .stage(Stage::Review)
        .into_iter()
        .filter(|c| c.round == 1)
        .collect();
    assert!(!r1.is_empty() && r1.iter().all(|c| c.agent != "claude"));
}

#[test]
fn a_writer_that_changed_a_file_is_not_retried_in_place_and_says_why() {
    let (env, fake) = setup();
    // Retries only: the next try would start from its half-done work.
    config(&env, "[run]\nretry = 1\n");
    fake.write_json(&scenario(true, json!([])));
    let v = council(&env, &ARGS).json();
    assert_ne!(v["status"], "ready", "{v}");
    assert!(
        warned(
            &v,
            "writer: not retried: codex changed files before it failed (a.txt)"
        ),
        "{v}"
    );
    // One call of the writer's first round, and no other agent.
    assert_eq!(fake.calls_for("codex", Stage::Implement)[0].round, 0);
    assert!(fake.calls_for("claude", Stage::Implement).is_empty());
    let id = v["council_id"].as_str().unwrap();
    assert_eq!(v["worktree"]["writer"], "codex");
    assert_eq!(
        v["worktree"]["branch"],
        json!(format!("baton/council-{id}"))
    );
    // With a fallback the next agent starts afresh elsewhere; the half-done
    // worktree stays for a person to look at, and the result says where.
    config(&env, "[run]\nfallback = [\"claude\"]\n");
    let v = run(
        &env,
        &fake,
        &scenario(
            true,
            json!([{"edits": [{"path": "a.txt", "content": "one\ntwo\nlocked\n"}]}]),
        ),
    );
    assert_eq!(v["status"], "ready", "{v}");
    let id = v["council_id"].as_str().unwrap();
    let first = format!("council-{id}");
    assert!(
        warned(&v, "writer: an earlier attempt's worktree")
            && warned(&v, &format!("(branch baton/{first}) stays")),
        "{v}"
    );
    let kept = env.work.join(".baton/worktrees").join(&first);
    assert_eq!(
        fs::read_to_string(kept.join("a.txt")).unwrap(),
        "one\nhalf done\n"
    );
    let claude = fake.calls_for("claude", Stage::Implement);
    assert!(claude.last().unwrap().cwd.ends_with(format!("{first}-a2")));
    assert_eq!(v["worktree"]["branch"], json!(format!("baton/{first}-a2")));
}

#[test]
fn kill_9_while_the_fallback_writer_works_then_resume_discards_its_worktree() {
    let (env, fake) = setup();
    config(&env, "[run]\nfallback = [\"claude\"]\n");
    let write = json!({"edits": [{"path": "a.txt", "content": "one\ntwo\nlocked\n"}]});
    let mut slow = write.clone();
    slow["delay_ms"] = json!(30_000);
    fake.write_json(&scenario(false, json!([slow])));
    let before = checkout(&env);
    let mut child = env
        .baton()
        .arg("council")
        .args(ARGS)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_for(Duration::from_secs(60), || !fake
            .calls_for("claude", Stage::Implement)
            .is_empty()),
        "the fallback writer never started"
    );
    // SAFETY: the child we spawned.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGKILL);
    }
    let _ = child.wait();
    let killed_in = fake.calls_for("claude", Stage::Implement)[0].cwd.clone();
    let id = council(&env, &["list"]).json()["councils"][0]["council_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(killed_in.ends_with(format!("council-{id}-a2")));
    fake.write_json(&scenario(false, json!([write])));
    let r = council(&env, &["resume", &id]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v = r.json();
    assert_eq!(v["status"], "ready", "{v}");
    assert!(
        warned(&v, "writer: an interrupted earlier attempt of this stage")
            && warned(&v, &format!("council-{id}-a2 on baton/council-{id}-a2")),
        "{v}"
    );
    assert_eq!(v["worktree"]["writer"], "claude");
    assert_eq!(
        v["worktree"]["branch"],
        json!(format!("baton/council-{id}-a2"))
    );
    assert_eq!(
        branch_list(&env),
        [format!("baton/council-{id}-a2")],
        "one branch: the restarted stage's"
    );
    assert_eq!(checkout(&env), before, "the user's checkout changed");
}
