//! Stalls: a peer that printed nothing (its `stdout.log` and `stderr.log`
//! unchanged, the age `watch` shows) for longer than `[notify]
//! stall_after`. A thread stats the logs a few times per threshold and
//! tells its owner once per silence of each peer it watches: a job or a
//! foreground run watches its one peer (`run::Notice::stalls`), a fan-out,
//! council or bench run every run it has under way (`group::stalls`), and
//! tells the stalls it finds in one look as one.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use super::settings::{Settings, default_stall_after};
use super::{Choice, Trigger};

/// One peer to watch: `key` names it among the others, `logs` is the
/// folder of its two logs, and its silence counts from `since` at the
/// earliest (a peer that has not printed yet is silent since it started).
#[derive(Debug, Clone, PartialEq)]
pub struct Watched {
    pub key: String,
    pub logs: PathBuf,
    pub since: SystemTime,
}

/// How long a silent peer of work in `repo` is `stalled`, or `None` when no
/// channel would announce a stall (the common case: nothing configured;
/// `--no-notify`) or `stall_after = 0`, which would make every pause a
/// stall: then no thread is started at all.
pub fn threshold(repo: &Path, choice: Choice) -> Option<Duration> {
    if choice == Choice::Off {
        return None;
    }
    let settings = Settings::load(Some(repo)).ok();
    let after = (settings.as_ref()).map_or_else(default_stall_after, |s| s.stall_after);
    let heard = settings.is_none_or(|s| !s.plan(Trigger::Stalled, choice).is_empty());
    (heard && !after.is_zero()).then_some(after)
}

/// The thread that watches peers' logs for silence; stopped (and joined,
/// so a stall is announced before the end is) when dropped.
pub struct Stalls {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Stalls {
    /// Call `on_stall` (with how long it has been silent) once each time
    /// the logs in `dir` stay unchanged for longer than `after`.
    pub fn watch(
        dir: &Path,
        after: Duration,
        mut on_stall: impl FnMut(Duration) + Send + 'static,
    ) -> Stalls {
        let one = Watched {
            key: String::new(),
            logs: dir.to_path_buf(),
            since: SystemTime::now(),
        };
        Stalls::watch_all(
            move || vec![one.clone()],
            after,
            move |stalled| {
                if let Some((_, silent)) = stalled.first() {
                    on_stall(*silent);
                }
            },
        )
    }

    /// Watch the peers `list` returns (asked again at each look: runs start
    /// and end) and call `on_stall` with those that fell silent for longer
    /// than `after` since the last look, each once per silence.
    pub fn watch_all(
        mut list: impl FnMut() -> Vec<Watched> + Send + 'static,
        after: Duration,
        mut on_stall: impl FnMut(Vec<(Watched, Duration)>) + Send + 'static,
    ) -> Stalls {
        let (tx, rx) = mpsc::channel::<()>();
        let every = (after / 8).clamp(Duration::from_millis(20), Duration::from_secs(5));
        let thread = std::thread::Builder::new()
            .name("baton-stalls".into())
            .spawn(move || {
                // Per peer, the last output whose silence was told.
                let mut told: HashMap<String, SystemTime> = HashMap::new();
                while let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(every) {
                    let now = SystemTime::now();
                    let peers = list();
                    told.retain(|k, _| peers.iter().any(|w| &w.key == k));
                    let mut stalled = Vec::new();
                    for w in peers {
                        let last = last_output(&w.logs).map_or(w.since, |m| m.max(w.since));
                        let silent = now.duration_since(last).unwrap_or_default();
                        if silent > after && told.get(&w.key) != Some(&last) {
                            told.insert(w.key.clone(), last);
                            stalled.push((w, silent));
                        }
                    }
                    if !stalled.is_empty() {
                        on_stall(stalled);
                    }
                }
            })
            .ok();
        Stalls {
            stop: Some(tx),
            thread,
        }
    }
}

impl Drop for Stalls {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// When the peer last wrote to either log in `dir`.
fn last_output(dir: &Path) -> Option<SystemTime> {
    ["stdout.log", "stderr.log"]
        .iter()
        .filter_map(|n| std::fs::metadata(dir.join(n)).ok()?.modified().ok())
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    fn wait_for(what: impl Fn() -> bool) -> bool {
        let until = std::time::Instant::now() + Duration::from_secs(5);
        while std::time::Instant::now() < until {
            if what() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    #[test]
    fn a_silence_is_told_once_and_output_starts_a_new_one() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("stdout.log");
        std::fs::write(&log, "first\n").unwrap();
        let told = Arc::new(Mutex::new(0));
        let t = told.clone();
        let w = Stalls::watch(dir.path(), Duration::from_millis(100), move |_| {
            *t.lock().unwrap() += 1
        });
        assert!(wait_for(|| *told.lock().unwrap() == 1));
        // Still silent: no second notice for the same silence.
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(*told.lock().unwrap(), 1);
        // The peer speaks, then falls silent again: a new stall.
        std::fs::write(&log, "more\n").unwrap();
        assert!(wait_for(|| *told.lock().unwrap() == 2));
        drop(w);
    }

    #[test]
    fn a_peer_that_keeps_printing_is_never_stalled() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("stderr.log");
        let told = Arc::new(Mutex::new(0));
        let t = told.clone();
        let w = Stalls::watch(dir.path(), Duration::from_millis(200), move |_| {
            *t.lock().unwrap() += 1
        });
        for i in 0..20 {
            std::fs::write(&log, format!("{i}\n")).unwrap();
            std::thread::sleep(Duration::from_millis(25));
        }
        drop(w);
        assert_eq!(*told.lock().unwrap(), 0);
    }

    #[test]
    fn of_several_peers_only_the_silent_one_is_told_and_each_silence_once() {
        let d = tempfile::tempdir().unwrap();
        let (quiet, busy) = (d.path().join("quiet"), d.path().join("busy"));
        for p in [&quiet, &busy] {
            std::fs::create_dir(p).unwrap();
        }
        let since = SystemTime::now();
        let peers = vec![
            Watched {
                key: "quiet".into(),
                logs: quiet,
                since,
            },
            Watched {
                key: "busy".into(),
                logs: busy.clone(),
                since,
            },
        ];
        let told = Arc::new(Mutex::new(Vec::<String>::new()));
        let t = told.clone();
        let w = Stalls::watch_all(
            move || peers.clone(),
            Duration::from_millis(150),
            move |s| {
                let keys = s.iter().map(|(w, _)| w.key.clone());
                t.lock().unwrap().extend(keys)
            },
        );
        for i in 0..24 {
            std::fs::write(busy.join("stdout.log"), format!("{i}\n")).unwrap();
            std::thread::sleep(Duration::from_millis(25));
        }
        drop(w);
        assert_eq!(*told.lock().unwrap(), vec!["quiet".to_string()]);
    }
}
