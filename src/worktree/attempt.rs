//! One writer's attempt in a worktree of its own, and the rounds that
//! continue it there: a council's writer, each candidate of a fan-out.
//!
//! `first` is worktree mode, step by step: `prepare` makes the worktree and
//! branch from the base, `run::chain::run` runs the peer there (with
//! `--retry` and `--fallback` as for any run: a fallback agent starts in a
//! fresh worktree at the same base, `Places`) and `finish` commits what the
//! serving attempt left (reverting paths outside `--allow`, failing the
//! attempt on tampering). `again` is what `baton continue` does for a job:
//! the same worktree, the same session resumed with the next instructions
//! (through the chain with retries only: a fallback agent cannot continue
//! another agent's session), then `finish` again, so that round's
//! `changed_files` are its own. When
//! the first run reported no session (every adapter can resume, but a peer
//! may not say), the round starts afresh with the original brief and is
//! told that its earlier work is already committed there.
//!
//! The caller runs any test command (`oracle`): `finish` is given none.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::process::Interrupts;
use crate::result::{self, ErrorInfo, RunResult, Status, Usage};
use crate::run;

use super::verify::Stop;
use super::{Checked, Places, Report, Session, abandon, finish, prepare, store};

/// What one round of a writer did, serialisable so an orchestrator can
/// persist it (and skip the round on resume).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Attempt {
    /// 0: the first run; n: round n of the same session.
    pub round: u32,
    /// The agent that served the round (a fallback's, when the one asked
    /// for could not answer).
    #[serde(default)]
    pub agent: String,
    /// Every peer call of the round when it took more than one (`--retry`,
    /// `--fallback`); empty otherwise, as in a run's result.
    #[serde(default)]
    pub attempts: Vec<result::Attempt>,
    /// The worktrees of earlier calls of the round that stayed (their peer
    /// changed files before it failed): the caller reports or removes them.
    #[serde(default)]
    pub left_behind: Vec<Session>,
    // The run's result, as `baton run` reports it.
    pub status: Status,
    pub summary: String,
    pub message: Option<String>,
    pub error: Option<ErrorInfo>,
    /// The writer's session id (what the next round resumes).
    pub session: Option<String>,
    pub duration_ms: u64,
    pub log_path: Option<String>,
    pub warnings: Vec<crate::result::Warning>,
    /// Every path that differs between base and branch (all rounds so far).
    pub changed_files: Vec<String>,
    /// Paths changed outside `--allow` in this round, reverted.
    pub reverted: Vec<String>,
    /// The branch tip after baton's commit; `None` when nothing could be
    /// committed (see `warnings` and `error`).
    pub commit: Option<String>,
    /// `base..commit` as baton's commit described it (`None` with no
    /// commit): the fan-out reads it here instead of asking git again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diffstat: Option<super::repo::DiffStat>,
    pub branch: String,
    pub base: String,
    pub worktree_path: PathBuf,
    pub usage: Usage,
    /// The prepared worktree, for the next round and for the oracle.
    pub worktree: Session,
    /// The writer's run, moved into the worktree (agent, model, cwd, the
    /// first round's prompt): the next round starts from it.
    pub run_plan: run::Plan,
}

impl Attempt {
    /// Whether baton's end of the run reported the worktree tampered with.
    pub fn tampered(&self) -> bool {
        self.error
            .as_ref()
            .is_some_and(|e| e.kind == "worktree_tampered")
    }
}

/// The first round: make worktree `id` (branch `baton/<id>`) as `checked`
/// says, run `plan`'s peer there, commit what it left. Logs go to `dir`.
/// `job_id` names the background job the worktree belongs to, if any.
pub fn first(
    checked: &Checked,
    plan: &run::Plan,
    id: &str,
    job_id: Option<&str>,
    dir: &Path,
    interrupts: &mut Interrupts,
    stop: &Stop,
) -> Result<Attempt> {
    // Others judge or review this writer's work blind: baton's commits on
    // its branch name no agent.
    let checked = &Checked {
        anonymous: true,
        ..checked.clone()
    };
    let (wplan, session) = prepare(checked, plan, id, job_id)?;
    // Each fallback agent in a fresh worktree at the same base, named
    // after this one (`<id>-a2`, …) so that its owner can find it.
    let mut places =
        Places::new(Some(checked), job_id, session, wplan.clone()).named(id.to_string());
    let executed = {
        let mut on_spawn = |_| {};
        let mut fresh = |p: &run::Plan| places.fresh(p);
        let mut hooks = run::Hooks::new(&mut on_spawn);
        hooks.fresh = Some(&mut fresh);
        run::chain::run(&wplan, Some(dir), interrupts, hooks)
    };
    let left_behind: Vec<Session> = places.sessions[..places.sessions.len() - 1]
        .iter()
        .filter(|s| s.path.is_dir())
        .cloned()
        .collect();
    let (session, wplan) = places.last();
    let mut result = match executed {
        Ok(r) => r,
        Err(e) => {
            abandon(session);
            return Err(e);
        }
    };
    for s in &left_behind {
        result
            .warnings
            .push(crate::result::Warning::EarlierAttemptStays(format!(
                "{} (branch {}) stays: its peer changed files there before it failed",
                s.path.display(),
                s.branch
            )));
    }
    finish(session, wplan, &mut result, dir, stop);
    let mut a = Attempt::from_run(0, result, session.clone(), wplan.clone());
    a.left_behind = left_behind;
    Ok(a)
}

/// The next round of the same writer in the same worktree, given
/// `instructions` (the previous round's session resumed). Logs go to `dir`.
pub fn again(
    previous: &Attempt,
    instructions: &str,
    dir: &Path,
    interrupts: &mut Interrupts,
    stop: &Stop,
) -> Result<Attempt> {
    // Its changed_files are this round's, not the earlier rounds' too.
    let session = &previous.worktree.again();
    if !session.path.is_dir() {
        return Err(Error::usage_hint(
            format!(
                "the worktree {} is gone; the next round cannot continue there",
                session.path.display()
            ),
            format!(
                "its branch {} still holds the work; start anew from it",
                session.branch
            ),
        ));
    }
    let mut wplan = previous.run_plan.clone();
    // The writer's own output named its session: one that `agent::argv`
    // would refuse is not resumed; the round starts a fresh session.
    let usable = previous
        .session
        .as_ref()
        .filter(|id| crate::agent::argv::check(id).is_ok());
    match usable {
        Some(id) => {
            wplan.resume = Some(id.clone());
            wplan.origins.resume = Some(crate::agent::argv::Origin::Recorded {
                what: "the session the writer reported in its earlier round".into(),
                hint: "start anew from its branch".into(),
            });
            wplan.prompt = instructions.to_string();
        }
        None => {
            // No session to resume: the first brief again, then the repair.
            wplan.resume = None;
            wplan.prompt = format!(
                "{}\n\n## Repair round {}\nAn earlier run of yours already carried out this \
                 plan here; its work is committed on this branch (see `git log` and `git diff \
                 {}..HEAD`).\n\n{instructions}",
                previous.run_plan.prompt,
                previous.round + 1,
                session.base
            );
        }
    }
    // The worktree's record says a baton is working in it again.
    if let Some(mut r) = store::load(&session.root, &session.id) {
        r.finished_ms = None;
        r.status = None;
        r.pid = Some(std::process::id());
        r.lock = store::hold(&session.root, &session.id).ok();
        let _ = store::save(&session.root, &r);
    }
    // Retries only: a fallback agent cannot continue another agent's
    // session, and starting it afresh would lose what the rounds before
    // built here. (`--retry` never repeats a round that changed a file.)
    wplan.fallback = Vec::new();
    let mut on_spawn = |_| {};
    let mut result = run::chain::run(
        &wplan,
        Some(dir),
        interrupts,
        run::Hooks::new(&mut on_spawn),
    )?;
    if previous.session.is_some() && usable.is_none() {
        result.warnings.push(
            "the writer reported a session id that baton does not pass to a CLI; the repair \
             round started a fresh session"
                .into(),
        );
    }
    finish(session, &wplan, &mut result, dir, stop);
    let mut next = Attempt::from_run(previous.round + 1, result, session.clone(), wplan);
    // A resumed session keeps its id; a fresh one may report a new one.
    next.session = next.session.or_else(|| previous.session.clone());
    // The next round starts from the first round's brief, not this one's.
    next.run_plan.prompt = previous.run_plan.prompt.clone();
    next.run_plan.resume = None;
    Ok(next)
}

impl Attempt {
    fn from_run(round: u32, r: RunResult, session: Session, wplan: run::Plan) -> Attempt {
        let report: Option<Report> = r
            .extra
            .get("worktree")
            .filter(|w| w.get("error").is_none())
            .and_then(|w| serde_json::from_value(w.clone()).ok());
        Attempt {
            round,
            agent: r.agent.clone(),
            attempts: r.attempts.clone(),
            left_behind: Vec::new(),
            status: r.status,
            summary: r.summary,
            message: r.message,
            error: r.error,
            session: r.session,
            duration_ms: r.duration_ms,
            log_path: r.log_path,
            warnings: r.warnings,
            changed_files: report
                .as_ref()
                .map_or(r.changed_files, |w| w.changed_files.clone()),
            reverted: report
                .as_ref()
                .map(|w| w.reverted.clone())
                .unwrap_or_default(),
            commit: report.as_ref().map(|w| w.head.clone()),
            diffstat: report.as_ref().map(|w| w.diffstat),
            branch: session.branch.clone(),
            base: session.base.clone(),
            worktree_path: session.path.clone(),
            usage: r.usage,
            worktree: session,
            run_plan: wplan,
        }
    }
}
