//! `baton serve`: its flags, turned into a `ServeRequest`.

use clap::Args;

use crate::error::Result;
use crate::output::Mode;
use crate::serve::{ServeRequest, serve};

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Listen on this port of 127.0.0.1 (default: one the OS picks).
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,
    /// Open the page in the default browser.
    #[arg(long)]
    pub open: bool,
}

pub fn command(a: ServeArgs, mode: Mode) -> Result<i32> {
    serve(
        ServeRequest {
            port: a.port,
            open: a.open,
        },
        mode,
    )
}
