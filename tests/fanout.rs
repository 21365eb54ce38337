//! `baton run --agents a,b,c --test-cmd …` (best of N) against the scripted
//! fake (`support/council_fake.py` as codex, claude and pi) in a real git
//! repository: selection, exclusion, repair rounds, first-green, blind
//! judges, background runs, and the user's checkout never written.

use std::collections::BTreeSet;
use std::fs;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::council::{CouncilFake, Scenario, Stage, Step};
use crate::support::{Env, Run, pid_alive, wait_for};
use crate::worktree::{baton, baton_cmd, fingerprint, git, repo};

const AGENTS: [&str; 3] = ["codex", "claude", "pi"];

/// The test command every case uses: `answer.txt` must say `good`; on
/// failure it says what it found (what a repair round is shown).
pub(crate) const TEST: &str =
    "grep -q good answer.txt || { echo \"MARKER: answer.txt says $(cat answer.txt)\"; exit 3; }";

pub(crate) fn setup() -> (Env, CouncilFake) {
    let env = Env::new();
    repo(&env);
    let fake = CouncilFake::install(&env, &AGENTS);
    (env, fake)
}

pub(crate) fn write_answer(content: &str) -> Step {
    Step::say("done").edit("answer.txt", content)
}

pub(crate) fn fan_out(env: &Env, extra: &[&str]) -> (Run, Value) {
    let mut args = vec!["run", "--test-cmd", TEST];
    args.extend_from_slice(extra);
    args.push("write the answer");
    let r = baton(env, &args);
    let j = r.json();
    (r, j)
}

pub(crate) fn candidate<'a>(j: &'a Value, id: &str) -> &'a Value {
    j["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no candidate {id}: {j}"))
}

pub(crate) fn branches(env: &Env) -> Vec<String> {
    git(
        &env.work,
        &[
            "for-each-ref",
            "--format=%(refname:short)",
            "refs/heads/baton/",
        ],
    )
    .lines()
    .map(str::to_string)
    .collect()
}

#[test]
fn the_passing_candidate_wins_the_failing_and_the_tamperer_are_excluded() {
    let (env, fake) = setup();
    fake.write(
        &Scenario::new()
            .on("codex", Stage::Implement, write_answer("good\n"))
            .on("claude", Stage::Implement, write_answer("bad\n"))
            // The tamperer rewrites its repository's configuration.
            .on(
                "pi",
                Stage::Implement,
                write_answer("good\n").edit(".git/config", "[core]\n\tfsmonitor = true\n"),
            ),
    );
    let before = fingerprint(&env.work);
    let (r, j) = fan_out(&env, &["--agents", "codex,claude,pi"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(j["kind"], "fanout");
    assert_eq!(j["status"], "success");
    assert_eq!(j["winner"]["id"], "c1", "{j}");
    assert_eq!(j["winner"]["agent"], "codex");
    let c1 = candidate(&j, "c1");
    assert_eq!(
        (c1["eligible"].as_bool(), c1["kept"].as_bool()),
        (Some(true), Some(true))
    );
    assert_eq!(c1["tests"]["passed"], true);
    assert_eq!(c1["changed_files"], json!(["answer.txt"]));
    let c2 = candidate(&j, "c2");
    assert_eq!(c2["eligible"], false);
    assert!(
        c2["excluded_reason"]
            .as_str()
            .unwrap()
            .contains("tests failed (exit 3)"),
        "{c2}"
    );
    assert!(
        c2["tests"]["output_tail"]
            .as_str()
            .unwrap()
            .contains("MARKER: answer.txt says bad")
    );
    let c3 = candidate(&j, "c3");
    assert_eq!(c3["eligible"], false);
    assert!(
        c3["excluded_reason"].as_str().unwrap().contains("tampered"),
        "{c3}"
    );
    assert_eq!(c3["error"]["kind"], "worktree_tampered");
    // Only the winner's branch and worktree stay; nothing was merged.
    let branch = j["winner"]["branch"].as_str().unwrap().to_string();
    assert_eq!(branches(&env), std::slice::from_ref(&branch));
    assert!(!c2["kept"].as_bool().unwrap() && !c3["kept"].as_bool().unwrap());
    assert!(!std::path::Path::new(c2["worktree"].as_str().unwrap()).exists());
    assert!(
        j["merge_hint"].as_str().unwrap().contains(&format!(
            "git merge {}",
            j["winner"]["commit"].as_str().unwrap()
        )),
        "{j}"
    );
    assert_eq!(
        git(&env.work, &["show", &format!("{branch}:answer.txt")]),
        "good\n"
    );
    // A judge that runs `git log` on a candidate's branch reads no agent's
    // name there (issue 29): who wrote it is in baton's records only.
    let base = j["base"].as_str().unwrap();
    let log = git(
        &env.work,
        &[
            "log",
            "--format=%an %ae %cn%n%B",
            &format!("{base}..{branch}"),
        ],
    );
    assert!(log.contains("baton: run "), "{log}");
    for name in AGENTS.iter().chain(&["Baton-Agent"]) {
        assert!(!log.to_lowercase().contains(&name.to_lowercase()), "{log}");
    }
    assert_eq!(
        c1["tests"]["commit"],
        git(&env.work, &["rev-parse", &branch]).trim()
    );
    // The user's checkout is byte for byte what it was.
    assert_eq!(fingerprint(&env.work), before);
    // Usage is the candidates' together.
    let sum: u64 = j["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["usage"]["input_tokens"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(j["usage"]["input_tokens"].as_u64().unwrap(), sum);
    // The three worktrees were made from the same base, each on its branch.
    let cwds: BTreeSet<String> = fake
        .stage(Stage::Implement)
        .iter()
        .map(|c| c.cwd.display().to_string())
        .collect();
    assert_eq!(cwds.len(), 3, "{cwds:?}");
}

#[test]
fn a_candidate_green_after_one_repair_round_wins_with_until_green_1_and_not_with_0() {
    let (env, fake) = setup();
    fake.write(
        &Scenario::new()
            .on("codex", Stage::Implement, write_answer("bad\n"))
            .on("codex", Stage::Implement, write_answer("good\n")),
    );
    let before = fingerprint(&env.work);
    let (r, j) = fan_out(&env, &["--agents", "codex", "--until-green", "1"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(j["winner"]["id"], "c1", "{j}");
    let c1 = candidate(&j, "c1");
    let rounds = c1["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 2, "{c1}");
    assert_eq!(rounds[0]["tests"]["passed"], false);
    assert_eq!(rounds[1]["tests"]["passed"], true);
    // The second turn was the same session, given the failing output.
    let calls = fake.calls_for("codex", Stage::Implement);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1].resume.as_deref(), Some(calls[0].session.as_str()));
    assert_eq!(calls[1].cwd, calls[0].cwd, "the same worktree");
    assert!(
        calls[1].stdin.contains("MARKER: answer.txt says bad")
            && calls[1].stdin.contains("exited 3"),
        "{}",
        calls[1].stdin
    );
    assert_eq!(fingerprint(&env.work), before);

    // Without a repair round it loses: no eligible candidate.
    let (env, fake) = setup();
    fake.write(
        &Scenario::new()
            .on("codex", Stage::Implement, write_answer("bad\n"))
            .on("codex", Stage::Implement, write_answer("good\n")),
    );
    let (r, j) = fan_out(&env, &["--agents", "codex", "--until-green", "0"]);
    assert_eq!(r.code, 5, "{}", r.stdout);
    assert_eq!(j["status"], "failed");
    assert_eq!(j["winner"], Value::Null);
    assert_eq!(j["error"]["kind"], "no_eligible_candidate");
    assert!(
        j["summary"]
            .as_str()
            .unwrap()
            .contains("c1: its tests failed"),
        "{j}"
    );
    assert_eq!(fake.calls_for("codex", Stage::Implement).len(), 1);
    assert!(
        branches(&env).is_empty(),
        "a loser's branch stays only with --keep-all"
    );
}

#[test]
fn first_green_stops_the_slower_candidates_at_once() {
    let (env, fake) = setup();
    fake.write(
        &Scenario::new()
            .on(
                "codex",
                Stage::Implement,
                write_answer("good\n").delay_ms(300),
            )
            .on("claude", Stage::Implement, Step::hang())
            .on("pi", Stage::Implement, Step::hang()),
    );
    let started = Instant::now();
    let (r, j) = fan_out(
        &env,
        &["--agents", "codex,claude,pi", "--pick", "first-green"],
    );
    let wall = started.elapsed();
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(j["winner"]["id"], "c1", "{j}");
    assert_eq!(j["judge"], Value::Null);
    for id in ["c2", "c3"] {
        let c = candidate(&j, id);
        assert_eq!(c["status"], "cancelled", "{c}");
        assert!(
            c["excluded_reason"]
                .as_str()
                .unwrap()
                .contains("c1 was eligible first"),
            "{c}"
        );
        assert_eq!(c["kept"], false);
        assert!(!std::path::Path::new(c["worktree"].as_str().unwrap()).exists());
    }
    // No process of theirs is left.
    for c in fake.calls().iter().filter(|c| c.agent != "codex") {
        assert!(!pid_alive(c.pid), "{} {} is still running", c.agent, c.pid);
    }
    // Its wall time is the fastest green candidate's, not the hanging ones'.
    let fastest = candidate(&j, "c1")["duration_ms"].as_u64().unwrap();
    assert!(
        wall < Duration::from_millis(fastest) + Duration::from_secs(5),
        "{wall:?} vs the winner's {fastest} ms"
    );
    assert_eq!(branches(&env).len(), 1);
}

#[test]
fn the_judges_are_blind_and_never_rank_their_own_candidate() {
    let (env, fake) = setup();
    let review = json!({"candidates": [
        {"label": "A", "verdict": "accept", "summary": "fine", "findings": []},
        {"label": "B", "verdict": "revise", "summary": "meh", "findings": [
            {"severity": "major", "file": "answer.txt", "line": 1, "description": "wordy"}]}],
        "ranking": ["A", "B"]});
    fake.write(
        &Scenario::new()
            .on(
                "codex",
                Stage::Implement,
                // A trailing space: `git diff --check` finds it.
                write_answer("good alpha, written by codex (gpt-5) \n"),
            )
            .on(
                "claude",
                Stage::Implement,
                write_answer("good bravo, written by Claude Code\n"),
            )
            .on(
                "pi",
                Stage::Implement,
                write_answer("good charlie, from the pi coding agent\n"),
            )
            .all(&AGENTS, Stage::FanoutReview, Step::json(review)),
    );
    let (r, j) = fan_out(&env, &["--agents", "codex,claude,pi", "--seed", "42"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(j["judge"]["mode"], "peers", "{j}");
    // Each candidate's diffstat and whitespace check, as baton's commit and
    // `git diff --check` found them on the candidate's own thread.
    for id in ["c1", "c2", "c3"] {
        let c = candidate(&j, id);
        assert_eq!(
            c["diff_stat"],
            json!({"files": 1, "insertions": 1, "deletions": 0}),
            "{c}"
        );
        let ws = c["tests"]["whitespace_errors"].as_array().unwrap();
        if id == "c1" {
            assert_eq!(ws.len(), 1, "{c}");
            assert!(ws[0].as_str().unwrap().starts_with("answer.txt:1:"), "{c}");
        } else {
            assert!(ws.is_empty(), "{c}");
        }
    }
    let token = |agent: &str| match agent {
        "codex" => "alpha",
        "claude" => "bravo",
        _ => "charlie",
    };
    let reviews = fake.stage(Stage::FanoutReview);
    assert_eq!(reviews.len(), 3, "one judge per agent");
    for c in &reviews {
        let p = c.stdin.to_lowercase();
        for name in [
            "codex",
            "claude",
            "gpt",
            "openai",
            "anthropic",
            "pi coding agent",
        ] {
            assert!(
                !p.contains(name),
                "{} was shown `{name}`:\n{}",
                c.agent,
                c.stdin
            );
        }
        assert!(
            !p.contains(token(&c.agent)),
            "{} was shown its own candidate",
            c.agent
        );
        let others = AGENTS.iter().filter(|a| **a != c.agent);
        for o in others {
            assert!(
                p.contains(token(o)),
                "{} was not shown {o}'s candidate",
                c.agent
            );
        }
    }
    // The label map: no judge ranked its own candidate.
    let who = |id: &str| candidate(&j, id)["agent"].as_str().unwrap().to_string();
    for rv in j["judge"]["reviews"].as_array().unwrap() {
        assert_eq!(rv["outcome"], "ok", "{rv}");
        let labels = &j["judge"]["label_map"][rv["who"].as_str().unwrap()];
        let seen: Vec<String> = labels
            .as_object()
            .unwrap()
            .values()
            .map(|v| who(v.as_str().unwrap()))
            .collect();
        assert_eq!(seen.len(), 2);
        assert!(
            !seen.contains(&rv["agent"].as_str().unwrap().to_string()),
            "{labels}"
        );
    }
    // Borda over the judges: every candidate was ranked by two of them.
    let ranking = j["judge"]["ranking"].as_array().unwrap();
    assert_eq!(ranking.len(), 3);
    assert!(ranking.iter().all(|x| x["judges"] == 2), "{ranking:?}");
    assert_eq!(j["winner"]["id"], ranking[0]["candidate"]);
    // The seed replays the shuffles.
    let first = j["judge"]["label_map"].clone();
    let (env2, fake2) = setup();
    fs::copy(&fake.scenario, &fake2.scenario).unwrap();
    let (_, j2) = fan_out(&env2, &["--agents", "codex,claude,pi", "--seed", "42"]);
    assert_eq!(j2["judge"]["label_map"], first);
}

#[test]
fn attempts_run_one_agent_several_times_each_in_its_own_worktree() {
    let (env, fake) = setup();
    fake.write(&Scenario::new().on("codex", Stage::Implement, write_answer("good\n")));
    let (r, j) = fan_out(&env, &["--agent", "codex", "--attempts", "3"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let cands = j["candidates"].as_array().unwrap();
    assert_eq!(cands.len(), 3);
    assert!(
        cands
            .iter()
            .all(|c| c["agent"] == "codex" && c["eligible"] == true)
    );
    let calls = fake.calls_for("codex", Stage::Implement);
    let cwds: BTreeSet<_> = calls.iter().map(|c| c.cwd.clone()).collect();
    assert_eq!(cwds.len(), 3, "three worktrees");
    // One vendor: no peer judging by default; the winner by size, then time.
    assert_eq!(j["judge"]["mode"], "none");
    assert!(j["winner"]["id"].is_string());
    assert_eq!(branches(&env).len(), 1);
    // --keep-all keeps every branch.
    let (_, j) = fan_out(&env, &["--agent", "codex", "--attempts", "2", "--keep-all"]);
    assert!(
        j["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["kept"] == true)
    );
    assert_eq!(branches(&env).len(), 3);
}

#[test]
fn kill_9_of_a_foreground_fanout_leaves_no_peer_and_the_worktrees_interrupted() {
    let (env, fake) = setup();
    fake.write(&Scenario::new().all(&AGENTS, Stage::Implement, Step::hang()));
    let mut child = baton_cmd(
        &env,
        &[
            "run",
            "--agents",
            "codex,claude,pi",
            "--test-cmd",
            TEST,
            "write the answer",
        ],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    assert!(
        wait_for(Duration::from_secs(30), || fake
            .stage(Stage::Implement)
            .len()
            == 3),
        "the three candidates did not start"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let pids: Vec<i32> = fake.calls().iter().map(|c| c.pid).collect();
    assert!(
        wait_for(Duration::from_secs(10), || pids
            .iter()
            .all(|p| !pid_alive(*p))),
        "a peer outlived baton's kill -9: {pids:?}"
    );
    let r = baton(&env, &["worktree", "list"]);
    let list = r.json();
    let rows = list["worktrees"]
        .as_array()
        .unwrap_or_else(|| panic!("{list}"));
    assert_eq!(rows.len(), 3, "{list}");
    assert!(rows.iter().all(|w| w["state"] == "interrupted"), "{list}");
}

#[test]
fn async_then_cancel_stops_every_candidate() {
    let (env, fake) = setup();
    fake.write(&Scenario::new().all(&AGENTS, Stage::Implement, Step::hang()));
    let (r, j) = fan_out(&env, &["--agents", "codex,claude,pi", "--async"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(j["status"], "running", "{j}");
    let id = j["job_id"].as_str().unwrap().to_string();
    assert!(
        wait_for(Duration::from_secs(30), || fake
            .stage(Stage::Implement)
            .len()
            == 3),
        "the candidates did not start"
    );
    let jobs = baton(&env, &["jobs"]).json();
    let row = jobs["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["job_id"] == id.as_str())
        .unwrap_or_else(|| panic!("{jobs}"))
        .clone();
    assert_eq!(
        (row["agent"].as_str(), row["status"].as_str()),
        (Some("fanout"), Some("running"))
    );
    let s = baton(&env, &["status", &id]).json();
    assert_eq!(s["status"], "running", "{s}");
    // `watch` shows it as a group of its candidates' runs, as a council.
    let w = baton(&env, &["watch", "--once"]).json();
    let g = w["councils"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["council_id"] == id.as_str())
        .unwrap_or_else(|| panic!("{w}"))
        .clone();
    assert_eq!(
        (g["kind"].as_str(), g["status"].as_str()),
        (Some("fanout"), Some("running"))
    );
    let runs: Vec<(&str, &str, &str)> = g["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["who"].as_str().unwrap(),
                r["stage"].as_str().unwrap(),
                r["status"].as_str().unwrap(),
            )
        })
        .collect();
    let mut whos: Vec<&str> = runs.iter().map(|r| r.0).collect();
    whos.sort();
    assert_eq!(whos, ["c1", "c2", "c3"], "{g}");
    assert!(
        runs.iter().all(|r| r.1 == "writing" && r.2 == "running"),
        "{g}"
    );
    let t = baton(&env, &["watch", "--once", "--text"]);
    assert!(t.stdout.contains(&format!("fan-out {id}")), "{}", t.stdout);
    let c = baton(&env, &["cancel", &id]);
    let cj = c.json();
    assert_eq!(cj["status"], "cancelled", "{cj}");
    let pids: Vec<i32> = fake.calls().iter().map(|c| c.pid).collect();
    assert!(
        wait_for(Duration::from_secs(10), || pids
            .iter()
            .all(|p| !pid_alive(*p))),
        "a candidate outlived the cancel: {pids:?}"
    );
    assert!(
        cj["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["status"] == "cancelled")
    );
    let w = baton(&env, &["wait", &id]).json();
    assert_eq!(w["status"], "cancelled");
    // `result` and `logs` answer for a fan-out's id as for a job's.
    let res = baton(&env, &["result", &id]);
    let rj = res.json();
    assert_eq!(
        (rj["kind"].as_str(), rj["status"].as_str()),
        (Some("fanout"), Some("cancelled")),
        "{rj}"
    );
    let logs = baton(&env, &["logs", &id]);
    assert_eq!(logs.code, 0, "{}\n{}", logs.stdout, logs.stderr);
    assert!(!logs.stdout.trim().is_empty());
}

#[test]
fn dry_run_prints_every_argv_worktree_and_judge_call_and_creates_nothing() {
    let (env, fake) = setup();
    let before = fingerprint(&env.work);
    let (r, j) = fan_out(&env, &["--agents", "codex,claude:opus", "--dry-run"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(j["dry_run"], true);
    let cands = j["candidates"].as_array().unwrap();
    assert_eq!(cands.len(), 2);
    let id = j["fanout_id"].as_str().unwrap();
    for (k, c) in cands.iter().enumerate() {
        assert_eq!(c["worktree"]["branch"], format!("baton/{id}-{}", k + 1));
        assert!(c["argv"].as_array().unwrap().len() > 1);
    }
    assert_eq!(cands[1]["model"], "opus");
    let calls = j["judge"]["calls"].as_array().unwrap();
    assert_eq!(j["judge"]["mode"], "peers");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["ranks"], json!(["c2"]));
    assert!(fake.calls().is_empty());
    assert!(!env.work.join(".baton").exists());
    assert_eq!(fingerprint(&env.work), before);
}

#[test]
fn what_a_fanout_refuses_before_anything_exists() {
    let (env, fake) = setup();
    for (args, says) in [
        (
            &["run", "--agents", "codex,claude", "x"][..],
            "needs --test-cmd",
        ),
        (
            &[
                "run",
                "--agents",
                "codex,claude",
                "--read-only",
                "--test-cmd",
                "true",
                "x",
            ],
            "--test-cmd is for a fan-out that writes",
        ),
        (
            &[
                "run",
                "--agents",
                "codex,claude",
                "--test-cmd",
                "true",
                "--pick",
                "first-green",
                "--judge",
                "claude",
                "x",
            ],
            "--judge has no say",
        ),
        (
            &[
                "run",
                "--agents",
                "codex",
                "--test-cmd",
                "true",
                "--pick",
                "fast",
                "x",
            ],
            "--pick `fast`",
        ),
        (
            &["run", "--agent", "codex", "--until-green", "2", "x"],
            "an option of a fan-out",
        ),
        (
            &["run", "--agent", "codex", "--test-cmd", "true", "x"],
            "an option of worktree mode",
        ),
        (
            &[
                "run",
                "--agents",
                "codex",
                "--test-cmd",
                "true",
                "--judge",
                "nobody",
                "x",
            ],
            "--judge `nobody`",
        ),
    ] {
        let r = baton(&env, args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stdout);
        let msg = r.json()["error"]["message"].as_str().unwrap().to_string();
        assert!(msg.contains(says), "{args:?}: {msg}");
    }
    assert!(fake.calls().is_empty());
    assert!(!env.work.join(".baton").exists());
}

#[test]
fn a_read_only_fanout_answers_side_by_side_in_place() {
    let (env, fake) = setup();
    fake.write(
        &Scenario::new()
            .on("codex", Stage::Implement, Step::say("codex thinks A"))
            .on("claude", Stage::Implement, Step::say("claude thinks B")),
    );
    let before = fingerprint(&env.work);
    let r = baton(
        &env,
        &["run", "--agents", "codex,claude", "--read-only", "which?"],
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    let j = r.json();
    assert_eq!(j["mode"], "read-only");
    assert_eq!(j["winner"], Value::Null);
    assert_eq!(candidate(&j, "c1")["message"], "codex thinks A");
    assert_eq!(candidate(&j, "c2")["message"], "claude thinks B");
    for c in fake.calls() {
        assert_eq!(c.cwd, env.work, "in place");
    }
    assert_eq!(fingerprint(&env.work), before);
    let t = baton(
        &env,
        &[
            "run",
            "--agents",
            "codex,claude",
            "--read-only",
            "--text",
            "which?",
        ],
    );
    assert!(
        t.stdout.contains("--- c1 (codex) ---\ncodex thinks A"),
        "{}",
        t.stdout
    );
}

#[test]
fn a_token_budget_holds_back_the_repair_round_and_says_so() {
    let (env, fake) = setup();
    fake.write(
        &Scenario::new()
            .on(
                "codex",
                Stage::Implement,
                write_answer("bad\n").usage(900, 100),
            )
            .on("codex", Stage::Implement, write_answer("good\n")),
    );
    let (r, j) = fan_out(
        &env,
        &[
            "--agents",
            "codex",
            "--until-green",
            "2",
            "--budget-tokens",
            "1500",
        ],
    );
    assert_eq!(r.code, 5, "{}", r.stdout);
    assert_eq!(fake.calls_for("codex", Stage::Implement).len(), 1);
    let why = candidate(&j, "c1")["excluded_reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        why.contains("repair round 1 not started: --budget-tokens 1500"),
        "{why}"
    );
    assert!(
        j["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("--budget-tokens")),
        "{j}"
    );
}

#[test]
fn the_text_table_marks_the_winner() {
    let (env, fake) = setup();
    fake.write(
        &Scenario::new()
            .on("codex", Stage::Implement, write_answer("good\n"))
            .on("claude", Stage::Implement, write_answer("bad\n")),
    );
    let r = baton(
        &env,
        &[
            "run",
            "--agents",
            "codex,claude",
            "--judge",
            "none",
            "--test-cmd",
            TEST,
            "--text",
            "x",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines[1].contains("candidate") && lines[1].contains("tokens"),
        "{}",
        r.stdout
    );
    assert!(
        lines[2].starts_with("*") && lines[2].contains("c1") && lines[2].contains("passed"),
        "{}",
        r.stdout
    );
    assert!(lines[3].contains("FAILED (3)"), "{}", r.stdout);
}

/// Issue 29 §3: a candidate's tests run in a fresh checkout of its commit,
/// so an ignored file it left beside it (a stale cache) cannot make it
/// green; with no green candidate the fan-out exits 5 (`CHECK_FAILED`),
/// names no merge, and `--text` shows what failed instead.
#[test]
fn an_ignored_file_cannot_make_a_candidate_green_and_none_green_exits_5() {
    let (env, fake) = setup();
    fake.write(&Scenario::new().all(
        &["codex", "claude"],
        Stage::Implement,
        // `*.log` is ignored: never committed.
        write_answer("bad\n").edit("cache.log", "good\n"),
    ));
    let test = "cat cache.log answer.txt 2>/dev/null | grep -q good || \
                { echo \"MARKER: answer.txt says $(cat answer.txt)\"; exit 3; }";
    let r = baton(
        &env,
        &[
            "run",
            "--agents",
            "codex,claude",
            "--judge",
            "none",
            "--test-cmd",
            test,
            "x",
        ],
    );
    let j = r.json();
    assert_eq!(j["winner"], Value::Null, "{j}");
    assert_eq!(r.code, 5, "{}", r.stdout);
    assert_eq!(j["status"], "failed");
    assert_eq!(j["error"]["kind"], "no_eligible_candidate");
    assert_eq!(j["merge_hint"], Value::Null);
    for id in ["c1", "c2"] {
        let c = candidate(&j, id);
        assert_eq!(c["tests"]["passed"], false, "{c}");
        // The commit tested is the one its branch held.
        let sha = c["tests"]["commit"].as_str().unwrap();
        assert_eq!(
            git(&env.work, &["show", &format!("{sha}:answer.txt")]),
            "bad\n"
        );
    }
    // For people: each candidate's failing tail, no merge line.
    fake.write(&Scenario::new().all(
        &["codex", "claude"],
        Stage::Implement,
        write_answer("bad\n"),
    ));
    let r = baton(
        &env,
        &[
            "run",
            "--agents",
            "codex,claude",
            "--judge",
            "none",
            "--test-cmd",
            TEST,
            "--text",
            "x",
        ],
    );
    assert_eq!(r.code, 5, "{}", r.stdout);
    assert!(!r.stdout.contains("merge:"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("c2 test output (end):\n  | MARKER: answer.txt says bad"),
        "{}",
        r.stdout
    );
}

/// `BATON_MAX_ACCESS` (set by `baton mcp`) holds every candidate: each is
/// planned as an ordinary run, so a fan-out cannot ask for more than one run
/// may, and a refusal comes before any worktree or peer exists.
#[test]
fn every_candidate_is_held_to_the_access_cap() {
    let (env, fake) = setup();
    fake.write(
        &Scenario::new()
            .on("codex", Stage::Implement, Step::say("codex thinks A"))
            .on("claude", Stage::Implement, Step::say("claude thinks B")),
    );
    let capped = |cap: &str, args: &[&str]| {
        Run::from(
            baton_cmd(&env, args)
                .env("BATON_MAX_ACCESS", cap)
                .output()
                .unwrap(),
        )
    };
    for (cap, args) in [
        (
            "read-only",
            &["run", "--agents", "codex,claude", "--test-cmd", "true", "x"][..],
        ),
        (
            "workspace",
            &[
                "run",
                "--agents",
                "codex,claude",
                "--full-access",
                "--test-cmd",
                "true",
                "x",
            ],
        ),
        (
            "workspace",
            &[
                "run",
                "--agent",
                "codex",
                "--attempts",
                "2",
                "--access",
                "full",
                "--test-cmd",
                "true",
                "--async",
                "x",
            ],
        ),
    ] {
        let r = capped(cap, args);
        assert_eq!(r.code, 2, "{cap} {args:?}: {}\n{}", r.stdout, r.stderr);
        assert_eq!(r.json()["error"]["kind"], "access_capped", "{args:?}");
    }
    assert!(fake.calls().is_empty());
    assert!(!env.work.join(".baton").exists());
    assert!(branches(&env).is_empty());
    // Under the cap, the same fan-out runs.
    let r = capped(
        "read-only",
        &["run", "--agents", "codex,claude", "--read-only", "which?"],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.json()["candidates"].as_array().unwrap().len(), 2);
}

/// Issue 29 §7: two candidates, each ranked by the other's judge, both
/// score 1.0 with diffs of one size. The summary said "ranked first by 2
/// judge(s)" and the winner was whichever finished first. Now the summary
/// says it was a tie and what broke it, and the same seed picks the same
/// winner whichever candidate is slower.
#[test]
fn a_tie_is_said_and_broken_by_the_seed_not_by_finish_time() {
    let review = json!({"candidates": [
        {"label": "A", "verdict": "accept", "summary": "fine", "findings": []}],
        "ranking": ["A"]});
    let winner = |slow: &str| {
        let (env, fake) = setup();
        let step = |agent: &str, text: &str| {
            let s = write_answer(text);
            if agent == slow { s.delay_ms(700) } else { s }
        };
        fake.write(
            &Scenario::new()
                .on("codex", Stage::Implement, step("codex", "good one\n"))
                .on("claude", Stage::Implement, step("claude", "good two\n"))
                .all(
                    &["codex", "claude"],
                    Stage::FanoutReview,
                    Step::json(review.clone()),
                ),
        );
        let (r, j) = fan_out(&env, &["--agents", "codex,claude", "--seed", "11"]);
        assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
        let ranking = j["judge"]["ranking"].as_array().unwrap().clone();
        assert!(
            ranking
                .iter()
                .all(|x| x["score"] == 1.0 && x["judges"] == 1),
            "{j}"
        );
        let w = j["winner"]["id"].as_str().unwrap().to_string();
        let other = if w == "c1" { "c2" } else { "c1" };
        let said = format!(
            "wins, tie with {other} on the judges' score (1.00), broken by a draw seeded with the \
             fan-out's seed (11)"
        );
        let summary = j["summary"].as_str().unwrap();
        assert!(summary.contains(&said), "{summary}");
        assert!(!summary.contains("ranked first by"), "{summary}");
        assert_eq!(
            j["judge"]["note"].as_str().unwrap(),
            &said["wins, ".len()..],
            "{j}"
        );
        w
    };
    assert_eq!(winner("codex"), winner("claude"));
}

/// Issue 31: a candidate moved a sibling's branch after baton had tested
/// it (exit 0, "c1 wins", `git merge baton/<id>-1`, and the branch held
/// code the winner never wrote). Here c2's peer, unsandboxed, waits for
/// c1's commit to be imported and then writes c1's ref file in the user's
/// repository: c1 is not eligible (`branch_moved`), and nothing names c1's
/// branch; the winner is named by the commit baton tested.
#[test]
fn a_candidate_that_moves_a_sibling_s_branch_does_not_make_it_win() {
    let (env, fake) = setup();
    let base = git(&env.work, &["rev-parse", "HEAD"]).trim().to_string();
    let attack = move_sibling_branch(&base);
    fake.write(
        &Scenario::new()
            .on("codex", Stage::Implement, write_answer("good\n"))
            .on(
                "claude",
                Stage::Implement,
                write_answer("good\n").sh(&attack),
            ),
    );
    let (r, j) = fan_out(&env, &["--agents", "codex,claude", "--judge", "none"]);
    let planted = fs::read_to_string(env.fake_dir.join("planted")).unwrap_or_default();
    assert!(!planted.trim().is_empty(), "the attack never ran: {j}");
    let c1 = candidate(&j, "c1");
    assert_eq!(c1["eligible"], false, "{j}");
    assert_eq!(c1["branch_moved"], true, "{c1}");
    assert!(
        c1["excluded_reason"]
            .as_str()
            .unwrap()
            .contains("branch_moved"),
        "{c1}"
    );
    assert_ne!(c1["commit"].as_str(), Some(planted.trim()));
    assert!(j["warnings"].to_string().contains("branch_moved"), "{j}");
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(j["winner"]["id"], "c2", "{j}");
    let c2 = candidate(&j, "c2");
    let commit = c2["commit"].as_str().unwrap();
    assert_eq!(j["winner"]["commit"], commit);
    assert_eq!(c2["tests"]["commit"], commit);
    assert!(
        j["merge_hint"]
            .as_str()
            .unwrap()
            .contains(&format!("git merge {commit}")),
        "{j}"
    );
}

/// A peer's shell script, run as candidate c2, that waits until c1's
/// branch moved off `base` (baton imported c1's commit) and then writes
/// c1's ref file in the user's repository to a commit of its own making.
pub(crate) fn move_sibling_branch(base: &str) -> String {
    // From `<top>/.baton/worktrees/<fanout>-2`: the sibling is `<fanout>-1`.
    format!(
        "U=\"$(cd ../../.. && pwd)\"; ME=\"$(basename \"$PWD\")\"; SIB=\"${{ME%-2}}-1\"\n\
         i=0; while [ $i -lt 400 ]; do\n\
           T=$(git -C \"$U\" rev-parse -q --verify \"refs/heads/baton/$SIB\")\n\
           [ -n \"$T\" ] && [ \"$T\" != {base} ] && break; sleep 0.05; i=$((i+1)); done\n\
         P=$(git -C \"$U\" -c user.name=x -c user.email=x@x commit-tree -p \"$T\" -m planted \"$T^{{tree}}\")\n\
         printf '%s\\n' \"$P\" > \"$U/.git/refs/heads/baton/$SIB\"\n\
         printf '%s\\n' \"$P\" > \"$FAKE_DIR/planted\""
    )
}
