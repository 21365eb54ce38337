//! `baton usage`: its flags, turned into a `spend::usage::UsageRequest`.

use std::path::PathBuf;

use clap::Args;

use crate::error::Result;
use crate::output::Mode;
use crate::spend::usage::{self, UsageRequest};

#[derive(Debug, Clone, Args)]
pub struct UsageArgs {
    /// Only calls that ended within this long (e.g. 24h, 7d, 4w) [default: all recorded].
    #[arg(long, value_name = "DURATION")]
    pub since: Option<String>,
    /// Also sum per agent, model, day (UTC) or repo.
    #[arg(long, value_name = "agent|model|day|repo")]
    pub by: Option<String>,
    /// Only the project this directory is in.
    #[arg(long, value_name = "PATH", conflicts_with = "all_repos")]
    pub repo: Option<PathBuf>,
    /// Every project on this machine (the default).
    #[arg(long)]
    pub all_repos: bool,
}

pub fn command(a: UsageArgs, mode: Mode) -> Result<i32> {
    usage::command(
        UsageRequest {
            since: a.since,
            by: a.by,
            repo: a.repo,
        },
        mode,
    )
}
