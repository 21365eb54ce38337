//! `settle`: stage what the peer left, revert paths outside `--allow`, commit
//! with `commit-tree`/`update-ref` (no hooks) and describe the branch.

use crate::error::{Error, Result};
use crate::result::Status;
use crate::run::Plan;

use super::allow::Allow;
use super::create::rev_of;
use super::finish::Report;
use super::repo;
use super::repo::{line, probe, run as git_run};
use super::{Session, short};

/// Stage, revert outside `--allow`, commit, and describe the branch.
pub(super) fn settle(s: &Session, plan: &Plan, status: Status) -> Result<(Report, Vec<String>)> {
    if !s.path.is_dir() {
        return Err(Error::io(
            "reading the worktree",
            std::io::Error::new(std::io::ErrorKind::NotFound, "its directory is gone"),
        ));
    }
    let pin = s.pin()?;
    // Before the first git call: a rewired worktree is not worked in.
    pin.verify().map_err(|what| pin.tampered(&s.id, what))?;
    let mut notes = Vec::new();
    let mut g = pin.git();
    g.args(["add", "--all"]);
    git_run(g, "staging what the peer left", None)?;

    let reverted = match Allow::new(&s.allow)? {
        None => Vec::new(),
        Some(allow) => {
            let mut g = pin.git();
            g.arg("diff").args(crate::git::DIFF).args([
                "--cached",
                "--name-only",
                "--no-renames",
                "-z",
                &s.start_tree,
                "--",
            ]);
            let outside: Vec<String> =
                repo::nul_paths(&git_run(g, "listing the peer's changes", None)?)
                    .into_iter()
                    .filter(|p| !allow.permits(p))
                    .collect();
            if !outside.is_empty() {
                let mut list = Vec::new();
                for p in &outside {
                    list.extend_from_slice(p.as_bytes());
                    list.push(0);
                }
                let mut g = pin.git();
                g.env("GIT_LITERAL_PATHSPECS", "1").args([
                    "restore",
                    "--source",
                    &s.start_tree,
                    "--staged",
                    "--worktree",
                    "--pathspec-from-file=-",
                    "--pathspec-file-nul",
                ]);
                git_run(g, "reverting changes outside --allow", Some(&list))?;
            }
            outside
        }
    };

    let head = repo::rev(&pin, "HEAD", "reading the worktree's HEAD")?;
    let branch_ref = format!("refs/heads/{}", s.branch);
    let on_branch = probe({
        let mut g = pin.git();
        g.args(["symbolic-ref", "-q", "HEAD"]);
        g
    })
    .is_some_and(|(ok, r)| ok && r == branch_ref);
    let old_branch = rev_of(&pin, &branch_ref);
    let tree = {
        let mut g = pin.git();
        g.arg("write-tree");
        line(g, "writing the worktree's tree")?
    };
    let ident = repo::identity_env(&pin);
    let (label, by) = match &s.job_id {
        Some(j) => ("Baton-Job", j.as_str()),
        None => ("Baton-Run", s.id.as_str()),
    };
    let mut tip = head.clone();
    if !s.carried.is_empty() && head == s.base {
        // The user's carried changes get a commit of their own, so that
        // `git diff <that>..branch` is exactly the peer's work.
        let msg = format!(
            "baton: uncommitted changes carried from {} (--include-dirty)\n\n{label}: {by}\n",
            s.branch_source()
        );
        tip = repo::commit_tree(&pin, &s.start_tree, &tip, &msg, &ident)?;
    }
    let tip_tree = repo::rev(&pin, &format!("{tip}^{{tree}}"), "reading a tree")?;
    if tree != tip_tree {
        let mut msg = format!(
            "baton: {} run {} ({})\n\nWork the peer left uncommitted in the worktree, committed by baton.\nTask: {}\n",
            plan.agent.name(),
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
        msg.push_str(&format!(
            "\n{label}: {by}\nBaton-Agent: {}\n",
            plan.agent.name()
        ));
        tip = repo::commit_tree(&pin, &tree, &tip, &msg, &ident)?;
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
    let contains_base = probe({
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
    let changed = repo::changed_paths(&pin, &s.base, &tip)?;
    let attributes = |p: &String| p == ".gitattributes" || p.ends_with("/.gitattributes");
    if !crate::git::has_attr_source() && changed.iter().any(attributes) {
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
        commits: repo::commits(&pin, &s.base, &tip)?,
        diffstat: repo::diffstat(&pin, &s.base, &tip)?,
        changed_files: changed,
        merge_hint: format!("git merge {}", s.branch),
        reverted,
        carried: s.carried.clone(),
    };
    Ok((report, notes))
}

impl Session {
    pub(super) fn branch_source(&self) -> String {
        match &self.user_branch {
            Some(b) => format!("`{b}`"),
            None => format!("the detached HEAD at {}", short(&self.base)),
        }
    }
}
