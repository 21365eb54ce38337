//! A process pinned by a pidfd: signals and waits that cannot reach another
//! process which reused the pid after this one exited (Linux; elsewhere a
//! no-op, and callers fall back to the pid).

use std::time::Duration;

use crate::sys::pidfd::Pidfd;

/// A runner's pid pinned by a pidfd (Linux), so that neither a signal nor a
/// wait can reach another process that reused the pid after the runner's exit.
pub struct Pinned(Pidfd);

impl Pinned {
    pub fn open(pid: u32) -> Option<Self> {
        Pidfd::open(pid).map(Pinned)
    }

    pub fn signal(&self, sig: i32) {
        self.0.signal(sig);
    }

    /// Block until the process has exited (a zombie counts), at most `limit`.
    pub fn wait_exit(&self, limit: Duration) {
        self.0.wait_exit(limit);
    }
}
