//! The project's councils as `baton prune` needs them (`job::GroupEntry`):
//! which have ended, when, and the run folders of their members. `prune`
//! itself lives in `job`, below `council`, so the command line reads these
//! here and hands them over.

use std::path::Path;

use super::store::{Record, read_json};
use crate::error::Result;
use crate::group::runs;
use crate::ids;
use crate::job::GroupEntry;
use crate::store::Standing;

/// Every council folder of the project at `root` (none when it has no
/// councils folder; it is not created here).
pub fn entries(root: &Path) -> Result<Vec<GroupEntry>> {
    let project = crate::state_dir::project(root)?;
    let base = project.join("councils");
    let runs_dir = project.join("runs");
    let Ok(rd) = std::fs::read_dir(&base) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        let Some(id) = e.file_name().to_str().map(str::to_string) else {
            continue;
        };
        // A symlink is no council folder baton made: never followed.
        if !ids::is_valid(&id) || !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let dir = e.path();
        let rec = read_json::<Record>(&dir.join("state.json")).ok().flatten();
        out.push(match rec {
            Some(r) => {
                // Ended: a terminal stage, and no process drives it any more
                // (a cancel being carried out still has its runner); or lost:
                // no runner holds its lock mid-stage (it was killed), as
                // `jobs` shows it, once clearly abandoned (a council being
                // started writes its record before its runner takes the
                // lock). One waiting for approval is neither: it stays.
                let last = r.updated_ms.max(r.created_ms);
                let (stage, ended) = match r.header().standing {
                    Standing::Stopped => (
                        r.stage.as_str(),
                        r.stage.is_terminal() && !crate::store::runner_alive(&dir),
                    ),
                    Standing::Lost if crate::ids::now_ms().saturating_sub(last) > 60_000 => {
                        ("lost", true)
                    }
                    _ => (r.stage.as_str(), false),
                };
                GroupEntry {
                    kind: "council",
                    id,
                    stage: Some(stage.to_string()),
                    task: crate::job::store::first_line(&r.task, 80),
                    ended_ms: ended.then_some(last),
                    runs: runs::run_dirs(&dir, &runs_dir),
                    worktrees: Vec::new(),
                    dir,
                }
            }
            None => GroupEntry {
                kind: "council",
                id,
                stage: None,
                task: String::new(),
                ended_ms: None,
                runs: runs::run_dirs(&dir, &runs_dir),
                worktrees: Vec::new(),
                dir,
            },
        });
    }
    Ok(out)
}
