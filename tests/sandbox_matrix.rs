//! The hostile peer (`tests/support/hostile.py`) run AS each agent baton
//! confines, in read-only and workspace access, through `baton run` (issue
//! 31 part 3): the sandbox each agent's plan builds (its state directories,
//! its grants, the secrets it hides) holds the same line for all of them.
//! tests/sandbox.rs drives the sandbox helper directly with every attempt;
//! this file proves no agent's plan opens a hole the helper would close.

use std::fs;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::{Env, Run, fixture};

/// What must fail for every agent in every mode.
const REFUSED: &[&str] = &[
    "write_home",
    "write_sibling",
    "symlink_escape",
    "hardlink_escape",
    "rename_escape",
    "git_hooks",
    "git_config",
    "read_ssh",
    "read_other_logins",
    "read_environ",
    "kill",
    "ptrace",
    "syscalls",
    "tiocsti",
    "unshare_user",
    "inner_bwrap",
];

/// hostile.py as `agent`'s binary, run by `baton run --agent agent --access
/// mode` under baton's sandbox: the attempts' outcomes, from the run's raw
/// output.
fn attack(agent: &str, binary: &str, mode: &str) -> (Value, Value) {
    let env = Env::new();
    env.git_init();
    fs::write(env.work.join("README"), "the user's checkout\n").unwrap();
    let root = env.tmp.path();
    let home = root.join("home");
    let sibling = root.join("sibling");
    for d in [
        home.join(".ssh"),
        home.join(".codex"),
        home.join(".claude"),
        sibling.clone(),
    ] {
        fs::create_dir_all(d).unwrap();
    }
    fs::write(home.join(".ssh/id_ed25519"), "SECRET key\n").unwrap();
    // Logins of agents that are never this one (codex and claude are not
    // confined by baton, so never the agent under test).
    let logins = [
        home.join(".codex/auth.json"),
        home.join(".claude/.credentials.json"),
    ];
    for l in &logins {
        fs::write(l, "{\"token\":\"SECRET\"}").unwrap();
    }
    fs::write(sibling.join("outside.txt"), "outside\n").unwrap();
    let mut victim = Command::new("sleep")
        .arg("120")
        .env("VICTIM_SECRET", "1")
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let cfg = json!({
        "home": home, "user_checkout": env.work, "checkout": env.work,
        "sibling": sibling, "outside_file": sibling.join("outside.txt"),
        "tmp": "$TMPDIR", "victim_pid": victim.id(),
        "port": port.local_addr().unwrap().port(),
        "other_logins": logins, "deadline": 50,
    });
    let only = REFUSED
        .iter()
        .chain(&["write_checkout", "write_tmp", "read_repo"])
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    env.fake(
        binary,
        &format!(
            "exec python3 '{}' '{}' {only} < /dev/null",
            fixture("../support/hostile.py").display(),
            cfg
        ),
    );
    let r = Run::from(
        env.baton()
            .env("HOME", &home)
            .env("BATON_SANDBOX", "require")
            .args([
                "run",
                "--agent",
                agent,
                "--access",
                mode,
                "--timeout",
                "90s",
                "attack",
            ])
            .output()
            .unwrap(),
    );
    let _ = victim.kill();
    let _ = victim.wait();
    let j = r.json();
    assert!(
        matches!(
            j["sandbox"]["by"].as_str(),
            Some("baton-bwrap" | "baton-landlock")
        ),
        "{agent} {mode}: not under baton's sandbox: {j}"
    );
    let log = j["log_path"]
        .as_str()
        .unwrap_or_else(|| panic!("{agent} {mode}: no log_path: {j}"));
    let raw = fs::read_to_string(log).unwrap();
    let found = raw
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v.get("write_home").is_some())
        .unwrap_or_else(|| panic!("{agent} {mode}: no report in\n{raw}\n{j}"));
    // Nothing reached the host, whatever the report says.
    assert!(!home.join("planted").exists(), "{agent} {mode}");
    assert!(!sibling.join("planted").exists(), "{agent} {mode}");
    assert!(
        !env.work.join(".git/hooks/post-checkout").exists(),
        "{agent} {mode}"
    );
    assert_eq!(
        fs::read_to_string(sibling.join("outside.txt")).unwrap(),
        "outside\n"
    );
    (j, found)
}

fn holds_for(agent: &str, binary: &str) {
    if !(crate::sandbox::works("bwrap") || crate::sandbox::works("landlock")) {
        return;
    }
    for mode in ["read-only", "workspace"] {
        let (_, r) = attack(agent, binary, mode);
        assert!(
            r.get("timeout").is_none(),
            "{agent} {mode}: hostile.py hung: {r}"
        );
        for name in REFUSED {
            assert_eq!(
                r[*name]["done"], false,
                "{agent} {mode}: {name} got through: {}",
                r[*name]
            );
        }
        assert_eq!(
            r["write_tmp"]["done"], true,
            "{agent} {mode}: {}",
            r["write_tmp"]
        );
        assert_eq!(
            r["read_repo"]["done"], true,
            "{agent} {mode}: {}",
            r["read_repo"]
        );
        assert_eq!(
            r["write_checkout"]["done"],
            mode == "workspace",
            "{agent} {mode}: {}",
            r["write_checkout"]
        );
    }
}

macro_rules! matrix {
    ($($test:ident => $agent:literal as $binary:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                holds_for($agent, $binary);
            }
        )*
    };
}

matrix! {
    pi_holds => "pi" as "pi",
    zai_holds => "zai" as "pi",
    opencode_holds => "opencode" as "opencode",
    qwen_holds => "qwen" as "qwen",
    gemini_cli_holds => "gemini-cli" as "gemini",
    copilot_holds => "copilot" as "copilot",
    kilo_holds => "kilo" as "kilo",
    cline_holds => "cline" as "cline",
    nanocoder_holds => "nanocoder" as "nanocoder",
}

/// The same peer as a test command (`--test-cmd`, in the fresh checkout of
/// a worktree run): it may write that checkout, nothing of the user's.
#[test]
fn a_test_command_holds() {
    if !(crate::sandbox::works("bwrap") || crate::sandbox::works("landlock")) {
        return;
    }
    let env = Env::new();
    env.git_init();
    fs::write(env.work.join("README"), "the user's checkout\n").unwrap();
    let root = env.tmp.path();
    let (home, sibling) = (root.join("home"), root.join("sibling"));
    for d in [home.join(".ssh"), home.join(".codex"), sibling.clone()] {
        fs::create_dir_all(d).unwrap();
    }
    fs::write(home.join(".ssh/id_ed25519"), "SECRET key\n").unwrap();
    fs::write(home.join(".codex/auth.json"), "{\"token\":\"SECRET\"}").unwrap();
    fs::write(sibling.join("outside.txt"), "outside\n").unwrap();
    let answer = fixture("pi/pi-json-basic.jsonl");
    env.fake(
        "pi",
        &format!(
            "cat > /dev/null\necho change > change.txt\ncat '{}'",
            answer.display()
        ),
    );
    let mut victim = Command::new("sleep")
        .arg("120")
        .env("VICTIM_SECRET", "1")
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let cfg = json!({
        "home": home, "user_checkout": env.work, "checkout": ".",
        "sibling": sibling, "outside_file": sibling.join("outside.txt"),
        "tmp": "$TMPDIR", "victim_pid": victim.id(), "port": 9,
        "other_logins": [home.join(".codex/auth.json")], "deadline": 50,
    });
    let only: Vec<&str> = REFUSED
        .iter()
        .copied()
        .chain([
            "write_user_checkout",
            "write_checkout",
            "write_tmp",
            "read_repo",
        ])
        .collect();
    let test = format!(
        "python3 '{}' '{}' {}",
        fixture("../support/hostile.py").display(),
        cfg,
        only.join(" ")
    );
    let r = Run::from(
        env.baton()
            .env("HOME", &home)
            .env("BATON_SANDBOX", "require")
            .args([
                "run",
                "--agent",
                "pi",
                "--worktree",
                "--test-cmd",
                &test,
                "change it",
            ])
            .output()
            .unwrap(),
    );
    let _ = victim.kill();
    let _ = victim.wait();
    let j = r.json();
    let v = &j["verification"];
    assert_ne!(v["sandbox"]["by"], "none", "{j}");
    let tail = v["output_tail"].as_str().unwrap_or_default();
    let rep: Value = tail
        .lines()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no report in the test's output: {j}"));
    for name in REFUSED.iter().chain(&["write_user_checkout"]) {
        assert_eq!(
            rep[*name]["done"], false,
            "test command: {name} got through: {}",
            rep[*name]
        );
    }
    for name in ["write_checkout", "write_tmp", "read_repo"] {
        assert_eq!(
            rep[name]["done"], true,
            "test command: {name}: {}",
            rep[name]
        );
    }
    assert!(!env.work.join("planted").exists());
    assert!(!home.join("planted").exists());
}
