//! `baton worktree list|remove`: the `Manage` request and its printing.
//! The store of worktrees itself is `store`.

use serde_json::json;

use crate::error::{Error, Result};
use crate::output::{self, Mode};
use crate::result::SCHEMA_VERSION;

use super::short;
use super::store;

/// What `baton worktree` does.
#[derive(Debug, Clone)]
pub enum Manage {
    List,
    Remove {
        id: String,
        branch: bool,
        force: bool,
    },
}

/// `baton worktree list|remove`.
pub fn command(cmd: Manage, mode: Mode) -> Result<i32> {
    let cwd = std::env::current_dir().map_err(|e| Error::io("reading the current directory", e))?;
    let root = store::store_root(&cwd);
    match cmd {
        Manage::List => {
            let entries = store::list(&root)?;
            match mode {
                Mode::Json => output::json_line(&json!({
                    "schema_version": SCHEMA_VERSION,
                    "root": root,
                    "worktrees": entries,
                }))?,
                Mode::Text => {
                    let mut t = String::new();
                    if entries.is_empty() {
                        t.push_str(&format!(
                            "no worktrees in {}\n",
                            store::dir(&root).display()
                        ));
                    }
                    for e in &entries {
                        let d = e.diffstat.unwrap_or_default();
                        t.push_str(&format!(
                            "{}  {:<11} {:>4}  {}  {} file(s) +{} -{}  {}  {}\n",
                            e.id,
                            e.state,
                            e.age_secs
                                .map(store::human_age)
                                .unwrap_or_else(|| "?".into()),
                            e.branch,
                            d.files,
                            d.insertions,
                            d.deletions,
                            e.agent.as_deref().unwrap_or("?"),
                            e.task.as_deref().unwrap_or("")
                        ));
                    }
                    output::text(&t)?;
                }
            }
            Ok(0)
        }
        Manage::Remove { id, branch, force } => {
            let r = store::remove(&root, &id, branch, force)?;
            match mode {
                Mode::Json => output::json_line(&json!({
                    "schema_version": SCHEMA_VERSION,
                    "removed": r,
                }))?,
                Mode::Text => {
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
                    output::text(&t)?;
                }
            }
            Ok(0)
        }
    }
}
