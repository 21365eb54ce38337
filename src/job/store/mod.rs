//! The on-disk job store and the job state machine.
//!
//! Layout: `jobs/<id>/` (0700) in the project's state folder (`state_dir`), holding
//! - `spec.json`: what to run (the `run::Plan` and the exact command it resolved to);
//! - `state.json`: the state machine and a small summary (all that `jobs` reads);
//! - `lock`: held exclusively by the job's runner for its whole life;
//! - `state.lock`: serialises read-modify-write of `state.json` (held for microseconds);
//! - `prompt.txt`, `stdout.log`, `stderr.log` (written by `run::execute`), `runner.log`;
//! - `result.json`: the final `RunResult`;
//! - `reserve`: 64 KiB the runner sets aside while it runs and frees to
//!   record the end, so a disk the peer filled cannot leave the job `running`.
//!
//! Rules that make it safe for many processes at once:
//! - every file is replaced atomically (`fsutil::write_atomic`), so no reader
//!   ever sees a torn file;
//! - `result.json` is written *before* `state.json` turns terminal, and a
//!   terminal state never changes, so a reader that sees a terminal state can
//!   read a final result;
//! - liveness is the runner's lock, which the kernel drops when the runner
//!   dies however it dies: a `running` state whose lock can be taken belongs
//!   to a dead runner and becomes `lost` (no pid that could be reused);
//! - a directory whose launch was cut short (no `state.json`, lock free) is
//!   `lost` too, and a `state.json` that does not parse is reported as
//!   `corrupt_job`; `prune` removes both (`damage`).

use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, IdOf, Result};
use crate::result::{RunResult, Status};
use crate::{fsutil, ids, process};

mod damage;
mod salvage;
mod spec;
mod state;

pub use damage::id_time_ms;
pub use spec::{Spec, StoredCommand};
pub use state::{Ending, JobState, State, Totals};

/// The runner's lock in a job's directory.
pub const LOCK_FILE: &str = "lock";

/// Version of `spec.json` and `state.json` (baton's own files, not the public result).
pub const STORE_VERSION: u32 = 1;

pub use crate::ids::now_ms;

pub fn first_line(s: &str, max: usize) -> String {
    crate::agent::clip(s.lines().find(|l| !l.trim().is_empty()).unwrap_or(""), max)
}

/// Validate an id from outside (command line). Anything but baton's own id
/// form is refused before it gets near the file system.
pub fn check_id(raw: &OsStr) -> Result<String> {
    match raw.to_str() {
        Some(s) if ids::is_valid(s) => Ok(s.to_string()),
        _ => Err(Error::InvalidId {
            what: IdOf::Job,
            id: raw.to_string_lossy().escape_debug().to_string(),
        }),
    }
}

/// The jobs of one repository.
#[derive(Debug, Clone)]
pub struct Store {
    pub dir: PathBuf,
    /// The project whose state folder holds `dir` (`None`: a bare directory, in tests).
    root: Option<PathBuf>,
}

impl Store {
    /// The store of the repository (or directory) the caller is in. Jobs live
    /// with the caller, not with the peer's `--cwd`, so `wait <id>` run from
    /// the same place always finds the job it started.
    pub fn here() -> Result<Store> {
        let cwd =
            std::env::current_dir().map_err(|e| Error::io("reading the current directory", e))?;
        Store::at_root(&fsutil::project_root(&cwd))
    }

    pub fn at_root(root: &Path) -> Result<Store> {
        Ok(Store {
            dir: crate::state_dir::project(root)?.join("jobs"),
            root: Some(root.to_path_buf()),
        })
    }

    /// The store of the project whose record folder is `project` (found by
    /// `state_dir::repos`, for a view across repositories: its root may be
    /// gone, the records are still there).
    pub fn of_project(project: &Path, root: Option<&Path>) -> Store {
        Store {
            dir: project.join("jobs"),
            root: root.map(Path::to_path_buf),
        }
    }

    /// A store in `dir` itself.
    pub fn in_dir(dir: &Path) -> Store {
        Store {
            dir: dir.to_path_buf(),
            root: None,
        }
    }

    /// The project this store belongs to (`None`: a bare directory).
    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// Create the store (private) for a new job.
    pub fn create(&self) -> Result<()> {
        if let Some(root) = &self.root {
            crate::state_dir::ensure_project(root)?;
        }
        fsutil::ensure_private_dir(&self.dir)
    }

    pub fn job(&self, id: &str) -> Job {
        debug_assert!(ids::is_valid(id));
        Job {
            id: id.to_string(),
            dir: self.dir.join(id),
        }
    }

    /// The job `raw` names: `InvalidId` (exit 2) if malformed,
    /// `NotFound` (exit 4) if not in this store.
    pub fn open(&self, raw: &OsStr) -> Result<Job> {
        let id = check_id(raw)?;
        let job = self.job(&id);
        // A directory without `state.json` is still a job: a launch cut
        // short, which `refresh` records as lost. A symlink is not one baton
        // made: never followed (its target could be anywhere).
        let meta = fs::symlink_metadata(&job.dir);
        if meta.as_ref().is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(Error::Refused {
                kind: "unsafe_state_dir",
                message: format!(
                    "{} is a symlink inside baton's state directory; baton never makes one \
                     there, so it does not follow it",
                    job.dir.display()
                ),
                hint: format!("remove the link: rm {}", job.dir.display()),
            });
        }
        if !meta.is_ok_and(|m| m.is_dir()) {
            return Err(Error::NotFound {
                what: IdOf::Job,
                id,
                store: self.dir.clone(),
            });
        }
        Ok(job)
    }

    /// Every job with its state as recorded (not refreshed), newest first;
    /// `None` where `state.json` is missing or does not parse.
    ///
    /// This is what `jobs` pays for with thousands of ended jobs, so the
    /// files are opened relative to the store directory (short path walks),
    /// read into one reused buffer, on a few threads.
    pub fn states(&self) -> Result<Vec<(Job, Option<State>)>> {
        let ids = self.ids()?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let dir = File::open(&self.dir)
            .map_err(|e| Error::io(format!("opening {}", self.dir.display()), e))?;
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 4)
            .min(ids.len().div_ceil(256));
        let chunk = ids.len().div_ceil(threads.max(1));
        let read = |ids: &[String]| -> Vec<(Job, Option<State>)> {
            let mut buf = Vec::with_capacity(4096);
            ids.iter()
                .map(|id| (self.job(id), read_state_at(&dir, id, &mut buf)))
                .collect()
        };
        if threads <= 1 {
            return Ok(read(&ids));
        }
        Ok(std::thread::scope(|sc| {
            let parts: Vec<_> = ids
                .chunks(chunk)
                .map(|c| sc.spawn(move || read(c)))
                .collect();
            parts
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        }))
    }

    /// Ids of the job directories, newest first. Entries that are not ids
    /// (temp files, trash being removed) or not directories (a planted
    /// symlink: baton makes none) are skipped.
    pub fn ids(&self) -> Result<Vec<String>> {
        let rd = match fs::read_dir(&self.dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(format!("listing {}", self.dir.display()), e)),
        };
        let mut ids: Vec<String> = rd
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| ids::is_valid(n))
            .collect();
        ids.sort_unstable_by(|a, b| b.cmp(a));
        Ok(ids)
    }
}

/// One job directory.
#[derive(Debug, Clone)]
pub struct Job {
    pub id: String,
    pub dir: PathBuf,
}

impl Job {
    pub fn state_path(&self) -> PathBuf {
        self.dir.join("state.json")
    }
    pub fn spec_path(&self) -> PathBuf {
        self.dir.join("spec.json")
    }
    pub fn result_path(&self) -> PathBuf {
        self.dir.join("result.json")
    }
    pub fn lock_path(&self) -> PathBuf {
        self.dir.join(LOCK_FILE)
    }
    pub fn stdout_log(&self) -> PathBuf {
        self.dir.join("stdout.log")
    }
    pub fn stderr_log(&self) -> PathBuf {
        self.dir.join("stderr.log")
    }
    pub fn runner_log(&self) -> PathBuf {
        self.dir.join("runner.log")
    }

    /// The job's state; `corrupt_job` when it does not parse or names
    /// another job (a folder copied or renamed by hand would otherwise be
    /// listed under the other job's id, twice).
    pub fn read_state(&self) -> Result<State> {
        let s: State = self.read_json(&self.state_path())?;
        self.check_names_me(&self.state_path(), &s.id)?;
        Ok(s)
    }

    pub fn read_spec(&self) -> Result<Spec> {
        let s: Spec = self.read_json(&self.spec_path())?;
        self.check_names_me(&self.spec_path(), &s.id)?;
        Ok(s)
    }

    fn read_json<T: serde::de::DeserializeOwned>(&self, p: &Path) -> Result<T> {
        let b = fs::read(p).map_err(|e| Error::io(format!("reading {}", p.display()), e))?;
        serde_json::from_slice(&b).map_err(|e| self.corrupt(p, e))
    }

    pub fn read_result(&self) -> Result<Option<RunResult>> {
        match fs::read(self.result_path()) {
            Ok(b) => serde_json::from_slice(&b)
                .map(Some)
                .map_err(|e| self.corrupt(&self.result_path(), e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(
                format!("reading {}", self.result_path().display()),
                e,
            )),
        }
    }

    /// Open the runner's lock file (for probing or waiting on it).
    pub fn open_lock(&self) -> Result<File> {
        File::open(self.lock_path())
            .map_err(|e| Error::io(format!("opening {}", self.lock_path().display()), e))
    }

    /// Whether the runner is alive: it holds `lock` exclusively for its whole
    /// life, so a shared lock can be taken only once it is gone. Shared, so
    /// probes and waiters never get in each other's way.
    pub fn runner_alive(&self) -> bool {
        crate::store::runner_alive(&self.dir)
    }

    /// The job as every record of background work reads (`store::Header`:
    /// id, kind, where it stands, created and ended), from its state as
    /// recorded, 0.3.2's included: stopped once terminal, else running while
    /// its runner holds the lock, else lost (`refresh` records that).
    pub fn header(&self, s: &State) -> crate::store::Header {
        crate::store::Header::read(
            crate::store::Kind::Job,
            &self.id,
            self.dir.clone(),
            s.created_ms,
            s.status.is_terminal(),
            s.ended_ms.unwrap_or(s.created_ms),
        )
    }

    /// Exclusive guard for a read-modify-write of `state.json`.
    fn guard(&self) -> Result<File> {
        let p = self.dir.join("state.lock");
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&p)
            .map_err(|e| Error::io(format!("opening {}", p.display()), e))?;
        f.lock()
            .map_err(|e| Error::io(format!("locking {}", p.display()), e))?;
        Ok(f)
    }

    /// Hold the state guard while `f` runs (the launcher holds it across the
    /// runner's spawn so the runner's first update cannot overtake it).
    pub fn with_guard<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let _g = self.guard()?;
        f()
    }

    fn write_state(&self, s: &State) -> Result<()> {
        let b = serde_json::to_vec(s).map_err(|e| Error::Internal(e.to_string()))?;
        // Marked before the record exists, cleared once it is terminal: the
        // index never misses open work (`store::live`).
        let open = !s.status.is_terminal();
        if open {
            crate::store::live::set(&self.dir, crate::store::Kind::Job, &self.id, true);
        }
        fsutil::write_atomic(&self.state_path(), &b)?;
        if !open {
            crate::store::live::set(&self.dir, crate::store::Kind::Job, &self.id, false);
        }
        Ok(())
    }

    /// Write the first state (caller holds the guard via `with_guard`).
    pub fn write_initial(&self, s: &State) -> Result<()> {
        self.write_state(s)
    }

    /// Change a running job's record. A terminal state is returned unchanged.
    /// If `state.json` does not exist yet (the launcher died before writing
    /// it), it is created from the spec.
    pub fn update(&self, spec: &Spec, f: impl FnOnce(&mut State)) -> Result<State> {
        let _g = self.guard()?;
        let mut s = match self.read_state() {
            Ok(s) => s,
            Err(_) if !self.state_path().exists() => State::initial(spec),
            Err(e) => return Err(e),
        };
        if s.status.is_terminal() {
            return Ok(s);
        }
        f(&mut s);
        self.write_state(&s)?;
        Ok(s)
    }

    /// End the job with `result` (running → terminal). If the job already
    /// ended, nothing changes and the existing state is returned.
    pub fn finish(&self, result: RunResult) -> Result<State> {
        let _g = self.guard()?;
        let s = self.read_state()?;
        self.finish_locked(s, result)
    }

    fn finish_locked(&self, mut s: State, mut result: RunResult) -> Result<State> {
        if s.status.is_terminal() {
            return Ok(s);
        }
        if matches!(result.status, Status::Error | Status::Running) {
            result.status = Status::Failed;
        }
        result.job_id = Some(self.id.clone());
        // Result first: a terminal state always has its final result beside
        // it. Durable, unlike the run's own copy: for a job this file is the
        // only place the result is ever given. On a full disk, what can be
        // stored (`damage`): the job ends either way.
        let result = self.store_result_or_less(result);
        s.status = JobState::from_status(result.status);
        s.ended_ms = Some(now_ms());
        s.session = result.session.clone();
        s.summary = Some(result.summary.clone());
        s.totals = Some(Totals {
            changed_files: result.changed_files.clone(),
            usage: result.usage.clone(),
        });
        self.write_state(&s)?;
        Ok(s)
    }

    /// The job's state, with a dead runner's job turned into `lost` (also
    /// one whose launch was cut short before its first state).
    pub fn refresh(&self) -> Result<State> {
        let s = match self.read_state() {
            Ok(s) => s,
            Err(e) if damage::state_missing(&e) => return self.settle_unstarted(),
            Err(e) => return Err(e),
        };
        if s.status.is_terminal() || self.runner_alive() {
            return Ok(s);
        }
        self.settle(Ending::Lost)
    }

    /// The runner is gone (its lock is free): record how the job ended, if
    /// the runner did not. A complete result it wrote just before dying is
    /// kept; otherwise the job is `lost` (or `cancelled`, when `cancel`
    /// killed it). Leftovers of the peer's process group are stopped.
    pub fn settle(&self, how: Ending) -> Result<State> {
        let _g = self.guard()?;
        let s = self.read_state()?;
        if s.status.is_terminal() {
            return Ok(s);
        }
        if let Some(pg) = s.peer_pgid {
            // Nothing supervises them any more.
            let pg = pg as libc::pid_t;
            if process::group_alive(pg) {
                process::killpg(pg, libc::SIGKILL);
            }
        }
        let spec = self.read_spec().ok();
        let result = match self.read_result() {
            Ok(Some(r)) if is_final(spec.as_ref(), &r) => r,
            _ => self.salvage(&s, how),
        };
        self.finish_locked(s, result)
    }
}

/// Whether a result found beside a job whose runner is gone is its final
/// one. A worktree job's is final only once baton committed what the peer
/// left (or failed to): `worktree::finish` adds the `worktree` object; the
/// one `run::execute` writes before that is provisional (issue 10).
fn is_final(spec: Option<&Spec>, r: &RunResult) -> bool {
    r.status.is_terminal()
        && (spec.is_none_or(|sp| sp.worktree.is_none()) || r.extra.contains_key("worktree"))
}

/// `<id>/state.json` opened relative to the store directory.
fn read_state_at(dir: &File, id: &str, buf: &mut Vec<u8>) -> Option<State> {
    use std::os::fd::AsFd;
    let rel = std::ffi::CString::new(format!("{id}/state.json")).ok()?;
    let mut f = File::from(crate::sys::fd::open_at(Some(dir.as_fd()), &rel, libc::O_RDONLY).ok()?);
    buf.clear();
    // `read_to_end` on a File asks for its size and position first (statx,
    // lseek) and reads once more to see the end: with 10,000 jobs that is
    // half the system calls of a listing. State files are a few hundred
    // bytes and replaced atomically, so one read into a buffer with room to
    // spare gets them whole; what does not parse after it (a bigger file, a
    // short read on a network file system) is read on to the end and tried again.
    buf.resize(STATE_READ, 0);
    let n = f.read(buf).ok()?;
    buf.truncate(n);
    // A state that names another job is corrupt (`Job::read_state`).
    if let Ok(s) = serde_json::from_slice::<State>(buf) {
        return (s.id == id).then_some(s);
    }
    f.read_to_end(buf).ok()?;
    serde_json::from_slice(buf)
        .ok()
        .filter(|s: &State| s.id == id)
}

/// One read's worth for a `state.json` (they are well under 1 KiB).
const STATE_READ: usize = 16 << 10;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{Agent, CommandSpec};
    use crate::run::Plan;

    #[test]
    fn ids_are_checked_before_any_path_is_built() {
        for bad in [
            "../etc",
            "",
            "a/b",
            "0123456789abc/..",
            "0123456789ab\u{e9}",
        ] {
            let e = check_id(OsStr::new(bad)).unwrap_err();
            assert_eq!(e.kind(), "invalid_job_id", "{bad:?}");
            assert_eq!(e.exit_code(), 2);
        }
        let e = check_id(OsStr::new("0123456789a\0c")).unwrap_err();
        assert!(e.to_string().contains("\\0"), "{e}");
        use std::os::unix::ffi::OsStrExt;
        assert!(check_id(OsStr::from_bytes(b"0123456789ab\xff")).is_err());
        assert_eq!(
            check_id(OsStr::new("0123456789abc")).unwrap(),
            "0123456789abc"
        );
    }

    #[test]
    fn unknown_id_is_not_found() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::in_dir(d.path());
        let e = store.open(OsStr::new("0123456789abc")).unwrap_err();
        assert_eq!(e.kind(), "job_not_found");
        assert_eq!(e.exit_code(), 4);
    }

    fn spec(id: &str, cwd: &Path) -> Spec {
        Spec {
            version: STORE_VERSION,
            id: id.into(),
            created_ms: now_ms(),
            plan: Plan {
                effort: Some("high".into()),
                task: "the task\nmore".into(),
                prompt: "the task".into(),
                raw: true,
                timeout_ms: 1000,
                idle_timeout_ms: 1000,
                ..Plan::test(Agent::Codex, crate::agent::Access::Workspace, cwd)
            },
            command: StoredCommand::from_spec(&CommandSpec::new("codex")).unwrap(),
            program: PathBuf::from("/bin/true"),
            resumed_from: None,
            worktree: None,
            checked: None,
            notify: Default::default(),
            origin: Default::default(),
        }
    }

    fn new_job(d: &Path) -> (Job, Spec) {
        let store = Store::in_dir(&d.join("jobs"));
        store.create().unwrap();
        let id = ids::new_id();
        let job = store.job(&id);
        fsutil::ensure_private_dir(&job.dir).unwrap();
        let sp = spec(&id, d);
        job.with_guard(|| job.write_initial(&State::initial(&sp)))
            .unwrap();
        (job, sp)
    }

    #[test]
    fn a_job_ends_once() {
        let d = tempfile::tempdir().unwrap();
        let (job, sp) = new_job(d.path());
        let s = job
            .update(&sp, |s| s.peer_pgid = Some(1_073_741_823))
            .unwrap();
        assert_eq!(s.status, JobState::Running);
        assert_eq!(s.task, "the task");
        let mut r = job.running_result(&s);
        r.status = Status::Success;
        r.summary = "done".into();
        let s = job.finish(r.clone()).unwrap();
        assert_eq!(s.status, JobState::Success);
        assert!(s.ended_ms.is_some());
        let first = fs::read(job.result_path()).unwrap();
        // Every later attempt leaves the ended job as it is.
        r.status = Status::Failed;
        assert_eq!(job.finish(r).unwrap(), s);
        assert_eq!(job.update(&sp, |s| s.peer_pgid = None).unwrap(), s);
        assert_eq!(job.settle(Ending::Lost).unwrap(), s);
        assert_eq!(fs::read(job.result_path()).unwrap(), first);
        assert_eq!(
            job.result(&s).unwrap().job_id.as_deref(),
            Some(job.id.as_str())
        );
    }

    #[test]
    fn a_running_job_without_its_runner_is_lost_with_what_it_said() {
        let d = tempfile::tempdir().unwrap();
        let (job, _) = new_job(d.path());
        fs::write(
            job.stdout_log(),
            "{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}\n",
        )
        .unwrap();
        // No lock held (no runner): refresh records the end.
        assert!(!job.runner_alive());
        let s = job.refresh().unwrap();
        assert_eq!(s.status, JobState::Lost);
        assert_eq!(s.session.as_deref(), Some("t-1"));
        let r = job.result(&s).unwrap();
        assert_eq!(r.status, Status::Lost);
        assert_eq!(r.error.unwrap().kind, "lost");
    }

    #[test]
    fn a_complete_result_left_by_a_dying_runner_is_kept() {
        let d = tempfile::tempdir().unwrap();
        let (job, _) = new_job(d.path());
        let mut r = job.running_result(&job.read_state().unwrap());
        r.status = Status::Timeout;
        fs::write(job.result_path(), serde_json::to_vec(&r).unwrap()).unwrap();
        assert_eq!(
            job.settle(Ending::Cancelled).unwrap().status,
            JobState::Timeout
        );
    }

    #[test]
    fn a_launch_cut_short_is_lost_and_a_damaged_state_is_corrupt() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::in_dir(d.path());
        store.create().unwrap();
        let job = store.job("0123456789abc");
        fs::create_dir(&job.dir).unwrap();
        fs::write(job.lock_path(), "").unwrap();
        // Found (it is a job), and lost: nothing holds its lock.
        let job = store.open(OsStr::new("0123456789abc")).unwrap();
        let s = job.refresh().unwrap();
        assert_eq!(s.status, JobState::Lost);
        assert_eq!(job.result(&s).unwrap().status, Status::Lost);
        assert_eq!(job.read_state().unwrap(), s);

        fs::write(job.state_path(), b"{\"version\":1,").unwrap();
        let e = job.refresh().unwrap_err();
        assert_eq!(e.kind(), "corrupt_job");
        assert_eq!(e.exit_code(), 1);
        assert!(!e.hint().unwrap().contains("bug"), "{:?}", e.hint());
        let listed = store.states().unwrap();
        assert!(listed.iter().any(|(j, s)| j.id == job.id && s.is_none()));
    }

    #[test]
    fn a_missing_result_of_an_ended_job_is_reported_from_its_state() {
        let d = tempfile::tempdir().unwrap();
        let (job, _) = new_job(d.path());
        let mut r = job.running_result(&job.read_state().unwrap());
        r.status = Status::Success;
        r.summary = "done".into();
        let s = job.finish(r).unwrap();
        fs::remove_file(job.result_path()).unwrap();
        let r = job.result(&s).unwrap();
        assert_eq!(r.status, Status::Success);
        assert_eq!(r.error.unwrap().kind, "result_not_stored");
    }

    #[test]
    fn a_held_lock_means_running() {
        let d = tempfile::tempdir().unwrap();
        let (job, _) = new_job(d.path());
        let lock = File::create(job.lock_path()).unwrap();
        lock.lock().unwrap();
        assert!(job.runner_alive());
        assert_eq!(job.refresh().unwrap().status, JobState::Running);
        // Unlocked, not only closed: a child another test thread forks now
        // keeps a copy of the descriptor (and so the lock) until it execs.
        lock.unlock().unwrap();
        drop(lock);
        assert!(!job.runner_alive());
    }

    #[test]
    fn a_job_of_0_3_2_reads_as_the_one_header() {
        use crate::store::{Kind, Standing};
        let jobs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/store-0.3.2/jobs");
        let job = Store::in_dir(&jobs)
            .open(OsStr::new("1m97bjbnnttax"))
            .unwrap();
        let h = job.header(&job.read_state().unwrap());
        assert_eq!((h.kind, h.standing), (Kind::Job, Standing::Stopped));
        assert_eq!(h.id, "1m97bjbnnttax");
        assert_eq!(
            (h.created_ms, h.ended_ms),
            (1796617088693, Some(1796617088828))
        );
        assert_eq!(h.duration_ms(u64::MAX), 135);
        // Not ended, its runner gone: lost, as councils and fan-outs read.
        let d = tempfile::tempdir().unwrap();
        let (job, _) = new_job(d.path());
        let h = job.header(&job.read_state().unwrap());
        assert_eq!((h.standing, h.dir), (Standing::Lost, job.dir.clone()));
        let lock = crate::store::lock::hold(&job.dir).unwrap().unwrap();
        assert_eq!(
            job.header(&job.read_state().unwrap()).standing,
            Standing::Running
        );
        drop(lock);
    }

    #[test]
    fn terminal_states_never_change() {
        for s in [
            JobState::Success,
            JobState::Failed,
            JobState::Timeout,
            JobState::Cancelled,
            JobState::Lost,
        ] {
            assert!(s.is_terminal());
            assert_eq!(JobState::from_status(s.status()), s);
        }
        assert!(!JobState::Running.is_terminal());
        assert_eq!(JobState::from_status(Status::Error), JobState::Failed);
    }
}
