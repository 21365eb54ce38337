//! The council's result as types (`baton schema council` is derived from
//! them, as the run's and the fan-out's are): the run envelope
//! (`schema_version`, `status`, `summary`, `error`, `warnings`,
//! `duration_ms`, `usage`) plus every stage's record. `envelope` builds it
//! from disk; the field order is the printed order.
//!
//! What stages 6–9 stored (`execution.json`, written by `execute` with the
//! types here) is carried into the result as stored, so a council recorded
//! by an older baton prints as it did: those fields are JSON values whose
//! schema is that of the type they are written with.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::call::Call;
use super::implement::Implemented;
use super::machine::Stage;
use super::review::MergedFinding;
use super::schema::{Disagreement, Plan};
use super::store::{Approval, Member};
use crate::redact::Counts;
use crate::result::{Attempt, Spending, Usage};
use crate::worktree::oracle::Verification;

/// The schema of the structured answer called `name`, if there is one
/// (`baton schema council` is `crate::schema::council`).
pub fn named(name: &str) -> Option<Value> {
    let text = match name {
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
    v["$id"] = Value::from(id);
    v["title"] = Value::from(id);
    Some(v)
}

/// The council's result (`discuss`, `plan`, `approve`, `execute`, `result`,
/// `resume`, and `wait`/`result`/`cancel` of a background council). Every
/// field but `spending` and `findings` is always printed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(title = "baton council result")]
pub struct CouncilResult {
    pub schema_version: u32,
    pub council_id: String,
    #[schemars(with = "Kind")]
    pub kind: String,
    /// The stage, as `stage` (kept beside it for the job commands).
    pub status: Stage,
    pub stage: Stage,
    pub summary: String,
    pub error: Option<CouncilError>,
    /// Each starts with its kind: member_not_installed, degraded_quorum,
    /// single_vendor, fallback_chair, chair_self_preference_suspected,
    /// coverage_gap, fell_back (the writer could not answer and another
    /// agent served), or `writer:` for what the writer's chain did not do or
    /// left behind.
    pub warnings: Vec<String>,
    pub duration_ms: u64,
    pub usage: Usage,
    /// The usage of each stage that ran: proposing, critiquing, revising,
    /// synthesizing, implementing, reviewing.
    #[schemars(with = "BTreeMap<String, Usage>")]
    pub usage_by_stage: Map<String, Value>,
    /// The question (discuss) or the task (plan).
    pub task: String,
    /// The seed of the blind shuffles: the same seed replays them.
    pub seed: u64,
    /// SHA-256 of the packet every member was sent.
    pub packet_sha256: String,
    /// HEAD when the council started.
    pub base_commit: Option<String>,
    #[schemars(with = "Depth")]
    pub depth: String,
    pub quorum: usize,
    /// null: `--chair none`, baton's mechanical merge.
    pub chair: Option<Member>,
    pub members: Vec<MemberResult>,
    /// The chair's labels revealed: label -> agent, model, vendor.
    #[schemars(with = "BTreeMap<String, Member>")]
    pub label_map: Labels,
    pub proposals: Vec<ProposalResult>,
    pub critiques: Vec<CritiqueResult>,
    /// `--depth deep`: each author's revision of its proposal against the
    /// critiques; `kept_original` says why a revision did not count.
    pub revisions: Vec<RevisionResult>,
    pub blinding: Blinding,
    /// The sum of `redactions`.
    pub redacted_total: usize,
    /// Secrets removed from members' answers before any other member or the
    /// chair saw them (and from the writer's diff and test output shown to
    /// reviewers), count per kind as in `baton ask`.
    pub redactions: Counts,
    pub plan: Option<PlanResult>,
    pub approval: Option<Approval>,
    pub disagreements_unresolved: Vec<Disagreement>,
    /// Where the writer worked (plan, once executed).
    #[schemars(with = "Option<Worktree>")]
    pub worktree: Option<Value>,
    /// The plan's test_cmd on the writer's commit, in a fresh checkout of it.
    #[schemars(with = "Option<Verification>")]
    pub verification: Option<Value>,
    #[schemars(with = "Vec<ReviewResult>")]
    pub reviews: Vec<Value>,
    pub repair_rounds: u32,
    /// How to bring the writer's work in (nothing was merged); null before
    /// execution, and when baton's tests of it failed.
    pub merge_hint: Option<String>,
    /// The limits asked for and what the deliberation spent, with
    /// `--max-usd` or `--budget-tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Spending")]
    pub spending: Option<Spending>,
    /// Every reviewer's findings, deduplicated, each with who raised it
    /// (plan, once reviewed).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<MergedFinding>")]
    pub findings: Option<Value>,
}

/// What a council was asked for (the record keeps it as text).
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum Kind {
    Discuss,
    Plan,
}

/// `--depth` (the record keeps it as text).
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum Depth {
    Quick,
    Standard,
    Deep,
}

/// Why the council stopped, when it did not finish.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CouncilError {
    pub kind: StopKind,
    pub message: String,
    pub hint: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopKind {
    NeedsHuman,
    /// A needs_human stop by --max-usd or --budget-tokens.
    BudgetExceeded,
    CouncilFailed,
    Cancelled,
}

/// How one call of a stage ended (`reviewing`: as stored by `execute`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Outcome {
    /// `ok`, `abstained`, `timeout` or `error`.
    pub outcome: String,
    pub reason: Option<String>,
    /// Why a call that did not answer ended: its `error.kind`
    /// (`auth_required`, `rate_limited`, `timeout`, … as `baton schema`
    /// lists them); null when it answered.
    pub kind: Option<String>,
    /// revising: the revision did not count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_original: Option<bool>,
}

/// A member, its blind label (null before the chair saw it) and how each
/// of its calls ended.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MemberResult {
    pub agent: String,
    pub model: Option<String>,
    pub vendor: String,
    pub label: Option<String>,
    pub outcomes: Outcomes,
}

/// Per stage; `revising` and `reviewing` when the member took part.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Outcomes {
    pub proposing: Option<Outcome>,
    pub critiquing: Option<Outcome>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revising: Option<Outcome>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Outcome>")]
    pub reviewing: Option<Value>,
}

/// Label -> member, in the chair's order (printed as an object).
#[derive(Debug, Clone, Default)]
pub struct Labels(pub Vec<(String, Member)>);

impl Serialize for Labels {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(l, m)| (l, m)))
    }
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProposalResult {
    /// The blind label (A, B, …), null before the chair saw it.
    pub label: Option<String>,
    pub agent: String,
    pub outcome: String,
    pub reason: Option<String>,
    pub kind: Option<String>,
    /// The answer (`baton schema council-proposal`).
    pub proposal: Option<Value>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CritiqueResult {
    /// The critic's blind label.
    pub critic: Option<String>,
    pub agent: String,
    /// The labels the critic saw, and whose proposal each was.
    pub shown: Vec<Shown>,
    pub outcome: String,
    pub reason: Option<String>,
    pub kind: Option<String>,
    /// The answer (`baton schema council-critique`).
    pub critique: Option<Value>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Shown {
    pub label: String,
    /// The proposal's blind label for the chair.
    pub is: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RevisionResult {
    pub label: Option<String>,
    pub agent: String,
    pub outcome: String,
    pub kept_original: Option<String>,
    pub proposal: Option<Value>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Blinding {
    /// Names stripped from what members wrote before others saw it.
    pub strips: usize,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PlanResult {
    pub path: Option<String>,
    /// Once executed: the sha256 of the plan bytes executed (always the
    /// approval's; any other is refused as plan_changed).
    pub sha256: Option<String>,
    /// `chair`, `fallback_chair` or `mechanical`.
    pub by: Option<String>,
    /// The plan (`baton schema council-plan`).
    pub content: Value,
}

/// Where the writer worked, as `execute` stores it (`execution.json`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Worktree {
    pub path: String,
    pub branch: String,
    pub base: String,
    pub commit: Option<String>,
    pub changed_files: Vec<String>,
    pub reverted: Vec<String>,
    /// The agent that wrote: the writer chosen, or the fallback agent
    /// (`run.fallback`) that served when it could not answer.
    pub writer: String,
    /// The writer the council chose: differs from `writer` when it fell
    /// back (absent in councils run by baton 0.3.0 and older).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_requested: Option<String>,
    /// Every writer call of the rounds that took more than one (retry,
    /// fallback), as a run's `attempts` (`baton schema`); empty otherwise
    /// (absent in councils run by baton 0.3.0 and older).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<Vec<Attempt>>,
    pub writer_summary: Option<String>,
}

/// One reviewer's last review, as `execute` stores it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ReviewResult {
    pub reviewer: String,
    pub vendor: String,
    pub outcome: String,
    pub reason: Option<String>,
    pub kind: Option<String>,
    /// The answer (`baton schema council-review`).
    pub review: Option<Value>,
}

/// What stages 6–9 add to the result, stored by `execute` after each round
/// (`execution.json`); `envelope` shows it as stored.
#[derive(Debug, Serialize)]
pub struct Execution<'a> {
    pub worktree: Worktree,
    pub verification: Option<&'a Verification>,
    pub reviews: Vec<ReviewResult>,
    pub findings: &'a [MergedFinding],
    pub repair_rounds: u32,
    pub merge_hint: Option<String>,
    pub usage_by_stage: ExecutionUsage<'a>,
    /// Each reviewer's `reviewing` outcome, by member index.
    pub member_outcomes: BTreeMap<String, Outcome>,
    /// The plan executed and the sha256 of the bytes it was parsed from.
    pub plan: &'a Plan,
    pub plan_sha256: &'a str,
    pub redactions: &'a Counts,
}

#[derive(Debug, Serialize)]
pub struct ExecutionUsage<'a> {
    pub implementing: &'a Usage,
    pub reviewing: &'a Usage,
}

impl Outcome {
    pub fn of(c: &Call) -> Outcome {
        Outcome {
            outcome: c.outcome.clone(),
            reason: c.reason.clone(),
            kind: c.kind.clone(),
            kept_original: None,
        }
    }
}

impl Worktree {
    /// The writer's last round, with the writer the council chose and
    /// every call of the rounds that took more than one.
    pub fn of(imp: &Implemented, requested: &str, attempts: &[Attempt]) -> Worktree {
        Worktree {
            path: imp.worktree_path.to_string_lossy().into_owned(),
            branch: imp.branch.clone(),
            base: imp.base.clone(),
            commit: imp.commit.clone(),
            changed_files: imp.changed_files.clone(),
            reverted: imp.reverted.clone(),
            writer: imp.run_plan.agent.name().to_string(),
            writer_requested: Some(requested.to_string()),
            attempts: Some(attempts.to_vec()),
            writer_summary: Some(imp.summary.clone()),
        }
    }
}

impl ReviewResult {
    pub fn of(m: &Member, c: &Call) -> ReviewResult {
        ReviewResult {
            reviewer: m.agent.clone(),
            vendor: m.vendor.clone(),
            outcome: c.outcome.clone(),
            reason: c.reason.clone(),
            kind: c.kind.clone(),
            review: c.answer.clone(),
        }
    }
}
