//! The council's result: `run`'s envelope (schema_version, status, summary,
//! error, warnings, duration_ms, usage) plus every stage's record, built from disk.

use serde_json::{Map, Value, json};

use super::call::Call;
use super::critique::CriticCall;
use super::deliberate::Synthesis;
use super::machine::Stage;
use super::revise::Revision;
use super::store::Record;
use crate::error::Result;
use crate::redact::Counts;
use crate::result::{SCHEMA_VERSION, Usage};

/// The short status `status`/`list` print (`baton status` of a council id:
/// one branch of `baton schema job-status`).
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Status {
    pub council_id: String,
    /// `discuss` or `plan`.
    pub kind: String,
    /// The stage, as `stage` (kept beside it for the job commands).
    pub status: &'static str,
    pub stage: &'static str,
    /// The task, clipped to 120 characters.
    pub task: String,
    pub members: Vec<String>,
    pub reason: Option<String>,
    /// Whether its runner is alive.
    pub running: bool,
    pub created_ms: u64,
    pub plan_sha256: Option<String>,
}

pub fn status_of(rec: &Record) -> Status {
    Status {
        council_id: rec.council_id.clone(),
        kind: rec.kind.clone(),
        status: rec.stage.as_str(),
        stage: rec.stage.as_str(),
        task: crate::agent::clip(&rec.task, 120),
        members: rec.members.iter().map(|m| m.agent.clone()).collect(),
        reason: rec.reason.clone(),
        running: rec.runner_alive(),
        created_ms: rec.created_ms,
        plan_sha256: rec.plan_sha256.clone(),
    }
}

pub fn status(rec: &Record) -> Value {
    serde_json::to_value(status_of(rec)).unwrap_or(Value::Null)
}

fn add(usage: &mut Usage, calls: &[&Call]) {
    for c in calls {
        usage.add(&c.usage);
    }
}

fn outcome(c: Option<&Call>) -> Value {
    match c {
        Some(c) => json!({"outcome": c.outcome, "reason": c.reason, "kind": c.kind}),
        None => Value::Null,
    }
}

pub fn build(rec: &Record) -> Result<Value> {
    let proposals: Vec<Option<Call>> = rec.artifact("proposals.json")?.unwrap_or_default();
    let critiques: Vec<CriticCall> = rec.artifact("critiques.json")?.unwrap_or_default();
    let revisions: Vec<Revision> = rec.artifact("revisions.json")?.unwrap_or_default();
    let synthesis: Option<Synthesis> = rec.artifact("synthesis.json")?;
    let execution: Option<Value> = rec.artifact("execution.json")?;
    let label_of = |i: usize| {
        synthesis.as_ref().and_then(|s| {
            s.label_map
                .iter()
                .find(|(_, j)| *j == i)
                .map(|(l, _)| l.clone())
        })
    };
    let mut by_stage = Map::new();
    let mut total = Usage::default();
    let mut u = Usage::default();
    add(&mut u, &proposals.iter().flatten().collect::<Vec<_>>());
    by_stage.insert("proposing".into(), json!(u));
    total.add(&u);
    let mut u = Usage::default();
    add(
        &mut u,
        &critiques.iter().map(|c| &c.call).collect::<Vec<_>>(),
    );
    by_stage.insert("critiquing".into(), json!(u));
    total.add(&u);
    if rec.settings.depth == "deep" {
        let mut u = Usage::default();
        add(
            &mut u,
            &revisions.iter().map(|r| &r.call).collect::<Vec<_>>(),
        );
        by_stage.insert("revising".into(), json!(u));
        total.add(&u);
    }
    let mut u = Usage::default();
    if let Some(s) = &synthesis {
        add(&mut u, &s.calls.iter().collect::<Vec<_>>());
    }
    by_stage.insert("synthesizing".into(), json!(u));
    total.add(&u);
    if let Some(stages) = execution
        .as_ref()
        .and_then(|e| e.get("usage_by_stage"))
        .and_then(Value::as_object)
    {
        for (k, v) in stages {
            if let Ok(u) = serde_json::from_value::<Usage>(v.clone()) {
                total.add(&u);
            }
            by_stage.insert(k.clone(), v.clone());
        }
    }

    let members: Vec<Value> = rec
        .members
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let crit = critiques.iter().find(|c| c.critic == i).map(|c| &c.call);
            let mut stages = json!({
                "proposing": outcome(proposals.get(i).and_then(Option::as_ref)),
                "critiquing": outcome(crit),
            });
            if let Some(r) = revisions.iter().find(|r| r.member == i) {
                stages["revising"] = json!({"outcome": r.call.outcome,
                    "reason": r.kept_original.clone().or(r.call.reason.clone()),
                    "kind": r.call.kind,
                    "kept_original": r.kept_original.is_some()});
            }
            if let Some(r) = execution
                .as_ref()
                .and_then(|e| e.get("member_outcomes"))
                .and_then(|o| o.get(i.to_string()))
            {
                stages["reviewing"] = r.clone();
            }
            json!({"agent": m.agent, "model": m.model, "vendor": m.vendor,
                "label": label_of(i), "outcomes": stages})
        })
        .collect();
    let label_map: Map<String, Value> = synthesis
        .as_ref()
        .map(|s| {
            s.label_map
                .iter()
                .map(|(l, i)| {
                    let m = &rec.members[*i];
                    (
                        l.clone(),
                        json!({"agent": m.agent, "model": m.model, "vendor": m.vendor}),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let proposals_out: Vec<Value> = proposals
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            c.as_ref().map(|c| {
                json!({"label": label_of(i), "agent": rec.members[i].agent, "outcome": c.outcome,
                    "reason": c.reason, "kind": c.kind, "proposal": c.answer})
            })
        })
        .collect();
    let critiques_out: Vec<Value> = critiques
        .iter()
        .map(|c| {
            json!({"critic": label_of(c.critic), "agent": rec.members[c.critic].agent,
                "shown": c.shown.iter().map(|(l, i)| json!({"label": l, "is": label_of(*i)})).collect::<Vec<_>>(),
                "outcome": c.call.outcome, "reason": c.call.reason, "kind": c.call.kind,
                "critique": c.call.answer})
        })
        .collect();
    let plan = synthesis.as_ref().and_then(|s| s.plan.as_ref());
    let plan_path = rec.dir()?.join("plan.json");
    // Once executed, the plan shown is the one executed, with the hash of
    // the bytes it was parsed from (the approval refused any other).
    let executed = |k: &str| execution.as_ref().and_then(|e| e.get(k)).cloned();
    let plan_out = plan.map(|p| {
        json!({"path": plan_path.exists().then(|| plan_path.display().to_string()),
            "sha256": executed("plan_sha256").unwrap_or_else(|| json!(rec.plan_sha256)),
            "by": synthesis.as_ref().map(|s| s.by.clone()),
            "content": executed("plan").unwrap_or_else(|| json!(p))})
    });
    let redactions = redactions(
        &proposals,
        &critiques,
        &revisions,
        synthesis.as_ref(),
        execution.as_ref(),
    );
    let unresolved: Vec<Value> = plan
        .map(|p| p.disagreements.iter().map(|d| json!(d)).collect())
        .unwrap_or_default();
    let error = match rec.stage {
        Stage::NeedsHuman if rec.stop_kind.as_deref() == Some("budget_exceeded") => {
            Some(json!({"kind": "budget_exceeded",
            "message": rec.reason.clone().unwrap_or_default(),
            "hint": "raise --max-usd / --budget-tokens and `baton council resume ID`, or read \
                     `baton council report ID`: usage_by_stage says what was spent where"}))
        }
        Stage::NeedsHuman => Some(json!({"kind": "needs_human",
            "message": rec.reason.clone().unwrap_or_else(|| "the council needs a person".into()),
            "hint": "read `baton council report ID`: what each member said and why the council stopped"})),
        Stage::Failed => Some(json!({"kind": "council_failed",
            "message": rec.reason.clone().unwrap_or_else(|| "the council failed".into()),
            "hint": "fix what the message says, then `baton council resume ID`"})),
        Stage::Cancelled => Some(json!({"kind": "cancelled",
            "message": rec.reason.clone().unwrap_or_else(|| "cancelled".into()), "hint": null})),
        _ => None,
    };
    let mut v = json!({
        "schema_version": SCHEMA_VERSION,
        "council_id": rec.council_id,
        "kind": rec.kind,
        "status": rec.stage.as_str(),
        "stage": rec.stage.as_str(),
        "summary": summary(rec, plan.map(|p| p.summary.as_str())),
        "error": error,
        "warnings": rec.warnings,
        "duration_ms": rec.updated_ms.saturating_sub(rec.created_ms),
        "usage": total,
        "usage_by_stage": by_stage,
        "task": rec.task,
        "seed": rec.seed,
        "packet_sha256": rec.packet_sha256,
        "base_commit": rec.base_commit,
        "depth": rec.settings.depth,
        "quorum": rec.settings.quorum,
        "chair": rec.chair,
        "members": members,
        "label_map": label_map,
        "proposals": proposals_out,
        "critiques": critiques_out,
        "revisions": revisions.iter().map(|r| json!({"label": label_of(r.member),
            "agent": rec.members[r.member].agent, "outcome": r.call.outcome,
            "kept_original": r.kept_original, "proposal": r.call.answer})).collect::<Vec<_>>(),
        "blinding": {"strips": synthesis.as_ref().map_or(0, |s| s.strips)},
        "redacted_total": redactions.values().sum::<usize>(),
        "redactions": redactions,
        "plan": plan_out,
        "approval": rec.approval,
        "disagreements_unresolved": unresolved,
        "worktree": Value::Null,
        "verification": Value::Null,
        "reviews": [],
        "repair_rounds": 0,
        "merge_hint": Value::Null,
    });
    let deliberation: Vec<&Call> = proposals
        .iter()
        .flatten()
        .chain(critiques.iter().map(|c| &c.call))
        .chain(revisions.iter().map(|r| &r.call))
        .chain(synthesis.iter().flat_map(|s| s.calls.iter()))
        .collect();
    if let Some(sp) = spending(rec, &total, &deliberation) {
        v["spending"] = json!(sp);
    }
    if let Some(Value::Object(e)) = execution {
        for k in [
            "worktree",
            "verification",
            "reviews",
            "repair_rounds",
            "merge_hint",
            "findings",
        ] {
            if let Some(x) = e.get(k) {
                v[k] = x.clone();
            }
        }
    }
    Ok(v)
}

/// The limits asked for and what every call spent (`usage_by_stage` says
/// on what), when `--max-usd` or `--budget-tokens` was given.
fn spending(rec: &Record, total: &Usage, calls: &[&Call]) -> Option<crate::result::Spending> {
    let s = &rec.settings;
    if s.max_usd.is_none() && s.budget_tokens.is_none() {
        return None;
    }
    Some(crate::result::Spending {
        max_usd: s.max_usd,
        max_tokens: s.budget_tokens,
        spent_usd: total.cost_usd,
        spent_tokens: total.total_tokens().unwrap_or(0),
        cost_estimated: total.cost_estimated,
        // Counted over the deliberation's calls (stages 2-4); the writer's
        // and the reviewers' are summed in `usage_by_stage` only.
        unpriced_calls: calls
            .iter()
            .filter(|c| c.usage.cost_usd.is_none() && !c.usage.is_empty())
            .count() as u32,
        calls: calls.len() as u32,
        exceeded: rec.stop_kind.as_deref() == Some("budget_exceeded"),
    })
}

/// Secrets removed from the members' answers (and from the writer's diff
/// and test output shown to reviewers), per kind, over every stage.
fn redactions(
    proposals: &[Option<Call>],
    critiques: &[CriticCall],
    revisions: &[Revision],
    synthesis: Option<&Synthesis>,
    execution: Option<&Value>,
) -> Counts {
    let mut all = Counts::new();
    let calls = proposals
        .iter()
        .flatten()
        .chain(critiques.iter().map(|c| &c.call))
        .chain(revisions.iter().map(|r| &r.call))
        .chain(synthesis.iter().flat_map(|s| s.calls.iter()));
    for c in calls {
        super::call::add_counts(&mut all, &c.redactions);
    }
    if let Some(e) = execution
        .and_then(|e| e.get("redactions"))
        .and_then(|r| serde_json::from_value::<Counts>(r.clone()).ok())
    {
        super::call::add_counts(&mut all, &e);
    }
    all
}

fn summary(rec: &Record, plan: Option<&str>) -> String {
    let id = &rec.council_id;
    let first = |s: &str| crate::agent::clip(s.lines().next().unwrap_or(""), 120);
    match rec.stage {
        Stage::Done => format!("council {id} answered: {}", first(plan.unwrap_or(""))),
        Stage::AwaitingApproval => format!(
            "council {id} has a plan waiting for approval: {} (approve with `baton council approve {id} --plan-sha256 {}`)",
            first(plan.unwrap_or("")),
            rec.plan_sha256.as_deref().unwrap_or("")
        ),
        Stage::Approved => format!(
            "council {id} is approved; run `baton council execute {id}` to carry out the plan (nothing runs until then)"
        ),
        Stage::Ready => format!(
            "council {id} is ready: the change passed its tests and its reviews; nothing was merged"
        ),
        Stage::NeedsHuman | Stage::Failed | Stage::Cancelled => format!(
            "council {id} stopped ({}): {}",
            rec.stage.as_str(),
            rec.reason.as_deref().unwrap_or("")
        ),
        s => format!("council {id} is {}", s.as_str()),
    }
}
