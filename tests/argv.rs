//! Values that reach a peer CLI's argv (model, effort, profile, provider,
//! session id) are checked in one place, whatever their source: every agent
//! × every source (flag, `BATON_*`, user file, project `baton.toml`, a job's
//! recorded session), through `run`, `run --async`, `ask`, `continue`,
//! `attach` and `doctor --probe`. A refused value names its source, and the
//! fake CLI (which logs every call) is never started.

use std::fs;

use serde_json::Value;

use crate::support::{Env, Run, fixture};

/// (agent, its binary)
const AGENTS: [(&str, &str); 8] = [
    ("codex", "codex"),
    ("claude", "claude"),
    ("gemini", "agy"),
    ("zai", "pi"),
    ("pi", "pi"),
    ("gemini-cli", "gemini"),
    ("opencode", "opencode"),
    ("qwen", "qwen"),
];

#[derive(Clone, Copy, Debug)]
enum Source {
    Flag,
    Env,
    User,
    Project,
}

const SOURCES: [Source; 4] = [Source::Flag, Source::Env, Source::User, Source::Project];

/// A fake CLI that logs each call's arguments (one line per call) and exits.
fn logging_fake(env: &Env, bin: &str) {
    env.fake(
        bin,
        &format!("printf '%s\\n' \"$*\" >> \"$FAKE_DIR/{bin}.calls\"\ncat > /dev/null || true"),
    );
}

fn calls(env: &Env, bin: &str) -> Vec<String> {
    fs::read_to_string(env.fake_dir.join(format!("{bin}.calls")))
        .map(|s| s.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

fn forget_calls(env: &Env, bin: &str) {
    let _ = fs::remove_file(env.fake_dir.join(format!("{bin}.calls")));
}

/// `baton ARGS` with `key` (a config leaf such as `model`) set to `value`
/// for `agent` from `source`; the run's outcome.
fn with_value(
    env: &Env,
    source: Source,
    agent: &str,
    key: &str,
    value: &str,
    args: &[&str],
    flag: &str,
) -> Run {
    let user = env.tmp.path().join("user-config.toml");
    let project = env.work.join("baton.toml");
    let _ = fs::remove_file(&user);
    let _ = fs::remove_file(&project);
    let table = format!("[agents.{agent}]\n{key} = {}\n", toml_string(value));
    let mut c = env.baton();
    c.args(args);
    match source {
        Source::Flag => {
            c.arg(format!("{flag}={value}"));
        }
        Source::Env => {
            c.env(format!("BATON_{}", key.to_ascii_uppercase()), value);
        }
        Source::User => fs::write(&user, &table).unwrap(),
        Source::Project => fs::write(&project, &table).unwrap(),
    }
    c.arg("--").arg("the task");
    let r = Run::from(c.output().unwrap());
    let _ = fs::remove_file(&user);
    let _ = fs::remove_file(&project);
    r
}

fn toml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// What a refusal must name for `source`.
fn source_named(source: Source, flag: &str, var: &str) -> String {
    match source {
        Source::Flag => flag.to_string(),
        Source::Env => var.to_string(),
        Source::User => "user-config.toml:2".into(),
        Source::Project => "baton.toml:2".into(),
    }
}

fn assert_refused(r: &Run, what: &str, value: &str, named: &str, kinds: &[&str]) -> Value {
    assert_eq!(r.code, 2, "{what}: {}\n{}", r.stdout, r.stderr);
    let e = r.json()["error"].clone();
    assert!(
        kinds.contains(&e["kind"].as_str().unwrap()),
        "{what}: kind {}",
        e["kind"]
    );
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains(value), "{what}: {msg}");
    assert!(msg.contains(named), "{what}: `{named}` not in {msg}");
    assert!(
        !e["hint"].as_str().unwrap_or("").is_empty(),
        "{what}: no hint"
    );
    e
}

#[test]
fn a_model_that_looks_like_an_option_is_refused_from_every_source_for_every_agent() {
    let env = Env::new();
    for (agent, bin) in AGENTS {
        logging_fake(&env, bin);
        // zai's model is fixed: anything else is refused before argv.
        let good = if agent == "zai" {
            "glm-5.2"
        } else {
            "safe-model-1"
        };
        let read_only = agent != "gemini";
        for source in SOURCES {
            let mut runs: Vec<Vec<&str>> = vec![
                vec!["run", "--agent", agent],
                vec!["run", "--async", "--agent", agent],
            ];
            if read_only {
                runs.push(vec!["ask", "--agent", agent]);
            }
            for args in runs {
                let what = format!("{args:?} {source:?}");
                // The same path with a good value does start the CLI with it.
                forget_calls(&env, bin);
                let ok = with_value(&env, source, agent, "model", good, &args, "--model");
                assert!(
                    crate::support::wait_for(std::time::Duration::from_secs(10), || {
                        calls(&env, bin).iter().any(|c| c.contains(good))
                    }),
                    "{what}: control run did not start {bin} with {good}: {}\n{}",
                    ok.stdout,
                    ok.stderr
                );
                if args.contains(&"--async") {
                    let id = ok.json()["job_id"].as_str().unwrap().to_string();
                    env.run(&["wait", &id]);
                }
                forget_calls(&env, bin);
                for bad in ["--yolo", "--dangerously-bypass-approvals-and-sandbox"] {
                    let r = with_value(&env, source, agent, "model", bad, &args, "--model");
                    // zai's model is fixed: refused as any other model would
                    // be (a file's when it is read).
                    let kinds: &[&str] = if agent == "zai" {
                        &["usage", "config"]
                    } else {
                        &["unsafe_value"]
                    };
                    let named = source_named(source, "--model", "BATON_MODEL");
                    assert_refused(&r, &what, bad, &named, kinds);
                    assert_eq!(calls(&env, bin), Vec::<String>::new(), "{what}: started");
                }
            }
        }
    }
    // `ask --agents NAME:MODEL` names that flag.
    let r = env.run(&["ask", "--agents", "codex:--yolo,claude", "q"]);
    assert_refused(&r, "--agents", "--yolo", "--agents", &["unsafe_value"]);
    assert!(calls(&env, "codex").is_empty() && calls(&env, "claude").is_empty());
}

#[test]
fn efforts_profiles_providers_and_sessions_are_refused_from_every_source() {
    let env = Env::new();
    for (_, bin) in AGENTS {
        logging_fake(&env, bin);
    }
    let bad = "--yolo";
    // Effort: a closed list per agent, so a config file is refused when read
    // (`config`), a flag or variable when the plan is made.
    for (agent, bin) in AGENTS {
        for source in SOURCES {
            let what = format!("{agent} effort {source:?}");
            let r = with_value(
                &env,
                source,
                agent,
                "effort",
                bad,
                &["run", "--agent", agent],
                "--effort",
            );
            let named = match source {
                // "effort `--yolo` is not accepted by `codex`" names the flag's value.
                Source::Flag => bad.to_string(),
                s => source_named(s, "--effort", "BATON_EFFORT"),
            };
            assert_refused(&r, &what, bad, &named, &["usage", "config", "unsafe_value"]);
            assert!(calls(&env, bin).is_empty(), "{what}: started");
        }
    }
    // Profile (codex) and provider (pi, opencode, qwen): no variable stands
    // for them. qwen's provider from a file is checked against its auth
    // types when the file is read.
    let cases = [
        ("codex", "codex", "profile", "--profile"),
        ("pi", "pi", "provider", "--provider"),
        ("opencode", "opencode", "provider", "--provider"),
        ("qwen", "qwen", "provider", "--provider"),
    ];
    for (agent, bin, key, flag) in cases {
        for source in [Source::Flag, Source::User, Source::Project] {
            let what = format!("{agent} {key} {source:?}");
            let args = ["run", "--agent", agent, "--model", "m-1"];
            let r = with_value(&env, source, agent, key, bad, &args, flag);
            let kinds: &[&str] = if agent == "qwen" && !matches!(source, Source::Flag) {
                &["config"]
            } else {
                &["unsafe_value"]
            };
            assert_refused(&r, &what, bad, &source_named(source, flag, ""), kinds);
            assert!(calls(&env, bin).is_empty(), "{what}: started");
        }
    }
    // `--resume`, for every agent.
    for (agent, bin) in AGENTS {
        let r = env.run(&["run", "--agent", agent, "--resume=--yolo", "x"]);
        assert_refused(&r, agent, bad, "--resume", &["unsafe_value"]);
        assert!(calls(&env, bin).is_empty(), "{agent}: started");
    }
    // Control characters, blanks and look-alike dashes are refused too.
    for v in ["gpt\n--yolo", " ", "gpt 5", "\u{2013}yolo", "a\u{1b}[2Jb"] {
        let r = Run::from(
            env.baton()
                .env("BATON_MODEL", v)
                .args(["run", "--agent", "codex", "x"])
                .output()
                .unwrap(),
        );
        if v.trim().is_empty() {
            // An empty variable counts as unset: the run goes on.
            forget_calls(&env, "codex");
            continue;
        }
        assert_eq!(r.code, 2, "{v:?}: {}", r.stdout);
        assert_eq!(r.json()["error"]["kind"], "unsafe_value", "{v:?}");
        assert!(!r.stdout.contains('\u{1b}'), "raw control character shown");
    }
    assert!(calls(&env, "codex").is_empty());
}

#[test]
fn doctor_probe_does_not_pass_an_unsafe_model() {
    let env = Env::new();
    env.fake(
        "codex",
        "printf '%s\\n' \"$*\" >> \"$FAKE_DIR/codex.calls\"\n\
         [ \"${1-}\" = --version ] && { echo 'codex-cli 0.171.0'; exit 0; }\ncat > /dev/null",
    );
    let r = Run::from(
        env.baton()
            .env("BATON_MODEL", "--yolo")
            .env("OPENAI_API_KEY", "x")
            .args(["doctor", "--agent", "codex", "--probe"])
            .output()
            .unwrap(),
    );
    let j = r.json();
    let probe = j["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "agent.codex.probe")
        .unwrap_or_else(|| panic!("no probe: {j}"));
    assert_eq!(probe["ok"], false, "{probe}");
    let msg = probe["message"].as_str().unwrap();
    assert!(
        msg.contains("--yolo") && msg.contains("BATON_MODEL"),
        "{msg}"
    );
    assert_eq!(
        calls(&env, "codex"),
        ["--version"],
        "only asked for its version"
    );
}

/// A job whose peer reported `SESSION` as its session id.
fn job_with_session(env: &Env, agent: &str, bin: &str, transcript: &str, session: &str) -> String {
    // Learn the fixture's own session id, then swap it for `session`.
    env.replay(bin, transcript, 0);
    let first = env.run(&["run", "--agent", agent, "x"]);
    let real = first.json()["session"].as_str().unwrap().to_string();
    let text = fs::read_to_string(fixture(transcript)).unwrap();
    let hostile = env.tmp.path().join(format!("{bin}-hostile"));
    fs::write(&hostile, text.replace(&real, session)).unwrap();
    env.fake(
        bin,
        &format!(
            "printf '%s\\n' \"$*\" >> \"$FAKE_DIR/{bin}.calls\"\ncat > /dev/null\ncat '{}'",
            hostile.display()
        ),
    );
    let r = env.run(&["run", "--async", "--agent", agent, "x"]);
    let id = r.json()["job_id"].as_str().unwrap().to_string();
    let w = env.run(&["wait", &id]);
    assert_eq!(w.json()["session"], session, "{agent}: {}", w.stdout);
    forget_calls(env, bin);
    id
}

#[test]
fn attach_and_continue_refuse_a_recorded_session_that_looks_like_an_option() {
    let env = Env::new();
    let session = "--dangerously-skip-permissions";
    let cases = [
        ("codex", "codex", "codex/codex-exec-basic.jsonl"),
        ("claude", "claude", "claude/claude-stream.jsonl"),
        ("pi", "pi", "pi/pi-json-basic.jsonl"),
        ("gemini-cli", "gemini", "gemini-cli/gemini-stream.jsonl"),
        (
            "opencode",
            "opencode",
            "opencode/opencode-run-json-basic.jsonl",
        ),
        ("qwen", "qwen", "qwen/qwen-stream-plain.jsonl"),
        // agy has no interactive resume, but `continue` resumes it.
        ("gemini", "agy", "agy/agy-json-success.json"),
    ];
    for (agent, bin, transcript) in cases {
        let id = job_with_session(&env, agent, bin, transcript, session);
        for args in [
            vec!["attach", &id, "--dry-run"],
            vec!["attach", &id],
            vec!["continue", &id, "next"],
        ] {
            let what = format!("{agent} {args:?}");
            let r = env.run(&args);
            let e = assert_refused(
                &r,
                &what,
                session,
                &format!("the session recorded for job `{id}`"),
                &["unsafe_value"],
            );
            assert!(
                e["hint"].as_str().unwrap().contains("baton logs"),
                "{what}: {e}"
            );
            assert!(!r.stdout.contains("\"argv\""), "{what}: printed an argv");
        }
        // `continue` started no job, `attach` no CLI.
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(calls(&env, bin).is_empty(), "{agent}: started");
    }
}

/// `[agents.<name>] provider` works for every agent that takes `--provider`
/// (pi, opencode, qwen), from either file, as the flag does; a flag wins.
#[test]
fn the_provider_of_every_agent_that_takes_one_comes_from_the_config() {
    let env = Env::new();
    let cases = [
        (
            "pi",
            "anthropic",
            &["--provider", "anthropic", "--model", "m-1"][..],
        ),
        ("opencode", "anthropic", &["-m", "anthropic/m-1"][..]),
        (
            "qwen",
            "openai",
            &["--auth-type", "openai", "--model", "m-1"][..],
        ),
    ];
    for (agent, provider, want) in cases {
        for file in [
            env.tmp.path().join("user-config.toml"),
            env.work.join("baton.toml"),
        ] {
            fs::write(
                &file,
                format!("[agents.{agent}]\nprovider = \"{provider}\"\n"),
            )
            .unwrap();
            let r = env.run(&["run", "--dry-run", "--agent", agent, "--model", "m-1", "x"]);
            assert_eq!(r.code, 0, "{agent}: {}", r.stdout);
            let argv: Vec<String> = serde_json::from_value(r.json()["argv"].clone()).unwrap();
            assert!(
                argv.windows(want.len()).any(|w| w == want),
                "{agent} {}: {argv:?}",
                file.display()
            );
            fs::remove_file(&file).unwrap();
        }
    }
    // The flag wins over the file.
    fs::write(
        env.work.join("baton.toml"),
        "[agents.pi]\nprovider = \"anthropic\"\n",
    )
    .unwrap();
    let r = env.run(&[
        "run",
        "--dry-run",
        "--agent",
        "pi",
        "--provider",
        "openai",
        "x",
    ]);
    let argv: Vec<String> = serde_json::from_value(r.json()["argv"].clone()).unwrap();
    assert!(
        argv.windows(2).any(|w| w == ["--provider", "openai"]),
        "{argv:?}"
    );
    // Any other agent's table refuses it, naming the line.
    for agent in ["codex", "claude", "gemini", "zai", "gemini-cli"] {
        fs::write(
            env.work.join("baton.toml"),
            format!("[agents.{agent}]\nprovider = \"openai\"\n"),
        )
        .unwrap();
        let r = env.run(&["run", "--dry-run", "x"]);
        assert_eq!(r.code, 2, "{agent}");
        let e = &r.json()["error"];
        assert_eq!(e["kind"], "config");
        let msg = e["message"].as_str().unwrap();
        assert!(
            msg.contains(&format!("baton.toml:2: `agents.{agent}.provider`")),
            "{msg}"
        );
        assert!(
            e["hint"].as_str().unwrap().contains("pi, opencode, qwen"),
            "{e}"
        );
    }
}

/// A council member's model (`--members NAME:MODEL`) is refused before
/// the council starts, naming `--members`.
#[test]
fn a_council_member_model_that_looks_like_an_option_is_refused_at_once() {
    let env = Env::new();
    env.git_init();
    logging_fake(&env, "codex");
    logging_fake(&env, "claude");
    for args in [
        &[
            "council",
            "discuss",
            "--members",
            "codex:--yolo,claude",
            "q",
        ][..],
        &[
            "council",
            "discuss",
            "--dry-run",
            "--members",
            "claude,codex:--yolo",
            "q",
        ][..],
    ] {
        let r = env.run(args);
        assert_refused(
            &r,
            &format!("{args:?}"),
            "--yolo",
            "--members",
            &["unsafe_value"],
        );
    }
    assert!(calls(&env, "codex").is_empty() && calls(&env, "claude").is_empty());
}
