//! The server's one watcher of the job store: it keeps every job's view,
//! tails only running jobs, and publishes a new fleet only when something changed.
//!
//! Theory of operation: one thread wakes on a file-change notification (the
//! `wake` module: inotify on Linux) or every `TICK` at the latest. Per wake
//! it stats the jobs directory (a new or removed job) and, for running jobs
//! only, their `state.json` and logs; ended jobs cost nothing. A running job
//! whose files changed gets its new log bytes read (bounded, from the
//! remembered offset) and its view rebuilt; its `stalled` flag and its runner's
//! lock (a dead runner makes it `lost`) are rechecked on a slower clock. Each
//! job's view is published behind an `Arc` with the time its clocks were read
//! (`clock::Timed`): a subscriber finds what changed by pointer, and the
//! clocks (`elapsed_ms`, ages) are advanced to the moment an event is sent
//! (`clock`), so a silent fleet publishes nothing and a page opened later
//! still reads the time of now (`fleets` drives one watcher per shown
//! repository from one thread). The project's councils are followed
//! alongside (`view::group_watch`) and published as one array that is
//! replaced only when a council changes.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::clock::Timed;
use crate::agent::Agent;
use crate::job::store::{Job, Store, now_ms};
use crate::view::Tail;
use crate::view::group::GroupView;
use crate::view::group_watch::Groups;
use crate::view::watch::{JobView, view};

/// The slowest wake (the stat fallback when no notification comes).
pub const TICK: Duration = Duration::from_millis(250);
/// How often a running job's runner lock and stall clock are rechecked.
const PROBE: Duration = Duration::from_secs(1);
/// How often ended councils are looked at again (a `resume` reopens one).
const COUNCIL_RELIST: Duration = Duration::from_secs(5);
/// Most log bytes read per job per wake (the rest waits for the next wake).
const READ_PER_WAKE: usize = 256 << 10;
/// Most of a log read when a running job is first seen (its end).
const FIRST_READ: u64 = 8 << 20;
/// How long a new job directory may lack its first state before it is
/// looked at as a launch cut short (and repaired, as `watch --once` does).
const LAUNCH_GRACE_MS: u64 = 10_000;

/// One job's view as published, with the time its clocks were read.
pub type JobEntry = Arc<Timed<JobView>>;

/// Every job as the page shows it, in `watch`'s order.
#[derive(Debug, Default)]
pub struct Fleet {
    /// `(job id, the job's view)`; an unchanged job keeps its `Arc`.
    pub jobs: Vec<(String, JobEntry)>,
    /// Every council, in `watch`'s order; the same `Arc` while no council changed.
    pub councils: Arc<Vec<Timed<GroupView>>>,
}

/// What one wake compares: a file's size and change time.
type Sig = [(u64, i64, i64); 3];

fn sig(job: &Job) -> Sig {
    let one = |p: &Path| {
        p.metadata()
            .map_or((0, 0, 0), |m| (m.size(), m.mtime(), m.mtime_nsec()))
    };
    [
        one(&job.state_path()),
        one(&job.stdout_log()),
        one(&job.stderr_log()),
    ]
}

struct Tracked {
    job: Job,
    /// The view as the watcher keeps it (its clocks re-read on every probe).
    view: JobView,
    /// The view as last published: at its last change.
    published: JobEntry,
    /// Only while running.
    live: Option<Running>,
}

struct Running {
    sig: Sig,
    tail: Option<Tail>,
    /// Half of this with no output is `stalled` (0: never).
    idle_ms: u64,
}

fn is_running(v: &JobView) -> bool {
    matches!(v.status, "running" | "stalled")
}

/// The watcher's state.
pub struct Watcher {
    store: Store,
    jobs: HashMap<String, Tracked>,
    /// New job directories without `state.json` yet: their launch is under
    /// way. Looking at one now would take it for a launch cut short (its
    /// lock is not held yet) and record it `lost`, so it waits.
    pending: Vec<String>,
    dir_sig: Option<(i64, i64)>,
    last_probe: Instant,
    councils: Groups,
    councils_views: Arc<Vec<Timed<GroupView>>>,
    councils_listed: Instant,
}

impl Watcher {
    /// Every group of the project (councils, fan-outs) alongside the jobs.
    pub fn with(store: Store, councils: Groups) -> Watcher {
        Watcher {
            store,
            jobs: HashMap::new(),
            pending: Vec::new(),
            dir_sig: None,
            last_probe: Instant::now(),
            councils,
            councils_views: Arc::default(),
            councils_listed: Instant::now(),
        }
    }

    /// One wake: bring every view up to date; whether anything changed.
    pub fn update(&mut self) -> bool {
        let now = now_ms();
        let mut changed = self.rescan(now);
        changed |= self.admit(now);
        let probe = self.last_probe.elapsed() >= PROBE;
        if probe {
            self.last_probe = Instant::now();
        }
        for t in self.jobs.values_mut() {
            changed |= t.update(now, probe);
        }
        let relist = self.councils_listed.elapsed() >= COUNCIL_RELIST;
        if relist {
            self.councils_listed = Instant::now();
        }
        if self.councils.refresh(now, relist) {
            self.councils_views = Arc::new(
                self.councils
                    .views_read_at()
                    .into_iter()
                    .map(|(view, at_ms)| Timed { view, at_ms })
                    .collect(),
            );
            changed = true;
        }
        changed
    }

    /// New and removed jobs, when the jobs directory changed.
    fn rescan(&mut self, now: u64) -> bool {
        let ds = self
            .store
            .dir
            .metadata()
            .ok()
            .map(|m| (m.mtime(), m.mtime_nsec()));
        if ds.is_some() && ds == self.dir_sig {
            return false;
        }
        self.dir_sig = ds;
        let Ok(ids) = self.store.ids() else {
            return false;
        };
        let before = self.jobs.len();
        let keep: std::collections::HashSet<&String> = ids.iter().collect();
        self.jobs.retain(|id, _| keep.contains(id));
        self.pending.retain(|id| keep.contains(id));
        let changed = self.jobs.len() != before;
        for id in ids {
            if !self.jobs.contains_key(&id) && !self.pending.contains(&id) {
                self.pending.push(id);
            }
        }
        changed | self.admit(now)
    }

    /// Start tracking the new jobs whose launch has written their state.
    fn admit(&mut self, now: u64) -> bool {
        let before = self.jobs.len();
        let store = &self.store;
        let jobs = &mut self.jobs;
        self.pending.retain(|id| {
            let job = store.job(id);
            let launched = job.state_path().exists()
                || now.saturating_sub(crate::job::store::id_time_ms(id)) > LAUNCH_GRACE_MS;
            if launched {
                jobs.insert(id.clone(), Tracked::new(job, now));
            }
            !launched
        });
        self.jobs.len() != before
    }

    /// The fleet now, in `watch`'s order (running, needs attention, the rest;
    /// newest first within each).
    pub fn fleet(&self) -> Fleet {
        let mut v: Vec<&Tracked> = self.jobs.values().collect();
        v.sort_by(|a, b| {
            crate::view::watch::group(a.view.status)
                .cmp(&crate::view::watch::group(b.view.status))
                .then_with(|| b.job.id.cmp(&a.job.id))
        });
        Fleet {
            jobs: v
                .iter()
                .map(|t| (t.job.id.clone(), t.published.clone()))
                .collect(),
            councils: self.councils_views.clone(),
        }
    }
}

impl Tracked {
    fn new(job: Job, now: u64) -> Tracked {
        let v = view(&job, &job.read_state().ok(), now);
        let mut t = Tracked {
            published: publish(&v, now),
            view: v,
            job,
            live: None,
        };
        t.start_tail();
        t
    }

    fn start_tail(&mut self) {
        if !is_running(&self.view) {
            self.live = None;
            return;
        }
        if self.live.is_some() {
            return;
        }
        let spec = self.job.read_spec().ok();
        let agent = spec
            .as_ref()
            .map(|s| s.plan.agent)
            .or_else(|| Agent::parse(&self.view.agent).ok());
        let tail = agent.and_then(|a| {
            Tail::new(self.job.stdout_log(), a)
                .from_last(FIRST_READ)
                .ok()
        });
        let mut r = Running {
            sig: sig(&self.job),
            tail,
            idle_ms: spec
                .filter(|s| s.plan.agent.streams_progress())
                .map_or(0, |s| s.plan.idle_timeout_ms),
        };
        if let Some(t) = r.tail.as_mut() {
            let _ = t.catch_up();
        }
        self.live = Some(r);
    }

    /// Whether the view changed.
    fn update(&mut self, now: u64, probe: bool) -> bool {
        let Some(r) = self.live.as_mut() else {
            return false;
        };
        let s = sig(&self.job);
        let state_changed = s[0] != r.sig[0];
        let output_changed = s[1..] != r.sig[1..];
        r.sig = s;
        // A dead runner leaves its state `running`: only the lock tells.
        let lost = probe && !self.job.runner_alive();
        if state_changed || lost {
            self.view = view(&self.job, &self.job.read_state().ok(), now);
            self.start_tail();
        }
        let Some(r) = self.live.as_mut() else {
            // Ended: the view is final.
            self.published = publish(&self.view, now);
            return true;
        };
        let before = self.view.status;
        if output_changed && let Some(t) = r.tail.as_mut() {
            let _ = t.poll(READ_PER_WAKE);
            if t.offset() < s[1].0 {
                // More than one wake's read: the rest at the next wake,
                // even if the log does not change again.
                r.sig[1] = (0, 0, 0);
            }
            self.view.doing = t
                .live
                .doing()
                .or_else(|| Some("waiting for the peer's first event".into()));
            self.view.files_changed = t.live.files.clone();
            self.view.usage = t.live.usage.clone();
        }
        if output_changed || state_changed || probe {
            let last = [s[1], s[2]]
                .iter()
                .filter(|x| x.0 > 0 || x.1 > 0)
                .map(|x| x.1 as u64 * 1000 + x.2 as u64 / 1_000_000)
                .max()
                .unwrap_or(self.view.created_ms);
            let age = now.saturating_sub(last);
            self.view.last_activity_age_ms = Some(age);
            self.view.elapsed_ms = now.saturating_sub(self.view.created_ms);
            self.view.status = if r.idle_ms > 0 && age > r.idle_ms / 2 {
                "stalled"
            } else {
                "running"
            };
        }
        let changed = output_changed || state_changed || self.view.status != before;
        if changed {
            self.published = publish(&self.view, now);
        }
        changed
    }
}

/// `v`, whose clocks were read at `now`, as published.
fn publish(v: &JobView, now: u64) -> JobEntry {
    Arc::new(Timed {
        view: v.clone(),
        at_ms: now,
    })
}

impl Watcher {
    /// The jobs directory this watcher lists.
    pub fn jobs_dir(&self) -> &Path {
        &self.store.dir
    }

    /// The directories of running and launching jobs (what the waker listens to).
    pub fn running_dirs(&self) -> Vec<PathBuf> {
        self.jobs
            .values()
            .filter(|t| t.live.is_some())
            .map(|t| t.job.dir.clone())
            .chain(self.pending.iter().map(|id| self.store.dir.join(id)))
            .chain(self.councils.watch_dirs())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launch_under_way_is_not_looked_at_until_its_state_exists() {
        let dir = tempfile::tempdir().unwrap();
        let id = crate::ids::new_id();
        let job_dir = dir.path().join(&id);
        std::fs::create_dir(&job_dir).unwrap();
        let mut w = Watcher::with(Store::in_dir(dir.path()), Groups::new(None));
        w.update();
        // Looking now would settle it as a launch cut short: `lost`.
        assert!(w.fleet().jobs.is_empty());
        assert!(!job_dir.join("state.json").exists(), "nothing was recorded");
        assert_eq!(w.running_dirs(), vec![job_dir.clone()], "but it is watched");
    }

    #[test]
    fn an_unchanged_fleet_publishes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = Watcher::with(Store::in_dir(dir.path()), Groups::new(None));
        w.update();
        assert!(!w.update());
        let f = w.fleet();
        assert!(f.jobs.is_empty() && f.councils.is_empty());
    }
}
