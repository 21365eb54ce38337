//! The project's fan-outs as `baton prune` needs them (`job::GroupEntry`):
//! which have ended, when, the run folders of their judges (and any other
//! run their records name), and the worktrees of their candidates. `prune`
//! lives in `job`, below `fanout`, so the command line reads these here and
//! hands them over, as it does a council's.

use std::path::Path;

use super::store::Record;
use crate::error::Result;
use crate::group::{now_ms, read_json, runs};
use crate::ids;
use crate::job::GroupEntry;

/// Every fan-out folder of the project at `root` (none when it has no
/// fanouts folder; it is not created here).
pub fn entries(root: &Path) -> Result<Vec<GroupEntry>> {
    let project = crate::state_dir::project(root)?;
    let base = project.join("fanouts");
    let runs_dir = project.join("runs");
    let Ok(rd) = std::fs::read_dir(&base) else {
        return Ok(Vec::new());
    };
    // The candidates' worktrees are `<fanout id>-<n>` (a fallback's
    // `<fanout id>-<n>-a2`): listed once, matched per fan-out.
    let worktrees: Vec<String> = crate::worktree::store::list(root)
        .unwrap_or_default()
        .into_iter()
        .map(|w| w.id)
        .collect();
    let mut out = Vec::new();
    for e in rd.flatten() {
        let Some(id) = e.file_name().to_str().map(str::to_string) else {
            continue;
        };
        // A symlink is no fan-out folder baton made: never followed.
        if !ids::is_valid(&id) || !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let dir = e.path();
        let prefix = format!("{id}-");
        let own: Vec<String> = worktrees
            .iter()
            .filter(|w| w.starts_with(&prefix))
            .cloned()
            .collect();
        let rec = read_json::<Record>(&dir.join("state.json")).ok().flatten();
        let (stage, task, ended_ms) = match &rec {
            Some(r) => {
                let last = r.updated_ms.max(r.created_ms);
                let driven = crate::store::runner_alive(&dir);
                // Ended: a terminal stage that no process drives any more;
                // or lost: no process drives it mid-stage (its runner was
                // killed), as `jobs` shows it, once clearly abandoned.
                let (stage, ended) = if r.stage.is_terminal() {
                    (r.stage.as_str(), !driven)
                } else if !driven && (r.pid.is_some() || now_ms().saturating_sub(last) > 60_000) {
                    ("lost", true)
                } else {
                    (r.stage.as_str(), false)
                };
                (
                    Some(stage.to_string()),
                    crate::job::store::first_line(&r.task, 80),
                    ended.then_some(last),
                )
            }
            None => (None, String::new(), None),
        };
        // A fan-out that goes on keeps its worktrees: only an ended (or
        // unreadable) one hands them over.
        let worktrees = if ended_ms.is_some() || rec.is_none() {
            own
        } else {
            Vec::new()
        };
        out.push(GroupEntry {
            kind: "fanout",
            id,
            stage,
            task,
            ended_ms,
            runs: runs::run_dirs(&dir, &runs_dir),
            worktrees,
            dir,
        });
    }
    Ok(out)
}
