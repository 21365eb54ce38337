//! The council's result: `run`'s envelope (schema_version, status, summary,
//! error, warnings, duration_ms, usage) plus every stage's record, built from disk.

use serde_json::{Map, Value};

use super::call::Call;
use super::critique::CriticCall;
use super::deliberate::Synthesis;
use super::machine::Stage;
use super::result::{
    Blinding, CouncilError, CouncilResult, CritiqueResult, Labels, MemberResult, Outcome, Outcomes,
    PlanResult, ProposalResult, RevisionResult, Shown, StopKind,
};
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

pub fn build(rec: &Record) -> Result<Value> {
    Ok(serde_json::to_value(result(rec)?).unwrap_or(Value::Null))
}

/// The council's result from its record and the artifacts its stages stored.
pub fn result(rec: &Record) -> Result<CouncilResult> {
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
    let mut stage_usage = |name: &str, calls: &[&Call]| {
        let mut u = Usage::default();
        add(&mut u, calls);
        by_stage.insert(name.into(), serde_json::to_value(&u).unwrap_or(Value::Null));
        total.add(&u);
    };
    stage_usage("proposing", &proposals.iter().flatten().collect::<Vec<_>>());
    stage_usage(
        "critiquing",
        &critiques.iter().map(|c| &c.call).collect::<Vec<_>>(),
    );
    if rec.settings.depth == "deep" {
        stage_usage(
            "revising",
            &revisions.iter().map(|r| &r.call).collect::<Vec<_>>(),
        );
    }
    stage_usage(
        "synthesizing",
        &synthesis
            .iter()
            .flat_map(|s| s.calls.iter())
            .collect::<Vec<_>>(),
    );
    // What stages 6–9 stored is shown as stored (a council of an older
    // baton prints as it did).
    let executed = |k: &str| execution.as_ref().and_then(|e| e.get(k));
    if let Some(stages) = executed("usage_by_stage").and_then(Value::as_object) {
        for (k, v) in stages {
            if let Ok(u) = serde_json::from_value::<Usage>(v.clone()) {
                total.add(&u);
            }
            by_stage.insert(k.clone(), v.clone());
        }
    }

    let members = rec
        .members
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let crit = critiques.iter().find(|c| c.critic == i).map(|c| &c.call);
            let revising = revisions.iter().find(|r| r.member == i).map(|r| Outcome {
                outcome: r.call.outcome.clone(),
                reason: r.kept_original.clone().or(r.call.reason.clone()),
                kind: r.call.kind.clone(),
                kept_original: Some(r.kept_original.is_some()),
            });
            MemberResult {
                agent: m.agent.clone(),
                model: m.model.clone(),
                vendor: m.vendor.clone(),
                label: label_of(i),
                outcomes: Outcomes {
                    proposing: proposals.get(i).and_then(Option::as_ref).map(Outcome::of),
                    critiquing: crit.map(Outcome::of),
                    revising,
                    reviewing: executed("member_outcomes")
                        .and_then(|o| o.get(i.to_string()))
                        .cloned(),
                },
            }
        })
        .collect();
    let label_map = Labels(
        synthesis
            .as_ref()
            .map(|s| {
                s.label_map
                    .iter()
                    .map(|(l, i)| (l.clone(), rec.members[*i].clone()))
                    .collect()
            })
            .unwrap_or_default(),
    );
    let proposals_out = proposals
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            c.as_ref().map(|c| ProposalResult {
                label: label_of(i),
                agent: rec.members[i].agent.clone(),
                outcome: c.outcome.clone(),
                reason: c.reason.clone(),
                kind: c.kind.clone(),
                proposal: c.answer.clone(),
            })
        })
        .collect();
    let critiques_out = critiques
        .iter()
        .map(|c| CritiqueResult {
            critic: label_of(c.critic),
            agent: rec.members[c.critic].agent.clone(),
            shown: c
                .shown
                .iter()
                .map(|(l, i)| Shown {
                    label: l.clone(),
                    is: label_of(*i),
                })
                .collect(),
            outcome: c.call.outcome.clone(),
            reason: c.call.reason.clone(),
            kind: c.call.kind.clone(),
            critique: c.call.answer.clone(),
        })
        .collect();
    let revisions_out = revisions
        .iter()
        .map(|r| RevisionResult {
            label: label_of(r.member),
            agent: rec.members[r.member].agent.clone(),
            outcome: r.call.outcome.clone(),
            kept_original: r.kept_original.clone(),
            proposal: r.call.answer.clone(),
        })
        .collect();
    let plan = synthesis.as_ref().and_then(|s| s.plan.as_ref());
    let plan_path = rec.dir()?.join("plan.json");
    // Once executed, the plan shown is the one executed, with the hash of
    // the bytes it was parsed from (the approval refused any other).
    let plan_out = plan.map(|p| PlanResult {
        path: plan_path.exists().then(|| plan_path.display().to_string()),
        sha256: match executed("plan_sha256") {
            Some(v) => v.as_str().map(String::from),
            None => rec.plan_sha256.clone(),
        },
        by: synthesis.as_ref().map(|s| s.by.clone()),
        content: executed("plan")
            .cloned()
            .unwrap_or_else(|| serde_json::to_value(p).unwrap_or(Value::Null)),
    });
    let redactions = redactions(
        &proposals,
        &critiques,
        &revisions,
        synthesis.as_ref(),
        execution.as_ref(),
    );
    let stop = |kind, message: String, hint: Option<&str>| {
        Some(CouncilError {
            kind,
            message,
            hint: hint.map(String::from),
        })
    };
    let reason = |or: &str| rec.reason.clone().unwrap_or_else(|| or.into());
    let error = match rec.stage {
        Stage::NeedsHuman if rec.stop_kind.as_deref() == Some("budget_exceeded") => stop(
            StopKind::BudgetExceeded,
            reason(""),
            Some(
                "raise --max-usd / --budget-tokens and `baton council resume ID`, or read \
                 `baton council report ID`: usage_by_stage says what was spent where",
            ),
        ),
        Stage::NeedsHuman => stop(
            StopKind::NeedsHuman,
            reason("the council needs a person"),
            Some(
                "read `baton council report ID`: what each member said and why the council stopped",
            ),
        ),
        Stage::Failed => stop(
            StopKind::CouncilFailed,
            reason("the council failed"),
            Some("fix what the message says, then `baton council resume ID`"),
        ),
        Stage::Cancelled => stop(StopKind::Cancelled, reason("cancelled"), None),
        _ => None,
    };
    let deliberation: Vec<&Call> = proposals
        .iter()
        .flatten()
        .chain(critiques.iter().map(|c| &c.call))
        .chain(revisions.iter().map(|r| &r.call))
        .chain(synthesis.iter().flat_map(|s| s.calls.iter()))
        .collect();
    let spending = spending(rec, &total, &deliberation);
    Ok(CouncilResult {
        schema_version: SCHEMA_VERSION,
        council_id: rec.council_id.clone(),
        kind: rec.kind.clone(),
        status: rec.stage,
        stage: rec.stage,
        summary: summary(rec, plan.map(|p| p.summary.as_str())),
        error,
        warnings: rec.warnings.clone(),
        duration_ms: rec.updated_ms.saturating_sub(rec.created_ms),
        usage: total,
        usage_by_stage: by_stage,
        task: rec.task.clone(),
        seed: rec.seed,
        packet_sha256: rec.packet_sha256.clone(),
        base_commit: rec.base_commit.clone(),
        depth: rec.settings.depth.clone(),
        quorum: rec.settings.quorum,
        chair: rec.chair.clone(),
        members,
        label_map,
        proposals: proposals_out,
        critiques: critiques_out,
        revisions: revisions_out,
        blinding: Blinding {
            strips: synthesis.as_ref().map_or(0, |s| s.strips),
        },
        redacted_total: redactions.values().sum::<usize>(),
        redactions,
        plan: plan_out,
        approval: rec.approval.clone(),
        disagreements_unresolved: plan.map(|p| p.disagreements.clone()).unwrap_or_default(),
        worktree: executed("worktree").cloned(),
        verification: executed("verification").cloned(),
        reviews: executed("reviews")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        repair_rounds: executed("repair_rounds")
            .and_then(Value::as_u64)
            .map_or(0, |n| n as u32),
        merge_hint: executed("merge_hint")
            .and_then(Value::as_str)
            .map(String::from),
        spending,
        findings: executed("findings").cloned(),
    })
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
