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
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    use crate::sys::inotify::{self, Watch};

    const JOBS_MASK: u32 =
        libc::IN_CREATE | libc::IN_DELETE | libc::IN_MOVED_TO | libc::IN_MOVED_FROM;
    const JOB_MASK: u32 = libc::IN_MODIFY
        | libc::IN_CLOSE_WRITE
        | libc::IN_MOVED_TO
        | libc::IN_CREATE
        | libc::IN_ATTRIB;

    pub struct Inotify {
        inotify: inotify::Inotify,
        jobs_dir: PathBuf,
        jobs_wd: Option<Watch>,
        watched: HashMap<PathBuf, Watch>,
    }

    impl Inotify {
        pub fn new(jobs_dir: &Path) -> Option<Inotify> {
            inotify::Inotify::new(true).map(|inotify| Inotify {
                inotify,
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
                self.jobs_wd = self.inotify.add(&self.jobs_dir, JOBS_MASK);
            }
            let inotify = &self.inotify;
            self.watched.retain(|p, wd| {
                let keep = running.contains(p);
                if !keep {
                    inotify.remove(*wd);
                }
                keep
            });
            let mut all = self.jobs_wd.is_some();
            for p in running {
                if !self.watched.contains_key(p) {
                    match self.inotify.add(p, JOB_MASK) {
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
            self.inotify.wait_and_drain(max);
        }
    }
}
