//! A trial's repository without history, and the look baton takes at it
//! once the peer is gone.
//!
//! Theory of operation. A peer that can read the repository's history can
//! find the reference fix (`git log --all`, `git show <commit>`); one that
//! can read the hidden tests knows what to aim at. So a trial starts in a
//! private temporary folder holding a fresh repository (`make`): the base
//! commit's tree copied in as a pack of exactly that tree's objects (`git
//! rev-list --objects <tree>` → `pack-objects` in the user's repository,
//! once per tree for the whole run (`Packs`), the pack and its index copied
//! into each trial), one root commit of it on `main` with a
//! fixed author and date, no other ref, no reflog, no remote, no tag. The
//! hidden test files are absent there (added by the test patch) or at their
//! base version (changed by it): the base tree is what it holds.
//!
//! After the peer, its repository is not trusted (it could have rewritten
//! the objects, the refs, the config or the attributes): baton looks at the
//! work tree through a `Grader`, a bare git directory of its own made only
//! then, whose objects are the user's (through `alternates`: nothing of
//! them can leak to a peer that is gone) and whose index starts at the base
//! tree.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{Error, Result};

/// The author and date of every trial's root commit: nothing about the
/// real history.
const WHO: [(&str, &str); 6] = [
    ("GIT_AUTHOR_NAME", "baton"),
    ("GIT_AUTHOR_EMAIL", "baton@localhost"),
    ("GIT_AUTHOR_DATE", "1970-01-01T00:00:00Z"),
    ("GIT_COMMITTER_NAME", "baton"),
    ("GIT_COMMITTER_EMAIL", "baton@localhost"),
    ("GIT_COMMITTER_DATE", "1970-01-01T00:00:00Z"),
];

/// A trial's private folder: `tmp` (0700, removed when this is dropped)
/// holding the peer's repository `top` (`tmp/repo`).
#[derive(Debug)]
pub struct Place {
    pub tmp: PathBuf,
    pub top: PathBuf,
    /// The base commit's tree (the same id in both repositories).
    pub tree: String,
    /// The root commit of `top` (not the user's base commit).
    pub root: String,
}

impl Drop for Place {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.tmp);
    }
}

/// Name the temporary folder `dir` in `marker` (a file of the record), so
/// that a runner killed outright, whose folders stay, is cleaned up after
/// by the next one (`sweep`).
pub fn mark(marker: &Path, dir: &Path) {
    let _ = crate::fsutil::replace_file(marker, dir.display().to_string().as_bytes());
}

/// Remove the folder `marker` names (only one of baton's temporary
/// folders: absolute, named `baton-trial-*` or `baton-packs-*`), and the
/// marker.
pub fn sweep(marker: &Path) {
    let Ok(text) = std::fs::read_to_string(marker) else {
        return;
    };
    let p = PathBuf::from(text.trim());
    let ours = p.is_absolute()
        && p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("baton-trial-") || n.starts_with("baton-packs-"));
    if ours {
        let _ = std::fs::remove_dir_all(&p);
    }
    let _ = std::fs::remove_file(marker);
}

/// Run a git command, its stdout as text; the error says what it was for.
pub fn run(mut c: std::process::Command, what: &str) -> Result<String> {
    let out = c
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| Error::io(what.to_string(), e))?;
    if !out.status.success() {
        return Err(Error::Internal(format!(
            "{what}: git failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A new private folder in the system's temporary folder.
pub fn private_tmp(prefix: &str) -> Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let p = std::env::temp_dir().join(format!("{prefix}-{}", crate::ids::new_id()));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&p)
        .map_err(|e| Error::io(format!("creating {}", p.display()), e))?;
    Ok(p)
}

/// The tree of commit `base` in the user's repository at `user`.
pub fn base_tree(user: &Path, base: &str) -> Result<String> {
    let mut c = crate::git::git(user);
    c.args(["rev-parse", "--verify", "--quiet"])
        .arg(format!("{base}^{{commit}}^{{tree}}"));
    run(c, "finding the task's base commit").map_err(|_| {
        Error::usage_hint(
            format!("the base commit {base} is not in the repository at {}", user.display()),
            "run the bench in the repository the set was mined from (fetch its history if it is shallow)",
        )
    })
}

/// One tree's pack: its folder, or why it could not be made (an error is
/// told to every trial of that tree, not made again).
type Packed = OnceLock<std::result::Result<PathBuf, String>>;

/// The base trees' objects, each packed once (`pack-objects` writes the
/// pack and its index) for every trial of a run that starts from it, in a
/// private temporary folder removed with this. A trial gets a copy, never
/// a link: a peer could rewrite a shared file.
pub struct Packs {
    dir: PathBuf,
    made: Mutex<HashMap<String, Arc<Packed>>>,
}

impl Drop for Packs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Packs {
    pub fn new() -> Result<Packs> {
        Ok(Packs {
            dir: private_tmp("baton-packs")?,
            made: Mutex::default(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The folder holding `tree`'s pack and index (made on first ask; the
    /// threads asking for the same tree meanwhile wait for it).
    fn get(&self, user: &Path, tree: &str) -> Result<PathBuf> {
        let cell = {
            let mut m = self
                .made
                .lock()
                .map_err(|_| Error::Internal("the pack cache's lock is poisoned".into()))?;
            m.entry(tree.to_string()).or_default().clone()
        };
        cell.get_or_init(|| self.pack(user, tree).map_err(|e| e.to_string()))
            .clone()
            .map_err(Error::Internal)
    }

    fn pack(&self, user: &Path, tree: &str) -> Result<PathBuf> {
        let dir = self.dir.join(tree);
        crate::fsutil::ensure_private_dir(&dir)?;
        let list = dir.join("objects.list");
        let file = File::create(&list)
            .map_err(|e| Error::io(format!("creating {}", list.display()), e))?;
        let mut c = crate::git::git(user);
        c.args(["rev-list", "--objects", tree]).stdout(file);
        run(c, "listing the base tree's objects")?;
        let open =
            File::open(&list).map_err(|e| Error::io(format!("reading {}", list.display()), e))?;
        let mut c = crate::git::git(user);
        c.args(["pack-objects", "-q"])
            .arg(dir.join("pack"))
            .stdin(open);
        run(c, "packing the base tree")?;
        let _ = std::fs::remove_file(&list);
        Ok(dir)
    }
}

/// The trial's repository for base commit `base` of the user's repository
/// at `user` (see the module comment), its objects from `packs`.
pub fn make(user: &Path, base: &str, packs: &Packs) -> Result<Place> {
    let tree = base_tree(user, base)?;
    let tmp = private_tmp("baton-trial")?;
    let mut place = Place {
        top: tmp.join("repo"),
        tmp,
        tree,
        root: String::new(),
    };
    let packed = packs.get(user, &place.tree)?;
    let mut c = crate::git::git(&place.tmp);
    c.args(["init", "-q", "--template=", "repo"]);
    run(c, "making the trial's repository")?;
    let top = place.top.clone();
    let g = || crate::git::git(&top);
    let mut c = g();
    c.args(["symbolic-ref", "HEAD", "refs/heads/main"]);
    run(c, "naming the trial's branch")?;
    let into = top.join(".git/objects/pack");
    crate::fsutil::ensure_private_dir(&into)?;
    let rd = std::fs::read_dir(&packed)
        .map_err(|e| Error::io(format!("reading {}", packed.display()), e))?;
    for e in rd.flatten() {
        std::fs::copy(e.path(), into.join(e.file_name()))
            .map_err(|e| Error::io("copying the base tree's pack", e))?;
    }
    let mut c = g();
    c.args(["commit-tree", &place.tree, "-m", "base"]);
    for (k, v) in WHO {
        c.env(k, v);
    }
    place.root = run(c, "committing the base tree")?;
    let mut c = g();
    c.args([
        "-c",
        "core.logAllRefUpdates=false",
        "update-ref",
        "refs/heads/main",
        &place.root,
    ]);
    run(c, "pointing main at the base")?;
    let mut c = g();
    c.args(crate::git::PARALLEL_CHECKOUT)
        .args(["read-tree", "--reset", "-u", &place.root]);
    run(c, "checking the base tree out")?;
    Ok(place)
}

/// baton's own look at a trial's work tree after the peer (module comment).
pub struct Grader {
    git_dir: PathBuf,
    top: PathBuf,
    tree: String,
}

impl Grader {
    /// Made in `place.tmp` (beside the peer's repository, never in it).
    pub fn new(user: &Path, place: &Place) -> Result<Grader> {
        let git_dir = place.tmp.join("grader.git");
        let mut c = crate::git::git(&place.tmp);
        c.args(["init", "-q", "--bare", "--template=", "grader.git"]);
        run(c, "making baton's look at the trial")?;
        let mut c = crate::git::git(user);
        c.args(["rev-parse", "--path-format=absolute", "--git-common-dir"]);
        let common = run(c, "finding the user's git directory")?;
        let info = git_dir.join("objects/info");
        crate::fsutil::ensure_private_dir(&info)?;
        let objects = Path::new(&common).join("objects");
        std::fs::write(info.join("alternates"), format!("{}\n", objects.display()))
            .map_err(|e| Error::io("writing the grader's alternates", e))?;
        let g = Grader {
            git_dir,
            top: place.top.clone(),
            tree: place.tree.clone(),
        };
        let mut c = g.git();
        c.args(["read-tree", &g.tree]);
        run(c, "reading the base tree")?;
        Ok(g)
    }

    /// git on the trial's work tree with baton's git directory (the
    /// attributes pinned to the base tree where git can).
    pub fn git(&self) -> std::process::Command {
        let mut c = crate::git::git(&self.top);
        for v in crate::git::REDIRECTING_ENV {
            c.env_remove(v);
        }
        c.env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.top);
        if crate::git::has_attr_source() {
            c.env("GIT_ATTR_SOURCE", &self.tree);
        }
        c
    }

    /// The base version of `path`, `None` when the base has none.
    pub fn base_blob(&self, path: &str) -> Option<Vec<u8>> {
        let mut c = self.git();
        c.args(["cat-file", "blob"])
            .arg(format!("{}:{path}", self.tree))
            .stderr(Stdio::null());
        let out = c.output().ok()?;
        out.status.success().then_some(out.stdout)
    }

    /// Every file path of the base tree.
    pub fn base_paths(&self) -> Result<Vec<String>> {
        let mut c = self.git();
        c.args(["ls-tree", "-r", "-z", "--name-only", &self.tree]);
        let out = c
            .output()
            .map_err(|e| Error::io("listing the base tree", e))?;
        Ok(out
            .stdout
            .split(|b| *b == 0)
            .filter(|s| !s.is_empty())
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect())
    }

    /// Lines added plus removed in the work tree against the base, leaving
    /// out `excluded` paths (binary files count nothing).
    pub fn diff_lines(&self, excluded: &[String]) -> Result<u64> {
        let mut c = self.git();
        c.args(["add", "-A"]);
        run(c, "staging the trial's work in baton's index")?;
        let mut c = self.git();
        c.args(["diff", "--cached", "--numstat", "--no-renames", "-z"])
            .args(crate::git::DIFF)
            .arg(&self.tree);
        let out = run(c, "measuring the trial's diff")?;
        let mut n = 0u64;
        for rec in out.split('\0') {
            let mut f = rec.splitn(3, '\t');
            let (Some(a), Some(d), Some(p)) = (f.next(), f.next(), f.next()) else {
                continue;
            };
            if excluded.iter().any(|x| x == p) {
                continue;
            }
            n += a.parse::<u64>().unwrap_or(0) + d.parse::<u64>().unwrap_or(0);
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh_git(dir: &Path, args: &[&str]) -> (bool, String) {
        let o = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@e")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@e")
            .output()
            .unwrap();
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stdout).trim().to_string(),
        )
    }

    #[test]
    fn a_trial_repository_holds_the_base_tree_and_nothing_of_the_history() {
        let d = tempfile::tempdir().unwrap();
        let u = d.path();
        sh_git(u, &["init", "-q"]);
        std::fs::write(u.join("a.txt"), "one\n").unwrap();
        std::fs::create_dir(u.join("tests")).unwrap();
        std::fs::write(u.join("tests/old.sh"), "old\n").unwrap();
        sh_git(u, &["add", "."]);
        sh_git(u, &["commit", "-qm", "first"]);
        std::fs::write(u.join("a.txt"), "two\n").unwrap();
        sh_git(u, &["commit", "-qam", "second"]);
        let base = sh_git(u, &["rev-parse", "HEAD"]).1;
        std::fs::write(u.join("a.txt"), "fixed\n").unwrap();
        std::fs::write(u.join("tests/old.sh"), "new\n").unwrap();
        std::fs::write(u.join("tests/hidden.sh"), "hidden\n").unwrap();
        sh_git(u, &["add", "."]);
        sh_git(u, &["commit", "-qm", "fix"]);
        let commit = sh_git(u, &["rev-parse", "HEAD"]).1;
        sh_git(u, &["tag", "v1"]);
        sh_git(u, &["remote", "add", "origin", "https://example.invalid/x"]);

        let packs = Packs::new().unwrap();
        let p = make(u, &base, &packs).unwrap();
        let t = &p.top;
        assert_eq!(
            sh_git(t, &["log", "--all", "--oneline"]).1.lines().count(),
            1
        );
        assert!(!sh_git(t, &["cat-file", "-e", &base]).0);
        assert!(!sh_git(t, &["cat-file", "-e", &commit]).0);
        assert_eq!(sh_git(t, &["reflog"]).1, "");
        assert_eq!(sh_git(t, &["remote"]).1, "");
        assert_eq!(sh_git(t, &["tag"]).1, "");
        assert_eq!(
            sh_git(t, &["for-each-ref", "--format=%(refname)"]).1,
            "refs/heads/main"
        );
        assert_eq!(sh_git(t, &["status", "--porcelain"]).1, "");
        assert_eq!(std::fs::read_to_string(t.join("a.txt")).unwrap(), "two\n");
        assert_eq!(
            std::fs::read_to_string(t.join("tests/old.sh")).unwrap(),
            "old\n"
        );
        assert!(!t.join("tests/hidden.sh").exists());
        // Only the base tree's objects: its tree, two blobs, one subtree,
        // and the root commit.
        let objects = sh_git(t, &["cat-file", "--batch-all-objects", "--batch-check"]).1;
        assert_eq!(objects.lines().count(), 5, "{objects}");
        let tmp = p.tmp.clone();
        drop(p);
        assert!(!tmp.exists());
        assert!(make(u, &"f".repeat(40), &packs).is_err());
        // A second trial of the same base reuses the pack.
        let again = make(u, &base, &packs).unwrap();
        assert_eq!(again.root, sh_git(&again.top, &["rev-parse", "HEAD"]).1);
    }
}
