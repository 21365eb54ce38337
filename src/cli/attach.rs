//! `baton attach ID`: its flags, and the call into `job::attach`, which
//! opens the peer CLI's own interactive interface on an ended job's session.

use std::ffi::OsString;

use clap::Args;

use crate::error::Result;
use crate::job;
use crate::output::Mode;

#[derive(Debug, Clone, Args)]
pub struct AttachArgs {
    /// The ended job whose peer session to take over.
    #[arg(value_name = "ID")]
    pub id: OsString,
    /// Print the CLI's argv, working directory and environment changes (JSON, or text with --text), and start nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Errors are reported by the caller in the output mode asked for; on
/// success (without `--dry-run`) this never returns: baton became the CLI.
pub fn command(a: AttachArgs, mode: Mode) -> Result<i32> {
    job::attach::attach(&a.id, a.dry_run, mode)
}
