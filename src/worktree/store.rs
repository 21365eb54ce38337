//! baton's record of each worktree, `worktrees/<id>.json` in the project's
//! state folder (`state_dir`), for the worktree directory
//! `<repo>/.baton/worktrees/<id>/`; and listing and removing them (`list`,
//! `remove`; `manage` prints them for `baton worktree list|remove`). Whether
//! a baton is working in a worktree is a lock the working process holds (the
//! job's lock for a background job), never a pid.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::manage::refuse_uncommitted;
use super::repo::{self, DiffStat};
use crate::error::{Error, IdOf, Result};
use crate::git::pin::Pin;
use crate::{fsutil, ids};

/// What baton knows about a worktree it made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    pub agent: String,
    pub branch: String,
    /// The commit the branch started from.
    pub base: String,
    pub path: PathBuf,
    pub created_ms: u64,
    /// The baton process that runs the peer in it (running records only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The lock that process holds while it works in the worktree (`busy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<PathBuf>,
    /// The task's first line, for people scanning the list.
    pub task: String,
    #[serde(default)]
    pub include_dirty: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_cmd: Option<String>,
    /// Set when the run ended (and baton committed what the peer left).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_ms: Option<u64>,
    /// The run's status (`success`, `failed`, …) once finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Where its git metadata is, as baton made it (`None`: an older
    /// record; derived when needed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<Pin>,
    /// What the peer changed of the worktree's git metadata, when its run
    /// failed for that (`worktree_tampered`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tampered: Option<String>,
}

pub use crate::ids::now_ms;

/// `<root>/.baton/worktrees`, where the worktrees are, without creating anything.
pub fn dir(root: &Path) -> PathBuf {
    root.join(".baton").join("worktrees")
}

/// The same, created private (and `.baton` ignored by git).
pub fn ensure_dir(root: &Path) -> Result<PathBuf> {
    let d = fsutil::baton_dir(root)?.join("worktrees");
    fsutil::ensure_private_dir(&d)?;
    Ok(d)
}

/// Where the records are: out of the work tree, beyond a peer's reach.
fn records_dir(root: &Path) -> Option<PathBuf> {
    crate::state_dir::project(root)
        .ok()
        .map(|d| d.join("worktrees"))
}

pub fn record_path(root: &Path, id: &str) -> Option<PathBuf> {
    records_dir(root).map(|d| d.join(format!("{id}.json")))
}

pub fn save(root: &Path, r: &Record) -> Result<()> {
    let json = serde_json::to_vec_pretty(r).map_err(|e| Error::Internal(e.to_string()))?;
    let d = crate::state_dir::ensure_sub(root, "worktrees")?;
    fsutil::write_atomic(&d.join(format!("{}.json", r.id)), &json)
}

pub fn load(root: &Path, id: &str) -> Option<Record> {
    let bytes = std::fs::read(record_path(root, id)?).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Forget worktree `id` (its record, its lock, and any index a baton that
/// died while committing left: `staging`).
pub fn forget(root: &Path, id: &str) {
    if let Some(p) = record_path(root, id) {
        for f in [
            p.clone(),
            p.with_extension("lock"),
            p.with_extension("index"),
        ] {
            let _ = std::fs::remove_file(f);
        }
    }
}

/// A worktree id: a run's or job's id, `council-<id>` for a council's
/// writer (its branch is `baton/council-<id>`) and `council-<id>-a<k>` for
/// its fallback agent's, `<id>-<n>` for a fan-out's candidate n (its
/// branch is `baton/<id>-<n>`), `<id>-<n>-a<k>` for its fallback agent's.
pub fn is_id(id: &str) -> bool {
    ids::is_valid(id)
        || id
            .strip_prefix("council-")
            .is_some_and(|c| ids::is_valid(c) || ids::attempt_of(c).is_some_and(ids::is_valid))
        || ids::is_made(id)
}

/// Mark worktree `id` as being worked in by this process, for as long as
/// it lives: an exclusive lock the kernel drops however the process ends
/// (a zombie holds none). Returns the lock's path for the record.
/// Holding it again from the same process (a council's repair round) is a
/// no-op: a second flock on a new descriptor would wait for ourselves.
pub fn hold(root: &Path, id: &str) -> Result<PathBuf> {
    use std::os::unix::fs::OpenOptionsExt;
    static HELD: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let p = crate::state_dir::ensure_sub(root, "worktrees")?.join(format!("{id}.lock"));
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    if held.contains(&p) {
        return Ok(p);
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&p)
        .map_err(|e| Error::io(format!("opening {}", p.display()), e))?;
    f.lock()
        .map_err(|e| Error::io(format!("locking {}", p.display()), e))?;
    // Held until the process exits: the descriptor is close-on-exec, so no
    // peer inherits it.
    std::mem::forget(f);
    held.push(p.clone());
    Ok(p)
}

/// Where `.baton/` is for worktree commands run from `cwd`: the project root,
/// or, from inside one of baton's worktrees, the checkout that owns it.
pub fn store_root(cwd: &Path) -> PathBuf {
    let root = fsutil::project_root(cwd);
    let owner = root
        .parent()
        .filter(|p| p.ends_with(".baton/worktrees"))
        .and_then(|p| p.parent())
        .and_then(|p| p.parent());
    match (owner, root.file_name().and_then(|n| n.to_str())) {
        (Some(o), Some(name)) if is_id(name) => o.to_path_buf(),
        _ => root,
    }
}

/// Whether a baton process is working in the worktree of `r`: it holds
/// the lock the record names. Records without one (written by baton 0.1)
/// fall back to the pid, a zombie not counting.
pub fn busy(r: &Record) -> bool {
    if r.finished_ms.is_some() || r.pid == Some(std::process::id()) {
        return false;
    }
    match &r.lock {
        Some(lock) => lock_held(lock),
        None => r.pid.is_some_and(pid_alive),
    }
}

/// Whether another process holds `path` exclusively (a shared lock cannot
/// be taken). Ours is never "another": a process may remove its own worktree.
fn lock_held(path: &Path) -> bool {
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    matches!(f.try_lock_shared(), Err(std::fs::TryLockError::WouldBlock))
}

/// Is a process with this pid alive? (A reused pid can fool it; the record
/// is cleared when the run ends, so only a crashed run can be misread.) A
/// zombie is not: a killed job runner stays one until something reaps it,
/// which in a container without an init may be never.
pub fn pid_alive(pid: u32) -> bool {
    if pid == 0 || !crate::sys::proc::kill(pid as libc::pid_t, 0) {
        return false;
    }
    // Linux: `pid (comm) S …`, the state after the last `)`.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !matches!(
            stat.rsplit(')')
                .next()
                .map(str::trim_start)
                .and_then(|r| r.chars().next()),
            Some('Z' | 'X')
        ),
        Err(_) => true,
    }
}

/// One line of `baton worktree list`.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    pub id: String,
    /// The background job that ran in it; null for a foreground run.
    pub job_id: Option<String>,
    pub agent: Option<String>,
    pub branch: String,
    pub path: PathBuf,
    pub base: Option<String>,
    /// The branch's tip, null when the branch is gone.
    pub head: Option<String>,
    pub created_ms: Option<u64>,
    pub age_secs: Option<u64>,
    /// `running` (a baton process is working in it), `finished`,
    /// `interrupted` (its baton died before finishing) or `unknown` (a git
    /// worktree under `.baton/worktrees` without baton's record).
    pub state: &'static str,
    /// The run's status once finished.
    pub status: Option<String>,
    /// Whether the directory is still there.
    pub present: bool,
    /// `base..branch`, as `git diff --stat` counts it.
    pub diffstat: Option<DiffStat>,
    pub task: Option<String>,
}

/// Every worktree baton made under `root`, oldest first.
pub fn list(root: &Path) -> Result<Vec<Entry>> {
    let store = dir(root);
    let mut ids: Vec<String> = [Some(store.clone()), records_dir(root)]
        .into_iter()
        .flatten()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flat_map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .map(|n| n.strip_suffix(".json").map(str::to_string).unwrap_or(n))
                .filter(|n| is_id(n))
                .collect::<Vec<_>>()
        })
        .collect();
    ids.sort();
    ids.dedup();
    let now = now_ms();
    let git_wts = repo::worktrees(root).unwrap_or_default();
    let mut out = Vec::new();
    for id in ids {
        let rec = load(root, &id);
        let path = store.join(&id);
        let branch = rec
            .as_ref()
            .map(|r| r.branch.clone())
            .unwrap_or_else(|| format!("baton/{id}"));
        let registered = git_wts.contains_key(&path)
            || path.canonicalize().is_ok_and(|p| git_wts.contains_key(&p));
        if rec.is_none() && !registered && !own_repo(&path) {
            continue;
        }
        let head = repo::probe({
            let mut c = repo::git(root);
            c.args([
                "rev-parse",
                "--verify",
                "-q",
                &format!("refs/heads/{branch}"),
            ]);
            c
        })
        .filter(|(ok, _)| *ok)
        .map(|(_, sha)| sha);
        let base = rec.as_ref().map(|r| r.base.clone());
        let diffstat = match (&base, &head) {
            (Some(b), Some(h)) => repo::diffstat(root, b, h).ok(),
            _ => None,
        };
        let state = match &rec {
            None => "unknown",
            Some(r) if r.finished_ms.is_some() => "finished",
            Some(r) if busy(r) => "running",
            Some(_) => "interrupted",
        };
        out.push(Entry {
            id: id.clone(),
            job_id: rec.as_ref().and_then(|r| r.job_id.clone()),
            agent: rec.as_ref().map(|r| r.agent.clone()),
            branch,
            present: path.is_dir(),
            path,
            base,
            head,
            created_ms: rec.as_ref().map(|r| r.created_ms),
            age_secs: rec
                .as_ref()
                .map(|r| now.saturating_sub(r.created_ms) / 1000),
            state,
            status: rec.as_ref().and_then(|r| r.status.clone()),
            diffstat,
            task: rec.as_ref().map(|r| r.task.clone()),
        });
    }
    Ok(out)
}

/// Whether `path` is a writer's repository of its own (its `.git` a
/// directory, not a linked worktree's `.git` file).
fn own_repo(path: &Path) -> bool {
    std::fs::symlink_metadata(path.join(".git")).is_ok_and(|m| m.is_dir())
}

/// What `worktree remove` did.
#[derive(Debug, Clone, Serialize)]
pub struct Removed {
    pub id: String,
    pub path: PathBuf,
    pub branch: String,
    /// The branch tip when it was removed (to recover a deleted branch:
    /// `git branch <branch> <head>`).
    pub head: Option<String>,
    pub worktree_removed: bool,
    pub branch_deleted: bool,
}

/// Remove worktree `id` (and with `delete_branch` its branch). Refuses a
/// worktree a live baton is working in, and one with uncommitted changes
/// unless `force`.
pub fn remove(root: &Path, id: &str, delete_branch: bool, force: bool) -> Result<Removed> {
    if !is_id(id) {
        return Err(Error::InvalidId {
            what: IdOf::Job,
            id: id.to_string(),
        });
    }
    let rec = load(root, id);
    let path = dir(root).join(id);
    let branch = rec
        .as_ref()
        .map(|r| r.branch.clone())
        .unwrap_or_else(|| format!("baton/{id}"));
    // Two questions that only read: asked at once (a fan-out removes its
    // losing candidates' worktrees after the judges, on its way to the end).
    let (registered, head) = std::thread::scope(|s| {
        let head = s.spawn(|| super::create::rev_of(root, &format!("refs/heads/{branch}")));
        let registered = repo::worktrees(root)
            .unwrap_or_default()
            .keys()
            .any(|p| *p == path || path.canonicalize().is_ok_and(|c| *p == c));
        (registered, head.join().ok().flatten())
    });
    let known = rec.is_some() || registered || path.exists() || (delete_branch && head.is_some());
    if !known {
        return Err(Error::WorktreeNotFound {
            id: id.to_string(),
            store: dir(root),
        });
    }
    if let Some(r) = rec.as_ref().filter(|r| busy(r)) {
        let pid = r.pid.map_or("?".to_string(), |p| p.to_string());
        return Err(Error::usage_hint(
            format!("worktree `{id}` is in use: a baton run (pid {pid}) is working in it"),
            "wait for the run to end (or stop it), then remove the worktree",
        ));
    }
    let mut worktree_removed = false;
    if registered || path.exists() {
        // Never `git -C <worktree>`: the peer may have rewired it (see
        // `pin`). Pinned, git looks only at the repository baton made it in.
        let pin = match rec.as_ref().and_then(|r| r.pin.clone()) {
            Some(p) => p,
            None if !registered && own_repo(&path) => Pin::record_own(&path, "")?,
            None => Pin::derive(&path, root, "")?,
        };
        let tampered = pin.verify().err();
        if pin.own && tampered.is_some() && path.is_dir() && !force {
            // Its `.git` may now be anything (a link to the user's, say): no
            // git call of baton's goes there.
            return Err(Error::usage_hint(
                format!(
                    "worktree `{id}`: the peer tampered with its repository ({}), so baton \
                     committed nothing and does not look inside it",
                    tampered.as_deref().unwrap_or_default()
                ),
                "look at the files if you like (do not run git inside it: its git metadata is \
                 the peer's), then pass --force to remove it",
            ));
        }
        if path.is_dir() && !force {
            let dirty = repo::dirty_paths(&pin).unwrap_or_default();
            if !dirty.is_empty() {
                return Err(refuse_uncommitted(
                    id,
                    rec.as_ref(),
                    tampered.is_some(),
                    &branch,
                    &dirty,
                ));
            }
        }
        if tampered.is_some() && path.exists() {
            // `git worktree remove` refuses a worktree whose `.git` is not
            // the one it wrote: put back what baton recorded first.
            pin.repair()
                .map_err(|e| Error::io("restoring the worktree's git files to remove it", e))?;
        }
        if pin.own && !registered {
            // A repository of its own: nothing of the user's points at it.
            if path.exists() {
                let _ = super::checkout::make_writable(&path);
                std::fs::remove_dir_all(&path)
                    .map_err(|e| Error::io(format!("removing {}", path.display()), e))?;
            }
        } else {
            let mut c = repo::git(root);
            // --force twice: also for a directory that is already gone, for
            // the ignored build output a --test-cmd leaves behind, and for a
            // lock the peer may have put on it.
            c.args(["worktree", "remove", "--force", "--force"])
                .arg(&path);
            repo::run(c, "removing the worktree", None)?;
        }
        worktree_removed = true;
    }
    let mut branch_deleted = false;
    if delete_branch && head.is_some() {
        let mut c = repo::git(root);
        c.args(["branch", "-D", "--end-of-options", &branch]);
        repo::run(c, "deleting the worktree's branch", None)?;
        branch_deleted = true;
    }
    forget(root, id);
    super::checkout::remove_left(root, id);
    Ok(Removed {
        id: id.to_string(),
        path,
        branch,
        head,
        worktree_removed,
        branch_deleted,
    })
}

/// `3m`, `2h`, `5d`: ages for people.
pub fn human_age(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_root_from_inside_a_baton_worktree_is_its_owner() {
        let d = tempfile::tempdir().unwrap();
        let owner = d.path();
        std::fs::create_dir(owner.join(".git")).unwrap();
        let wt = owner.join(".baton/worktrees/0123456789abc");
        std::fs::create_dir_all(wt.join("src")).unwrap();
        std::fs::write(wt.join(".git"), "gitdir: x\n").unwrap();
        assert_eq!(store_root(&wt.join("src")), owner);
        assert_eq!(store_root(owner), owner);
        // A directory that merely looks similar is its own root.
        let other = owner.join(".baton/worktrees/not-an-id");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join(".git"), "gitdir: x\n").unwrap();
        assert_eq!(store_root(&other), other);
    }

    #[test]
    fn a_zombie_is_not_alive() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // Exited but not reaped: a zombie until `wait`.
        let t = std::time::Instant::now();
        while pid_alive(pid) && t.elapsed() < std::time::Duration::from_secs(10) {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(!pid_alive(pid));
        child.wait().unwrap();
        assert!(pid_alive(std::process::id()));
    }

    #[test]
    fn ages() {
        assert_eq!(human_age(5), "5s");
        assert_eq!(human_age(125), "2m");
        assert_eq!(human_age(7300), "2h");
        assert_eq!(human_age(3 * 86400), "3d");
    }

    fn record(lock: Option<PathBuf>, pid: Option<u32>) -> Record {
        Record {
            id: "0123456789abc".into(),
            job_id: None,
            agent: "codex".into(),
            branch: "baton/0123456789abc".into(),
            base: "abc".into(),
            path: PathBuf::from("/x"),
            created_ms: 1,
            pid,
            lock,
            task: "t".into(),
            include_dirty: true,
            allow: vec!["src/**".into()],
            test_cmd: Some("make test".into()),
            finished_ms: None,
            status: None,
            pin: None,
            tampered: None,
        }
    }

    #[test]
    fn records_round_trip() {
        let r = record(Some(PathBuf::from("/s/x.lock")), Some(7));
        let json = serde_json::to_vec(&r).unwrap();
        assert_eq!(serde_json::from_slice::<Record>(&json).unwrap(), r);
        // A record of baton 0.1 (no lock) still reads.
        let old = br#"{"id":"0123456789abc","agent":"codex","branch":"b","base":"c","path":"/x","created_ms":1,"pid":7,"task":"t"}"#;
        assert_eq!(serde_json::from_slice::<Record>(old).unwrap().lock, None);
    }

    #[test]
    fn council_worktree_ids_are_ids_too() {
        let id = crate::ids::new_id();
        assert!(is_id(&id));
        assert!(is_id(&format!("council-{id}")));
        // A council writer's fallback agent works in a worktree of its own.
        assert!(is_id(&format!("council-{id}-a2")) && is_id(&format!("council-{id}-a99")));
        for bad in ["-a1", "-a02", "-a100", "-a", "-ab", "-1"] {
            assert!(!is_id(&format!("council-{id}{bad}")), "council {bad}");
        }
        assert!(is_id(&format!("{id}-1")) && is_id(&format!("{id}-12")));
        assert!(is_id(&format!("{id}-1-a2")) && is_id(&format!("{id}-12-a10")));
        for bad in ["-1-a1", "-1-a02", "-1-a100", "-a2", "-1-a", "-1-ab"] {
            assert!(!is_id(&format!("{id}{bad}")), "{bad}");
        }
        for bad in [
            "council-",
            "council-../etc",
            "council-council-x",
            "job-0123456789abc",
            &format!("{id}-0"),
            &format!("{id}-01"),
            &format!("{id}-"),
            &format!("{id}-1/.."),
            &format!("{id}-12345"),
        ] {
            assert!(!is_id(bad), "{bad}");
        }
    }

    #[test]
    fn holding_twice_in_one_process_does_not_wait_for_itself() {
        let d = tempfile::tempdir().unwrap();
        crate::state_dir::TEST_BASE.with(|b| *b.borrow_mut() = Some(d.path().join("state")));
        let id = crate::ids::new_id();
        let a = hold(d.path(), &id).unwrap();
        assert_eq!(hold(d.path(), &id).unwrap(), a);
        // Still held (a second descriptor cannot share it). Broken, the
        // second `hold` would block on our own lock instead of returning.
        assert!(lock_held(&a));
    }

    #[test]
    fn busy_is_a_held_lock_and_never_a_zombie() {
        let d = tempfile::tempdir().unwrap();
        let lock = d.path().join("w.lock");
        let f = std::fs::File::create(&lock).unwrap();
        f.lock().unwrap();
        assert!(busy(&record(Some(lock.clone()), Some(1))));
        // Unlocked, not only closed: a child another test thread forks now
        // keeps a copy of the descriptor (and so the lock) until it execs.
        f.unlock().unwrap();
        drop(f);
        assert!(!busy(&record(Some(lock), Some(1))));
        // Without a lock: the pid, unless it is a zombie.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        assert!(wait_for_zombie(pid));
        assert!(!busy(&record(None, Some(pid))));
        child.wait().unwrap();
        let mut finished = record(None, Some(1));
        finished.finished_ms = Some(2);
        assert!(!busy(&finished));
    }

    fn wait_for_zombie(pid: u32) -> bool {
        for _ in 0..500 {
            if std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            }) {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        false
    }
}
