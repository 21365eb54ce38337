//! Bring your own ACP agent: `[agents.NAME] transport = "acp"` with
//! `command = [...]` in the user file, driven by the fake ACP agent
//! (`support/fake_acp.py`) replaying the recorded copilot exchanges under
//! another program name.

use std::fs;

use serde_json::Value;

use crate::support::{Env, Run, fixture};

/// An `Env` whose user file brings `mybot` (`my-acp --flag-of-its-own`,
/// replaying `acp/copilot/<name>.acp` with `flags`), plus `extra` lines in
/// its section.
fn brought(name: &str, flags: &str, extra: &str) -> Env {
    let env = Env::new();
    env.git_init();
    let fake = crate::support::acp::fake_acp(&env.fake_dir);
    let rec = fixture(&format!("acp/copilot/{name}.acp"));
    env.fake(
        "my-acp",
        &format!(
            "printf '%s\\n' \"$*\" > \"$FAKE_DIR/my-acp.argv\"\nexec {fake} '{}' {flags} --record \"$FAKE_DIR/sent.jsonl\"",
            rec.display()
        ),
    );
    user_file(
        &env,
        &format!(
            "[agents.mybot]\ntransport = \"acp\"\ncommand = [\"my-acp\", \"--flag-of-its-own\"]\n{extra}"
        ),
    );
    env
}

fn user_file(env: &Env, text: &str) {
    fs::write(env.tmp.path().join("user-config.toml"), text).unwrap();
}

fn run(env: &Env, args: &[&str]) -> (Run, Value) {
    let mut all = vec!["run", "--agent", "mybot", "--timeout", "60s"];
    all.extend_from_slice(args);
    let r = env.run(&all);
    let j = r.json();
    (r, j)
}

#[test]
fn read_only_rejects_an_edit_of_a_brought_agent_and_lists_the_denial() {
    let env = brought("write-rejected", "", "");
    let (r, j) = run(&env, &["--access", "read-only", "write it"]);
    assert_eq!(
        (r.code, j["status"].as_str()),
        (0, Some("success")),
        "{j}\n{}",
        r.stderr
    );
    assert_eq!(j["agent"], "mybot");
    assert!(!env.work.join("out.txt").exists());
    let d = j["denials"].as_array().expect("denials");
    assert_eq!(d.len(), 1, "{j}");
    assert!(d[0]["tool"].as_str().unwrap().starts_with("edit"), "{j}");
    // Its own switches reached it; the prompt went over the protocol.
    let argv = fs::read_to_string(env.fake_dir.join("my-acp.argv")).unwrap();
    assert_eq!(argv.trim(), "--flag-of-its-own");
    let sent: Vec<Value> = fs::read_to_string(env.fake_dir.join("sent.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let answer = sent.iter().find(|m| m.get("result").is_some()).unwrap();
    assert_eq!(answer["result"]["outcome"]["optionId"], "reject_once");
}

#[test]
fn workspace_lets_a_brought_agent_edit_inside_the_working_directory() {
    let env = brought("write-allowed", "", "");
    let (r, j) = run(&env, &["--access", "workspace", "write it"]);
    assert_eq!(
        (r.code, j["status"].as_str()),
        (0, Some("success")),
        "{j}\n{}",
        r.stderr
    );
    assert_eq!(j["changed_files"], serde_json::json!(["out.txt"]), "{j}");
    assert_eq!(j["denials"].as_array().map_or(0, Vec::len), 0, "{j}");
}

#[test]
fn full_access_needs_the_entry_to_say_so() {
    let env = brought("plain", "", "");
    let (r, j) = run(&env, &["--access", "full", "hi"]);
    assert_eq!(r.code, 2, "{j}");
    assert_eq!(j["error"]["kind"], "unsupported_access");
    assert!(
        j["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("full_access = true"),
        "{j}"
    );
    assert!(!env.fake_dir.join("my-acp.argv").exists(), "never started");
    let env = brought("plain", "", "full_access = true\n");
    let (r, j) = run(&env, &["--access", "full", "hi"]);
    assert_eq!(
        (r.code, j["status"].as_str()),
        (0, Some("success")),
        "{j}\n{}",
        r.stderr
    );
}

#[test]
fn a_brought_agent_runs_as_a_background_job() {
    let env = brought("plain", "", "");
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
    let id = r.json()["job_id"].as_str().unwrap().to_string();
    let w = env.run(&["wait", &id]);
    let j = w.json();
    assert_eq!(j["status"], "success", "{j}\n{}", w.stderr);
    assert_eq!(j["agent"], "mybot");
    assert_eq!(j["session"], "af4c8f75-a42b-46f5-a391-0dffc6e24872");
}

#[test]
fn dry_run_shows_the_brought_agents_command_and_acp_messages() {
    let env = brought("plain", "", "");
    let (r, j) = run(&env, &["--dry-run", "--access", "read-only", "hi"]);
    assert_eq!(r.code, 0, "{j}\n{}", r.stderr);
    let text = j.to_string();
    assert!(
        text.contains("my-acp") && text.contains("--flag-of-its-own"),
        "{j}"
    );
    let methods: Vec<&str> = j["acp"]["messages"]
        .as_array()
        .expect("acp messages")
        .iter()
        .filter_map(|m| m["method"].as_str())
        .collect();
    assert_eq!(
        methods,
        ["initialize", "session/new", "session/prompt"],
        "{j}"
    );
    assert!(!j["acp"]["policy"].is_null(), "{j}");
}

#[test]
fn agents_lists_a_brought_agent_with_its_transport_and_source() {
    let env = brought("plain", "", "");
    let r = env.run(&["agents"]);
    let j = r.json();
    let row = j["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "mybot")
        .unwrap_or_else(|| panic!("{j}"))
        .clone();
    assert_eq!(row["transports"], serde_json::json!(["acp"]));
    assert_eq!(row["access"], serde_json::json!(["read-only", "workspace"]));
    assert_eq!(row["installed"], true);
    let source = row["source"].as_str().unwrap();
    assert!(
        source.starts_with("user config ") && source.ends_with("user-config.toml:1"),
        "{row}"
    );
    assert_eq!(
        row["command"],
        serde_json::json!(["my-acp", "--flag-of-its-own"])
    );
}

#[test]
fn a_project_file_may_not_bring_an_agent() {
    let env = Env::new();
    env.git_init();
    fs::write(
        env.work.join("baton.toml"),
        "# team settings\n\n[agents.mybot]\ntransport = \"acp\"\ncommand = [\"my-acp\"]\n",
    )
    .unwrap();
    let r = env.run(&["run", "--agent", "codex", "--dry-run", "hi"]);
    let j = r.json();
    assert_eq!(r.code, 2, "{j}");
    assert_eq!(j["error"]["kind"], "config");
    let m = j["error"]["message"].as_str().unwrap();
    assert!(m.contains("baton.toml:3"), "{m}");
    assert!(m.contains("may not add an agent"), "{m}");
}

#[test]
fn a_brought_agent_may_not_shadow_a_built_in_or_carry_a_bad_name_or_command() {
    let env = Env::new();
    env.git_init();
    for (toml, says) in [
        (
            "[agents.glm]\ntransport = \"acp\"\ncommand = [\"x\"]\n",
            "built-in agent zai",
        ),
        (
            "[agents.claude-code]\ntransport = \"acp\"\ncommand = [\"x\"]\n",
            "built-in agent claude",
        ),
        (
            "[agents.\"-yolo\"]\ntransport = \"acp\"\ncommand = [\"x\"]\n",
            "starts with `-`",
        ),
        (
            "[agents.my-bot]\ntransport = \"acp\"\ncommand = [\"--x\"]\n",
            "starts with `-`",
        ),
        (
            "[agents.my-bot]\ntransport = \"acp\"\ncommand = [\"x\", \"a\\nb\"]\n",
            "control character",
        ),
        ("[agents.my-bot]\ncommand = [\"x\"]\n", "unknown agent"),
        ("[agents.my-bot]\ntransport = \"acp\"\n", "needs `command`"),
        (
            "[agents.my-bot]\ntransport = \"headless\"\ncommand = [\"x\"]\n",
            "speaks ACP",
        ),
        (
            "[agents.my-bot]\ntransport = \"acp\"\ncommand = [\"x\"]\nmodel = \"m\"\n",
            "unknown key",
        ),
    ] {
        user_file(&env, toml);
        let r = env.run(&["run", "--agent", "codex", "--dry-run", "hi"]);
        let j = r.json();
        assert_eq!(
            (r.code, j["error"]["kind"].as_str()),
            (2, Some("config")),
            "{toml}: {j}"
        );
        let m = j["error"]["message"].as_str().unwrap();
        assert!(
            m.contains(says) && m.contains("user-config.toml:"),
            "{toml}: {m}"
        );
    }
}

#[test]
fn the_default_agent_may_be_a_brought_one() {
    let env = brought("plain", "", "");
    user_file(
        &env,
        "agent = \"mybot\"\n[agents.mybot]\ntransport = \"acp\"\ncommand = [\"my-acp\"]\n",
    );
    let r = env.run(&["run", "--access", "read-only", "--timeout", "60s", "hello"]);
    let j = r.json();
    assert_eq!(
        (j["status"].as_str(), j["agent"].as_str()),
        (Some("success"), Some("mybot")),
        "{j}\n{}",
        r.stderr
    );
    user_file(&env, "agent = \"nobot\"\n");
    let r = env.run(&["run", "--dry-run", "hello"]);
    assert_eq!(r.json()["error"]["kind"], "config", "{}", r.stdout);
}

#[test]
fn doctor_reports_a_brought_agents_handshake_and_a_silent_one_without_failing() {
    let env = brought("plain", "", "");
    let r = env.run(&["doctor", "--agent", "mybot"]);
    let j = r.json();
    let row = j["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "mybot")
        .unwrap_or_else(|| panic!("{j}"))
        .clone();
    assert_eq!(row["ready"], true, "{j}");
    assert_eq!(row["acp"]["protocol_version"], 1, "{row}");
    assert_eq!(row["acp"]["capabilities"]["loadSession"], true, "{row}");
    assert_eq!(
        row["acp"]["auth_methods"][0]["id"], "copilot-login",
        "{row}"
    );
    assert_eq!(
        row["acp"]["enforceable_access"],
        serde_json::json!(["read-only", "workspace"])
    );
    assert_eq!(r.code, 0, "{j}");

    // One that never answers: reported (within the short timeout), and the
    // rest of doctor's report still comes.
    let env = brought("plain", "--hang-init", "");
    let started = std::time::Instant::now();
    let r = Run::from(
        env.baton()
            .env("BATON_ACP_INIT_TIMEOUT_MS", "1000")
            .args(["doctor", "--agent", "mybot"])
            .output()
            .unwrap(),
    );
    assert!(started.elapsed().as_secs() < 15);
    let j = r.json();
    assert_eq!(j["status"], "failed", "{j}");
    let check = j["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "agent.mybot.acp")
        .unwrap_or_else(|| panic!("{j}"))
        .clone();
    assert_eq!(check["ok"], false);
    assert!(
        check["message"]
            .as_str()
            .unwrap()
            .contains("no answer within"),
        "{check}"
    );
    assert!(
        j["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == "agent.mybot.cli")
    );
}
