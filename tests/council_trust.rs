//! What a council trusts (issue 20): a member asked for by name is never
//! dropped silently.

use std::fs;

use serde_json::json;

use crate::council::{good_scenario, plan, proposal, setup};
use crate::support::council::{CouncilFake, Scenario, Stage, Step};
use crate::support::{Env, git};

#[test]
fn a_member_named_but_not_installed_is_refused_with_127() {
    let env = Env::new();
    env.git_init();
    let fake = CouncilFake::install(&env, &["codex", "claude"]);
    fake.write(&good_scenario());
    for extra in [&[][..], &["--dry-run"][..]] {
        let mut args = vec!["council", "discuss", "--members", "codex,claude,pi"];
        args.extend(extra);
        args.push("q?");
        let r = env.run(&args);
        assert_eq!(r.code, 127, "{extra:?}: {}\n{}", r.stdout, r.stderr);
        let e = r.json()["error"].clone();
        assert_eq!(e["kind"], "agent_not_installed", "{e}");
        assert!(e["message"].as_str().unwrap().contains("`pi`"), "{e}");
        assert!(
            e["hint"].as_str().unwrap().starts_with("install it:"),
            "{e}"
        );
    }
    assert!(fake.calls().is_empty(), "a council ran without pi");
}

/// codex and claude only: each proposes, critiques the one other proposal
/// and can chair.
fn two_member_scenario() -> Scenario {
    let mut s = Scenario::new();
    for (a, m) in [("codex", "alpha"), ("claude", "beta")] {
        s = s
            .on(a, Stage::Proposal, Step::json(proposal(m)))
            .on(
                a,
                Stage::Critique,
                Step::json(json!({"summary": "fine", "ranking": ["A"], "findings": []})),
            )
            .on(a, Stage::Plan, Step::json(plan()));
    }
    s
}

#[test]
fn a_default_member_not_installed_is_a_warning() {
    let env = Env::new();
    env.git_init();
    fs::write(env.work.join("a.txt"), "one\ntwo\n").unwrap();
    git(&env.work, &["add", "."]);
    git(&env.work, &["commit", "-qm", "base"]);
    let fake = CouncilFake::install(&env, &["codex", "claude"]);
    fake.write(&two_member_scenario());
    let r = env.run(&["council", "discuss", "q?"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v = r.json();
    assert_eq!(v["status"], "done", "{v}");
    let members: Vec<&str> = v["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["agent"].as_str().unwrap())
        .collect();
    assert_eq!(members, ["codex", "claude"]);
    let missing: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .filter(|w| w.starts_with("member_not_installed"))
        .collect();
    // pi is the third member a default council takes; the others it would
    // not have taken are no loss.
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert!(
        missing[0].contains("`pi`") && missing[0].contains("install it:"),
        "{}",
        missing[0]
    );
    assert!(missing[0].ends_with("the council runs with codex, claude"));

    // Everyone a default council takes is there: nothing to say.
    let (env, fake) = setup();
    fake.write(&good_scenario());
    let r = env.run(&["council", "discuss", "q?"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v = r.json();
    assert_eq!(v["members"].as_array().unwrap().len(), 3);
    assert!(
        !v["warnings"].to_string().contains("member_not_installed"),
        "{}",
        v["warnings"]
    );
}
