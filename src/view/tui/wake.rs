//! What wakes the interactive `watch`: keys, file-change notifications on
//! the store and the running jobs' directories, a runner's exit, a signal.
//!
//! Linux: one inotify descriptor, a watch per directory, read by one thread
//! that sleeps in the kernel. Elsewhere (or when inotify is unavailable) the
//! loop refreshes every `POLL` instead, which costs only `stat`s.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::time::Duration;

use ratatui::crossterm::event::Event;

/// How often the loop looks when nothing notifies it.
pub const POLL: Duration = Duration::from_millis(250);

/// One reason to look again.
#[derive(Debug)]
pub enum Wake {
    Input(Event),
    /// Something changed in a watched directory (inotify: Linux only;
    /// elsewhere the loop polls and nothing sends it).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Files,
    /// This job's runner released its lock (it ended, or died).
    RunnerGone(String),
    /// An action run in the background finished.
    Done(super::actions::Outcome),
    /// SIGTERM, SIGHUP or SIGINT: restore the terminal and leave.
    Quit,
}

/// Directory watches (`None` inside: polling instead).
pub struct Watcher {
    #[cfg(target_os = "linux")]
    fd: Option<std::sync::Arc<crate::sys::inotify::Inotify>>,
    watched: HashMap<PathBuf, i32>,
    /// Directories of the last `sync` that could not be watched (tried
    /// again when the set changes).
    failed: Vec<PathBuf>,
}

impl Watcher {
    /// Start watching; `tx` gets `Wake::Files` on every batch of changes.
    pub fn start(tx: Sender<Wake>) -> Watcher {
        Watcher {
            #[cfg(target_os = "linux")]
            fd: linux::start(tx),
            #[cfg(not(target_os = "linux"))]
            watched: {
                let _ = tx;
                HashMap::new()
            },
            #[cfg(target_os = "linux")]
            watched: HashMap::new(),
            failed: Vec::new(),
        }
    }

    /// Whether changes are notified (otherwise the loop polls every `POLL`).
    pub fn notifies(&self) -> bool {
        #[cfg(target_os = "linux")]
        return self.fd.is_some();
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// Watch exactly `dirs` (plus nothing else): add new ones, drop the rest.
    /// Returns false if a directory could not be watched.
    pub fn sync(&mut self, dirs: &[PathBuf]) -> bool {
        // Compared as bytes: `Path`'s equality parses components, and this
        // runs on every refresh with one directory per running job.
        let wanted: HashSet<&OsStr> = dirs.iter().map(|d| d.as_os_str()).collect();
        if wanted.len() == self.watched.len()
            && self.watched.keys().all(|d| wanted.contains(d.as_os_str()))
        {
            return self.failed.is_empty();
        }
        self.watched.retain(|d, wd| {
            let keep = wanted.contains(d.as_os_str());
            if !keep {
                #[cfg(target_os = "linux")]
                if let Some(fd) = &self.fd {
                    linux::remove(fd, *wd);
                }
                let _ = wd;
            }
            keep
        });
        self.failed.clear();
        for d in dirs {
            if self.watched.contains_key(d) {
                continue;
            }
            match self.add(d) {
                Some(wd) => {
                    self.watched.insert(d.clone(), wd);
                }
                None => self.failed.push(d.clone()),
            }
        }
        self.failed.is_empty()
    }

    fn add(&self, dir: &Path) -> Option<i32> {
        #[cfg(target_os = "linux")]
        return self.fd.as_ref().and_then(|fd| linux::add(fd, dir));
        #[cfg(not(target_os = "linux"))]
        {
            let _ = dir;
            None
        }
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::io;
    use std::path::Path;
    use std::sync::Arc;
    use std::sync::mpsc::Sender;

    use super::Wake;
    use crate::sys::inotify::{Inotify, Watch};

    /// How long the reader sleeps after a batch (below the loop's MIN_GAP).
    const GATHER: std::time::Duration = std::time::Duration::from_millis(30);

    pub fn start(tx: Sender<Wake>) -> Option<Arc<Inotify>> {
        let fd = Arc::new(Inotify::new(false)?);
        let reader = fd.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Ok(n) if n > 0 => {}
                    _ => break,
                }
                if tx.send(Wake::Files).is_err() {
                    break;
                }
                // Let the kernel gather the next changes (it merges repeats)
                // instead of waking for each of 50 streaming peers' writes:
                // the loop refreshes at most every MIN_GAP anyway, so this
                // delays no frame, and the first change after a quiet spell
                // is still read at once.
                std::thread::sleep(GATHER);
            }
        });
        Some(fd)
    }

    pub fn add(fd: &Inotify, dir: &Path) -> Option<Watch> {
        let mask = libc::IN_MODIFY
            | libc::IN_CREATE
            | libc::IN_DELETE
            | libc::IN_MOVED_TO
            | libc::IN_ONLYDIR;
        fd.add(dir, mask)
    }

    pub fn remove(fd: &Inotify, wd: Watch) {
        fd.remove(wd);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_change_in_a_watched_directory_wakes() {
        let dir = tempfile::tempdir().unwrap();
        let (tx, rx) = mpsc::channel();
        let mut w = Watcher::start(tx);
        assert!(w.notifies());
        assert!(w.sync(&[dir.path().to_path_buf()]));
        std::fs::write(dir.path().join("stdout.log"), "x").unwrap();
        assert!(matches!(
            rx.recv_timeout(Duration::from_secs(5)),
            Ok(Wake::Files)
        ));
        assert!(w.sync(&[]));
        assert!(w.watched.is_empty());
        assert!(!w.sync(&[dir.path().join("missing")]));
    }
}
