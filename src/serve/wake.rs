//! When the fleet watcher looks again: at once when a watched directory
//! changes (inotify on Linux), else after the stat-poll tick.
//!
//! Watched: the jobs directory (a job added or removed; `--all`: every shown
//! project's, and the folder of the projects, so a new project is seen at
//! once) and the directory of each running job (its logs grow, its state is replaced); an ended job is
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
#[cfg(target_os = "linux")]
const WATCHED_TICK: Duration = Duration::from_secs(1);

pub struct Waker {
    last: Instant,
    #[cfg(target_os = "linux")]
    inotify: Option<linux::Inotify>,
}

impl Waker {
    pub fn new(jobs_dir: &Path) -> Waker {
        Waker::over(vec![jobs_dir.to_path_buf()])
    }

    /// Watching several base directories (each project's jobs directory).
    pub fn over(bases: Vec<PathBuf>) -> Waker {
        // Elsewhere there is nothing to watch them with: the view polls.
        #[cfg(not(target_os = "linux"))]
        let _ = bases;
        Waker {
            last: Instant::now(),
            #[cfg(target_os = "linux")]
            inotify: linux::Inotify::new(bases),
        }
    }

    /// Watch these base directories from now on (the projects changed).
    pub fn set_bases(&mut self, bases: Vec<PathBuf>) {
        #[cfg(target_os = "linux")]
        if let Some(i) = self.inotify.as_mut() {
            i.set_bases(bases);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = bases;
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
    use std::path::PathBuf;
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
        /// The jobs directories, and their watches once they exist.
        bases: Vec<(PathBuf, Option<Watch>)>,
        watched: HashMap<PathBuf, Watch>,
    }

    impl Inotify {
        pub fn new(bases: Vec<PathBuf>) -> Option<Inotify> {
            inotify::Inotify::new(true).map(|inotify| Inotify {
                inotify,
                bases: bases.into_iter().map(|b| (b, None)).collect(),
                watched: HashMap::new(),
            })
        }

        pub fn set_bases(&mut self, bases: Vec<PathBuf>) {
            let inotify = &self.inotify;
            self.bases.retain(|(b, wd)| {
                let keep = bases.contains(b);
                if !keep && let Some(wd) = wd {
                    inotify.remove(*wd);
                }
                keep
            });
            for b in bases {
                if !self.bases.iter().any(|(x, _)| *x == b) {
                    self.bases.push((b, None));
                }
            }
        }

        /// Watch exactly the jobs directories and `running`; whether all of
        /// them are watched (a full watch table, a vanished directory: not).
        pub fn watch(&mut self, running: &[PathBuf]) -> bool {
            let mut all = true;
            for (dir, wd) in &mut self.bases {
                if wd.is_none() {
                    // Absent until the first job: retried on every wait.
                    *wd = self.inotify.add(dir, JOBS_MASK);
                }
                all &= wd.is_some();
            }
            let inotify = &self.inotify;
            self.watched.retain(|p, wd| {
                let keep = running.contains(p);
                if !keep {
                    inotify.remove(*wd);
                }
                keep
            });
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
