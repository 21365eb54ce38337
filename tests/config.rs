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

/// `baton args` with a deadline: a command that blocks (on a FIFO) is
/// killed and the test fails instead of hanging.
fn run_within(env: &Env, args: &[&str], secs: u64) -> Run {
    use std::io::Read;
    let mut child = env
        .baton()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let done = crate::support::wait_for(std::time::Duration::from_secs(secs), || {
        child.try_wait().unwrap().is_some()
    });
    if !done {
        let _ = child.kill();
        let _ = child.wait();
        panic!("`baton {}` did not end within {secs} s", args.join(" "));
    }
    let status = child.wait().unwrap();
    let (mut out, mut err) = (String::new(), String::new());
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    Run {
        code: status.code().unwrap_or(-1),
        stdout: out,
        stderr: err,
    }
}

/// A project `baton.toml` that is not a regular file inside the repository
/// (or is too big) is refused by every command that reads the config,
/// naming the file and why, at once (a FIFO never blocks, `/dev/zero` is
/// never read).
#[test]
fn a_baton_toml_that_is_no_regular_file_in_the_repo_is_refused() {
    let env = Env::new();
    env.git_init();
    let outside = env.tmp.path().join("outside.toml");
    fs::write(&outside, "agent = \"pi\"\n").unwrap();
    let p = env.work.join("baton.toml");
    type Plant = Box<dyn Fn(&std::path::Path)>;
    let cases: Vec<(&str, Plant, &str)> = vec![
        (
            "/dev/zero",
            Box::new(|p| std::os::unix::fs::symlink("/dev/zero", p).unwrap()),
            "symlink to /dev/zero, a character device, not a regular file",
        ),
        (
            "fifo",
            Box::new(|p| {
                let ok = std::process::Command::new("mkfifo")
                    .arg(p)
                    .status()
                    .unwrap()
                    .success();
                assert!(ok, "mkfifo");
            }),
            "it is a FIFO, not a regular file",
        ),
        (
            "outside",
            Box::new(move |p| std::os::unix::fs::symlink(&outside, p).unwrap()),
            "outside the repository",
        ),
        (
            "2 MiB",
            Box::new(|p| fs::write(p, vec![b'#'; 2 << 20]).unwrap()),
            "2097152 bytes, over the 1 MiB a config file may hold",
        ),
    ];
    for (name, plant, why) in &cases {
        plant(&p);
        for args in [
            &["run", "--dry-run", "do it"][..],
            &["ask", "--dry-run", "is it right?"][..],
            &["config", "show"][..],
        ] {
            let r = run_within(&env, args, 20);
            assert_eq!(r.code, 2, "{name} {args:?}: {}\n{}", r.stdout, r.stderr);
            let j = r.json();
            assert_eq!(j["error"]["kind"], "config", "{name} {args:?}: {j}");
            let msg = j["error"]["message"].as_str().unwrap();
            assert!(
                msg.starts_with(&format!("{}: `(file)`: not read: ", p.display())),
                "{name} {args:?}: {msg}"
            );
            assert!(msg.contains(why), "{name} {args:?}: {msg}");
            assert!(
                !j["error"]["hint"].as_str().unwrap_or("").is_empty(),
                "{name} {args:?}: {j}"
            );
        }
        fs::remove_file(&p).unwrap();
    }

    // A link inside the repository to a regular file still works.
    fs::create_dir(env.work.join("conf")).unwrap();
    fs::write(env.work.join("conf/baton.toml"), "agent = \"claude\"\n").unwrap();
    std::os::unix::fs::symlink("conf/baton.toml", &p).unwrap();
    let j = dry_run(&env, &[]);
    assert_eq!(j["agent"], "claude", "{j}");
    let r = run_within(&env, &["config", "show"], 20);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    fake_cli(&env, "codex", "codex/codex-exec-basic.jsonl", None, 0);
    let r = run_within(&env, &["ask", "--dry-run", "is it right?"], 20);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.json()["config_files"][0]
            .as_str()
            .unwrap()
            .ends_with("baton.toml")
    );
}

/// The user file gets the same limits (it may live anywhere).
#[test]
fn a_user_file_that_is_a_fifo_or_too_big_is_refused() {
    let env = Env::new();
    let p = user_file(&env);
    let ok = std::process::Command::new("mkfifo")
        .arg(&p)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let r = run_within(&env, &["config", "show"], 20);
    assert_eq!(r.code, 2, "{}", r.stdout);
    let msg = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(
        msg.contains("user-config.toml: `(file)`: not read: it is a FIFO"),
        "{msg}"
    );
    fs::remove_file(&p).unwrap();
    fs::write(&p, vec![b'#'; 2 << 20]).unwrap();
    let r = run_within(&env, &["run", "--dry-run", "x"], 20);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("over the 1 MiB")
    );
}
