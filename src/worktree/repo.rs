//! The git plumbing worktree mode needs, each call with a purpose so that a
//! failure says what baton was trying to do.
//!
//! baton's own git calls run no program configuration names (hooks,
//! fsmonitor, …: `crate::git::git`) and ignore `GIT_DIR`-style variables
//! inherited from a caller (a git hook, say), which would otherwise redirect
//! them to another repository or index. Calls in a worktree are pinned to
//! its repository (`git_pin::Pin`); the helpers here take either (`At`).
//! Commits are made with `commit-tree` + `update-ref`: no hooks, no signing
//! prompt, and a compare-and-swap on the branch.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub use crate::git::REDIRECTING_ENV;

/// The identity baton commits with when the user has none configured.
pub const BATON_NAME: &str = "baton";
pub const BATON_EMAIL: &str = "baton@localhost";

/// `git -C dir` for baton's own use in a directory the peer cannot write
/// (the user's checkout; see the module comment).
pub fn git(dir: &Path) -> Command {
    let mut c = crate::git::git(dir);
    for v in REDIRECTING_ENV {
        c.env_remove(v);
    }
    c
}

/// Where a git call runs: the user's checkout (a path) or a worktree,
/// pinned (`git_pin::Pin`).
pub trait At {
    fn git(&self) -> Command;
}

impl At for Path {
    fn git(&self) -> Command {
        git(self)
    }
}

impl At for PathBuf {
    fn git(&self) -> Command {
        git(self)
    }
}

impl At for crate::git::pin::Pin {
    fn git(&self) -> Command {
        crate::git::pin::Pin::git(self)
    }
}

/// Run `cmd`, feeding `stdin`; its stdout, or an error naming `purpose`.
pub fn run(mut cmd: Command, purpose: &str, stdin: Option<&[u8]>) -> Result<Vec<u8>> {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    if stdin.is_some() {
        cmd.stdin(Stdio::piped());
    }
    let mut child = cmd.spawn().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::usage_hint(
                format!("{purpose}: `git` was not found on PATH"),
                "install git: --worktree is built on git worktrees",
            )
        } else {
            Error::io(purpose, e)
        }
    })?;
    if let (Some(mut w), Some(data)) = (child.stdin.take(), stdin) {
        // Small inputs (a message, a path list): written before reading output.
        w.write_all(data).map_err(|e| Error::io(purpose, e))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| Error::io(purpose, e))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("hint:"))
            .collect();
        // git's own verdict, without the advice it wraps around it (a
        // stale lock comes with six lines about editors and crashes).
        let verdict: Vec<&str> = lines
            .iter()
            .copied()
            .filter(|l| l.starts_with("fatal:") || l.starts_with("error:"))
            .collect();
        let msg = if verdict.is_empty() { lines } else { verdict }.join("; ");
        let msg = if msg.is_empty() {
            format!("git exited with {}", out.status)
        } else {
            msg
        };
        return Err(Error::io(purpose, std::io::Error::other(msg)));
    }
    Ok(out.stdout)
}

/// `run` for a one-line answer (a sha, a path).
pub fn line(cmd: Command, purpose: &str) -> Result<String> {
    let out = run(cmd, purpose, None)?;
    Ok(String::from_utf8_lossy(&out).trim_end().to_string())
}

/// Whether `cmd` succeeds, quietly; `None` when git could not be started.
pub fn probe(mut cmd: Command) -> Option<(bool, String)> {
    let out = cmd.stderr(Stdio::null()).output().ok()?;
    Some((
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).trim_end().to_string(),
    ))
}

/// Split NUL-terminated git output into paths.
pub fn nul_paths(out: &[u8]) -> Vec<String> {
    out.split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect()
}

pub fn rev(at: &(impl At + ?Sized), rev: &str, purpose: &str) -> Result<String> {
    let mut c = at.git();
    c.args(["rev-parse", "--verify", "--end-of-options", rev]);
    line(c, purpose)
}

/// Several revisions in one `git rev-parse` (each git process costs
/// milliseconds, and these sit between a peer's end and its tests).
/// `None` when any of them does not resolve: callers then ask one by one,
/// which says which one is missing. Each of `revs` must be a full ref name
/// or an object name of baton's own making, never user input: they are
/// given without `--verify`, before a `--` that keeps a file of the same
/// name from making them ambiguous.
pub fn revs(at: &(impl At + ?Sized), revs: &[&str]) -> Option<Vec<String>> {
    let mut c = at.git();
    c.arg("rev-parse").args(revs).arg("--");
    let (ok, out) = probe(c)?;
    parse_revs(ok, &out, revs.len())
}

/// `rev-parse`'s answer for `n` revisions: one object name a line, then
/// the `--` it echoes.
fn parse_revs(ok: bool, out: &str, n: usize) -> Option<Vec<String>> {
    let hex = |l: &str| matches!(l.len(), 40 | 64) && l.bytes().all(|b| b.is_ascii_hexdigit());
    let names: Vec<String> = out
        .lines()
        .filter(|l| *l != "--")
        .map(str::to_string)
        .collect();
    (ok && names.len() == n && names.iter().all(|l| hex(l))).then_some(names)
}

/// A path git printed, made absolute against `dir`.
pub fn abs(dir: &Path, p: &str) -> PathBuf {
    let p = Path::new(p);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        dir.join(p)
    }
}

/// Files, insertions and deletions, as `git diff --stat` counts them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DiffStat {
    pub files: u64,
    pub insertions: u64,
    pub deletions: u64,
}

/// `git diff --numstat base tip`, summed. Rename detection follows the
/// user's configuration, exactly like the `git diff --stat` they would run;
/// binary files count as changed files with no lines.
pub fn diffstat(at: &(impl At + ?Sized), base: &str, tip: &str) -> Result<DiffStat> {
    let mut c = at.git();
    c.arg("diff")
        .args(crate::git::DIFF)
        .args(["--numstat", "-z", base, tip, "--"]);
    let out = run(c, "computing the diffstat", None)?;
    Ok(parse_numstat(&out))
}

fn parse_numstat(out: &[u8]) -> DiffStat {
    let mut s = DiffStat::default();
    let mut fields = out.split(|b| *b == 0).peekable();
    while let Some(rec) = fields.next() {
        if rec.is_empty() {
            continue;
        }
        let text = String::from_utf8_lossy(rec);
        let mut parts = text.splitn(3, '\t');
        let (ins, del, path) = (parts.next(), parts.next(), parts.next());
        s.files += 1;
        s.insertions += ins.and_then(|n| n.parse().ok()).unwrap_or(0);
        s.deletions += del.and_then(|n| n.parse().ok()).unwrap_or(0);
        // A rename is `ins\tdel\t\0old\0new\0`: skip its two path fields.
        if path == Some("") {
            fields.next();
            fields.next();
        }
    }
    s
}

/// Every path whose content differs between two commits or trees (no rename
/// pairing: a rename lists both names).
pub fn changed_paths(at: &(impl At + ?Sized), from: &str, to: &str) -> Result<Vec<String>> {
    let mut c = at.git();
    c.arg("diff").args(crate::git::DIFF).args([
        "--name-only",
        "--no-renames",
        "-z",
        from,
        to,
        "--",
    ]);
    Ok(nul_paths(&run(c, "listing changed files", None)?))
}

/// One commit on the branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Commit {
    pub sha: String,
    pub subject: String,
}

/// Commits in `base..tip`, oldest first.
pub fn commits(at: &(impl At + ?Sized), base: &str, tip: &str) -> Result<Vec<Commit>> {
    let mut c = at.git();
    c.args([
        "log",
        "--reverse",
        "--format=%H%x1f%s",
        &format!("{base}..{tip}"),
        "--",
    ]);
    let out = run(c, "listing the branch's commits", None)?;
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|l| l.split_once('\x1f'))
        .map(|(sha, subject)| Commit {
            sha: sha.to_string(),
            subject: subject.to_string(),
        })
        .collect())
}

/// Environment for baton's commits: the user's own identity when git has
/// one, else baton's (a fresh machine or CI often has none, and a commit
/// must not fail for that).
pub fn identity_env(at: &(impl At + ?Sized)) -> Vec<(String, String)> {
    let configured = |key: &str, vars: &[&str]| {
        vars.iter()
            .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
            || probe({
                let mut c = at.git();
                c.args(["config", "--get", key]);
                c
            })
            .is_some_and(|(ok, v)| ok && !v.is_empty())
    };
    let mut env = Vec::new();
    if !configured("user.name", &["GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"]) {
        env.push(("GIT_AUTHOR_NAME".into(), BATON_NAME.into()));
        env.push(("GIT_COMMITTER_NAME".into(), BATON_NAME.into()));
    }
    if !configured(
        "user.email",
        &["GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL", "EMAIL"],
    ) {
        env.push(("GIT_AUTHOR_EMAIL".into(), BATON_EMAIL.into()));
        env.push(("GIT_COMMITTER_EMAIL".into(), BATON_EMAIL.into()));
    }
    env
}

/// `git commit-tree tree -p parent` with `message` on stdin.
pub fn commit_tree(
    at: &(impl At + ?Sized),
    tree: &str,
    parent: &str,
    message: &str,
    env: &[(String, String)],
) -> Result<String> {
    let mut c = at.git();
    c.args([
        "commit-tree",
        "--no-gpg-sign",
        tree,
        "-p",
        parent,
        "-F",
        "-",
    ]);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = run(c, "committing the peer's work", Some(message.as_bytes()))?;
    Ok(String::from_utf8_lossy(&out).trim().to_string())
}

/// Paths git lists in a `-z` porcelain status (untracked included).
pub fn dirty_paths(at: &(impl At + ?Sized)) -> Result<Vec<String>> {
    let mut c = at.git();
    c.args([
        "status",
        "--porcelain",
        "-z",
        "--untracked-files=all",
        "--ignore-submodules=dirty",
    ]);
    let out = run(c, "reading the worktree's status", None)?;
    Ok(nul_paths(&out)
        .into_iter()
        .filter_map(|e| e.get(3..).map(str::to_string))
        .collect())
}

/// Worktree path → (HEAD, branch ref), as `git worktree list` reports them.
pub type Worktrees = BTreeMap<PathBuf, (Option<String>, Option<String>)>;

/// `git worktree list --porcelain`.
pub fn worktrees(top: &Path) -> Result<Worktrees> {
    let mut c = git(top);
    c.args(["worktree", "list", "--porcelain", "-z"]);
    let out = run(c, "listing git worktrees", None)?;
    let mut map = BTreeMap::new();
    let mut cur: Option<(PathBuf, Option<String>, Option<String>)> = None;
    for field in out.split(|b| *b == 0) {
        let f = String::from_utf8_lossy(field);
        if f.is_empty() {
            if let Some((p, h, b)) = cur.take() {
                map.insert(p, (h, b));
            }
        } else if let Some(p) = f.strip_prefix("worktree ") {
            cur = Some((PathBuf::from(p), None, None));
        } else if let (Some(h), Some(c)) = (f.strip_prefix("HEAD "), cur.as_mut()) {
            c.1 = Some(h.to_string());
        } else if let (Some(b), Some(c)) = (f.strip_prefix("branch "), cur.as_mut()) {
            c.2 = Some(b.to_string());
        }
    }
    if let Some((p, h, b)) = cur.take() {
        map.insert(p, (h, b));
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numstat_sums_lines_binaries_and_renames() {
        let out = b"3\t1\tsrc/a.rs\0-\t-\tlogo.png\0\
0\t0\t\0old name.txt\0new name.txt\x002\t0\tb\0";
        assert_eq!(
            parse_numstat(out),
            DiffStat {
                files: 4,
                insertions: 5,
                deletions: 1
            }
        );
        assert_eq!(parse_numstat(b""), DiffStat::default());
    }

    #[test]
    fn revs_are_one_object_name_each_or_nothing() {
        let a = "0123456789abcdef0123456789abcdef01234567";
        let b = "89abcdef0123456789abcdef0123456789abcdef";
        assert_eq!(
            parse_revs(true, &format!("{a}\n{b}\n--"), 2),
            Some(vec![a.to_string(), b.to_string()])
        );
        // A failed call, a missing answer, or anything but an object name
        // (a ref name printed back, say) is no answer at all.
        assert_eq!(parse_revs(false, &format!("{a}\n{b}\n--"), 2), None);
        assert_eq!(parse_revs(true, &format!("{a}\n--"), 2), None);
        assert_eq!(parse_revs(true, &format!("{a}\nrefs/heads/x\n--"), 2), None);
        assert_eq!(parse_revs(true, &format!("{a}\n{}\n--", &b[..39]), 2), None);
    }

    #[test]
    fn revs_read_several_revisions_in_one_call() {
        let d = tempfile::tempdir().unwrap();
        let top = d.path();
        let git = |args: &[&str]| {
            let out = crate::git::git(top)
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "git {args:?}");
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        git(&["init", "-q", "-b", "main"]);
        // A file named like a revision must not make it ambiguous.
        std::fs::write(top.join("HEAD"), "x\n").unwrap();
        git(&["add", "HEAD"]);
        git(&["commit", "-qm", "i"]);
        let head = git(&["rev-parse", "--verify", "HEAD"]);
        let tree = git(&["rev-parse", "--verify", "HEAD^{tree}"]);
        assert_eq!(
            revs(top, &["HEAD", "HEAD^{tree}", "refs/heads/main"]),
            Some(vec![head.clone(), tree, head])
        );
        assert_eq!(revs(top, &["HEAD", "refs/heads/gone"]), None);
    }

    #[test]
    fn nul_paths_keeps_spaces_and_newlines() {
        assert_eq!(nul_paths(b"a b\0c\nd\0\0"), ["a b", "c\nd"]);
    }
}
