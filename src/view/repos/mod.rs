//! One view across repositories: the work of every project in the state
//! directory (`state_dir::repos`), each row with its repository, for
//! `watch --all [--once]`, `jobs --all-repos` and `serve --all`.
//!
//! Theory of operation. What a person with 20 repositories wants first is
//! what is at work or needs them, then what ended lately; 10,000 old jobs
//! per repository are history. So a snapshot lists, per repository:
//! - every record the live index marks (`store::live`): running, stalled,
//!   waiting for approval, or lost (a mark whose runner died). Each mark is
//!   read and shown as what its record says; one whose record ended or is
//!   gone is forgotten;
//! - the `Filter::recent` newest records of each kind, whatever their status
//!   (so a failure of the last hour shows), read newest-first from the
//!   folder listing (ids sort by time): their `state.json` only;
//! - counts: how many records there are in all and how many were left out.
//!
//! A project whose index is not complete (a new project, or records
//! written by an older baton) is scanned in full once, its open records marked (`live::backfill`).
//! A repository whose root is gone is listed with `status: "missing"` and
//! its records still shown; a project folder that cannot be read is
//! `unreadable` with the error, and the others are shown all the same.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::group::{self, GroupKind, GroupView};
use super::watch::{self, JobView};
use crate::error::Result;
use crate::job::store::Store;
use crate::result::SCHEMA_VERSION;
use crate::state_dir::Repo;
use crate::store::live::{self, Mark};

pub mod print;
pub use print::{jobs_listing, once, short, text};

/// The newest records of each kind listed per repository by default.
pub const RECENT: usize = 10;

/// Which repositories, and how much of each.
#[derive(Debug, Clone)]
pub struct Filter {
    /// `--repo PATTERN`: a repository whose root path (or, without a known
    /// root, its record folder's name) contains this text. `None`: all.
    pub repo: Option<String>,
    /// The newest records of each kind listed per repository besides the
    /// open ones (`usize::MAX`: every record, a full scan).
    pub recent: usize,
}

impl Default for Filter {
    fn default() -> Filter {
        Filter {
            repo: None,
            recent: RECENT,
        }
    }
}

impl Filter {
    /// Whether `r` is one of the repositories asked for.
    pub fn matches(&self, r: &Repo) -> bool {
        self.repo.as_deref().is_none_or(|p| r.label().contains(p))
    }
}

/// One repository in a snapshot.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct RepoSummary {
    /// Its root (what every row's `repo` says), or its record folder's name.
    pub repo: String,
    /// `ok`; `missing` (its root is no longer a directory: its records are
    /// still listed); `unreadable` (its record folder could not be read).
    pub status: &'static str,
    /// The record folder in the state directory.
    pub state_dir: PathBuf,
    /// Jobs recorded, and how many of them are not listed.
    pub jobs_total: usize,
    pub jobs_hidden: usize,
    /// Councils and fan-outs recorded, and how many are not listed.
    pub groups_total: usize,
    pub groups_hidden: usize,
    /// Why it is `unreadable`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A job row with its repository.
#[derive(Debug, Clone, Serialize)]
pub struct RepoJob {
    pub repo: String,
    #[serde(flatten)]
    pub job: JobView,
}

/// A council's or fan-out's group with its repository.
#[derive(Debug, Clone, Serialize)]
pub struct RepoGroup {
    pub repo: String,
    #[serde(flatten)]
    pub group: GroupView,
}

/// `watch --all --once`: every repository asked for, then the rows of all,
/// running first, then what needs attention, then the newest.
#[derive(Debug, Serialize)]
pub struct AllSnapshot {
    pub schema_version: u32,
    pub now_ms: u64,
    pub repos: Vec<RepoSummary>,
    pub jobs: Vec<RepoJob>,
    pub councils: Vec<RepoGroup>,
}

/// What one repository adds to a snapshot.
#[derive(Debug)]
pub struct RepoPart {
    pub summary: RepoSummary,
    pub jobs: Vec<JobView>,
    pub groups: Vec<GroupView>,
}

/// The snapshot of every repository `filter` matches at `now`.
pub fn snapshot_all(now: u64, filter: &Filter) -> Result<AllSnapshot> {
    let repos: Vec<Repo> = crate::state_dir::repos()?
        .into_iter()
        .filter(|r| filter.matches(r))
        .collect();
    // A few repositories at a time: each is mostly waiting on small reads.
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4)
        .min(repos.len().max(1));
    let chunk = repos.len().div_ceil(threads).max(1);
    let parts: Vec<RepoPart> = std::thread::scope(|sc| {
        let hs: Vec<_> = repos
            .chunks(chunk)
            .map(|c| {
                sc.spawn(move || {
                    c.iter()
                        .map(|r| snapshot_repo(r, now, filter.recent))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    Ok(merge(now, parts))
}

/// The parts of several repositories as one snapshot, in the views' order.
pub fn merge(now: u64, parts: Vec<RepoPart>) -> AllSnapshot {
    let mut out = AllSnapshot {
        schema_version: SCHEMA_VERSION,
        now_ms: now,
        repos: Vec::with_capacity(parts.len()),
        jobs: Vec::new(),
        councils: Vec::new(),
    };
    for p in parts {
        let repo = p.summary.repo.clone();
        out.jobs.extend(p.jobs.into_iter().map(|job| RepoJob {
            repo: repo.clone(),
            job,
        }));
        out.councils
            .extend(p.groups.into_iter().map(|group| RepoGroup {
                repo: repo.clone(),
                group,
            }));
        out.repos.push(p.summary);
    }
    out.jobs.sort_by(|a, b| {
        (watch::group(a.job.status), b.job.created_ms, &b.job.job_id).cmp(&(
            watch::group(b.job.status),
            a.job.created_ms,
            &a.job.job_id,
        ))
    });
    out.councils.sort_by(|a, b| {
        (
            a.group.status != "running",
            b.group.created_ms,
            &b.group.council_id,
        )
            .cmp(&(
                b.group.status != "running",
                a.group.created_ms,
                &a.group.council_id,
            ))
    });
    out
}

/// One repository at `now`: its open records and its `recent` newest of
/// each kind. Never fails: what cannot be read is said in its summary.
pub fn snapshot_repo(r: &Repo, now: u64, recent: usize) -> RepoPart {
    let mut summary = RepoSummary {
        repo: r.label(),
        status: if r.exists { "ok" } else { "missing" },
        state_dir: r.dir.clone(),
        jobs_total: 0,
        jobs_hidden: 0,
        groups_total: 0,
        groups_hidden: 0,
        error: None,
    };
    let (marks, complete) = live::read(&r.dir);
    let store = Store::of_project(&r.dir, r.root.as_deref());
    let ids = match store.ids() {
        Ok(ids) => ids,
        Err(e) => {
            summary.status = "unreadable";
            summary.error = Some(e.to_string());
            return RepoPart {
                summary,
                jobs: Vec::new(),
                groups: Vec::new(),
            };
        }
    };
    let mut found = Vec::new();
    let jobs = jobs(
        &r.dir, &store, &ids, &marks, complete, recent, now, &mut found,
    );
    summary.jobs_total = ids.len();
    summary.jobs_hidden = ids.len().saturating_sub(jobs.len());
    let (groups, total) = groups(&r.dir, &marks, complete, recent, now, &mut found);
    summary.groups_total = total;
    summary.groups_hidden = total.saturating_sub(groups.len());
    if !complete {
        live::backfill(&r.dir, &found);
    }
    RepoPart {
        summary,
        jobs,
        groups,
    }
}

/// The jobs worth listing: the marked ones, the `recent` newest, and (with
/// an incomplete index) every open one, found by reading every state.
#[allow(clippy::too_many_arguments)]
fn jobs(
    project: &Path,
    store: &Store,
    ids: &[String],
    marks: &[Mark],
    complete: bool,
    recent: usize,
    now: u64,
    open: &mut Vec<Mark>,
) -> Vec<JobView> {
    let present: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let mut chosen: Vec<&str> = ids.iter().take(recent).map(String::as_str).collect();
    let mut seen: HashSet<&str> = chosen.iter().copied().collect();
    for m in marks.iter().filter(|m| m.kind == GroupKind::Job) {
        if !present.contains(m.id.as_str()) {
            live::forget(project, m);
        } else if seen.insert(m.id.as_str()) {
            chosen.push(m.id.as_str());
        }
    }
    if !complete && recent < ids.len() {
        // Records from before the index: every state read, once.
        for (job, s) in store.states().unwrap_or_default() {
            if s.as_ref().is_none_or(|s| !s.status.is_terminal()) {
                open.push(job_mark(&job.id));
                if let Some(id) = present.get(job.id.as_str())
                    && seen.insert(id)
                {
                    chosen.push(id);
                }
            }
        }
    }
    let marked: HashSet<&str> = marks
        .iter()
        .filter(|m| m.kind == GroupKind::Job)
        .map(|m| m.id.as_str())
        .collect();
    let mut views: Vec<JobView> = chosen
        .into_iter()
        .map(|id| {
            let job = store.job(id);
            let v = watch::view(&job, &job.read_state().ok(), now);
            let ended = !matches!(v.status, "running" | "stalled");
            if ended && marked.contains(id) && v.status != "lost" && v.status != "corrupt" {
                live::forget(project, &job_mark(id));
            } else if !complete && !ended {
                open.push(job_mark(id));
            }
            v
        })
        .collect();
    views.sort_by_key(|v| (watch::group(v.status), std::cmp::Reverse(v.created_ms)));
    views
}

fn job_mark(id: &str) -> Mark {
    Mark {
        kind: GroupKind::Job,
        id: id.to_string(),
    }
}

/// Whether a group may still need watching: not stopped, or waiting for a person.
fn group_open(h: &group::Head) -> bool {
    !h.stopped || h.stage == "awaiting_approval"
}

/// The groups (councils, fan-outs, bench runs) worth listing, and how many there are.
fn groups(
    project: &Path,
    marks: &[Mark],
    complete: bool,
    recent: usize,
    now: u64,
    open: &mut Vec<Mark>,
) -> (Vec<GroupView>, usize) {
    let mut follow = group::Follow::new(usize::MAX);
    let mut out = Vec::new();
    let mut total = 0;
    for kind in [GroupKind::Council, GroupKind::Fanout, GroupKind::Bench] {
        let base = project.join(kind.folder());
        let mut ids = group::ids(&base);
        ids.sort_unstable_by(|a, b| b.cmp(a));
        total += ids.len();
        let present: HashSet<&str> = ids.iter().map(String::as_str).collect();
        let mut chosen: Vec<&str> = ids.iter().take(recent).map(String::as_str).collect();
        let mut seen: HashSet<&str> = chosen.iter().copied().collect();
        for m in marks.iter().filter(|m| m.kind == kind) {
            if !present.contains(m.id.as_str()) {
                live::forget(project, m);
            } else if seen.insert(m.id.as_str()) {
                chosen.push(m.id.as_str());
            }
        }
        if !complete {
            for id in ids.iter().skip(recent) {
                if group::load_head(kind, &base.join(id)).is_some_and(|h| group_open(&h))
                    && seen.insert(id.as_str())
                {
                    chosen.push(id.as_str());
                }
            }
        }
        for id in chosen {
            let dir = base.join(id);
            let mark = Mark {
                kind,
                id: id.to_string(),
            };
            let Some(h) = group::load_head(kind, &dir) else {
                continue;
            };
            if group_open(&h) {
                if !complete {
                    open.push(mark);
                }
            } else if marks.contains(&mark) {
                live::forget(project, &mark);
            }
            let runs = crate::group::runs::list(&dir);
            out.push(group::view_head(
                &h,
                &runs,
                group::head_alive(&dir),
                now,
                &mut follow,
            ));
        }
    }
    group::sort(&mut out);
    (out, total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::DirBuilderExt;

    fn mkdir(p: &Path) {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(p)
            .unwrap();
    }

    /// A project folder for `root` in `base` with jobs: (id, status).
    fn project(base: &Path, name: &str, root: &Path, jobs: &[(String, &str)]) -> PathBuf {
        let p = base.join("repos").join(name);
        mkdir(&p.join("jobs"));
        std::fs::write(p.join("root"), root.display().to_string()).unwrap();
        for (id, status) in jobs {
            let d = p.join("jobs").join(id);
            mkdir(&d);
            let ended = (*status != "running").then_some(crate::ids::now_ms());
            let s = serde_json::json!({
                "version": 1, "id": id, "status": status, "agent": "codex", "model": null,
                "effort": null, "access": "read-only", "cwd": "/", "task": format!("task {id}"),
                "created_ms": crate::job::store::id_time_ms(id), "ended_ms": ended,
                "runner_pid": null, "peer_pgid": null, "session": null,
                "summary": "done", "resumed_from": null, "warnings": []
            });
            std::fs::write(d.join("state.json"), s.to_string()).unwrap();
        }
        p
    }

    fn ids(n: usize) -> Vec<String> {
        let mut v: Vec<String> = (0..n).map(|_| crate::ids::new_id()).collect();
        v.sort();
        v.dedup();
        v
    }

    fn with_base<T>(f: impl FnOnce(&Path) -> T) -> T {
        let d = tempfile::tempdir().unwrap();
        let base = d.path().join("state");
        mkdir(&base.join("repos"));
        crate::state_dir::TEST_BASE.with(|b| *b.borrow_mut() = Some(base.clone()));
        let r = f(&base);
        crate::state_dir::TEST_BASE.with(|b| *b.borrow_mut() = None);
        r
    }

    #[test]
    fn the_filter_is_a_substring_of_the_root() {
        let r = |root: Option<&str>| Repo {
            dir: PathBuf::from("/s/repos/web-00ff"),
            root: root.map(PathBuf::from),
            exists: true,
        };
        let f = |p: &str| Filter {
            repo: Some(p.into()),
            ..Filter::default()
        };
        assert!(Filter::default().matches(&r(Some("/home/a/api"))));
        assert!(f("home/a").matches(&r(Some("/home/a/api"))));
        assert!(!f("web").matches(&r(Some("/home/a/api"))));
        assert!(f("web-00").matches(&r(None)), "no root: the folder's name");
        assert_eq!(short("/a/b"), "/a/b");
        assert_eq!(short(&"x".repeat(40)).chars().count(), 24);
    }

    #[test]
    fn old_open_work_is_found_once_then_read_through_the_index() {
        with_base(|base| {
            let roots = tempfile::tempdir().unwrap();
            let here = roots.path().join("here");
            mkdir(&here);
            let ids = ids(RECENT + 6);
            // The oldest job still runs (its runner holds the lock); the rest ended.
            let mut jobs: Vec<(String, &str)> =
                ids.iter().map(|i| (i.clone(), "success")).collect();
            jobs[0].1 = "running";
            jobs[1].1 = "failed";
            let p = project(base, "here-01", &here, &jobs);
            let _runner = crate::store::lock::hold(&p.join("jobs").join(&ids[0])).unwrap();
            // Another repository, its root deleted; a third whose jobs folder is no folder.
            project(base, "gone-02", &roots.path().join("gone"), &jobs[2..4]);
            let bad = project(base, "bad-03", &roots.path().join("bad"), &[]);
            std::fs::remove_dir(bad.join("jobs")).unwrap();
            std::fs::write(bad.join("jobs"), "").unwrap();

            let snap = snapshot_all(1 << 60, &Filter::default()).unwrap();
            let status: Vec<(&str, &str)> = snap
                .repos
                .iter()
                .map(|r| (r.repo.rsplit('/').next().unwrap(), r.status))
                .collect();
            assert_eq!(
                status,
                [("bad", "unreadable"), ("gone", "missing"), ("here", "ok")]
            );
            let here_sum = &snap.repos[2];
            assert_eq!((here_sum.jobs_total, here_sum.jobs_hidden), (16, 5));
            let first = &snap.jobs[0];
            assert_eq!(
                (first.job.job_id.as_str(), first.job.status),
                (ids[0].as_str(), "running")
            );
            assert!(first.repo.ends_with("/here"));
            assert_eq!(
                snap.jobs
                    .iter()
                    .filter(|j| j.repo.ends_with("/gone"))
                    .count(),
                2,
                "a deleted repository's records are still listed"
            );
            // The scan completed the index: the running job is marked.
            let (marks, complete) = live::read(&p);
            assert!(complete);
            assert_eq!(marks, [job_mark(&ids[0])]);
            // Read through the index now: a job the scan never saw (no
            // state read) is not found unless marked.
            let filtered = snapshot_all(
                1 << 60,
                &Filter {
                    repo: Some("/here".into()),
                    recent: 3,
                },
            )
            .unwrap();
            assert_eq!(filtered.repos.len(), 1);
            let listed: Vec<&str> = filtered
                .jobs
                .iter()
                .map(|j| j.job.job_id.as_str())
                .collect();
            assert_eq!(listed[0], ids[0], "the marked running job, though old");
            assert_eq!(listed.len(), 4, "and the 3 newest");
            assert!(
                !listed.contains(&ids[1].as_str()),
                "an old failure is history"
            );
            assert!(text(&filtered).contains("running"));
        });
    }

    #[test]
    fn a_mark_is_never_trusted() {
        with_base(|base| {
            let roots = tempfile::tempdir().unwrap();
            let ids = ids(RECENT + 3);
            let mut jobs: Vec<(String, &str)> =
                ids.iter().map(|i| (i.clone(), "success")).collect();
            // Marked, but its runner is gone: lost. Marked, but it ended: forgotten.
            jobs[0].1 = "running";
            let p = project(base, "r-01", &roots.path().join("r"), &jobs);
            live::backfill(
                &p,
                &[
                    job_mark(&ids[0]),
                    job_mark(&ids[1]),
                    job_mark("1m8q4fhwprzza"),
                ],
            );
            let snap = snapshot_all(1 << 60, &Filter::default()).unwrap();
            let row = |id: &str| {
                snap.jobs
                    .iter()
                    .find(|j| j.job.job_id == id)
                    .map(|j| j.job.status)
            };
            assert_eq!(row(&ids[0]), Some("lost"));
            assert_eq!(row(&ids[1]), Some("success"));
            let (marks, _) = live::read(&p);
            assert!(marks.is_empty(), "stale marks are removed: {marks:?}");
        });
    }
}
