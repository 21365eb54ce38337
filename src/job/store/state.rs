//! A job's state record (`state.json`): `JobState` with what is valid in each
//! state, and how an ending (`Ending`) is written into it.

use serde::{Deserialize, Serialize};

use crate::result::{Status, Usage};

use super::spec::Spec;
use super::{STORE_VERSION, first_line};

/// The job state machine: `Running` → exactly one terminal state, never changed after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    /// The runner holds the job's lock (or did when last looked at).
    Running,
    Success,
    Failed,
    Timeout,
    Cancelled,
    /// The runner died without recording an end (kill -9, OOM, reboot).
    Lost,
}

impl JobState {
    pub fn is_terminal(self) -> bool {
        self != JobState::Running
    }

    /// The state a result ends the job in. baton's own errors (`Status::Error`)
    /// while running a job are a failed job.
    pub fn from_status(s: Status) -> JobState {
        match s {
            Status::Success => JobState::Success,
            Status::Failed | Status::Error => JobState::Failed,
            Status::Timeout => JobState::Timeout,
            Status::Cancelled => JobState::Cancelled,
            Status::Lost => JobState::Lost,
            Status::Running => JobState::Running,
        }
    }

    pub fn status(self) -> Status {
        match self {
            JobState::Running => Status::Running,
            JobState::Success => Status::Success,
            JobState::Failed => Status::Failed,
            JobState::Timeout => Status::Timeout,
            JobState::Cancelled => Status::Cancelled,
            JobState::Lost => Status::Lost,
        }
    }

    pub fn as_str(self) -> &'static str {
        self.status().as_str()
    }
}

/// `state.json`: the state and everything `jobs`/`status` show, so listing
/// reads one small file per job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub version: u32,
    pub id: String,
    pub status: JobState,
    pub agent: String,
    pub model: Option<String>,
    pub effort: Option<String>,
    pub access: String,
    pub cwd: String,
    /// First line of the task, clipped.
    pub task: String,
    pub created_ms: u64,
    pub ended_ms: Option<u64>,
    /// Set while running, for `cancel` (signalled only while the lock shows it alive).
    pub runner_pid: Option<u32>,
    /// The peer's process group, so leftovers can be stopped after the runner is gone.
    pub peer_pgid: Option<u32>,
    pub session: Option<String>,
    pub summary: Option<String>,
    pub resumed_from: Option<String>,
    /// The id of the worktree the peer works in, if any.
    #[serde(default)]
    pub worktree: Option<String>,
    pub warnings: Vec<String>,
    /// What the result counted, copied when the job ends so that listings
    /// (`watch`) read one small file per job. `None` while running, and in
    /// jobs ended by a baton before 0.2 (then `result.json` has it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub totals: Option<Totals>,
}

/// The result's counts kept in `state.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    pub changed_files: Vec<String>,
    pub usage: Usage,
}

impl State {
    pub fn initial(spec: &Spec) -> State {
        let p = &spec.plan;
        let mut warnings = p.warnings.clone();
        warnings.extend(spec.command.warnings.iter().cloned());
        State {
            version: STORE_VERSION,
            id: spec.id.clone(),
            status: JobState::Running,
            agent: p.agent.name().to_string(),
            model: p.model.clone(),
            effort: p.effort.clone(),
            access: p.access.as_str().to_string(),
            cwd: p.cwd.display().to_string(),
            task: first_line(&p.task, 120),
            created_ms: spec.created_ms,
            ended_ms: None,
            runner_pid: None,
            peer_pgid: None,
            session: None,
            summary: None,
            resumed_from: spec.resumed_from.clone(),
            worktree: spec.worktree.as_ref().map(|w| w.id.clone()),
            warnings,
            totals: None,
        }
    }

    pub fn duration_ms(&self, now: u64) -> u64 {
        self.ended_ms.unwrap_or(now).saturating_sub(self.created_ms)
    }
}

/// How a job whose runner is gone is recorded when its runner did not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Lost,
    Cancelled,
}
