//! A fan-out seen as a group of its candidates' (and judges') runs: its
//! record as a `group::Head`, so every face shows it as it shows a
//! council (`view::group`).

use std::path::Path;

use super::group::{Head, MemberView};
use crate::fanout::store::Record;
use crate::group::read_json;

/// A fan-out's record as the views read it.
pub fn head(rec: &Record) -> Head {
    Head {
        id: rec.fanout_id.clone(),
        kind: "fanout".into(),
        stage: rec.stage.as_str(),
        stopped: rec.stage.is_terminal(),
        task: rec.task.clone(),
        created_ms: rec.created_ms,
        updated_ms: rec.updated_ms,
        idle_ms: rec.settings.idle_timeout_ms,
        pid: rec.pid,
        members: rec
            .candidates
            .iter()
            .map(|c| MemberView {
                agent: c.agent.clone(),
                model: c.model.clone(),
                vendor: c.vendor.clone(),
                role: "writer",
            })
            .collect(),
        progress: None,
    }
}

/// The fan-out in `dir` (`None`: absent or unreadable).
pub fn load(dir: &Path) -> Option<Head> {
    read_json::<Record>(&dir.join("state.json"))
        .ok()
        .flatten()
        .map(|r| head(&r))
}
