//! The public JSON, re-declared here as test-only structs that refuse
//! unknown fields. Real runs against fake CLIs must deserialize into them, and
//! the JSON Schema must list exactly these fields: a field added, renamed or
//! removed in `src/result.rs` fails here until this file (the contract) is
//! updated on purpose.

use serde::Deserialize;

use crate::run::fake_cli;
use crate::support::{Env, Run, record};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct RunResult {
    schema_version: u32,
    status: Status,
    summary: String,
    message: Option<String>,
    agent: String,
    model: Option<String>,
    model_requested: Option<String>,
    effort: Option<String>,
    access: String,
    cwd: String,
    session: Option<String>,
    changed_files: Vec<String>,
    usage: Usage,
    duration_ms: u64,
    exit_code: Option<i32>,
    log_path: Option<String>,
    warnings: Vec<String>,
    #[serde(default)]
    denials: Vec<Denial>,
    error: Option<ErrorInfo>,
    verification: Option<Verification>,
    #[serde(default)]
    job_id: Option<String>,
    #[serde(default)]
    attempts: Vec<Attempt>,
    #[serde(default)]
    spending: Option<Spending>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Attempt {
    agent: String,
    model: Option<String>,
    status: Status,
    kind: Option<String>,
    #[serde(default)]
    retry_after_s: Option<u64>,
    duration_ms: u64,
    usage: Usage,
    #[serde(default)]
    changed_files: Vec<String>,
    log_path: Option<String>,
    #[serde(default)]
    then: Option<String>,
    #[serde(default)]
    waited_ms: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Spending {
    max_usd: Option<f64>,
    max_tokens: Option<u64>,
    spent_usd: Option<f64>,
    spent_tokens: u64,
    cost_estimated: bool,
    unpriced_calls: u32,
    calls: u32,
    exceeded: bool,
}

/// Keys always present (null when empty) in a run result.
const RESULT_KEYS: &[&str] = &[
    "schema_version",
    "status",
    "summary",
    "message",
    "agent",
    "model",
    "model_requested",
    "effort",
    "access",
    "cwd",
    "session",
    "changed_files",
    "usage",
    "duration_ms",
    "exit_code",
    "log_path",
    "warnings",
    "error",
    "verification",
];

/// Keys present only when they say something.
const OPTIONAL_RESULT_KEYS: &[&str] = &["denials", "job_id", "attempts", "spending"];

#[derive(Debug, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Status {
    Success,
    Failed,
    Timeout,
    Cancelled,
    Running,
    Lost,
    Error,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Usage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cached_input_tokens: Option<u64>,
    #[serde(default)]
    reasoning_output_tokens: Option<u64>,
    cost_usd: Option<f64>,
    #[serde(default)]
    cost_estimated: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ErrorInfo {
    kind: String,
    message: String,
    hint: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Denial {
    tool: String,
    detail: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Verification {
    command: String,
    exit_code: Option<i32>,
    passed: bool,
    output_tail: String,
}

/// What baton prints when it could not do its job (usage error, missing CLI).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ErrorReport {
    schema_version: u32,
    status: Status,
    summary: String,
    error: ErrorInfo,
    exit_code: Option<i32>,
}

fn result_of(r: &Run) -> RunResult {
    let v = r.json();
    for k in RESULT_KEYS {
        assert!(v.get(k).is_some(), "result lacks `{k}`: {v}");
    }
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}: {v}"))
}

#[test]
fn successful_and_failed_runs_match_the_contract() {
    let env = Env::new();
    env.git_init();
    fake_cli(&env, "codex", "codex/codex-exec-usage.jsonl", None, 0);
    let ok = result_of(&env.run(&["think"]));
    assert_eq!(ok.status, Status::Success);
    assert!(ok.error.is_none());
    assert_eq!(ok.usage.reasoning_output_tokens, Some(20));

    fake_cli(&env, "claude", "claude/claude-api-error.json", None, 1);
    let failed = result_of(&env.run(&["--agent", "claude", "x"]));
    assert_eq!(failed.status, Status::Failed);
    assert_eq!(failed.error.unwrap().kind, "agent_error");

    fake_cli(
        &env,
        "claude",
        "claude/claude-permission-denied.json",
        None,
        0,
    );
    let denied = result_of(&env.run(&["--agent", "claude", "x"]));
    assert_eq!(denied.denials.len(), 1);

    for (agent, bin, f) in [
        ("gemini", "agy", "agy/agy-json-success.json"),
        ("zai", "pi", "pi/pi-json-basic.jsonl"),
        ("gemini-cli", "gemini", "gemini-cli/gemini-stream.jsonl"),
    ] {
        fake_cli(&env, bin, f, None, 0);
        let r = result_of(&env.run(&["--agent", agent, "x"]));
        assert_eq!(r.status, Status::Success, "{agent}");
    }
}

#[test]
fn timeout_result_matches_the_contract() {
    let env = Env::new();
    env.fake("codex", &format!("{}\nexec sleep 30", record("codex")));
    let r = result_of(&env.run(&["--timeout", "300ms", "x"]));
    assert_eq!(r.status, Status::Timeout);
    assert!(r.exit_code.is_none());
}

#[test]
fn error_reports_match_the_contract() {
    let env = Env::new();
    for (args, path, code) in [
        (&["--frobnicate"][..], None, 2),
        (&["--agent", "nope", "x"][..], None, 2),
        (&["x"][..], Some(env.bin.clone()), 127),
    ] {
        let mut c = env.baton();
        if let Some(p) = path {
            c.env("PATH", p);
        }
        let r = Run::from(c.args(args).output().unwrap());
        assert_eq!(r.code, code);
        let e: ErrorReport = serde_json::from_value(r.json()).unwrap();
        assert_eq!(e.status, Status::Error);
        assert_eq!(e.exit_code, Some(code));
    }
}

#[test]
fn the_schema_lists_exactly_the_contract_fields() {
    let env = Env::new();
    let s = env.run(&["schema"]).json();
    let mut props: Vec<&str> = s["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    props.sort_unstable();
    let mut want: Vec<&str> = RESULT_KEYS
        .iter()
        .chain(OPTIONAL_RESULT_KEYS)
        .copied()
        .collect();
    want.sort_unstable();
    assert_eq!(props, want);
    let mut usage: Vec<&str> = s
        .pointer("/$defs/Usage/properties")
        .and_then(|u| u.as_object())
        .expect("Usage in $defs")
        .keys()
        .map(String::as_str)
        .collect();
    usage.sort_unstable();
    assert_eq!(
        usage,
        [
            "cached_input_tokens",
            "cost_estimated",
            "cost_usd",
            "input_tokens",
            "output_tokens",
            "reasoning_output_tokens"
        ]
    );
}
