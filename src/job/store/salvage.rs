//! A job's result when its runner did not leave one (`result`, `running_result`,
//! `salvage`): rebuilt from its state and the peer's own log, never invented.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use crate::agent::{Agent, ProcessExit};
use crate::error::Result;
use crate::process;
use crate::result::{ErrorInfo, RunResult, SCHEMA_VERSION, Status, Usage};

use super::{Ending, Job, State, now_ms};

impl Job {
    /// What can be known of a job whose runner died: the peer's output so far.
    pub(super) fn salvage(&self, s: &State, how: Ending) -> RunResult {
        let spec = self.read_spec().ok();
        let agent = spec
            .as_ref()
            .map(|sp| sp.plan.agent)
            .or_else(|| Agent::parse(&s.agent).ok());
        let outcome = agent.map(|a| parse_log(a, &self.stdout_log(), &self.stderr_log()));
        let mut r = self.running_result(s);
        let took = format!("{:.1}s", r.duration_ms as f64 / 1000.0);
        let log = self.stdout_log().display().to_string();
        let (status, summary, error) = match how {
            Ending::Lost => (
                Status::Lost,
                format!(
                    "{} job {} lost after {took}: its runner ended without recording a result",
                    s.agent, s.id
                ),
                ErrorInfo {
                    retry_after_s: None,
                    kind: "lost".into(),
                    message: "the job's runner process ended without recording a result \
                              (killed, out of memory, or the machine restarted)"
                        .into(),
                    hint: Some(format!(
                        "the peer's output so far is in {log} (stderr.log and runner.log beside it); \
                         run the task again, or `baton continue {}` if a session is shown",
                        s.id
                    )),
                },
            ),
            Ending::Cancelled => (
                Status::Cancelled,
                format!("{} job {} cancelled after {took}", s.agent, s.id),
                ErrorInfo {
                    retry_after_s: None,
                    kind: "cancelled".into(),
                    message: "cancelled by `baton cancel`".into(),
                    hint: Some(crate::job::handoff::ended_hint(&s.id, true)),
                },
            ),
        };
        r.status = status;
        r.summary = summary;
        let mut error = error;
        if let Some(w) = spec.as_ref().and_then(|sp| sp.worktree.as_ref()) {
            // Its runner died before (or while) baton committed: the
            // peer's work, if any, is uncommitted in the worktree.
            let job = s.id.as_str();
            error.hint = Some(format!(
                "{} The peer's work is uncommitted in {}: `baton continue {job}` works there \
                 again and commits it; `baton worktree remove {} --force` discards it",
                error.hint.unwrap_or_default(),
                w.path.display(),
                w.id
            ));
            r.extra.insert(
                "worktree".into(),
                serde_json::json!({
                    "id": w.id,
                    "path": w.path,
                    "branch": w.branch,
                    "base": w.base,
                    "interrupted": true,
                    "error": "the job's runner ended before baton committed the peer's work",
                }),
            );
        }
        r.error = Some(error);
        if let Some(o) = outcome {
            r.session = o.session.or(r.session);
            r.message = o.message;
            r.usage = o.usage;
            r.model = o.model.or(r.model);
        }
        r
    }

    /// The result shape for a job that has not ended (also the base of a
    /// salvaged one).
    pub fn running_result(&self, s: &State) -> RunResult {
        let now = now_ms();
        let secs = s.duration_ms(now) as f64 / 1000.0;
        RunResult {
            schema_version: SCHEMA_VERSION,
            status: Status::Running,
            summary: format!(
                "{} job {} running for {secs:.1}s: {}",
                s.agent, s.id, s.task
            ),
            message: None,
            agent: s.agent.clone(),
            model: s.model.clone(),
            model_requested: s.model.clone(),
            effort: s.effort.clone(),
            access: s.access.clone(),
            cwd: s.cwd.clone(),
            session: s.session.clone(),
            changed_files: Vec::new(),
            usage: Usage::default(),
            duration_ms: s.duration_ms(now),
            exit_code: None,
            log_path: Some(self.stdout_log().display().to_string()),
            warnings: s.warnings.iter().map(|w| w.as_str().into()).collect(),
            denials: Vec::new(),
            error: None,
            verification: None,
            job_id: Some(s.id.clone()),
            attempts: Vec::new(),
            spending: None,
            extra: Default::default(),
        }
    }

    /// The final result of an ended job, else its running status.
    pub fn result(&self, s: &State) -> Result<RunResult> {
        if !s.status.is_terminal() {
            return Ok(self.running_result(s));
        }
        match self.read_result()? {
            // Always in the file too; set here so an old or salvaged one agrees.
            Some(r) => Ok(RunResult {
                job_id: Some(self.id.clone()),
                ..r
            }),
            // It could not be stored (a full disk): what the state says.
            None => {
                let mut r = self.running_result(s);
                r.status = s.status.status();
                r.summary = s.summary.clone().unwrap_or_default();
                r.error = Some(ErrorInfo {
                    retry_after_s: None,
                    kind: "result_not_stored".into(),
                    message: format!(
                        "job {} ended ({}) but its result.json could not be stored",
                        self.id,
                        s.status.as_str()
                    ),
                    hint: Some("the peer's output is in log_path".into()),
                });
                Ok(r)
            }
        }
    }
}

/// Parse a peer's log as far as it goes, streaming (logs can be large).
fn parse_log(agent: Agent, stdout: &Path, stderr: &Path) -> crate::agent::Outcome {
    let mut p = agent.parser();
    if let Ok(f) = File::open(stdout) {
        let mut r = BufReader::new(f);
        let mut line = Vec::new();
        while r
            .read_until(b'\n', &mut line)
            .map(|n| n > 0)
            .unwrap_or(false)
        {
            if line.len() <= process::max_line() {
                p.feed(&line);
            }
            line.clear();
        }
    }
    let mut tail = String::new();
    if let Ok(mut f) = File::open(stderr) {
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        let _ = f.seek(SeekFrom::Start(len.saturating_sub(16 << 10)));
        let mut b = Vec::new();
        let _ = f.read_to_end(&mut b);
        tail = String::from_utf8_lossy(&b).into_owned();
    }
    p.finish(&ProcessExit {
        code: None,
        stderr_tail: tail,
    })
}
