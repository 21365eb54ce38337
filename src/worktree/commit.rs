//! `settle`: stage what the peer left on disk (in baton's own index,
//! `staging`), revert paths outside `--allow`, commit with
//! `commit-tree`/`update-ref` (no hooks) and describe the branch. A failure
//! is `WorktreeCommitFailed`, naming what was left where.

use crate::error::{Error, Result};
use crate::git::pin::Pin;
use crate::result::Status;
use crate::run::Plan;

use super::allow::Allow;
use super::create::rev_of;
use super::finish::Report;
use super::repo;
use super::repo::{probe, run as git_run};
use super::staging::Staging;
use super::{Session, short};

/// What `settle` did.
pub(super) struct Settled {
    pub report: Report,
    /// Warnings for the result.
    pub notes: Vec<String>,
    /// What the peer changed, from where it started to what baton
    /// committed (reverted paths are not in it): the result's
    /// `changed_files`.
    pub changed: Vec<String>,
}

/// Stage, revert outside `--allow`, commit, and describe the branch. Errors
/// are `WorktreeTampered` or `WorktreeCommitFailed`.
pub(super) fn settle(s: &Session, plan: &Plan, status: Status) -> Result<Settled> {
    let pin = match s.pin() {
        Ok(p) => p,
        Err(e) => {
            return Err(Error::WorktreeCommitFailed {
                id: s.id.clone(),
                path: s.path.clone(),
                branch: s.branch.clone(),
                reason: e.to_string(),
                uncommitted: None,
            });
        }
    };
    if !s.path.is_dir() {
        return Err(failed(
            s,
            &pin,
            format!("the worktree's directory {} is gone", s.path.display()),
        ));
    }
    // Before the first git call: a rewired worktree is not worked in.
    pin.verify().map_err(|what| pin.tampered(&s.id, what))?;
    commit(s, plan, status, &pin).map_err(|e| match e {
        e @ Error::WorktreeTampered { .. } => e,
        e => failed(s, &pin, e.to_string()),
    })
}

/// The `WorktreeCommitFailed` for `reason`, with what is left uncommitted
/// on disk against the branch as it is now (as far as git can tell).
fn failed(s: &Session, pin: &Pin, reason: String) -> Error {
    let uncommitted = if s.path.is_dir() && pin.verify().is_ok() {
        rev_of(pin, &format!("refs/heads/{}", s.branch))
            .and_then(|tip| on_disk_against(s, pin, &tip).ok())
    } else {
        None
    };
    Error::WorktreeCommitFailed {
        id: s.id.clone(),
        path: s.path.clone(),
        branch: s.branch.clone(),
        reason,
        uncommitted,
    }
}

/// Paths whose content on disk differs from `tree` (a tree or a commit),
/// through a fresh index of baton's: never the peer's.
pub(super) fn on_disk_against(s: &Session, pin: &Pin, tree: &str) -> Result<Vec<String>> {
    Staging::new(pin, &s.root, &s.id, tree)?.differs_on_disk()
}

fn commit(s: &Session, plan: &Plan, status: Status, pin: &Pin) -> Result<Settled> {
    let pin = pin.clone();
    let mut notes = Vec::new();
    let branch_ref = format!("refs/heads/{}", s.branch);
    // The user's branch as it is before this run's import: the import's
    // compare-and-swap (a writer repository only; an older baton's linked
    // worktree shares the user's branch).
    let user_old = pin.own.then(|| rev_of(&s.top, &branch_ref)).flatten();
    let base_tree_rev = format!("{}^{{tree}}", s.base);
    // HEAD, its tree, the base's tree and the branch in one git call when
    // all four resolve (the usual case); one by one otherwise.
    let (head, head_tree, base_tree, old_branch) =
        match repo::revs(&pin, &["HEAD", "HEAD^{tree}", &base_tree_rev, &branch_ref]) {
            Some(mut v) => {
                let old = v.pop();
                let base_tree = v.pop();
                let head_tree = v.pop();
                (v.pop().unwrap_or_default(), head_tree, base_tree, old)
            }
            None => (
                repo::rev(&pin, "HEAD", "reading the worktree's HEAD")?,
                None,
                None,
                rev_of(&pin, &branch_ref),
            ),
        };
    let on_branch = probe({
        let mut g = pin.git();
        g.args(["symbolic-ref", "-q", "HEAD"]);
        g
    })
    .is_some_and(|(ok, r)| ok && r == branch_ref);
    let ident = repo::identity_env(&pin);
    let (label, by) = match &s.job_id {
        Some(j) => ("Baton-Job", j.as_str()),
        None => ("Baton-Run", s.id.as_str()),
    };
    let mut tip = head.clone();
    // The commits baton makes here, oldest first, with their subjects.
    let mut made: Vec<repo::Commit> = Vec::new();
    let mut tip_tree = head_tree;
    if !s.carried.is_empty() && head == s.base {
        // The user's carried changes get a commit of their own, so that
        // `git diff <that>..branch` is exactly the peer's work.
        let msg = format!(
            "baton: uncommitted changes carried from {} (--include-dirty)\n\n{label}: {by}\n",
            s.branch_source()
        );
        tip = repo::commit_tree(&pin, &s.start_tree, &tip, &msg, &ident)?;
        made.push(made_commit(&tip, &msg));
        tip_tree = Some(s.start_tree.clone());
    }
    let tip_tree = match tip_tree {
        Some(t) => t,
        None => repo::rev(&pin, &format!("{tip}^{{tree}}"), "reading a tree")?,
    };
    // The peer's commits are kept (baton commits on top of them), but what
    // baton commits is what is on disk, staged in its own index from the
    // tree it commits on: the worktree's index is the peer's to rewrite.
    let staging = Staging::new(&pin, &s.root, &s.id, &tip_tree)?;
    let mut tree = staging.add_all()?;
    let reverted = match Allow::new(&s.allow)? {
        None => Vec::new(),
        Some(allow) => {
            // Judged against where the peer started: carried changes stay.
            let outside: Vec<String> = repo::changed_paths(&pin, &s.start_tree, &tree)?
                .into_iter()
                .filter(|p| !allow.permits(p))
                .collect();
            if !outside.is_empty() {
                staging.restore(&s.start_tree, &outside)?;
                tree = staging.write_tree()?;
            }
            outside
        }
    };
    if tree != tip_tree {
        // A writer whose work others judge blind is not named here, where
        // they can read it (`git log`): only in baton's own records.
        let who = if s.anonymous {
            String::new()
        } else {
            format!("{} ", plan.agent.name())
        };
        let mut msg = format!(
            "baton: {who}run {} ({})\n\nWork the peer left uncommitted in the worktree, committed by baton.\nTask: {}\n",
            s.job_id.as_deref().unwrap_or(&s.id),
            status.as_str(),
            crate::agent::clip(
                plan.task
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or(""),
                200
            ),
        );
        if !reverted.is_empty() {
            msg.push_str(&format!(
                "Reverted outside --allow: {}\n",
                crate::agent::clip(&reverted.join(", "), 1000)
            ));
        }
        msg.push_str(&format!("\n{label}: {by}\n"));
        if !s.anonymous {
            msg.push_str(&format!("Baton-Agent: {}\n", plan.agent.name()));
        }
        tip = repo::commit_tree(&pin, &tree, &tip, &msg, &ident)?;
        made.push(made_commit(&tip, &msg));
    }
    // Again before the branch moves: a leftover process of the peer's may
    // still be writing.
    pin.verify().map_err(|what| pin.tampered(&s.id, what))?;
    if old_branch.as_deref() != Some(tip.as_str()) {
        let mut g = pin.git();
        g.args([
            "update-ref",
            "-m",
            "baton: commit the peer's work",
            &branch_ref,
            &tip,
        ]);
        if let Some(old) = &old_branch {
            // Compare-and-swap: never clobber a ref that moved under us.
            g.arg(old);
        }
        git_run(g, "moving the branch to baton's commit", None)?;
    }
    if !on_branch {
        notes.push(format!(
            "the peer left the worktree off its branch; {} now holds its work and is checked out again",
            s.branch
        ));
        let mut g = pin.git();
        g.args(["symbolic-ref", "HEAD", &branch_ref]);
        git_run(g, "checking the branch out again", None)?;
    }
    if pin.own {
        // Every object hashed and connected, the writer's configuration and
        // hooks never read (`import`).
        super::import::import(s, &tip, user_old.as_deref())?;
    }
    // The worktree's own index now says what the branch says (`git status`
    // there is clean), whatever the peer had made of it.
    if let Err(e) = staging.install() {
        notes.push(format!(
            "the worktree's own index could not be updated ({e}): `git status` in {} may not \
             match {}",
            s.path.display(),
            s.branch
        ));
    }
    drop(staging);
    let changed = repo::changed_paths(&pin, s.run_from(), &tree)?;
    // The peer made no commit of its own (HEAD is still the base): the
    // branch is the base plus baton's commits, so what git would say about
    // its history is known. Otherwise git is asked.
    let untouched = head == s.base;
    let contains_base = untouched
        || probe({
            let mut g = pin.git();
            g.args(["merge-base", "--is-ancestor", &s.base, &tip]);
            g
        })
        .is_some_and(|(ok, _)| ok);
    if !contains_base {
        notes.push(format!(
            "the peer rewrote history: {} no longer contains its base {}",
            s.branch,
            short(&s.base)
        ));
    }
    // `tip`'s tree is `tree`: from where the run started to it is from
    // the base to the branch when the run started at the base's tree.
    let on_branch_changed = if base_tree.as_deref() == Some(s.run_from()) {
        changed.clone()
    } else {
        repo::changed_paths(&pin, &s.base, &tip)?
    };
    let attributes = |p: &String| p == ".gitattributes" || p.ends_with("/.gitattributes");
    if !crate::git::has_attr_source() && on_branch_changed.iter().any(attributes) {
        notes.push(
            "the peer changed a .gitattributes, and this git (older than 2.40) cannot keep \
             baton's own git calls from reading it: a filter driver you configured may have \
             run on the peer's files (see docs/worktree.md, Safety)"
                .into(),
        );
    }
    if !reverted.is_empty() {
        notes.push(format!(
            "reverted {} path(s) changed outside --allow: {}",
            reverted.len(),
            crate::agent::clip(&reverted.join(", "), 300)
        ));
    }
    let report = Report {
        id: s.id.clone(),
        path: s.path.clone(),
        branch: s.branch.clone(),
        base: s.base.clone(),
        head: tip.clone(),
        commits: if untouched {
            made
        } else {
            repo::commits(&pin, &s.base, &tip)?
        },
        diffstat: repo::diffstat(&pin, &s.base, &tip)?,
        changed_files: on_branch_changed,
        commit: Some(tip.clone()),
        // The sha, not the branch: the branch is a name anyone with write
        // access to the repository can move (`branch_moved`).
        merge_hint: Some(format!("git merge {tip}")),
        reverted,
        carried: s.carried.clone(),
    };
    Ok(Settled {
        report,
        notes,
        changed,
    })
}

/// A commit baton just made with `message`, as `git log --format=%s`
/// lists it: its subject is the message's first paragraph, lines joined
/// by spaces.
fn made_commit(sha: &str, message: &str) -> repo::Commit {
    let subject: Vec<&str> = message
        .trim_start_matches('\n')
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    repo::Commit {
        sha: sha.to_string(),
        subject: subject.join(" "),
    }
}

impl Session {
    pub(super) fn branch_source(&self) -> String {
        match &self.user_branch {
            Some(b) => format!("`{b}`"),
            None => format!("the detached HEAD at {}", short(&self.base)),
        }
    }
}
