//! What `baton prune` removes besides jobs: the records of foreground runs
//! (`runs/<id>/`), and ended groups — councils (`councils/<id>/`) and
//! fan-outs (`fanouts/<id>/`) — as whole records, with the runs they name
//! (members', candidates', judges') and a fan-out's candidates' worktrees.
//! Never a run in progress (its process holds `runs/<id>/lock`) nor a group
//! that has not ended, or any run such a group refers to.
//!
//! Groups are read by `council` and `fanout` (which sit above `job`): the
//! command line hands them in as `GroupEntry`s, as it hands their rows to
//! `jobs`.

use std::collections::HashSet;
use std::fs::{self, File, TryLockError};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::prune::dir_size;
use super::store::id_time_ms;

/// A council or a fan-out as `prune` needs to know it.
#[derive(Debug, Clone)]
pub struct GroupEntry {
    /// `council`, `fanout` or `bench`.
    pub kind: &'static str,
    pub id: String,
    pub dir: PathBuf,
    /// `Some(stage)` when its record could be read.
    pub stage: Option<String>,
    pub task: String,
    /// When it ended: a terminal stage that no process drives any more.
    /// `None`: not ended (never removed), or unreadable (see `stage`).
    pub ended_ms: Option<u64>,
    /// The run folders its records name (`runs/<id>/`): removed with it,
    /// kept while it stays.
    pub runs: Vec<PathBuf>,
    /// Worktrees that are its own (a fan-out's candidates'), removed with it
    /// as a job's is: not one with uncommitted changes, never its branch.
    pub worktrees: Vec<String>,
}

#[derive(Serialize)]
pub(super) struct PrunedGroup {
    /// `council` or `fanout` (the JSON names the id after it).
    #[serde(skip)]
    pub(super) kind: &'static str,
    #[serde(skip)]
    pub(super) id: String,
    /// Its stage, or `corrupt` when its record could not be read.
    pub(super) stage: String,
    pub(super) task: String,
    pub(super) ended_ms: Option<u64>,
    /// Its folder and its members' run folders.
    pub(super) bytes: u64,
    pub(super) runs: usize,
}

impl PrunedGroup {
    /// Its JSON, the id named after its kind (`council_id`, `fanout_id`).
    pub(super) fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert(format!("{}_id", self.kind), self.id.clone().into());
        }
        v
    }
}

#[derive(Serialize)]
pub(super) struct PrunedRun {
    pub(super) run_id: String,
    pub(super) ended_ms: u64,
    pub(super) bytes: u64,
}

/// The groups to remove (ended before `cutoff`), the run folders that must
/// stay (those of every group that stays), and how many have not ended.
pub(super) fn groups(
    all: &[GroupEntry],
    now: u64,
    cutoff: u64,
) -> (Vec<(&GroupEntry, PrunedGroup)>, HashSet<PathBuf>, usize) {
    let mut doomed = Vec::new();
    let mut keep_runs = HashSet::new();
    let mut not_ended = 0;
    for c in all {
        let born = id_time_ms(&c.id);
        let remove = match (&c.stage, c.ended_ms) {
            (Some(_), Some(ended)) => ended <= cutoff,
            // Unreadable: removed as of its start, once clearly abandoned
            // (a group being created writes its record at once).
            (None, _) => born < cutoff && now.saturating_sub(born) > 60_000,
            (Some(_), None) => {
                not_ended += 1;
                false
            }
        };
        if !remove {
            keep_runs.extend(c.runs.iter().cloned());
            continue;
        }
        let bytes = dir_size_deep(&c.dir) + c.runs.iter().map(|r| dir_size(r)).sum::<u64>();
        doomed.push((
            c,
            PrunedGroup {
                kind: c.kind,
                id: c.id.clone(),
                stage: c.stage.clone().unwrap_or_else(|| "corrupt".into()),
                task: c.task.clone(),
                ended_ms: c.ended_ms,
                bytes,
                runs: c.runs.iter().filter(|r| r.is_dir()).count(),
            },
        ));
    }
    (doomed, keep_runs, not_ended)
}

/// The foreground runs in `runs_dir` that ended before `cutoff`, leaving
/// those in `keep` (a group's that stays) and those in `skip` (removed
/// with their group); and how many are still running.
pub(super) fn runs(
    runs_dir: &Path,
    cutoff: u64,
    keep: &HashSet<PathBuf>,
    skip: &HashSet<PathBuf>,
) -> (Vec<(PathBuf, PrunedRun)>, usize) {
    let Ok(rd) = fs::read_dir(runs_dir) else {
        return (Vec::new(), 0);
    };
    let mut doomed = Vec::new();
    let mut running = 0;
    for e in rd.flatten() {
        // A symlink is no run folder baton made: never followed.
        if !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Some(id) = e.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let dir = e.path();
        if !crate::ids::is_valid(&id) || keep.contains(&dir) || skip.contains(&dir) {
            continue;
        }
        if lock_held(&dir) {
            running += 1;
            continue;
        }
        let ended = ended_ms(&dir, &id);
        if ended <= cutoff {
            let bytes = dir_size(&dir);
            doomed.push((
                dir,
                PrunedRun {
                    run_id: id,
                    ended_ms: ended,
                    bytes,
                },
            ));
        }
    }
    doomed.sort_by(|a, b| b.1.run_id.cmp(&a.1.run_id));
    (doomed, running)
}

/// Whether the process that made the run still holds its lock: on the run
/// folder itself, or (a run of baton 0.3.2) on its `lock` file.
fn lock_held(dir: &Path) -> bool {
    let held = |p: &Path| {
        File::open(p).is_ok_and(|f| matches!(f.try_lock_shared(), Err(TryLockError::WouldBlock)))
    };
    held(dir) || held(&dir.join(crate::run::RUN_LOCK))
}

/// When a run ended: its `result.json` was written then; without one (a
/// run killed, or made before runs had locks), its newest file says when it
/// last did anything; else the time in its id.
fn ended_ms(dir: &Path, id: &str) -> u64 {
    let ms = |m: fs::Metadata| {
        m.modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as u64)
    };
    if let Some(t) = fs::metadata(dir.join("result.json")).ok().and_then(ms) {
        return t;
    }
    fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter_map(ms)
        .max()
        .unwrap_or_else(|| id_time_ms(id))
}

/// Bytes of the files under `dir`, at any depth (a council keeps `calls/`
/// and `runs/` folders), links not followed.
fn dir_size_deep(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(t) if t.is_file() => total += e.metadata().map_or(0, |m| m.len()),
                _ => {}
            }
        }
    }
    total
}

/// Remove `dir` of `parent` as jobs are removed: out of sight with one
/// rename, then deleted.
pub(super) fn remove_dir(parent: &Path, dir: &Path, id: &str) -> bool {
    let trash = parent.join(format!(".trash-{id}-{}", crate::ids::random_suffix(6)));
    if fs::rename(dir, &trash).is_err() {
        return false;
    }
    let _ = fs::remove_dir_all(&trash);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_whose_lock_is_held_is_running_and_others_go_by_age() {
        let d = tempfile::tempdir().unwrap();
        let runs = d.path().join("runs");
        let (old, live, young) = ("0123456789abc", "0123456789abd", crate::ids::new_id());
        for id in [old, live, young.as_str()] {
            fs::create_dir_all(runs.join(id)).unwrap();
            fs::write(runs.join(id).join("stdout.log"), "x").unwrap();
        }
        let lock = File::create(runs.join(live).join(crate::run::RUN_LOCK)).unwrap();
        lock.lock().unwrap();
        // Every run ended "now": a cutoff in the future takes all but the live one.
        let now = super::super::store::now_ms();
        let (doomed, running) = runs_in(&runs, now + 1000);
        assert_eq!(running, 1);
        let ids: Vec<&str> = doomed.iter().map(|(_, p)| p.run_id.as_str()).collect();
        assert_eq!(ids.len(), 2, "{ids:?}");
        assert!(!ids.contains(&live));
        // A cutoff before they ended takes none.
        assert!(runs_in(&runs, now - 60_000).0.is_empty());
        // Unlocked, not only closed: a child another test thread forks now
        // keeps a copy of the descriptor (and so the lock) until it execs.
        lock.unlock().unwrap();
        drop(lock);
        assert_eq!(runs_in(&runs, now + 1000).0.len(), 3);
        // As runs hold it now: on the run folder itself.
        let lock = File::open(runs.join(live)).unwrap();
        lock.lock().unwrap();
        assert_eq!(runs_in(&runs, now + 1000).1, 1, "a live run");
        drop(lock);
    }

    #[test]
    fn a_bench_run_is_pruned_like_a_council_or_a_fanout() {
        use crate::store::Kind;
        let d = tempfile::tempdir().unwrap();
        let entry = |kind: Kind, ended_ms| GroupEntry {
            kind: kind.name(),
            id: crate::ids::new_id(),
            dir: d.path().join(kind.folder()),
            stage: Some("done".into()),
            task: String::new(),
            ended_ms,
            runs: vec![d.path().join(format!("runs/{}", kind.name()))],
            worktrees: Vec::new(),
        };
        let now = super::super::store::now_ms();
        let all: Vec<GroupEntry> = [Kind::Council, Kind::Fanout, Kind::Bench]
            .into_iter()
            .flat_map(|k| [entry(k, Some(now - 10)), entry(k, None)])
            .collect();
        let (doomed, keep, not_ended) = groups(&all, now, now);
        let gone: Vec<&str> = doomed.iter().map(|(_, p)| p.kind).collect();
        assert_eq!(gone, ["council", "fanout", "bench"]);
        assert_eq!(not_ended, 3);
        assert_eq!(keep.len(), 3, "the runs of those that stay: {keep:?}");
    }

    fn runs_in(dir: &Path, cutoff: u64) -> (Vec<(PathBuf, PrunedRun)>, usize) {
        runs(dir, cutoff, &HashSet::new(), &HashSet::new())
    }

    #[test]
    fn councils_that_have_not_ended_keep_their_runs() {
        let entry = |id: &str, stage: Option<&str>, ended: Option<u64>, run: &str| GroupEntry {
            kind: "council",
            id: id.into(),
            dir: PathBuf::from("/c").join(id),
            stage: stage.map(str::to_string),
            task: String::new(),
            ended_ms: ended,
            runs: vec![PathBuf::from("/r").join(run)],
            worktrees: Vec::new(),
        };
        let now = super::super::store::now_ms();
        let all = [
            entry("0123456789abc", Some("done"), Some(10), "a"),
            entry("0123456789abd", Some("implementing"), None, "b"),
            entry("0123456789abe", Some("ready"), Some(now), "c"),
            entry("0123456789abf", None, None, "d"),
        ];
        // After the ids' time (1971), before the ready one ended.
        let (doomed, keep, not_ended) = groups(&all, now, 40_000_000_000);
        let ids: Vec<&str> = doomed.iter().map(|(c, _)| c.id.as_str()).collect();
        assert_eq!(ids, ["0123456789abc", "0123456789abf"]);
        assert_eq!(doomed[1].1.stage, "corrupt");
        assert_eq!(not_ended, 1);
        assert!(keep.contains(Path::new("/r/b")) && keep.contains(Path::new("/r/c")));
        assert!(!keep.contains(Path::new("/r/a")));
    }
}
