//! baton's own index for a worktree (`Staging`): what the peer changed, the
//! `--allow` revert and baton's commit come from the files on disk, never
//! from the index the peer may have rewritten.
//!
//! The worktree's index (`<git dir>/index`) is the peer's: it can mark
//! files `skip-worktree` or `assume-unchanged` (then `git add -A` passes
//! over their edits), stage entries that are not on disk (`update-index
//! --add --cacheinfo`), untrack files (`rm --cached`) or write garbage
//! there. So baton reads the tree it commits on into an index file of its
//! own, in the project's state directory (0700, beyond a sandboxed peer's
//! reach; the file itself 0600), and stages the work tree into that:
//! tracked paths are what the tree has, their content and every new,
//! not-ignored file are what is on disk (`.gitignore` honoured as `git add
//! -A` does). When baton has committed, the worktree's own index is
//! replaced by this one, so that `git status` there agrees with the branch.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};
use crate::git::pin::Pin;

use super::repo::{self, At};

/// An index file of baton's for worktree `id`, removed when dropped.
pub(super) struct Staging<'a> {
    pin: &'a Pin,
    file: PathBuf,
}

impl<'a> Staging<'a> {
    /// A fresh index for worktree `id` of the project at `root` holding
    /// `tree`. Any file left by an earlier baton that died is replaced.
    pub(super) fn new(pin: &'a Pin, root: &Path, id: &str, tree: &str) -> Result<Self> {
        let dir = crate::state_dir::ensure_sub(root, "worktrees")?;
        let s = Staging {
            pin,
            file: dir.join(format!("{id}.index")),
        };
        s.discard();
        let mut g = s.git();
        g.args(["read-tree", tree]);
        s.write(
            g,
            "reading the tree baton commits on into its own index",
            None,
        )?;
        Ok(s)
    }

    /// The tree of what is on disk: tracked paths updated, deleted ones
    /// removed, new files added (ignored ones not).
    pub(super) fn add_all(&self) -> Result<String> {
        let mut g = self.git();
        g.args(["add", "--all"]);
        self.write(g, "staging what the peer left on disk", None)?;
        self.write_tree()
    }

    /// `git write-tree` of this index.
    pub(super) fn write_tree(&self) -> Result<String> {
        let mut g = self.git();
        g.arg("write-tree");
        // It writes the index too (the cache tree it computed).
        let out = self.write(g, "writing the tree of what the peer left", None)?;
        Ok(String::from_utf8_lossy(&out).trim_end().to_string())
    }

    /// Put `paths` back as they are in `tree`, in this index and on disk
    /// (a path `tree` does not have is removed).
    pub(super) fn restore(&self, tree: &str, paths: &[String]) -> Result<()> {
        let mut list = Vec::new();
        for p in paths {
            list.extend_from_slice(p.as_bytes());
            list.push(0);
        }
        let mut g = self.git();
        g.env("GIT_LITERAL_PATHSPECS", "1").args([
            "restore",
            "--source",
            tree,
            "--staged",
            "--worktree",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
        ]);
        self.write(g, "reverting changes outside --allow", Some(&list))
            .map(drop)
    }

    /// Paths whose content on disk differs from this index (tracked ones
    /// changed or deleted, new ones not ignored): what `add_all` would stage.
    pub(super) fn differs_on_disk(&self) -> Result<Vec<String>> {
        let mut g = self.git();
        g.arg("diff")
            .args(crate::git::DIFF)
            .args(["--name-only", "--no-renames", "-z", "--"]);
        let mut paths =
            repo::nul_paths(&self.write(g, "comparing the worktree with a tree", None)?);
        let mut g = self.git();
        g.args(["ls-files", "-z", "--others", "--exclude-standard"]);
        paths.extend(repo::nul_paths(&repo::run(
            g,
            "listing new files in the worktree",
            None,
        )?));
        paths.sort();
        paths.dedup();
        Ok(paths)
    }

    /// Make this index the worktree's own: copied over `<git dir>/index`
    /// through a new file and a rename, which replaces whatever the peer
    /// left there (a link included) without writing through it. (The state
    /// directory may be on another file system: no rename from there.)
    pub(super) fn install(&self) -> Result<()> {
        let bytes = std::fs::read(&self.file)
            .map_err(|e| Error::io(format!("reading {}", self.file.display()), e))?;
        crate::fsutil::replace_file(&self.pin.git_dir.join("index"), &bytes)
    }

    /// Run a git call that writes this index, then keep the file private
    /// (git creates it through `<file>.lock` with its own mode).
    fn write(&self, g: Command, purpose: &str, stdin: Option<&[u8]>) -> Result<Vec<u8>> {
        let out = repo::run(g, purpose, stdin);
        let _ = std::fs::set_permissions(&self.file, std::fs::Permissions::from_mode(0o600));
        out
    }

    fn discard(&self) {
        let _ = std::fs::remove_file(&self.file);
        let _ = std::fs::remove_file(self.file.with_extension("index.lock"));
    }
}

impl At for Staging<'_> {
    /// `git` pinned to the worktree (`Pin::git`), with this index.
    fn git(&self) -> Command {
        let mut c = self.pin.git();
        c.env("GIT_INDEX_FILE", &self.file);
        c
    }
}

impl Drop for Staging<'_> {
    fn drop(&mut self) {
        self.discard();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    use crate::git::test_git as git;

    #[test]
    fn the_private_index_sees_the_disk_whatever_the_peers_index_says() {
        let d = tempfile::tempdir().unwrap();
        crate::state_dir::TEST_BASE.with(|b| *b.borrow_mut() = Some(d.path().join("state")));
        let top = d.path().join("repo");
        fs::create_dir(&top).unwrap();
        git(&top, &["init", "-q"]);
        for (f, t) in [("a", "a\n"), ("b", "b\n"), (".gitignore", "*.log\n")] {
            fs::write(top.join(f), t).unwrap();
        }
        git(&top, &["add", "."]);
        git(&top, &["commit", "-qm", "i"]);
        let wt = top.join(".baton/worktrees/0123456789abc");
        git(
            &top,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "baton/x",
                wt.to_str().unwrap(),
            ],
        );
        let gd = PathBuf::from(git(&wt, &["rev-parse", "--absolute-git-dir"]));
        let common = PathBuf::from(git(
            &top,
            &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        ));
        let base = git(&top, &["rev-parse", "HEAD^{tree}"]);
        let pin = Pin::record(&wt, &gd, &common, &base).unwrap();
        // The peer hides an edit, stages a file that is not there, and
        // makes a new file that .gitignore covers.
        git(&wt, &["update-index", "--skip-worktree", "a"]);
        fs::write(wt.join("a"), "edited\n").unwrap();
        let blob = git(&wt, &["rev-parse", "HEAD:b"]);
        git(
            &wt,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("100644,{blob},ghost"),
            ],
        );
        fs::write(wt.join("new"), "n\n").unwrap();
        fs::write(wt.join("build.log"), "ignored\n").unwrap();

        let st = Staging::new(&pin, &top, "0123456789abc", &base).unwrap();
        let file = st.file.clone();
        assert!(
            file.starts_with(d.path().join("state")),
            "{}",
            file.display()
        );
        let mode = fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(st.differs_on_disk().unwrap(), ["a", "new"]);
        let tree = st.add_all().unwrap();
        let listed = git(&top, &["ls-tree", "--name-only", &tree]);
        assert_eq!(
            listed.lines().collect::<Vec<_>>(),
            [".gitignore", "a", "b", "new"]
        );
        assert_eq!(git(&top, &["show", &format!("{tree}:a")]), "edited");
        assert_eq!(
            fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
        // Reverting puts the disk back and forgets the new file.
        st.restore(&base, &["a".into(), "new".into()]).unwrap();
        assert_eq!(st.write_tree().unwrap(), base);
        assert_eq!(fs::read_to_string(wt.join("a")).unwrap(), "a\n");
        assert!(!wt.join("new").exists());
        // Installed, it is the worktree's index: no skip-worktree, no ghost.
        st.install().unwrap();
        assert_eq!(git(&wt, &["status", "--porcelain"]), "");
        assert_eq!(git(&wt, &["ls-files", "-v"]), "H .gitignore\nH a\nH b");
        drop(st);
        assert!(!file.exists(), "the private index was left behind");
    }
}
