//! When the fleet watcher looks again: at once when a watched directory
//! changes (inotify on Linux), else after the stat-poll tick.
//!
//! Watched: the jobs directory (a job added or removed) and the directory of
//! each running job (its logs grow, its state is replaced); an ended job is
//! not watched. Wakes are spaced by at least `FLOOR`, so fifty peers
//! streaming at once cost a bounded number of passes, not one per write.
//! Where inotify is missing (macOS) or fails, the tick alone drives it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The least time between two passes.
const FLOOR: Duration = Duration::from_millis(40);
/// The longest sleep while every directory is watched: the notifications
/// carry the changes, and the clocks (`stalled`, a dead runner) need a look
/// about once a second.
const WATCHED_TICK: Duration = Duration::from_secs(1);

pub struct Waker {
    last: Instant,
    #[cfg(target_os = "linux")]
    inotify: Option<linux::Inotify>,
}

impl Waker {
    pub fn new(jobs_dir: &Path) -> Waker {
        Waker {
            last: Instant::now(),
            #[cfg(target_os = "linux")]
            inotify: linux::Inotify::new(jobs_dir),
        }
    }

    /// Block until something changed under a watched directory, or `max`
    /// (stretched to `WATCHED_TICK` when every directory is watched).
    pub fn wait(&mut self, max: Duration, running: &[PathBuf]) {
        let floor = FLOOR.saturating_sub(self.last.elapsed());
        if !floor.is_zero() {
            std::thread::sleep(floor);
        }
        #[cfg(target_os = "linux")]
        if let Some(i) = self.inotify.as_mut() {
            let max = if i.watch(running) {
                max.max(WATCHED_TICK)
            } else {
                max
            };
            i.wait(max.saturating_sub(self.last.elapsed()));
            self.last = Instant::now();
            return;
        }
        let _ = running;
        std::thread::sleep(max.saturating_sub(self.last.elapsed()));
        self.last = Instant::now();
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::HashMap;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    const JOBS_MASK: u32 =
        libc::IN_CREATE | libc::IN_DELETE | libc::IN_MOVED_TO | libc::IN_MOVED_FROM;
    const JOB_MASK: u32 = libc::IN_MODIFY
        | libc::IN_CLOSE_WRITE
        | libc::IN_MOVED_TO
        | libc::IN_CREATE
        | libc::IN_ATTRIB;

    pub struct Inotify {
        fd: i32,
        jobs_dir: PathBuf,
        jobs_wd: Option<i32>,
        watched: HashMap<PathBuf, i32>,
    }

    fn add(fd: i32, p: &Path, mask: u32) -> Option<i32> {
        let c = CString::new(p.as_os_str().as_bytes()).ok()?;
        // SAFETY: a valid descriptor and a NUL-terminated path.
        let wd = unsafe { libc::inotify_add_watch(fd, c.as_ptr(), mask) };
        (wd >= 0).then_some(wd)
    }

    impl Inotify {
        pub fn new(jobs_dir: &Path) -> Option<Inotify> {
            // SAFETY: plain syscall; the descriptor is owned by the value.
            let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
            (fd >= 0).then(|| Inotify {
                fd,
                jobs_dir: jobs_dir.to_path_buf(),
                jobs_wd: None,
                watched: HashMap::new(),
            })
        }

        /// Watch exactly the jobs directory and `running`; whether all of
        /// them are watched (a full watch table, a vanished directory: not).
        pub fn watch(&mut self, running: &[PathBuf]) -> bool {
            if self.jobs_wd.is_none() {
                // Absent until the first job: retried on every wait.
                self.jobs_wd = add(self.fd, &self.jobs_dir, JOBS_MASK);
            }
            let fd = self.fd;
            self.watched.retain(|p, wd| {
                let keep = running.contains(p);
                if !keep {
                    // SAFETY: a watch this descriptor made.
                    unsafe { libc::inotify_rm_watch(fd, *wd) };
                }
                keep
            });
            let mut all = self.jobs_wd.is_some();
            for p in running {
                if !self.watched.contains_key(p) {
                    match add(fd, p, JOB_MASK) {
                        Some(wd) => {
                            self.watched.insert(p.clone(), wd);
                        }
                        None => all = false,
                    }
                }
            }
            all
        }

        /// Block until an event or `max`; drain what came.
        pub fn wait(&mut self, max: Duration) {
            let mut pfd = libc::pollfd {
                fd: self.fd,
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = max.as_millis().min(i32::MAX as u128) as i32;
            // SAFETY: one valid pollfd.
            let n = unsafe { libc::poll(&mut pfd, 1, ms) };
            if n > 0 {
                let mut buf = [0u8; 8192];
                // SAFETY: reading into a buffer we own; non-blocking.
                while unsafe { libc::read(self.fd, buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
            }
        }
    }

    impl Drop for Inotify {
        fn drop(&mut self) {
            // SAFETY: our own descriptor, closed once.
            unsafe { libc::close(self.fd) };
        }
    }
}
