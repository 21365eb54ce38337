//! The worktrees of one run's attempts: a fallback agent starts in a fresh
//! worktree at the same base (`--fallback` with `--worktree`), never in the
//! half-done work of the agent before it. A worktree left untouched by its
//! attempt is removed when the next one is made; one with changes stays
//! (its record and branch, as the peer left them) for a person to look at.

use super::{Checked, Session, abandon, prepare};
use crate::error::{Error, Result};
use crate::ids;
use crate::run::Plan;

/// The worktrees made so far; the last one is the serving attempt's.
pub struct Places<'a> {
    checked: Option<&'a Checked>,
    job_id: Option<String>,
    /// The first worktree's id, when the next ones are named after it.
    named: Option<String>,
    pub sessions: Vec<Session>,
    pub plans: Vec<Plan>,
}

impl<'a> Places<'a> {
    /// The first attempt's worktree (`plan` moved there). Without `checked`
    /// (a job stored by an older baton) a fallback runs in that one.
    pub fn new(
        checked: Option<&'a Checked>,
        job_id: Option<&str>,
        session: Session,
        plan: Plan,
    ) -> Places<'a> {
        Places {
            checked,
            job_id: job_id.map(str::to_string),
            named: None,
            sessions: vec![session],
            plans: vec![plan],
        }
    }

    /// The next worktrees are `<id>-a2`, `<id>-a3`, … (a fan-out's
    /// candidate keeps its worktrees under its own name), not new ids.
    pub fn named(mut self, id: String) -> Places<'a> {
        self.named = Some(id);
        self
    }

    /// Whether a fallback can have a worktree of its own.
    pub fn can_refresh(&self) -> bool {
        self.checked.is_some()
    }

    /// A fresh worktree at the same base for the next attempt's plan.
    pub fn fresh(&mut self, p: &Plan) -> Result<Plan> {
        let c = self
            .checked
            .ok_or_else(|| Error::Internal("no worktree check to make another from".into()))?;
        let id = match &self.named {
            Some(first) => format!("{first}-a{}", self.sessions.len() + 1),
            None => ids::new_id(),
        };
        let (next, session) = prepare(c, p, &id, self.job_id.as_deref())?;
        if let Some(prev) = self.sessions.last() {
            abandon(prev);
        }
        self.sessions.push(session);
        self.plans.push(next.clone());
        Ok(next)
    }

    /// The serving attempt's worktree and plan.
    pub fn last(&self) -> (&Session, &Plan) {
        (
            self.sessions.last().expect("one worktree at least"),
            self.plans.last().expect("one plan at least"),
        )
    }
}
