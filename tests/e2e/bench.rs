//! `baton bench` end to end (issue 32): a task mined from a real history is
//! handed to the real pi CLI, which the mock scripts to write a fix in the
//! history-less trial folder baton's brief names; the hidden test then says
//! whether it is solved, and `bench report` counts it.
//!
//! The repository: `lib.sh` whose `add` subtracts, a test runner printing
//! libtest lines (`run-tests.sh`, every `t_*` function of `tests/*.sh`, or
//! the ones named), a passing `t_sub`; then a commit that fixes `add` and
//! adds `t_add` (the hidden test: it fails before the fix). Its message is
//! the task text and carries the marker that picks the mock's scenario.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::{Agent, Outcome, Peer, mock};

const LIB_BUGGY: &str = "add() { echo $(($1 - $2)); }\nsub() { echo $(($1 - $2)); }\n";
const LIB_FIXED: &str = "add() { echo $(($1 + $2)); }\nsub() { echo $(($1 - $2)); }\n";

const RUN_TESTS: &str = r#". ./lib.sh
for f in tests/*.sh; do . "./$f"; done
names="$*"
[ -n "$names" ] || names=$(sed -n 's/^\(t_[a-z_]*\)().*/\1/p' tests/*.sh)
for t in $names; do
  if "$t" >/dev/null 2>&1; then echo "test $t ... ok"; else echo "test $t ... FAILED"; fi
done
"#;

/// Only in the hidden test: a request holding it saw the answer's tests.
const HIDDEN: &str = "HIDDEN-E2E-BENCH-TEST";

fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "e2e")
        .env("GIT_AUTHOR_EMAIL", "e2e@example.invalid")
        .env("GIT_COMMITTER_NAME", "e2e")
        .env("GIT_COMMITTER_EMAIL", "e2e@example.invalid")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}");
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// The history above in the peer's work dir; the fix's message names
/// `marker` and the run id `id`. Returns the base commit.
fn history(p: &Peer, marker: &str, id: &str) -> String {
    let w = &p.work;
    fs::create_dir_all(w.join("tests")).unwrap();
    fs::write(w.join("lib.sh"), LIB_BUGGY).unwrap();
    fs::write(w.join("run-tests.sh"), RUN_TESTS).unwrap();
    fs::write(
        w.join("tests/basic.sh"),
        "t_sub() { [ \"$(sub 3 1)\" = 2 ]; }\n",
    )
    .unwrap();
    git(w, &["add", "."]);
    git(
        w,
        &[
            "commit",
            "-qm",
            "Add lib.sh with add and sub, and a test runner",
        ],
    );
    let base = git(w, &["rev-parse", "HEAD"]);
    fs::write(w.join("lib.sh"), LIB_FIXED).unwrap();
    fs::write(
        w.join("tests/add.sh"),
        format!("# {HIDDEN}\nt_add() {{ [ \"$(add 2 2)\" = 4 ]; }}\n"),
    )
    .unwrap();
    git(w, &["add", "."]);
    let message = format!(
        "add() in lib.sh subtracts\n\n`add 2 2` prints 0 where it must print 4; sub is right.\n\n{marker} id={id}\n"
    );
    git(w, &["commit", "-qm", &message]);
    base
}

/// The user config that sends `baton run --agent pi` (and so each trial) to
/// the mock: `--agents pi` names no provider.
fn pi_to_the_mock(p: &Peer) {
    let dir = p.home.join(".config/baton");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("config.toml"),
        "[agents.pi]\nprovider = \"mock\"\nmodel = \"mock-model\"\n",
    )
    .unwrap();
}

fn baton(p: &Peer, args: &[&str]) -> Outcome {
    p.baton_among(&[], args, Duration::from_secs(300))
}

/// Mines the fix into set `e2e` and checks it is the one task, with `t_add`
/// to fix and `t_sub` to keep; returns the task id.
fn mine(p: &Peer, base: &str) -> String {
    let o = baton(
        p,
        &[
            "bench",
            "mine",
            "--since",
            base,
            "--test-cmd",
            "sh run-tests.sh {tests}",
            "--runner",
            "cargo",
            "--set",
            "e2e",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.dump());
    let j = &o.json;
    assert_eq!(
        (j["scanned"].as_u64(), j["candidates"].as_u64()),
        (Some(1), Some(1)),
        "{}",
        o.dump()
    );
    let tasks = j["tasks"].as_array().cloned().unwrap_or_default();
    assert_eq!(tasks.len(), 1, "{}", o.dump());
    let id = tasks[0].as_str().unwrap().to_string();
    let dir = Path::new(j["dir"].as_str().unwrap());
    let task: Value =
        serde_json::from_str(&fs::read_to_string(dir.join(format!("{id}.json"))).unwrap()).unwrap();
    assert_eq!(task["fail_to_pass"], serde_json::json!(["t_add"]), "{task}");
    assert_eq!(task["pass_to_pass"], serde_json::json!(["t_sub"]), "{task}");
    assert_eq!(
        task["test_files"],
        serde_json::json!(["tests/add.sh"]),
        "{task}"
    );
    assert_eq!(
        task["source_files"],
        serde_json::json!(["lib.sh"]),
        "{task}"
    );
    id
}

/// `bench run e2e --agents pi`: one trial, run, no error; returns the run's
/// output and its one trial.
fn run(p: &Peer) -> (Outcome, Value) {
    let o = baton(
        p,
        &[
            "bench",
            "run",
            "e2e",
            "--agents",
            "pi",
            "--timeout",
            p.agent.guard_timeout(),
        ],
    );
    let j = &o.json;
    assert_eq!(o.code, 0, "{}", o.dump());
    assert_eq!(
        (j["trials"].as_u64(), j["run"].as_u64()),
        (Some(1), Some(1)),
        "{}",
        o.dump()
    );
    assert_eq!(j["errors"], serde_json::json!([]), "{}", o.dump());
    let trials = Path::new(j["record"].as_str().unwrap()).join("trials");
    let files: Vec<_> = fs::read_dir(&trials).unwrap().flatten().collect();
    assert_eq!(files.len(), 1, "{}", o.dump());
    let trial = serde_json::from_str(&fs::read_to_string(files[0].path()).unwrap()).unwrap();
    (o, trial)
}

/// What the mock saw of the trial: the task text in the brief, a trial
/// folder that is not the user's checkout (and is gone now), the
/// scenario's two steps (so the write's result came back), never the
/// hidden test.
fn mock_saw_the_task_alone(p: &Peer, id: &str, scenario: &str) {
    let reqs = mock().requests_for(id);
    let turns: Vec<_> = reqs.iter().filter(|r| !r.helper).collect();
    assert!(
        turns
            .iter()
            .any(|r| r.prompt.contains("`add 2 2` prints 0")),
        "the task text did not reach the model: {:?}",
        turns.iter().map(|r| &r.prompt).collect::<Vec<_>>()
    );
    let steps: Vec<(&str, usize)> = turns
        .iter()
        .map(|r| (r.scenario.as_str(), r.step))
        .collect();
    assert_eq!(steps, [(scenario, 0), (scenario, 1)]);
    let work = p.work.display().to_string();
    let brief = &turns[0].prompt;
    let folder = brief
        .lines()
        .find_map(|l| l.strip_prefix("Work in this directory: "))
        .unwrap_or_else(|| panic!("no folder in the brief: {brief}"));
    assert!(
        !Path::new(folder).exists(),
        "the trial folder {folder} was left behind"
    );
    for r in &reqs {
        assert!(
            !r.raw_body.contains(HIDDEN),
            "the hidden test reached the model"
        );
        assert!(
            !r.prompt.contains(&work),
            "the brief named the user's checkout"
        );
    }
}

/// The user's checkout is as the history left it (the trial wrote elsewhere).
fn checkout_untouched(p: &Peer) {
    assert_eq!(git(&p.work, &["status", "--porcelain"]), "");
    assert_eq!(
        fs::read_to_string(p.work.join("lib.sh")).unwrap(),
        LIB_FIXED
    );
}

/// pi writes the fix: the trial is solved, with the mock's tokens; the
/// report counts 1/1.
fn solves_a_mined_task(agent: Agent) {
    let p = Peer::new(agent, "bench-fix");
    pi_to_the_mock(&p);
    let (id, _) = p.prompt("E2E-BENCH-FIX");
    let base = history(&p, "E2E-BENCH-FIX", &id);
    let task = mine(&p, &base);
    let (o, trial) = run(&p);
    assert_eq!(o.json["settings"][0]["solved"], 1, "{}", o.dump());
    assert_eq!(trial["task"], task.as_str(), "{trial}");
    assert_eq!(trial["setting"], "pi", "{trial}");
    assert_eq!(trial["status"], "success", "{trial}\n{}", o.dump());
    assert_eq!(trial["solved"], true, "{trial}\n{}", o.dump());
    assert_eq!(trial["still_failing"], serde_json::json!([]), "{trial}");
    assert_eq!(trial["broken"], serde_json::json!([]), "{trial}");
    assert_eq!(trial["tampered_tests"], serde_json::json!([]), "{trial}");
    // One line changed: `-` became `+`.
    assert_eq!(trial["diff_lines"], 2, "{trial}");
    let u = mock().usage_for(&id);
    assert_eq!(
        u.input + u.output,
        1760,
        "the scenario's usage changed: {u:?}"
    );
    assert_eq!(
        trial["tokens"].as_u64(),
        Some(u.input + u.output),
        "{trial}"
    );
    mock_saw_the_task_alone(&p, &id, "bench-fix");
    checkout_untouched(&p);

    let bench_id = o.json["bench_id"].as_str().unwrap().to_string();
    let r = baton(&p, &["bench", "report", &bench_id]);
    assert_eq!(r.code, 0, "{}", r.dump());
    let s = &r.json["settings"][0];
    assert_eq!(
        (
            s["setting"].as_str(),
            s["trials"].as_u64(),
            s["solved"].as_u64()
        ),
        (Some("pi"), Some(1), Some(1)),
        "{}",
        r.dump()
    );
    assert_eq!(s["tokens"].as_u64(), Some(1760), "{}", r.dump());
    assert_eq!(s["tampered_trials"], 0, "{}", r.dump());
    let text = baton(&p, &["bench", "report", &bench_id, "--text"]);
    assert_eq!(text.code, 0, "{}", text.dump());
    assert!(
        text.stdout
            .lines()
            .any(|l| l.starts_with("pi ") && l.contains(" 1/1 ")),
        "{}",
        text.dump()
    );
}

/// pi writes a wrong fix: the peer succeeded, the trial is not solved, and
/// `still_failing` names the hidden test.
fn a_wrong_fix_is_not_solved(agent: Agent) {
    let p = Peer::new(agent, "bench-wrong");
    pi_to_the_mock(&p);
    let (id, _) = p.prompt("E2E-BENCH-WRONG");
    let base = history(&p, "E2E-BENCH-WRONG", &id);
    mine(&p, &base);
    let (o, trial) = run(&p);
    assert_eq!(o.json["settings"][0]["solved"], 0, "{}", o.dump());
    assert_eq!(trial["status"], "success", "{trial}\n{}", o.dump());
    assert_eq!(trial["solved"], false, "{trial}");
    assert_eq!(
        trial["still_failing"],
        serde_json::json!(["t_add"]),
        "{trial}"
    );
    assert_eq!(trial["broken"], serde_json::json!([]), "{trial}");
    assert_eq!(trial["tampered_tests"], serde_json::json!([]), "{trial}");
    mock_saw_the_task_alone(&p, &id, "bench-wrong");
    checkout_untouched(&p);
    let bench_id = o.json["bench_id"].as_str().unwrap().to_string();
    let r = baton(&p, &["bench", "report", &bench_id]);
    let s = &r.json["settings"][0];
    assert_eq!(
        (
            s["trials"].as_u64(),
            s["solved"].as_u64(),
            s["tests_failed"].as_u64()
        ),
        (Some(1), Some(0), Some(1)),
        "{}",
        r.dump()
    );
}

per_agent!([pi => Pi] solves_a_mined_task, a_wrong_fix_is_not_solved);
