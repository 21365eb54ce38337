//! `baton ask` against fake advisers.
//!
//! A fake adviser (`Advisers::install`) records, per call, its argv, stdin,
//! working directory and what that directory held, then prints the
//! transcript the test queued for that call (`reply`). Transcripts are
//! built here in each CLI's real event format, so the real parsers run.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Env, Run, wait_for};

pub(crate) fn good_advice() -> Value {
    json!({
        "assessment": "The test shares a temp dir with its neighbour.",
        "recommendation": "Give each test its own tempdir.",
        "alternatives": [{"option": "run the tests serially", "tradeoffs": "slower CI"}],
        "risks": ["other tests may share state too"],
        "verification_steps": ["run the suite 50 times"],
        "missing_context": ["the CI runner's parallelism"],
        "proposed_code": null,
        "confidence": "high"
    })
}

pub(crate) fn codex_reply(thread: &str, text: &str, input_tokens: u64) -> String {
    [
        json!({"type": "thread.started", "thread_id": thread}),
        json!({"type": "turn.started"}),
        json!({"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": text}}),
        json!({"type": "turn.completed", "usage": {"input_tokens": input_tokens, "cached_input_tokens": 0, "output_tokens": 7}}),
    ]
    .iter()
    .map(|v| format!("{v}\n"))
    .collect()
}

/// claude's stream; `structured` is what `--json-schema` puts in the result.
pub(crate) fn claude_reply(session: Option<&str>, text: &str, structured: Option<Value>) -> String {
    let mut init = json!({"type": "system", "subtype": "init", "model": "claude-test"});
    let mut result = json!({
        "type": "result", "subtype": "success", "is_error": false, "result": text,
        "usage": {"input_tokens": 11, "output_tokens": 3}, "total_cost_usd": 0.001
    });
    if let Some(s) = session {
        init["session_id"] = json!(s);
        result["session_id"] = json!(s);
    }
    if let Some(v) = structured {
        result["structured_output"] = v;
    }
    let assistant = json!({"type": "assistant", "message": {"model": "claude-test", "content": [{"type": "text", "text": text}]}});
    format!("{init}\n{assistant}\n{result}\n")
}

fn pi_reply(text: &str) -> String {
    let msg = json!({"role": "assistant", "content": [{"type": "text", "text": text}], "model": "pi-model",
        "usage": {"input": 5, "output": 2, "cacheRead": 0, "cacheWrite": 0}, "stopReason": "stop"});
    format!(
        "{}\n{}\n{}\n",
        json!({"type": "session", "id": "pi-session-1"}),
        json!({"type": "message_end", "message": msg}),
        json!({"type": "agent_end"})
    )
}

fn gemini_reply(text: &str) -> String {
    format!(
        "{}\n{}\n{}\n",
        json!({"type": "init", "session_id": "g-1", "model": "gemini-test"}),
        json!({"type": "message", "role": "assistant", "content": text, "delta": true}),
        json!({"type": "result", "status": "success", "stats": {"input_tokens": 3, "output_tokens": 4}})
    )
}

/// Fake adviser CLIs with per-call records.
pub(crate) struct Advisers<'a> {
    env: &'a Env,
}

impl<'a> Advisers<'a> {
    pub(crate) fn new(env: &'a Env) -> Self {
        Advisers { env }
    }

    /// Install fake `name`; `before_reply` is shell run after recording.
    pub(crate) fn install(&self, name: &str, before_reply: &str) -> &Self {
        let d = "$FAKE_DIR";
        self.env.fake(
            name,
            &format!(
                r#"n=$(( $(cat "{d}/{name}.count" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "{d}/{name}.count"
: > "{d}/{name}.$n.argv"
for a in "$@"; do printf '%s\0' "$a" >> "{d}/{name}.$n.argv"; done
cat > "{d}/{name}.$n.stdin"
pwd -P > "{d}/{name}.$n.cwd"
ls -A > "{d}/{name}.$n.ls"
echo $$ > "{d}/{name}.$n.pid"
{before_reply}
cat "{d}/{name}.out.$n" 2>/dev/null || true
if [ -f "{d}/{name}.err.$n" ]; then cat "{d}/{name}.err.$n" >&2; fi
exit "$(cat "{d}/{name}.code.$n" 2>/dev/null || echo 0)""#
            ),
        );
        self
    }

    /// What call `n` (from 1) of `name` prints and its exit code.
    pub(crate) fn reply(&self, name: &str, n: usize, transcript: &str, code: i32) -> &Self {
        let d = &self.env.fake_dir;
        fs::write(d.join(format!("{name}.out.{n}")), transcript).unwrap();
        fs::write(d.join(format!("{name}.code.{n}")), code.to_string()).unwrap();
        self
    }

    fn calls(&self, name: &str) -> usize {
        fs::read_to_string(self.env.fake_dir.join(format!("{name}.count")))
            .map(|s| s.trim().parse().unwrap())
            .unwrap_or(0)
    }

    fn file(&self, name: &str, n: usize, what: &str) -> String {
        fs::read_to_string(self.env.fake_dir.join(format!("{name}.{n}.{what}")))
            .unwrap_or_else(|_| panic!("{name} call {n} has no {what}"))
    }

    fn argv(&self, name: &str, n: usize) -> Vec<String> {
        // Every argument ends in NUL; empty arguments (`--tools ""`) count.
        let raw = self.file(name, n, "argv");
        match raw.strip_suffix('\0') {
            Some(r) => r.split('\0').map(str::to_string).collect(),
            None => Vec::new(),
        }
    }

    fn cwd(&self, name: &str, n: usize) -> PathBuf {
        PathBuf::from(self.file(name, n, "cwd").trim())
    }
}

fn ask(env: &Env, args: &[&str]) -> Run {
    let mut full = vec!["ask"];
    full.extend_from_slice(args);
    env.run(&full)
}

/// `needle` followed by `value` somewhere in `argv`.
fn has_pair(argv: &[String], needle: &str, value: &str) -> bool {
    argv.windows(2).any(|w| w[0] == needle && w[1] == value)
}

fn packet_in(stdin: &str) -> &str {
    let start = stdin.find("<packet>\n").expect("packet open") + "<packet>\n".len();
    let end = stdin.rfind("\n</packet>").expect("packet close");
    &stdin[start..end]
}

fn sha256(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("p");
    fs::write(&f, text).unwrap();
    let out = Command::new("sha256sum").arg(&f).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn codex_good_json_in_an_empty_private_dir_with_read_only_switches() {
    let env = Env::new();
    fs::write(env.work.join("visible.txt"), "the repo's files").unwrap();
    let a = Advisers::new(&env);
    a.install("codex", "").reply(
        "codex",
        1,
        &codex_reply("t-1", &good_advice().to_string(), 120),
        0,
    );
    let r = ask(&env, &["--agent", "codex", "why", "is", "it", "flaky?"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "success");
    assert_eq!(j["advice"], good_advice());
    assert_eq!(j["agent"], "codex");
    assert_eq!(j["access"], "read-only");
    assert_eq!(j["session"], "t-1");
    assert_eq!(j["usage"]["input_tokens"], 120);
    assert!(j["repair"].is_null());
    assert_eq!(j["request_id"].as_str().unwrap().len(), 13);
    assert!(j["summary"].as_str().unwrap().contains("confidence high"));
    assert!(
        j["warnings"].as_array().unwrap().is_empty(),
        "{}",
        j["warnings"]
    );

    // Read-only by the CLI's own switches, the schema by its own feature.
    let argv = a.argv("codex", 1);
    assert!(has_pair(&argv, "--sandbox", "read-only"), "{argv:?}");
    assert!(
        has_pair(&argv, "-c", "approvals_reviewer=\"user\""),
        "{argv:?}"
    );
    let i = argv.iter().position(|x| x == "--output-schema").unwrap();
    let schema: Value = serde_json::from_str(&fs::read_to_string(&argv[i + 1]).unwrap()).unwrap();
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"].as_array().unwrap().len(), 8);
    assert!(
        !argv.iter().any(|x| x.contains("flaky")),
        "the prompt is not in argv"
    );

    // Packet scope: an empty directory of its own, private, gone afterwards.
    let cwd = a.cwd("codex", 1);
    assert_ne!(cwd, env.work.canonicalize().unwrap());
    assert!(
        cwd.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("baton-ask-")
    );
    assert_eq!(
        a.file("codex", 1, "ls"),
        "",
        "the adviser's directory was not empty"
    );
    assert!(!cwd.exists(), "the empty directory was not removed");
    assert_eq!(j["cwd"], cwd.display().to_string());

    // The context describes exactly what was sent.
    let stdin = a.file("codex", 1, "stdin");
    let packet = packet_in(&stdin);
    let ctx = &j["context"];
    assert_eq!(ctx["scope"], "packet");
    assert_eq!(ctx["packet_sha256"], sha256(packet));
    assert_eq!(ctx["packet_chars"], packet.chars().count());
    assert_eq!(ctx["chars_sent"], stdin.chars().count());
    assert_eq!(ctx["redacted_total"], 0);
    let sent: Value = serde_json::from_str(packet).unwrap();
    assert_eq!(sent["question"], "why is it flaky?");
    assert!(stdin.contains("no tools and no files"));
    // The run's log and the final result are kept in baton's state directory.
    let log = PathBuf::from(j["log_path"].as_str().unwrap());
    assert!(log.starts_with(env.records("runs")), "{}", log.display());
    let saved: Value =
        serde_json::from_slice(&fs::read(log.parent().unwrap().join("result.json")).unwrap())
            .unwrap();
    assert_eq!(saved["advice"], good_advice());
}

#[test]
fn claude_structured_output_with_tools_and_mcp_off() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("claude", "").reply(
        "claude",
        1,
        &claude_reply(Some("c-1"), "done", Some(good_advice())),
        0,
    );
    let r = ask(&env, &["--agent", "claude", "review this"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["advice"], good_advice());
    let argv = a.argv("claude", 1);
    assert!(has_pair(&argv, "--tools", ""), "{argv:?}");
    assert!(argv.contains(&"--strict-mcp-config".to_string()));
    let i = argv.iter().position(|x| x == "--json-schema").unwrap();
    let schema: Value = serde_json::from_str(&argv[i + 1]).unwrap();
    assert_eq!(
        schema["properties"]["confidence"]["enum"],
        json!(["low", "medium", "high"])
    );
    for unsafe_flag in [
        "--dangerously-skip-permissions",
        "acceptEdits",
        "--permission-mode",
    ] {
        assert!(!argv.iter().any(|x| x == unsafe_flag), "{argv:?}");
    }
}

#[test]
fn pi_json_wrapped_in_prose_is_extracted() {
    let env = Env::new();
    let a = Advisers::new(&env);
    let pretty = serde_json::to_string_pretty(&good_advice()).unwrap();
    let text = format!("Here is what I think.\n\n```json\n{pretty}\n```\n\nGood luck!");
    a.install("pi", "").reply("pi", 1, &pi_reply(&text), 0);
    let r = ask(&env, &["--agent", "pi", "--help-type", "diagnosis", "why?"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "success");
    assert_eq!(j["advice"], good_advice());
    assert_eq!(j["message"], text, "the raw answer is kept");
    assert!(j["repair"].is_null());
    let argv = a.argv("pi", 1);
    assert!(argv.contains(&"--no-tools".to_string()), "{argv:?}");
    assert!(
        !argv
            .iter()
            .any(|x| x == "--tools" || x == "--output-schema")
    );
    assert!(packet_in(&a.file("pi", 1, "stdin")).contains("\"help_type\": \"diagnosis\""));
}

#[test]
fn gemini_cli_uses_the_default_approval_mode() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("gemini", "")
        .reply("gemini", 1, &gemini_reply(&good_advice().to_string()), 0);
    let r = ask(&env, &["--agent", "gemini-cli", "q"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.json()["advice"], good_advice());
    let argv = a.argv("gemini", 1);
    assert!(has_pair(&argv, "--approval-mode", "default"), "{argv:?}");
    assert!(!argv.iter().any(|x| x == "yolo" || x == "auto_edit"));
}

#[test]
fn invalid_json_is_repaired_once_in_the_same_session() {
    let env = Env::new();
    let a = Advisers::new(&env);
    let mut partial = good_advice();
    partial.as_object_mut().unwrap().remove("confidence");
    a.install("codex", "")
        .reply(
            "codex",
            1,
            &codex_reply("t-9", &format!("My advice: {partial}"), 100),
            0,
        )
        .reply(
            "codex",
            2,
            &codex_reply("t-9", &good_advice().to_string(), 130),
            0,
        );
    let r = ask(&env, &["--agent", "codex", "q"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "success");
    assert_eq!(j["advice"], good_advice());
    assert_eq!(a.calls("codex"), 2);
    let rep = &j["repair"];
    assert_eq!(rep["mode"], "resume");
    assert_eq!(rep["errors"], json!(["`confidence` is missing"]));
    assert_eq!(rep["first_answer"], format!("My advice: {partial}"));
    // The repair resumes the adviser's own session, still read-only, same cwd.
    let argv = a.argv("codex", 2);
    assert!(has_pair(&argv, "resume", "t-9"), "{argv:?}");
    assert!(has_pair(&argv, "--sandbox", "read-only"), "{argv:?}");
    assert!(argv.contains(&"--output-schema".to_string()));
    assert_eq!(a.cwd("codex", 1), a.cwd("codex", 2));
    let fix = a.file("codex", 2, "stdin");
    assert!(fix.contains("`confidence` is missing") && fix.contains("only the JSON object"));
    assert!(!fix.contains("<packet>"), "the packet is not sent twice");
    // Both rounds are paid for; the first log stays the main one.
    assert_eq!(j["usage"]["input_tokens"], 130, "codex usage is per thread");
    assert!(rep["log_path"].as_str().unwrap().contains("/repair/"));
    assert_ne!(j["log_path"], rep["log_path"]);
}

#[test]
fn invalid_twice_fails_with_the_raw_text_and_no_made_up_fields() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("claude", "")
        .reply(
            "claude",
            1,
            &claude_reply(Some("c-2"), "I would just retry it.", None),
            0,
        )
        .reply(
            "claude",
            2,
            &claude_reply(Some("c-2"), "Honestly, retry it.", None),
            0,
        );
    let r = ask(&env, &["--agent", "claude", "q"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "failed");
    assert!(j["advice"].is_null());
    assert_eq!(j["error"]["kind"], "invalid_advice");
    assert_eq!(j["message"], "Honestly, retry it.");
    assert_eq!(j["repair"]["first_answer"], "I would just retry it.");
    assert!(!j["advice_errors"].as_array().unwrap().is_empty());
    assert_eq!(a.calls("claude"), 2, "exactly one repair attempt");
    assert!(has_pair(&a.argv("claude", 2), "--resume", "c-2"));
    assert!(has_pair(&a.argv("claude", 2), "--tools", ""));
    assert_eq!(j["usage"]["input_tokens"], 22, "both rounds counted");
}

/// `--budget-tokens` counts every adviser call of the ask: a repair round
/// that would cross it (one more call of the first one's size) is not
/// started, and the result says what was spent.
#[test]
fn a_repair_round_that_would_cross_the_budget_is_not_started() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("codex", "")
        .reply("codex", 1, &codex_reply("t-b", "not json at all", 100), 0)
        .reply(
            "codex",
            2,
            &codex_reply("t-b", &good_advice().to_string(), 130),
            0,
        );
    let r = ask(&env, &["--agent", "codex", "--budget-tokens", "150", "q"]);
    let j = r.json();
    assert_eq!(r.code, 1, "{j}");
    assert_eq!(a.calls("codex"), 1, "the repair round never started");
    assert_eq!(j["status"], "failed");
    assert_eq!(j["error"]["kind"], "budget_exceeded", "{j}");
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--budget-tokens 150: 107 tokens spent over 1 call(s)"),
        "{j}"
    );
    assert_eq!(
        j["usage"]["input_tokens"], 100,
        "the first call's usage is kept"
    );
    assert_eq!(j["spending"]["spent_tokens"], 107);
    assert_eq!(j["spending"]["exceeded"], true);
    // A budget that fits lets the repair run.
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("codex", "")
        .reply("codex", 1, &codex_reply("t-c", "not json at all", 100), 0)
        .reply(
            "codex",
            2,
            &codex_reply("t-c", &good_advice().to_string(), 130),
            0,
        );
    let j = ask(&env, &["--agent", "codex", "--budget-tokens", "1000", "q"]).json();
    assert_eq!(j["status"], "success", "{j}");
    assert_eq!(j["spending"]["exceeded"], false);
    assert_eq!(j["spending"]["calls"], 2);
    // In `baton usage`: one run of two calls, the tokens of the result.
    let u = env.run(&["usage"]).json();
    assert_eq!(u["total"]["runs"], 1, "{u}");
    assert_eq!(u["total"]["calls"], 2);
    assert_eq!(u["total"]["input_tokens"], j["usage"]["input_tokens"]);
}

#[test]
fn without_a_session_the_repair_is_a_fresh_run_shown_its_answer() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("claude", "")
        .reply(
            "claude",
            1,
            &claude_reply(None, "Retry with a fresh dir.", None),
            0,
        )
        .reply(
            "claude",
            2,
            &claude_reply(None, &good_advice().to_string(), None),
            0,
        );
    let r = ask(&env, &["--agent", "claude", "q"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["repair"]["mode"], "fresh");
    let argv = a.argv("claude", 2);
    assert!(!argv.iter().any(|x| x == "--resume"), "{argv:?}");
    assert!(
        a.file("claude", 2, "stdin")
            .contains("<answer>\nRetry with a fresh dir.\n</answer>")
    );
}

/// The adviser's own output names the session a repair resumes: one that
/// would reach codex's argv as an option is not resumed (`agent::argv`).
#[test]
fn a_reported_session_that_looks_like_an_option_is_not_resumed() {
    let env = Env::new();
    let a = Advisers::new(&env);
    let hostile = "--dangerously-bypass-approvals-and-sandbox";
    a.install("codex", "")
        .reply("codex", 1, &codex_reply(hostile, "Retry it.", 10), 0)
        .reply(
            "codex",
            2,
            &codex_reply("t-2", &good_advice().to_string(), 10),
            0,
        );
    let r = ask(&env, &["--agent", "codex", "q"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["repair"]["mode"], "fresh");
    let argv = a.argv("codex", 2);
    assert!(
        !argv.iter().any(|x| x == hostile || x == "resume"),
        "{argv:?}"
    );
    assert!(
        j["warnings"].to_string().contains("does not pass to a CLI"),
        "{}",
        j["warnings"]
    );
}

#[test]
fn adviser_failure_is_a_failed_result_without_repair() {
    let env = Env::new();
    let a = Advisers::new(&env);
    let err = fs::read_to_string(crate::support::fixture("codex/codex-exec-error.jsonl")).unwrap();
    a.install("codex", "").reply("codex", 1, &err, 1);
    let r = ask(&env, &["--agent", "codex", "q"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "failed");
    assert_eq!(j["error"]["kind"], "agent_error");
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("scripted bad request")
    );
    assert!(j["advice"].is_null() && j["repair"].is_null());
    assert_eq!(a.calls("codex"), 1);
}

/// Each fake announces itself and waits for the other: run one after the
/// other, the first would wait in vain and fail.
fn rendezvous(me: &str, other: &str, then: &str) -> String {
    format!(
        r#": > "$FAKE_DIR/{me}.started"
i=0
while [ ! -f "$FAKE_DIR/{other}.started" ]; do
  i=$((i+1)); if [ "$i" -gt 1000 ]; then echo "never met {other}" >&2; exit 3; fi
  sleep 0.01
done
{then}"#
    )
}

#[test]
fn parallel_advisers_side_by_side_one_failing() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("codex", &rendezvous("codex", "claude", "sleep 1"))
        .reply(
            "codex",
            1,
            &codex_reply("t-p", &good_advice().to_string(), 50),
            0,
        )
        .install("claude", &rendezvous("claude", "codex", "sleep 1"))
        .reply("claude", 1, "", 1);
    fs::write(env.fake_dir.join("claude.err.1"), "Error: claude is down\n").unwrap();
    let r = ask(&env, &["--agents", "codex,claude", "q"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "partial");
    let rs = j["results"].as_array().unwrap();
    assert_eq!(rs.len(), 2);
    assert_eq!(rs[0]["agent"], "codex");
    assert_eq!(rs[0]["status"], "success");
    assert_eq!(rs[0]["advice"], good_advice());
    assert_eq!(rs[1]["agent"], "claude");
    assert_eq!(rs[1]["status"], "failed");
    assert!(
        rs[1]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("claude is down")
    );
    assert_eq!(rs[0]["request_id"], j["request_id"]);
    assert_eq!(rs[1]["request_id"], j["request_id"]);
    assert_eq!(
        j["context"]["packet_sha256"],
        rs[0]["context"]["packet_sha256"]
    );
    // Each adviser had its own empty directory.
    assert_ne!(a.cwd("codex", 1), a.cwd("claude", 1));
    // The rendezvous proves the advisers ran side by side (one after the
    // other, the first fails "never met"); the durations only have to be
    // consistent: the whole is at least its slowest part. No ratio of
    // timings here: on a loaded machine they are noise (see bench/).
    let d: Vec<u64> = rs
        .iter()
        .map(|r| r["duration_ms"].as_u64().unwrap())
        .collect();
    let total = j["duration_ms"].as_u64().unwrap();
    assert!(total >= *d.iter().max().unwrap(), "{total} vs {d:?}");
}

#[test]
fn parallel_all_good_and_a_missing_cli_does_not_sink_the_rest() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("codex", "")
        .reply(
            "codex",
            1,
            &codex_reply("t", &good_advice().to_string(), 1),
            0,
        )
        .install("pi", "")
        .reply("pi", 1, &pi_reply(&good_advice().to_string()), 0);
    let r = ask(&env, &["--agents", "codex,pi", "q"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "success");
    assert!(
        j["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["advice"] == good_advice())
    );

    a.reply(
        "codex",
        2,
        &codex_reply("t", &good_advice().to_string(), 1),
        0,
    );
    let r = ask(&env, &["--agents", "codex,claude", "q"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "partial");
    assert_eq!(j["results"][0]["status"], "success");
    assert_eq!(j["results"][1]["status"], "error");
    assert_eq!(j["results"][1]["error"]["kind"], "agent_not_installed");
}

/// Start baton, wait until every fake in `names` is running, send SIGINT to
/// baton alone, and check that it reports and that no fake survives.
fn interrupt(env: &Env, args: &[&str], names: &[&str]) -> Run {
    let mut child = env
        .baton()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid_file = |n: &str| env.fake_dir.join(format!("{n}.1.pid"));
    // A pid file is written by `echo $$ >`: it exists before it is full.
    let pid_of = |n: &str| {
        fs::read_to_string(pid_file(n))
            .ok()
            .and_then(|s| s.trim().parse::<i32>().ok())
    };
    assert!(wait_for(Duration::from_secs(20), || names
        .iter()
        .all(|n| pid_of(n).is_some())));
    let pids: Vec<i32> = names.iter().map(|n| pid_of(n).unwrap()).collect();
    let ok = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let until = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < until, "baton did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().unwrap();
    for pid in pids {
        assert!(
            wait_for(Duration::from_secs(5), || !crate::support::pid_alive(pid)),
            "peer {pid} outlived baton"
        );
    }
    Run {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Both wait on a gate that never opens.
const WAIT_FOREVER: &str = r#"while [ ! -f "$FAKE_DIR/gate" ]; do sleep 0.05; done"#;

#[test]
fn ctrl_c_stops_every_parallel_adviser() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("codex", WAIT_FOREVER)
        .install("claude", WAIT_FOREVER);
    let r = interrupt(
        &env,
        &["ask", "--agents", "codex,claude", "q"],
        &["codex", "claude"],
    );
    assert_eq!(r.code, 130, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "cancelled");
    for res in j["results"].as_array().unwrap() {
        assert_eq!(res["status"], "cancelled", "{res}");
        assert!(res["advice"].is_null());
    }
}

/// `Interrupts` became a broadcast for `ask`; `run` must still stop its peer.
#[test]
fn run_still_stops_its_peer_on_ctrl_c() {
    let env = Env::new();
    Advisers::new(&env).install("codex", WAIT_FOREVER);
    let r = interrupt(&env, &["run", "--agent", "codex", "q"], &["codex"]);
    assert_eq!(r.code, 130, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.json()["status"], "cancelled");
}

#[test]
fn repo_scope_reads_the_repository_read_only() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("claude", "")
        .reply(
            "claude",
            1,
            &claude_reply(Some("c"), "x", Some(good_advice())),
            0,
        )
        .install("pi", "")
        .reply("pi", 1, &pi_reply(&good_advice().to_string()), 0)
        .install("codex", "")
        .reply(
            "codex",
            1,
            &codex_reply("t", &good_advice().to_string(), 1),
            0,
        );
    let r = ask(
        &env,
        &["--agents", "claude,pi,codex", "--scope", "repo", "q"],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.json()["context"]["scope"], "repo");
    let work = env.work.canonicalize().unwrap();
    for n in ["claude", "pi", "codex"] {
        assert_eq!(a.cwd(n, 1), work, "{n}");
    }
    let c = a.argv("claude", 1);
    assert!(has_pair(&c, "--tools", "Read,Grep,Glob"), "{c:?}");
    assert!(c.contains(&"--strict-mcp-config".to_string()));
    assert!(has_pair(&a.argv("pi", 1), "--tools", "read,grep,find,ls"));
    assert!(has_pair(&a.argv("codex", 1), "--sandbox", "read-only"));
    assert!(a.file("claude", 1, "stdin").contains("read-only access"));
}

#[test]
fn agy_is_refused_before_anything_runs() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("agy", "");
    let r = ask(&env, &["--agent", "gemini", "q"]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["error"]["kind"], "unsupported_access");
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no enforceable read-only mode")
    );
    assert_eq!(a.calls("agy"), 0);
}

#[test]
fn credential_files_are_refused_with_exit_2() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("codex", "");
    fs::write(env.work.join(".env"), "SECRET=1\n").unwrap();
    fs::create_dir(env.tmp.path().join(".ssh")).unwrap();
    fs::write(env.tmp.path().join(".ssh/id_x"), "KEY").unwrap();
    std::os::unix::fs::symlink(env.tmp.path().join(".ssh/id_x"), env.work.join("notes.md"))
        .unwrap();
    fs::create_dir(env.work.join("sub")).unwrap();
    for (file, why) in [
        (".env", "`.env` files hold secrets"),
        ("notes.md", "under `.ssh`"),
        ("sub/../../.ssh/id_x", "under `.ssh`"),
    ] {
        let r = ask(&env, &["--file", file, "q"]);
        assert_eq!(r.code, 2, "{file}: {}", r.stdout);
        let j = r.json();
        assert_eq!(j["error"]["kind"], "credential_file");
        let m = j["error"]["message"].as_str().unwrap();
        assert!(m.contains(file) && m.contains(why), "{m}");
    }
    assert_eq!(a.calls("codex"), 0);
}

#[test]
fn secrets_are_redacted_before_sending_and_counted() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("codex", "").reply(
        "codex",
        1,
        &codex_reply("t", &good_advice().to_string(), 1),
        0,
    );
    fs::write(
        env.work.join("config.toml"),
        "token = \"ghp_1234567890abcdefghijABCDEFGHIJ123456\"\npassword = \"s3rv1ce-pa55word\"\n",
    )
    .unwrap();
    let out = env
        .baton()
        .env("MY_SERVICE_PASSWORD", "s3rv1ce-pa55word")
        .args([
            "ask",
            "--file",
            "config.toml",
            "--snippet",
            "Authorization: Bearer abc123DEF456ghi789JKL",
            "why does sk-proj-Abc123Def456Ghi789Jkl012Mno345 get a 401?",
        ])
        .output()
        .unwrap();
    let r = Run::from(out);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let stdin = a.file("codex", 1, "stdin");
    for secret in [
        "ghp_1234",
        "s3rv1ce-pa55word",
        "abc123DEF456",
        "sk-proj-Abc",
    ] {
        assert!(!stdin.contains(secret), "{secret} was sent");
    }
    assert!(stdin.contains("[REDACTED:github_token]"));
    let red = &r.json()["context"]["redactions"];
    assert_eq!(red["github_token"], 1);
    assert_eq!(red["env:MY_SERVICE_PASSWORD"], 1);
    assert_eq!(red["bearer_token"], 1);
    assert_eq!(red["api_key"], 1);
    assert_eq!(r.json()["context"]["redacted_total"], 4);
}

/// Issue 20: `.pgpass`, `.htpasswd` and Terraform state files are refused
/// by name, and their content piped on stdin is refused by shape.
#[test]
fn pgpass_htpasswd_and_tfstate_files_are_refused() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("codex", "");
    fs::create_dir(env.work.join("infra")).unwrap();
    let pgpass = "db.example.com:5432:app:app:Xk29vLq0pR\n";
    let htpasswd = "admin:$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/\n";
    let state = "{\n  \"version\": 4,\n  \"terraform_version\": \"1.9.5\",\n  \"serial\": 1,\n  \"lineage\": \"x\",\n  \"resources\": []\n}\n";
    for (file, content, why) in [
        (".pgpass", pgpass, "PostgreSQL passwords"),
        (".htpasswd", htpasswd, "password hashes"),
        ("infra/terraform.tfstate", state, "Terraform state"),
        ("infra/terraform.tfstate.backup", state, "Terraform state"),
    ] {
        fs::write(env.work.join(file), content).unwrap();
        let r = ask(&env, &["--file", file, "q"]);
        assert_eq!(r.code, 2, "{file}: {}", r.stdout);
        let j = r.json();
        assert_eq!(j["error"]["kind"], "credential_file", "{file}: {j}");
        let m = j["error"]["message"].as_str().unwrap();
        assert!(m.contains(file) && m.contains(why), "{m}");
    }
    for stdin in [pgpass, htpasswd, state] {
        let mut c = env.baton();
        c.args(["ask", "--agent", "codex"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        {
            use std::io::Write;
            let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
        }
        let r = Run::from(child.wait_with_output().unwrap());
        assert_eq!(r.code, 2, "{stdin}: {}", r.stdout);
        assert_eq!(r.json()["error"]["kind"], "credential_file", "{stdin}");
    }
    assert_eq!(a.calls("codex"), 0);
}

/// Issue 20: the shapes that reached the adviser unredacted in 0.2.0, sent
/// as snippets (content that is not a file baton can refuse by name).
#[test]
fn issue_20_shapes_are_redacted_before_sending() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("codex", "").reply(
        "codex",
        1,
        &codex_reply("t", &good_advice().to_string(), 1),
        0,
    );
    let tfstate = "{\"type\": \"random_password\", \"name\": \"db\", \"instances\": [{\"attributes\": {\"length\": 20, \"result\": \"Xy8#kP2!mQ9$vR4@aB1c\"}}]}";
    let out = env
        .baton()
        .args([
            "ask",
            "--snippet",
            r#"{"db": "https:\/\/user:S3cr3tPassw0rd@db.example.com\/x"}"#,
            "--snippet",
            "DB_PASS=Hq7vT2xLm9Kz\nsmtp_passwd: 'Wp4nZ8rQ2s'\nMYSQL_PWD=Zq8mT2vKx5",
            "--snippet",
            "db.example.com:5432:appdb:app:Pg5pAss9Wq",
            "--snippet",
            "admin:$2y$10$abcdefghijklmnopqrstuuE8Rk1eS1PGh/JVg0pr1tYpdyH.jDRsa",
            "--snippet",
            tfstate,
            "why does the login fail?",
        ])
        .output()
        .unwrap();
    let r = Run::from(out);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let stdin = a.file("codex", 1, "stdin");
    for secret in [
        "S3cr3tPassw0rd",
        "Hq7vT2xLm9Kz",
        "Wp4nZ8rQ2s",
        "Zq8mT2vKx5",
        "Pg5pAss9Wq",
        "uuE8Rk1eS1PGh",
        "Xy8#kP2!mQ9",
    ] {
        assert!(!stdin.contains(secret), "{secret} was sent:\n{stdin}");
    }
    let red = &r.json()["context"]["redactions"];
    assert_eq!(red["url_password"], 1, "{red}");
    assert_eq!(red["password"], 5, "{red}");
    assert_eq!(red["password_hash"], 1, "{red}");
    assert_eq!(r.json()["context"]["redacted_total"], 7);
}

/// Issue 10: a line range that starts inside a PEM block (no BEGIN line in
/// the range) or ends inside it (no END line) still sends no key material.
#[test]
fn a_line_range_inside_a_private_key_sends_none_of_it() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("codex", "");
    let body: Vec<String> = (0..6)
        .map(|i| format!("MIIEow{i}BAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun{i}"))
        .collect();
    let doc = format!(
        "# Deploy key\n\n-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\nRotate it yearly.\n",
        body.join("\n")
    );
    // Lines 4-9 are the body, 10 the END line.
    fs::write(env.work.join("keydoc.md"), doc).unwrap();
    for (n, range, kept) in [
        (1, "keydoc.md:5-8", None),
        (2, "keydoc.md:6-11", Some("Rotate it yearly.")),
        (3, "keydoc.md:1-6", Some("# Deploy key")),
    ] {
        a.reply(
            "codex",
            n,
            &codex_reply("t", &good_advice().to_string(), 1),
            0,
        );
        let r = ask(&env, &["--file", range, "what is this file?"]);
        assert_eq!(r.code, 0, "{range}: {}\n{}", r.stdout, r.stderr);
        let stdin = a.file("codex", n, "stdin");
        for line in &body {
            assert!(
                !stdin.contains(line.as_str()),
                "{range}: key line sent:\n{stdin}"
            );
        }
        assert!(stdin.contains("[REDACTED:private_key]"), "{range}: {stdin}");
        if let Some(k) = kept {
            assert!(stdin.contains(k), "{range}: {k:?} lost");
        }
        let j = r.json();
        assert_eq!(j["context"]["redactions"]["private_key"], 1, "{range}");
        let first: u64 = range[10..].split('-').next().unwrap().parse().unwrap();
        assert_eq!(j["context"]["files"][0]["start_line"], first);
    }
}

/// Issue 10's measured leaks, end to end: digit-free GitHub tokens, ABIA/ACCA
/// key ids, and the secret key as `aws sts` prints it.
#[test]
fn measured_leaks_are_redacted_before_sending() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("codex", "").reply(
        "codex",
        1,
        &codex_reply("t", &good_advice().to_string(), 1),
        0,
    );
    let secrets = [
        "ghp_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ",
        "ABIAQWERTYUIOPASDFGH",
        "ACCAZXCVBNMASDFGHJKL",
        "wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEYQ",
    ];
    fs::write(
        env.work.join("creds.json"),
        format!(
            "{{\"token\": \"{}\", \"ids\": [\"{}\", \"{}\"],\n \"Credentials\": {{\"SecretAccessKey\": \"{}\"}}}}\n",
            secrets[0], secrets[1], secrets[2], secrets[3]
        ),
    )
    .unwrap();
    let r = ask(&env, &["--file", "creds.json", "why is this rejected?"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let stdin = a.file("codex", 1, "stdin");
    for s in secrets {
        assert!(!stdin.contains(s), "{s} was sent");
    }
    let red = &r.json()["context"]["redactions"];
    assert_eq!(red["github_token"], 1);
    assert_eq!(red["aws_access_key_id"], 2);
    assert_eq!(red["aws_secret_key"], 1);
}

#[test]
fn a_packet_over_the_limit_is_refused_not_truncated() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("codex", "");
    fs::write(env.work.join("big.log"), "line of log\n".repeat(1000)).unwrap();
    let r = ask(&env, &["--file", "big.log", "--max-chars", "5000", "q"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    let j = r.json();
    assert_eq!(j["error"]["kind"], "packet_too_large");
    let m = j["error"]["message"].as_str().unwrap();
    assert!(
        m.contains("over the limit of 5000") && m.contains("big.log"),
        "{m}"
    );
    assert_eq!(a.calls("codex"), 0);
    // A line range fits.
    a.reply(
        "codex",
        1,
        &codex_reply("t", &good_advice().to_string(), 1),
        0,
    );
    let r = ask(
        &env,
        &["--file", "big.log:1-10", "--max-chars", "5000", "q"],
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(r.json()["context"]["files"][0]["end_line"], 10);
}

#[test]
fn the_task_budget_allows_two_consultations() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("codex", "");
    for n in 1..=2 {
        a.reply(
            "codex",
            n,
            &codex_reply("t", &good_advice().to_string(), 1),
            0,
        );
        let r = ask(&env, &["--task-id", "fix-login", "q"]);
        assert_eq!(r.code, 0, "{}", r.stdout);
        assert_eq!(
            r.json()["budget"],
            json!({"task_id": "fix-login", "used": n, "limit": 2})
        );
    }
    let r = ask(&env, &["--task-id", "fix-login", "one more?"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    let j = r.json();
    assert_eq!(j["error"]["kind"], "budget_exhausted");
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("used 2 of its 2")
    );
    assert_eq!(a.calls("codex"), 2);
    // The budget lives in baton's state directory and a person can raise it.
    assert!(env.records("ask-budget").is_dir());
    assert!(!env.work.join(".baton").exists());
    a.reply(
        "codex",
        3,
        &codex_reply("t", &good_advice().to_string(), 1),
        0,
    );
    let out = env
        .baton()
        .env("BATON_ASK_BUDGET", "3")
        .args(["ask", "--task-id", "fix-login", "q"])
        .output()
        .unwrap();
    assert_eq!(Run::from(out).code, 0);
}

#[test]
fn a_follow_up_round_carries_the_previous_advice() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("codex", "").reply(
        "codex",
        1,
        &codex_reply("t", &good_advice().to_string(), 1),
        0,
    );
    let prev = env.tmp.path().join("prev.json");
    fs::write(
        &prev,
        json!({"status": "success", "advice": {"recommendation": "use a tempdir"}}).to_string(),
    )
    .unwrap();
    let r = ask(
        &env,
        &[
            "--previous-advice",
            prev.to_str().unwrap(),
            "--follow-up",
            "it still fails on CI",
            "why is the test flaky?",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let sent: Value = serde_json::from_str(packet_in(&a.file("codex", 1, "stdin"))).unwrap();
    assert_eq!(sent["previous_advice"]["recommendation"], "use a tempdir");
    assert_eq!(sent["follow_up"], "it still fails on CI");
}

#[test]
fn packet_file_and_diff() {
    let env = Env::new();
    env.git_init();
    fs::write(env.work.join("README"), "hello\nworld\n").unwrap();
    let a = Advisers::new(&env);
    a.install("codex", "").reply(
        "codex",
        1,
        &codex_reply("t", &good_advice().to_string(), 1),
        0,
    );
    let packet = env.tmp.path().join("packet.json");
    fs::write(
        &packet,
        json!({"question": "is this change right?", "help_type": "code_review",
               "constraints": ["no new dependencies"], "snippets": [{"label": "log", "content": "E1"}]})
            .to_string(),
    )
    .unwrap();
    let r = ask(&env, &["--packet", packet.to_str().unwrap(), "--diff"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    let sent: Value = serde_json::from_str(packet_in(&a.file("codex", 1, "stdin"))).unwrap();
    assert_eq!(sent["help_type"], "code_review");
    assert_eq!(sent["constraints"], json!(["no new dependencies"]));
    assert!(sent["diff"].as_str().unwrap().contains("+world"));
    assert_eq!(
        j["context"]["diff_chars"],
        sent["diff"].as_str().unwrap().chars().count()
    );
    // The repository was not changed and git sees no baton state.
    assert!(j["changed_files"].as_array().unwrap().is_empty());
}

#[test]
fn recursion_guard_and_usage_errors() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("codex", "");
    let out = env
        .baton()
        .env("BATON_DEPTH", "1")
        .args(["ask", "q"])
        .output()
        .unwrap();
    let r = Run::from(out);
    assert_eq!(r.code, 2);
    assert_eq!(r.json()["error"]["kind"], "recursion_limit");
    for args in [
        &["ask"][..],
        &["ask", "--scope", "everything", "q"],
        &["ask", "--help-type", "gossip", "q"],
        &["ask", "--follow-up", "more?", "q"],
        &["ask", "--agent", "codex", "--agents", "claude", "q"],
    ] {
        let r = env.run(args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stdout);
    }
    assert_eq!(a.calls("codex"), 0);
}

#[test]
fn dry_run_shows_everything_and_runs_nothing() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("codex", "").install("claude", "");
    let r = ask(
        &env,
        &[
            "--agents",
            "codex,claude",
            "--task-id",
            "t",
            "--dry-run",
            "q",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["dry_run"], true);
    assert_eq!(j["packet"]["question"], "q");
    assert!(j["prompt"].as_str().unwrap().contains("<packet>"));
    let codex_argv: Vec<&str> = j["advisers"][0]["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        codex_argv
            .windows(2)
            .any(|w| w == ["--sandbox", "read-only"])
    );
    let cwd = Path::new(j["advisers"][1]["cwd"].as_str().unwrap());
    assert!(
        !cwd.exists(),
        "the dry run's empty directory was left behind"
    );
    assert_eq!(a.calls("codex") + a.calls("claude"), 0);
    assert!(
        !env.work.join(".baton/ask-budget").exists(),
        "a dry run spends no budget"
    );
}

#[test]
fn text_mode_lays_out_the_advice() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("codex", "").reply(
        "codex",
        1,
        &codex_reply("t", &good_advice().to_string(), 1),
        0,
    );
    let r = ask(&env, &["--text", "q"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("Recommendation:\n  Give each test its own tempdir."),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("  - run the tests serially: slower CI"));
}

#[test]
fn a_hardlink_to_a_credential_file_is_refused() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("codex", "");
    fs::write(env.work.join(".env"), "DB_PASSWORD=hunter2hunter2\n").unwrap();
    fs::hard_link(env.work.join(".env"), env.work.join("hardlink.txt")).unwrap();
    // And one to a key in a well-known place outside the repository.
    let home = env.tmp.path().join("home");
    fs::create_dir_all(home.join(".ssh")).unwrap();
    fs::write(home.join(".ssh/id_ed25519"), "KEY").unwrap();
    fs::hard_link(home.join(".ssh/id_ed25519"), env.work.join("notes.txt")).unwrap();
    for file in ["hardlink.txt", "notes.txt"] {
        let r = Run::from(
            env.baton()
                .env("HOME", &home)
                .args(["ask", "--agent", "codex", "--file", file, "q"])
                .output()
                .unwrap(),
        );
        assert_eq!(r.code, 2, "{file}: {}", r.stdout);
        let j = r.json();
        assert_eq!(j["error"]["kind"], "credential_file", "{file}: {j}");
        assert!(
            j["error"]["message"].as_str().unwrap().contains(file),
            "{j}"
        );
    }
    assert_eq!(a.calls("codex"), 0);
}

#[test]
fn credential_content_on_stdin_is_refused() {
    let env = Env::new();
    let a = Advisers::new(&env);
    a.install("codex", "");
    let dotenv = "# local settings\nDATABASE_URL=postgres://u:p@db/x\nAWS_SECRET_ACCESS_KEY=abcdEFGHijklMNOPqrstUVWXyz0123456789abcd\nSTRIPE_API_KEY=sk_live_0123456789\nDEBUG=1\n";
    let pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n";
    let aws = "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n";
    for (args, stdin) in [
        (
            vec!["--previous-advice", "-", "--follow-up", "and now?", "q"],
            dotenv,
        ),
        (vec!["--previous-advice", "-", "--follow-up", "?", "q"], aws),
        (vec![], pem),
        (vec![], dotenv),
        (vec!["--packet", "-"], pem),
    ] {
        let mut full = vec!["ask", "--agent", "codex"];
        full.extend_from_slice(&args);
        let mut c = env.baton();
        c.args(&full)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        {
            use std::io::Write;
            let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
        }
        let r = Run::from(child.wait_with_output().unwrap());
        assert_eq!(r.code, 2, "{args:?}: {}", r.stdout);
        let j = r.json();
        assert_eq!(j["error"]["kind"], "credential_file", "{args:?}: {j}");
        assert!(
            j["error"]["message"].as_str().unwrap().contains("stdin"),
            "{j}"
        );
    }
    assert_eq!(a.calls("codex"), 0);
    // Ordinary text that merely mentions a setting still goes through.
    a.reply(
        "codex",
        1,
        &codex_reply("t", &good_advice().to_string(), 1),
        0,
    );
    let mut child = env
        .baton()
        .args(["ask", "--agent", "codex"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let _ = child
            .stdin
            .take()
            .unwrap()
            .write_all(b"Why does DEBUG=1 make the login test flaky?\n");
    }
    let r = Run::from(child.wait_with_output().unwrap());
    assert_eq!(r.code, 0, "{}", r.stdout);
}
