//! A foreground run's or a job's notifications, sent by the process that
//! owns it: its end (`Notice::ended`) and its stalls (`Notice::stalls`).
//!
//! A stall is a peer that printed nothing (its `stdout.log` and
//! `stderr.log` unchanged, the age `watch` shows) for longer than
//! `[notify] stall_after`: announced once per silence, from a thread that
//! stats the two logs a few times per threshold. Runs inside another piece
//! of work (fan-out candidates and judges, council members, bench trials)
//! get no `Notice`: their parent announces, once.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use crate::error::Error;
use crate::notify::settings::{Settings, default_stall_after};
use crate::notify::{self, Choice, Event, Origin, Trigger, Work};
use crate::result::RunResult;

/// Who is told about one run or job, and as what.
#[derive(Debug, Clone)]
pub struct Notice {
    pub work: Work,
    pub choice: Choice,
    pub origin: Origin,
    /// The run's or job's id.
    pub id: Option<String>,
    /// The repository it works in.
    pub repo: PathBuf,
    /// Its record folder: where what each channel did is kept.
    pub record: Option<PathBuf>,
}

impl Notice {
    /// The work ended with `r`: `ended`, or `stopped` for a failure kind
    /// that waits for the user.
    pub fn ended(&self, r: &RunResult) {
        let kind = r.error.as_ref().map(|e| e.kind.as_str());
        let e = Event::ended(self.work, r.status.as_str(), kind)
            .agent(r.agent.as_str())
            .summary(&r.summary);
        self.announce(e);
    }

    /// The work could not be carried to a result (baton's own error).
    pub fn failed(&self, agent: &str, err: &Error) {
        let e = Event::ended(self.work, "failed", Some(err.kind()))
            .agent(agent)
            .summary(&err.to_string());
        self.announce(e);
    }

    fn announce(&self, e: Event) {
        if self.choice == Choice::Off {
            return;
        }
        let e = match &self.id {
            Some(id) => e.id(id.as_str()),
            None => e,
        };
        let e = e.repo(self.repo.as_path());
        notify::announce(&e, self.choice, &self.origin, self.record.as_deref());
    }

    /// Announce each stall of the peer writing its logs in `logs` until
    /// the returned guard is dropped (`None` with `--no-notify`).
    pub fn stalls(&self, agent: &str, logs: &Path) -> Option<Stalls> {
        if self.choice == Choice::Off {
            return None;
        }
        // No thread when no channel would announce a stall (the common
        // case: nothing configured); `stall_after = 0` would make every
        // pause a stall: none then either.
        let settings = Settings::load(Some(&self.repo)).ok();
        let after = settings
            .as_ref()
            .map_or_else(default_stall_after, |s| s.stall_after);
        let heard = settings.is_none_or(|s| !s.plan(Trigger::Stalled, self.choice).is_empty());
        if !heard || after.is_zero() {
            return None;
        }
        let me = self.clone();
        let agent = agent.to_string();
        Some(Stalls::watch(logs, after, move |silent| {
            let e = Event::new(Trigger::Stalled, me.work, "running")
                .agent(agent.as_str())
                .summary(&format!(
                    "{agent} has printed nothing for {}s",
                    silent.as_secs()
                ));
            me.announce(e);
        }))
    }
}

/// The thread that watches a peer's logs for silence; stopped (and
/// joined, so a stall is announced before the end is) when dropped.
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
        on_stall: impl FnMut(Duration) + Send + 'static,
    ) -> Stalls {
        let (tx, rx) = mpsc::channel::<()>();
        let every = (after / 8).clamp(Duration::from_millis(20), Duration::from_secs(5));
        let dir = dir.to_path_buf();
        let mut on_stall = on_stall;
        let thread = std::thread::Builder::new()
            .name("baton-stalls".into())
            .spawn(move || {
                let started = SystemTime::now();
                let mut told: Option<SystemTime> = None;
                while let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(every) {
                    let last = last_output(&dir).map_or(started, |m| m.max(started));
                    let silent = SystemTime::now().duration_since(last).unwrap_or_default();
                    if silent > after && told != Some(last) {
                        told = Some(last);
                        on_stall(silent);
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
}
