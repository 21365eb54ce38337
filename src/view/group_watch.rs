//! The project's groups (councils, fan-outs) followed cheaply, for the
//! interactive `watch` and `serve`: a group's record and run records re-read
//! only when they change.
//!
//! A look with nothing new costs a `stat` of each groups folder, and per
//! running group a `stat` of its `state.json` and `runs/`, a check that
//! its runner lives, and one bounded read of each running run's log (from a
//! remembered offset). Ended groups are looked at again only on a relist.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::group::{self, Follow, GroupKind, GroupView, Head};
use crate::group::runs::{self, RunRecord};

/// Most of one running run's log read per look.
const READ_PER_LOOK: usize = 256 << 10;

type Stamp = Option<(SystemTime, u64)>;

fn stamp(p: &Path) -> Stamp {
    let m = p.metadata().ok()?;
    Some((m.modified().ok()?, m.len()))
}

struct Entry {
    kind: GroupKind,
    dir: PathBuf,
    /// `state.json`'s and `runs/`'s stamps when last read.
    stamps: (Stamp, Stamp),
    rec: Head,
    runs: Vec<RunRecord>,
    alive: bool,
    view: GroupView,
    /// When `view`'s clocks were read (serve advances them from here).
    at_ms: u64,
}

impl Entry {
    fn running(&self) -> bool {
        self.view.status == "running"
    }
}

/// What changes from one look to the next without anything happening.
fn timeless(v: &GroupView) -> GroupView {
    let mut v = v.clone();
    v.elapsed_ms = 0;
    for r in &mut v.runs {
        r.elapsed_ms = 0;
        r.last_activity_age_ms = None;
    }
    v
}

pub struct Groups {
    /// The project's groups folders, each with its stamp when last listed
    /// (none: a store outside a project).
    dirs: Vec<(GroupKind, PathBuf, Option<SystemTime>)>,
    entries: HashMap<String, Entry>,
    follow: Follow,
}

impl Groups {
    /// The councils in `dir` (the project's councils folder).
    pub fn new(dir: Option<PathBuf>) -> Groups {
        Groups::in_folders(dir.into_iter().map(|d| (GroupKind::Council, d)).collect())
    }

    /// Every group in these folders (`group::group_dirs`).
    pub fn in_folders(dirs: Vec<(GroupKind, PathBuf)>) -> Groups {
        Groups {
            dirs: dirs.into_iter().map(|(k, d)| (k, d, None)).collect(),
            entries: HashMap::new(),
            follow: Follow::new(READ_PER_LOOK),
        }
    }

    /// Bring every view up to date at `now` (`relist`: look at ended
    /// groups too); whether anything but the clocks changed.
    pub fn refresh(&mut self, now: u64, relist: bool) -> bool {
        let mut changed = false;
        for k in 0..self.dirs.len() {
            let (kind, dir, stamp) = self.dirs[k].clone();
            let ds = dir.metadata().and_then(|m| m.modified()).ok();
            if !relist && ds == stamp {
                continue;
            }
            self.dirs[k].2 = ds;
            let ids = group::ids(&dir);
            let before = self.entries.len();
            self.entries
                .retain(|id, e| e.kind != kind || ids.contains(id));
            changed |= before != self.entries.len();
            for id in ids {
                if !self.entries.contains_key(&id)
                    && let Some(e) = self.read(kind, &dir.join(&id), now)
                {
                    self.entries.insert(id, e);
                    changed = true;
                }
            }
        }
        let mut running = Vec::new();
        for e in self.entries.values_mut() {
            let was_running = e.running();
            if !(relist || was_running) {
                continue;
            }
            let stamps = (stamp(&e.dir.join("state.json")), stamp(&e.dir.join("runs")));
            let alive = group::head_alive(&e.dir);
            let moved = stamps != e.stamps || alive != e.alive;
            if moved {
                e.stamps = stamps;
                if let Some(r) = group::load_head(e.kind, &e.dir) {
                    e.rec = r;
                }
                e.alive = group::head_alive(&e.dir);
                e.runs = runs::list(&e.dir);
            } else if !was_running {
                // An ended group whose files did not move: nothing to redo.
                continue;
            }
            let v = group::view_head(&e.rec, &e.runs, e.alive, now, &mut self.follow);
            changed |= timeless(&v) != timeless(&e.view);
            e.view = v;
            e.at_ms = now;
            if e.running() {
                running.extend(e.view.runs.iter().filter_map(|r| r.log.clone()));
            }
        }
        self.follow.keep_only(&running);
        changed
    }

    fn read(&mut self, kind: GroupKind, dir: &Path, now: u64) -> Option<Entry> {
        let stamps = (stamp(&dir.join("state.json")), stamp(&dir.join("runs")));
        let rec = group::load_head(kind, dir)?;
        let runs = runs::list(dir);
        let alive = group::head_alive(dir);
        let view = group::view_head(&rec, &runs, alive, now, &mut self.follow);
        Some(Entry {
            kind,
            dir: dir.to_path_buf(),
            stamps,
            rec,
            runs,
            alive,
            view,
            at_ms: now,
        })
    }

    /// Every council, running first, then newest.
    pub fn views(&self) -> Vec<GroupView> {
        let mut v: Vec<GroupView> = self.entries.values().map(|e| e.view.clone()).collect();
        group::sort(&mut v);
        v
    }

    /// Every council as `views` orders them, each with the time its
    /// clocks were read (an ended council is not re-read on every look).
    pub fn views_read_at(&self) -> Vec<(GroupView, u64)> {
        self.views()
            .into_iter()
            .map(|v| {
                let at = self.entries.get(&v.council_id).map_or(0, |e| e.at_ms);
                (v, at)
            })
            .collect()
    }

    /// Directories whose changes matter: the groups folders, and each
    /// running group's folder, its `runs/` and its running runs' log folders.
    pub fn watch_dirs(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = self.dirs.iter().map(|d| d.1.clone()).collect();
        for e in self.entries.values().filter(|e| e.running()) {
            out.push(e.dir.clone());
            out.push(e.dir.join("runs"));
            for r in e
                .view
                .runs
                .iter()
                .filter(|r| r.status == "running" || r.status == "stalled")
            {
                if let Some(p) = r.log.as_deref().and_then(Path::parent) {
                    out.push(p.to_path_buf());
                }
            }
        }
        out.retain(|d| d.is_dir());
        out
    }

    /// The group `id` as last seen.
    pub fn get(&self, id: &str) -> Option<&GroupView> {
        self.entries.get(id).map(|e| &e.view)
    }

    /// Which kind of group `id` is, if it is one of these.
    pub fn kind(&self, id: &str) -> Option<GroupKind> {
        self.entries.get(id).map(|e| e.kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::council::machine::Stage;

    fn write(dir: &Path, stage: &str, pid: Option<u32>) {
        std::fs::create_dir_all(dir).unwrap();
        let rec = serde_json::json!({
            "council_id": dir.file_name().unwrap().to_str().unwrap(), "kind": "plan",
            "stage": stage, "created_ms": 1000, "root": "/r", "cwd": "/r", "task": "t",
            "settings": {"depth": "standard", "quorum": 2, "repair_rounds": 1, "test_cmd": null,
                "allow": [], "budget_tokens": null, "max_wall_ms": null, "timeout": "20m",
                "idle_timeout": "5m", "effort": null, "scope": "packet"},
            "members": [{"agent": "codex", "model": null, "vendor": "openai"}],
            "chair": null, "writer": null, "seed": 1, "packet_sha256": "", "base_commit": null,
            "warnings": [], "approval": null, "plan_sha256": null, "reason": null, "pid": pid,
            "updated_ms": 2000
        });
        std::fs::write(dir.join("state.json"), rec.to_string()).unwrap();
    }

    #[test]
    fn a_council_is_re_read_when_its_files_change_and_ended_ones_rest() {
        let d = tempfile::tempdir().unwrap();
        let me = Some(std::process::id());
        let c = d.path().join("1m8q4fhwprzza");
        write(&c, "proposing", me);
        // The runner's lock, held as a runner holds it.
        let _runner = crate::store::lock::hold(&c).unwrap();
        let mut w = Groups::new(Some(d.path().to_path_buf()));
        assert!(w.refresh(5000, false), "a new council");
        assert_eq!(w.views()[0].status, "running");
        assert!(w.views()[0].runs.is_empty());
        assert!(!w.refresh(6000, false), "nothing new");
        let m = crate::council::store::Member {
            agent: "codex".into(),
            model: None,
            vendor: "openai".into(),
        };
        let s = runs::start(&c, "proposing", "m0", m.who(), None).unwrap();
        assert!(w.refresh(7000, false), "a run started");
        assert_eq!(w.views()[0].runs[0].status, "running");
        assert!(w.watch_dirs().contains(&c.join("runs")));
        s.end("ok", &Default::default(), None);
        write(&c, "failed", me);
        assert!(w.refresh(8000, false));
        let v = w.get("1m8q4fhwprzza").unwrap();
        assert_eq!((v.status, v.runs[0].status), (Stage::Failed.as_str(), "ok"));
        assert!(
            !w.watch_dirs().contains(&c.join("runs")),
            "ended: not watched"
        );
        // Ended: its files are not looked at until a relist.
        write(&c, "cancelled", me);
        assert!(!w.refresh(9000, false));
        assert!(w.refresh(9000, true));
        assert_eq!(w.views()[0].status, "cancelled");
    }
}
