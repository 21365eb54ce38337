//! A brought ACP agent (`[agents.NAME] transport = "acp"` in the user file)
//! through every code path besides `run`: `ask`, `run --async` + `wait` +
//! `continue`, `attach`, and a fan-out candidate. The agent is the fake ACP
//! agent (`support/fake_acp.py`) replaying recorded copilot exchanges under
//! the program name `my-acp`.

use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use crate::support::{Env, fixture};

/// Brings `mybot` (`my-acp`), whose invocations replay `recordings` in
/// turn (the last one again once they run out), each recording what baton
/// sent into `$FAKE_DIR/sent-<n>.jsonl`.
fn brought(env: &Env, recordings: &[&Path]) {
    let fake = crate::support::acp::fake_acp(&env.fake_dir);
    let mut pick = String::from(
        "n=$(cat \"$FAKE_DIR/n\" 2>/dev/null || echo 0)\nn=$((n + 1))\necho $n > \"$FAKE_DIR/n\"\nrec=''\n",
    );
    for (i, r) in recordings.iter().enumerate() {
        let test = if i + 1 == recordings.len() {
            "true".to_string()
        } else {
            format!("[ $n -le {} ]", i + 1)
        };
        pick.push_str(&format!(
            "if [ -z \"$rec\" ] && {test}; then rec='{}'; fi\n",
            r.display()
        ));
    }
    pick.push_str(&format!(
        "printf '%s\\n' \"$PWD\" > \"$FAKE_DIR/cwd-$n\"\nexec {fake} \"$rec\" --record \"$FAKE_DIR/sent-$n.jsonl\""
    ));
    env.fake("my-acp", &pick);
    fs::write(
        env.tmp.path().join("user-config.toml"),
        "[agents.mybot]\ntransport = \"acp\"\ncommand = [\"my-acp\"]\n",
    )
    .unwrap();
}

fn sent(env: &Env, n: usize) -> Vec<Value> {
    fs::read_to_string(env.fake_dir.join(format!("sent-{n}.jsonl")))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn advice() -> Value {
    json!({
        "assessment": "The test shares a temp dir with its neighbour.",
        "recommendation": "Give each test its own tempdir.",
        "alternatives": [],
        "risks": ["other tests may share state"],
        "verification_steps": ["run the suite 50 times"],
        "missing_context": [],
        "proposed_code": null,
        "confidence": "high"
    })
}

/// copilot's recorded rejected edit, its final words replaced by `text`
/// (what an adviser that tried to edit and then answered would send).
fn write_rejected_then(env: &Env, text: &str) -> std::path::PathBuf {
    let rec = fs::read_to_string(fixture("acp/copilot/write-rejected.acp")).unwrap();
    let said = serde_json::to_string("Info: Operation cancelled by user").unwrap();
    assert!(rec.contains(&said));
    let out = env.tmp.path().join("ask.acp");
    fs::write(
        &out,
        rec.replace(&said, &serde_json::to_string(text).unwrap()),
    )
    .unwrap();
    out
}

#[test]
fn ask_a_brought_agent_validates_its_advice_and_rejects_its_edit() {
    let env = Env::new();
    env.git_init();
    let rec = write_rejected_then(&env, &advice().to_string());
    brought(&env, &[&rec]);
    let r = env.run(&["ask", "--agent", "mybot", "why", "is", "it", "flaky?"]);
    let j = r.json();
    assert_eq!(
        (r.code, j["status"].as_str()),
        (0, Some("success")),
        "{j}\n{}",
        r.stderr
    );
    assert_eq!(j["agent"], "mybot");
    assert_eq!(j["access"], "read-only");
    assert_eq!(j["advice"], advice(), "{j}");
    // The edit it asked for was refused: read-only is enforced by the policy.
    let answer = sent(&env, 1)
        .into_iter()
        .find(|m| m.get("result").is_some())
        .expect("a permission answer");
    assert_eq!(answer["result"]["outcome"]["optionId"], "reject_once");
    assert!(!env.work.join("out.txt").exists());
    let cwd = fs::read_to_string(env.fake_dir.join("cwd-1")).unwrap();
    assert!(
        cwd.contains("baton-ask-"),
        "ask runs in its own packet dir: {cwd}"
    );
}

#[test]
fn a_brought_agents_job_is_continued_by_loading_its_session() {
    let env = Env::new();
    env.git_init();
    brought(
        &env,
        &[
            &fixture("acp/copilot/plain.acp"),
            &fixture("acp/copilot/load.acp"),
        ],
    );
    let r = env.run(&[
        "run",
        "--async",
        "--agent",
        "mybot",
        "--access",
        "read-only",
        "hello",
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let first = r.json()["job_id"].as_str().unwrap().to_string();
    let w = env.run(&["wait", &first]);
    let sid = "af4c8f75-a42b-46f5-a391-0dffc6e24872";
    assert_eq!(w.json()["session"], sid, "{}", w.stdout);

    let c = env.run(&["continue", &first, "and", "then"]);
    assert_eq!(c.code, 0, "{}\n{}", c.stdout, c.stderr);
    let second = c.json()["job_id"].as_str().unwrap().to_string();
    let w = env.run(&["wait", &second]);
    let j = w.json();
    assert_eq!(j["status"], "success", "{j}\n{}", w.stderr);
    assert_eq!(j["agent"], "mybot");
    assert_eq!(j["session"], sid);
    assert_eq!(j["access"], "read-only", "the same options: {j}");
    // The second turn loaded the first one's session over ACP.
    let s = sent(&env, 2);
    assert_eq!(s[1]["method"], "session/load", "{s:?}");
    assert_eq!(s[1]["params"]["sessionId"], sid);
    assert!(s[2]["params"]["prompt"].to_string().contains("and then"));
}

#[test]
fn attach_to_a_brought_agents_job_says_it_cannot_open_its_interface() {
    let env = Env::new();
    env.git_init();
    brought(&env, &[&fixture("acp/copilot/plain.acp")]);
    let r = env.run(&[
        "run",
        "--async",
        "--agent",
        "mybot",
        "--access",
        "read-only",
        "hello",
    ]);
    let id = r.json()["job_id"].as_str().unwrap().to_string();
    assert_eq!(env.run(&["wait", &id]).code, 0);
    for args in [vec!["attach", &id], vec!["attach", &id, "--dry-run"]] {
        let r = env.run(&args);
        assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
        let e = &r.json()["error"];
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .contains("does not know how to open mybot's own interface"),
            "{e}"
        );
        let hint = e["hint"].as_str().unwrap();
        assert!(
            hint.contains("af4c8f75-a42b-46f5-a391-0dffc6e24872"),
            "{hint}"
        );
        assert!(hint.contains("baton continue"), "{hint}");
    }
    // Nothing was started for it: one invocation, the run's.
    assert_eq!(
        fs::read_to_string(env.fake_dir.join("n")).unwrap().trim(),
        "1"
    );
}

#[test]
fn a_brought_agent_is_a_fanout_candidate_in_its_own_worktree() {
    let env = Env::new();
    env.git_init();
    // mybot writes out.txt (copilot's recorded allowed edit); kilo answers
    // without editing.
    brought(&env, &[&fixture("acp/copilot/write-allowed.acp")]);
    let fake = crate::support::acp::fake_acp(&env.fake_dir);
    env.fake(
        "kilo",
        &format!(
            "exec {fake} '{}'",
            fixture("acp/copilot/plain.acp").display()
        ),
    );
    let r = env.run(&[
        "run",
        "--agents",
        "mybot,kilo",
        "--judge",
        "none",
        "--test-cmd",
        "grep -q x out.txt",
        "--timeout",
        "60s",
        "write it",
    ]);
    let j = r.json();
    assert_eq!(
        (r.code, j["status"].as_str()),
        (0, Some("success")),
        "{j}\n{}",
        r.stderr
    );
    assert_eq!(j["kind"], "fanout");
    assert_eq!(j["winner"]["agent"], "mybot", "{j}");
    let cands = j["candidates"].as_array().unwrap();
    let mine = cands.iter().find(|c| c["agent"] == "mybot").unwrap();
    assert_eq!(mine["changed_files"], json!(["out.txt"]), "{mine}");
    // The edit is in its worktree (the policy allowed it there), not in the
    // checkout.
    assert!(!env.work.join("out.txt").exists());
    let wt = Path::new(mine["worktree"].as_str().unwrap())
        .canonicalize()
        .unwrap();
    assert_eq!(fs::read_to_string(wt.join("out.txt")).unwrap(), "x\n");
    let new = sent(&env, 1)
        .into_iter()
        .find(|m| m["method"] == "session/new")
        .expect("session/new");
    assert_eq!(Path::new(new["params"]["cwd"].as_str().unwrap()), wt);
}

#[test]
fn a_brought_agent_is_accepted_as_a_council_member() {
    let env = Env::new();
    env.git_init();
    brought(&env, &[&fixture("acp/copilot/plain.acp")]);
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    let r = env.run(&[
        "council",
        "discuss",
        "--members",
        "mybot,codex",
        "--chair",
        "codex",
        "--dry-run",
        "fix the flaky test",
    ]);
    let j = r.json();
    assert_eq!(r.code, 0, "{j}\n{}", r.stderr);
    let m = j["members"].as_array().unwrap();
    assert_eq!(m[0]["agent"], "mybot", "{j}");
    assert!(m[0]["argv"][0].as_str().unwrap().ends_with("my-acp"), "{j}");
    assert_eq!(j["calls"]["proposing"], 2, "{j}");
    // A dry run starts nobody.
    assert!(!env.fake_dir.join("n").exists());
}
