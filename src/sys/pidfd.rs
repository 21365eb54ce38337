//! A process pinned by a pidfd: signals and waits that cannot reach another
//! process which reused the pid after this one exited (Linux; elsewhere
//! `open` gives `None`, and callers fall back to the pid).

use std::time::Duration;

pub struct Pidfd {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::OwnedFd,
}

impl Pidfd {
    #[cfg(target_os = "linux")]
    pub fn open(pid: u32) -> Option<Self> {
        use std::os::fd::{FromRawFd, OwnedFd};
        // SAFETY: plain syscall; a non-negative result is a new descriptor we own.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
        (fd >= 0).then(|| Self {
            // SAFETY: `fd` was just returned by pidfd_open and is owned by nobody else.
            fd: unsafe { OwnedFd::from_raw_fd(fd as i32) },
        })
    }

    #[cfg(not(target_os = "linux"))]
    pub fn open(_pid: u32) -> Option<Self> {
        None
    }

    #[cfg(target_os = "linux")]
    pub fn signal(&self, sig: i32) {
        use std::os::fd::AsRawFd;
        // SAFETY: plain syscall on our pidfd; a null siginfo is allowed.
        unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                self.fd.as_raw_fd(),
                sig,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            );
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub fn signal(&self, _sig: i32) {}

    /// Block until the process has exited (a zombie counts), at most `limit`.
    #[cfg(target_os = "linux")]
    pub fn wait_exit(&self, limit: Duration) {
        use std::os::fd::AsFd;
        super::fd::poll_readable(self.fd.as_fd(), limit);
    }

    #[cfg(not(target_os = "linux"))]
    pub fn wait_exit(&self, _limit: Duration) {}
}
