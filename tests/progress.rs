//! The live status line of `baton ask` (one adviser, several) and `baton run
//! --worktree`, on a pseudo-terminal: drawn, erased before the result, and
//! stdout exactly one JSON object.

use std::fs;

use serde_json::{Value, json};

use crate::support::{Env, Run, record};
use crate::watch::run_on_pty;

fn advice() -> Value {
    json!({
        "assessment": "a", "recommendation": "b", "alternatives": [], "risks": [],
        "verification_steps": [], "missing_context": [], "proposed_code": null,
        "confidence": "high"
    })
}

/// A fake `name` that prints `first` (one event), works for a second, then
/// prints `rest` from a file.
fn slow(env: &Env, name: &str, first: &Value, rest: &str) {
    let f = env.fake_dir.join(format!("{name}.rest"));
    fs::write(&f, rest).unwrap();
    env.fake(
        name,
        &format!(
            "{}\nprintf '%s\\n' '{first}'\nsleep 1\ncat '{}'",
            record(name),
            f.display()
        ),
    );
}

fn codex_adviser(env: &Env) {
    let text = advice().to_string();
    let rest: String = [
        json!({"type": "item.completed", "item": {"id": "i0", "type": "agent_message", "text": text}}),
        json!({"type": "turn.completed", "usage": {"input_tokens": 1200, "cached_input_tokens": 0, "output_tokens": 7}}),
    ]
    .iter()
    .map(|v| format!("{v}\n"))
    .collect();
    slow(
        env,
        "codex",
        &json!({"type": "item.started", "item": {"type": "reasoning", "text": "reading the packet"}}),
        &format!(
            "{}\n{rest}",
            json!({"type": "thread.started", "thread_id": "t-1"})
        ),
    );
}

fn claude_adviser(env: &Env) {
    let result = json!({
        "type": "result", "subtype": "success", "is_error": false, "result": advice().to_string(),
        "session_id": "s-1", "structured_output": advice(),
        "usage": {"input_tokens": 11, "output_tokens": 3}, "total_cost_usd": 0.001
    });
    slow(
        env,
        "claude",
        &json!({"type": "system", "subtype": "init", "model": "claude-test", "session_id": "s-1"}),
        &format!("{result}\n"),
    );
}

/// stdout is exactly one JSON object (one line), and the terminal's last
/// bytes are the erase.
fn one_json_and_erased(r: &Run, tty: &str) -> Value {
    assert_eq!(r.stdout.lines().count(), 1, "{:?}", r.stdout);
    assert!(!r.stdout.contains('\x1b'), "{:?}", r.stdout);
    assert!(tty.contains("\r\x1b[2K"), "{tty:?}");
    assert!(
        tty.ends_with("\r\x1b[2K"),
        "erased before the result: {tty:?}"
    );
    r.json()
}

#[test]
fn ask_draws_one_line_for_one_adviser_and_a_summary_for_several() {
    let env = Env::new();
    codex_adviser(&env);
    let (r, tty) = run_on_pty(&env, &["ask", "--agent", "codex", "why?"], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = one_json_and_erased(&r, &tty);
    assert_eq!(j["status"], "success", "{j}");
    assert!(tty.contains(" codex · "), "{tty:?}");

    claude_adviser(&env);
    let (r, tty) = run_on_pty(&env, &["ask", "--agents", "codex,claude", "why?"], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = one_json_and_erased(&r, &tty);
    assert_eq!(j["results"].as_array().unwrap().len(), 2, "{j}");
    assert!(tty.contains(" 2 advisers"), "{tty:?}");
    assert!(
        tty.contains("codex: ") && tty.contains("claude: "),
        "{tty:?}"
    );

    // Off with --quiet and BATON_PROGRESS=0; never on a non-terminal.
    let (r, tty) = run_on_pty(&env, &["ask", "--quiet", "--agent", "codex", "q"], &[]);
    assert_eq!((r.code, tty.as_str()), (0, ""));
    let (r, tty) = run_on_pty(
        &env,
        &["ask", "--agent", "codex", "q"],
        &[("BATON_PROGRESS", "0")],
    );
    assert_eq!((r.code, tty.as_str()), (0, ""));
    let r = env.run(&["ask", "--agent", "codex", "q"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
}

#[test]
fn run_worktree_draws_the_line_too() {
    let env = Env::new();
    env.git_init();
    slow(
        &env,
        "codex",
        &json!({"type": "item.started", "item": {"type": "command_execution", "command": "cargo test"}}),
        &fs::read_to_string(crate::support::fixture("codex/codex-exec-basic.jsonl")).unwrap(),
    );
    let vars = [
        ("GIT_CONFIG_GLOBAL", "/dev/null"),
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("HOME", env.tmp.path().to_str().unwrap()),
    ];
    let (r, tty) = run_on_pty(&env, &["--worktree", "--agent", "codex", "do it"], &vars);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let j = one_json_and_erased(&r, &tty);
    assert_eq!(j["status"], "success", "{j}");
    assert!(j["worktree"]["branch"].is_string(), "{j}");
    assert!(tty.contains(" codex · $ cargo test"), "{tty:?}");
    let (r, tty) = run_on_pty(
        &env,
        &["--worktree", "--quiet", "--agent", "codex", "do it"],
        &vars,
    );
    assert_eq!((r.code, tty.as_str()), (0, ""), "{}", r.stdout);
}
