//! The project's bench runs as `baton prune` needs them
//! (`job::GroupEntry`): which have ended, and when. A bench run's peers'
//! logs and its trials live in its own record folder, removed whole; it has
//! no worktrees (each trial's folder is removed as the trial ends).

use std::path::Path;

use super::spec;
use super::state::{STATE_FILE, Stage, State};
use crate::error::Result;
use crate::job::GroupEntry;

/// Every bench run folder of the project at `root` (none when there is no
/// benches folder; it is not created here).
pub fn entries(root: &Path) -> Result<Vec<GroupEntry>> {
    let base = crate::state_dir::project(root)?.join(crate::store::Kind::Bench.folder());
    let Ok(rd) = std::fs::read_dir(&base) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        let Some(id) = e.file_name().to_str().map(str::to_string) else {
            continue;
        };
        // A symlink is no record baton made: never followed.
        if !crate::ids::is_valid(&id) || !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let dir = e.path();
        let state = std::fs::read_to_string(dir.join(STATE_FILE))
            .ok()
            .and_then(|t| serde_json::from_str::<State>(&t).ok());
        let task = spec::read(&dir)
            .map(|s| s.settings.join(","))
            .unwrap_or_default();
        let (stage, ended_ms) = match &state {
            Some(st) => {
                // A runner writes `running` then takes the lock: a free lock
                // is a dead runner only a minute after that write.
                let quiet = crate::store::now_ms().saturating_sub(st.updated_ms) > 60_000;
                let driven =
                    crate::store::runner_alive(&dir) || (st.stage == Stage::Running && !quiet);
                // Ended: a stage no runner drives any more (`running` with
                // a free lock is a runner that died: lost).
                let stage = match st.stage {
                    Stage::Running if !driven => "lost",
                    Stage::Running => "running",
                    Stage::Done => "done",
                    Stage::Interrupted => "interrupted",
                    Stage::Failed => "failed",
                };
                (Some(stage.to_string()), (!driven).then_some(st.updated_ms))
            }
            None => (None, None),
        };
        out.push(GroupEntry {
            kind: "bench",
            id,
            stage,
            task,
            ended_ms,
            runs: Vec::new(),
            worktrees: Vec::new(),
            dir,
        });
    }
    Ok(out)
}
