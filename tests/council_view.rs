//! A council seen as a group of its members' runs: `watch --once` (JSON and
//! text) and `serve` (the fleet, a run's transcript, cancel), on the council fake.

use std::fs;
use std::time::Duration;

use serde_json::{Value, json};

use crate::council::{AGENTS, council, good_scenario, setup};
use crate::serve::{Server, bearer};
use crate::support::council::Stage;
use crate::support::wait_for;
use crate::support::{Env, Run};

const LONG: Duration = Duration::from_secs(60);

/// The council `id` in `watch --once --json`, and the whole snapshot.
fn watched(env: &Env, id: &str) -> (Option<Value>, Value) {
    let w: Run = env.run(&["watch", "--once", "--json"]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    let snap = w.json();
    let c = snap["councils"]
        .as_array()
        .unwrap_or_else(|| panic!("no councils array: {snap}"))
        .iter()
        .find(|c| c["council_id"] == id)
        .cloned();
    (c, snap)
}

fn runs_of<'a>(c: &'a Value, stage: &str) -> Vec<&'a Value> {
    c["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["stage"] == stage)
        .collect()
}

#[test]
fn watch_once_shows_a_council_as_its_member_runs_running_then_ended() {
    let (env, fake) = setup();
    let mut j = good_scenario().to_json();
    for a in AGENTS {
        // Held until the test has seen them run (the gate file).
        j["agents"][a]["proposal"][0]["gate"] = json!("proposals");
        j["agents"][a]["proposal"][0]["progress"] = json!("rg -n cache src");
    }
    fake.write_json(&j);
    let r = council(
        &env,
        &[
            "plan",
            "--async",
            "--members",
            "codex,claude,pi",
            "lock the cache",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let id = r.json()["council_id"].as_str().unwrap().to_string();

    // While the members propose: the council runs, one running run each.
    let mut seen = Value::Null;
    let proposing = wait_for(LONG, || {
        let (c, _) = watched(&env, &id);
        let Some(c) = c else { return false };
        seen = c.clone();
        let running = runs_of(&c, "proposing")
            .iter()
            .filter(|r| r["status"] == "running")
            .count();
        let codex_doing = runs_of(&c, "proposing")
            .iter()
            .any(|r| r["agent"] == "codex" && r["doing"] == "$ rg -n cache src");
        running == 3 && codex_doing
    });
    assert!(proposing, "never three running proposals: {seen:#}");
    assert_eq!(seen["status"], "running", "{seen:#}");
    assert_eq!(seen["stage"], "proposing");
    assert_eq!(seen["kind"], "plan");
    let mut agents: Vec<&str> = runs_of(&seen, "proposing")
        .iter()
        .map(|r| r["agent"].as_str().unwrap())
        .collect();
    agents.sort();
    assert_eq!(agents, ["claude", "codex", "pi"]);
    for r in runs_of(&seen, "proposing") {
        assert_eq!(r["role"], "member");
        assert!(r["elapsed_ms"].as_u64().is_some());
        assert!(
            r["doing"].is_string(),
            "a running run says what it does: {r}"
        );
    }
    assert!(
        seen["members"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["agent"] == "codex" && m["role"] == "member"),
        "{seen:#}"
    );
    // The council is not shown twice: the job list holds no row for it.
    let (_, snap) = watched(&env, &id);
    assert!(
        !snap["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|j| j["job_id"] == id.as_str()),
        "{snap}"
    );
    let text = env.run(&["watch", "--once", "--text"]);
    assert!(
        text.stdout
            .contains(&format!("council {id}  plan  running")),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains("  proposing-m0"), "{}", text.stdout);
    fs::write(env.fake_dir.join("proposals"), "").unwrap();

    // Once it waits for approval: every run ended ok, with its usage.
    assert!(
        wait_for(LONG, || watched(&env, &id)
            .0
            .is_some_and(|c| c["status"] == "awaiting_approval")),
        "the council never reached approval: {:#}",
        watched(&env, &id).0.unwrap_or_default()
    );
    let (c, _) = watched(&env, &id);
    let c = c.unwrap();
    for stage in ["proposing", "critiquing", "synthesizing"] {
        assert!(!runs_of(&c, stage).is_empty(), "no {stage} run: {c:#}");
    }
    for r in c["runs"].as_array().unwrap() {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["usage"]["input_tokens"], 100, "{r}");
        assert_eq!(r["doing"], Value::Null, "{r}");
    }
    assert_eq!(runs_of(&c, "synthesizing")[0]["role"], "chair");
    assert!(c["usage"]["input_tokens"].as_u64().unwrap() >= 700, "{c:#}");
    // One record per member call the fake saw.
    assert_eq!(
        c["runs"].as_array().unwrap().len(),
        fake.calls().len(),
        "{c:#}"
    );
}

#[test]
fn serve_lists_the_council_streams_a_run_and_cancels_it() {
    let (env, fake) = setup();
    let mut j = good_scenario().to_json();
    j["agents"]["codex"]["proposal"] = json!([{"hang": true, "progress": "rg -n cache src"}]);
    fake.write_json(&j);
    let r = council(
        &env,
        &["discuss", "--async", "--members", "codex,claude,pi", "q?"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let id = r.json()["council_id"].as_str().unwrap().to_string();
    assert!(
        wait_for(LONG, || !fake
            .calls_for("codex", Stage::Proposal)
            .is_empty()),
        "codex never started"
    );
    let srv = Server::start(&env);
    let session = srv.login();

    // The fleet carries the council, first event and JSON route alike.
    let mut s = srv.stream("/api/events", &session);
    let quoted = format!(r#""council_id":"{id}""#);
    let t = s.until("the council in the fleet", |t| t.contains(&quoted));
    assert!(t.contains(r#""councils":["#), "{t}");
    // Its clock is read when the event is sent, not when the council last
    // changed: a page opened later sees the time it has been running.
    let elapsed = |t: &str| -> (u64, u64, u64) {
        let d = t.split("event: snapshot\ndata: ").nth(1).unwrap();
        let v: Value = serde_json::from_str(d.split('\n').next().unwrap()).unwrap();
        let c = v["councils"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["council_id"] == id.as_str())
            .unwrap_or_else(|| panic!("{v}"))
            .clone();
        let n = |x: &Value| x.as_u64().unwrap();
        (n(&v["now_ms"]), n(&c["created_ms"]), n(&c["elapsed_ms"]))
    };
    let (now1, created, e1) = elapsed(&t);
    assert_eq!(e1, now1 - created, "{t}");
    // Wall time has to pass: that is what is tested (a second is far
    // above the clock's millisecond; the equality below is the proof).
    std::thread::sleep(Duration::from_millis(1000));
    let mut again = srv.stream("/api/events", &session);
    let t2 = again.until("a second snapshot", |t| {
        t.split("event: snapshot\ndata: ")
            .nth(1)
            .is_some_and(|d| d.contains('\n'))
    });
    let (now2, _, e2) = elapsed(&t2);
    assert_eq!(e2, now2 - created, "{t2}");
    assert!(e2 >= e1 + 1000, "{e1} then {e2}");
    drop(again);
    let snap = srv.get("/api/jobs", &session).json();
    let c = snap["councils"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["council_id"] == id.as_str())
        .unwrap_or_else(|| panic!("{snap}"))
        .clone();
    assert_eq!(c["status"], "running");
    let m0 = c["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "proposing-m0")
        .unwrap_or_else(|| panic!("{c:#}"));
    assert_eq!(m0["agent"], "codex");
    assert!(m0.get("log").is_none(), "no path goes to the page: {m0}");

    // The run's transcript follows its log.
    let mut tr = srv.stream(
        &format!("/api/councils/{id}/runs/proposing-m0/events"),
        &session,
    );
    tr.until("the run's command", |t| t.contains("$ rg -n cache src"));

    // Unknown names and bad ids are refused; nothing from the client is a path.
    for (path, code) in [
        (format!("/api/councils/{id}/runs/nope/events"), 404),
        (format!("/api/councils/{id}/runs/..%2Fstate/events"), 404),
        (
            "/api/councils/not-an-id/runs/proposing-m0/events".into(),
            400,
        ),
        (
            "/api/councils/1m8q4fhwprzza/runs/proposing-m0/events".into(),
            404,
        ),
    ] {
        let r = srv.get(&path, &session);
        assert_eq!(r.code, code, "{path}: {}", r.body);
        assert_eq!(r.json()["status"], "error", "{path}");
    }
    let r = srv.req(
        "GET",
        &format!("/api/councils/{id}/runs/proposing-m0/events"),
        &[],
        None,
    );
    assert_eq!(r.code, 401, "the transcript needs the session");

    // Cancel needs the session, this page's Origin and a JSON body.
    let cancel = format!("/api/councils/{id}/cancel");
    let o = srv.origin();
    let auth = bearer(&session);
    let r = srv.req("POST", &cancel, &[("Origin", &o)], Some("{}"));
    assert_eq!(r.code, 401, "no session");
    let cookie = format!("baton_session={session}");
    let r = srv.req(
        "POST",
        &cancel,
        &[("Cookie", &cookie), ("Origin", &o)],
        Some("{}"),
    );
    assert_eq!(r.code, 401, "a cookie is no session");
    let r = srv.req(
        "POST",
        &cancel,
        &[("Authorization", &auth), ("Origin", "http://evil.example")],
        Some("{}"),
    );
    assert_eq!(r.code, 403, "a foreign Origin");
    let r = srv.req("POST", &cancel, &[("Authorization", &auth)], Some("{}"));
    assert_eq!(r.code, 403, "no Origin");
    let r = srv.req(
        "POST",
        &cancel,
        &[
            ("Authorization", &auth),
            ("Origin", &o),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        Some(""),
    );
    assert_eq!(r.code, 415, "a form: {}", r.body);
    assert_eq!(council(&env, &["status", &id]).json()["stage"], "proposing");
    let r = srv.post(&cancel, &session, "{}");
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(r.json()["stage"], "cancelled", "{}", r.body);
    assert_eq!(council(&env, &["status", &id]).json()["stage"], "cancelled");
    // The cancelled run says so (not an error of the peer's, not lost).
    let (c, _) = watched(&env, &id);
    let c = c.unwrap();
    let m0 = runs_of(&c, "proposing")
        .into_iter()
        .find(|r| r["who"] == "m0")
        .unwrap()
        .clone();
    assert_eq!(m0["status"], "cancelled", "{c:#}");
    // The open transcript ends, the fleet shows the council cancelled.
    tr.until("the run's end", |t| t.contains("event: end"));
    s.until("the cancelled council", |t| {
        t.contains("event: councils") && t.contains(r#""status":"cancelled""#)
    });
}
