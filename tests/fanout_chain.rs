//! A fan-out's candidates through the one fallback/retry chain of every
//! run (`--fallback`, `--retry`), and the limits between its rounds
//! (`--max-usd`, `--budget-tokens`, `--max-wall`), against the scripted
//! fake (`support/council_fake.py` as codex, claude and pi).

use serde_json::{Value, json};

use crate::fanout::{branches, candidate, fan_out, setup, write_answer};
use crate::support::council::{Scenario, Stage, Step};

/// codex after its own retries on a 429 (tests/fixtures/failures/codex/rate_limit*).
const CODEX_429: &str =
    "exceeded retry limit, last status: 429 Too Many Requests, request id: req_mockfault0001";
/// codex on a 503 `server_is_overloaded` (tests/fixtures/failures/codex/overloaded*).
const CODEX_503: &str = "Selected model is at capacity. Please try a different model.";
/// pi's provider 429 (tests/fixtures/failures/pi/rate_limit*), no wait named.
const PI_429: &str = "429 Rate limit reached for mock-model in organization org-mock on \
                      requests per min (RPM): Limit 500, Used 500, Requested 1.";

fn warned(j: &Value, text: &str) -> bool {
    j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains(text))
}

#[test]
fn a_rate_limited_candidate_falls_back_in_a_fresh_worktree_and_can_win_judged_blind() {
    let (env, fake) = setup();
    let review = json!({"candidates": [
        {"label": "A", "verdict": "accept", "summary": "fine", "findings": []},
        {"label": "B", "verdict": "revise", "summary": "longer", "findings": []}],
        "ranking": ["A", "B"]});
    fake.write(
        &Scenario::new()
            .on("codex", Stage::Implement, Step::fail(CODEX_429))
            .on("pi", Stage::Implement, Step::fail(PI_429).usage(300, 20))
            .on("claude", Stage::Implement, write_answer("good\n"))
            .on("pi", Stage::FanoutReview, Step::json(review)),
    );
    let (r, j) = fan_out(
        &env,
        &[
            "--agents",
            "codex,pi",
            "--fallback",
            "claude",
            "--judge",
            "pi",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(j["status"], "success", "{j}");
    let id = j["fanout_id"].as_str().unwrap();
    for (c, asked) in [("c1", "codex"), ("c2", "pi")] {
        let c = candidate(&j, c);
        // The candidate is the serving agent's work; the one asked for stays visible.
        assert_eq!(c["agent"], "claude", "{c}");
        assert_eq!(c["agent_requested"], asked, "{c}");
        assert_eq!(c["vendor"], "anthropic", "{c}");
        assert_eq!(c["eligible"], true, "{c}");
        let a = c["attempts"].as_array().unwrap();
        assert_eq!(a.len(), 2, "{c}");
        assert_eq!(
            (&a[0]["agent"], &a[0]["kind"], &a[0]["then"]),
            (&json!(asked), &json!("rate_limited"), &json!("fallback")),
            "{c}"
        );
        assert_eq!(
            (&a[1]["agent"], &a[1]["status"]),
            (&json!("claude"), &json!("success"))
        );
    }
    // The first attempt's usage is kept: pi's 300 tokens and claude's 100.
    let c2 = candidate(&j, "c2");
    assert_eq!(c2["attempts"][0]["usage"]["input_tokens"], 300, "{c2}");
    assert_eq!(c2["usage"]["input_tokens"], 400, "{c2}");
    assert!(
        warned(
            &j,
            "c1: fell_back: codex (rate_limited) could not answer; claude served the run"
        ),
        "{j}"
    );
    // Each fallback ran in a fresh worktree at the same base, named after
    // the candidate's; the first ones (untouched) are gone.
    let codex = fake.calls_for("codex", Stage::Implement);
    assert_eq!(codex.len(), 1);
    assert!(
        codex[0].cwd.ends_with(format!("{id}-1")),
        "{:?}",
        codex[0].cwd
    );
    assert!(!codex[0].cwd.exists());
    let mut claude: Vec<String> = fake
        .calls_for("claude", Stage::Implement)
        .iter()
        .map(|c| c.cwd.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    claude.sort();
    assert_eq!(claude, [format!("{id}-1-a2"), format!("{id}-2-a2")]);
    let w = &j["winner"];
    assert_eq!(w["agent"], "claude", "{j}");
    let branch = w["branch"].as_str().unwrap();
    assert!(branch.ends_with("-a2"), "{branch}");
    assert_eq!(branches(&env), [branch.to_string()]);
    // The judge saw neither agent names nor what the chain said.
    let judged = fake.stage(Stage::FanoutReview);
    assert_eq!(judged.len(), 1, "{j}");
    let p = judged[0].stdin.to_lowercase();
    for leak in [
        "codex",
        "claude",
        "anthropic",
        "openai",
        "fell_back",
        "rate_limited",
        "429",
        "agent_requested",
    ] {
        assert!(!p.contains(leak), "the judge saw `{leak}`:\n{p}");
    }
    // `watch` (and `serve`) show who did the work: the writing runs of both
    // candidates are claude's, the agent that served.
    let w = crate::worktree::baton(&env, &["watch", "--once"]).json();
    let g = w["councils"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["council_id"] == id)
        .unwrap_or_else(|| panic!("{w}"));
    let mut writers: Vec<(&str, &str)> = g["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["stage"] == "writing")
        .map(|r| (r["who"].as_str().unwrap(), r["agent"].as_str().unwrap()))
        .collect();
    writers.sort();
    assert_eq!(writers, [("c1", "claude"), ("c2", "claude")], "{g}");
}

#[test]
fn retry_tries_an_unavailable_candidate_again_on_the_same_agent_in_its_worktree() {
    let (env, fake) = setup();
    fake.write(
        &Scenario::new()
            .on("codex", Stage::Implement, Step::fail(CODEX_503))
            .on("codex", Stage::Implement, write_answer("good\n")),
    );
    let (r, j) = fan_out(&env, &["--agents", "codex", "--retry", "1"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let c1 = candidate(&j, "c1");
    assert_eq!(
        (&c1["agent"], &c1["agent_requested"]),
        (&json!("codex"), &json!("codex"))
    );
    let a = c1["attempts"].as_array().unwrap();
    assert_eq!(a.len(), 2, "{c1}");
    assert_eq!(
        (&a[0]["kind"], &a[0]["then"]),
        (&json!("provider_unavailable"), &json!("retry"))
    );
    assert_eq!(a[1]["status"], "success");
    let calls = fake.calls_for("codex", Stage::Implement);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].cwd, calls[1].cwd, "the same worktree");
    assert!(!warned(&j, "fell_back"), "{j}");
}

#[test]
fn a_candidate_that_changed_a_file_then_failed_is_not_retried_in_place() {
    let (env, fake) = setup();
    let half = Step::fail(CODEX_429).edit("answer.txt", "half\n");
    fake.write(&Scenario::new().on("codex", Stage::Implement, half).on(
        "claude",
        Stage::Implement,
        write_answer("good\n"),
    ));
    // No fallback: it ends there, saying why.
    let (r, j) = fan_out(&env, &["--agents", "codex", "--retry", "1"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(fake.calls_for("codex", Stage::Implement).len(), 1);
    assert!(
        warned(
            &j,
            "c1: not retried: codex changed files before it failed (answer.txt)"
        ),
        "{j}"
    );
    assert_eq!(candidate(&j, "c1")["error"]["kind"], "rate_limited");
    // With a fallback: the next agent in a fresh worktree at the base, never
    // in the half-done one, which is reported and then removed.
    let (r, j) = fan_out(
        &env,
        &["--agents", "codex", "--retry", "1", "--fallback", "claude"],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let codex = fake.calls_for("codex", Stage::Implement);
    assert_eq!(codex.len(), 2, "one call per fan-out: no retry in place");
    let claude = fake.calls_for("claude", Stage::Implement);
    assert_eq!(claude.len(), 1);
    assert_ne!(claude[0].cwd, codex[1].cwd);
    let c1 = candidate(&j, "c1");
    assert_eq!(
        c1["attempts"][0]["changed_files"],
        json!(["answer.txt"]),
        "{c1}"
    );
    assert!(warned(&j, "c1: an earlier attempt's worktree"), "{j}");
    assert!(!codex[1].cwd.exists(), "the half-done worktree was removed");
    let branch = j["winner"]["branch"].as_str().unwrap();
    assert_eq!(branches(&env), [branch.to_string()]);
    assert_eq!(
        crate::worktree::git(&env.work, &["show", &format!("{branch}:answer.txt")]),
        "good\n"
    );
}

#[test]
fn dry_run_shows_each_candidates_chain() {
    let (env, _fake) = setup();
    let (r, j) = fan_out(
        &env,
        &[
            "--agents",
            "codex,pi",
            "--fallback",
            "claude",
            "--retry",
            "2",
            "--dry-run",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    for c in j["candidates"].as_array().unwrap() {
        assert_eq!(c["retry"], 2, "{c}");
        let chain = c["fallback"].as_array().unwrap();
        assert_eq!(chain.len(), 1, "{c}");
        assert_eq!(chain[0]["agent"], "claude");
        assert!(!chain[0]["argv"].as_array().unwrap().is_empty());
    }
    assert!(branches(&env).is_empty(), "--dry-run creates nothing");
}

#[test]
fn a_dollar_budget_stops_a_fanout_between_rounds() {
    let (env, fake) = setup();
    fake.write(
        &Scenario::new()
            .on("claude", Stage::Implement, write_answer("bad\n").cost(0.05))
            .on(
                "claude",
                Stage::Implement,
                write_answer("good\n").cost(0.05),
            ),
    );
    let (r, j) = fan_out(
        &env,
        &[
            "--agents",
            "claude",
            "--until-green",
            "2",
            "--max-usd",
            "0.08",
        ],
    );
    assert_eq!(r.code, 5, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        fake.calls_for("claude", Stage::Implement).len(),
        1,
        "the repair round was not started"
    );
    assert_eq!(j["error"]["kind"], "budget_exceeded", "{j}");
    let m = j["error"]["message"].as_str().unwrap();
    assert!(
        m.contains("repair round 1 not started: --max-usd 0.08: $0.0500 spent by 1 peer run(s)"),
        "{m}"
    );
    let s = &j["spending"];
    assert_eq!(
        (&s["max_usd"], &s["spent_usd"], &s["calls"], &s["exceeded"]),
        (&json!(0.08), &json!(0.05), &json!(1), &json!(true)),
        "{s}"
    );
}

#[test]
fn a_token_budget_stops_a_fanout_between_rounds_with_budget_exceeded() {
    let (env, fake) = setup();
    fake.write(&Scenario::new().on(
        "codex",
        Stage::Implement,
        write_answer("bad\n").usage(900, 100),
    ));
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
    assert_eq!(j["error"]["kind"], "budget_exceeded", "{j}");
    assert!(
        j["error"]["message"].as_str().unwrap().contains(
            "--budget-tokens 1500: 1000 tokens used by 1 peer run(s) so far, 2000 projected"
        ),
        "{j}"
    );
    let s = &j["spending"];
    assert_eq!(
        (&s["max_tokens"], &s["spent_tokens"], &s["exceeded"]),
        (&json!(1500), &json!(1000), &json!(true)),
        "{s}"
    );
}

#[test]
fn a_budget_that_holds_back_the_judges_still_names_a_winner_with_a_warning() {
    let (env, fake) = setup();
    fake.write(
        &Scenario::new()
            .on("codex", Stage::Implement, write_answer("good\n"))
            .on(
                "claude",
                Stage::Implement,
                write_answer("good, longer\nanswer\n").cost(0.05),
            ),
    );
    let (r, j) = fan_out(
        &env,
        &[
            "--agents",
            "codex:gpt-5.4,claude",
            "--judge",
            "claude",
            "--max-usd",
            "0.06",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        fake.stage(Stage::FanoutReview).is_empty(),
        "no judge was asked"
    );
    assert_eq!(j["winner"]["id"], "c1", "the smaller diff: {j}");
    assert!(
        warned(
            &j,
            "the judges not started: --max-usd 0.06: $0.0504 (estimated) spent"
        ),
        "{j}"
    );
    assert_eq!(j["spending"]["exceeded"], true, "{j}");
}

#[test]
fn max_wall_keeps_the_repair_round_and_the_judges_from_starting() {
    let (env, fake) = setup();
    fake.write(&Scenario::new().on(
        "claude",
        Stage::Implement,
        write_answer("bad\n").delay_ms(1000),
    ));
    let (r, j) = fan_out(
        &env,
        &[
            "--agents",
            "claude",
            "--until-green",
            "2",
            "--max-wall",
            "1500ms",
        ],
    );
    assert_eq!(r.code, 5, "{}", r.stdout);
    assert_eq!(fake.calls_for("claude", Stage::Implement).len(), 1);
    let why = candidate(&j, "c1")["excluded_reason"].as_str().unwrap();
    assert!(
        why.contains("repair round 1 not started: --max-wall 1.5s"),
        "{why}"
    );
    assert!(warned(&j, "--max-wall 1.5s"), "{j}");
    // Not a spending limit: the kind stays no_eligible_candidate.
    assert_eq!(j["error"]["kind"], "no_eligible_candidate", "{j}");
    assert!(j.get("spending").is_none(), "{j}");

    // Two eligible candidates: the judges are held back, baton ranks them.
    fake.write(
        &Scenario::new()
            .on(
                "codex",
                Stage::Implement,
                write_answer("good\n").delay_ms(1000),
            )
            .on(
                "claude",
                Stage::Implement,
                write_answer("good\n").delay_ms(1000),
            ),
    );
    let (r, j) = fan_out(
        &env,
        &[
            "--agents",
            "codex,claude",
            "--judge",
            "pi",
            "--max-wall",
            "1500ms",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(fake.stage(Stage::FanoutReview).is_empty());
    assert!(warned(&j, "the judges not started: --max-wall 1.5s"), "{j}");
    assert!(!j["winner"].is_null(), "{j}");
}

/// A read-only fan-out runs each candidate through the same chain: a
/// rate-limited codex falls back to claude in place, the fan-out says so
/// as a writing one does, and the views show claude as the one who answered.
#[test]
fn a_read_only_candidate_falls_back_and_says_so() {
    let (env, fake) = setup();
    fake.write(
        &Scenario::new()
            .on("codex", Stage::Implement, Step::fail(CODEX_429))
            .on("claude", Stage::Implement, Step::say("claude thinks B")),
    );
    let r = crate::worktree::baton(
        &env,
        &[
            "run",
            "--agents",
            "codex,pi",
            "--read-only",
            "--fallback",
            "claude",
            "which?",
        ],
    );
    let j = r.json();
    assert_eq!(j["mode"], "read-only", "{j}");
    let c1 = candidate(&j, "c1");
    assert_eq!(c1["agent"], "claude", "{c1}");
    assert_eq!(c1["message"], "claude thinks B", "{c1}");
    assert!(
        warned(
            &j,
            "c1: fell_back: codex (rate_limited) could not answer; claude served the run"
        ),
        "{j}"
    );
    let w = crate::worktree::baton(&env, &["watch", "--once"]).json();
    let g = w["councils"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["council_id"] == j["fanout_id"])
        .unwrap_or_else(|| panic!("{w}"));
    let c1_run = g["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["who"] == "c1")
        .unwrap_or_else(|| panic!("{g}"));
    assert_eq!(c1_run["agent"], "claude", "{g}");
}
