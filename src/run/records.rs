//! A foreground run's records: its folder under `runs/` in the project's
//! state folder, and the lock that says the run is still going.

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::{fsutil, ids};

/// A fresh run directory under `runs/` in the project's state folder,
/// marked as in use by this process (`hold_run_lock`).
pub fn new_run_dir(root: &Path) -> Result<(String, PathBuf)> {
    let runs = crate::state_dir::ensure_sub(root, "runs")?;
    let id = ids::new_id();
    let dir = runs.join(&id);
    fsutil::ensure_private_dir(&dir)?;
    hold_run_lock(&dir);
    Ok((id, dir))
}

/// The run's lock: an flock on the run folder itself (its own descriptor,
/// no file made), held by the process that made the run for the rest of
/// its life, which for a foreground run is the run's; the kernel drops it
/// however the process ends. `baton prune` leaves a run whose lock is held
/// alone: a run in progress has no other sign of life (its logs may stay
/// unchanged for as long as its timeout allows). Runs of baton 0.3.2 held
/// the same lock on the file `runs/<id>/lock` (`RUN_LOCK`): prune reads both.
pub const RUN_LOCK: &str = "lock";

fn hold_run_lock(dir: &Path) {
    static HELD: std::sync::Mutex<Vec<std::fs::File>> = std::sync::Mutex::new(Vec::new());
    // Best effort, like the rest of a run's records: a run without its lock
    // is judged by its files' age.
    let Ok(f) = std::fs::File::open(dir) else {
        return;
    };
    if f.try_lock().is_ok() {
        HELD.lock().unwrap_or_else(|e| e.into_inner()).push(f);
    }
}

/// A run directory, or none with the warning that says why (a full or
/// read-only disk must not stop the run: its result is on stdout). A state
/// directory others could change (`state_dir::UNSAFE`) is an error: the
/// peer has not started yet, and the user should fix it, not lose records.
pub fn run_dir_or_warning(root: &Path) -> Result<(Option<PathBuf>, Option<String>)> {
    match new_run_dir(root) {
        Ok((_, d)) => Ok((Some(d), None)),
        Err(e) if e.kind() == crate::state_dir::UNSAFE => Err(e),
        Err(e) => Ok((
            None,
            Some(format!(
                "nothing of this run is saved (no prompt.txt, logs or result.json): {e}"
            )),
        )),
    }
}
