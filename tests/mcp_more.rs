//! `baton mcp`'s council tools (progress with the stage and the members
//! while they work; every council tool's output checked against its output
//! schema) and the tools whose outputs gained a published schema: `ask`,
//! `doctor`, `job_cancel` (`Client::call` checks each result).

use std::fs;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::ask::{Advisers, claude_reply, good_advice};
use crate::council::{AGENTS, critique, markers, plan, proposal, review, setup};
use crate::mcp::Client;
use crate::support::Env;
use crate::support::council::{Scenario, Stage, Step};

const COUNCIL: Duration = Duration::from_secs(90);

/// Issue 24: the council tools stream `notifications/progress` as `run`
/// does, with the stage and the members ("council: critiquing — 3 peers ·
/// codex: …", tokens so far), at most a few a second; then plan, approve
/// and execute, each result valid for its output schema.
#[test]
fn council_tools_stream_each_stage_and_member_as_progress() {
    let (env, fake) = setup();
    let mut j = slow_discussion().to_json();
    for a in AGENTS {
        j["agents"][a]["implement"] =
            json!([{"edits": [{"path": "a.txt", "content": "one\ntwo\nlocked\n"}]}]);
        j["agents"][a]["review"] = json!([{"json": review("approve", json!([]))}]);
    }
    fake.write_json(&j);
    // The plan names a test command (`true`): this server runs it.
    let mut c = Client::spawn(crate::worktree::baton_cmd(
        &env,
        &["mcp", "--allow-test-cmd"],
    ));
    c.initialize();
    let t0 = Instant::now();
    c.send(
        &json!({"jsonrpc": "2.0", "id": 70, "method": "tools/call", "params": {
        "name": "council_discuss",
        "arguments": {"task": "q?", "members": ["codex", "claude", "pi"]},
        "_meta": {"progressToken": "council-1"}}}),
    );
    let r = c.response(70, COUNCIL).expect("council_discuss answers");
    let took = t0.elapsed();
    assert_eq!(r["result"]["structuredContent"]["status"], "done", "{r}");
    c.check_output("council_discuss", &r["result"]);
    let progress = c.progress(&json!("council-1"));
    let said: Vec<&str> = progress
        .iter()
        .map(|n| n["message"].as_str().unwrap())
        .collect();
    let stage = |s: &str| {
        said.iter()
            .any(|m| m.starts_with(&format!("council: {s} — ")))
    };
    assert!(stage("proposing"), "{said:?}");
    assert!(stage("critiquing"), "{said:?}");
    // The members by name, and the tokens of the stages before.
    assert!(
        said.iter()
            .any(|m| AGENTS.iter().any(|a| m.contains(&format!("{a}: ")))),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|m| m.starts_with("council: critiquing") && m.contains(" tokens")),
        "{said:?}"
    );
    // Values only grow, and at most four a second (plus the first).
    let values: Vec<f64> = progress
        .iter()
        .map(|n| n["progress"].as_f64().unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    assert!(
        (values.len() as f64) <= took.as_secs_f64() * 4.0 + 1.0,
        "{} notifications in {took:?}",
        values.len()
    );

    // plan → approve → execute: every result checked by `call`.
    let p = c.call(
        "council_plan",
        json!({"task": "lock it", "members": ["codex", "claude", "pi"]}),
    );
    let p = &p["structuredContent"];
    assert_eq!(p["status"], "awaiting_approval", "{p}");
    let id = p["council_id"].as_str().unwrap().to_string();
    let sha = p["plan"]["sha256"].as_str().unwrap().to_string();
    let a = c.call("council_approve", json!({"id": id, "plan_sha256": sha}));
    assert_eq!(a["isError"], false, "{a}");
    let e = c.call("council_execute", json!({"id": id}));
    assert!(e["structuredContent"]["worktree"].is_object(), "{e}");
    // A council's id through the job tools.
    let st = c.call("job_status", json!({"id": id}));
    assert_eq!(st["structuredContent"]["council_id"], json!(id), "{st}");
    let res = c.call("job_result", json!({"id": id}));
    assert_eq!(res["structuredContent"]["council_id"], json!(id), "{res}");
    assert!(c.close().success());
}

/// The members' answers of a discussion, each slow enough that the live
/// status (or a follower) sees every stage's members work.
fn slow_discussion() -> Scenario {
    let mut s = Scenario::new();
    for (a, m) in markers() {
        s = s
            .on(
                a,
                Stage::Proposal,
                Step::json(proposal(m)).delay_ms(700).usage(1000, 100),
            )
            .on(a, Stage::Critique, Step::json(critique()).delay_ms(700))
            .on(a, Stage::Plan, Step::json(plan()));
    }
    s
}

/// `job_wait` on a council started in the background: the server follows
/// the council's records and its members' logs (the waiting child only
/// blocks), so the host sees the same stage-and-members line as while
/// `council_discuss` itself runs; then the council's result.
#[test]
fn job_wait_on_a_council_streams_its_stages() {
    let (env, fake) = setup();
    fake.write_json(&slow_discussion().to_json());
    let mut c = Client::spawn(crate::worktree::baton_cmd(&env, &["mcp"]));
    c.initialize();
    let started = c.call(
        "council_discuss",
        json!({"task": "q?", "members": ["codex", "claude", "pi"], "async": true}),
    );
    let id = started["structuredContent"]["council_id"]
        .as_str()
        .unwrap_or_else(|| panic!("a council id: {started}"))
        .to_string();
    c.send(
        &json!({"jsonrpc": "2.0", "id": 71, "method": "tools/call", "params": {
        "name": "job_wait", "arguments": {"id": id, "timeout": "90s"},
        "_meta": {"progressToken": "wait-1"}}}),
    );
    let w = c.response(71, COUNCIL).expect("job_wait answers");
    assert_eq!(
        w["result"]["structuredContent"]["council_id"],
        json!(id),
        "{w}"
    );
    assert_eq!(w["result"]["structuredContent"]["status"], "done", "{w}");
    c.check_output("job_wait", &w["result"]);
    let said = c.progress_messages(&json!("wait-1"));
    assert!(
        said.iter().any(|m| m.starts_with("council: critiquing — ")),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|m| AGENTS.iter().any(|a| m.contains(&format!("{a}: ")))),
        "{said:?}"
    );
    assert!(said.iter().any(|m| m.contains(" tokens")), "{said:?}");
    assert!(c.close().success());
}

/// `ask` (one adviser, then several side by side), `doctor` and
/// `job_cancel`: structured content valid for each tool's output schema.
#[test]
fn ask_doctor_and_job_cancel_answer_in_their_published_schemas() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("claude", "").install("codex", "");
    a.reply(
        "claude",
        1,
        &claude_reply(Some("c-1"), "x", Some(good_advice())),
        0,
    );
    a.reply(
        "claude",
        2,
        &claude_reply(Some("c-2"), "x", Some(good_advice())),
        0,
    );
    fs::write(env.work.join("notes.md"), "one\n").unwrap();
    let mut c = Client::start(&env, &[]);
    c.initialize();
    let one = c.call("ask", json!({"question": "q", "agent": "claude"}));
    assert_eq!(one["structuredContent"]["advice"], good_advice(), "{one}");
    let several = c.call("ask", json!({"question": "q", "agents": ["claude", "pi"]}));
    assert!(
        several["structuredContent"]["results"].is_array(),
        "{several}"
    );
    let d = c.call("doctor", json!({"agent": "claude"}));
    assert!(d["structuredContent"]["checks"].is_array(), "{d}");

    // A job cancelled while its peer works.
    env.fake(
        "codex",
        "printf '%s\\n' '{\"type\":\"thread.started\",\"thread_id\":\"t-9\"}'\nexec sleep 30",
    );
    let started = c.call("run", json!({"task": "t", "agent": "codex", "async": true}));
    let id = started["structuredContent"]["job_id"]
        .as_str()
        .unwrap()
        .to_string();
    let x = c.call("job_cancel", json!({"id": id}));
    assert_eq!(x["structuredContent"]["status"], "cancelled", "{x}");
    assert!(c.close().success());
}
