//! `baton worktree list|remove`: the `Manage` request and its printing.
//! The store of worktrees itself is `store`.
//!
//! `remove --all|--merged|--finished` removes every worktree the selection
//! picks, one by one as `remove ID` would: one that cannot go (a run works
//! in it, uncommitted changes without `--force`) is skipped with the reason,
//! and the others still go.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::output::render::{Render, table};
use crate::output::{self, Mode};
use crate::result::SCHEMA_VERSION;

use super::store::{self, Entry, Removed};
use super::{repo, short};

/// What `baton worktree` does.
#[derive(Debug, Clone)]
pub enum Manage {
    List,
    Remove {
        id: String,
        branch: bool,
        force: bool,
    },
    /// Every worktree `select` picks.
    RemoveMany {
        select: Select,
        branch: bool,
        force: bool,
    },
}

/// Which worktrees `remove` takes without an id. `all` takes every one;
/// otherwise each flag set must hold (`--merged --finished`: both).
#[derive(Debug, Clone, Copy, Default)]
pub struct Select {
    pub all: bool,
    /// Its branch is merged into HEAD, as `git branch -d` judges it (a
    /// branch of baton's has no upstream).
    pub merged: bool,
    /// Its run finished (not running, not interrupted).
    pub finished: bool,
}

/// A worktree the selection picked that stays, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub id: String,
    pub reason: String,
    pub hint: Option<String>,
}

/// `baton worktree list|remove`.
pub fn command(cmd: Manage, mode: Mode) -> Result<i32> {
    let cwd = std::env::current_dir().map_err(|e| Error::io("reading the current directory", e))?;
    let root = store::store_root(&cwd);
    match cmd {
        Manage::List => output::emit(
            &Listed {
                schema_version: SCHEMA_VERSION,
                worktrees: store::list(&root)?,
                root,
            },
            mode,
        ),
        Manage::Remove { id, branch, force } => output::emit(
            &RemovedOne {
                schema_version: SCHEMA_VERSION,
                removed: store::remove(&root, &id, branch, force)?,
            },
            mode,
        ),
        Manage::RemoveMany {
            select,
            branch,
            force,
        } => {
            let (removed, skipped) = remove_many(&root, select, branch, force)?;
            output::emit(
                &RemovedMany {
                    schema_version: SCHEMA_VERSION,
                    removed,
                    skipped,
                },
                mode,
            )
        }
    }
}

/// `worktree list`.
#[derive(Serialize)]
struct Listed {
    schema_version: u32,
    root: PathBuf,
    worktrees: Vec<Entry>,
}

impl Render for Listed {
    fn exit_code(&self) -> i32 {
        0
    }

    fn text(&self) -> String {
        list_text(&self.root, &self.worktrees)
    }
}

/// `worktree remove ID`.
#[derive(Serialize)]
struct RemovedOne {
    schema_version: u32,
    removed: Removed,
}

impl Render for RemovedOne {
    fn exit_code(&self) -> i32 {
        0
    }

    fn text(&self) -> String {
        removed_text(&self.removed)
    }
}

/// `worktree remove --all|--merged|--finished`.
#[derive(Serialize)]
struct RemovedMany {
    schema_version: u32,
    removed: Vec<Removed>,
    skipped: Vec<Skipped>,
}

impl Render for RemovedMany {
    /// Something picked stayed: a script should not take it as done.
    fn exit_code(&self) -> i32 {
        if self.skipped.is_empty() { 0 } else { 1 }
    }

    fn text(&self) -> String {
        let mut t: String = self.removed.iter().map(removed_text).collect();
        for s in &self.skipped {
            t.push_str(&format!("skipped {}: {}\n", s.id, s.reason));
            if let Some(h) = &s.hint {
                t.push_str(&format!("  hint: {h}\n"));
            }
        }
        if self.removed.is_empty() && self.skipped.is_empty() {
            t.push_str("no worktree to remove\n");
        }
        t
    }
}

/// The worktrees `select` picks, removed; those that could not go, skipped.
fn remove_many(
    root: &Path,
    select: Select,
    branch: bool,
    force: bool,
) -> Result<(Vec<Removed>, Vec<Skipped>)> {
    let (mut removed, mut skipped) = (Vec::new(), Vec::new());
    for e in store::list(root)? {
        let picked = select.all
            || ((!select.finished || e.state == "finished")
                && (!select.merged || merged(root, &e)));
        if !picked {
            continue;
        }
        match store::remove(root, &e.id, branch, force) {
            Ok(r) => removed.push(r),
            Err(err) => skipped.push(Skipped {
                id: e.id,
                reason: err.to_string(),
                hint: err.hint(),
            }),
        }
    }
    Ok((removed, skipped))
}

/// Whether `e`'s branch is merged into HEAD, as `git branch -d` judges it: its
/// tip is HEAD or an ancestor of it. A branch that is gone is not merged.
fn merged(root: &Path, e: &Entry) -> bool {
    let Some(head) = &e.head else {
        return false;
    };
    let mut c = repo::git(root);
    c.args(["merge-base", "--is-ancestor", head, "HEAD"]);
    repo::probe(c).is_some_and(|(ok, _)| ok)
}

/// `worktree list --text`: a header, then one aligned row per worktree.
fn list_text(root: &Path, entries: &[Entry]) -> String {
    if entries.is_empty() {
        return format!("no worktrees in {}\n", store::dir(root).display());
    }
    let mut rows = vec![
        ["ID", "STATE", "AGE", "BRANCH", "CHANGES", "AGENT", "TASK"]
            .map(String::from)
            .to_vec(),
    ];
    for e in entries {
        let d = e.diffstat.unwrap_or_default();
        rows.push(vec![
            e.id.clone(),
            e.state.to_string(),
            e.age_secs.map_or_else(|| "?".into(), store::human_age),
            e.branch.clone(),
            format!("{} file(s) +{} -{}", d.files, d.insertions, d.deletions),
            e.agent.clone().unwrap_or_else(|| "?".into()),
            crate::agent::clip(e.task.as_deref().unwrap_or(""), 80),
        ]);
    }
    table(&rows)
}

fn removed_text(r: &Removed) -> String {
    let mut t = String::new();
    if r.worktree_removed {
        t.push_str(&format!("removed worktree {}\n", r.path.display()));
    }
    match (r.branch_deleted, &r.head) {
        (true, Some(h)) => t.push_str(&format!(
            "deleted branch {} (was {}; `git branch {} {}` restores it)\n",
            r.branch,
            short(h),
            r.branch,
            h
        )),
        (false, Some(_)) => t.push_str(&format!(
            "kept branch {} (delete it with --branch, or `git branch -D {}`)\n",
            r.branch, r.branch
        )),
        _ => {}
    }
    t
}

/// Why a worktree with uncommitted paths is not removed without `--force`,
/// and what to do: the paths came after baton's commit, or were left by a
/// run interrupted before it (a job can be continued), or by a peer that
/// tampered with the worktree (nothing there is to be trusted to git).
pub(super) fn refuse_uncommitted(
    id: &str,
    rec: Option<&store::Record>,
    tampered_now: bool,
    branch: &str,
    dirty: &[String],
) -> Error {
    let tampered = tampered_now || rec.is_some_and(|r| r.tampered.is_some());
    let interrupted = rec.filter(|r| r.finished_ms.is_none());
    let (why, hint) = if tampered {
        (
            "the peer tampered with the worktree's git metadata, so baton committed nothing"
                .to_string(),
            "look at the files if you like (do not run git inside it: its git metadata is the \
             peer's), then pass --force to remove it"
                .to_string(),
        )
    } else if let Some(r) = interrupted {
        (
            "its run was interrupted before baton committed the peer's work".to_string(),
            match &r.job_id {
                Some(j) => format!(
                    "`baton continue {j}` works there again and commits it, or pass --force to \
                     discard it"
                ),
                None => "commit them in the worktree, or pass --force to discard them".into(),
            },
        )
    } else {
        (
            format!("baton committed the peer's work on `{branch}`, so these came later"),
            "commit them in the worktree, or pass --force to discard them".into(),
        )
    };
    Error::usage_hint(
        format!(
            "worktree `{id}` has {} uncommitted path(s) ({}); {why}",
            dirty.len(),
            preview(dirty)
        ),
        hint,
    )
}

fn preview(paths: &[String]) -> String {
    let mut s = paths
        .iter()
        .take(5)
        .map(|p| format!("`{p}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > 5 {
        s.push_str(", …");
    }
    s
}
