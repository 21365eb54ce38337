//! Background jobs: `run --async`, `wait`, `status`, `result`, `cancel`,
//! `jobs`, `logs`, `continue`, `prune`.
//!
//! Theory of operation:
//! - `run --async` validates everything `run` would (so usage errors and a
//!   missing CLI come back at once), then `launch` writes the job directory
//!   and starts baton itself as the runner (`__job-runner`, `runner`) in its
//!   own session, handing it the job's lock already locked. It prints the
//!   `running` result and exits; the job outlives the caller.
//! - The runner holds that lock for its whole life and supervises the peer
//!   exactly as `run` does, with the logs in the job directory, then writes
//!   `result.json` and the terminal state (`store`).
//! - The lock is the only liveness signal: the kernel releases it however the
//!   runner dies. `wait` blocks on a shared lock of the same file in a helper
//!   thread (zero CPU, woken by the kernel the moment the runner exits);
//!   `status`/`jobs` probe it without blocking; a `running` job whose lock is
//!   free is recorded as `lost`.
//! - `cancel` signals the runner (SIGTERM), which stops the peer's process
//!   group and records `cancelled`; once the runner is gone, anything left in
//!   the peer's group is killed.
//!
//! Every command that prints a job's result exits as `run` would have for
//! that result (`Status::exit_code`); a job still running is 0.

pub mod attach;
pub mod handoff;
pub mod launch;
pub mod runner;
pub mod store;

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;

use std::ffi::OsStr;

use self::store::{Ending, Job, State, Store, now_ms};
use crate::error::{Error, Result};
use crate::output::{self, Mode};
use crate::result::{RunResult, SCHEMA_VERSION};
use crate::{process, run};
mod continue_job;
mod prune;
mod prune_records;

pub use continue_job::{continue_job, continue_start, continue_start_in};
pub use prune::prune;
pub use prune_records::GroupEntry;

pub use self::launch::{Place, start};

/// How many ended jobs `jobs` shows without `--all` (running ones always show).
pub const RECENT: usize = 20;

/// `baton status ID`: the job's record, without blocking.
pub fn status(id: &OsStr, mode: Mode) -> Result<i32> {
    let job = Store::here()?.open(id)?;
    let s = job.refresh()?;
    let view = View::new(&job, &s, now_ms());
    match mode {
        Mode::Json => output::json_line(&JobStatus {
            schema_version: SCHEMA_VERSION,
            view,
        })?,
        Mode::Text => output::text(&view.text_block())?,
    }
    Ok(s.status.status().exit_code())
}

/// `baton result ID`: the result if the job ended, else its running status.
pub fn result(id: &OsStr, mode: Mode) -> Result<i32> {
    let job = Store::here()?.open(id)?;
    let s = job.refresh()?;
    print_job_result(&job, &s, mode)
}

/// `baton wait ID [--timeout D]`.
/// `timeout` was parsed first by the caller, before the job is looked up.
pub fn wait(id: &OsStr, timeout: Option<Duration>, mode: Mode) -> Result<i32> {
    let job = Store::here()?.open(id)?;
    let s = wait_for_end(&job, timeout)?;
    print_job_result(&job, &s, mode)
}

/// `baton cancel ID`: idempotent; a job that already ended keeps its result.
pub fn cancel(id: &OsStr, mode: Mode) -> Result<i32> {
    let job = Store::here()?.open(id)?;
    let s = cancel_job(&job)?;
    print_job_result(&job, &s, mode)
}

fn print_job_result(job: &Job, s: &State, mode: Mode) -> Result<i32> {
    let r = job.result(s)?;
    output::print_result(&r, mode)?;
    Ok(r.exit_code())
}

/// Block until the runner is gone or `timeout` passes; the state then.
///
/// The helper thread sleeps in the kernel on a shared lock of the file the
/// runner holds exclusively: no polling, and it wakes as soon as the runner
/// exits, however it exits.
pub fn wait_for_end(job: &Job, timeout: Option<Duration>) -> Result<State> {
    let s = job.refresh()?;
    if s.status.is_terminal() {
        return Ok(s);
    }
    let rx = on_runner_exit(job)?;
    let woke = match timeout {
        None => rx.recv().ok(),
        Some(t) => rx.recv_timeout(t).ok(),
    };
    match woke {
        Some(Ok(())) => job.refresh(),
        Some(Err(e)) => Err(Error::io(format!("waiting for job {}", job.id), e)),
        // The wait timed out, not the job.
        None => job.read_state(),
    }
}

/// A channel that receives once the job's runner has exited.
pub fn on_runner_exit(job: &Job) -> Result<mpsc::Receiver<std::io::Result<()>>> {
    let lock = job.open_lock()?;
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let r = lock.lock_shared();
        // Released at once: holding it would only slow other observers.
        drop(lock);
        let _ = tx.send(r);
    });
    Ok(rx)
}

/// Cancel one job and wait until its runner is gone (what `baton cancel`
/// does, without printing: the interactive `watch` calls it too).
pub fn cancel_job(job: &Job) -> Result<State> {
    let s = job.refresh()?;
    if s.status.is_terminal() {
        return Ok(s);
    }
    let gone = on_runner_exit(job)?;
    // Pinned before the signal, and kept only if the runner was still alive
    // after the pin, so the signals and the wait below reach this runner only.
    let pinned = s
        .runner_pid
        .and_then(process::Pinned::open)
        .filter(|_| job.runner_alive());
    if let Some(pid) = s.runner_pid {
        signal_runner(job, pid, pinned.as_ref(), libc::SIGTERM);
    }
    // The runner stops the peer's group (SIGTERM, grace, SIGKILL), commits a
    // worktree job's work, and records `cancelled`; give it that and a margin.
    if gone
        .recv_timeout(run::KILL_GRACE + Duration::from_secs(30))
        .is_err()
    {
        let s = job.read_state()?;
        if let Some(pid) = s.runner_pid {
            signal_runner(job, pid, pinned.as_ref(), libc::SIGKILL);
        }
        if let Some(pg) = s.peer_pgid {
            process::killpg(pg as libc::pid_t, libc::SIGKILL);
        }
        let _ = gone.recv_timeout(Duration::from_secs(5));
    }
    // The lock is released while the runner's exit is still under way (the
    // kernel closes its files before the process is gone); `cancel` promises
    // that nothing of the job runs when it returns, so wait for the exit too.
    if let Some(p) = &pinned {
        p.wait_exit(Duration::from_secs(5));
    }
    if job.runner_alive() {
        return Err(Error::Internal(format!(
            "the runner of job {} did not stop; see {}",
            job.id,
            job.runner_log().display()
        )));
    }
    // If the runner died before recording an end, it ended by our hand.
    let s = job.settle(Ending::Cancelled)?;
    if let Some(pg) = s.peer_pgid {
        let pg = pg as libc::pid_t;
        if process::group_alive(pg) {
            process::killpg(pg, libc::SIGKILL);
        }
    }
    Ok(s)
}

/// Signal the runner only while its lock shows it alive. With a pidfd the
/// pid was pinned before the check, so a pid reused after the runner's exit
/// cannot be signalled by mistake.
fn signal_runner(job: &Job, pid: u32, pinned: Option<&process::Pinned>, sig: i32) {
    if !job.runner_alive() {
        return;
    }
    match pinned {
        // The pidfd names the runner iff the runner was alive after it was opened.
        Some(p) => p.signal(sig),
        None => {
            crate::sys::proc::kill(pid as libc::pid_t, sig);
        }
    }
}

/// What `status` and `jobs` show for one job (a background council's or
/// fan-out's row in `jobs` too).
#[derive(Debug, Serialize, JsonSchema)]
pub struct View {
    pub job_id: String,
    pub status: &'static str,
    pub agent: String,
    pub model: Option<String>,
    pub effort: Option<String>,
    pub access: String,
    pub cwd: String,
    pub task: String,
    pub created_ms: u64,
    pub ended_ms: Option<u64>,
    pub age_ms: u64,
    pub duration_ms: u64,
    pub session: Option<String>,
    pub summary: Option<String>,
    pub resumed_from: Option<String>,
    pub log_path: String,
}

/// `baton status ID --json` for a job (`baton schema job-status`).
#[derive(Debug, Serialize, JsonSchema)]
pub struct JobStatus {
    pub schema_version: u32,
    #[serde(flatten)]
    pub view: View,
}

/// `baton jobs --json` (`baton schema jobs`).
#[derive(Debug, Serialize, JsonSchema)]
pub struct Listing {
    pub schema_version: u32,
    /// Running jobs first, then the newest.
    pub jobs: Vec<View>,
    /// How many jobs there are in all.
    pub total: usize,
    /// How many ended jobs were left out (without `--all`).
    pub hidden: usize,
}

impl View {
    fn new(job: &Job, s: &State, now: u64) -> View {
        View {
            job_id: s.id.clone(),
            status: s.status.as_str(),
            agent: s.agent.clone(),
            model: s.model.clone(),
            effort: s.effort.clone(),
            access: s.access.clone(),
            cwd: s.cwd.clone(),
            task: s.task.clone(),
            created_ms: s.created_ms,
            ended_ms: s.ended_ms,
            age_ms: now.saturating_sub(s.created_ms),
            duration_ms: s.duration_ms(now),
            session: s.session.clone(),
            summary: s.summary.clone(),
            resumed_from: s.resumed_from.clone(),
            log_path: job.stdout_log().display().to_string(),
        }
    }

    /// A job whose `state.json` does not parse: all its id tells.
    fn corrupt(job: &Job, now: u64) -> View {
        let created = store::id_time_ms(&job.id);
        View {
            job_id: job.id.clone(),
            status: "corrupt",
            agent: String::new(),
            model: None,
            effort: None,
            access: String::new(),
            cwd: String::new(),
            task: String::new(),
            created_ms: created,
            ended_ms: None,
            age_ms: now.saturating_sub(created),
            duration_ms: 0,
            session: None,
            summary: Some("its state.json is damaged; `baton prune` removes it".into()),
            resumed_from: None,
            log_path: job.stdout_log().display().to_string(),
        }
    }

    fn text_block(&self) -> String {
        let mut t = format!(
            "job:      {}\nstatus:   {}\nagent:    {} (model {}, effort {}, access {})\ntask:     {}\nstarted:  {} ago, ran {}\n",
            self.job_id,
            self.status,
            self.agent,
            one(self.model.as_deref().unwrap_or("default")),
            one(self.effort.as_deref().unwrap_or("default")),
            self.access,
            one(&self.task),
            human(self.age_ms),
            human(self.duration_ms),
        );
        if let Some(s) = &self.session {
            t.push_str(&format!("session:  {}\n", one(s)));
        }
        if let Some(s) = &self.summary {
            t.push_str(&format!("summary:  {}\n", one(s)));
        }
        t.push_str(&format!("log:      {}\n", self.log_path));
        t
    }
}

/// A field of a line for people: one line, whatever a peer or a task put in it.
fn one(s: &str) -> std::borrow::Cow<'_, str> {
    crate::output::render::clean(s, crate::output::render::Shape::Line)
}

/// `12s`, `5m`, `3h`, `2d`.
pub fn human(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86400),
    }
}

/// `baton jobs [--all]`: running jobs first, then the newest.
pub fn list(all: bool, mode: Mode) -> Result<i32> {
    list_with(all, mode, Vec::new())
}

/// `list`, with `extra` rows that are not in the job store (background
/// councils, which keep their own record), merged by the same order.
pub fn list_with(all: bool, mode: Mode, extra: Vec<View>) -> Result<i32> {
    let store = Store::here()?;
    let now = now_ms();
    let mut jobs: Vec<(Job, Option<State>)> = Vec::new();
    for (job, s) in store.states()? {
        let s = match s {
            Some(s) if s.status.is_terminal() => Some(s),
            // Refreshed: a dead runner's job is lost; a record without a
            // state (a launch cut short) too. `None`: it is corrupt.
            Some(s) => Some(job.refresh().unwrap_or(s)),
            None => match job.refresh() {
                Ok(s) => Some(s),
                Err(Error::CorruptJob { .. }) => None,
                Err(_) => continue,
            },
        };
        jobs.push((job, s));
    }
    let mut views: Vec<View> = jobs
        .iter()
        .map(|(j, s)| match s {
            Some(s) => View::new(j, s, now),
            None => View::corrupt(j, now),
        })
        .collect();
    views.extend(extra);
    let ended = |v: &View| v.status != "running";
    // Running first, then the newest.
    views.sort_by_key(|v| (ended(v), std::cmp::Reverse(v.created_ms), v.job_id.clone()));
    let total = views.len();
    if !all {
        let running = views.iter().filter(|v| !ended(v)).count();
        views.truncate(running + RECENT);
    }
    match mode {
        Mode::Json => {
            let listing = Listing {
                schema_version: SCHEMA_VERSION,
                hidden: total - views.len(),
                jobs: views,
                total,
            };
            // One write: with --all the line can be megabytes.
            let mut b = serde_json::to_vec(&listing).map_err(|e| Error::Internal(e.to_string()))?;
            b.push(b'\n');
            output::write_stdout(&b)?;
        }
        Mode::Text => {
            let mut t = String::new();
            if views.is_empty() {
                t.push_str("no jobs\n");
            } else {
                t.push_str(&format!(
                    "{:<13}  {:<10}  {:<9}  {:>5}  {:>8}  TASK\n",
                    "ID", "AGENT", "STATUS", "AGE", "DURATION"
                ));
            }
            for v in &views {
                t.push_str(&format!(
                    "{:<13}  {:<10}  {:<9}  {:>5}  {:>8}  {}\n",
                    v.job_id,
                    v.agent,
                    v.status,
                    human(v.age_ms),
                    human(v.duration_ms),
                    one(&v.task)
                ));
            }
            if total > views.len() {
                t.push_str(&format!(
                    "({} older jobs not shown; `baton jobs --all` lists every job)\n",
                    total - views.len()
                ));
            }
            output::text(&t)?;
        }
    }
    Ok(0)
}

/// What `run --async` and `continue` print. The job runs whether or not
/// this reaches the caller: a failure says which job it was, on stderr.
pub fn print_started(r: &RunResult, mode: Mode) -> Result<()> {
    let id = r.job_id.as_deref().unwrap_or("?");
    let handoff = handoff::Handoff::new(id);
    let printed = match mode {
        Mode::Json => {
            let mut r = r.clone();
            r.extra.insert(
                "handoff".into(),
                serde_json::to_value(&handoff).map_err(|e| Error::Internal(e.to_string()))?,
            );
            output::json_line(&r)
        }
        Mode::Text => {
            let mut t = format!("started {} job {id}\n", r.agent);
            if let Some(l) = &r.log_path {
                t.push_str(&format!("log:      {l}\n"));
            }
            for w in &r.warnings {
                t.push_str(&format!("warning:  {w}\n"));
            }
            t.push_str(&handoff.text);
            output::text(&t)
        }
    };
    printed.map_err(|e| match e {
        Error::Io { context, source } => Error::Io {
            context: format!(
                "{context} (job {} was started)",
                r.job_id.as_deref().unwrap_or("?")
            ),
            source,
        },
        e => e,
    })
}

/// `baton __job-runner DIR --lock-fd N`.
pub fn run_runner(dir: &std::path::Path, lock_fd: Option<i32>) -> Result<i32> {
    runner::main(dir, lock_fd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations() {
        assert_eq!(human(5_000), "5s");
        assert_eq!(human(300_000), "5m");
        assert_eq!(human(3 * 3_600_000), "3h");
        assert_eq!(human(2 * 86_400_000), "2d");
    }
}
