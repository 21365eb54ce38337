//! `baton bench …`: its subcommands and flags, turned into the plain
//! requests of `bench` (which never sees clap).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::bench;
use crate::bench::report_cmd::{self, ReportRequest};
use crate::error::{Error, Result};
use crate::output::Mode;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Hand every task of a set to each setting in a repository without history; score by the hidden tests.
    Run(RunArgs),
    /// Join the records of shards (`--shard I/N`) into one record.
    Merge(MergeArgs),
    /// Who solved what, at what cost: solve rates with 95 % intervals, paired tests, a recommendation.
    Report(ReportArgs),
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The task set: its folder, or the name of a set of this repository.
    #[arg(value_name = "SET", required_unless_present = "resume")]
    pub set: Option<String>,
    /// The settings, comma-separated: AGENT or AGENT:MODEL (e.g. codex,claude:opus,pi).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        required_unless_present = "resume"
    )]
    pub agents: Vec<String>,
    /// How many times each task goes to each setting.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub repeat: u32,
    /// The peer's access in its trial: workspace or read-only.
    #[arg(long, value_name = "workspace|read-only")]
    pub access: Option<String>,
    /// The most one trial's peer (and then its tests) may take, e.g. 20m [default: 60m].
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Dollars each trial's peer may spend.
    #[arg(long, value_name = "USD")]
    pub max_usd: Option<f64>,
    /// Trials run at a time.
    #[arg(long, value_name = "J", default_value_t = 1)]
    pub jobs: u32,
    /// Run only slice I of N of the sorted trials (join the slices with `bench merge`).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Go on with bench run ID: only the trials it has not recorded.
    #[arg(long, value_name = "ID", conflicts_with_all = ["set", "agents", "repeat", "access", "timeout", "max_usd", "shard"])]
    pub resume: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct MergeArgs {
    /// The records to join: bench run ids, or their folders.
    #[arg(value_name = "ID_OR_DIR", required = true)]
    pub records: Vec<String>,
    /// Write into this record (a new id when left out).
    #[arg(long, value_name = "ID")]
    pub into: Option<String>,
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
    crate::config::install(crate::config::Config::load(None)?);
    match c {
        BenchCommand::Run(a) => bench::run::command(
            bench::run::BenchRequest {
                set: a.set,
                agents: a.agents,
                repeat: a.repeat,
                access: a.access,
                timeout: a.timeout,
                max_usd: a.max_usd,
                jobs: a.jobs,
                shard: a.shard,
                resume: a.resume,
            },
            mode,
        ),
        BenchCommand::Merge(a) => {
            let cwd =
                std::env::current_dir().map_err(|e| Error::io("reading the current folder", e))?;
            let root = crate::fsutil::project_root(&cwd);
            let m = bench::merge::merge(&root, &a.records, a.into.as_deref())?;
            crate::output::emit(&m, mode)
        }
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
