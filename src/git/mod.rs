//! Which files a peer changed: a before/after snapshot of the git work tree.
//!
//! Before the run baton records HEAD and a content hash of every dirty path
//! (modified, staged, untracked; not ignored). After the run a path counts as
//! changed when its content differs from what it was before: newly dirty,
//! dirty before and edited again, dirty before and now clean with other
//! content (reverted), or touched by commits the peer made. A file that was
//! dirty before and left alone does not count. One `git status` call per
//! snapshot, so the cost is small even in large repositories.

pub mod pin;

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

#[derive(Debug, Clone)]
pub struct Snapshot {
    pub top: PathBuf,
    /// Variables pinning both looks to one repository (a baton worktree's:
    /// `git_pin`), so that the second cannot be redirected by what the peer
    /// wrote; empty for the user's own checkout.
    env: Vec<(&'static str, OsString)>,
    head: Option<String>,
    dirty: HashMap<String, Option<[u8; 32]>>,
}

/// Configuration that would make git run a program, overridden for every
/// git call baton makes. baton runs git unsandboxed in directories a peer
/// could write (its worktree and that worktree's git directory, and in
/// workspace mode the user's checkout), so no configuration may turn one of
/// those calls into a command: not the repository's (`core.fsmonitor`,
/// hooks), not a transport's (baton never fetches or pushes), not a
/// credential helper, editor, pager or signature check. Command-line `-c`
/// wins over every configuration file and over `GIT_CONFIG_COUNT`, and is
/// passed on to any git that git itself starts. Filter drivers and
/// `diff.<driver>.command`/textconv are not covered by a fixed key (their
/// names are free): diffs pass `--no-ext-diff --no-textconv` (see `DIFF`),
/// and worktree mode pins attributes to a tree baton trusts
/// (`GIT_ATTR_SOURCE`). The rationale and the full list are in
/// docs/worktree.md (Safety).
pub const NO_EXEC: [&str; 14] = [
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.sshCommand=false",
    "core.askPass=",
    "core.editor=true",
    "core.pager=cat",
    "credential.helper=",
    "protocol.allow=never",
    "diff.external=",
    "diff.submodule=short",
    "status.submoduleSummary=false",
    "log.showSignature=false",
    "gc.auto=0",
    "maintenance.auto=false",
];

/// Variables that would point git somewhere other than the `-C` directory
/// (removed where baton names the repository itself).
pub const REDIRECTING_ENV: [&str; 8] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
];

/// Variables of the caller's environment that name programs for git to run.
const EXEC_ENV: [&str; 6] = [
    "GIT_EXTERNAL_DIFF",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_PROXY_COMMAND",
];

/// The switches every `git diff`/`log -p` of baton's passes: no external
/// diff driver, no textconv program.
pub const DIFF: [&str; 2] = ["--no-ext-diff", "--no-textconv"];

/// Put before a command that checks out a whole tree (`read-tree -u`):
/// files written by one worker per core. Creating a file costs more in
/// waiting than in CPU on a busy disk: 10,000 files took a median 5.5 s
/// with one writer and 1.6 s with two on this project's 2-core VM (ext4,
/// `read-tree --reset -u`, eight runs each, interleaved). git uses the
/// workers only from 100 files up, and checks out files with a filter
/// itself, as before.
pub const PARALLEL_CHECKOUT: [&str; 2] = ["-c", "checkout.workers=0"];

/// `git` with no pager, no prompts, no locale surprises, and no program
/// that configuration could make it run (`NO_EXEC`). Every git call of
/// baton's starts here.
pub fn git(dir: &Path) -> Command {
    let mut c = command();
    for v in EXEC_ENV {
        c.env_remove(v);
    }
    c.arg("-C").arg(dir).arg("--no-pager");
    for kv in NO_EXEC {
        c.arg("-c").arg(kv);
    }
    c.env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_PAGER", "cat")
        .env("GIT_EDITOR", "true")
        .env("GIT_SEQUENCE_EDITOR", "true")
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
    c
}

/// `git` from the one launcher, in baton's own process group and without a
/// parent-death signal, as it always ran: each call is short and waited on
/// at once, so Ctrl-C reaching it too is what a user expects.
fn command() -> Command {
    crate::process::Command::new("git")
        .group(crate::process::Group::Inherit)
        .parent_death(None)
        .into_std()
}

/// Whether the `git` on PATH honours `GIT_ATTR_SOURCE` (git 2.40 and
/// later; older git ignores the variable). Asked once per process.
pub fn has_attr_source() -> bool {
    static ANSWER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ANSWER.get_or_init(|| {
        let out = command()
            .arg("--version")
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output();
        out.ok()
            .and_then(|o| version(&String::from_utf8_lossy(&o.stdout)))
            .is_some_and(|v| v >= (2, 40))
    })
}

/// `(major, minor)` of `git version 2.47.3` (or `2.39.2.windows.1`).
fn version(s: &str) -> Option<(u32, u32)> {
    let v = s.trim().strip_prefix("git version ")?;
    let mut n = v.split('.').map(|p| p.parse::<u32>().ok());
    Some((n.next()??, n.next()??))
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
    status(top, Vec::new())
}

/// Snapshot the worktree at `top` whose repository `env` pins.
pub fn snapshot_pinned(top: &Path, env: Vec<(&'static str, OsString)>) -> Option<Snapshot> {
    status(top.to_path_buf(), env)
}

/// `git` at `top` with a snapshot's pinning variables.
fn git_at(top: &Path, env: &[(&'static str, OsString)]) -> Command {
    let mut c = git(top);
    if !env.is_empty() {
        for v in REDIRECTING_ENV {
            c.env_remove(v);
        }
        c.envs(env.iter().map(|(k, v)| (k, v)));
    }
    c
}

/// `git status` of the repository whose top-level directory is `top`.
fn status(top: PathBuf, env: Vec<(&'static str, OsString)>) -> Option<Snapshot> {
    let out = git_at(&top, &env)
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
    Some(Snapshot {
        top,
        env,
        head,
        dirty,
    })
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
        // sha2 0.11's hasher is not an `io::Write`.
        let mut buf = [0u8; 8192];
        loop {
            match std::io::Read::read(&mut f, &mut buf) {
                Ok(0) => break,
                Ok(n) => h.update(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
    } else {
        h.update(b"dir");
    }
    Some(h.finalize().into())
}

/// Paths (relative to the repository top) whose content changed since `before`.
pub fn changed_since(before: &Snapshot) -> Vec<String> {
    let Some(after) = status(before.top.clone(), before.env.clone()) else {
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
        && let Ok(out) = git_at(&before.top, &before.env)
            .arg("diff")
            .args(DIFF)
            .args(["--name-only", "--no-renames", "-z", a, b])
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

/// `git ARGS` in `dir` for unit tests, with a fixed author: its trimmed
/// stdout, or a panic naming the call that failed.
#[cfg(test)]
pub fn test_git(dir: &Path, args: &[&str]) -> String {
    let out = git(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
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
    fn git_versions() {
        assert_eq!(version("git version 2.47.3\n"), Some((2, 47)));
        assert_eq!(version("git version 2.39.2.windows.1"), Some((2, 39)));
        assert_eq!(version("git version 3.0"), Some((3, 0)));
        assert_eq!(version("hub version 2"), None);
    }

    #[test]
    fn configuration_cannot_make_batons_git_run_a_program() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        sh(r, &["init", "-q"]);
        fs::write(r.join("a.txt"), "a").unwrap();
        sh(r, &["add", "."]);
        sh(r, &["commit", "-qm", "init"]);
        let ran = r.join("ran");
        let cmd = format!("touch '{}'; false", ran.display());
        for (k, v) in [
            ("core.fsmonitor", cmd.as_str()),
            ("core.pager", cmd.as_str()),
            ("diff.external", cmd.as_str()),
            ("log.showSignature", "true"),
            ("gpg.program", cmd.as_str()),
        ] {
            sh(r, &["config", k, v]);
        }
        fs::write(r.join("a.txt"), "b").unwrap();
        let snap = snapshot(r).unwrap();
        assert_eq!(changed_since(&snap), Vec::<String>::new());
        let ok = git(r)
            .args(["log", "-p"])
            .args(DIFF)
            .stdout(Stdio::null())
            .status()
            .unwrap()
            .success();
        assert!(ok);
        assert!(!ran.exists(), "a configured program ran");
    }

    #[test]
    fn not_a_repo() {
        let d = tempfile::tempdir().unwrap();
        assert!(snapshot(d.path()).is_none());
    }
}
