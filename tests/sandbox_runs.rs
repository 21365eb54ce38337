//! baton's sandbox around real runs (`run::confine`): a peer whose CLI has
//! no sandbox of its own (pi, qwen, an ACP agent) runs confined in
//! read-only and workspace access, its test command with no network; codex
//! and claude keep their own (`by: "cli"`); `full` and `--sandbox off` wrap
//! nothing; the result, `--dry-run` and the argv each agent gets say which.
//!
//! The fakes here write what they saw into the workspace or into their
//! agent's own state directory (both writable under the sandbox), never
//! into `$FAKE_DIR`, which the sandbox keeps read-only.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{Env, Run, fixture, git};

/// Whether this machine has a backend for baton's sandbox (either kind):
/// the checks and the skip rules of `tests/sandbox.rs`.
fn available() -> bool {
    crate::sandbox::works("bwrap") || crate::sandbox::works("landlock")
}

/// An env with a git repository, a home of its own (secrets in it), and
/// `BATON_SANDBOX` as given.
fn env() -> (Env, PathBuf) {
    let env = Env::new();
    env.git_init();
    let home = env.tmp.path().join("home");
    fs::create_dir_all(home.join(".ssh")).unwrap();
    fs::write(home.join(".ssh/id_ed25519"), "SECRET-KEY\n").unwrap();
    fs::create_dir_all(home.join(".codex")).unwrap();
    fs::write(
        home.join(".codex/auth.json"),
        "{\"token\":\"CODEX-SECRET\"}",
    )
    .unwrap();
    (env, home)
}

fn run(env: &Env, home: &Path, sandbox: &str, args: &[&str]) -> (Run, Value) {
    let r = Run::from(
        env.baton()
            .env("HOME", home)
            .env("BATON_SANDBOX", sandbox)
            .args(args)
            .output()
            .unwrap(),
    );
    let j = r.json();
    (r, j)
}

/// A fake pi that tries what a hostile peer would and writes what happened
/// to `report.txt` in its cwd, then prints a recorded pi answer.
fn hostile_pi(env: &Env, outside: &Path) {
    let answer = fixture("pi/pi-json-basic.jsonl");
    env.fake(
        "pi",
        &format!(
            r##"cat > /dev/null
r=report.txt
try() {{ if eval "$2" 2>/dev/null; then echo "$1=yes" >> $r; else echo "$1=no" >> $r; fi; }}
try write_cwd 'echo x > ./inside.txt'
try write_outside 'echo x > {outside}/planted.txt'
try write_home 'echo x > "$HOME/planted.txt"'
try read_ssh 'cat "$HOME/.ssh/id_ed25519" | grep -q SECRET'
try read_codex_login 'cat "$HOME/.codex/auth.json" | grep -q CODEX'
try write_state 'mkdir -p "$HOME/.pi/agent" && echo s > "$HOME/.pi/agent/session.jsonl"'
try git_hooks 'echo "#!/bin/sh" > .git/hooks/pre-commit'
echo "marker=${{BATON_SANDBOXED:-}}" >> $r
# Outlive the run: a new session, double fork, environment cleared.
setsid sh -c 'sleep 2; echo late > "{outside}/late.txt"' > /dev/null 2>&1 &
cat '{answer}'"##,
            outside = outside.display(),
            answer = answer.display(),
        ),
    );
}

fn report(env: &Env) -> String {
    fs::read_to_string(env.work.join("report.txt")).unwrap_or_default()
}

#[test]
fn a_pi_peer_in_workspace_access_writes_its_checkout_and_nothing_else() {
    if !available() {
        return;
    }
    let (env, home) = env();
    let outside = env.tmp.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    hostile_pi(&env, &outside);
    let (r, j) = run(&env, &home, "require", &["run", "--agent", "pi", "do it"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let by = j["sandbox"]["by"].as_str().unwrap();
    assert!(by == "baton-bwrap" || by == "baton-landlock", "{j}");
    let rep = report(&env);
    for line in [
        "write_cwd=yes",
        "write_outside=no",
        "write_home=no",
        "read_ssh=no",
        "read_codex_login=no",
        "write_state=yes",
    ] {
        assert!(rep.contains(line), "{line} in:\n{rep}");
    }
    // Landlock cannot keep `.git/hooks` inside a writable checkout
    // read-only; the result must say so. bubblewrap binds it read-only.
    let gap = j["sandbox"]["degraded"]
        .as_array()
        .is_some_and(|d| d.iter().any(|x| x == "git_metadata_writable"));
    assert_eq!(gap, by == "baton-landlock", "{j}");
    let hooks = if gap { "git_hooks=yes" } else { "git_hooks=no" };
    assert!(rep.contains(hooks), "{hooks} in:\n{rep}");
    assert!(rep.contains(&format!("marker={by}")), "{rep}");
    assert!(!outside.join("planted.txt").exists());
    assert!(!home.join("planted.txt").exists());
    // pi's "not confined" warning is gone: the sandbox holds the workspace.
    assert!(
        !j["warnings"].to_string().contains("pi has no sandbox"),
        "{j}"
    );
    // The escapee ends with the run under bubblewrap's PID namespace.
    if by == "baton-bwrap" {
        std::thread::sleep(std::time::Duration::from_secs(3));
        assert!(
            !outside.join("late.txt").exists(),
            "a setsid child outlived the sandboxed run"
        );
    }
}

#[test]
fn read_only_access_is_held_by_the_file_system() {
    if !available() {
        return;
    }
    let (env, home) = env();
    let outside = env.tmp.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    // The report goes to the agent's state directory (writable in every
    // mode); the checkout is not.
    let answer = fixture("pi/pi-json-basic.jsonl");
    env.fake(
        "pi",
        &format!(
            "cat > /dev/null\nmkdir -p \"$HOME/.pi/agent\"\nprintf '%s\\n' \"$@\" > \"$HOME/.pi/agent/argv\"\nif echo x > ./inside.txt 2>/dev/null; then echo cwd=yes; else echo cwd=no; fi > \"$HOME/.pi/agent/report\"\ncat '{}'",
            answer.display()
        ),
    );
    let (r, j) = run(
        &env,
        &home,
        "require",
        &["run", "--agent", "pi", "--read-only", "look"],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_ne!(j["sandbox"]["by"], "none", "{j}");
    assert_eq!(
        fs::read_to_string(home.join(".pi/agent/report")).unwrap(),
        "cwd=no\n"
    );
    assert!(!env.work.join("inside.txt").exists());
    // The file system holds it, not a tool list: pi keeps its shell.
    let argv = fs::read_to_string(home.join(".pi/agent/argv")).unwrap();
    assert!(!argv.contains("--tools"), "{argv}");
}

#[test]
fn off_and_full_access_wrap_nothing_and_say_so() {
    let (env, home) = env();
    let outside = env.tmp.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    hostile_pi(&env, &outside);
    let (r, j) = run(&env, &home, "off", &["run", "--agent", "pi", "do it"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(j["sandbox"]["by"], "none", "{j}");
    assert!(report(&env).contains("write_outside=yes"));
    assert!(
        j["warnings"].to_string().contains("pi has no sandbox"),
        "{j}"
    );
    fs::remove_file(env.work.join("report.txt")).unwrap();
    let (r, j) = run(
        &env,
        &home,
        "require",
        &["run", "--agent", "pi", "--full-access", "do it"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(j["sandbox"]["by"], "none", "{j}");
    assert!(report(&env).contains("write_outside=yes"));
}

#[test]
fn codex_keeps_its_own_sandbox() {
    let (env, home) = env();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    let (r, j) = run(&env, &home, "require", &["run", "--agent", "codex", "hi"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(j["sandbox"]["by"], "cli", "{j}");
    // Nothing put in front of codex's own argv.
    assert_eq!(env.argv("codex")[0], "exec");
}

#[test]
fn qwen_confined_may_run_its_shell_and_unconfined_may_not() {
    if !available() {
        return;
    }
    let (env, home) = env();
    let answer = fixture("qwen/qwen-stream-plain.jsonl");
    env.fake(
        "qwen",
        &format!(
            "cat > /dev/null\nmkdir -p \"$HOME/.qwen\"\nprintf '%s\\n' \"$@\" > \"$HOME/.qwen/argv\"\ncat '{}'",
            answer.display()
        ),
    );
    let (r, j) = run(
        &env,
        &home,
        "require",
        &["run", "--agent", "qwen", "test it"],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let argv = fs::read_to_string(home.join(".qwen/argv")).unwrap();
    assert!(argv.contains("--approval-mode\nyolo\n"), "{argv}");
    assert!(!j["warnings"].to_string().contains("declines shell"), "{j}");
    let (_, j) = run(&env, &home, "off", &["run", "--agent", "qwen", "test it"]);
    let argv = fs::read_to_string(home.join(".qwen/argv")).unwrap();
    assert!(argv.contains("--approval-mode\nauto-edit\n"), "{argv}");
    assert!(j["warnings"].to_string().contains("declines shell"), "{j}");
}

#[test]
fn an_acp_agent_under_the_sandbox_may_execute_in_workspace_access() {
    if !available() {
        return;
    }
    let (env, home) = env();
    let rec = fixture("acp/copilot/bash-rejected.acp");
    let fake = crate::support::acp::fake_acp(&env.fake_dir);
    // copilot's state directory (COPILOT_HOME) is writable under the
    // sandbox: the fake records what baton sent there.
    let state = home.join(".copilot");
    env.fake(
        "copilot",
        &format!(
            "exec {fake} '{}' --any-answer --record \"$COPILOT_HOME/sent.jsonl\"",
            rec.display()
        ),
    );
    let r = Run::from(
        env.baton()
            .env("HOME", &home)
            .env("COPILOT_HOME", &state)
            .env("BATON_SANDBOX", "require")
            .args([
                "run",
                "--agent",
                "copilot",
                "--timeout",
                "60s",
                "run the check",
            ])
            .output()
            .unwrap(),
    );
    let j = r.json();
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_ne!(j["sandbox"]["by"], "none", "{j}");
    assert!(j.get("denials").is_none(), "{j}");
    let sent = fs::read_to_string(state.join("sent.jsonl")).unwrap();
    let answer: Value = sent
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|m| m.get("result").is_some())
        .unwrap();
    assert_eq!(
        answer["result"]["outcome"]["optionId"], "allow_once",
        "{sent}"
    );
    // Unconfined, the same request is refused, as before.
    let r = Run::from(
        env.baton()
            .env("HOME", &home)
            .env("COPILOT_HOME", &state)
            .env("BATON_SANDBOX", "off")
            .args([
                "run",
                "--agent",
                "copilot",
                "--timeout",
                "60s",
                "run the check",
            ])
            .output()
            .unwrap(),
    );
    let j = r.json();
    assert!(
        j["denials"][0]["tool"]
            .as_str()
            .unwrap()
            .starts_with("execute"),
        "{j}"
    );
    // Read-only under the sandbox is held by the file system: the command
    // is let through as in workspace access (it cannot write the checkout).
    fs::remove_file(state.join("sent.jsonl")).unwrap();
    let r = Run::from(
        env.baton()
            .env("HOME", &home)
            .env("COPILOT_HOME", &state)
            .env("BATON_SANDBOX", "require")
            .args([
                "run",
                "--agent",
                "copilot",
                "--read-only",
                "--timeout",
                "60s",
                "run the check",
            ])
            .output()
            .unwrap(),
    );
    let j = r.json();
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(j.get("denials").is_none(), "{j}");
    let sent = fs::read_to_string(state.join("sent.jsonl")).unwrap();
    assert!(sent.contains("\"optionId\":\"allow_once\""), "{sent}");
}

#[test]
fn dry_run_shows_the_wrapped_argv() {
    if !available() {
        return;
    }
    let (env, home) = env();
    env.replay("pi", "pi/pi-json-basic.jsonl", 0);
    let (r, j) = run(
        &env,
        &home,
        "require",
        &["run", "--agent", "pi", "--dry-run", "do it"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let s = &j["sandbox"];
    let argv: Vec<&str> = s["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let last = argv.iter().rposition(|a| *a == "pi").unwrap();
    assert!(last > 0, "pi is wrapped: {argv:?}");
    assert!(
        argv[0].ends_with("bwrap") || argv.contains(&"__sandbox-exec"),
        "{argv:?}"
    );
    assert!(!env.called("pi"), "a dry run starts nothing");
    // Off: the argv as it is.
    let (_, j) = run(
        &env,
        &home,
        "off",
        &["run", "--agent", "pi", "--dry-run", "x"],
    );
    assert_eq!(j["sandbox"]["by"], "none");
    assert_eq!(j["sandbox"]["argv"][0], "pi");
}

#[test]
fn a_bad_setting_and_a_project_file_turning_it_off_are_refused() {
    let (env, home) = env();
    env.replay("pi", "pi/pi-json-basic.jsonl", 0);
    let (r, j) = run(&env, &home, "maybe", &["run", "--agent", "pi", "x"]);
    assert_eq!(r.code, 2, "{j}");
    assert_eq!(j["error"]["kind"], "config", "{j}");
    assert!(!env.called("pi"));
    let (r, j) = run(
        &env,
        &home,
        "auto",
        &["run", "--agent", "pi", "--sandbox", "sometimes", "x"],
    );
    assert_eq!(r.code, 2, "{j}");
    assert_eq!(j["error"]["kind"], "usage", "{j}");
    fs::write(env.work.join("baton.toml"), "[run]\nsandbox = \"off\"\n").unwrap();
    git(&env.work, &["add", "baton.toml"]);
    let r = Run::from(
        env.baton()
            .env("HOME", &home)
            .env_remove("BATON_SANDBOX")
            .args(["run", "--agent", "pi", "x"])
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stdout.contains("may not turn baton's sandbox off"),
        "{}",
        r.stdout
    );
    assert!(!env.called("pi"));
}

#[test]
fn the_test_command_runs_confined_with_no_network() {
    if !available() {
        return;
    }
    let (env, home) = env();
    let outside = env.tmp.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let answer = fixture("pi/pi-json-basic.jsonl");
    env.fake(
        "pi",
        &format!(
            "cat > /dev/null\necho change > change.txt\ncat '{}'",
            answer.display()
        ),
    );
    let test = format!(
        "touch made-by-test; \
         if echo x > {out}/planted.txt 2>/dev/null; then echo outside=yes; else echo outside=no; fi; \
         if python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2)' 2>/dev/null; \
         then echo net=yes; else echo net=no; fi",
        out = outside.display()
    );
    let (r, j) = run(
        &env,
        &home,
        "require",
        &[
            "run",
            "--agent",
            "pi",
            "--worktree",
            "--test-cmd",
            &test,
            "change it",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v = &j["verification"];
    assert_eq!(v["passed"], true, "{j}");
    assert_eq!(v["sandbox"]["network"], "none", "{j}");
    assert_ne!(v["sandbox"]["by"], "none", "{j}");
    let tail = v["output_tail"].as_str().unwrap();
    assert!(
        tail.contains("outside=no") && tail.contains("net=no"),
        "{tail}"
    );
    assert!(!outside.join("planted.txt").exists());
    // Off: the same command reaches both (what the sandbox takes away).
    let (_, j) = run(
        &env,
        &home,
        "off",
        &[
            "run",
            "--agent",
            "pi",
            "--worktree",
            "--test-cmd",
            &test,
            "change it",
        ],
    );
    let tail = j["verification"]["output_tail"].as_str().unwrap();
    assert!(
        tail.contains("outside=yes") && tail.contains("net=yes"),
        "{tail}"
    );
    assert_eq!(j["verification"]["sandbox"]["by"], "none", "{j}");
    drop(listener);
}

#[test]
fn network_none_keeps_a_confined_peer_off_every_address_and_needs_the_sandbox() {
    if !available() {
        return;
    }
    let (env, home) = env();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let answer = fixture("pi/pi-json-basic.jsonl");
    env.fake(
        "pi",
        &format!(
            "cat > /dev/null\nif python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2)' 2>/dev/null; then echo net=yes; else echo net=no; fi > net.txt\ncat '{}'",
            answer.display()
        ),
    );
    let (r, j) = run(
        &env,
        &home,
        "require",
        &["run", "--agent", "pi", "--network", "none", "x"],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(j["sandbox"]["network"], "none", "{j}");
    assert_eq!(
        fs::read_to_string(env.work.join("net.txt")).unwrap(),
        "net=no\n"
    );
    let (r, j) = run(&env, &home, "require", &["run", "--agent", "pi", "x"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(j["sandbox"]["network"], "all", "{j}");
    assert_eq!(
        fs::read_to_string(env.work.join("net.txt")).unwrap(),
        "net=yes\n"
    );
    // Only baton's sandbox can hold it.
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    for args in [
        vec!["run", "--agent", "codex", "--network", "none", "x"],
        vec![
            "run",
            "--agent",
            "pi",
            "--full-access",
            "--network",
            "none",
            "x",
        ],
        vec!["run", "--agent", "pi", "--network", "some", "x"],
    ] {
        let (r, j) = run(&env, &home, "require", &args);
        assert_eq!(
            (r.code, j["error"]["kind"].as_str()),
            (2, Some("usage")),
            "{args:?}: {j}"
        );
    }
    drop(listener);
}

/// `ask --sandbox` picks the advisers' sandbox as `run --sandbox` does,
/// over the environment's `BATON_SANDBOX`.
#[test]
fn ask_takes_the_sandbox_flag() {
    if !available() {
        return;
    }
    let (env, home) = env();
    env.replay("pi", "pi/pi-json-basic.jsonl", 0);
    let by = |flag: &str, var: &str| {
        let (r, j) = run(
            &env,
            &home,
            var,
            &[
                "ask",
                "--agent",
                "pi",
                "--sandbox",
                flag,
                "--dry-run",
                "why",
            ],
        );
        assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
        j["advisers"][0]["sandbox"]["by"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_ne!(by("require", "off"), "none");
    assert_eq!(by("off", "require"), "none");
    // An adviser keeps its CLI's read-only tool switches under baton's
    // sandbox too (`Plan::adviser`), where `run --read-only` drops them.
    let argv = |args: &[&str]| {
        let (r, j) = run(&env, &home, "require", args);
        assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
        assert!(
            j.to_string().contains("baton-"),
            "not under baton's sandbox: {j}"
        );
        j.to_string()
    };
    let repo = argv(&[
        "ask",
        "--agent",
        "pi",
        "--scope",
        "repo",
        "--dry-run",
        "why",
    ]);
    assert!(repo.contains(r#""--tools","read,grep,find,ls""#), "{repo}");
    let packet = argv(&["ask", "--agent", "pi", "--dry-run", "why"]);
    assert!(packet.contains(r#""--no-tools""#), "{packet}");
    let ro = argv(&["run", "--agent", "pi", "--read-only", "--dry-run", "why"]);
    assert!(!ro.contains(r#""--tools""#), "{ro}");
    let (r, j) = run(
        &env,
        &home,
        "off",
        &["ask", "--agent", "pi", "--sandbox", "sometimes", "why"],
    );
    assert_eq!(r.code, 2, "{j}");
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--sandbox"),
        "{j}"
    );
}
