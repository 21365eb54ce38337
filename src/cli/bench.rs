//! `baton bench …`: its subcommands and flags, turned into the plain
//! requests of `bench` (which never sees clap).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::bench::report_cmd::{self, ReportRequest};
use crate::error::Result;
use crate::output::Mode;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Who solved what, at what cost: solve rates with 95 % intervals, paired tests, a recommendation.
    Report(ReportArgs),
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// A bench run's id, or the folder of its record (a path with a `/`).
    #[arg(value_name = "ID|DIR")]
    pub target: String,
    /// Also write the report as one self-contained HTML page (SVG charts, no script, opens offline).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// The repository whose bench runs an id names (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
}

pub fn command(c: BenchCommand, mode: Mode) -> Result<i32> {
    match c {
        BenchCommand::Report(a) => report_cmd::command(
            ReportRequest {
                target: a.target,
                html: a.html,
                cwd: a.cwd,
            },
            mode,
        ),
    }
}
