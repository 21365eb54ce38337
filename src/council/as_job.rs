//! An `--async` council seen through the job commands: `baton jobs` lists it
//! (agent `council`), `baton status|wait|result|cancel|logs ID` accept its id.
//!
//! The council's own record (`councils/<id>/state.json`) stays its only
//! record: no second copy in the job store can drift from it, and a job
//! record (a peer's argv, its plan) would not fit a council. Council ids and
//! job ids share one format and one generator, so the job commands ask the
//! store's one lookup (`store::find`) which kind an id names.

use std::time::Duration;

use super::command::{cancel as cancel_council, finish};
use super::envelope;
use super::store::{self, Record};
use crate::error::Result;
use crate::group::background::{self, project_root as root};
use crate::job::View;
use crate::output::{self, Mode};
use crate::store::Standing;

/// `baton status ID`: the council's short status (as `council status`).
pub fn status(rec: &Record, mode: Mode) -> Result<i32> {
    match mode {
        Mode::Json => output::json_line(&envelope::status(rec))?,
        Mode::Text => output::text(&super::report::status_text(rec))?,
    }
    Ok(0)
}

/// `baton result ID`: the council's envelope (as `council result`).
pub fn result(rec: &Record, mode: Mode) -> Result<i32> {
    finish(rec, mode)
}

/// `baton wait ID [--timeout D]`: until the council stops (a terminal stage,
/// awaiting approval, or its runner gone), then its envelope.
pub fn wait(rec: Record, timeout: Option<Duration>, mode: Mode) -> Result<i32> {
    let rec = background::wait(
        rec,
        timeout,
        |r| r.stage.is_terminal() || r.stage.is_waiting() || !r.runner_alive(),
        |r| Record::load(&r.root, &r.council_id),
    )?;
    finish(&rec, mode)
}

/// `baton cancel ID`: signal the runner (it stops every member's process
/// group), mark the council `cancelled`, and return once the runner is gone.
pub fn cancel(rec: Record, mode: Mode) -> Result<i32> {
    let rec = stop(rec)?;
    finish(&rec, mode)
}

/// `cancel` without printing (the interactive `watch`, `serve`): the record
/// as it stands once the runner is gone.
pub fn stop(mut rec: Record) -> Result<Record> {
    let dir = rec.dir()?;
    let runner = rec
        .pid
        .filter(|p| *p != std::process::id())
        .filter(|_| crate::store::runner_alive(&dir));
    cancel_council(&mut rec)?;
    if let Some(pid) = runner {
        // The runner kills its members' groups before it exits.
        background::wait_released(&dir);
        background::wait_gone(pid);
    }
    Record::load(&rec.root, &rec.council_id)
}

/// `baton logs ID`: the runner's output (progress and errors), if any.
pub fn logs(rec: &Record) -> Result<i32> {
    let path = rec.dir()?.join("runner.log");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    if text.is_empty() {
        output::text(&format!(
            "council {} has no progress log yet ({} is empty or absent); \
             `baton council status {}` shows its stage, `baton council report {}` all it did\n",
            rec.council_id,
            path.display(),
            rec.council_id,
            rec.council_id
        ))?;
    } else {
        output::text(&text)?;
    }
    Ok(0)
}

/// The project's background councils as rows of `baton jobs`.
pub fn views() -> Result<Vec<View>> {
    let now = store::now_ms();
    let root = root()?;
    // Listing jobs must not create the councils folder of a project that has none.
    if !crate::state_dir::project(&root)?.join("councils").is_dir() {
        return Ok(Vec::new());
    }
    let all = store::list(&root)?;
    Ok(all
        .into_iter()
        .filter(|r| r.background)
        .map(|r| {
            let h = r.header();
            let status = match h.standing {
                Standing::Running => "running",
                Standing::Lost => "lost",
                Standing::Stopped => match r.stage.as_str() {
                    "done" | "ready" | "awaiting_approval" | "approved" => "success",
                    "cancelled" => "cancelled",
                    _ => "failed",
                },
            };
            View {
                job_id: r.council_id.clone(),
                status,
                agent: "council".into(),
                model: None,
                effort: r.settings.effort.clone(),
                access: if r.kind == "plan" {
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
                summary: Some(format!("{} council, stage {}", r.kind, r.stage.as_str())),
                resumed_from: None,
                log_path: r
                    .dir()
                    .map(|d| d.join("runner.log").display().to_string())
                    .unwrap_or_default(),
            }
        })
        .collect())
}
