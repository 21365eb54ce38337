//! `baton bench …`: its subcommands and flags, turned into the plain
//! requests of `bench` (which never sees clap; docs/bench.md).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::bench;
use crate::bench::export::{ExportRequest, Format};
use crate::bench::history::Range;
use crate::bench::mine::{self, MineRequest};
use crate::bench::report_cmd::{self, ReportRequest};
use crate::bench::sets::{self, Show};
use crate::bench::task::Runner;
use crate::error::{Error, Result};
use crate::output::{self, Mode};

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Turn commits that fixed code and added a test into tasks (validated by their tests).
    Mine(MineArgs),
    /// The task sets of this project.
    List,
    /// A task set (its tasks, one line each), or one task whole.
    Show(ShowArgs),
    /// Hand every task of a set to each setting in a repository without history; score by the hidden tests.
    Run(RunArgs),
    /// Join the records of shards (`--shard I/N`) into one record.
    Merge(MergeArgs),
    /// Who solved what, at what cost: solve rates with 95 % intervals, paired tests, a recommendation.
    Report(ReportArgs),
    /// Write a task set in another harness's task layout (Harbor's), to run it there.
    Export(ExportArgs),
}

#[derive(Debug, Clone, Args)]
pub struct MineArgs {
    /// Only commits since this date (as git reads it: 2025-01-31, "3 months ago") or revision.
    #[arg(long, value_name = "DATE|REV")]
    pub since: Option<String>,
    /// Look at this many first-parent commits at most, newest first.
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub max: usize,
    /// Only commits that touch these paths.
    #[arg(long, value_name = "PATH", num_args = 1..)]
    pub paths: Vec<String>,
    /// The command that runs the tests (`sh -c`); `{tests}` is replaced by the selected tests [default: detected].
    #[arg(long, value_name = "CMD")]
    pub test_cmd: Option<String>,
    /// The format of the test command's output [default: detected].
    #[arg(long, value_name = "cargo|pytest|go|jest", value_parser = parse_runner)]
    pub runner: Option<Runner>,
    /// Test files are those matching these globs (repeatable), instead of the ecosystems' conventions.
    #[arg(long, value_name = "GLOB")]
    pub tests: Vec<String>,
    /// Validate this many candidates at a time.
    #[arg(long, value_name = "J", default_value_t = 2)]
    pub jobs: usize,
    /// Stop a test command after this long (its whole process group).
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub test_timeout: String,
    /// The set's name, kept in baton's state for this project [default: default].
    #[arg(long, value_name = "NAME", conflicts_with = "dir")]
    pub set: Option<String>,
    /// Write the set into this folder instead.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Only list the candidates: run no tests, write nothing.
    #[arg(long)]
    pub no_validate: bool,
    /// Have this agent write each task's text from the failing tests and the diff (refused if it quotes the fix).
    #[arg(long, value_name = "AGENT", conflicts_with = "no_validate")]
    pub describe: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// A set's name (`baton bench list`) or its folder.
    #[arg(value_name = "SET")]
    pub set: String,
    /// The folder to write the tasks into, one folder each (created when missing).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The layout: harbor (task.toml, instruction.md, environment/, tests/, solution/).
    #[arg(long, value_name = "harbor", value_parser = parse_format)]
    pub format: Format,
    /// Write into a DIR that is not empty, replacing the folders of the tasks exported.
    #[arg(long)]
    pub force: bool,
}

fn parse_format(s: &str) -> std::result::Result<Format, String> {
    match s {
        "harbor" => Ok(Format::Harbor),
        other => Err(format!("unknown format `{other}`: use harbor")),
    }
}

#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    /// A set's name (`baton bench list`) or its folder.
    #[arg(value_name = "SET")]
    pub set: String,
    /// One task's id: print the task file.
    #[arg(value_name = "TASK")]
    pub task: Option<String>,
}

fn parse_runner(s: &str) -> std::result::Result<Runner, String> {
    match s {
        "cargo" => Ok(Runner::Cargo),
        "pytest" => Ok(Runner::Pytest),
        "go" => Ok(Runner::Go),
        "jest" => Ok(Runner::Jest),
        other => Err(format!(
            "unknown runner `{other}`: use cargo, pytest, go or jest"
        )),
    }
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
    /// Independent attempts per trial at most, each in a fresh checkout; the next starts only when the hidden tests said no (pass@k).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub attempts: u32,
    /// Repair turns per attempt: when the visible tests of the trial's checkout fail, the peer's session gets their output (at most R, ≤ 10).
    #[arg(long, value_name = "R", default_value_t = 0)]
    pub until_green: u32,
    /// Run only slice I of N of the sorted trials (join the slices with `bench merge`).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Go on with bench run ID: only the trials it has not recorded.
    #[arg(long, value_name = "ID", conflicts_with_all = ["set", "agents", "repeat", "access", "timeout", "max_usd", "shard", "attempts", "until_green"])]
    pub resume: Option<String>,
    #[command(flatten)]
    pub notify: super::run::NotifyArgs,
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
    let cwd = std::env::current_dir().map_err(|e| Error::io("reading the current directory", e))?;
    crate::config::install(crate::config::Config::load(Some(&cwd))?);
    match c {
        BenchCommand::Mine(a) => output::emit(&mine::mine(&request(a, cwd)?)?, mode),
        BenchCommand::List => output::emit(&sets::list(&cwd)?, mode),
        BenchCommand::Show(a) => match sets::show(&cwd, &a.set, a.task.as_deref())? {
            Show::Set(s) => output::emit(&s, mode),
            Show::Task(t) => output::emit(&*t, mode),
        },
        BenchCommand::Run(a) => bench::run::command(
            bench::run::BenchRequest {
                set: a.set,
                agents: a.agents,
                repeat: a.repeat,
                access: a.access,
                timeout: a.timeout,
                max_usd: a.max_usd,
                jobs: a.jobs,
                attempts: a.attempts,
                until_green: a.until_green,
                shard: a.shard,
                resume: a.resume,
                notify: a.notify.choice(),
            },
            mode,
        ),
        BenchCommand::Merge(a) => {
            let root = crate::fsutil::project_root(&cwd);
            let m = bench::merge::merge(&root, &a.records, a.into.as_deref())?;
            output::emit(&m, mode)
        }
        BenchCommand::Report(a) => report_cmd::command(
            ReportRequest {
                target: a.target,
                html: a.html,
                cwd: a.cwd,
            },
            mode,
        ),
        BenchCommand::Export(a) => output::emit(
            &bench::export::export(&ExportRequest {
                cwd,
                set: a.set,
                format: a.format,
                dir: a.dir,
                force: a.force,
            })?,
            mode,
        ),
    }
}

fn request(a: MineArgs, cwd: PathBuf) -> Result<MineRequest> {
    if a.max == 0 {
        return Err(Error::usage_hint(
            "--max 0 looks at nothing",
            "give --max 1 or more",
        ));
    }
    let test_timeout = crate::duration::parse(&a.test_timeout)
        .map_err(|m| Error::usage_hint(format!("--test-timeout: {m}"), "e.g. 90s, 10m, 1h"))?;
    Ok(MineRequest {
        cwd,
        range: Range {
            since: a.since,
            max: a.max,
            paths: a.paths,
        },
        test_cmd: a.test_cmd,
        runner: a.runner,
        tests: a.tests,
        jobs: a.jobs.max(1),
        set: a.set,
        dir: a.dir,
        validate: !a.no_validate,
        test_timeout,
        describe: a.describe,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(subcommand)]
        c: BenchCommand,
    }

    fn mine_args(args: &[&str]) -> MineArgs {
        let mut v = vec!["t", "mine"];
        v.extend(args);
        match T::try_parse_from(v).unwrap().c {
            BenchCommand::Mine(a) => a,
            _ => unreachable!(),
        }
    }

    #[test]
    fn mine_flags_become_a_request() {
        let a = mine_args(&[
            "--since",
            "v1.0",
            "--max",
            "7",
            "--paths",
            "src",
            "tests",
            "--runner",
            "pytest",
            "--tests",
            "spec/**",
            "--tests",
            "*_t.py",
            "--jobs",
            "0",
            "--test-timeout",
            "90s",
            "--set",
            "recent",
            "--no-validate",
        ]);
        let r = request(a, PathBuf::from("/r")).unwrap();
        assert_eq!(r.range.since.as_deref(), Some("v1.0"));
        assert_eq!(r.range.max, 7);
        assert_eq!(r.range.paths, ["src", "tests"]);
        assert_eq!(r.runner, Some(Runner::Pytest));
        assert_eq!(r.tests, ["spec/**", "*_t.py"]);
        assert_eq!(r.jobs, 1);
        assert_eq!(r.test_timeout, std::time::Duration::from_secs(90));
        assert_eq!(r.set.as_deref(), Some("recent"));
        assert!(!r.validate);
        let d = request(mine_args(&[]), PathBuf::from("/r")).unwrap();
        assert_eq!((d.range.max, d.jobs, d.validate), (50, 2, true));
        assert_eq!(d.test_timeout, std::time::Duration::from_secs(600));
    }

    #[test]
    fn bad_mine_flags_are_usage_errors() {
        let bad = |v: &[&str]| {
            let mut a = vec!["t", "mine"];
            a.extend(v);
            T::try_parse_from(a).is_err()
        };
        assert!(bad(&["--runner", "maven"]));
        assert!(bad(&["--set", "a", "--dir", "b"]));
        let export = |v: &[&str]| {
            let mut a = vec!["t", "export"];
            a.extend(v);
            T::try_parse_from(a).map(|t| match t.c {
                BenchCommand::Export(e) => e,
                _ => unreachable!(),
            })
        };
        assert!(export(&["s", "out"]).is_err(), "--format is required");
        assert!(export(&["s", "out", "--format", "swebench"]).is_err());
        let e = export(&["s", "out", "--format", "harbor", "--force"]).unwrap();
        assert_eq!(
            (e.set.as_str(), e.format, e.force),
            ("s", Format::Harbor, true)
        );
        assert_eq!(e.dir, PathBuf::from("out"));
        let e = request(mine_args(&["--max", "0"]), PathBuf::from("/r")).unwrap_err();
        assert_eq!(e.kind(), "usage");
        let e = request(mine_args(&["--test-timeout", "soon"]), PathBuf::from("/r")).unwrap_err();
        assert_eq!(e.kind(), "usage");
    }
}
