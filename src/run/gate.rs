//! The one gate work passes before anything of it exists: a run here or in
//! a worktree, a fan-out, a council, an ask, a background job.
//!
//! Why one: each front door used to do these steps itself, in its own
//! order, and two drifted (issue 30 §3): a fan-out's `--dry-run` printed
//! JSON under `--text`, and a fan-out made its record and worktrees before
//! the host-sandbox check that every other door makes first, so inside a
//! sandbox without network its peers failed one by one, slowly.
//!
//! The order: a dry run prints its plan in the mode asked for and stops
//! (it starts nothing, so it may be asked anywhere, also inside a host's
//! sandbox); otherwise the host's sandbox is checked before the caller
//! makes a record, a worktree, a job or a run folder.

use serde_json::Value;

use crate::error::Result;
use crate::output::Mode;

/// `Some(exit code)` when the work stops here (the dry run was printed);
/// `None` when it may start. `plan` is asked for only on a dry run.
pub fn pass(
    dry_run: bool,
    mode: Mode,
    plan: impl FnOnce() -> Result<Value>,
) -> Result<Option<i32>> {
    if dry_run {
        crate::output::dry_run::print(&plan()?, mode)?;
        return Ok(Some(0));
    }
    crate::sandbox::host::check()?;
    Ok(None)
}
