//! The job store followed cheaply for the interactive `watch`: each job's
//! state read once (ended) or when its file changes (running), one tail per
//! running job from a remembered offset, and the runner's lock waited on.
//!
//! A refresh with nothing new costs a `stat` of the store directory and three
//! per running job, and one zero-byte read of each running job's log: no
//! file is read again from the start, and ended jobs are not touched at all.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::time::SystemTime;

use crate::agent::Agent;
use crate::error::Result;
use crate::job::store::{Job, State, Store};
use crate::view::tail::Tail;
use crate::view::watch::{self, JobView};

use super::app::{RECENT_ENDED, needs_attention};
use super::wake::Wake;

/// At most this much of one running job's log is read per refresh (bounded
/// work per wake; the rest is read on the next).
const READ_PER_WAKE: usize = 256 << 10;

/// A running job's log is read from at most this far before its end when
/// the watch first sees it.
const FIRST_READ: u64 = 8 << 20;

struct Running {
    tail: Option<Tail>,
    idle_ms: u64,
    /// `state.json`'s modification time and size when last read.
    stamp: Option<(SystemTime, u64)>,
    /// The runner's lock was released: refresh the state (it may be lost).
    gone: bool,
    /// The state as last read (`None`: unreadable so far).
    state: Option<State>,
    /// `stderr.log`, open once it exists (its `fstat` gives the time of the
    /// peer's last output there).
    stderr: Option<std::fs::File>,
}

struct Entry {
    job: Job,
    view: JobView,
    run: Option<Running>,
}

pub struct Tracker {
    store: Store,
    entries: HashMap<String, Entry>,
    dir_stamp: Option<SystemTime>,
    wake: Sender<Wake>,
    /// `watch --all`: only some jobs of this repository are followed.
    bound: Option<Bound>,
}

/// A repository of `watch --all`: its open jobs (the store's live index,
/// read through `view::repos`'s rule: never trusted) and its `recent`
/// newest are followed, not its 10,000 ended jobs; the listing is read
/// again only when the jobs folder changes.
struct Bound {
    project: PathBuf,
    recent: usize,
    /// Jobs in the store, for the count of those not listed.
    total: usize,
}

fn stamp(p: &std::path::Path) -> Option<(SystemTime, u64)> {
    let m = p.metadata().ok()?;
    Some((m.modified().ok()?, m.len()))
}

impl Tracker {
    pub fn new(store: Store, wake: Sender<Wake>) -> Tracker {
        Tracker {
            store,
            entries: HashMap::new(),
            dir_stamp: None,
            wake,
            bound: None,
        }
    }

    /// A tracker of the jobs of the project in `project` that follows only
    /// its open jobs and its `recent` newest (`watch --all`).
    pub fn bounded(store: Store, project: PathBuf, recent: usize, wake: Sender<Wake>) -> Tracker {
        let mut t = Tracker::new(store, wake);
        t.bound = Some(Bound {
            project,
            recent,
            total: 0,
        });
        t
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn store_dir(&self) -> PathBuf {
        self.store.dir.clone()
    }

    /// The directories of the running jobs (to be watched for changes).
    pub fn running_dirs(&self) -> Vec<PathBuf> {
        self.entries
            .values()
            .filter(|e| e.run.is_some())
            .map(|e| e.job.dir.clone())
            .collect()
    }

    pub fn job(&self, id: &str) -> Option<&Job> {
        self.entries.get(id).map(|e| &e.job)
    }

    /// The runner of job `id` exited.
    pub fn runner_gone(&mut self, id: &str) {
        if let Some(r) = self.entries.get_mut(id).and_then(|e| e.run.as_mut()) {
            r.gone = true;
        }
    }

    /// Bring every view up to date; the views worth listing (running, in
    /// need of attention, and the `RECENT_ENDED` newest others), and how
    /// many other ended jobs were left out. A store of thousands of ended
    /// jobs costs a pass over them, not a copy of each, per wake.
    pub fn refresh(&mut self, now: u64, relist: bool) -> Result<(Vec<JobView>, usize)> {
        let dir = self.store.dir.metadata().and_then(|m| m.modified()).ok();
        // Bounded: a new job changes the folder's time; a periodic listing of
        // 10,000 entries per repository would be most of the idle cost.
        let relist = relist && self.bound.is_none();
        if relist || dir != self.dir_stamp || self.dir_stamp.is_none() {
            self.dir_stamp = dir;
            self.relist(now)?;
        }
        let mut out = Vec::new();
        let mut ended = Vec::new();
        for e in self.entries.values_mut() {
            if e.run.is_some() {
                update_running(e, now);
            }
            if e.run.is_some() {
                out.push(e.view.clone());
                continue;
            }
            // An ended view changes only in its age.
            let age = e
                .view
                .last_activity_age_ms
                .map(|_| now.saturating_sub(ended_ms(&e.view)));
            if needs_attention(e.view.status, age) {
                out.push(aged(&e.view, age));
            } else {
                ended.push((&e.view, age));
            }
        }
        let keep = RECENT_ENDED.min(ended.len());
        if keep < ended.len() {
            ended.select_nth_unstable_by(keep, |a, b| {
                (b.0.created_ms, &b.0.job_id).cmp(&(a.0.created_ms, &a.0.job_id))
            });
        }
        out.extend(ended[..keep].iter().map(|(v, age)| aged(v, *age)));
        let unlisted = ended.len() - keep;
        let tracked = self.entries.len();
        let untracked = self
            .bound
            .as_ref()
            .map_or(0, |b| b.total.saturating_sub(tracked));
        Ok((out, unlisted + untracked))
    }

    /// New job directories are read; vanished ones (pruned) dropped.
    fn relist(&mut self, now: u64) -> Result<()> {
        let mut ids = self.store.ids()?;
        if let Some(b) = &mut self.bound {
            b.total = ids.len();
            ids = bounded_ids(&self.store, b, ids, &self.entries);
        }
        let known: std::collections::HashSet<&String> = ids.iter().collect();
        self.entries.retain(|id, _| known.contains(id));
        let new: Vec<String> = ids
            .iter()
            .filter(|id| !self.entries.contains_key(*id))
            .cloned()
            .collect();
        if new.len() > 64 && self.bound.is_none() {
            // The first look at a large store: the listing's fast path.
            for (job, s) in self.store.states()? {
                if !self.entries.contains_key(&job.id) {
                    let e = entry(job, s, now, &self.wake);
                    self.entries.insert(e.job.id.clone(), e);
                }
            }
            return Ok(());
        }
        for id in new {
            let job = self.store.job(&id);
            let s = job.read_state().ok();
            let e = entry(job, s, now, &self.wake);
            self.entries.insert(id, e);
        }
        Ok(())
    }
}

/// The jobs a bounded tracker follows: the newest, the marked (and, while
/// the project's index is incomplete, every open one: `view::repos`), and
/// those it already follows running.
fn bounded_ids(
    store: &Store,
    b: &Bound,
    ids: Vec<String>,
    entries: &HashMap<String, Entry>,
) -> Vec<String> {
    use crate::store::{Kind, live};
    let (marks, complete) = live::read(&b.project);
    let mut want: std::collections::HashSet<String> = ids.iter().take(b.recent).cloned().collect();
    want.extend(
        marks
            .into_iter()
            .filter(|m| m.kind == Kind::Job)
            .map(|m| m.id),
    );
    want.extend(
        entries
            .iter()
            .filter(|(_, e)| e.run.is_some())
            .map(|(id, _)| id.clone()),
    );
    if !complete {
        let mut open = Vec::new();
        for (job, s) in store.states().unwrap_or_default() {
            if s.is_none_or(|s| !s.status.is_terminal()) {
                open.push(live::Mark {
                    kind: Kind::Job,
                    id: job.id.clone(),
                });
                want.insert(job.id);
            }
        }
        live::backfill(&b.project, &open);
    }
    ids.into_iter().filter(|id| want.contains(id)).collect()
}

fn aged(v: &JobView, age: Option<u64>) -> JobView {
    let mut v = v.clone();
    v.last_activity_age_ms = age;
    v
}

/// When an ended view's job ended, from its age at the time it was made.
fn ended_ms(v: &JobView) -> u64 {
    v.created_ms + v.elapsed_ms
}

fn entry(job: Job, recorded: Option<State>, now: u64, wake: &Sender<Wake>) -> Entry {
    let view = watch::view(&job, &recorded, now);
    let mut e = Entry {
        job,
        view,
        run: None,
    };
    if super::app::is_running(e.view.status) {
        start_running(&mut e, now, wake);
    }
    e
}

/// Begin following a running job: its tail, idle timeout, and a thread that
/// wakes the loop when the runner's lock is released (however it exits).
fn start_running(e: &mut Entry, now: u64, wake: &Sender<Wake>) {
    if let Ok(lock) = e.job.open_lock() {
        let tx = wake.clone();
        let id = e.job.id.clone();
        std::thread::spawn(move || {
            let _ = lock.lock_shared();
            drop(lock);
            let _ = tx.send(Wake::RunnerGone(id));
        });
    }
    e.run = Some(Running {
        tail: None,
        idle_ms: 0,
        stamp: None,
        gone: false,
        state: None,
        stderr: None,
    });
    update_running(e, now);
}

fn update_running(e: &mut Entry, now: u64) {
    let Some(r) = e.run.as_mut() else { return };
    let st = stamp(&e.job.state_path());
    if r.gone || st != r.stamp || r.state.is_none() {
        r.stamp = st;
        // `refresh` records a job whose runner is gone as lost.
        let s = if r.gone {
            e.job.refresh()
        } else {
            e.job.read_state()
        };
        match s {
            Ok(s) if s.status.is_terminal() => {
                e.view = watch::view(&e.job, &Some(s), now);
                e.run = None;
                return;
            }
            Ok(s) => r.state = Some(s),
            Err(_) => {}
        }
    }
    let Some(s) = &r.state else { return };
    if r.tail.is_none() {
        // Its spec says which agent's events to read; a job seen in the
        // middle of its launch gets its tail on a later look.
        let spec = e.job.read_spec().ok();
        let agent = spec
            .as_ref()
            .map(|sp| sp.plan.agent)
            .or_else(|| Agent::parse(&s.agent).ok());
        r.idle_ms = watch::idle_timeout_ms(spec.as_ref());
        r.tail = agent.and_then(|a| Tail::new(e.job.stdout_log(), a).from_last(FIRST_READ).ok());
        if let Some(t) = r.tail.as_mut() {
            // The first look reads what is there (at most FIRST_READ), so the
            // "now doing" line is current at once; later looks are bounded.
            let _ = t.catch_up();
        }
    }
    let mut v = watch::base(s, now);
    match r.tail.as_mut() {
        Some(t) => {
            // A read error leaves what was read; the next wake tries again.
            let _ = t.poll(READ_PER_WAKE);
            // stdout's time comes from the poll's own `fstat`; stderr's from
            // a descriptor kept open (no path walk per job per frame).
            if r.stderr.is_none() {
                r.stderr = std::fs::File::open(e.job.stderr_log()).ok();
            }
            let err = r
                .stderr
                .as_ref()
                .and_then(|f| f.metadata().ok()?.modified().ok());
            let last = watch::newest_ms([t.modified(), err], v.created_ms);
            watch::live_into(&mut v, &t.live, last, r.idle_ms, now);
        }
        None => {
            let last = watch::last_output_ms(&e.job, v.created_ms);
            watch::live_into(&mut v, &Default::default(), last, r.idle_ms, now)
        }
    }
    e.view = v;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn write_state(store: &Store, id: &str, status: &str, created: u64, ended: Option<u64>) {
        let job = store.job(id);
        std::fs::create_dir_all(&job.dir).unwrap();
        let s = serde_json::json!({
            "version": 1, "id": id, "status": status, "agent": "codex", "model": null,
            "effort": null, "access": "workspace", "cwd": "/x", "task": "t",
            "created_ms": created, "ended_ms": ended, "runner_pid": null, "peer_pgid": null,
            "session": null, "summary": "done", "resumed_from": null, "warnings": [],
            "totals": {"changed_files": ["a.rs"], "usage": {}}
        });
        std::fs::write(job.state_path(), s.to_string()).unwrap();
    }

    #[test]
    fn lists_attention_and_the_newest_ended_and_counts_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::in_dir(dir.path());
        let now = 10_000_000_000;
        let day = 24 * 3600 * 1000;
        for i in 0..60 {
            write_state(
                &store,
                &format!("1m8q4f{i:03}zzzz"),
                "success",
                now - day + i,
                Some(now - day + i + 5),
            );
        }
        write_state(
            &store,
            "1m8q4f100zzzz",
            "failed",
            now - 1000,
            Some(now - 500),
        );
        write_state(
            &store,
            "1m8q4f101zzzz",
            "failed",
            now - 3 * day,
            Some(now - 2 * day),
        );
        let (tx, _rx) = mpsc::channel();
        let mut t = Tracker::new(store, tx);
        let (views, unlisted) = t.refresh(now, true).unwrap();
        // The recent failure, then the 50 newest of the 61 others.
        assert_eq!(views.len(), 51);
        assert_eq!(unlisted, 11);
        assert!(views.iter().any(|v| v.job_id == "1m8q4f100zzzz"));
        assert!(
            !views.iter().any(|v| v.job_id == "1m8q4f101zzzz"),
            "an old failure is old"
        );
        assert!(views.iter().any(|v| v.job_id == "1m8q4f059zzzz"));
        assert!(!views.iter().any(|v| v.job_id == "1m8q4f009zzzz"));
        let f = views.iter().find(|v| v.job_id == "1m8q4f100zzzz").unwrap();
        assert_eq!(f.last_activity_age_ms, Some(500));
        assert_eq!(f.files_changed, ["a.rs"], "from the state's totals");
        // Later: only the ages move.
        let (views, _) = t.refresh(now + 1000, false).unwrap();
        let f = views.iter().find(|v| v.job_id == "1m8q4f100zzzz").unwrap();
        assert_eq!(f.last_activity_age_ms, Some(1500));
    }
}
