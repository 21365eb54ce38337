//! Which files a peer changed: a before/after snapshot of the git work tree.
//!
//! Before the run baton records HEAD and a content hash of every dirty path
//! (modified, staged, untracked; not ignored). After the run a path counts as
//! changed when its content differs from what it was before: newly dirty,
//! dirty before and edited again, dirty before and now clean with other
//! content (reverted), or touched by commits the peer made. A file that was
//! dirty before and left alone does not count. One `git status` call per
//! snapshot, so the cost is small even in large repositories.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

#[derive(Debug, Clone)]
pub struct Snapshot {
    pub top: PathBuf,
    head: Option<String>,
    dirty: HashMap<String, Option<[u8; 32]>>,
}

/// `git` with no pager, no prompts, no locale surprises.
pub fn git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.arg("-C")
        .arg(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
    c
}

/// Snapshot `cwd`'s repository; `None` when it is not in one (or git is missing).
pub fn snapshot(cwd: &Path) -> Option<Snapshot> {
    // Each git process costs milliseconds on every run. The top level is
    // the directory holding `.git` (a directory, or a file in linked
    // worktrees and submodules); only when the environment relocates the
    // repository is git asked. No `.git` above cwd: not a repository.
    let relocated = ["GIT_DIR", "GIT_WORK_TREE"]
        .iter()
        .any(|v| std::env::var_os(v).is_some());
    let top = if relocated {
        toplevel(cwd)?
    } else {
        let root = crate::fsutil::project_root(cwd);
        if !root.join(".git").exists() {
            return None;
        }
        root
    };
    status(top)
}

/// `git status` of the repository whose top-level directory is `top`.
fn status(top: PathBuf) -> Option<Snapshot> {
    let out = git(&top)
        .args([
            "status",
            "--porcelain=v2",
            "--branch",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            "--ignore-submodules=dirty",
        ])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let mut head = None;
    let mut dirty = HashMap::new();
    for entry in out.stdout.split(|b| *b == 0) {
        let Ok(e) = std::str::from_utf8(entry) else {
            continue;
        };
        if let Some(oid) = e.strip_prefix("# branch.oid ") {
            if oid != "(initial)" {
                head = Some(oid.to_string());
            }
            continue;
        }
        let path = match e.as_bytes().first() {
            Some(b'1') => e.splitn(9, ' ').nth(8),
            Some(b'u') => e.splitn(11, ' ').nth(10),
            Some(b'?') => e.get(2..),
            _ => None,
        };
        if let Some(p) = path {
            dirty.insert(p.to_string(), hash_file(&top.join(p)));
        }
    }
    Some(Snapshot { top, head, dirty })
}

fn toplevel(cwd: &Path) -> Option<PathBuf> {
    let out = git(cwd)
        .args(["rev-parse", "--show-toplevel"])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(PathBuf::from(
        String::from_utf8_lossy(&out.stdout).trim_end_matches('\n'),
    ))
}

fn hash_file(p: &Path) -> Option<[u8; 32]> {
    let meta = std::fs::symlink_metadata(p).ok()?;
    let mut h = Sha256::new();
    if meta.file_type().is_symlink() {
        h.update(b"link:");
        h.update(std::fs::read_link(p).ok()?.as_os_str().as_encoded_bytes());
    } else if meta.is_file() {
        let mut f = std::fs::File::open(p).ok()?;
        std::io::copy(&mut f, &mut h).ok()?;
    } else {
        h.update(b"dir");
    }
    Some(h.finalize().into())
}

/// Paths (relative to the repository top) whose content changed since `before`.
pub fn changed_since(before: &Snapshot) -> Vec<String> {
    let Some(after) = status(before.top.clone()) else {
        return Vec::new();
    };
    let mut changed = BTreeSet::new();
    for (p, h) in &after.dirty {
        if before.dirty.get(p) != Some(h) {
            changed.insert(p.clone());
        }
    }
    for (p, h) in &before.dirty {
        if !after.dirty.contains_key(p) && hash_file(&before.top.join(p)) != *h {
            changed.insert(p.clone());
        }
    }
    if let (Some(a), Some(b)) = (&before.head, &after.head)
        && a != b
        && let Ok(out) = git(&before.top)
            .args(["diff", "--name-only", "--no-renames", "-z", a, b])
            .stderr(Stdio::null())
            .output()
    {
        for p in out.stdout.split(|c| *c == 0).filter(|p| !p.is_empty()) {
            let p = String::from_utf8_lossy(p).into_owned();
            // Committed, then changed back in the work tree: compare content.
            if !after.dirty.contains_key(&p) {
                changed.insert(p);
            }
        }
    }
    changed.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn sh(dir: &Path, args: &[&str]) {
        let ok = git(dir)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .stdout(Stdio::null())
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn pre_dirty_untouched_is_not_changed_but_touched_is() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        sh(r, &["init", "-q"]);
        fs::write(r.join("a.txt"), "a").unwrap();
        fs::write(r.join("b.txt"), "b").unwrap();
        fs::write(r.join("c.txt"), "c").unwrap();
        sh(r, &["add", "."]);
        sh(r, &["commit", "-qm", "init"]);
        fs::write(r.join("a.txt"), "a dirty").unwrap(); // dirty, untouched by the peer
        fs::write(r.join("b.txt"), "b dirty").unwrap(); // dirty, touched again by the peer
        let snap = snapshot(r).unwrap();
        fs::write(r.join("b.txt"), "b dirty twice").unwrap();
        fs::write(r.join("new.txt"), "n").unwrap();
        fs::remove_file(r.join("c.txt")).unwrap();
        assert_eq!(changed_since(&snap), ["b.txt", "c.txt", "new.txt"]);
    }

    #[test]
    fn peer_commits_count() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        sh(r, &["init", "-q"]);
        fs::write(r.join("a.txt"), "a").unwrap();
        sh(r, &["add", "."]);
        sh(r, &["commit", "-qm", "init"]);
        let snap = snapshot(r).unwrap();
        fs::write(r.join("a.txt"), "a2").unwrap();
        fs::write(r.join("z.txt"), "z").unwrap();
        sh(r, &["add", "."]);
        sh(r, &["commit", "-qm", "peer"]);
        assert_eq!(changed_since(&snap), ["a.txt", "z.txt"]);
    }

    #[test]
    fn not_a_repo() {
        let d = tempfile::tempdir().unwrap();
        assert!(snapshot(d.path()).is_none());
    }
}
