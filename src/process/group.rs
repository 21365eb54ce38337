//! Stopping a process group: SIGTERM, a grace period, SIGKILL, reap; and
//! what is left in a group after its leader exited.

use std::io::{self};
use std::process::ExitStatus;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

/// SIGTERM the group, wait up to `grace` for the leader to exit, then
/// SIGKILL, and return the leader's status. `exited` picks the leader's exit
/// out of the supervisor's own channel messages (and may note others).
pub fn stop_leader<M>(
    pgid: libc::pid_t,
    grace: Duration,
    rx: &mpsc::Receiver<M>,
    mut exited: impl FnMut(M) -> Option<io::Result<ExitStatus>>,
) -> io::Result<ExitStatus> {
    killpg(pgid, libc::SIGTERM);
    let until = Instant::now() + grace;
    let mut killed = false;
    loop {
        let wait = if killed {
            Duration::from_secs(30)
        } else {
            until.saturating_duration_since(Instant::now())
        };
        match rx.recv_timeout(wait) {
            Ok(m) => {
                if let Some(s) = exited(m) {
                    return s;
                }
            }
            Err(RecvTimeoutError::Timeout) if !killed => {
                killpg(pgid, libc::SIGKILL);
                killed = true;
            }
            Err(_) => return Err(io::Error::other("process did not die after SIGKILL")),
        }
    }
}

/// Stop whatever is left in the group after its leader exited.
///
/// The leader's orphaned children are reparented to baton (see
/// `sys::proc::become_subreaper`), so their zombies are reaped here: a group of zombies
/// still "exists" for `kill`, and in a container whose init does not reap,
/// it would look alive until the grace ran out.
pub fn stop_group_leftovers(pgid: libc::pid_t, grace: Duration) {
    reap_group(pgid);
    if !group_alive(pgid) {
        return;
    }
    killpg(pgid, libc::SIGTERM);
    if wait_until(grace, || {
        reap_group(pgid);
        !group_alive(pgid)
    }) {
        return;
    }
    killpg(pgid, libc::SIGKILL);
    wait_until(Duration::from_secs(2), || {
        reap_group(pgid);
        !group_alive(pgid)
    });
}

/// Poll `done` often (every 10 ms) until it holds or `limit` passes. Used
/// only while stopping leftovers: orphans give nothing to block on.
pub(super) fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// Reap the exited members of a group that were orphaned to baton.
pub(super) fn reap_group(pgid: libc::pid_t) {
    crate::sys::proc::reap_group(pgid);
}

pub fn group_alive(pgid: libc::pid_t) -> bool {
    crate::sys::proc::group_exists(pgid)
}

pub fn killpg(pgid: libc::pid_t, sig: i32) {
    crate::sys::proc::killpg(pgid, sig);
}
