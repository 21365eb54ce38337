//! A bench run's `state.json`: where it stands, for the store's one lookup
//! by id (`store::find` knows a bench run by this file) and for the views
//! to come. Liveness is the record's lock (`store::ending::Runner`), never
//! this file: a `running` state whose lock is free is a run that died
//! (`--resume` goes on with it).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub const STATE_FILE: &str = "state.json";

/// Where a bench run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// A baton runs its trials now (if it holds the lock).
    Running,
    /// Every trial of its share is recorded (some may be tool errors).
    Done,
    /// Stopped by a signal: `--resume` goes on.
    Interrupted,
    /// baton could not go on (see `reason`).
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub bench_id: String,
    pub stage: Stage,
    /// The process driving it while it runs.
    #[serde(default)]
    pub pid: Option<u32>,
    pub updated_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Write the record's state (atomically).
pub fn write(record: &Path, id: &str, stage: Stage, reason: Option<String>) -> Result<()> {
    let s = State {
        bench_id: id.to_string(),
        stage,
        pid: (stage == Stage::Running).then(std::process::id),
        updated_ms: crate::store::now_ms(),
        reason,
    };
    let b = serde_json::to_vec_pretty(&s).map_err(|e| Error::Internal(e.to_string()))?;
    crate::fsutil::write_atomic(&record.join(STATE_FILE), &b)
}
