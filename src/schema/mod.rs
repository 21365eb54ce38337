//! `baton schema [NAME]`: every published JSON Schema, by name. The result's
//! is `result::RunResult` plus the objects features add to it (`worktree`,
//! `handoff`, ask's `advice`, `context`, …), each derived from the type that
//! the feature serialises, so what a result carries is what the schema says.
//!
//! Schemas follow the serialisation contract: a field that is always printed
//! (null when empty) is `required`; one left out when empty is not.
//! `tests/json.rs` checks real output of every kind against these schemas
//! with unknown fields forbidden.

mod either;

pub use either::{Branch, either};

use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Value, json};

use crate::ask::consult::RepairReport;
use crate::ask::{Context, Envelope, advice, budget::Budget};
use crate::job::handoff::Handoff;
use crate::result::{ErrorReport, RunResult, SCHEMA_VERSION};
use crate::worktree::{NotCommitted, Report};

/// The names `baton schema` accepts besides the default (the result).
pub const NAMES: &[&str] = &[
    "result",
    "error",
    "ask-envelope",
    "council",
    "council-proposal",
    "council-critique",
    "council-plan",
    "council-review",
    "fanout",
    "fanout-review",
    "run-or-fanout",
    "job-result",
    "ask",
    "job-status",
    "jobs",
    "jobs-all-repos",
    "agents",
    "doctor",
    "bench-task",
    "bench-set",
    "bench-mine",
    "bench-list",
    "bench-show",
    "bench-export",
    "bench-trial",
    "bench-report",
    "notify-event",
    "notify-test",
];

/// The schema called `name` (`None`: the result's).
pub fn named(name: Option<&str>) -> Option<Value> {
    match name {
        None | Some("result" | "run") => Some(result()),
        Some("error") => Some(error()),
        Some("ask-envelope") => Some(ask_envelope()),
        Some("fanout") => Some(fanout()),
        Some("fanout-review") => Some(crate::fanout::review::schema_value()),
        Some("run-or-fanout") => Some(run_or_fanout()),
        Some("job-result") => Some(job_result()),
        Some("ask") => Some(ask()),
        Some("job-status") => Some(job_status()),
        Some("jobs") => Some(typed::<crate::job::Listing>("jobs")),
        Some("jobs-all-repos") => Some(typed::<crate::view::repos::print::Listing>(
            "jobs-all-repos",
        )),
        Some("agents") => Some(typed::<crate::doctor::agents::Listing>("agents")),
        Some("doctor") => Some(typed::<crate::doctor::Report>("doctor")),
        Some("bench-task") => Some(typed::<crate::bench::task::Task>("bench-task")),
        Some("bench-set") => Some(typed::<crate::bench::task::SetInfo>("bench-set")),
        Some("bench-mine") => Some(typed::<crate::bench::mine::MineReport>("bench-mine")),
        Some("bench-list") => Some(typed::<crate::bench::sets::Listing>("bench-list")),
        Some("bench-show") => Some(typed::<crate::bench::sets::Shown>("bench-show")),
        Some("bench-export") => Some(typed::<crate::bench::export::Exported>("bench-export")),
        Some("bench-report") => Some(typed::<crate::bench::report::Report>("bench-report")),
        Some("council") => Some(council()),
        Some("bench-trial") => Some(typed::<crate::bench::trial::Trial>("bench-trial")),
        Some("notify-event" | "notify_event") => {
            Some(typed::<crate::notify::Event>("notify-event"))
        }
        Some("notify-test") => Some(typed::<crate::notify::test::TestReport>("notify-test")),
        Some(n) => crate::council::result::named(n),
    }
}

fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
}

fn with_id(mut s: Value, name: &str) -> Value {
    if let Some(o) = s.as_object_mut() {
        o.insert(
            "$id".into(),
            json!(format!(
                "https://baton.dev/schema/{name}-v{SCHEMA_VERSION}.json"
            )),
        );
    }
    s
}

/// The result of `run`, `wait`, `result`, `cancel`, `run --async`,
/// `continue` and of one adviser of `ask`.
pub fn result() -> Value {
    let mut g = generator();
    let extras = extras(&mut g);
    let mut s = g.root_schema_for::<RunResult>().to_value();
    add_extras(&mut s, extras);
    with_id(s, "result")
}

/// `run --agents …`: a fan-out's result (docs/fanout.md).
pub fn fanout() -> Value {
    let s = generator()
        .root_schema_for::<crate::fanout::result::FanoutResult>()
        .to_value();
    with_id(s, "fanout")
}

/// A council's result (docs/council.md).
pub fn council() -> Value {
    typed::<crate::council::result::CouncilResult>("council")
}

/// A command's JSON whose type is `T`, published as `name`.
fn typed<T: schemars::JsonSchema>(name: &str) -> Value {
    with_id(generator().root_schema_for::<T>().to_value(), name)
}

fn run_branch() -> Branch {
    Branch {
        name: "RunResult",
        prefix: "Run",
        schema: result(),
    }
}

fn fanout_branch() -> Branch {
    Branch {
        name: "FanoutResult",
        prefix: "Fanout",
        schema: fanout(),
    }
}

/// `run`, `run --async` and `continue` (and the MCP tools `run`, with or
/// without `async`, and `continue`): a run's result, or a fan-out's when the call
/// names `--agents` or `--attempts`.
pub fn run_or_fanout() -> Value {
    either(
        "run-or-fanout",
        "RunResult or FanoutResult",
        "A run's result (`baton schema`), or a fan-out's (`baton schema fanout`) \
         when the call names `agents` or `attempts`.",
        vec![run_branch(), fanout_branch()],
    )
}

/// `wait`, `result` and `cancel`: what the id names — a job's result, a
/// background fan-out's, or a background council's envelope.
pub fn job_result() -> Value {
    either(
        "job-result",
        "RunResult, FanoutResult or CouncilResult",
        "A job's result (`baton schema`), a background fan-out's (`baton schema \
         fanout`) or a background council's (`baton schema council`), as the id names.",
        vec![
            run_branch(),
            fanout_branch(),
            Branch {
                name: "CouncilResult",
                prefix: "Council",
                schema: named(Some("council")).unwrap_or_default(),
            },
        ],
    )
}

/// `ask`: one adviser's result, or the advisers side by side (`--agents a,b`).
pub fn ask() -> Value {
    either(
        "ask",
        "RunResult or AskEnvelope",
        "One adviser's result (`baton schema`, with `advice`), or several advisers' \
         side by side (`baton schema ask-envelope`).",
        vec![
            run_branch(),
            Branch {
                name: "AskEnvelope",
                prefix: "Ask",
                schema: ask_envelope(),
            },
        ],
    )
}

/// `status ID`: a job's record, a background council's or a fan-out's.
pub fn job_status() -> Value {
    either(
        "job-status",
        "JobStatus, CouncilStatus or FanoutStatus",
        "`baton status ID`: a job's record, or a background council's or fan-out's \
         status, as the id names.",
        vec![
            Branch {
                name: "JobStatus",
                prefix: "Job",
                schema: typed::<crate::job::JobStatus>("job-status"),
            },
            Branch {
                name: "CouncilStatus",
                prefix: "Council",
                schema: typed::<crate::council::envelope::Status>("council-status"),
            },
            Branch {
                name: "FanoutStatus",
                prefix: "Fanout",
                schema: typed::<crate::fanout::as_job::FanoutStatus>("fanout-status"),
            },
        ],
    )
}

/// What baton prints when it could not do its job at all.
pub fn error() -> Value {
    let s = generator().root_schema_for::<ErrorReport>().to_value();
    with_id(s, "error")
}

/// `ask --agents a,b`: the advisers side by side, each a full result.
pub fn ask_envelope() -> Value {
    let mut g = generator();
    let extras = extras(&mut g);
    let mut s = g.root_schema_for::<Envelope>().to_value();
    if let Some(r) = s.pointer_mut("/$defs/RunResult") {
        add_extras(r, extras);
    }
    with_id(s, "ask-envelope")
}

/// The objects other features add to a result (`RunResult::extra`), with
/// when each is there. Their types' schemas go into `g`'s definitions.
fn extras(g: &mut SchemaGenerator) -> Vec<(&'static str, Value)> {
    let report = g.subschema_for::<Report>().to_value();
    let not_committed = g.subschema_for::<NotCommitted>().to_value();
    let handoff = g.subschema_for::<Handoff>().to_value();
    let context = g.subschema_for::<Context>().to_value();
    let repair = g.subschema_for::<RepairReport>().to_value();
    let budget = g.subschema_for::<Budget>().to_value();
    let sandbox = g.subschema_for::<crate::sandbox::RunSandbox>().to_value();
    // The advice schema advisers are held to, as they are given it.
    let mut advice = advice::schema_value();
    if let Some(o) = advice.as_object_mut() {
        o.insert(
            "description".into(),
            json!("Validated advice: the schema each adviser must answer in."),
        );
    }
    g.definitions_mut().insert("Advice".into(), advice);
    vec![
        (
            "worktree",
            json!({
                "description": "`--worktree` runs and jobs: the branch and what is on it, or why baton committed nothing.",
                "anyOf": [report, not_committed],
            }),
        ),
        (
            "sandbox",
            described(
                sandbox,
                "Who confined the peer: baton's sandbox (`baton-bwrap`, `baton-landlock`, `seatbelt`), the CLI's own (`cli`: codex, claude, agy) or nothing (`none`: full access, --sandbox off, or no sandbox on this machine), its network, every way it is weaker than the access mode, and under `--network provider` the hosts its proxy refused (`refused_hosts`, `refused_count`; docs/sandbox.md).",
            ),
        ),
        (
            "handoff",
            described(
                handoff,
                "`run --async` and `continue`: the commands to watch, wait for, continue, stop or take over the job, ready to paste.",
            ),
        ),
        (
            "request_id",
            json!({"type": "string", "description": "`ask`: this consultation's id (shared by every adviser of one `--agents` call)."}),
        ),
        (
            "advice",
            json!({
                "description": "`ask`: the validated advice, or null.",
                "anyOf": [{"$ref": "#/$defs/Advice"}, {"type": "null"}],
            }),
        ),
        (
            "context",
            described(context, "`ask`: what was sent to the adviser."),
        ),
        (
            "repair",
            json!({
                "description": "`ask`: what the repair round did, or null when there was none.",
                "anyOf": [repair, {"type": "null"}],
            }),
        ),
        (
            "budget",
            described(budget, "`ask` with a task id: the task's consultations."),
        ),
        (
            "advice_errors",
            json!({
                "type": "array",
                "items": {"type": "string"},
                "description": "`ask`: why the advice stayed invalid after the repair round (with `invalid_advice`).",
            }),
        ),
    ]
}

/// `{"$ref": …}` with a description beside it (allowed next to `$ref` since
/// draft 2019-09).
fn described(mut s: Value, description: &str) -> Value {
    if let Some(o) = s.as_object_mut() {
        o.insert("description".into(), json!(description));
    }
    s
}

/// The extras as properties of a result schema object: never `required`,
/// since each belongs to some kinds of result only.
fn add_extras(result: &mut Value, extras: Vec<(&'static str, Value)>) {
    // `verification.sandbox`: its type lives above the result's layer.
    let sandbox = extras
        .iter()
        .find(|(n, _)| *n == "sandbox")
        .map(|(_, s)| s.clone());
    if let (Some(s), Some(props)) = (
        sandbox,
        result
            .pointer_mut("/$defs/Verification/properties")
            .and_then(Value::as_object_mut),
    ) {
        let mut s = s;
        if let Some(o) = s.as_object_mut() {
            o.insert(
                "description".into(),
                json!("Who confined the test command: as the run's `sandbox`, with `network: none` under baton's sandbox."),
            );
        }
        props.insert("sandbox".into(), s);
    }
    if let Some(props) = result.get_mut("properties").and_then(Value::as_object_mut) {
        for (name, s) in extras {
            props.insert(name.into(), s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_result_schema_describes_every_field_and_the_extras() {
        let s = result();
        let props = s["properties"].as_object().unwrap();
        for f in [
            "schema_version",
            "status",
            "summary",
            "message",
            "agent",
            "model",
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
            "worktree",
            "handoff",
            "advice",
            "context",
        ] {
            assert!(props.contains_key(f), "schema lacks {f}");
        }
        // Always printed, null when empty: required.
        let required: Vec<&str> = s["required"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        for f in ["message", "session", "error", "verification", "log_path"] {
            assert!(required.contains(&f), "{f} is always printed");
        }
        for f in ["denials", "job_id", "worktree", "handoff"] {
            assert!(!required.contains(&f), "{f} is not always printed");
        }
        for def in ["WorktreeReport", "NotCommitted", "Handoff", "Advice"] {
            assert!(s["$defs"].get(def).is_some(), "no $defs/{def}");
        }
    }

    #[test]
    fn every_name_has_a_schema_with_an_id() {
        for n in NAMES {
            let s = named(Some(n)).unwrap_or_else(|| panic!("no schema {n}"));
            assert!(s["$id"].is_string(), "{n}");
        }
        assert_eq!(named(None), named(Some("result")));
        assert!(named(Some("nope")).is_none());
    }
}
