//! The job commands (wait, status, result, cancel, jobs, logs, continue,
//! prune, and the hidden job runner): their flags, and the `job` calls they make.
//!
//! Job ids are taken as raw `OsString`s so that every malformed id (NUL,
//! non-UTF-8, traversal) reaches `store::check_id` and gets the same
//! `invalid_job_id` answer.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Args;

use crate::council::as_job;
use crate::error::{Error, Result};
use crate::fanout::as_job as fanout_job;
use crate::output::Mode;
use crate::store::{self, Kind};
use crate::{council, duration, fanout, job};

#[derive(Debug, Clone, Args)]
pub struct IdArgs {
    /// The job id printed by `baton run --async`.
    #[arg(value_name = "ID")]
    pub id: OsString,
}

#[derive(Debug, Clone, Args)]
pub struct WaitArgs {
    #[arg(value_name = "ID")]
    pub id: OsString,
    /// Stop waiting (not the job) after this long and print the running status.
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct JobsArgs {
    /// List every job (default: running jobs and the most recent others).
    #[arg(long)]
    pub all: bool,
    /// List the work of every repository baton keeps records for, each row
    /// with its repository: what runs or waits, and the newest others of each.
    #[arg(long)]
    pub all_repos: bool,
    /// With --all-repos: only repositories whose root path contains PATTERN.
    #[arg(long, value_name = "PATTERN", requires = "all_repos")]
    pub repo: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct LogsArgs {
    #[arg(value_name = "ID")]
    pub id: OsString,
    /// Keep printing as the peer works, until the job ends.
    #[arg(long, short = 'f')]
    pub follow: bool,
    /// Print the peer's raw output stream instead of rendering it.
    #[arg(long)]
    pub raw: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ContinueArgs {
    /// The job whose peer session to continue.
    #[arg(value_name = "ID")]
    pub id: OsString,
    /// The follow-up task (or pipe it on stdin).
    #[arg(value_name = "TASK")]
    pub task: Vec<String>,
    #[command(flatten)]
    pub notify: super::run::NotifyArgs,
}

#[derive(Debug, Clone, Args)]
pub struct PruneArgs {
    /// Remove what ended longer ago than this (e.g. 12h, 7d, 0 for all that ended).
    #[arg(long, value_name = "DURATION", default_value = "7d")]
    pub older_than: String,
    /// Show what would be removed, remove nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `baton __job-runner <DIR> --lock-fd N` (hidden; started by the launcher).
#[derive(Debug, Clone, Args)]
pub struct RunnerArgs {
    pub dir: PathBuf,
    /// The descriptor of the job's lock, already locked by the launcher.
    #[arg(long)]
    pub lock_fd: Option<i32>,
}

/// What an id names, by the store's one lookup (`store::find`): a council
/// or a fan-out keeps its own record, so its commands are its feature's;
/// anything else (a job, or an id that names nothing or is malformed) goes
/// to `job`, which answers as it always has.
enum Target {
    // Boxed: the records are large, the job arm is empty.
    Council(Box<council::store::Record>),
    Fanout(Box<fanout::store::Record>),
    /// A bench run's record folder and id.
    Bench(std::path::PathBuf, String),
    Job,
}

fn target(raw: &std::ffi::OsStr) -> Target {
    let Ok(root) = crate::group::background::project_root() else {
        return Target::Job;
    };
    match store::find(&root, raw) {
        Some(f) if f.kind == Kind::Council => council::store::Record::load(&root, &f.id)
            .map_or(Target::Job, |r| Target::Council(Box::new(r))),
        Some(f) if f.kind == Kind::Fanout => fanout::store::Record::load(&root, &f.id)
            .map_or(Target::Job, |r| Target::Fanout(Box::new(r))),
        Some(f) if f.kind == Kind::Bench => Target::Bench(f.dir, f.id),
        _ => Target::Job,
    }
}

pub fn wait(a: WaitArgs, mode: Mode) -> Result<i32> {
    let timeout = a.timeout.as_deref().map(duration::parse).transpose()?;
    match target(&a.id) {
        Target::Council(rec) => as_job::wait(*rec, timeout, mode),
        Target::Fanout(rec) => fanout_job::wait(*rec, timeout, mode),
        Target::Bench(_, id) => Err(crate::bench::status::foreground_only("wait", &id)),
        Target::Job => job::wait(&a.id, timeout, mode),
    }
}

pub fn status(a: IdArgs, mode: Mode) -> Result<i32> {
    match target(&a.id) {
        Target::Council(rec) => as_job::status(&rec, mode),
        Target::Fanout(rec) => fanout_job::status(&rec, mode),
        Target::Bench(dir, id) => {
            crate::output::emit(&crate::bench::status::status(&dir, &id)?, mode)
        }
        Target::Job => job::status(&a.id, mode),
    }
}

pub fn result(a: IdArgs, mode: Mode) -> Result<i32> {
    match target(&a.id) {
        Target::Council(rec) => as_job::result(&rec, mode),
        Target::Fanout(rec) => fanout_job::result(&rec, mode),
        Target::Bench(dir, _) => crate::output::emit(&crate::bench::report_cmd::read(&dir)?, mode),
        Target::Job => job::result(&a.id, mode),
    }
}

pub fn cancel(a: IdArgs, mode: Mode) -> Result<i32> {
    match target(&a.id) {
        Target::Council(rec) => as_job::cancel(*rec, mode),
        Target::Fanout(rec) => fanout_job::cancel(*rec, mode),
        Target::Bench(_, id) => Err(crate::bench::status::foreground_only("cancel", &id)),
        Target::Job => job::cancel(&a.id, mode),
    }
}

pub fn list(a: JobsArgs, mode: Mode) -> Result<i32> {
    if a.all_repos {
        let filter = crate::view::repos::Filter {
            repo: a.repo,
            recent: if a.all { usize::MAX } else { job::RECENT },
        };
        return crate::view::repos::jobs_listing(&filter, mode);
    }
    let mut groups = as_job::views()?;
    groups.extend(fanout_job::views()?);
    job::list_with(a.all, mode, groups)
}

pub fn logs(a: LogsArgs, mode: Mode) -> Result<i32> {
    match target(&a.id) {
        Target::Council(rec) => as_job::logs(&rec),
        Target::Fanout(rec) => fanout_job::logs(&rec),
        Target::Bench(dir, id) => Err(Error::usage_hint(
            format!("{id} is a bench run: its logs are one folder per trial"),
            format!(
                "read {}/logs/<trial>/ (the peer's output, prompt.txt, test.log)",
                dir.display()
            ),
        )),
        Target::Job => crate::view::logs::logs(&a.id, a.follow, a.raw, mode),
    }
}

pub fn continue_job(a: ContinueArgs, mode: Mode) -> Result<i32> {
    job::continue_job(&a.id, a.task, a.notify.choice(), mode)
}

pub fn prune(a: PruneArgs, mode: Mode) -> Result<i32> {
    let older_than = duration::parse(&a.older_than)?;
    // Groups and fan-outs are read here and handed over: `job` sits
    // below both.
    let cwd = std::env::current_dir().map_err(|e| Error::io("reading the current directory", e))?;
    let root = crate::fsutil::project_root(&cwd);
    let mut groups = crate::council::prune::entries(&root)?;
    groups.extend(crate::fanout::prune::entries(&root)?);
    groups.extend(crate::bench::prune::entries(&root)?);
    job::prune(older_than, a.dry_run, mode, groups)
}

pub fn run_runner(a: RunnerArgs) -> Result<i32> {
    job::run_runner(&a.dir, a.lock_fd)
}
