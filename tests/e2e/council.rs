//! `baton council plan --yes` with the real codex, claude and pi as members
//! (issue 12): proposals, blind critiques, the chair's plan, codex writing in
//! the council's worktree, baton's test oracle and two reviews, to `ready`.
//!
//! The mock answers each stage by the schema id its prompt names (scenarios
//! `council-*`): the plan's step carries the writer's marker, so the writer's
//! turn (which names no schema) gets the shell call that writes the file.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::mock::{Api, scenario_step};
use crate::support::{Agent, Outcome, Peer, mock};

const TEST_CMD: &str = "grep -q COUNCIL-OK council.txt";

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("--no-optional-locks")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The user's checkout as bytes: files outside `.git`, the index, HEAD,
/// the branches other than baton's, and `git status`.
fn checkout(work: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, m: &mut BTreeMap<String, Vec<u8>>) {
        for e in fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            if rel == ".git" || rel == ".baton" {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                walk(root, &p, m);
            } else {
                m.insert(rel, fs::read(&p).unwrap());
            }
        }
    }
    let mut m = BTreeMap::new();
    walk(work, work, &mut m);
    m.insert(
        ".git/index".into(),
        fs::read(work.join(".git/index")).unwrap(),
    );
    m.insert(
        ".git/HEAD".into(),
        fs::read(work.join(".git/HEAD")).unwrap(),
    );
    let branches: String = git(
        work,
        &[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/heads",
        ],
    )
    .lines()
    .filter(|l| !l.starts_with("refs/heads/baton/"))
    .map(|l| format!("{l}\n"))
    .collect();
    m.insert("git branches".into(), branches.into_bytes());
    m.insert(
        "git status".into(),
        git(work, &["status", "--porcelain=v1", "--untracked-files=all"]).into_bytes(),
    );
    m
}

/// Requests the mock answered from one council scenario, helpers left out
/// (only this test uses the `council-*` scenarios; the writer's and the
/// reviewers' prompts are built from the plan and need not quote the task).
fn answered(scenario: &str) -> Vec<crate::mock::Recorded> {
    mock()
        .requests()
        .into_iter()
        .filter(|r| !r.helper && r.scenario == scenario)
        .collect()
}

fn arr(v: &Value) -> Vec<Value> {
    v.as_array().cloned().unwrap_or_default()
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn plan_yes_reaches_ready_with_codex_claude_and_pi() {
    let codex = Peer::new(Agent::Codex, "council");
    let claude = Peer::new(Agent::Claude, "council");
    let pi = Peer::new(Agent::Pi, "council");
    // A council names members only (`pi`, no `--provider`): pi's own
    // defaults point it at the mock, as a user's settings would.
    let settings = serde_json::json!({
        "defaultProvider": "mock", "defaultModel": "mock-model",
        "retry": {"enabled": false, "provider": {"maxRetries": 0}}
    });
    fs::write(
        pi.home.join(".pi/agent/settings.json"),
        settings.to_string(),
    )
    .unwrap();

    let work = &codex.work;
    let before = checkout(work);
    let (_, prompt) = codex.prompt("E2E-COUNCIL");
    let task = format!("{prompt}: add a file council.txt holding the line COUNCIL-OK");
    let o: Outcome = codex.baton_among(
        &[&claude, &pi],
        &[
            "council",
            "plan",
            "--yes",
            "--members",
            "codex,claude,pi",
            "--writer",
            "codex",
            "--test-cmd",
            TEST_CMD,
            "--",
            &task,
        ],
        Duration::from_secs(600),
    );
    assert_eq!(
        (o.code, o.json["stage"].as_str()),
        (0, Some("ready")),
        "{}",
        o.dump()
    );
    let j = &o.json;
    assert_eq!(j["status"], "ready", "{}", o.dump());

    // Every member took part, each through its own CLI.
    let members = arr(&j["members"]);
    let mut names: Vec<&str> = members.iter().filter_map(|m| m["agent"].as_str()).collect();
    names.sort();
    assert_eq!(names, ["claude", "codex", "pi"], "{}", o.dump());
    assert_eq!(arr(&j["proposals"]).len(), 3, "{}", o.dump());
    let critiques = arr(&j["critiques"]);
    assert_eq!(critiques.len(), 3, "{}", o.dump());
    // Blind: each critic was shown the two others' proposals, never its own.
    for c in &critiques {
        assert_eq!(c["outcome"], "ok", "{}", o.dump());
        let shown: Vec<&Value> = c["shown"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| &s["is"])
            .collect();
        assert_eq!(shown.len(), 2, "{}", o.dump());
        assert!(
            !shown.contains(&&c["critic"]),
            "a critic saw its own proposal\n{}",
            o.dump()
        );
    }
    assert_eq!(j["label_map"].as_object().map(|m| m.len()), Some(3));
    assert_eq!(j["approval"]["mode"], "auto", "{}", o.dump());

    // The plan is the chair's, as the mock scripted it.
    let scripted = scenario_step("council-plan", 0)["json"].clone();
    let plan = &j["plan"]["content"];
    assert_eq!(
        plan["authorized_files"],
        scripted["authorized_files"],
        "{}",
        o.dump()
    );
    assert_eq!(plan["steps"], scripted["steps"], "{}", o.dump());
    assert_eq!(j["plan"]["sha256"].as_str().map(str::len), Some(64));

    // baton ran the test command itself, in the worktree, and it passed.
    assert_eq!(j["verification"]["passed"], true, "{}", o.dump());
    assert_eq!(j["verification"]["exit_code"], 0, "{}", o.dump());

    // Two reviewers, neither the writer, both approving the changed file.
    let reviews = arr(&j["reviews"]);
    assert_eq!(reviews.len(), 2, "{}", o.dump());
    let mut reviewers: Vec<&str> = reviews
        .iter()
        .filter_map(|r| r["reviewer"].as_str())
        .collect();
    reviewers.sort();
    assert_eq!(reviewers, ["claude", "pi"], "{}", o.dump());
    for r in &reviews {
        assert_eq!(r["outcome"], "ok", "{}", o.dump());
        assert_eq!(r["review"]["verdict"], "approve", "{}", o.dump());
        assert_eq!(
            r["review"]["files_reviewed"][0],
            "council.txt",
            "{}",
            o.dump()
        );
    }
    assert_eq!(j["repair_rounds"], 0, "{}", o.dump());

    // The writer's edit is committed on the council's branch, never merged.
    let branch = j["worktree"]["branch"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(branch.starts_with("baton/council-"), "{}", o.dump());
    assert_eq!(j["worktree"]["writer"], "codex", "{}", o.dump());
    assert_eq!(
        j["worktree"]["changed_files"],
        serde_json::json!(["council.txt"])
    );
    assert_eq!(j["worktree"]["reverted"], serde_json::json!([]));
    assert_eq!(
        git(work, &["show", &format!("{branch}:council.txt")]),
        "COUNCIL-OK\n"
    );
    assert!(
        j["merge_hint"]
            .as_str()
            .zip(j["worktree"]["commit"].as_str())
            .is_some_and(|(h, c)| h.contains(&format!("git merge {c}")))
    );
    let after = checkout(work);
    assert_eq!(before, after, "the user's checkout changed\n{}", o.dump());

    // Each stage reached the model through each member's own CLI: three
    // proposals and three critiques (Responses = codex, Anthropic = claude,
    // Chat = pi), one plan, the writer (codex), two reviews.
    let apis = |s: &str| {
        let mut v: Vec<String> = answered(s).iter().map(|r| format!("{:?}", r.api)).collect();
        v.sort();
        v.dedup();
        v
    };
    let all = vec!["Anthropic".to_string(), "Chat".into(), "Responses".into()];
    assert_eq!(apis("council-proposal"), all, "proposals");
    assert_eq!(apis("council-critique"), all, "critiques");
    assert!(!answered("council-plan").is_empty(), "the chair was asked");
    let writes = answered("council-write");
    assert!(
        !writes.is_empty() && writes.iter().all(|r| r.api == Api::Responses),
        "the writer is codex: {writes:?}"
    );
    // Reviews by claude and pi; the writer (codex) does not review itself.
    assert_eq!(apis("council-review"), ["Anthropic", "Chat"], "reviewers");
}
