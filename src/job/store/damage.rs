//! A job's records when something went wrong: a launch cut short before its
//! first state, a file that does not parse, a disk too full for the result.
//!
//! Each still ends in a state a reader can act on: `lost`, `corrupt_job`
//! (which `prune` removes), or `failed` with the reason, never `running`.

use std::path::Path;

use crate::error::{Error, Result};
use crate::result::{ErrorInfo, RunResult, Status};
use crate::store::ending;

use super::{Ending, Job, JobState, STORE_VERSION, State};

/// Whether `e` says `state.json` is missing (a launch cut short), as
/// opposed to unreadable.
pub(super) fn state_missing(e: &Error) -> bool {
    matches!(e, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
}

/// The start time encoded in an id (its first 9 base-32 digits).
pub fn id_time_ms(id: &str) -> u64 {
    const ALPHABET: &[u8] = b"0123456789abcdefghjkmnpqrstvwxyz";
    id.bytes().take(9).fold(0u64, |acc, b| {
        (acc << 5) | ALPHABET.iter().position(|a| *a == b).unwrap_or(0) as u64
    })
}

impl Job {
    /// A file of this job that does not parse: not a bug in baton.
    pub(super) fn corrupt(&self, p: &Path, e: serde_json::Error) -> Error {
        Error::CorruptJob {
            id: self.id.clone(),
            path: p.to_path_buf(),
            detail: e.to_string(),
        }
    }

    /// `corrupt_job` unless the record at `p` names this job.
    pub(super) fn check_names_me(&self, p: &Path, named: &str) -> Result<()> {
        if named == self.id {
            return Ok(());
        }
        Err(Error::CorruptJob {
            id: self.id.clone(),
            path: p.to_path_buf(),
            detail: format!(
                "it names job `{}`, not `{}` (a folder copied or renamed by hand?)",
                named.escape_debug(),
                self.id
            ),
        })
    }

    /// Set room aside (the runner, at its start) to record the end when the
    /// disk is full (`store::ending`, as every kind of background work).
    pub fn make_reserve(&self) {
        ending::make_reserve(&self.dir);
    }

    /// Store `result` as `result.json`, with the reserve if need be, else a
    /// small result that says what was lost (`store::ending`). Returns what
    /// was stored (or, if nothing could be, what the state should say).
    pub(super) fn store_result_or_less(&self, result: RunResult) -> RunResult {
        ending::store_result(&self.dir, result, ending::Encoding::Compact, |r, e| {
            unstored(r, e)
        })
    }

    /// A job directory without `state.json`: a launch in progress (its
    /// launcher holds the state guard until the first state is written), a
    /// runner that will write it, or a launch killed midway: `lost`.
    pub(super) fn settle_unstarted(&self) -> Result<State> {
        let _g = self.guard()?;
        match self.read_state() {
            Err(e) if state_missing(&e) => {}
            Ok(s) if s.status.is_terminal() || self.runner_alive() => return Ok(s),
            Ok(s) => return self.finish_locked(s.clone(), self.salvage(&s, Ending::Lost)),
            Err(e) => return Err(e),
        }
        let s = match self.read_spec() {
            Ok(spec) => State::initial(&spec),
            Err(_) => self.unknown_state(),
        };
        if self.runner_alive() {
            return Ok(s);
        }
        let result = self.salvage(&s, Ending::Lost);
        self.finish_locked(s, result)
    }

    /// All a job without its spec is known by: its id.
    fn unknown_state(&self) -> State {
        State {
            version: STORE_VERSION,
            id: self.id.clone(),
            status: JobState::Running,
            agent: "unknown".into(),
            model: None,
            effort: None,
            access: String::new(),
            cwd: String::new(),
            task: String::new(),
            created_ms: id_time_ms(&self.id),
            ended_ms: None,
            runner_pid: None,
            peer_pgid: None,
            session: None,
            summary: None,
            resumed_from: None,
            worktree: None,
            warnings: vec!["the job's launch was cut short before it recorded anything".into()],
            totals: None,
        }
    }
}

/// What is left of a job's result that could not be stored (the disk is
/// full): it failed, the reason said, the bulky message dropped.
fn unstored(mut r: RunResult, e: &Error) -> RunResult {
    r.status = Status::Failed;
    r.summary = format!(
        "{} job {} failed: its result could not be stored ({e})",
        r.agent,
        r.job_id.as_deref().unwrap_or("?")
    );
    r.message = None;
    r.error = Some(ErrorInfo {
        retry_after_s: None,
        kind: "result_not_stored".into(),
        message: format!("baton could not store the job's result: {e}"),
        hint: Some(
            "free disk space and run the task again; the peer's output so far is in log_path"
                .into(),
        ),
    });
    r
}
