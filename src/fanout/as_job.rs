//! A fan-out as one background job (`run --agents … --async`): its runner
//! (`group::background`), and the job commands on its id — `jobs` lists
//! it, `wait`, `status`, `result`, `cancel` and `logs` accept it. `cancel`
//! stops every candidate: the runner stops each peer's and test command's
//! process group before it records the end.

use std::time::Duration;

use crate::error::Result;
use crate::group::background::{self, project_root};
use crate::group::now_ms;
use crate::job::View;
use crate::output::{self, Mode};
use crate::result::Status;
use crate::store::Standing;

use super::RUNNER_COMMAND;
use super::result::FanoutResult;
use super::store::{self, Record, Stage};

/// Start `rec`'s runner and print the running envelope.
pub fn start(mut rec: Record, mode: Mode) -> Result<i32> {
    let pid = match background::spawn_runner(
        RUNNER_COMMAND,
        &rec.fanout_id,
        &rec.root,
        &rec.cwd,
        &rec.dir()?,
    ) {
        Ok(p) => p,
        Err(e) => {
            rec.fail(&e);
            return Err(e);
        }
    };
    // Back only once the runner holds the lock (until then the record
    // would read as lost). It may have written its pid and more, or even
    // ended: keep its record.
    background::await_runner(&rec.dir()?, pid);
    if let Ok(disk) = Record::load(&rec.root, &rec.fanout_id)
        && (disk.pid.is_some() || disk.updated_ms != rec.updated_ms)
    {
        rec = disk;
    } else {
        rec.pid = Some(pid);
        rec.save()?;
    }
    output::print_result(&running(&rec), mode)?;
    Ok(0)
}

/// The fan-out's status as the job commands and `jobs` name it.
pub fn status_of(rec: &Record) -> Status {
    match rec.header().standing {
        Standing::Running => Status::Running,
        Standing::Lost => Status::Lost,
        Standing::Stopped => match rec.stage {
            Stage::Done => Status::Success,
            Stage::Cancelled => Status::Cancelled,
            _ => Status::Failed,
        },
    }
}

/// The envelope of a fan-out that has not ended (running, or lost).
fn running(rec: &Record) -> FanoutResult {
    let mut r = FanoutResult::new(
        rec,
        if rec.settings.worktree.is_some() {
            "worktree"
        } else {
            "read-only"
        },
    );
    let n = rec.candidates.len();
    r.status = status_of(rec);
    r.job_id = Some(rec.fanout_id.clone());
    r.duration_ms = now_ms().saturating_sub(rec.created_ms);
    r.summary = match r.status {
        Status::Lost => format!(
            "fan-out of {n} lost: its runner died at stage {} without recording an end",
            rec.stage.as_str()
        ),
        Status::Running => format!(
            "fan-out of {n} running in the background (stage {}): `baton wait {}`",
            rec.stage.as_str(),
            rec.fanout_id
        ),
        _ => format!(
            "fan-out of {n} ended `{}` without a result: {}",
            rec.stage.as_str(),
            rec.reason.as_deref().unwrap_or("no reason recorded")
        ),
    };
    r
}

/// Its result once it ended, else its running (or lost) envelope.
fn current(rec: &Record) -> Result<FanoutResult> {
    if rec.stage.is_terminal()
        && let Some(v) = rec.result()?
        && let Ok(r) = serde_json::from_value::<FanoutResult>(v)
    {
        return Ok(r);
    }
    Ok(running(rec))
}

/// `baton status ID`: where it stands.
pub fn status(rec: &Record, mode: Mode) -> Result<i32> {
    match mode {
        Mode::Json => output::json_line(&status_report(rec))?,
        Mode::Text => output::text(&format!(
            "fan-out {}: {} (stage {}), {} candidate(s)\n",
            rec.fanout_id,
            status_of(rec).as_str(),
            rec.stage.as_str(),
            rec.candidates.len()
        ))?,
    }
    Ok(0)
}

/// `baton status ID` of a fan-out id: one branch of `baton schema job-status`.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct FanoutStatus {
    pub schema_version: u32,
    /// Always `fanout`.
    pub kind: &'static str,
    pub fanout_id: String,
    /// The same id, as the job commands name it.
    pub job_id: String,
    /// `running`, `success`, `failed`, `cancelled` or `lost`.
    pub status: &'static str,
    pub stage: &'static str,
    pub candidates: Vec<CandidateRef>,
    /// The task, clipped to 120 characters.
    pub task: String,
    pub created_ms: u64,
    pub reason: Option<String>,
}

/// A candidate as `status` names it.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct CandidateRef {
    pub id: String,
    pub agent: String,
    pub model: Option<String>,
}

pub fn status_value(rec: &Record) -> serde_json::Value {
    serde_json::to_value(status_report(rec)).unwrap_or_default()
}

pub fn status_report(rec: &Record) -> FanoutStatus {
    FanoutStatus {
        schema_version: crate::result::SCHEMA_VERSION,
        kind: "fanout",
        fanout_id: rec.fanout_id.clone(),
        job_id: rec.fanout_id.clone(),
        status: status_of(rec).as_str(),
        stage: rec.stage.as_str(),
        candidates: rec
            .candidates
            .iter()
            .map(|c| CandidateRef {
                id: c.id.clone(),
                agent: c.agent.clone(),
                model: c.model.clone(),
            })
            .collect(),
        task: crate::agent::clip(&rec.task, 120),
        created_ms: rec.created_ms,
        reason: rec.reason.clone(),
    }
}

/// `baton result ID`.
pub fn result(rec: &Record, mode: Mode) -> Result<i32> {
    let r = current(rec)?;
    output::print_result(&r, mode)?;
    Ok(match r.status {
        Status::Running => 0,
        _ => r.exit_code(),
    })
}

/// `baton wait ID [--timeout D]`: until it ends (or its runner is gone).
pub fn wait(rec: Record, timeout: Option<Duration>, mode: Mode) -> Result<i32> {
    let rec = background::wait(
        rec,
        timeout,
        |r| r.stage.is_terminal() || !r.runner_alive(),
        |r| Record::load(&r.root, &r.fanout_id),
    )?;
    result(&rec, mode)
}

/// `baton cancel ID`: every candidate stopped, then its result.
pub fn cancel(rec: Record, mode: Mode) -> Result<i32> {
    let rec = stop(rec)?;
    result(&rec, mode)
}

/// `cancel` without printing (`watch`, `serve`): the runner signalled (it
/// stops every candidate's process groups and records the end), the
/// record marked, and the record as it stands once the runner is gone.
pub fn stop(mut rec: Record) -> Result<Record> {
    if rec.stage.is_terminal() {
        return Ok(rec);
    }
    let runner = rec.pid;
    rec.stage = Stage::Cancelled;
    rec.reason = Some("cancelled by `baton cancel`".into());
    rec.save()?;
    background::stop_group_runner(&rec.dir()?, runner);
    Record::load(&rec.root, &rec.fanout_id)
}

/// `baton logs ID`: the runner's output (progress and errors), if any.
pub fn logs(rec: &Record) -> Result<i32> {
    let path = rec.dir()?.join("runner.log");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    if text.is_empty() {
        output::text(&format!(
            "fan-out {} has no runner output ({} is empty or absent); `baton status {}` shows \
             where it stands, `baton watch` its candidates' runs\n",
            rec.fanout_id,
            path.display(),
            rec.fanout_id
        ))?;
    } else {
        output::text(&text)?;
    }
    Ok(0)
}

/// The project's background fan-outs as rows of `baton jobs`.
pub fn views() -> Result<Vec<View>> {
    let now = now_ms();
    let root = project_root()?;
    Ok(store::list(&root)?
        .into_iter()
        .filter(|r| r.background)
        .map(|r| {
            let h = r.header();
            let status = status_of(&r);
            View {
                job_id: r.fanout_id.clone(),
                status: status.as_str(),
                agent: "fanout".into(),
                model: None,
                effort: r.settings.effort.clone(),
                access: if r.settings.worktree.is_some() {
                    "worktree"
                } else {
                    "read-only"
                }
                .into(),
                cwd: r.cwd.display().to_string(),
                task: crate::agent::clip(&r.task, 120),
                created_ms: r.created_ms,
                ended_ms: h.ended_ms,
                age_ms: now.saturating_sub(r.created_ms),
                duration_ms: h.duration_ms(now),
                session: None,
                summary: Some(format!(
                    "fan-out of {}, stage {}",
                    r.candidates.len(),
                    r.stage.as_str()
                )),
                resumed_from: None,
                log_path: r
                    .dir()
                    .map(|d| d.join("runner.log").display().to_string())
                    .unwrap_or_default(),
            }
        })
        .collect())
}
