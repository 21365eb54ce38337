//! A council with an ACP member, end to end (issue 23): `copilot` and a
//! brought ACP agent are the ACP fake (`support/fake_acp_council.py`), which
//! speaks the protocol as copilot's recordings do and answers each stage
//! from the same scenario as the headless `codex` (`council_fake.py`). The
//! ACP member proposes, critiques, chairs, writes through permission
//! requests baton allows inside the worktree, and is refused an edit in a
//! read-only stage.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::council::{council, plan, proposal, review, setup};
use crate::support::council::{Scenario, Stage, Step};

/// `git show REV:PATH` in `dir`, if it exists.
fn show(dir: &Path, spec: &str) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["show", spec])
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A critique of two members' council: each sees one proposal, `A`.
fn critique() -> Value {
    json!({"summary": "A holds", "ranking": ["A"], "findings": [
        {"proposal": "A", "claims": ["c1"], "severity": "minor", "category": "correctness",
         "description": "the lock's scope is not named"}]})
}

/// Both members propose and critique; `chair` synthesises the plan.
fn scenario(chair: &str, acp: &str) -> Scenario {
    Scenario::new()
        .on("codex", Stage::Proposal, Step::json(proposal("alpha")))
        .on(
            acp,
            Stage::Proposal,
            Step::json(proposal("beta")).usage(321, 45),
        )
        .all(&["codex", acp], Stage::Critique, Step::json(critique()))
        .on(chair, Stage::Plan, Step::json(plan()))
}

/// The permission answers baton sent (JSON-RPC responses to the fake's
/// `session/request_permission`), by the option picked.
fn answers(sent: &[Value]) -> Vec<String> {
    sent.iter()
        .filter(|m| m.get("method").is_none() && m.get("result").is_some())
        .filter_map(|m| m["result"]["outcome"]["optionId"].as_str())
        .map(str::to_string)
        .collect()
}

#[test]
fn an_acp_member_proposes_critiques_writes_through_permission_and_is_reviewed() {
    let (env, fake) = setup();
    fake.install_acp(&env, &["copilot"]);
    let mut j = scenario("codex", "copilot").to_json();
    j["agents"]["copilot"]["implement"] = json!([{"edits": [{"path": "a.txt", "content": "one\ntwo\nlocked\n"}],
                "say": "locked the insert", "usage": {"input": 700, "output": 70}}]);
    j["agents"]["codex"]["review"] = json!([{"json": review("approve", json!([]))}]);
    fake.write_json(&j);
    let r = council(
        &env,
        &[
            "plan",
            "--yes",
            "--members",
            "codex,copilot",
            "--chair",
            "codex",
            "--writer",
            "copilot",
            "--seed",
            "3",
            "--test-cmd",
            "grep -q locked a.txt",
            "lock the cache insert",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v = r.json();
    assert_eq!(v["status"], "ready", "{v}");
    assert_eq!(v["worktree"]["writer"], "copilot", "{v}");
    assert_eq!(v["worktree"]["changed_files"], json!(["a.txt"]), "{v}");
    assert_eq!(v["verification"]["passed"], true, "{}", v["verification"]);

    // Every stage reached the ACP member over the protocol, the log says
    // which (the same stage detection as the headless members).
    let stages: Vec<Stage> = fake
        .calls()
        .into_iter()
        .filter(|c| c.agent == "copilot")
        .map(|c| c.stage)
        .collect();
    assert_eq!(
        stages,
        [Stage::Proposal, Stage::Critique, Stage::Implement],
        "{:?}",
        fake.calls()
            .iter()
            .map(|c| (&c.agent, c.stage, c.round))
            .collect::<Vec<_>>()
    );
    let sent = fake.sent();
    let methods: Vec<&str> = sent.iter().filter_map(|m| m["method"].as_str()).collect();
    assert_eq!(
        methods.iter().filter(|m| **m == "session/prompt").count(),
        3,
        "{methods:?}"
    );
    assert_eq!(
        methods.iter().filter(|m| **m == "initialize").count(),
        3,
        "one process per call: {methods:?}"
    );

    // The writer's edit arrived as a permission request that baton allowed,
    // inside the council's worktree, and nothing else was asked.
    let perms = fake.permissions();
    assert_eq!(perms.len(), 1, "{perms:?}");
    assert_eq!(perms[0]["stage"], "implement");
    assert_eq!(perms[0]["written"], true, "{perms:?}");
    assert!(
        perms[0]["option"]
            .as_str()
            .is_some_and(|o| o.starts_with("allow")),
        "{perms:?}"
    );
    let wt = PathBuf::from(v["worktree"]["path"].as_str().expect("worktree.path"));
    let edited = PathBuf::from(perms[0]["path"].as_str().unwrap());
    assert!(
        edited.starts_with(wt.canonicalize().unwrap_or(wt.clone())) || edited.starts_with(&wt),
        "{} outside {}",
        edited.display(),
        wt.display()
    );
    assert_eq!(answers(&sent), [perms[0]["option"].as_str().unwrap()]);

    // The file is on the council's branch, not in the user's checkout.
    let id = v["council_id"].as_str().unwrap();
    let on_branch = show(&env.work, &format!("baton/council-{id}:a.txt"));
    assert_eq!(on_branch.as_deref(), Some("one\ntwo\nlocked\n"), "{v}");
    assert_eq!(
        fs::read_to_string(env.work.join("a.txt")).unwrap(),
        "one\ntwo\n"
    );

    // The other vendor's member reviewed it, in the worktree.
    let reviews = fake.stage(Stage::Review);
    assert_eq!(reviews.len(), 1, "{reviews:?}");
    assert_eq!(reviews[0].agent, "codex");
    assert!(
        reviews[0].cwd.to_string_lossy().contains(id),
        "{:?}",
        reviews[0].cwd
    );
    assert_eq!(v["reviews"].as_array().unwrap().len(), 1, "{v}");

    // The ACP member's status per stage is in the result, and the usage it
    // reported (exact per prompt over ACP) counts: proposing adds its 321
    // input tokens to codex's 100, implementing is its turn alone.
    let m = member(&v, "copilot");
    for stage in ["proposing", "critiquing"] {
        assert_eq!(m["outcomes"][stage]["outcome"], "ok", "{m}");
    }
    assert_eq!(m["vendor"], "github");
    assert_eq!(v["usage_by_stage"]["proposing"]["input_tokens"], 421, "{v}");
    assert_eq!(v["usage_by_stage"]["implementing"]["input_tokens"], 700);
    assert_eq!(v["usage_by_stage"]["implementing"]["output_tokens"], 70);
    // Per member, the council's run records (what `watch` and `serve`
    // show) hold each of its runs' outcome and usage.
    let mine: Vec<(String, String, u64)> = runs(&env, id)
        .into_iter()
        .filter(|r| r["agent"] == "copilot")
        .map(|r| {
            (
                r["stage"].as_str().unwrap().to_string(),
                r["outcome"].as_str().unwrap_or("").to_string(),
                r["usage"]["input_tokens"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        mine,
        [
            ("critiquing".to_string(), "ok".to_string(), 100),
            ("implementing".to_string(), "success".to_string(), 700),
            ("proposing".to_string(), "ok".to_string(), 321),
        ],
        "{mine:?}"
    );
}

/// The result's entry for `agent` among the members.
fn member(v: &Value, agent: &str) -> Value {
    v["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["agent"] == agent)
        .unwrap_or_else(|| panic!("no {agent} member: {v}"))
        .clone()
}

/// The council's folder in the state directory (`repos/*/councils/<id>`).
fn council_dir(env: &crate::support::Env, id: &str) -> PathBuf {
    fs::read_dir(env.state.join("repos"))
        .unwrap()
        .flatten()
        .map(|r| r.path().join("councils").join(id))
        .find(|d| d.is_dir())
        .unwrap_or_else(|| panic!("no folder for council {id}"))
}

/// The council's run records (`runs/*.json`), by file name.
fn runs(env: &crate::support::Env, id: &str) -> Vec<Value> {
    let mut files: Vec<PathBuf> = fs::read_dir(council_dir(env, id).join("runs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no run records for council {id}");
    files
        .iter()
        .map(|f| serde_json::from_str(&fs::read_to_string(f).unwrap()).unwrap())
        .collect()
}

#[test]
fn a_brought_acp_critic_is_refused_an_edit_and_chairs_the_plan() {
    let (env, fake) = setup();
    // A brought ACP agent, as a user configures one.
    fs::write(
        env.tmp.path().join("user-config.toml"),
        "[agents.mybot]\ntransport = \"acp\"\ncommand = [\"my-acp\"]\n",
    )
    .unwrap();
    fake.install_acp_as(&env, "my-acp", "mybot");
    // In its (read-only) critique, mybot asks to write leak.txt, then answers.
    let mut j = scenario("mybot", "mybot").to_json();
    j["agents"]["mybot"]["critique"] = json!([{"edits": [{"path": "leak.txt", "content": "written by a critic\n"}],
                "json": critique()}]);
    fake.write_json(&j);
    let r = council(
        &env,
        &[
            "discuss",
            "--members",
            "codex,mybot",
            "--chair",
            "mybot",
            "--seed",
            "5",
            "how should the cache be guarded?",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v = r.json();
    assert_eq!(v["status"], "done", "{v}");
    let id = v["council_id"].as_str().unwrap();

    // baton refused the edit, and the fake wrote nothing.
    let perms = fake.permissions();
    assert_eq!(perms.len(), 1, "{perms:?}");
    assert_eq!(
        (
            perms[0]["agent"].as_str(),
            perms[0]["stage"].as_str(),
            perms[0]["option"].as_str(),
            perms[0]["written"].as_bool()
        ),
        (
            Some("mybot"),
            Some("critique"),
            Some("reject_once"),
            Some(false)
        ),
        "{perms:?}"
    );
    let refused = PathBuf::from(perms[0]["path"].as_str().unwrap());
    assert!(!refused.exists(), "{} was written", refused.display());
    assert!(!env.work.join("leak.txt").exists());
    assert_eq!(answers(&fake.sent()), ["reject_once"]);

    // The critique still counted, and the chair's plan is mybot's.
    let m = member(&v, "mybot");
    assert_eq!(m["outcomes"]["critiquing"]["outcome"], "ok", "{m}");
    assert_eq!(v["chair"]["agent"], "mybot", "{v}");
    assert_eq!(v["plan"]["by"], "chair", "{}", v["plan"]);
    assert_eq!(v["plan"]["content"]["summary"], plan()["summary"]);
    let chaired: Vec<Stage> = fake
        .calls()
        .into_iter()
        .filter(|c| c.agent == "mybot")
        .map(|c| c.stage)
        .collect();
    assert_eq!(chaired, [Stage::Proposal, Stage::Critique, Stage::Plan]);

    // The refusal is recorded: with the critic's call in the council's
    // record (the denial naming the file), and baton's answer in the run's
    // sent.log.
    let dir = council_dir(&env, id);
    let denied: Vec<(String, Value)> = fs::read_dir(dir.join("calls"))
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let c: Value = serde_json::from_str(&fs::read_to_string(e.path()).ok()?).ok()?;
            let name = e.file_name().to_string_lossy().into_owned();
            c.get("denials").map(|d| (name, d.clone()))
        })
        .collect();
    assert_eq!(denied.len(), 1, "{denied:?}");
    assert!(denied[0].0.starts_with("critiquing-"), "{denied:?}");
    let d = denied[0].1.as_array().unwrap();
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0]["tool"].as_str().unwrap().starts_with("edit"), "{d:?}");
    assert!(
        d[0]["detail"].as_str().unwrap().contains("leak.txt"),
        "{d:?}"
    );
    let rec = runs(&env, id)
        .into_iter()
        .find(|r| r["agent"] == "mybot" && r["stage"] == "critiquing")
        .expect("mybot's critiquing run");
    let log = PathBuf::from(rec["log"].as_str().expect("a run directory"));
    let sent_log = fs::read_to_string(log.with_file_name("sent.log")).unwrap();
    assert!(sent_log.contains("reject_once"), "{sent_log}");
}
