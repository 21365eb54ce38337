//! The one inotify wrapper (Linux): `baton watch`'s TUI, `baton serve`'s
//! fleet watcher and `baton logs --follow` wake on changes through it.

use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::time::Duration;

/// A watch descriptor.
pub type Watch = i32;

/// An inotify instance; closed when dropped. `Sync`: one thread may block
/// in `read` while another adds and removes watches.
pub struct Inotify {
    fd: OwnedFd,
}

/// For an async reactor (`baton mcp` waits on it through tokio).
impl AsRawFd for Inotify {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.fd.as_raw_fd()
    }
}

impl Inotify {
    /// A new instance (close-on-exec; `nonblocking`: reads never block).
    pub fn new(nonblocking: bool) -> Option<Inotify> {
        let flags = libc::IN_CLOEXEC | if nonblocking { libc::IN_NONBLOCK } else { 0 };
        // SAFETY: plain syscall; a non-negative result is a descriptor we own.
        let raw = unsafe { libc::inotify_init1(flags) };
        (raw >= 0).then(|| Inotify {
            // SAFETY: `raw` was just returned by inotify_init1.
            fd: unsafe { OwnedFd::from_raw_fd(raw) },
        })
    }

    /// Watch `path` for the events in `mask` (`libc::IN_*`).
    pub fn add(&self, path: &Path, mask: u32) -> Option<Watch> {
        let c = super::fd::c_path(path).ok()?;
        // SAFETY: a valid descriptor and a NUL-terminated path.
        let wd = unsafe { libc::inotify_add_watch(self.fd.as_raw_fd(), c.as_ptr(), mask) };
        (wd >= 0).then_some(wd)
    }

    /// Stop a watch this instance made (a stale one only fails).
    pub fn remove(&self, wd: Watch) {
        // SAFETY: plain syscall on our descriptor.
        unsafe { libc::inotify_rm_watch(self.fd.as_raw_fd(), wd) };
    }

    /// Read a batch of events into `buf` (blocking unless nonblocking);
    /// `Ok(0)` or an error other than EINTR: the instance is done.
    pub fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        super::fd::read(self.fd.as_fd(), buf)
    }

    /// Block until an event or `max`; then drain what came (a nonblocking
    /// instance only).
    pub fn wait_and_drain(&self, max: Duration) {
        if super::fd::poll_readable(self.fd.as_fd(), max) {
            let mut buf = [0u8; 8192];
            while self.read(&mut buf).is_ok_and(|n| n > 0) {}
        }
    }
}
