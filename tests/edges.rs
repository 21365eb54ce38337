//! Edges of the command line and of the output: durations out of range,
//! a stdout that cannot be written, option values that look like flags,
//! task ids that differ only by blanks, final messages that are not UTF-8
//! or too long, and the timing of the `changed_files` snapshot.

use std::fs;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Env, Run, fixture, record};

/// Values the old hand-written parser panicked on, wrapped, or let through
/// as a sub-millisecond "more than zero".
const OUT_OF_RANGE: [&str; 4] = [
    "5124095576030432h",
    "18446744073709552s",
    "213503982335d",
    "0.0001s",
];

fn assert_usage(r: &Run, what: &str) {
    assert_eq!(
        r.code, 2,
        "{what}: stdout {}\nstderr {}",
        r.stdout, r.stderr
    );
    assert_eq!(r.json()["error"]["kind"], "usage", "{what}: {}", r.stdout);
}

#[test]
fn durations_out_of_range_are_usage_errors() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    let tmp = env.tmp.path().join("asktmp");
    fs::create_dir(&tmp).unwrap();
    for v in OUT_OF_RANGE {
        assert_usage(&env.run(&["--agent", "codex", "--timeout", v, "x"]), v);
        assert_usage(&env.run(&["--agent", "codex", "--idle-timeout", v, "x"]), v);
        assert_usage(&env.run(&["wait", "0123456789abc", "--timeout", v]), v);
        assert_usage(&env.run(&["prune", "--older-than", v]), v);
        let r = Run::from(
            env.baton()
                .env("TMPDIR", &tmp)
                .args(["ask", "--agent", "codex", "--timeout", v, "q"])
                .output()
                .unwrap(),
        );
        assert_usage(&r, v);
        assert_eq!(
            fs::read_dir(&tmp).unwrap().count(),
            0,
            "`ask --timeout {v}` left a temp dir"
        );
    }
    assert!(!env.called("codex"));
}

#[test]
fn every_documented_duration_form_still_works() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    for (v, ms) in [
        ("500ms", 500u64),
        ("90", 90_000),
        ("90s", 90_000),
        ("45m", 2_700_000),
        ("2h", 7_200_000),
        ("1h30m", 5_400_000),
        ("7d", 604_800_000),
    ] {
        let r = env.run(&[
            "--agent",
            "codex",
            "--dry-run",
            "--timeout",
            v,
            "--idle-timeout",
            v,
            "x",
        ]);
        assert_eq!(r.code, 0, "{v}: {}", r.stdout);
        let j = r.json();
        assert_eq!(j["timeout_ms"], ms, "{v}");
        assert_eq!(j["idle_timeout_ms"], ms, "{v}");
    }
    // 0 turns the idle timeout off; a zero overall timeout is refused.
    let r = env.run(&["--agent", "codex", "--dry-run", "--idle-timeout", "0", "x"]);
    assert_eq!(r.json()["idle_timeout_ms"], 0);
    assert_usage(&env.run(&["--agent", "codex", "--timeout", "0", "x"]), "0");
}

fn dev_full() -> fs::File {
    fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap()
}

#[test]
fn a_result_that_cannot_be_written_to_stdout_is_an_error() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    for args in [
        vec!["--agent", "codex", "x"],
        vec!["--agent", "codex", "--text", "x"],
        vec!["run", "--async", "--agent", "codex", "x"],
        vec!["agents"],
    ] {
        let out = env
            .baton()
            .args(&args)
            .stdout(dev_full())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let r = Run::from(out);
        assert_eq!(r.code, 1, "{args:?}: stderr {}", r.stderr);
        assert!(
            r.stderr.contains("stdout") && r.stderr.contains("No space left on device"),
            "{args:?}: {}",
            r.stderr
        );
        if args.contains(&"--async") {
            // The job exists: its id must reach the caller somehow.
            let id_shown = r
                .stderr
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|w| w.len() == 13);
            assert!(id_shown, "{}", r.stderr);
        }
    }
}

#[test]
fn option_values_that_look_like_flags_are_refused() {
    let env = Env::new();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    env.replay("pi", "pi/pi-json-basic.jsonl", 0);
    for args in [
        vec![
            "--agent",
            "codex",
            "--model=--dangerously-bypass-approvals-and-sandbox",
            "x",
        ],
        vec!["--agent", "codex", "-m", "-c", "x"],
        vec!["--agent", "codex", "--profile=--full-auto", "x"],
        vec!["--agent", "pi", "--provider=--no-session", "x"],
        vec![
            "ask",
            "--agent",
            "codex",
            "--model=--dangerously-bypass-approvals-and-sandbox",
            "q",
        ],
    ] {
        let r = env.run(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stdout);
        // `-m -c` is clap's to refuse; a value given with `=` is `agent::argv`'s.
        let kind = r.json()["error"]["kind"].clone();
        assert!(
            kind == "usage" || kind == "unsafe_value",
            "{args:?}: {kind}"
        );
    }
    assert!(!env.called("codex") && !env.called("pi"));
}

fn good_advice() -> String {
    json!({
        "assessment": "a", "recommendation": "b", "alternatives": [], "risks": [],
        "verification_steps": [], "missing_context": [], "proposed_code": null,
        "confidence": "high"
    })
    .to_string()
}

#[test]
fn task_ids_that_differ_only_by_blanks_share_one_budget() {
    let env = Env::new();
    let reply = [
        json!({"type": "thread.started", "thread_id": "t"}),
        json!({"type": "item.completed", "item": {"id": "i", "type": "agent_message", "text": good_advice()}}),
        json!({"type": "turn.completed", "usage": {"input_tokens": 1, "output_tokens": 1}}),
    ]
    .iter()
    .map(|v| format!("{v}\n"))
    .collect::<String>();
    fs::write(env.fake_dir.join("reply.jsonl"), reply).unwrap();
    env.fake("codex", "cat > /dev/null\ncat \"$FAKE_DIR/reply.jsonl\"");
    let ask = |id: &str| {
        Run::from(
            env.baton()
                .env("BATON_ASK_BUDGET", "1")
                .args(["ask", "--agent", "codex", "--task-id", id, "q"])
                .output()
                .unwrap(),
        )
    };
    let first = ask("race1");
    assert_eq!(first.code, 0, "{}", first.stdout);
    for variant in [" race1", "race1 ", "\trace1"] {
        let r = ask(variant);
        assert_eq!(r.code, 2, "{variant:?}: {}", r.stdout);
        assert_eq!(r.json()["error"]["kind"], "budget_exhausted", "{variant:?}");
    }
}

#[test]
fn a_final_message_that_is_not_utf8_is_kept_with_a_warning() {
    let env = Env::new();
    let mut t = Vec::new();
    t.extend_from_slice(b"{\"type\":\"thread.started\",\"thread_id\":\"t-8\"}\n");
    t.extend_from_slice(
        b"{\"type\":\"item.completed\",\"item\":{\"id\":\"i\",\"type\":\"agent_message\",\"text\":\"caf\xe9 ok\"}}\n",
    );
    t.extend_from_slice(
        b"{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}\n",
    );
    fs::write(env.fake_dir.join("latin1.jsonl"), t).unwrap();
    env.fake("codex", "cat > /dev/null\ncat \"$FAKE_DIR/latin1.jsonl\"");
    let r = env.run(&["--agent", "codex", "x"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let j = r.json();
    assert_eq!(j["message"], "caf\u{fffd} ok", "{j}");
    let w = j["warnings"].to_string();
    assert!(w.contains("UTF-8"), "{w}");
}

#[test]
fn a_final_message_over_the_line_limit_is_truncated_with_a_warning() {
    let env = Env::new();
    // One line of 3 MiB, the agent message itself, over a limit of 1 MiB
    // (64 MiB in use: `BATON_MAX_LINE` lowers it so a debug build copes).
    env.fake(
        "codex",
        r#"cat > /dev/null
printf '%s\n' '{"type":"thread.started","thread_id":"t-big"}'
printf '%s' '{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"START'
head -c 3145728 /dev/zero | tr '\0' 'a'
printf '%s\n' 'END"}}'
printf '%s\n' '{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}'"#,
    );
    let r = Run::from(
        env.baton()
            .env("BATON_MAX_LINE", "1048576")
            .args(["--agent", "codex", "x"])
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0, "{}", &r.stdout[..r.stdout.len().min(2000)]);
    let j = r.json();
    let m = j["message"].as_str().expect("a message");
    assert!(m.starts_with("STARTaaaa"), "{}", &m[..20]);
    assert!(m.len() < 1048576 && m.len() > 1048000, "{}", m.len());
    let w = j["warnings"].to_string();
    assert!(w.contains("truncated"), "{w}");
    assert!(!w.contains("kept its output open"), "{w}");
    // The log has the whole line.
    let log = fs::read(j["log_path"].as_str().unwrap()).unwrap();
    assert!(log.len() > 3145728);
}

#[test]
fn the_snapshot_is_taken_while_the_peer_starts() {
    let env = Env::new();
    env.git_init();
    // A slow `git status` (a large repository): the peer must not wait for it.
    env.fake(
        "git",
        r#"for a in "$@"; do if [ "$a" = status ]; then sleep 1; fi; done
PATH=/usr/local/bin:/usr/bin:/bin exec git "$@""#,
    );
    env.fake(
        "codex",
        &format!(
            "date +%s%N > \"$FAKE_DIR/started\"\n{}\necho new > peer.txt\ncat '{}'",
            record("codex"),
            fixture("codex/codex-exec-basic.jsonl").display()
        ),
    );
    let t0 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let start = Instant::now();
    let r = env.run(&["--agent", "codex", "--raw", "the prompt"]);
    let took = start.elapsed();
    assert_eq!(r.code, 0, "{}", r.stdout);
    let j: Value = r.json();
    assert_eq!(j["changed_files"], json!(["peer.txt"]), "{j}");
    assert_eq!(env.stdin("codex"), "the prompt");
    let started: u128 = fs::read_to_string(env.fake_dir.join("started"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let waited = Duration::from_nanos((started - t0) as u64);
    assert!(
        waited < Duration::from_millis(800),
        "the peer started {waited:?} after baton (the snapshot ran first)"
    );
    // Both snapshots were taken: before (overlapping the start) and after.
    assert!(took >= Duration::from_secs(2), "{took:?}");
}
