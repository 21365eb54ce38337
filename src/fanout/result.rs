//! The fan-out's result: the run envelope (`schema_version`, `status`,
//! `summary`, `usage` summed, `duration_ms`, `warnings`, `error`) plus
//! `kind: "fanout"`, every candidate, the judges, the winner. Its schema is
//! `baton schema fanout`; `--text` is a comparison table.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::output::render::Render;
use crate::result::{Attempt, ErrorInfo, SCHEMA_VERSION, Spending, Status, Usage};

use super::review::Review;
use super::store::{Record, Stage};
use crate::error::{Error, Result};
use crate::store::ending;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FanoutResult {
    pub schema_version: u32,
    /// Always `fanout`.
    pub kind: String,
    pub fanout_id: String,
    /// `success`: a winner (read-only: at least one answer); `failed`: no
    /// eligible candidate (each one's `excluded_reason` says why) or baton
    /// failed (`error`); `cancelled`: stopped by a signal or `baton cancel`.
    pub status: Status,
    pub summary: String,
    /// `worktree` (candidates write, are tested and ranked) or `read-only`
    /// (answers side by side, no selection).
    pub mode: String,
    /// The task, its first 200 characters.
    pub task: String,
    /// `best` or `first-green` (null read-only).
    pub pick: Option<String>,
    /// The commit every candidate's branch starts from.
    pub base: Option<String>,
    pub test_cmd: Option<String>,
    pub until_green: u32,
    /// The seed of the judges' shuffles and of the draw that breaks a tie
    /// (`--seed` replays both).
    pub seed: u64,
    pub candidates: Vec<CandidateResult>,
    /// The judging; null when there was nothing to judge (read-only, first-green).
    pub judge: Option<JudgeResult>,
    pub winner: Option<Winner>,
    /// How to bring the winner in (nothing was merged); null without one.
    pub merge_hint: Option<String>,
    /// Every candidate's rounds and every judge's calls, together.
    pub usage: Usage,
    /// What the fan-out was allowed to spend and spent (every candidate's
    /// calls and the judges'), when `--max-usd` or `--budget-tokens` was
    /// given; `exceeded` when a limit held back a repair round or the judges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spending: Option<Spending>,
    pub duration_ms: u64,
    pub warnings: Vec<String>,
    pub error: Option<ErrorInfo>,
    /// The background job (`--async`), when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
}

/// Files, insertions and deletions of `base..branch`, as `git diff --stat`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffStat {
    pub files: u64,
    pub insertions: u64,
    pub deletions: u64,
}

/// baton's run of the test command after a round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tests {
    pub passed: bool,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub duration_ms: u64,
    /// The end of stdout and stderr together (4 KiB at most).
    pub output_tail: String,
    /// `git diff --check base..branch`: one `path:line: problem` each.
    pub whitespace_errors: Vec<String>,
    /// Why it was not run, when it was not.
    pub not_run: Option<String>,
    /// The commit tested: the command ran in a fresh checkout of it, so
    /// what passed is what the branch held.
    #[serde(default)]
    pub commit: Option<String>,
    /// Who confined the test command (`network: none` under baton's sandbox).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::sandbox::SandboxReport>,
}

/// One round of a candidate: its first attempt (0) or a repair round.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoundResult {
    pub round: u32,
    pub status: Status,
    pub summary: String,
    pub session: Option<String>,
    pub tests: Option<Tests>,
    pub usage: Usage,
    pub duration_ms: u64,
    pub log_path: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CandidateResult {
    /// `c1`, `c2`, …
    pub id: String,
    /// The agent that served it: the one asked for, or the fallback agent
    /// (`--fallback`, `run.fallback`) that ran when it could not answer.
    pub agent: String,
    /// The agent it was asked for (`--agents`, `--attempts`): differs from
    /// `agent` when it fell back.
    pub agent_requested: String,
    /// The serving agent's model.
    pub model: Option<String>,
    /// The serving agent's vendor.
    pub vendor: String,
    /// Its last round's status.
    pub status: Status,
    /// The peer succeeded, its worktree was not tampered with, it changed
    /// something and its tests passed.
    pub eligible: bool,
    /// Why it cannot win (null when eligible).
    pub excluded_reason: Option<String>,
    /// `baton/<fanout id>-<n>` (null read-only, or when no worktree was made).
    pub branch: Option<String>,
    /// The commit baton imported onto `branch` and tested (null when
    /// nothing was committed): what `git merge` should name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// `true`: its branch no longer pointed at `commit` when baton checked
    /// before naming a winner (`excluded_reason` says where it points), so
    /// it was not eligible.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub branch_moved: bool,
    pub worktree: Option<String>,
    /// Whether its branch and worktree are still there (the winner's, or
    /// every one with `--keep-all`).
    pub kept: bool,
    pub changed_files: Vec<String>,
    pub diff_stat: Option<DiffStat>,
    /// Its last round's tests.
    pub tests: Option<Tests>,
    pub rounds: Vec<RoundResult>,
    /// Every peer call of the rounds that took more than one (`--retry`,
    /// `--fallback`), in order, as a run's `attempts`; empty when each round
    /// took one call.
    pub attempts: Vec<Attempt>,
    /// Every round and every attempt of each, summed.
    pub usage: Usage,
    pub duration_ms: u64,
    pub session: Option<String>,
    /// The peer's last message (read-only: its answer).
    pub message: Option<String>,
    pub log_path: Option<String>,
    pub error: Option<ErrorInfo>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JudgeReview {
    /// `j1`, `j2`, …
    pub who: String,
    pub agent: String,
    pub model: Option<String>,
    pub vendor: String,
    /// `ok`, `abstained`, `timeout` or `error`.
    pub outcome: String,
    pub reason: Option<String>,
    /// Its answer, in the labels it was shown (`label_map` names them).
    pub review: Option<Review>,
    pub usage: Usage,
    pub duration_ms: u64,
    pub log_path: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Ranked {
    pub candidate: String,
    /// Mean normalized Borda points in [0, 1]; null when no judge ranked it.
    pub score: Option<f64>,
    /// How many judges ranked it.
    pub judges: u64,
    pub blockers: u64,
    pub diff_lines: u64,
    pub duration_ms: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JudgeResult {
    /// `peers`, `none` or `agent`.
    pub mode: String,
    pub reviews: Vec<JudgeReview>,
    /// The eligible candidates, best first.
    pub ranking: Vec<Ranked>,
    /// Each judge's labels: judge → label → candidate.
    pub label_map: BTreeMap<String, BTreeMap<String, String>>,
    /// What decided, when it was not the judges alone (one eligible
    /// candidate, every judge failed, a limit, a tie and what broke it).
    pub note: Option<String>,
    /// Why the first of `ranking` won, for the summary (`select::how`).
    #[serde(skip)]
    pub how: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Winner {
    pub id: String,
    pub agent: String,
    pub model: Option<String>,
    pub branch: Option<String>,
    /// The commit on `branch` that won (checked to be there just before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

impl FanoutResult {
    /// The envelope every mode fills, for `rec` (`mode`: `worktree` or
    /// `read-only`): no candidate yet, `success` until told otherwise.
    pub fn new(rec: &Record, mode: &str) -> FanoutResult {
        let s = &rec.settings;
        FanoutResult {
            schema_version: SCHEMA_VERSION,
            kind: "fanout".into(),
            fanout_id: rec.fanout_id.clone(),
            status: Status::Success,
            summary: String::new(),
            mode: mode.into(),
            task: crate::agent::clip(&rec.task, 200),
            pick: s.worktree.as_ref().map(|_| s.pick.as_str().to_string()),
            base: s.worktree.as_ref().and_then(|w| w.base.clone()),
            test_cmd: s.worktree.as_ref().and_then(|w| w.test_cmd.clone()),
            until_green: s.until_green,
            seed: s.seed,
            candidates: Vec::new(),
            judge: None,
            winner: None,
            merge_hint: None,
            usage: Usage::default(),
            spending: None,
            duration_ms: 0,
            warnings: rec.warnings.clone(),
            error: None,
            job_id: None,
        }
    }

    /// The status's exit code, except for a fan-out without a winner whose
    /// candidates' peers finished and whose tests failed:
    /// `exit::CHECK_FAILED`, as for a worktree run whose check failed.
    pub fn exit_code(&self) -> i32 {
        let checks_failed = self.status == Status::Failed
            && self.winner.is_none()
            && self.mode == "worktree"
            && self.candidates.iter().any(|c| {
                c.rounds.last().is_some_and(|r| r.status == Status::Success)
                    && c.tests
                        .as_ref()
                        .is_some_and(|t| !t.passed && t.not_run.is_none())
            });
        if checks_failed {
            crate::error::exit::CHECK_FAILED
        } else {
            self.status.exit_code()
        }
    }
}

fn tokens(u: &Usage) -> String {
    u.total_tokens()
        .map_or_else(|| "-".into(), |t| t.to_string())
}

fn tests_cell(c: &CandidateResult) -> String {
    match &c.tests {
        None => match c.status {
            Status::Success => "not run".into(),
            s => s.as_str().into(),
        },
        Some(t) if t.passed => "passed".into(),
        Some(t) if t.timed_out => "timed out".into(),
        Some(t) if t.not_run.is_some() => "not run".into(),
        Some(t) => match t.exit_code {
            Some(c) => format!("FAILED ({c})"),
            None => "FAILED".into(),
        },
    }
}

impl Render for FanoutResult {
    fn exit_code(&self) -> i32 {
        FanoutResult::exit_code(self)
    }

    fn text(&self) -> String {
        let mut s = format!("{}\n", self.summary);
        let head = [
            "",
            "candidate",
            "agent/model",
            "tests",
            "rounds",
            "+/-",
            "files",
            "time",
            "tokens",
            "cost",
        ];
        let mut rows: Vec<Vec<String>> = vec![head.iter().map(|h| h.to_string()).collect()];
        for c in &self.candidates {
            let won = self.winner.as_ref().is_some_and(|w| w.id == c.id);
            let d = c.diff_stat.unwrap_or_default();
            rows.push(vec![
                if won { "*" } else { "" }.into(),
                c.id.clone(),
                match &c.model {
                    Some(m) => format!("{}/{m}", c.agent),
                    None => c.agent.clone(),
                },
                if self.mode == "read-only" {
                    c.status.as_str().into()
                } else {
                    tests_cell(c)
                },
                c.rounds.len().to_string(),
                format!("+{} -{}", d.insertions, d.deletions),
                d.files.to_string(),
                format!("{:.1}s", c.duration_ms as f64 / 1000.0),
                tokens(&c.usage),
                c.usage.cost_usd.map_or("-".into(), |x| format!("${x:.2}")),
            ]);
        }
        let widths: Vec<usize> = (0..head.len())
            .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
            .collect();
        for r in &rows {
            let line: Vec<String> = r
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            s.push_str(line.join("  ").trim_end());
            s.push('\n');
        }
        for c in &self.candidates {
            if let Some(why) = &c.excluded_reason {
                s.push_str(&format!("{}: {why}\n", c.id));
            }
            if self.mode == "read-only"
                && let Some(m) = &c.message
            {
                s.push_str(&format!(
                    "\n--- {} ({}) ---\n{}\n",
                    c.id,
                    c.agent,
                    m.trim_end()
                ));
            }
        }
        if let Some(h) = &self.merge_hint {
            s.push_str(&format!("merge: {h}\n"));
        } else if self.mode == "worktree" {
            // No winner: what failed, in place of a merge hint.
            for c in &self.candidates {
                let Some(t) = c
                    .tests
                    .as_ref()
                    .filter(|t| !t.passed && t.not_run.is_none())
                else {
                    continue;
                };
                s.push_str(&format!("{} test output (end):\n", c.id));
                for line in crate::output::render::last_lines(&t.output_tail, 10) {
                    s.push_str(&format!("  | {line}\n"));
                }
            }
        }
        for w in &self.warnings {
            s.push_str(&format!("warning: {w}\n"));
        }
        if let Some(e) = &self.error {
            s.push_str(&format!("error: {}\n", e.message));
        }
        s
    }
}

/// Record a fan-out's end: the result first, then the terminal stage (the
/// guarantees of `store::ending`: a reader that sees the stage finds the
/// result; on a full disk the reserve makes room, else a smaller result
/// says what was lost). Returns the result as stored.
pub fn end(rec: &mut Record, r: FanoutResult) -> Result<FanoutResult> {
    let r = ending::store_result(&rec.dir()?, r, ending::Encoding::Pretty, unstored);
    rec.stage = match r.status {
        Status::Success => Stage::Done,
        Status::Cancelled => Stage::Cancelled,
        _ => Stage::Failed,
    };
    rec.reason = r.error.as_ref().map(|e| e.message.clone());
    rec.pid = None;
    // A record `cancel` marked meanwhile stays cancelled.
    if let Ok(disk) = Record::load(&rec.root, &rec.fanout_id)
        && disk.stage == Stage::Cancelled
    {
        rec.stage = Stage::Cancelled;
    }
    rec.save()?;
    Ok(r)
}

/// What is left of a fan-out's result that could not be stored (the disk
/// is full): it failed, the reason said, the bulky parts (answers, each round,
/// the judges' reviews) dropped.
fn unstored(mut r: FanoutResult, e: &Error) -> FanoutResult {
    r.status = Status::Failed;
    r.summary = format!(
        "fan-out {} failed: its result could not be stored ({e})",
        r.fanout_id
    );
    for c in &mut r.candidates {
        c.rounds.clear();
        c.message = None;
    }
    r.judge = None;
    r.error = Some(ErrorInfo {
        retry_after_s: None,
        kind: "result_not_stored".into(),
        message: format!("baton could not store the fan-out's result: {e}"),
        hint: Some(
            "free disk space and run the task again; each candidate's output so far is in its log"
                .into(),
        ),
    });
    r
}
