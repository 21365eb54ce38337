//! Worktree mode: `baton run --worktree` lets a peer write code without
//! touching the user's checkout.
//!
//! Theory of operation:
//! - `check` validates everything that can fail fast (a git repository with
//!   commits, `--base` a commit, not read-only, globs) and creates nothing.
//! - `prepare` makes `.baton/worktrees/<id>`, a repository of its own whose
//!   objects are read from the user's (`objects/info/alternates`), on a new
//!   branch `baton/<id>` from the base commit (created in the user's
//!   repository too), and returns the run's `Plan` moved there (`cwd`, the
//!   brief, `writable_dirs`: its own `.git`, so a sandboxed peer can commit;
//!   and `protected_paths`: all of the user's git state, for a CLI whose
//!   sandbox would open it up on its own, as claude's does). With
//!   `--include-dirty` the user's uncommitted state is snapshotted through a
//!   *temporary* index (a copy of theirs): `write-tree` gives the staged
//!   tree, `add -A` + `write-tree` the work-tree state including untracked,
//!   not-ignored files. Only new objects are written to the repository; the
//!   user's files, index, HEAD and branches are never written (`git stash
//!   create` was not used: it rewrites the index). The worktree is then set
//!   to exactly what the user has: HEAD = base, index = staged tree, files =
//!   work-tree state.
//! - The peer runs there under `run::execute`, like any run.
//! - `finish` stages what the peer left on disk into an index of baton's own
//!   (`staging`: the worktree's index is the peer's, which it may have
//!   rewritten), reverts paths outside `--allow` (relative to where the peer
//!   started, so carried changes stay), commits with
//!   `commit-tree`/`update-ref` (no hooks), imports the commit into the
//!   user's repository (`import`: a fetch that hashes every object, never
//!   reading the writer's config or hooks), fills the result's `worktree`
//!   object, then runs `--test-cmd` in a fresh checkout of that commit
//!   (`checkout`: nothing the peer left beside it is tested) and fills
//!   `verification`; a failed check takes `merge_hint` away. A commit that fails makes the run `failed`
//!   (`worktree_commit_failed`, naming what was left where); the peer's
//!   message, session and logs stay in the result.
//!
//! baton never merges, pushes or deletes a branch on its own; `baton
//! worktree remove <id> --branch` is the explicit way.
//!
//! Seams for the features that write through worktrees: `attempt` is one
//! writer's first round and the rounds that resume it in the same worktree
//! (a council's writer, a fan-out's candidates); `oracle` is baton's own
//! check of an attempt (the test command, `git diff --check`).
//!
//! Seams for background jobs: a job stores the `Plan` that `prepare`
//! returned and the serialisable `Session`; its runner calls `run::execute`
//! and then `finish` with a `verify::Stop` it installed before the peer
//! started. `store::list` / `store::remove` serve `baton prune`.

pub mod allow;
pub mod attempt;
pub mod oracle;
pub mod repo;
pub mod store;
pub mod verify;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::Result;
use crate::git::pin::Pin;
use crate::output::{self, Mode};
use crate::run::{self, Plan};
use crate::{ids, process};

mod check;
mod checkout;
mod commit;
mod create;
mod finish;
mod import;
mod include_dirty;
mod manage;
mod places;
mod staging;

pub use check::check;
pub use create::{abandon, prepare};
pub use finish::{NotCommitted, Report, finish};
pub use manage::{Manage, Select, command};
pub use places::Places;

/// Everything `check` established; creates nothing. A background job
/// stores it, so a fallback agent gets a fresh worktree from it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Checked {
    /// The user's repository top (canonical).
    pub top: PathBuf,
    /// The run's cwd relative to `top` (the peer gets the same place in the worktree).
    pub rel_cwd: PathBuf,
    /// The repository's common git directory (absolute).
    pub common_dir: PathBuf,
    /// The commit the branch starts from.
    pub base: String,
    /// Its tree, when `check` read it (so each worktree need not ask).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_tree: Option<String>,
    /// The branch the user is on, for messages (`None`: detached).
    pub user_branch: Option<String>,
    pub include_dirty: bool,
    pub allow: Vec<String>,
    pub test_cmd: Option<String>,
    /// baton's commits name no agent (`attempt::first`): a fan-out's judges
    /// and a council's reviewers, who must not know whose work they read,
    /// can run `git log` on the branch. Who wrote it stays in baton's own
    /// records (the worktree's record, the fan-out's or council's result).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub anonymous: bool,
    /// What `worktree list` shows as the worktree's task when the peer's
    /// task is not it (a council's writer gets a brief; the list shows the
    /// council's task). `None`: the first line of the peer's task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `user.name`/`user.email` as the user's repository's own
    /// configuration sets them, as a config section for the writer's
    /// repository (`None`: it sets neither; the global one applies there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
}

/// A prepared worktree, as the run's end needs it. Serialisable so a
/// background job can store it beside its plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    /// Where `.baton/` is (the run's `plan.root`).
    pub root: PathBuf,
    /// The user's repository top.
    pub top: PathBuf,
    pub path: PathBuf,
    pub branch: String,
    pub base: String,
    /// The tree the peer started from: the base's, or the user's carried state.
    pub start_tree: String,
    /// Paths `--include-dirty` carried in (differing from `base`).
    #[serde(default)]
    pub carried: Vec<String>,
    /// The branch the user was on (`None`: detached), for the carry commit.
    #[serde(default)]
    pub user_branch: Option<String>,
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub test_cmd: Option<String>,
    /// Where the worktree's git metadata is, as baton made it (`None` in a
    /// session stored by an older baton: derived when needed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<Pin>,
    /// The tree a later run in the same worktree started from (`baton
    /// continue`, a council's repair round: `again`), so that its
    /// `changed_files` are its own; `None`: `start_tree`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_from: Option<String>,
    /// baton's commits name no agent (`Checked::anonymous`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub anonymous: bool,
    /// The user's repository's common git directory, where baton imports
    /// the writer's commit (`None` in a session stored by an older baton,
    /// whose worktree is a linked one: its pin's common directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_dir: Option<PathBuf>,
}

impl Session {
    /// The worktree's pin (derived for a session an older baton stored).
    pub fn pin(&self) -> Result<Pin> {
        match &self.pin {
            Some(p) => Ok(p.clone()),
            None => Pin::derive(&self.path, &self.top, &self.start_tree),
        }
    }

    /// The user's repository's common git directory.
    pub fn user_common_dir(&self) -> Result<PathBuf> {
        if let Some(d) = &self.common_dir {
            return Ok(d.clone());
        }
        let pin = self.pin()?;
        if pin.own {
            return Err(crate::error::Error::Internal(
                "a writer repository's session names no user repository".into(),
            ));
        }
        Ok(pin.common_dir)
    }

    /// This session for another run of a peer in the same worktree: its
    /// changes are counted from what the branch holds now. (`--allow` is
    /// still judged from `start_tree`, where the first run started.)
    pub fn again(&self) -> Session {
        let tip = self.pin().ok().and_then(|p| {
            repo::rev(
                &p,
                &format!("refs/heads/{}^{{tree}}", self.branch),
                "reading the branch",
            )
            .ok()
        });
        Session {
            run_from: tip.or_else(|| self.run_from.clone()),
            ..self.clone()
        }
    }

    /// The tree this run's `changed_files` are counted from.
    fn run_from(&self) -> &str {
        self.run_from.as_deref().unwrap_or(&self.start_tree)
    }
}

/// Why `branch` of the user's repository at `top` no longer names `commit`,
/// the commit baton imported and tested there; `None` when it still does.
/// A branch is a name anything with write access to the repository can
/// move (issue 31: a fan-out candidate moved a sibling's tested branch, and
/// the wrong code won), so a winner or a ready council is named only after
/// this check (`branch_moved`).
pub fn branch_moved(top: &std::path::Path, branch: &str, commit: &str) -> Option<String> {
    let now = create::rev_of(top, &format!("refs/heads/{branch}"));
    match now {
        Some(n) if n == commit => None,
        Some(n) => Some(format!(
            "branch_moved: `{branch}` points at {}, not at {}, the commit baton tested",
            short(&n),
            short(commit)
        )),
        None => Some(format!(
            "branch_moved: `{branch}` is gone; baton tested {}",
            short(commit)
        )),
    }
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// `baton run --worktree` in the foreground.
/// `peer_ended` is called as soon as the peer has ended, before the
/// check and the commit (the command line erases its live line there).
pub fn run(
    plan: Plan,
    c: &Checked,
    mode: Mode,
    peer_ended: &mut dyn FnMut(),
    mut notice: run::Notice,
) -> Result<i32> {
    let spec = plan.command()?;
    plan.program(&spec)?;
    plan.check_chain_installed()?;
    // Both installed before the peer exists: a Ctrl-C can never orphan it,
    // and one that lands after it ends still stops the --test-cmd.
    let mut interrupts = process::Interrupts::install()?;
    let stop = verify::Stop::install()?;
    let (id, dir) = run::new_run_dir(&plan.root)?;
    let (wplan, session) = match prepare(c, &plan, &id, None) {
        Ok(x) => x,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(e);
        }
    };
    // Each fallback agent in a fresh worktree at the same base.
    let mut places = Places::new(Some(c), None, session, wplan.clone());
    notice.id = Some(id.clone());
    notice.record = Some(dir.clone());
    let stalls = notice.stalls(wplan.agent.name(), &dir);
    let executed = {
        let mut on_spawn = |_| {};
        let mut fresh = |p: &Plan| places.fresh(p);
        let mut hooks = run::Hooks::new(&mut on_spawn);
        hooks.fresh = Some(&mut fresh);
        run::chain::run(&wplan, Some(&dir), &mut interrupts, hooks)
    };
    drop(stalls);
    peer_ended();
    let (session, wplan) = places.last();
    let mut result = match executed {
        Ok(r) => r,
        Err(e) => {
            abandon(session);
            notice.failed(wplan.agent.name(), &e);
            return Err(e);
        }
    };
    finish(session, wplan, &mut result, &dir, &stop);
    output::print_result(&result, mode)?;
    notice.ended(&result);
    Ok(result.exit_code())
}

/// What `--dry-run --worktree` prints: the run as it would be, in a
/// worktree that is not created (its id is a placeholder).
pub fn dry_run_json(c: &Checked, plan: &Plan) -> Result<Value> {
    dry_run_json_as(c, plan, &ids::new_id())
}

/// `dry_run_json` for worktree `id` (a fan-out names its candidates').
pub fn dry_run_json_as(c: &Checked, plan: &Plan, id: &str) -> Result<Value> {
    let path = store::dir(&plan.root).join(id);
    let branch = format!("baton/{id}");
    let p = c.plan_for(plan, &path, &branch, c.writable_dirs(&path));
    let spec = p.command()?;
    let mut j = run::dry_run_json(&p, &spec);
    j["worktree"] = json!({
        "path": path,
        "branch": branch,
        "base": c.base,
        "include_dirty": c.include_dirty,
        "allow": c.allow,
        "test_cmd": c.test_cmd,
        "note": "--dry-run creates nothing; the id is a placeholder",
    });
    Ok(j)
}

/// `run --worktree` and its options, as asked for.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WorktreeOptions {
    /// Run in a new worktree at all.
    pub enabled: bool,
    /// The commit to branch from (default: HEAD).
    pub base: Option<String>,
    pub include_dirty: bool,
    /// The only paths the peer may change.
    pub allow: Vec<String>,
    /// A check to run in the worktree after the peer.
    pub test_cmd: Option<String>,
}
