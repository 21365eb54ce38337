//! What `baton ask` prints: the dry-run plan, an adviser's error as a result,
//! the side-by-side envelope of several advisers, and the text for people.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

use crate::agent::Agent;
use crate::error::{Error, Result};
use crate::output::{self, Mode};
use crate::result::{ErrorInfo, RunResult, SCHEMA_VERSION, Status};
use crate::run::{self};

use super::advice::{self, Scope};
use super::adviser::Prepared;
use super::budget::Budget;
use super::packet::Built;
use super::{Context, Shared};

/// What `baton ask --agents a,b` prints: the advisers side by side
/// (`baton schema ask-envelope`).
#[derive(Debug, Serialize, JsonSchema)]
pub struct Envelope {
    pub schema_version: u32,
    /// `success` when every adviser succeeded, the shared status when all
    /// ended alike, else `partial` (some advice, not all) or `failed`.
    #[schemars(schema_with = "envelope_status")]
    pub status: String,
    pub summary: String,
    /// This consultation's id, shared by every adviser's result.
    pub request_id: String,
    pub scope: Scope,
    pub context: Context,
    /// Wall time, about the slowest adviser's.
    pub duration_ms: u64,
    /// One full result per adviser, in the order given.
    pub results: Vec<RunResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// `--max-usd`, `--budget-tokens`: the limits and what every adviser
    /// call together spent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spending: Option<crate::result::Spending>,
}

fn envelope_status(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["success", "failed", "timeout", "cancelled", "error", "partial"],
    })
}

pub(super) fn dry_run(
    request_id: &str,
    context: &Context,
    prompt: &str,
    built: &Built,
    prepared: &[std::result::Result<Prepared, (Agent, Error)>],
) -> Value {
    let advisers: Vec<Value> = prepared
        .iter()
        .map(|p| match p {
            Ok(p) => {
                let mut v = run::dry_run_json(&p.plan, &p.spec);
                if let Some(o) = v.as_object_mut() {
                    for k in ["schema_version", "dry_run", "prompt", "config_files"] {
                        o.remove(k);
                    }
                }
                v
            }
            Err((agent, e)) => json!({
                "agent": agent.name(),
                "error": {"kind": e.kind(), "message": e.to_string(), "hint": e.hint()},
            }),
        })
        .collect();
    json!({
        "schema_version": SCHEMA_VERSION,
        "dry_run": true,
        "request_id": request_id,
        "context": context,
        "packet": serde_json::from_str::<Value>(&built.text).unwrap_or(Value::Null),
        "prompt": prompt,
        "advice_schema": advice::schema_value(),
        "advisers": advisers,
        "config_files": crate::config::active().files_read(),
    })
}

/// A result for an adviser that could not be run at all (multi-adviser mode).
pub(super) fn error_result(agent: Agent, e: &Error, shared: &Shared) -> RunResult {
    let mut extra = serde_json::Map::new();
    extra.insert("request_id".into(), json!(shared.request_id));
    extra.insert("advice".into(), Value::Null);
    extra.insert("context".into(), json!(shared.context));
    extra.insert("repair".into(), Value::Null);
    RunResult {
        schema_version: SCHEMA_VERSION,
        status: Status::Error,
        summary: format!("{}: {e}", agent.name()),
        message: None,
        agent: agent.name().to_string(),
        model: None,
        model_requested: None,
        effort: None,
        access: crate::agent::Access::ReadOnly.as_str().to_string(),
        cwd: String::new(),
        session: None,
        changed_files: Vec::new(),
        usage: Default::default(),
        duration_ms: 0,
        exit_code: None,
        log_path: None,
        warnings: Vec::new(),
        denials: Vec::new(),
        error: Some(ErrorInfo {
            retry_after_s: None,
            kind: e.kind().to_string(),
            message: e.to_string(),
            hint: e.hint(),
        }),
        verification: None,
        job_id: None,
        attempts: Vec::new(),
        spending: None,
        extra,
    }
}

/// Several advisers side by side. The exit code is the shared status's when
/// they all ended alike, else 1 (`partial`: some advice, not all).
pub(super) fn multi_envelope(
    shared: &Shared,
    results: Vec<RunResult>,
    wall: std::time::Duration,
    spending: Option<crate::result::Spending>,
) -> (Value, i32) {
    let statuses: Vec<Status> = results.iter().map(|r| r.status).collect();
    let first = statuses[0];
    let (status, code) = if statuses.iter().all(|s| *s == first) {
        (first.as_str().to_string(), first.exit_code())
    } else if statuses.contains(&Status::Success) {
        ("partial".to_string(), crate::error::exit::FAILED)
    } else {
        ("failed".to_string(), crate::error::exit::FAILED)
    };
    let ok = statuses.iter().filter(|s| **s == Status::Success).count();
    let summary = format!(
        "{ok} of {} advisers answered in {:.1}s: {}",
        results.len(),
        wall.as_secs_f64(),
        results
            .iter()
            .map(|r| format!("{} {}", r.agent, r.status.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let envelope = Envelope {
        schema_version: SCHEMA_VERSION,
        status,
        summary,
        request_id: shared.request_id.clone(),
        scope: shared.scope,
        context: shared.context.clone(),
        duration_ms: wall.as_millis() as u64,
        results,
        budget: shared.budget.clone(),
        spending,
    };
    let v = serde_json::to_value(&envelope).unwrap_or(Value::Null);
    (v, code)
}

pub(super) fn print_one(r: &RunResult, mode: Mode) -> Result<()> {
    match mode {
        Mode::Json => output::json_line(r),
        Mode::Text => output::text(&text_of(r)),
    }
}

/// People get the advice laid out, not the raw JSON.
pub(super) fn text_of(r: &RunResult) -> String {
    let mut s = String::new();
    s.push_str(&format!("{}\n", r.summary));
    s.push_str(&format!(
        "adviser:  {} (model {}, {} scope)\n",
        r.agent,
        r.model.as_deref().unwrap_or("default"),
        r.extra
            .get("context")
            .and_then(|c| c["scope"].as_str())
            .unwrap_or("?")
    ));
    if let Some(sess) = &r.session {
        s.push_str(&format!("session:  {sess}\n"));
    }
    if let Some(p) = &r.log_path {
        s.push_str(&format!("log:      {p}\n"));
    }
    for w in &r.warnings {
        s.push_str(&format!("warning:  {w}\n"));
    }
    if let Some(e) = &r.error {
        s.push_str(&format!("error:    [{}] {}\n", e.kind, e.message));
    }
    match r.extra.get("advice").filter(|a| !a.is_null()) {
        Some(a) => {
            let list = |s: &mut String, title: &str, k: &str| {
                if let Some(items) = a[k].as_array().filter(|i| !i.is_empty()) {
                    s.push_str(&format!("\n{title}:\n"));
                    for i in items {
                        match i.as_str() {
                            Some(t) => s.push_str(&format!("  - {t}\n")),
                            None => s.push_str(&format!(
                                "  - {}: {}\n",
                                i["option"].as_str().unwrap_or(""),
                                i["tradeoffs"].as_str().unwrap_or("")
                            )),
                        }
                    }
                }
            };
            s.push_str(&format!(
                "\nAssessment ({} confidence):\n  {}\n",
                a["confidence"].as_str().unwrap_or("?"),
                a["assessment"].as_str().unwrap_or("")
            ));
            s.push_str(&format!(
                "\nRecommendation:\n  {}\n",
                a["recommendation"].as_str().unwrap_or("")
            ));
            list(&mut s, "Alternatives", "alternatives");
            list(&mut s, "Risks", "risks");
            list(&mut s, "Verification", "verification_steps");
            list(&mut s, "Missing context", "missing_context");
            if let Some(code) = a["proposed_code"].as_str() {
                s.push_str(&format!("\nProposed code:\n{}\n", code.trim_end()));
            }
        }
        None => {
            if let Some(m) = &r.message {
                s.push_str(&format!("\n{}\n", m.trim_end()));
            }
        }
    }
    s
}
