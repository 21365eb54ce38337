//! `baton council` beyond the basics: the `--depth deep` revision round and
//! kill -9 while baton runs the tests (verifying), then `resume`.

use std::fs;
use std::time::Duration;

use serde_json::{Value, json};

use crate::council::{AGENTS, council, has_name, markers, plan, proposal, review, setup};
use crate::support::council::{Scenario, Stage, Step};
use crate::support::{git, wait_for};

/// What critic `flaw` says about both proposals it is shown: a finding on
/// each, named `FLAW-A` and `FLAW-B` so a revision prompt shows whose it got.
fn critique(flaw: &str) -> Value {
    json!({"summary": "A is stronger", "ranking": ["A", "B"], "findings": [
        {"proposal": "A", "claims": ["c1"], "severity": "minor", "category": "style",
         "description": format!("{flaw}-A")},
        {"proposal": "B", "claims": ["c1"], "severity": "major", "category": "correctness",
         "description": format!("{flaw}-B")}]})
}

fn flaw(agent: &str) -> String {
    format!("flaw{}", AGENTS.iter().position(|a| *a == agent).unwrap())
}

/// codex and claude revise (`MARKER-revised`); pi answers its revision with
/// prose twice (the revision and its repair), so its original stands.
fn deep_scenario() -> Scenario {
    let mut s = Scenario::new();
    for (a, m) in markers() {
        s = s
            .on(a, Stage::Proposal, Step::json(proposal(m)))
            .on(a, Stage::Critique, Step::json(critique(&flaw(a))))
            .on(a, Stage::Plan, Step::json(plan()));
        s = if a == "pi" {
            s.on(a, Stage::Proposal, Step::say("I would rather not revise."))
        } else {
            s.on(
                a,
                Stage::Proposal,
                Step::json(proposal(&format!("{m}-revised"))),
            )
        };
    }
    s
}

#[test]
fn deep_revises_each_proposal_against_its_own_critiques_only() {
    let (env, fake) = setup();
    fake.write(&deep_scenario());
    let r = council(
        &env,
        &[
            "discuss",
            "--depth",
            "deep",
            "--members",
            "codex,claude,pi",
            "--seed",
            "7",
            "q?",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v = r.json();
    assert_eq!(v["stage"], "done", "{v}");
    assert!(
        !v["warnings"].to_string().contains("depth_deep"),
        "{}",
        v["warnings"]
    );
    // Chair label → agent, and each critic's own label for each agent.
    let agent_of = |chair_label: &Value| {
        v["label_map"][chair_label.as_str().unwrap()]["agent"]
            .as_str()
            .unwrap()
            .to_string()
    };
    for (author, marker) in markers() {
        let calls = fake.calls_for(author, Stage::Proposal);
        // The proposal, then the revision (pi: and the revision's repair).
        let want = if author == "pi" { 3 } else { 2 };
        assert_eq!(calls.len(), want, "{author}");
        let prompt = &calls[1].stdin;
        assert_eq!(
            has_name(prompt),
            None,
            "a name in {author}'s revision prompt"
        );
        assert!(
            prompt.contains(&format!("{marker}: guard")),
            "its own proposal"
        );
        for (other, m) in markers() {
            if other != author {
                assert!(
                    !prompt.contains(&format!("{m}:")),
                    "{other}'s proposal leaked"
                );
            }
        }
        // Exactly the findings about its own proposal, from each other critic.
        for c in v["critiques"].as_array().unwrap() {
            let critic = c["agent"].as_str().unwrap();
            let f = flaw(critic);
            assert!(!prompt.contains(&flaw(author)), "its own critique");
            if critic == author {
                continue;
            }
            for s in c["shown"].as_array().unwrap() {
                let about = agent_of(&s["is"]);
                let desc = format!("{f}-{}", s["label"].as_str().unwrap());
                assert_eq!(
                    prompt.contains(&desc),
                    about == author,
                    "{author}'s revision prompt and {desc} (about {about})"
                );
            }
        }
        // No critic's label survives: critics are `Critic N`.
        assert!(prompt.contains("Critic 1") && prompt.contains("Critic 2"));
        assert!(!prompt.contains("\"proposal\": \"A\"") && !prompt.contains("\"proposal\": \"B\""));
    }
    // The chair sees the revised text, and pi's original.
    let chair = &fake.stage(Stage::Plan)[0].stdin;
    assert!(chair.contains("alpha-revised") && chair.contains("beta-revised"));
    assert!(chair.contains("gamma: guard") && !chair.contains("gamma-revised"));
    let members = v["members"].as_array().unwrap();
    let pi = members.iter().find(|m| m["agent"] == "pi").unwrap();
    assert_eq!(pi["outcomes"]["revising"]["kept_original"], true, "{pi}");
    let codex = members.iter().find(|m| m["agent"] == "codex").unwrap();
    assert_eq!(codex["outcomes"]["revising"]["outcome"], "ok");
    assert_eq!(v["revisions"].as_array().unwrap().len(), 3);
    assert!(
        v["usage_by_stage"]["revising"].is_object(),
        "{}",
        v["usage_by_stage"]
    );
}

#[test]
fn quick_skips_critique_and_revision_and_standard_does_not_revise() {
    let (env, fake) = setup();
    fake.write(&deep_scenario());
    let base = ["--members", "codex,claude,pi", "--seed", "7", "q?"];
    for depth in ["quick", "standard"] {
        let _ = fs::remove_file(&fake.log);
        let mut args = vec!["discuss", "--depth", depth];
        args.extend(base);
        let r = council(&env, &args);
        assert_eq!(r.code, 0, "{depth}: {}", r.stderr);
        let v = r.json();
        assert_eq!(fake.stage(Stage::Proposal).len(), 3, "{depth}: no revision");
        assert_eq!(
            fake.stage(Stage::Critique).is_empty(),
            depth == "quick",
            "{depth}"
        );
        assert!(v["usage_by_stage"].get("revising").is_none(), "{depth}");
        assert_eq!(v["revisions"], json!([]));
    }
}

#[test]
fn kill_9_in_revising_then_resume_equals_the_uninterrupted_run() {
    let (env, fake) = setup();
    fake.write(&deep_scenario());
    let args = [
        "council",
        "discuss",
        "--depth",
        "deep",
        "--members",
        "codex,claude,pi",
        "--seed",
        "5",
        "q?",
    ];
    let base = env.run(&args);
    assert_eq!(base.code, 0, "{}", base.stderr);
    let comparable = |mut v: Value| {
        for k in ["council_id", "duration_ms", "summary"] {
            v[k] = Value::Null;
        }
        v
    };
    let want = comparable(base.json());
    let mut j = deep_scenario().to_json();
    j["agents"]["codex"]["proposal"][1]["delay_ms"] = json!(30_000);
    fake.write_json(&j);
    let _ = fs::remove_file(&fake.log);
    let mut child = env
        .baton()
        .args(args)
        // Killed outright below: its members' empty working folders
        // (`baton-ask-*`) go in the test's own folder.
        .env("TMPDIR", env.tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_for(Duration::from_secs(30), || fake
            .calls_for("codex", Stage::Proposal)
            .len()
            > 1),
        "the revision never started"
    );
    // SAFETY: the child we spawned.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGKILL);
    }
    let _ = child.wait();
    fake.write(&deep_scenario());
    let id = council(&env, &["list"]).json()["councils"][0]["council_id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = council(&env, &["resume", &id]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(comparable(r.json()), want);
}

#[test]
fn kill_9_while_verifying_then_resume_reaches_the_same_result() {
    let (env, fake) = setup();
    // The test command blocks until the gate exists, after saying it started.
    let started = env.tmp.path().join("verify-started");
    let gate = env.tmp.path().join("verify-gate");
    fs::write(
        env.work.join("check.sh"),
        format!(
            "touch '{}'\nwhile [ ! -e '{}' ]; do sleep 0.05; done\ngrep -q locked a.txt\n",
            started.display(),
            gate.display()
        ),
    )
    .unwrap();
    git(&env.work, &["add", "."]);
    git(&env.work, &["commit", "-qm", "check"]);
    let mut j = crate::council::good_scenario().to_json();
    for a in AGENTS {
        j["agents"][a]["implement"] =
            json!([{"edits": [{"path": "a.txt", "content": "one\nlocked\n"}]}]);
        j["agents"][a]["review"] = json!([{"json": review("approve", json!([]))}]);
    }
    fake.write_json(&j);
    let args = [
        "council",
        "plan",
        "--yes",
        "--members",
        "codex,claude,pi",
        "--seed",
        "9",
        "--writer",
        "claude",
        "--test-cmd",
        "sh check.sh",
        "--allow",
        "a.txt",
        "lock it",
    ];
    let before = crate::council::checkout(&env);
    // The uninterrupted run, for comparison.
    fs::write(&gate, "").unwrap();
    let base = env.run(&args);
    assert_eq!(base.code, 0, "{}\n{}", base.stdout, base.stderr);
    let want = base.json();
    assert_eq!(want["status"], "ready", "{want}");
    fs::remove_file(&gate).unwrap();
    fs::remove_file(&started).unwrap();
    let _ = fs::remove_file(&fake.log);

    let mut child = env
        .baton()
        .args(args)
        // Killed outright below: its members' empty working folders
        // (`baton-ask-*`) go in the test's own folder.
        .env("TMPDIR", env.tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_for(Duration::from_secs(60), || started.exists()),
        "verifying never started"
    );
    let list = council(&env, &["list"]).json();
    let id = list["councils"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["council_id"] != want["council_id"])
        .unwrap()["council_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(council(&env, &["status", &id]).json()["stage"], "verifying");
    // SAFETY: the child we spawned.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGKILL);
    }
    let _ = child.wait();
    // The orphaned test command may finish now; resume runs it again.
    fs::write(&gate, "").unwrap();
    let r = council(&env, &["resume", &id]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v = r.json();
    assert_eq!(v["status"], "ready", "{v}");
    // The same result: no call was made twice, the same verdicts and files.
    assert_eq!(fake.calls_for("claude", Stage::Implement).len(), 1);
    for k in [
        "reviews",
        "repair_rounds",
        "plan",
        "members",
        "proposals",
        "critiques",
    ] {
        let (mut a, mut b) = (v[k].clone(), want[k].clone());
        if k == "plan" {
            a["path"] = Value::Null;
            b["path"] = Value::Null;
        }
        assert_eq!(a, b, "{k}");
    }
    assert_eq!(
        v["worktree"]["changed_files"],
        want["worktree"]["changed_files"]
    );
    assert_eq!(
        v["verification"]["exit_code"],
        want["verification"]["exit_code"]
    );
    assert_eq!(
        crate::council::checkout(&env),
        before,
        "the user's checkout changed"
    );
}

fn gone(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let exists = unsafe { libc::kill(pid, 0) == 0 };
    !exists
        || fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
        })
}

#[test]
fn an_async_council_is_a_job_for_wait_status_jobs_logs_and_cancel() {
    let (env, fake) = setup();
    fake.write(&crate::council::good_scenario());
    let r = council(
        &env,
        &["discuss", "--async", "--members", "codex,claude,pi", "q?"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let id = r.json()["council_id"].as_str().unwrap().to_string();
    let w = env.run(&["wait", &id]);
    assert_eq!(w.code, 0, "{}\n{}", w.stdout, w.stderr);
    let v = w.json();
    assert_eq!(v["council_id"], id.as_str());
    assert_eq!(v["stage"], "done", "{v}");
    assert_eq!(v["label_map"].as_object().unwrap().len(), 3);
    assert_eq!(env.run(&["result", &id]).json()["stage"], "done");
    assert_eq!(env.run(&["status", &id]).json()["stage"], "done");
    let jobs = env.run(&["jobs"]).json();
    let row = jobs["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["job_id"] == id.as_str())
        .unwrap_or_else(|| panic!("not listed: {jobs}"))
        .clone();
    assert_eq!(row["agent"], "council");
    assert_eq!(row["status"], "success");
    let l = env.run(&["logs", &id]);
    assert_eq!(l.code, 0, "{}", l.stderr);
    assert!(!l.stdout.is_empty());

    // Cancel while every member thinks; codex never answers.
    let mut j = crate::council::good_scenario().to_json();
    for a in AGENTS {
        j["agents"][a]["proposal"] = json!([{"hang": true}]);
    }
    fake.write_json(&j);
    let _ = fs::remove_file(&fake.log);
    let r = council(
        &env,
        &["discuss", "--async", "--members", "codex,claude,pi", "q?"],
    );
    let id = r.json()["council_id"].as_str().unwrap().to_string();
    assert!(
        wait_for(Duration::from_secs(30), || fake
            .stage(Stage::Proposal)
            .len()
            >= 3),
        "the members never started"
    );
    let listed = env.run(&["jobs"]).json();
    assert!(
        listed["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|j| j["job_id"] == id.as_str() && j["status"] == "running"),
        "{listed}"
    );
    let pids: Vec<i32> = fake.stage(Stage::Proposal).iter().map(|c| c.pid).collect();
    assert!(pids.iter().all(|p| !gone(*p)));
    let c = env.run(&["cancel", &id]);
    assert_eq!(c.code, 130, "{}\n{}", c.stdout, c.stderr);
    assert_eq!(c.json()["status"], "cancelled");
    assert!(
        wait_for(Duration::from_secs(5), || pids.iter().all(|p| gone(*p))),
        "a member outlived the cancel: {pids:?}"
    );
    assert_eq!(council(&env, &["status", &id]).json()["stage"], "cancelled");
    assert_eq!(env.run(&["wait", &id]).code, 130);
    // A cancelled council stays resumable, from the stage it was cancelled in.
    fake.write(&crate::council::good_scenario());
    let r = council(&env, &["resume", &id]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v = r.json();
    assert_eq!(v["stage"], "done", "{v}");
    assert_eq!(v["label_map"].as_object().unwrap().len(), 3);
}
