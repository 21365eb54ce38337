//! A group run in the background (`council … --async`, `run --agents …
//! --async`): its runner, a hidden baton command in a session of its own
//! whose output goes to the group's `runner.log`, and what the job
//! commands need of it: is it alive, wait for it, stop it.
//!
//! The group's record (its `state.json`) stays its only record: the job
//! commands ask `store::find` which kind an id names (ids share one format
//! and one generator). The runner holds the record's lock for its life
//! (`hold_runner_lock`): that lock, not the recorded pid, says it lives.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::fsutil;

/// How often `wait` re-reads a group's record: the runner is no child of
/// ours, so nothing wakes us when it exits; a read every 200 ms costs no
/// CPU to speak of.
pub const TICK: Duration = Duration::from_millis(200);

/// How long `stop` waits for a runner to stop its peers and exit: the
/// grace the process supervisor allows a peer, and some.
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// Start `baton <command> <id> --root <root>` in its own session, in `cwd`,
/// its stdout and stderr in `<dir>/runner.log`. Returns its pid.
pub fn spawn_runner(command: &str, id: &str, root: &Path, cwd: &Path, dir: &Path) -> Result<u32> {
    let exe = std::env::current_exe().map_err(|e| Error::io("finding baton's own path", e))?;
    let log = fsutil::create_private(&dir.join("runner.log"))?;
    let err = log
        .try_clone()
        .map_err(|e| Error::io("opening the runner's log", e))?;
    // Its own process group (not a session: as it always was), and no
    // parent-death signal: the runner outlives the command that started it.
    let child = crate::process::Command::new(exe)
        .args([command, id, "--root"])
        .arg(root)
        .current_dir(cwd)
        .stdout(log)
        .stderr(err)
        .parent_death(None)
        .spawn()
        .map_err(|e| Error::Spawn {
            binary: "baton".into(),
            source: e,
        })?;
    Ok(child.id())
}

/// Take the runner's lock of the group record in `dir` for this process,
/// which drives it from now on, and set its reserve aside
/// (`store::ending`): while the returned runner lives, the record reads as
/// running (`store::runner_alive`); once this process is gone, however it
/// goes, as ended or lost. Another process driving it already is a usage
/// error (two drivers would write the same record).
pub fn hold_runner_lock(dir: &Path, what: &str, id: &str) -> Result<crate::store::ending::Runner> {
    fsutil::ensure_private_dir(dir)?;
    crate::store::ending::Runner::hold(dir)?.ok_or_else(|| {
        Error::usage_hint(
            format!("{what} `{id}` is being driven by another baton process now"),
            format!("wait for it (`baton wait {id}`) or stop it (`baton cancel {id}`)"),
        )
    })
}

/// After `spawn_runner`: wait until the runner `pid` holds the record's
/// lock (so the launcher never reports a running group as lost), for at
/// most `STOP_GRACE`, and only while it lives.
pub fn await_runner(dir: &Path, pid: u32) -> bool {
    crate::store::lock::wait_until(dir, true, STOP_GRACE, || alive(pid))
}

/// Ask the runner of the record in `dir` to stop: SIGTERM to `pid` only
/// while the record's lock shows a runner alive (a recorded pid may since
/// name another process), then wait, up to `STOP_GRACE`, until the lock
/// is free and that process is gone. Our own pid is never signalled.
pub fn stop_group_runner(dir: &Path, pid: Option<u32>) {
    let Some(pid) = pid.filter(|p| *p != std::process::id()) else {
        return;
    };
    if crate::store::runner_alive(dir) {
        stop_runner(pid);
        wait_released(dir);
    }
}

/// Wait, up to `STOP_GRACE`, until the record's lock is free.
pub fn wait_released(dir: &Path) {
    crate::store::lock::wait_until(dir, false, STOP_GRACE, || true);
}

/// Whether a process with this pid is alive (a zombie, exited but not yet
/// reaped by whoever adopted it, is not).
pub fn alive(pid: u32) -> bool {
    let exists = crate::sys::proc::kill(pid as i32, 0);
    exists
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
}

/// Ask the runner `pid` to stop (SIGTERM: it stops every peer's process
/// group and records the end) and wait, up to `STOP_GRACE`, until it is
/// gone. Our own pid is never signalled.
pub fn stop_runner(pid: u32) {
    if pid == std::process::id() {
        return;
    }
    // A pid we recorded; a stale one gets ESRCH.
    crate::sys::proc::kill(pid as i32, libc::SIGTERM);
    wait_gone(pid);
}

/// Wait, up to `STOP_GRACE`, until process `pid` is gone.
pub fn wait_gone(pid: u32) {
    let until = Instant::now() + STOP_GRACE;
    while alive(pid) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Re-read with `load` every `TICK` until `done` holds of it or `timeout`
/// passes; the last record read.
pub fn wait<T>(
    first: T,
    timeout: Option<Duration>,
    done: impl Fn(&T) -> bool,
    load: impl Fn(&T) -> Result<T>,
) -> Result<T> {
    let deadline = timeout.map(|t| Instant::now() + t);
    let mut rec = first;
    loop {
        if done(&rec) || deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(rec);
        }
        std::thread::sleep(TICK);
        rec = load(&rec)?;
    }
}

/// The project the job commands look in: that of the current directory.
pub fn project_root() -> Result<PathBuf> {
    let cwd = std::env::current_dir().map_err(|e| Error::io("reading the current directory", e))?;
    Ok(fsutil::project_root(&cwd))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn we_are_alive_and_a_reaped_child_is_not() {
        assert!(alive(std::process::id()));
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        assert!(!alive(pid));
        let n = std::cell::Cell::new(0);
        let got = wait(
            0,
            None,
            |x| *x >= 2,
            |x| {
                n.set(n.get() + 1);
                Ok(x + 1)
            },
        )
        .unwrap();
        assert_eq!((got, n.get()), (2, 2));
    }
}
