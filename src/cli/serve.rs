//! `baton serve`: its flags, turned into a `ServeRequest`.

use clap::Args;

use crate::error::Result;
use crate::output::Mode;
use crate::serve::{Scope, ServeRequest, serve};

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Listen on this port of 127.0.0.1 (default: one the OS picks).
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,
    /// Open the page in the default browser.
    #[arg(long)]
    pub open: bool,
    /// Show the work of every repository in baton's state directory, with a
    /// repository column and filter.
    #[arg(long)]
    pub all: bool,
    /// With --all: only repositories whose root path contains PATTERN.
    #[arg(long, value_name = "PATTERN", requires = "all")]
    pub repo: Option<String>,
}

pub fn command(a: ServeArgs, mode: Mode) -> Result<i32> {
    serve(
        ServeRequest {
            port: a.port,
            open: a.open,
            scope: if a.all {
                Scope::All { pattern: a.repo }
            } else {
                Scope::Here
            },
        },
        mode,
    )
}
