//! A candidate's rounds as the result shows them: its status, whether it is
//! eligible and why not, its diff, its tests (pure, from what ran).

use crate::result::{ErrorInfo, Status, Usage};
use crate::worktree::oracle::Verification;

use super::candidate::{Outcome, Round, green};
use super::preflight::Candidate;
use super::result::{CandidateResult, DiffStat, FanoutResult, RoundResult, Tests};

/// Why a candidate stopped when it was not its own doing.
#[derive(Debug, Clone, PartialEq)]
pub enum StoppedBy {
    /// It ran to its end.
    Nobody,
    /// `--pick first-green`: this candidate was eligible first.
    Winner(String),
    /// A signal or `baton cancel` stopped the whole fan-out.
    Cancel,
}

pub fn tests(v: &Verification) -> Tests {
    Tests {
        passed: v.passed,
        exit_code: v.exit_code,
        timed_out: v.timed_out,
        duration_ms: v.duration_ms,
        output_tail: v.output_tail.clone(),
        whitespace_errors: v.whitespace_errors.clone(),
        not_run: v.not_run.clone(),
        commit: v.commit.clone(),
        sandbox: v.sandbox.clone(),
    }
}

fn round(r: &Round) -> RoundResult {
    let a = &r.attempt;
    RoundResult {
        round: a.round,
        status: a.status,
        summary: a.summary.clone(),
        session: a.session.clone(),
        tests: r.tests.as_ref().map(tests),
        usage: a.usage.clone(),
        duration_ms: a.duration_ms,
        log_path: a.log_path.clone(),
    }
}

/// The fan-out's warnings about candidate `c`: what its chain said about
/// who served (`fell_back:`), what it did not retry and what it left, for
/// people (the judges are shown no warning, only the diffs, blind); and a
/// test log cut short, and a diff too long for a judge to see whole.
pub fn warnings(c: &Candidate, o: &Outcome) -> Vec<String> {
    let mut out: Vec<String> = o
        .rounds
        .iter()
        .flat_map(|x| &x.attempt.warnings)
        .filter(|w| w.from_the_chain())
        .map(|w| format!("{}: {w}", c.id))
        .collect();
    for x in &o.rounds {
        if let Some(t) = x.tests.as_ref().filter(|t| t.log_dropped > 0) {
            out.push(format!(
                "{}: round {}'s test command printed more than {} MiB: its test.log keeps the \
                 end of its output; the first {} bytes were dropped",
                c.id,
                x.attempt.round,
                crate::worktree::verify::log_max() >> 20,
                t.log_dropped
            ));
        }
    }
    if let Some(d) = o
        .last()
        .and_then(|r| r.diff.as_ref())
        .filter(|d| d.left_out > 0)
    {
        out.push(format!(
            "{}: its diff is {} bytes, more than a judge is shown: a judge sees its first and \
             last lines ({} bytes left out; `git diff` its branch for all of it)",
            c.id, d.bytes, d.left_out
        ));
    }
    out
}

/// Why `o` cannot win, or `None` when it is eligible.
pub fn excluded(o: &Outcome, stopped: &StoppedBy) -> Option<String> {
    let Some(r) = o.last() else {
        return Some(match &o.error {
            Some(e) => format!("baton could not run it: {}: {e}", e.kind()),
            None => "it never ran".into(),
        });
    };
    if green(r) {
        return None;
    }
    let a = &r.attempt;
    let repairs = o.rounds.len().saturating_sub(1);
    let after = match repairs {
        0 => String::new(),
        n => format!(" after {n} repair round(s)"),
    };
    let mut why = match stopped {
        StoppedBy::Winner(w) => format!("stopped: {w} was eligible first (--pick first-green)"),
        StoppedBy::Cancel => "cancelled before it ended".into(),
        StoppedBy::Nobody if a.tampered() => format!(
            "tampered with its worktree: {}",
            a.error.as_ref().map_or("", |e| e.message.as_str())
        ),
        StoppedBy::Nobody if a.status != Status::Success => format!(
            "the peer's run ended `{}`{after}: {}",
            a.status.as_str(),
            a.error
                .as_ref()
                .map_or(a.summary.as_str(), |e| e.message.as_str())
        ),
        StoppedBy::Nobody if a.changed_files.is_empty() => format!("it changed nothing{after}"),
        StoppedBy::Nobody => match &r.tests {
            None => "its tests were not run".into(),
            Some(t) if t.timed_out => format!("its tests timed out{after}"),
            Some(t) if t.not_run.is_some() => format!(
                "its tests were not run: {}",
                t.not_run.as_deref().unwrap_or_default()
            ),
            Some(t) => format!(
                "its tests failed ({}){after}",
                t.exit_code
                    .map_or("no exit code".to_string(), |c| format!("exit {c}"))
            ),
        },
    };
    if let Some(e) = &o.error {
        why.push_str(&format!("; baton could not go on: {}: {e}", e.kind()));
    }
    if let Some(h) = &o.held_back {
        why.push_str(&format!("; {h}"));
    }
    Some(why)
}

/// The candidate's entry in the result (`kept` and `diff_stat` are filled
/// by the driver, which knows what stays and reads the branches).
pub fn result(c: &Candidate, o: &Outcome, stopped: &StoppedBy) -> CandidateResult {
    let last = o.last();
    let mut usage = Usage::default();
    for r in &o.rounds {
        usage.add(&r.attempt.usage);
    }
    let status = match (last, stopped) {
        (_, StoppedBy::Winner(_) | StoppedBy::Cancel) => Status::Cancelled,
        (Some(r), _) => r.attempt.status,
        (None, _) => Status::Error,
    };
    let error = last.and_then(|r| r.attempt.error.clone()).or_else(|| {
        o.error.as_ref().map(|e| ErrorInfo {
            kind: e.kind().into(),
            message: e.to_string(),
            hint: e.hint(),
            retry_after_s: None,
        })
    });
    let excluded_reason = excluded(o, stopped);
    // The plan of the agent that served its last round (a fallback's when
    // the one asked for could not answer): who the candidate's work is by.
    let served = last.map_or(&c.plan, |r| &r.attempt.run_plan);
    CandidateResult {
        id: c.id.clone(),
        agent: served.agent.name().into(),
        agent_requested: c.plan.agent.name().into(),
        model: served.model.clone(),
        vendor: served
            .agent
            .vendor(served.provider.as_deref(), served.model.as_deref()),
        status,
        eligible: excluded_reason.is_none(),
        excluded_reason,
        branch: last.map(|r| r.attempt.branch.clone()),
        commit: last.and_then(|r| r.attempt.commit.clone()),
        branch_moved: false,
        worktree: last.map(|r| r.attempt.worktree_path.display().to_string()),
        kept: last.is_some(),
        changed_files: last
            .map(|r| r.attempt.changed_files.clone())
            .unwrap_or_default(),
        diff_stat: None,
        tests: last.and_then(|r| r.tests.as_ref()).map(tests),
        rounds: o.rounds.iter().map(round).collect(),
        attempts: o
            .rounds
            .iter()
            .flat_map(|r| r.attempt.attempts.iter().cloned())
            .collect(),
        usage,
        duration_ms: o.duration_ms,
        session: last.and_then(|r| r.attempt.session.clone()),
        message: last.and_then(|r| r.attempt.message.clone()),
        log_path: last.and_then(|r| r.attempt.log_path.clone()),
        error,
    }
}

/// Whether the branches of the eligible candidates (or only candidate
/// `only`) of `r` still point at the commits baton tested, in the user's
/// repository at `root`. One that moved (issue 31: a candidate moved a
/// sibling's tested branch and the wrong code won) is not eligible: its
/// `excluded_reason` and a warning say where it points now. The driver asks
/// before the judges and again for the winner after them; `merge_hint`
/// names the commit, not the branch.
pub fn branches_hold(root: &std::path::Path, r: &mut FanoutResult, only: Option<usize>) -> bool {
    let mut held = true;
    for (i, c) in r.candidates.iter_mut().enumerate() {
        if only.is_some_and(|o| o != i) || !c.eligible {
            continue;
        }
        let (Some(branch), Some(commit)) = (&c.branch, &c.commit) else {
            continue;
        };
        if let Some(why) = crate::worktree::branch_moved(root, branch, commit) {
            r.warnings.push(format!("{}: {why}", c.id));
            c.eligible = false;
            c.branch_moved = true;
            c.excluded_reason = Some(why);
            held = false;
        }
    }
    held
}

impl From<crate::worktree::repo::DiffStat> for DiffStat {
    fn from(d: crate::worktree::repo::DiffStat) -> DiffStat {
        DiffStat {
            files: d.files,
            insertions: d.insertions,
            deletions: d.deletions,
        }
    }
}
