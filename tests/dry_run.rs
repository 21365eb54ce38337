//! `--dry-run --text`: every dry run (`run`, `run --worktree`, `attach`,
//! `ask`, `council`) prints the same fields as its JSON for people, and
//! starts nothing.

use crate::support::{Env, Run, git};

fn lines_of(r: &Run) -> Vec<String> {
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        !r.stdout.trim_start().starts_with('{'),
        "JSON, not text: {}",
        r.stdout
    );
    r.stdout.lines().map(str::to_string).collect()
}

/// The value of `key:` at the start of a line (top level).
fn field<'a>(lines: &'a [String], key: &str) -> &'a str {
    lines
        .iter()
        .find_map(|l| l.strip_prefix(&format!("{key}:")))
        .unwrap_or_else(|| panic!("no {key}: in {lines:#?}"))
        .trim()
}

#[test]
fn run_dry_run_text_is_readable_and_says_what_json_says() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    let args = [
        "run",
        "--dry-run",
        "--agent",
        "codex",
        "-m",
        "gpt-5.5",
        "fix the test",
    ];
    let j = env.run(&args).json();
    let mut text_args = args.to_vec();
    text_args.insert(0, "--text");
    let t = lines_of(&env.run(&text_args));
    assert_eq!(t[0], "dry run: nothing was started");
    assert_eq!(field(&t, "agent"), "codex");
    assert_eq!(field(&t, "model"), "gpt-5.5");
    assert_eq!(field(&t, "cwd"), j["cwd"].as_str().unwrap());
    // argv as one line a shell would take back, the effort's quotes kept.
    let argv = field(&t, "argv");
    assert!(argv.starts_with("codex exec --json"), "{argv}");
    assert!(
        argv.contains(r#"-c 'model_reasoning_effort="high"'"#),
        "{argv}"
    );
    assert!(argv.ends_with(" -"), "{argv}");
    assert_eq!(field(&t, "env_set"), "BATON_DEPTH=1");
    assert_eq!(field(&t, "stdin"), "(the prompt)");
    // The prompt last, indented, whole.
    let at = t.iter().position(|l| l == "prompt:").expect("prompt block");
    let prompt: Vec<&str> = t[at + 1..].iter().map(|l| l.trim_start()).collect();
    assert!(prompt.contains(&"fix the test"), "{prompt:?}");
    assert!(!env.called("codex"));

    // The same with the worktree flags: its plan is a section.
    env.git_init();
    let t = lines_of(&env.run(&[
        "run",
        "--dry-run",
        "--text",
        "--worktree",
        "--agent",
        "codex",
        "x",
    ]));
    let at = t
        .iter()
        .position(|l| l == "worktree:")
        .expect("worktree section");
    assert!(
        t[at + 1..].iter().any(|l| l.starts_with("  branch:")),
        "{t:#?}"
    );
    assert!(!env.called("codex"));
}

#[test]
fn attach_dry_run_text_is_readable() {
    let env = Env::new();
    env.replay("claude", "claude/claude-stream.jsonl", 0);
    let r = env.run(&["run", "--async", "--agent", "claude", "x"]);
    let id = r.json()["job_id"].as_str().unwrap().to_string();
    let session = env.run(&["wait", &id]).json()["session"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::remove_file(env.fake_dir.join("claude.argv")).unwrap();
    let t = lines_of(&env.run(&["attach", &id, "--dry-run", "--text"]));
    assert_eq!(t[0], "dry run: nothing was started");
    assert_eq!(field(&t, "job_id"), id);
    assert_eq!(field(&t, "session"), session);
    let argv = field(&t, "argv");
    assert!(
        argv.starts_with(&format!("claude --resume {session} ")),
        "{argv}"
    );
    assert!(argv.contains("--settings '{"), "{argv}");
    assert_eq!(
        field(&t, "env_remove"),
        "CLAUDECODE, CLAUDE_CODE_ENTRYPOINT"
    );
    assert!(!env.called("claude"));
}

#[test]
fn ask_and_council_dry_runs_follow_text_too() {
    let env = Env::new();
    git(&env.work, &["init", "-q"]);
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    env.replay("claude", "claude/claude-stream.jsonl", 0);
    let t = lines_of(&env.run(&[
        "ask",
        "--dry-run",
        "--text",
        "--agents",
        "codex,claude",
        "q",
    ]));
    assert_eq!(t[0], "dry run: nothing was started");
    assert!(t.contains(&"advisers 2:".to_string()), "{t:#?}");
    assert!(
        t.iter()
            .any(|l| l.starts_with("  argv:") && l.contains("claude -p"))
    );
    let t = lines_of(&env.run(&[
        "council",
        "discuss",
        "--dry-run",
        "--text",
        "--members",
        "codex,claude",
        "q",
    ]));
    assert_eq!(t[0], "dry run: nothing was started");
    assert!(t.contains(&"members 1:".to_string()), "{t:#?}");
    assert!(!env.called("codex") && !env.called("claude"));
}

/// A fan-out's dry run printed JSON under `--text` until every door went
/// through one gate (issue 30 §3).
#[test]
fn a_fanout_dry_run_follows_text_too() {
    let env = Env::new();
    git(&env.work, &["init", "-q"]);
    git(&env.work, &["commit", "-q", "--allow-empty", "-m", "base"]);
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    env.replay("claude", "claude/claude-stream.jsonl", 0);
    let t = lines_of(&env.run(&[
        "run",
        "--dry-run",
        "--text",
        "--agents",
        "codex,claude",
        "--test-cmd",
        "true",
        "q",
    ]));
    assert_eq!(t[0], "dry run: nothing was started");
    assert!(t.contains(&"candidates 1:".to_string()), "{t:#?}");
    assert!(t.contains(&"candidates 2:".to_string()), "{t:#?}");
    assert!(!env.called("codex") && !env.called("claude"));
}
