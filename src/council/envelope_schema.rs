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
        "revising", "synthesizing", "awaiting_approval", "approved", "implementing", "verifying", "reviewing", "repairing",
        "done", "ready", "needs_human", "failed", "cancelled"]});
    let count = json!({"type": ["integer", "null"], "minimum": 0});
    let usage = json!({"type": "object", "properties": {
        "input_tokens": count, "output_tokens": count, "cached_input_tokens": count,
        "reasoning_output_tokens": count, "cost_usd": {"type": ["number", "null"]}}});
    let member = json!({"type": "object", "required": ["agent", "model", "vendor"], "properties": {
        "agent": {"type": "string"}, "model": {"type": ["string", "null"]},
        "vendor": {"type": "string"}}});
    let outcome = json!({"type": "string", "enum": ["ok", "abstained", "timeout", "error"]});
    let reason = json!({"type": ["string", "null"]});
    let kind = json!({"type": ["string", "null"], "description": "why a call that did not answer ended: its `error.kind` (`auth_required`, `rate_limited`, `timeout`, … as `baton schema` lists them); null when it answered"});
    let label = json!({"type": ["string", "null"], "description": "the blind label (A, B, …), null before the chair saw it"});
    let members_s = json!({"type": "array", "items": {"type": "object",
                "required": ["agent", "model", "vendor", "label", "outcomes"], "properties": {
                "agent": {"type": "string"}, "model": {"type": ["string", "null"]},
                "vendor": {"type": "string"}, "label": label,
                "outcomes": {"type": "object", "description": "per stage: proposing, critiquing, revising, reviewing",
                    "additionalProperties": {"type": ["object", "null"], "required": ["outcome", "reason"],
                    "properties": {"outcome": outcome, "reason": reason, "kind": kind,
                        "kept_original": {"type": "boolean", "description": "revising: the revision did not count"}}}}}}});
    let proposals_s = json!({"type": "array", "items": {"type": "object",
                "required": ["label", "agent", "outcome", "reason", "proposal"], "properties": {
                "label": label, "agent": {"type": "string"}, "outcome": outcome, "reason": reason,
                "kind": kind, "proposal": {"type": ["object", "null"], "description": "the answer (`baton schema council-proposal`)"}}}});
    let critiques_s = json!({"type": "array", "items": {"type": "object",
                "required": ["critic", "agent", "shown", "outcome", "reason", "critique"], "properties": {
                "critic": label, "agent": {"type": "string"},
                "shown": {"type": "array", "description": "the labels the critic saw, and whose proposal each was",
                    "items": {"type": "object", "required": ["label", "is"], "properties": {
                    "label": {"type": "string"}, "is": label}}},
                "outcome": outcome, "reason": reason, "kind": kind,
                "critique": {"type": ["object", "null"], "description": "the answer (`baton schema council-critique`)"}}}});
    let revisions_s = json!({"type": "array", "description": "--depth deep: each author's revision of its proposal against the critiques; kept_original says why a revision did not count",
                "items": {"type": "object", "required": ["label", "agent", "outcome", "kept_original", "proposal"],
                "properties": {"label": label, "agent": {"type": "string"}, "outcome": outcome,
                    "kept_original": {"type": ["string", "null"]},
                    "proposal": {"type": ["object", "null"]}}}});
    let plan_s = json!({"type": ["object", "null"], "required": ["path", "sha256", "by", "content"], "properties": {
                "path": {"type": ["string", "null"]},
                "sha256": {"type": ["string", "null"], "description": "once executed: the sha256 of the plan bytes executed (always the approval's; any other is refused as plan_changed)"},
                "by": {"type": ["string", "null"], "enum": ["chair", "fallback_chair", "mechanical", null]},
                "content": {"type": "object", "description": "the plan (`baton schema council-plan`)"}}});
    let approval_s = json!({"type": ["object", "null"], "required": ["mode", "plan_sha256", "base_commit", "authorized_files", "at_ms"], "properties": {
                "mode": {"type": "string", "enum": ["explicit", "auto"]},
                "plan_sha256": {"type": "string"}, "base_commit": {"type": ["string", "null"]},
                "authorized_files": {"type": "array", "items": {"type": "string"}},
                "at_ms": {"type": "integer"}}});
    let worktree_s = json!({"type": ["object", "null"], "description": "where the writer worked (plan, once executed)",
                "required": ["path", "branch", "base", "commit", "changed_files", "reverted", "writer", "writer_summary"],
                "properties": {
                "path": {"type": "string"}, "branch": {"type": "string"}, "base": {"type": "string"},
                "commit": {"type": ["string", "null"]},
                "changed_files": {"type": "array", "items": {"type": "string"}},
                "reverted": {"type": "array", "items": {"type": "string"}},
                "writer": {"type": "string", "description": "the agent that wrote: the writer chosen, or the fallback agent (`run.fallback`) that served when it could not answer"},
                "writer_requested": {"type": "string", "description": "the writer the council chose: differs from `writer` when it fell back (absent in councils run by baton 0.3.0 and older)"},
                "attempts": {"type": "array", "items": {"type": "object"},
                    "description": "every writer call of the rounds that took more than one (retry, fallback), as a run's `attempts` (`baton schema`); empty otherwise"},
                "writer_summary": {"type": ["string", "null"]}}});
    let verification_s = json!({"type": ["object", "null"], "description": "the plan's test_cmd on the writer's commit, in a fresh checkout of it",
                "required": ["command", "exit_code", "passed", "timed_out", "output_tail", "duration_ms",
                    "whitespace_errors"], "properties": {
                "command": {"type": ["string", "null"]}, "exit_code": {"type": ["integer", "null"]},
                "passed": {"type": "boolean"}, "timed_out": {"type": "boolean"},
                "interrupted": {"type": "integer", "description": "stopped by this signal"},
                "output_tail": {"type": "string"}, "duration_ms": {"type": "integer"},
                "whitespace_errors": {"type": "array", "items": {"type": "string"},
                    "description": "`git diff --check base..branch`: one `path:line: problem` each"},
                "not_run": {"type": "string", "description": "why the test command was not run"},
                "commit": {"type": ["string", "null"], "description": "the commit tested, in a fresh checkout of it (absent in councils run by baton 0.3.2 and older)"},
                "log_dropped": {"type": "integer", "description": "bytes of the test output its test.log dropped (it keeps the end)"},
                "sandbox": {"type": "object", "description": "who confined the test command, as a run's `sandbox` (`baton schema`): `by`, `network` (`none` under baton's sandbox), `degraded`"}}});
    let reviews_s = json!({"type": "array", "items": {"type": "object",
                "required": ["reviewer", "vendor", "outcome", "reason", "review"], "properties": {
                "reviewer": {"type": "string"}, "vendor": {"type": "string"}, "outcome": outcome,
                "reason": reason, "kind": kind,
                "review": {"type": ["object", "null"], "description": "the answer (`baton schema council-review`)"}}}});
    let error_s = json!({"type": ["object", "null"], "required": ["kind", "message", "hint"], "properties": {
                "kind": {"type": "string", "enum": ["needs_human", "budget_exceeded", "council_failed", "cancelled"],
                    "description": "budget_exceeded: a needs_human stop by --max-usd or --budget-tokens"},
                "message": {"type": "string"}, "hint": {"type": ["string", "null"]}}});
    // Every field but `findings` (there once reviewers ran) is always printed.
    let required: Vec<&str> = [
        "schema_version",
        "council_id",
        "kind",
        "status",
        "stage",
        "summary",
        "error",
        "warnings",
        "duration_ms",
        "usage",
        "usage_by_stage",
        "task",
        "seed",
        "packet_sha256",
        "base_commit",
        "depth",
        "quorum",
        "chair",
        "members",
        "label_map",
        "proposals",
        "critiques",
        "revisions",
        "blinding",
        "redactions",
        "redacted_total",
        "plan",
        "approval",
        "worktree",
        "verification",
        "reviews",
        "repair_rounds",
        "disagreements_unresolved",
        "merge_hint",
    ]
    .to_vec();
    let properties = json!({
            "schema_version": {"type": "integer"},
            "council_id": {"type": "string"},
            "kind": {"type": "string", "enum": ["discuss", "plan"]},
            "status": stage,
            "stage": stage,
            "summary": {"type": "string"},
            "error": error_s,
            "warnings": {"type": "array", "items": {"type": "string"},
                "description": "each starts with its kind: member_not_installed, degraded_quorum, single_vendor, fallback_chair, chair_self_preference_suspected, coverage_gap, fell_back (the writer could not answer and another agent served), or `writer:` for what the writer's chain did not do or left behind"},
            "duration_ms": {"type": "integer"},
            "usage": usage,
            "usage_by_stage": {"type": "object", "additionalProperties": usage,
                "description": "the usage of each stage that ran: proposing, critiquing, revising, synthesizing, implementing, reviewing"},
            "task": {"type": "string", "description": "the question (discuss) or the task (plan)"},
            "seed": {"type": "integer", "description": "the seed of the blind shuffles: the same seed replays them"},
            "packet_sha256": {"type": "string", "description": "SHA-256 of the packet every member was sent"},
            "base_commit": {"type": ["string", "null"], "description": "HEAD when the council started"},
            "depth": {"type": "string", "enum": ["quick", "standard", "deep"]},
            "quorum": {"type": "integer", "minimum": 1},
            "chair": {"anyOf": [member, {"type": "null"}], "description": "null: `--chair none`, baton's mechanical merge"},
            "members": members_s,
            "label_map": {"type": "object", "description": "the chair's labels revealed: label -> agent, model, vendor",
                "additionalProperties": member},
            "proposals": proposals_s,
            "critiques": critiques_s,
            "revisions": revisions_s,
            "blinding": {"type": "object", "required": ["strips"], "properties": {"strips": {"type": "integer",
                "description": "names stripped from what members wrote before others saw it"}}},
            "redactions": {"type": "object", "additionalProperties": {"type": "integer"},
                "description": "secrets removed from members' answers before any other member or the chair saw them (and from the writer's diff and test output shown to reviewers), count per kind as in `baton ask`"},
            "redacted_total": {"type": "integer", "description": "the sum of `redactions`"},
            "plan": plan_s,
            "approval": approval_s,
            "worktree": worktree_s,
            "verification": verification_s,
            "reviews": reviews_s,
            "findings": {"type": "array", "description": "every reviewer's findings, deduplicated, each with who raised it (plan, once reviewed)",
                "items": {"type": "object"}},
            "repair_rounds": {"type": "integer"},
            "disagreements_unresolved": {"type": "array", "items": any},
            "merge_hint": {"type": ["string", "null"], "description": "how to bring the writer's work in (nothing was merged); null before execution, and when baton's tests of it failed"}
    });
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": "baton.council/1",
        "title": "baton council result",
        "type": "object",
        "required": required,
        "properties": properties,
    })
}
