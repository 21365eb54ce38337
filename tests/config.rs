//! Config files end to end: `baton config show|path|init`, the defaults they
//! give `baton run` (flags still win), and the errors of a bad file.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use crate::run::fake_cli;
use crate::support::{Env, Run};

fn user_file(env: &Env) -> std::path::PathBuf {
    env.tmp.path().join("user-config.toml")
}

fn dry_run(env: &Env, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["run", "--dry-run"];
    all.extend_from_slice(args);
    all.push("do it");
    let r = env.run(&all);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    r.json()
}

#[test]
fn run_takes_its_defaults_from_the_config_and_flags_win() {
    let env = Env::new();
    env.git_init();
    fs::write(
        user_file(&env),
        "agent = \"pi\"\n[run]\ntimeout = \"5m\"\n[agents.claude]\nmodel = \"haiku\"\neffort = \"low\"\n",
    )
    .unwrap();
    fs::write(
        env.work.join("baton.toml"),
        "agent = \"claude\"\n[run]\naccess = \"read-only\"\n",
    )
    .unwrap();
    let j = dry_run(&env, &[]);
    assert_eq!(j["agent"], "claude", "project file beats user file");
    assert_eq!(j["model"], "haiku");
    assert_eq!(j["effort"], "low");
    assert_eq!(j["access"], "read-only");
    assert_eq!(j["timeout_ms"], 300_000);
    let files: Vec<String> = serde_json::from_value(j["config_files"].clone()).unwrap();
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(files[0].ends_with("baton.toml") && files[1].ends_with("user-config.toml"));

    // Flags win over every file.
    let j = dry_run(
        &env,
        &[
            "--agent",
            "claude",
            "--model",
            "opus",
            "--access",
            "workspace",
            "--timeout",
            "9s",
        ],
    );
    assert_eq!(j["model"], "opus");
    assert_eq!(j["access"], "workspace");
    assert_eq!(j["timeout_ms"], 9000);

    // The environment beats the files, and loses to flags.
    let out = env
        .baton()
        .env("BATON_AGENT", "codex")
        .env("BATON_TIMEOUT", "7s")
        .args(["run", "--dry-run", "do it"])
        .output()
        .unwrap();
    let j = Run::from(out).json();
    assert_eq!(j["agent"], "codex");
    assert_eq!(j["timeout_ms"], 7000);
    assert_eq!(j["access"], "read-only", "still from the project file");
}

#[test]
fn a_bad_config_file_stops_run_with_file_line_and_key() {
    let env = Env::new();
    fs::write(
        user_file(&env),
        "agent = \"codex\"\n\n[run]\ntimeuot = \"5m\"\n",
    )
    .unwrap();
    let r = env.run(&["run", "--dry-run", "do it"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    let j = r.json();
    assert_eq!(j["error"]["kind"], "config");
    let msg = j["error"]["message"].as_str().unwrap();
    assert!(msg.contains("user-config.toml:4"), "{msg}");
    assert!(msg.contains("`run.timeuot`: unknown key"), "{msg}");
    assert!(j["error"]["hint"].as_str().unwrap().contains("timeout"));

    // A bad value in the project file, with the same precision.
    let env = Env::new();
    env.git_init();
    fs::write(
        env.work.join("baton.toml"),
        "[agents.codex]\neffort = \"huge\"\n",
    )
    .unwrap();
    let r = env.run(&["run", "--dry-run", "do it"]);
    assert_eq!(r.code, 2);
    let msg = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(msg.contains("baton.toml:2: `agents.codex.effort`"), "{msg}");
}

#[test]
fn show_lists_every_value_with_its_source() {
    let env = Env::new();
    env.git_init();
    fs::write(user_file(&env), "[agents.pi]\nprovider = \"anthropic\"\n").unwrap();
    fs::write(env.work.join("baton.toml"), "[ask]\nscope = \"repo\"\n").unwrap();
    let out = env
        .baton()
        .env("BATON_MODEL", "m-1")
        .args(["config", "show"])
        .output()
        .unwrap();
    let j = Run::from(out).json();
    let find = |key: &str| {
        j["values"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["key"] == key)
            .unwrap_or_else(|| panic!("no {key} in {j}"))
            .clone()
    };
    assert_eq!(find("agents.pi.provider")["value"], "anthropic");
    assert!(
        find("agents.pi.provider")["source"]
            .as_str()
            .unwrap()
            .starts_with("user ")
    );
    assert!(
        find("ask.scope")["source"]
            .as_str()
            .unwrap()
            .starts_with("project ")
    );
    assert_eq!(find("agents.claude.model")["source"], "env BATON_MODEL");
    assert_eq!(find("run.timeout")["source"], "default");
    assert_eq!(j["files"].as_array().unwrap().len(), 2);

    let r = env.run(&["config", "show", "--text"]);
    assert!(r.stdout.contains("ask.scope"), "{}", r.stdout);
    assert!(r.stdout.contains("# project "), "{}", r.stdout);
}

#[test]
fn init_writes_a_private_template_once() {
    let env = Env::new();
    let r = env.run(&["config", "init"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let path = user_file(&env);
    let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains("# agent = \"codex\""));
    // The template parses and changes nothing.
    let r = env.run(&["config", "show"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Never over an existing file.
    fs::write(&path, "agent = \"claude\"\n").unwrap();
    let r = env.run(&["config", "init"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.json()["error"]["kind"], "config_exists");
    assert_eq!(fs::read_to_string(&path).unwrap(), "agent = \"claude\"\n");

    // --project writes baton.toml at the repository root.
    env.git_init();
    fs::create_dir_all(env.work.join("sub")).unwrap();
    let r = Run::from(
        env.baton()
            .current_dir(env.work.join("sub"))
            .args(["config", "init", "--project"])
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(env.work.join("baton.toml").is_file());
}

#[test]
fn path_names_both_files_even_when_one_is_broken() {
    let env = Env::new();
    fs::write(user_file(&env), "this is not toml").unwrap();
    let r = env.run(&["config", "path"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let j = r.json();
    let paths: Vec<String> = j["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    assert!(paths.iter().any(|p| p.ends_with("baton.toml")));
    assert!(paths.iter().any(|p| p.ends_with("user-config.toml")));
}

#[test]
fn a_pinned_command_starts_the_cli() {
    let env = Env::new();
    // A "runtime" that records its argv and replays a claude transcript.
    fake_cli(&env, "runtime", "claude/claude-stream.jsonl", None, 0);
    let runtime = env.bin.join("runtime");
    fs::write(
        user_file(&env),
        format!(
            "[agents.claude]\ncommand = [\"{}\", \"/opt/claude/cli.js\"]\n",
            runtime.display()
        ),
    )
    .unwrap();
    let j = dry_run(&env, &["--agent", "claude"]);
    assert_eq!(j["program"], runtime.display().to_string());
    assert_eq!(j["argv"][1], "/opt/claude/cli.js");
    assert_eq!(j["argv"][2], "-p");

    let r = env.run(&["run", "--agent", "claude", "say hi"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let argv = env.argv("runtime");
    assert_eq!(argv[0], "/opt/claude/cli.js");
    assert_eq!(argv[1], "-p");
    assert!(!env.called("claude"));
}

#[test]
fn ask_takes_its_adviser_scope_and_model_from_the_config() {
    let env = Env::new();
    env.git_init();
    fake_cli(&env, "claude", "claude/claude-stream.jsonl", None, 0);
    fake_cli(&env, "codex", "codex/codex-exec-basic.jsonl", None, 0);
    fs::write(
        user_file(&env),
        "[ask]\nagent = \"claude\"\nscope = \"repo\"\n[agents.claude]\nmodel = \"haiku\"\n",
    )
    .unwrap();
    let r = env.run(&["ask", "--dry-run", "is this right?"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["context"]["scope"], "repo", "{j}");
    assert_eq!(j["advisers"][0]["agent"], "claude");
    assert_eq!(j["advisers"][0]["model"], "haiku");
    assert_eq!(j["config_files"].as_array().unwrap().len(), 1);
    // Flags win.
    let r = env.run(&[
        "ask",
        "--dry-run",
        "--agent",
        "codex",
        "--scope",
        "packet",
        "is it?",
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["context"]["scope"], "packet");
    assert_eq!(j["advisers"][0]["agent"], "codex");
}
