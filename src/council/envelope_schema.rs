//! `baton schema council…`: the JSON Schemas of the council's result and of
//! each structured answer a member gives, by name.

use serde_json::{Value, json};

/// The schema called `name`, if there is one.
pub fn named(name: &str) -> Option<Value> {
    let text = match name {
        "council" => return Some(result()),
        "council-review" => return Some(super::review::schema_value()),
        "council-proposal" => super::proposal::SCHEMA,
        "council-critique" => super::critique::SCHEMA,
        "council-plan" => super::chair::SCHEMA,
        _ => return None,
    };
    let mut v: Value = serde_json::from_str(text).ok()?;
    let id = match name {
        "council-proposal" => super::proposal::ID,
        "council-critique" => super::critique::ID,
        _ => super::chair::ID,
    };
    v["$id"] = json!(id);
    v["title"] = json!(id);
    Some(v)
}

fn result() -> Value {
    let any = json!({});
    let stage = json!({"type": "string", "enum": ["preflight", "proposing", "critiquing",
        "revising", "synthesizing", "awaiting_approval", "implementing", "verifying", "reviewing", "repairing",
        "done", "ready", "needs_human", "failed", "cancelled"]});
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": "baton.council/1",
        "title": "baton council result",
        "type": "object",
        "required": ["schema_version", "council_id", "kind", "status", "stage", "summary", "error",
            "warnings", "duration_ms", "usage", "usage_by_stage", "members", "label_map",
            "proposals", "critiques", "redactions", "redacted_total", "plan", "approval", "worktree", "verification", "reviews",
            "repair_rounds", "disagreements_unresolved", "merge_hint"],
        "properties": {
            "schema_version": {"type": "integer"},
            "council_id": {"type": "string"},
            "kind": {"type": "string", "enum": ["discuss", "plan"]},
            "status": stage,
            "stage": stage,
            "summary": {"type": "string"},
            "error": {"type": ["object", "null"], "properties": {
                "kind": {"type": "string", "description": "needs_human, budget_exceeded (a needs_human stop by --max-usd or --budget-tokens), council_failed or cancelled"},
                "message": {"type": "string"}, "hint": {"type": ["string", "null"]}}},
            "warnings": {"type": "array", "items": {"type": "string"},
                "description": "each starts with its kind: member_not_installed, degraded_quorum, single_vendor, fallback_chair, chair_self_preference_suspected, coverage_gap"},
            "duration_ms": {"type": "integer"},
            "usage": any,
            "usage_by_stage": {"type": "object"},
            "spending": {"type": "object", "description": "with --max-usd or --budget-tokens: the limits and what was spent (as a run's `spending`; calls and unpriced_calls count stages 2-4)",
                "properties": {"max_usd": {"type": ["number", "null"]}, "max_tokens": {"type": ["integer", "null"]},
                    "spent_usd": {"type": ["number", "null"]}, "spent_tokens": {"type": "integer"},
                    "cost_estimated": {"type": "boolean"}, "unpriced_calls": {"type": "integer"},
                    "calls": {"type": "integer"}, "exceeded": {"type": "boolean"}}},
            "seed": {"type": "integer"},
            "members": {"type": "array", "items": {"type": "object", "properties": {
                "agent": {"type": "string"}, "model": {"type": ["string", "null"]},
                "vendor": {"type": "string"}, "label": {"type": ["string", "null"]},
                "outcomes": {"type": "object", "additionalProperties": {"type": ["object", "null"],
                    "properties": {"outcome": {"type": "string", "enum": ["ok", "abstained", "timeout", "error"]},
                        "reason": {"type": ["string", "null"]}}}}}}},
            "label_map": {"type": "object", "description": "the chair's labels revealed: label -> agent, model, vendor"},
            "proposals": {"type": "array"},
            "critiques": {"type": "array"},
            "revisions": {"type": "array", "description": "--depth deep: each author's revision of its proposal against the critiques; kept_original says why a revision did not count"},
            "blinding": {"type": "object", "properties": {"strips": {"type": "integer"}}},
            "redactions": {"type": "object", "additionalProperties": {"type": "integer"},
                "description": "secrets removed from members' answers before any other member or the chair saw them (and from the writer's diff and test output shown to reviewers), count per kind as in `baton ask`"},
            "redacted_total": {"type": "integer", "description": "the sum of `redactions`"},
            "plan": {"type": ["object", "null"], "properties": {
                "path": {"type": ["string", "null"]},
                "sha256": {"type": ["string", "null"], "description": "once executed: the sha256 of the plan bytes executed (always the approval's; any other is refused as plan_changed)"},
                "by": {"type": "string", "enum": ["chair", "fallback_chair", "mechanical"]},
                "content": {"type": "object"}}},
            "approval": {"type": ["object", "null"], "properties": {
                "mode": {"type": "string", "enum": ["explicit", "auto"]},
                "plan_sha256": {"type": "string"}, "base_commit": {"type": ["string", "null"]},
                "authorized_files": {"type": "array", "items": {"type": "string"}}}},
            "worktree": {"type": ["object", "null"]},
            "verification": {"type": ["object", "null"]},
            "reviews": {"type": "array"},
            "repair_rounds": {"type": "integer"},
            "disagreements_unresolved": {"type": "array"},
            "merge_hint": {"type": ["string", "null"]}
        }
    })
}
