//! A fresh checkout of the commit under test, where the test command runs:
//! exactly the files the branch holds, nothing a peer left beside them.
//!
//! Testing in the peer's own worktree tested more than the branch: an
//! ignored file the peer left (a stale `__pycache__/*.pyc`, a build
//! artifact) made a wrong answer pass, and a process the peer left running
//! rewrote a file after baton's commit and before the tests. So the test
//! command gets a detached linked worktree of the commit, made after the
//! peer's processes were stopped, in baton's state directory
//! (`checks/<id>`, beyond a sandboxed peer's reach), and removed after the
//! check. It is a linked worktree of the user's repository, made as the
//! peer's was (`git worktree add --no-checkout`, then `read-tree -u` with
//! attributes pinned to the tree the peer started from): git commands in
//! the test command see the repository's history, tags and configuration
//! (Git LFS included) as in the peer's worktree.
//!
//! The price: nothing the peer built is reused (a test command that builds
//! builds from scratch), and what the test command writes goes with the
//! checkout.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::git::pin::Pin;

use super::Session;
use super::create::REGISTER;
use super::repo::{self, line, probe, run as git_run};

/// A checkout of `commit` for worktree `id`'s check; removed by `remove`
/// (or, failing that, when dropped).
pub struct Checkout {
    /// Its top directory.
    pub top: PathBuf,
    /// The user's repository top, where it is registered.
    repo_top: PathBuf,
    /// The repository's common git directory.
    common_dir: PathBuf,
    /// Its git directory (`<common>/worktrees/<name>`), once git made it.
    git_dir: Option<PathBuf>,
    removed: bool,
}

impl Checkout {
    /// Check `commit` out for the check of worktree session `s`.
    pub fn make(s: &Session, commit: &str) -> Result<Checkout> {
        let dir = crate::state_dir::ensure_sub(&s.root, "checks")?;
        let path = dir.join(&s.id);
        // The user's repository: the commit was imported there.
        let common_dir = s.user_common_dir()?;
        let mut c = Checkout {
            top: path.clone(),
            repo_top: s.top.clone(),
            common_dir: common_dir.clone(),
            git_dir: None,
            removed: false,
        };
        // One left by a baton that died during a check of this worktree.
        if path.exists() {
            c.remove_leftover();
        }
        let mut g = repo::git(&s.top);
        // `--force`: a registration of this path that a dead baton left
        // (its directory gone) is taken over instead of refused.
        g.args([
            "worktree",
            "add",
            "--quiet",
            "--force",
            "--detach",
            "--no-checkout",
        ])
        .arg(&path)
        .arg(commit);
        {
            let _one_at_a_time = REGISTER.lock().unwrap_or_else(|e| e.into_inner());
            git_run(g, "making a fresh checkout for the test command", None)?;
        }
        let mut g = repo::git(&path);
        g.args(["rev-parse", "--absolute-git-dir"]);
        let git_dir = PathBuf::from(line(g, "finding the checkout's git directory")?);
        c.git_dir = Some(git_dir.clone());
        // The peer's `.gitattributes` choose no filter for baton's own git
        // call: attributes come from the tree the peer started from.
        let pinned = Pin::record(&path, &git_dir, &common_dir, &s.start_tree)?;
        let mut g = pinned.git();
        g.args(crate::git::PARALLEL_CHECKOUT)
            .args(["read-tree", "-u", "--reset", commit]);
        git_run(g, "checking the commit out for the test command", None)?;
        Ok(c)
    }

    /// Where a command that ran in `rel` of the worktree runs here (made
    /// empty when the commit has no such directory).
    pub fn cwd(&self, rel: &Path) -> Result<PathBuf> {
        let at = self.top.join(rel);
        if !at.is_dir() {
            std::fs::create_dir_all(&at)
                .map_err(|e| Error::io(format!("creating {}", at.display()), e))?;
        }
        Ok(at)
    }

    /// Remove the checkout and its registration. A warning when something
    /// stays.
    pub fn remove(mut self) -> Option<String> {
        self.removed = true;
        self.take_away()
    }

    fn take_away(&self) -> Option<String> {
        let mut g = repo::git(&self.repo_top);
        g.args(["worktree", "remove", "--force", "--force"])
            .arg(&self.top);
        let _ = probe(g);
        if self.top.exists() {
            // Files the test command made unwritable, say: what git left.
            let _ = make_writable(&self.top);
            let _ = std::fs::remove_dir_all(&self.top);
        }
        if let Some(d) = &self.git_dir
            && d.exists()
        {
            let _ = std::fs::remove_dir_all(d);
        }
        self.top.exists().then(|| {
            format!(
                "the test command's checkout {} could not be removed",
                self.top.display()
            )
        })
    }

    /// A checkout of the same name left by a baton that died: the
    /// directory, and the registration that points at it (only that one:
    /// `git worktree prune` would judge every worktree of the user's).
    fn remove_leftover(&mut self) {
        let _ = make_writable(&self.top);
        let _ = std::fs::remove_dir_all(&self.top);
        let dot_git = self.top.join(".git");
        let Ok(entries) = std::fs::read_dir(self.common_dir.join("worktrees")) else {
            return;
        };
        for e in entries.flatten() {
            let points_here = std::fs::read_to_string(e.path().join("gitdir"))
                .is_ok_and(|g| Path::new(g.trim_end()) == dot_git);
            if points_here {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
}

/// Remove worktree `id`'s checkout if a baton that died left one (its
/// worktree is being removed: `worktree remove`, `prune`, a fan-out's
/// losers).
pub(super) fn remove_left(root: &Path, id: &str) {
    let Ok(dir) = crate::state_dir::project(root) else {
        return;
    };
    let path = dir.join("checks").join(id);
    if !path.exists() {
        return;
    }
    let mut g = repo::git(root);
    g.args(["worktree", "remove", "--force", "--force"])
        .arg(&path);
    let _ = probe(g);
    if path.exists() {
        let _ = make_writable(&path);
        let _ = std::fs::remove_dir_all(&path);
    }
}

impl Drop for Checkout {
    fn drop(&mut self) {
        if !self.removed {
            let _ = self.take_away();
        }
    }
}

/// Give the owner write permission on every directory below `top`, so
/// that what is in them can be removed.
pub(super) fn make_writable(top: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::symlink_metadata(top)?;
    if !meta.is_dir() {
        return Ok(());
    }
    let mode = meta.permissions().mode();
    if mode & 0o700 != 0o700 {
        std::fs::set_permissions(top, std::fs::Permissions::from_mode(mode | 0o700))?;
    }
    for e in std::fs::read_dir(top)? {
        let e = e?;
        if e.file_type()?.is_dir() {
            make_writable(&e.path())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwritable_directories_are_made_removable() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let top = d.path().join("c");
        std::fs::create_dir_all(top.join("a/b")).unwrap();
        std::fs::write(top.join("a/b/f"), "x").unwrap();
        std::fs::set_permissions(top.join("a"), std::fs::Permissions::from_mode(0o500)).unwrap();
        make_writable(&top).unwrap();
        std::fs::remove_dir_all(&top).unwrap();
        assert!(!top.exists());
    }
}
