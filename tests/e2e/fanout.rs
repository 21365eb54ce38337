//! `baton run --agents …` (best of N, issue 21) with the real codex, claude
//! and pi against the mock: each candidate writes in its own worktree, baton
//! runs the test command in each, and the one whose change passes wins; the
//! judges answer through the CLIs' own structured-output switches.
//!
//! Every candidate gets the same prompt, so the mock tells them apart by
//! wire format (`api` in scenarios.json): Anthropic (claude) writes the
//! passing change, the others a failing one.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::mock::{Api, Recorded};
use crate::support::{Agent, Peer, mock};

const TEST_CMD: &str = "grep -q FANOUT-GOOD fanout.txt";

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("--no-optional-locks")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The user's checkout as text: `git status`, HEAD, the branches other
/// than baton's, and the index's hash.
fn checkout(work: &Path) -> String {
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
    format!(
        "{}{}{branches}{}",
        git(work, &["status", "--porcelain=v1", "--untracked-files=all"]),
        fs::read_to_string(work.join(".git/HEAD")).unwrap(),
        git(work, &["hash-object", ".git/index"])
    )
}

/// Requests the mock answered from `scenario` for the run `id`.
fn answered(scenario: &str, id: &str) -> Vec<Recorded> {
    mock()
        .requests()
        .into_iter()
        .filter(|r| !r.helper && r.scenario == scenario && r.raw_body.contains(id))
        .collect()
}

fn candidate<'a>(j: &'a Value, agent: &str) -> &'a Value {
    j["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["agent"] == agent)
        .unwrap_or_else(|| panic!("no {agent} candidate: {j}"))
}

/// pi named without `--provider` (a fan-out names agents only): its own
/// settings point it at the mock, as a user's would.
fn pi_on_the_mock(pi: &Peer) {
    let settings = serde_json::json!({
        "defaultProvider": "mock", "defaultModel": "mock-model",
        "retry": {"enabled": false, "provider": {"maxRetries": 0}}
    });
    fs::write(
        pi.home.join(".pi/agent/settings.json"),
        settings.to_string(),
    )
    .unwrap();
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn the_candidate_whose_change_passes_wins_among_codex_claude_and_pi() {
    let codex = Peer::new(Agent::Codex, "fanout");
    let claude = Peer::new(Agent::Claude, "fanout");
    let pi = Peer::new(Agent::Pi, "fanout");
    pi_on_the_mock(&pi);
    let work = &codex.work;
    let before = checkout(work);
    let (id, prompt) = codex.prompt("E2E-FANOUT");
    let task = format!("{prompt}: write fanout.txt holding the line FANOUT-GOOD");
    let o = codex.baton_among(
        &[&claude, &pi],
        &[
            "run",
            "--agents",
            "codex,claude,pi",
            "--test-cmd",
            TEST_CMD,
            "--",
            &task,
        ],
        Duration::from_secs(600),
    );
    assert_eq!(o.code, 0, "{}", o.dump());
    let j = &o.json;
    assert_eq!(
        (j["kind"].as_str(), j["status"].as_str()),
        (Some("fanout"), Some("success")),
        "{}",
        o.dump()
    );
    assert_eq!(j["winner"]["agent"], "claude", "{}", o.dump());
    let won = candidate(j, "claude");
    assert_eq!(won["eligible"], true, "{}", o.dump());
    assert_eq!(won["tests"]["passed"], true);
    for loser in ["codex", "pi"] {
        let c = candidate(j, loser);
        assert_eq!(c["status"], "success", "{loser} ran: {}", o.dump());
        assert_eq!(c["eligible"], false);
        assert!(
            c["excluded_reason"]
                .as_str()
                .unwrap()
                .contains("tests failed (exit 1)"),
            "{loser}: {}",
            o.dump()
        );
        assert_eq!(c["kept"], false);
    }
    // The winner's branch holds its change; nothing merged, the checkout as it was.
    let branch = j["winner"]["branch"].as_str().unwrap().to_string();
    assert_eq!(
        git(work, &["show", &format!("{branch}:fanout.txt")]),
        "FANOUT-GOOD\n"
    );
    assert_eq!(
        checkout(work),
        before,
        "the user's checkout changed\n{}",
        o.dump()
    );
    // Each candidate reached the model through its own CLI.
    let apis = |s: &str| {
        let mut v: Vec<String> = answered(s, &id)
            .iter()
            .map(|r| format!("{:?}", r.api))
            .collect();
        v.sort();
        v.dedup();
        v
    };
    assert_eq!(apis("fanout-claude"), ["Anthropic"]);
    assert_eq!(apis("fanout-others"), ["Chat", "Responses"]);
    // One eligible candidate: nobody judges.
    assert!(answered("fanout-review", &id).is_empty());
    assert!(
        j["judge"]["note"]
            .as_str()
            .unwrap()
            .contains("one eligible"),
        "{}",
        o.dump()
    );
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn the_judges_answer_through_the_clis_structured_output() {
    let codex = Peer::new(Agent::Codex, "fanout-judges");
    let claude = Peer::new(Agent::Claude, "fanout-judges");
    let (id, prompt) = codex.prompt("E2E-FANOUT-TWO");
    let task = format!("{prompt}: write fanout.txt holding the line FANOUT-GOOD");
    let o = codex.baton_among(
        &[&claude],
        &[
            "run",
            "--agents",
            "codex,claude",
            "--test-cmd",
            TEST_CMD,
            "--seed",
            "7",
            "--",
            &task,
        ],
        Duration::from_secs(600),
    );
    assert_eq!(o.code, 0, "{}", o.dump());
    let j = &o.json;
    assert_eq!(j["judge"]["mode"], "peers", "{}", o.dump());
    let reviews = j["judge"]["reviews"].as_array().unwrap();
    assert_eq!(reviews.len(), 2, "{}", o.dump());
    for r in reviews {
        assert_eq!(r["outcome"], "ok", "{}", o.dump());
        assert_eq!(r["review"]["candidates"][0]["label"], "A");
    }
    // Each judge ranked the other's candidate only.
    for r in reviews {
        let own = candidate(j, r["agent"].as_str().unwrap())["id"].clone();
        let seen = &j["judge"]["label_map"][r["who"].as_str().unwrap()]["A"];
        assert_ne!(seen, &own, "a judge ranked its own candidate: {}", o.dump());
    }
    // Equal scores, no blocker: the smaller diff (claude's) wins.
    assert_eq!(j["winner"]["agent"], "claude", "{}", o.dump());
    // The judges' calls went out with each CLI's structured-output switch.
    let schema: Value = serde_json::from_str(
        &String::from_utf8(
            Command::new(crate::support::BATON)
                .args(["schema", "fanout-review"])
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap(),
    )
    .unwrap();
    let calls = answered("fanout-review", &id);
    let claude_call = calls
        .iter()
        .find(|r| r.api == Api::Anthropic)
        .expect("claude judged");
    let so = claude_call.body["tools"]
        .as_array()
        .and_then(|a| a.iter().find(|t| t["name"] == "StructuredOutput"))
        .expect("claude's --json-schema: the StructuredOutput tool");
    assert_eq!(so["input_schema"], schema);
    let codex_call = calls
        .iter()
        .find(|r| r.api == Api::Responses)
        .expect("codex judged");
    let f = &codex_call.body["text"]["format"];
    assert_eq!(
        (f["type"].as_str(), f["strict"].as_bool()),
        (Some("json_schema"), Some(true)),
        "{f}"
    );
    assert_eq!(f["schema"], schema);
    // Blind: no candidate a judge was shown names an agent (the task, the
    // same for all, is shown as given).
    for r in &calls {
        let shown = r
            .prompt
            .split_once("## Candidate")
            .map_or("", |x| x.1)
            .to_lowercase();
        assert!(!shown.is_empty(), "{}", r.prompt);
        assert!(
            !shown.contains("claude") && !shown.contains("codex"),
            "{}",
            r.prompt
        );
    }
}
