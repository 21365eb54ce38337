//! `baton watch`: its flags. Only `--once` (one snapshot) exists so far; the
//! interactive view is refused with a usage error rather than faked.

use clap::Args;

use crate::error::{Error, Result};
use crate::output::Mode;
use crate::view;

#[derive(Debug, Clone, Args)]
pub struct WatchArgs {
    /// Print one snapshot of every job and exit (JSON, or a table with --text).
    #[arg(long)]
    pub once: bool,
}

pub fn command(a: WatchArgs, mode: Mode) -> Result<i32> {
    if !a.once {
        return Err(Error::usage_hint(
            "the interactive `baton watch` view is not built yet",
            "use `baton watch --once` (JSON) or `baton watch --once --text`; `baton logs --follow ID` follows one job",
        ));
    }
    view::watch::once(mode)
}
