//! Text for people never carries a peer's control characters (issue 29 §5):
//! a model name, message, task, advice, proposal and error holding a window
//! title (`ESC ] 0;…BEL`), a clipboard write (`ESC ] 52;…`), a screen clear
//! (`ESC [2J`), a bare `\r` and a C1 CSI pass through every `--text` printer,
//! `logs`, `watch --once` and stderr, and come out escaped (`\u{1b}`), never
//! raw. JSON is left to serde, which escapes them anyway.

use serde_json::{Value, json};

use crate::ask::{Advisers, claude_reply, good_advice};
use crate::council::{AGENTS, critique, markers, plan, proposal};
use crate::support::council::{CouncilFake, Scenario, Stage, Step};
use crate::support::{Env, Run, git};

/// What a hostile peer says: every kind of sequence the issue names.
pub(crate) const HOSTILE: &str =
    "\u{1b}]0;pwned\u{7}\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}[2J\rover\u{9b}31m";
/// How the start of it reads once escaped.
pub(crate) const SEEN: &str = r"\u{1b}]0;pwned\u{7}";

/// What each printer got wrong, gathered so one run names every printer.
#[derive(Default)]
pub(crate) struct Checks(Vec<String>);

impl Checks {
    /// No control character but newline and tab; with `seen`, the escaped
    /// hostile text is there (it was printed, not dropped).
    pub(crate) fn clean(&mut self, what: &str, out: &str, seen: bool) {
        let raw: Vec<char> = out
            .chars()
            .filter(|c| c.is_control() && !matches!(c, '\n' | '\t'))
            .collect();
        if !raw.is_empty() {
            self.0.push(format!(
                "{what}: raw control characters {raw:?} in:\n{}",
                out.escape_debug()
            ));
        } else if seen && !out.contains(SEEN) {
            self.0
                .push(format!("{what}: the hostile text is not shown:\n{out}"));
        }
    }

    pub(crate) fn done(self) {
        assert!(self.0.is_empty(), "{}", self.0.join("\n\n"));
    }
}

/// claude's stream as the real CLI writes it, with a hostile model name and
/// a hostile, multi-line final message.
pub(crate) fn hostile_claude(env: &Env) {
    let model = format!("claude{HOSTILE}");
    let text = format!("first line {HOSTILE}\nsecond line");
    let lines = [
        json!({"type": "system", "subtype": "init", "model": model, "session_id": "s-1"}),
        json!({"type": "assistant", "message": {"model": model,
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 10, "output_tokens": 2}}}),
        json!({"type": "result", "subtype": "success", "is_error": false, "result": text,
            "session_id": "s-1", "usage": {"input_tokens": 10, "output_tokens": 2},
            "total_cost_usd": 0.001}),
    ];
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(env.fake_dir.join("claude.out"), body).unwrap();
    env.fake(
        "claude",
        "cat > /dev/null\ncat \"$FAKE_DIR/claude.out\"\nprintf 'err %s\\n' \"$(printf '\\033]0;pwned\\007')\" >&2",
    );
}

fn ok(what: &str, r: &Run) {
    assert_eq!(r.code, 0, "{what}: {}\n{}", r.stdout, r.stderr);
}

#[test]
fn a_hostile_peer_reaches_no_terminal_through_the_run_and_job_printers() {
    let mut c = Checks::default();
    let env = Env::new();
    hostile_claude(&env);
    let task = format!("fix it {HOSTILE}");

    let r = env.run(&["--text", "--agent", "claude", &task]);
    ok("run --text", &r);
    c.clean("run --text", &r.stdout, true);
    assert!(
        r.stdout.contains("\nsecond line\n"),
        "the message keeps its lines:\n{}",
        r.stdout
    );
    let model_line = r.stdout.lines().find(|l| l.starts_with("agent:")).unwrap();
    if !model_line.contains(r"claude\u{1b}]0;pwned") {
        c.0.push(format!("run --text: the model not escaped: {model_line:?}"));
    }

    // The JSON keeps the text as it was (serde escapes it).
    let j = env.run(&["--agent", "claude", &task]).json();
    assert_eq!(j["model"].as_str().unwrap(), format!("claude{HOSTILE}"));

    let started = env.run(&["run", "--async", "--agent", "claude", &task]);
    ok("run --async", &started);
    let id = started.json()["job_id"].as_str().unwrap().to_string();
    for args in [
        vec!["wait", id.as_str(), "--text"],
        vec!["status", id.as_str(), "--text"],
        vec!["result", id.as_str(), "--text"],
        vec!["logs", id.as_str()],
    ] {
        let r = env.run(&args);
        ok(&args.join(" "), &r);
        c.clean(&args.join(" "), &r.stdout, true);
    }
    for args in [
        vec!["jobs", "--text"],
        vec!["watch", "--once", "--text"],
        vec!["usage", "--text", "--by", "model"],
    ] {
        let r = env.run(&args);
        ok(&args.join(" "), &r);
        c.clean(&args.join(" "), &r.stdout, true);
    }
    c.done();
}

#[test]
fn an_error_quoting_hostile_text_is_escaped_on_stderr_too() {
    let mut c = Checks::default();
    let env = Env::new();
    hostile_claude(&env);
    let dir = format!("/nonexistent/{HOSTILE}");
    for mode in ["--text", "--json"] {
        let r = env.run(&[mode, "--agent", "claude", "--cwd", &dir, "fix it"]);
        assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
        c.clean(&format!("{mode} stderr"), &r.stderr, true);
        // JSON is serde's: C0 escaped as JSON requires (C1 is left to the
        // program that reads it).
        assert!(
            !r.stdout.contains(['\u{1b}', '\u{7}', '\r']),
            "{mode} stdout: {}",
            r.stdout.escape_debug()
        );
    }
    c.done();
}

#[test]
fn hostile_advice_is_escaped_in_ask_text() {
    let mut c = Checks::default();
    let env = Env::new();
    let mut advice = good_advice();
    advice["assessment"] = json!(format!("assess {HOSTILE}"));
    advice["recommendation"] = json!(format!("do {HOSTILE}\nthen more"));
    advice["risks"] = json!([format!("risk {HOSTILE}")]);
    let a = Advisers::new(&env);
    a.install("claude", "").reply(
        "claude",
        1,
        &claude_reply(Some("s"), &format!("{advice}"), Some(advice.clone())),
        0,
    );
    let r = env.run(&["ask", "--agent", "claude", "--text", "what now?"]);
    ok("ask --text", &r);
    c.clean("ask --text", &r.stdout, true);
    c.done();
}

fn council_env() -> (Env, CouncilFake) {
    let env = Env::new();
    env.git_init();
    std::fs::write(env.work.join("a.txt"), "one\ntwo\n").unwrap();
    git(&env.work, &["add", "."]);
    git(&env.work, &["commit", "-qm", "base"]);
    let fake = CouncilFake::install(&env, &AGENTS);
    (env, fake)
}

#[test]
fn hostile_proposals_are_escaped_in_council_text() {
    let mut c = Checks::default();
    let (env, fake) = council_env();
    // Every summary ends in the hostile text.
    let hostile = |mut v: Value| {
        v["summary"] = json!(format!("{} {HOSTILE}", v["summary"].as_str().unwrap()));
        Step::json(v)
    };
    let mut s = Scenario::new();
    for (a, m) in markers() {
        s = s
            .on(a, Stage::Proposal, hostile(proposal(m)))
            .on(a, Stage::Critique, hostile(critique()))
            .on(a, Stage::Plan, hostile(plan()));
    }
    fake.write(&s);
    let r = env.run(&[
        "council",
        "discuss",
        "--members",
        "codex,claude,pi",
        "--text",
        "how should the cache be guarded?",
    ]);
    ok("council discuss --text", &r);
    c.clean("council discuss --text", &r.stdout, true);
    let id = list_id(&env);
    for args in [
        vec!["council", "status", id.as_str(), "--text"],
        vec!["council", "result", id.as_str(), "--text"],
        vec!["council", "report", id.as_str()],
        vec!["council", "list", "--text"],
    ] {
        let r = env.run(&args);
        ok(&args.join(" "), &r);
        c.clean(&args.join(" "), &r.stdout, false);
    }
    c.done();
}

fn list_id(env: &Env) -> String {
    let v: Value = env.run(&["council", "list"]).json();
    v["councils"][0]["council_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"))
        .to_string()
}

#[test]
fn hostile_candidates_are_escaped_in_the_fan_out_table() {
    let mut c = Checks::default();
    let (env, fake) = council_env();
    fake.write(
        &Scenario::new()
            .on(
                "codex",
                Stage::Implement,
                Step::say(&format!("done {HOSTILE}")).edit("answer.txt", "good\n"),
            )
            .on("claude", Stage::Implement, Step::fail(HOSTILE)),
    );
    let r = env.run(&[
        "run",
        "--agents",
        "codex,claude",
        "--judge",
        "none",
        "--test-cmd",
        "grep -q good answer.txt",
        "--text",
        &format!("write it {HOSTILE}"),
    ]);
    c.clean("fan-out --text", &r.stdout, false);
    c.clean("fan-out stderr", &r.stderr, false);
    let r = env.run(&["watch", "--once", "--text"]);
    c.clean("watch --once --text with a fan-out", &r.stdout, true);
    c.done();
}
