//! Worktree mode: `baton run --worktree` lets a peer write code without
//! touching the user's checkout.
//!
//! Theory of operation:
//! - `check` validates everything that can fail fast (a git repository with
//!   commits, `--base` a commit, not read-only, globs) and creates nothing.
//! - `prepare` makes `.baton/worktrees/<id>` on a new branch `baton/<id>` from
//!   the base commit and returns the run's `Plan` moved there (`cwd`, the
//!   brief, `writable_dirs` so a sandboxed peer can commit, and
//!   `protected_paths`: the rest of the user's git state, for a CLI whose
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
//! - `finish` stages what the peer left, reverts paths outside `--allow`
//!   (relative to where the peer started, so carried changes stay), commits
//!   with `commit-tree`/`update-ref` (no hooks), fills the result's
//!   `worktree` object, then runs `--test-cmd` on the committed state and
//!   fills `verification`. Its failures become warnings: the peer's result is
//!   never lost to a bookkeeping error.
//!
//! baton never merges, pushes or deletes a branch on its own; `baton
//! worktree remove <id> --branch` is the explicit way.
//!
//! Seams for background jobs: a job stores the `Plan` that `prepare`
//! returned and the serialisable `Session`; its runner calls `run::execute`
//! and then `finish` with a `verify::Stop` it installed before the peer
//! started. `store::list` / `store::remove` serve `baton prune`.

pub mod allow;
pub mod repo;
pub mod store;
pub mod verify;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::agent::Access;
use crate::cli::{WorktreeArgs, WorktreeCommand};
use crate::error::{Error, Result};
use crate::output::{self, Mode};
use crate::result::{ErrorInfo, RunResult, SCHEMA_VERSION, Status};
use crate::run::{self, Plan};
use crate::{fsutil, ids, process, prompt};

use allow::Allow;
use repo::{git, line, probe, run as git_run};

/// Everything `check` established; creates nothing.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The user's repository top (canonical).
    pub top: PathBuf,
    /// The run's cwd relative to `top` (the peer gets the same place in the worktree).
    pub rel_cwd: PathBuf,
    /// The repository's common git directory (absolute).
    pub common_dir: PathBuf,
    /// The commit the branch starts from.
    pub base: String,
    /// The branch the user is on, for messages (`None`: detached).
    pub user_branch: Option<String>,
    pub include_dirty: bool,
    pub allow: Vec<String>,
    pub test_cmd: Option<String>,
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
}

/// Validate `--worktree` and its options against the plan. Fails with a
/// usage error (exit 2) before anything is created.
pub fn check(args: &WorktreeArgs, plan: &Plan) -> Result<Option<Checked>> {
    if !args.enabled {
        return Ok(None);
    }
    if plan.access == Access::ReadOnly {
        return Err(Error::usage_hint(
            "--worktree is for peers that write; it cannot be combined with read-only access",
            "drop --worktree for read-only advice, or use --access workspace",
        ));
    }
    Allow::new(&args.allow)?;
    if args
        .test_cmd
        .as_deref()
        .is_some_and(|t| t.trim().is_empty())
    {
        return Err(Error::usage("--test-cmd is empty"));
    }
    let cwd = &plan.cwd;
    let top = match probe({
        let mut c = git(cwd);
        c.args(["rev-parse", "--show-toplevel"]);
        c
    }) {
        None => {
            return Err(Error::usage_hint(
                "--worktree needs git, and `git` was not found on PATH",
                "install git",
            ));
        }
        Some((true, t)) if !t.is_empty() => PathBuf::from(t),
        Some(_) => {
            return Err(Error::usage_hint(
                format!(
                    "--worktree needs a git repository, and {} is not in one",
                    cwd.display()
                ),
                "run baton inside the repository (or pass --cwd), or drop --worktree",
            ));
        }
    };
    let top = top.canonicalize().unwrap_or(top);
    let rel_cwd = cwd
        .strip_prefix(&top)
        .unwrap_or(Path::new(""))
        .to_path_buf();
    let verify = |rev: &str| {
        probe({
            let mut c = git(&top);
            c.args(["rev-parse", "--verify", "-q", "--end-of-options", rev]);
            c
        })
        .filter(|(ok, sha)| *ok && !sha.is_empty())
        .map(|(_, sha)| sha)
    };
    let head = verify("HEAD^{commit}");
    let any_ref = probe({
        let mut c = git(&top);
        c.args(["for-each-ref", "--count=1", "--format=%(refname)"]);
        c
    })
    .is_some_and(|(ok, out)| ok && !out.is_empty());
    if head.is_none() && (!any_ref || args.base.is_none()) {
        return Err(Error::usage_hint(
            format!(
                "the repository at {} has no commits yet: a worktree branches from a commit",
                top.display()
            ),
            "commit something first (or pass --base with an existing commit)",
        ));
    }
    let base = match &args.base {
        None => head.clone().expect("checked above"),
        Some(b) => {
            let b = b.trim();
            let found = (!b.is_empty() && !b.starts_with('-'))
                .then(|| verify(&format!("{b}^{{commit}}")))
                .flatten();
            found.ok_or_else(|| {
                Error::usage_hint(
                    format!("--base `{b}` is not a commit in this repository"),
                    "give a branch, tag or commit id (`git log --oneline` lists commits)",
                )
            })?
        }
    };
    if args.include_dirty {
        if head.as_deref() != Some(base.as_str()) {
            return Err(Error::usage_hint(
                "--include-dirty carries the changes you made on top of HEAD, so --base must be HEAD",
                "drop --base (or --include-dirty), or commit your changes and branch from them",
            ));
        }
        let unmerged = probe({
            let mut c = git(&top);
            c.args(["ls-files", "--unmerged"]);
            c
        })
        .is_some_and(|(_, out)| !out.is_empty());
        if unmerged {
            return Err(Error::usage_hint(
                "--include-dirty cannot carry an unfinished merge: the index has conflicts",
                "resolve the conflicts (or abort the merge) first",
            ));
        }
    }
    if verify("refs/heads/baton").is_some() {
        return Err(Error::usage_hint(
            "a branch named `baton` exists, so git cannot create `baton/<id>` branches beside it",
            "rename that branch (git branch -m baton <new-name>)",
        ));
    }
    let common_dir = {
        let mut c = git(&top);
        c.args(["rev-parse", "--path-format=absolute", "--git-common-dir"]);
        PathBuf::from(line(c, "finding the repository's git directory")?)
    };
    let user_branch = probe({
        let mut c = git(&top);
        c.args(["symbolic-ref", "-q", "--short", "HEAD"]);
        c
    })
    .filter(|(ok, _)| *ok)
    .map(|(_, b)| b);
    Ok(Some(Checked {
        top,
        rel_cwd,
        common_dir,
        base,
        user_branch,
        include_dirty: args.include_dirty,
        allow: args.allow.clone(),
        test_cmd: args.test_cmd.clone(),
    }))
}

impl Checked {
    /// The plan moved into worktree `path` (pure: creates nothing).
    pub fn plan_for(&self, plan: &Plan, path: &Path, branch: &str, writable: Vec<PathBuf>) -> Plan {
        let mut p = plan.clone();
        p.protected_paths = protected_paths(&self.common_dir, &writable);
        // (Joining an empty path would add a trailing `/`.)
        p.cwd = if self.rel_cwd.as_os_str().is_empty() {
            path.to_path_buf()
        } else {
            path.join(&self.rel_cwd)
        };
        p.writable_dirs = writable;
        if !p.raw {
            p.prompt = format!(
                "{}{}",
                prompt::brief(&p.task, p.access, &p.cwd.display().to_string()),
                self.brief_note(branch)
            );
        }
        p
    }

    /// What the peer is told about the worktree (appended to the brief).
    fn brief_note(&self, branch: &str) -> String {
        let mut s = format!(
            "\nThis directory is a git worktree made for this task, on its own branch `{branch}` \
             (from commit {}{}). The person's own checkout is elsewhere: work only here. You may \
             commit on this branch; whatever you leave uncommitted, baton commits when you finish.\n",
            short(&self.base),
            if self.include_dirty {
                ", plus the person's uncommitted changes, left uncommitted as they had them"
            } else {
                ""
            }
        );
        if !self.allow.is_empty() {
            let globs: Vec<String> = self.allow.iter().map(|g| format!("`{g}`")).collect();
            s.push_str(&format!(
                "Change only paths matching {}; baton reverts changes anywhere else.\n",
                globs.join(", ")
            ));
        }
        if let Some(t) = &self.test_cmd {
            s.push_str(&format!(
                "When you finish, baton runs this check here: `{t}`.\n"
            ));
        }
        s
    }

    /// The directories a sandboxed peer needs, besides the worktree itself,
    /// to commit there: the worktree's own git dir (HEAD, index, logs), the
    /// object store, and the `baton/` ref namespace with its reflogs. Not the
    /// whole `.git`: the user's HEAD, index and other branches stay out of
    /// reach. (A reftable repository keeps every ref in one place, which is
    /// then granted as a whole.)
    fn writable_dirs(&self, gitdir: &Path) -> Vec<PathBuf> {
        let c = &self.common_dir;
        vec![
            gitdir.to_path_buf(),
            c.join("objects"),
            c.join("refs").join("heads").join("baton"),
            c.join("logs").join("refs").join("heads").join("baton"),
            c.join("reftable"),
        ]
    }
}

/// What in the common git directory a sandboxed peer must not write, given
/// the directories it is granted: every existing entry that is neither a
/// grant nor on the way to one (so the user's HEAD, index, config, hooks,
/// branches other than `baton/`, tags, packed-refs, other worktrees). codex
/// only writes what it is granted; claude 2.1.332 opens the whole main
/// `.git` to a sandboxed peer in a linked worktree, so it is told to deny
/// these (a deny wins over a grant there, hence nothing granted may lie
/// under one). Existing paths only: a sandbox makes a mount point for a
/// missing one, which would be a new file in the user's `.git`.
fn protected_paths(common: &Path, granted: &[PathBuf]) -> Vec<PathBuf> {
    fn walk(dir: &Path, granted: &[PathBuf], out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            if granted.contains(&p) {
                continue;
            }
            let on_the_way = granted.iter().any(|g| g.starts_with(&p));
            if on_the_way && p.is_dir() && !p.is_symlink() {
                walk(&p, granted, out);
            } else {
                out.push(p);
            }
        }
    }
    // Compare real paths: a symlink on the way must not hide a grant.
    let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let common = real(common);
    let granted: Vec<PathBuf> = granted.iter().map(|g| real(g)).collect();
    let mut out = Vec::new();
    walk(&common, &granted, &mut out);
    out
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// Create worktree `id` for `plan`. `job_id` names a background job.
pub fn prepare(
    c: &Checked,
    plan: &Plan,
    id: &str,
    job_id: Option<&str>,
) -> Result<(Plan, Session)> {
    if !ids::is_valid(id) {
        return Err(Error::Internal(format!("worktree id `{id}` is not an id")));
    }
    let store = store::ensure_dir(&plan.root)?;
    let path = store.join(id);
    let branch = format!("baton/{id}");
    let mut warnings = Vec::new();
    let (start_tree, staged, carried) = if c.include_dirty {
        let d = snapshot_dirty(c, &store, id)?;
        if d.carried.is_empty() {
            warnings.push("--include-dirty: there were no uncommitted changes to carry".into());
        } else {
            warnings.push(format!(
                "--include-dirty carried {} uncommitted path(s) into the worktree; commit or \
                 stash them in your checkout before merging `{branch}`, or the merge will conflict",
                d.carried.len()
            ));
        }
        (d.work, Some(d.staged), d.carried)
    } else {
        let mut g = git(&c.top);
        g.args(["rev-parse", &format!("{}^{{tree}}", c.base)]);
        (line(g, "reading the base commit")?, None, Vec::new())
    };

    if let Err(e) = create(c, &path, &branch, &start_tree, staged.as_deref(), &carried) {
        discard(&c.top, &path, &branch);
        return Err(e);
    }
    let gitdir = {
        let mut g = git(&path);
        g.args(["rev-parse", "--absolute-git-dir"]);
        PathBuf::from(line(g, "finding the worktree's git directory")?)
    };
    let writable = c
        .writable_dirs(&gitdir)
        .into_iter()
        .filter(|d| d.is_dir())
        .collect();
    let mut p = c.plan_for(plan, &path, &branch, writable);
    p.warnings.extend(warnings);
    if !p.cwd.is_dir() {
        // The user's cwd does not exist at the base commit (an untracked or
        // newer directory): give the peer the same place, empty.
        std::fs::create_dir_all(&p.cwd)
            .map_err(|e| Error::io(format!("creating {}", p.cwd.display()), e))?;
        p.warnings.push(format!(
            "{} does not exist at the base commit; the peer starts in it empty",
            c.rel_cwd.display()
        ));
    }
    let record = store::Record {
        id: id.to_string(),
        job_id: job_id.map(str::to_string),
        agent: plan.agent.name().to_string(),
        branch: branch.clone(),
        base: c.base.clone(),
        path: path.clone(),
        created_ms: store::now_ms(),
        pid: Some(std::process::id()),
        lock: Some(store::hold(&plan.root, id)?),
        task: crate::agent::clip(plan.task.lines().next().unwrap_or(""), 200),
        include_dirty: c.include_dirty,
        allow: c.allow.clone(),
        test_cmd: c.test_cmd.clone(),
        finished_ms: None,
        status: None,
    };
    if let Err(e) = store::save(&plan.root, &record) {
        discard(&c.top, &path, &branch);
        return Err(e);
    }
    let session = Session {
        id: id.to_string(),
        job_id: job_id.map(str::to_string),
        root: plan.root.clone(),
        top: c.top.clone(),
        path,
        branch,
        base: c.base.clone(),
        start_tree,
        carried,
        user_branch: c.user_branch.clone(),
        allow: c.allow.clone(),
        test_cmd: c.test_cmd.clone(),
    };
    Ok((p, session))
}

struct Dirty {
    staged: String,
    work: String,
    carried: Vec<String>,
}

/// Snapshot the user's uncommitted state without writing their index: see
/// the module comment.
fn snapshot_dirty(c: &Checked, store: &Path, id: &str) -> Result<Dirty> {
    struct Remove(PathBuf);
    impl Drop for Remove {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    let tmp = Remove(store.join(format!(".{id}.index")));
    let index = {
        let mut g = git(&c.top);
        g.args(["rev-parse", "--git-path", "index"]);
        repo::abs(&c.top, &line(g, "finding your index")?)
    };
    let with_tmp = |args: &[&str]| {
        let mut g = git(&c.top);
        g.env("GIT_INDEX_FILE", &tmp.0).args(args);
        g
    };
    match std::fs::read(&index) {
        Ok(bytes) => fsutil::write_atomic(&tmp.0, &bytes)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            git_run(
                with_tmp(&["read-tree", &c.base]),
                "reading the base commit",
                None,
            )?;
        }
        Err(e) => return Err(Error::io(format!("reading {}", index.display()), e)),
    }
    let staged = line(
        with_tmp(&["write-tree"]),
        "snapshotting your staged changes",
    )?;
    git_run(
        with_tmp(&["add", "--all"]),
        "snapshotting your uncommitted changes",
        None,
    )?;
    let work = line(
        with_tmp(&["write-tree"]),
        "snapshotting your uncommitted changes",
    )?;
    let carried = repo::changed_paths(&c.top, &c.base, &work)?;
    Ok(Dirty {
        staged,
        work,
        carried,
    })
}

fn create(
    c: &Checked,
    path: &Path,
    branch: &str,
    start_tree: &str,
    staged: Option<&str>,
    carried: &[String],
) -> Result<()> {
    let mut g = git(&c.top);
    g.args(["worktree", "add", "--quiet"]);
    if !carried.is_empty() {
        g.arg("--no-checkout");
    }
    g.args(["-b", branch]).arg(path).arg(&c.base);
    git_run(g, "creating the worktree", None)?;
    if carried.is_empty() {
        return Ok(());
    }
    // Files = the user's work-tree state; then index = their staged state.
    let mut g = git(path);
    g.args(["read-tree", "-u", "--reset", start_tree]);
    git_run(
        g,
        "checking out your uncommitted changes in the worktree",
        None,
    )?;
    if let Some(s) = staged {
        let mut g = git(path);
        g.args(["read-tree", s]);
        git_run(g, "staging your staged changes in the worktree", None)?;
    }
    Ok(())
}

/// Remove a worktree and branch baton just made (best effort: on failure).
fn discard(top: &Path, path: &Path, branch: &str) {
    let mut g = git(top);
    g.args(["worktree", "remove", "--force"]).arg(path);
    let _ = probe(g);
    let mut g = git(top);
    g.args(["branch", "-D", "--end-of-options", branch]);
    let _ = probe(g);
    let _ = std::fs::remove_dir_all(path);
}

/// The peer never ran (baton failed before or while starting it): remove
/// what `prepare` made, unless something is in it after all.
pub fn abandon(s: &Session) {
    let untouched = rev_of(&s.path, "HEAD").as_deref() == Some(s.base.as_str()) && {
        let mut g = git(&s.path);
        g.args(["add", "--all"]);
        probe(g).is_some_and(|(ok, _)| ok)
            && probe({
                let mut g = git(&s.path);
                g.args(["diff", "--cached", "--quiet", &s.start_tree, "--"]);
                g
            })
            .is_some_and(|(ok, _)| ok)
    };
    if untouched {
        discard(&s.top, &s.path, &s.branch);
        store::forget(&s.root, &s.id);
    }
}

fn rev_of(dir: &Path, rev: &str) -> Option<String> {
    probe({
        let mut g = git(dir);
        g.args(["rev-parse", "--verify", "-q", "--end-of-options", rev]);
        g
    })
    .filter(|(ok, _)| *ok)
    .map(|(_, s)| s)
}

/// The `worktree` object of the result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub id: String,
    pub path: PathBuf,
    pub branch: String,
    /// The commit the branch started from.
    pub base: String,
    /// The branch's tip after baton's commit.
    pub head: String,
    /// `base..branch`, oldest first: the peer's own commits, then baton's.
    pub commits: Vec<repo::Commit>,
    /// Equal to the summary line of `git diff --stat base..branch`.
    pub diffstat: repo::DiffStat,
    /// Every path that differs between base and branch.
    pub changed_files: Vec<String>,
    /// The exact command that brings the work into the current branch.
    pub merge_hint: String,
    /// Paths changed outside `--allow`, reverted by baton.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reverted: Vec<String>,
    /// Paths carried from the user's uncommitted state (`--include-dirty`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub carried: Vec<String>,
}

/// After the peer: commit, describe the branch, run `--test-cmd`, and
/// rewrite `result.json` in `dir`. Never fails: problems become warnings.
pub fn finish(s: &Session, plan: &Plan, result: &mut RunResult, dir: &Path, stop: &verify::Stop) {
    let status = result.status;
    match settle(s, plan, status) {
        Ok((report, notes)) => {
            result.warnings.extend(notes);
            result
                .changed_files
                .retain(|p| !report.reverted.contains(p));
            if !report.reverted.is_empty() {
                result.summary.push_str(&format!(
                    "; {} reverted outside --allow",
                    report.reverted.len()
                ));
            }
            result.summary.push_str(&format!(
                "; branch {}: {} file(s), +{} -{}",
                report.branch,
                report.diffstat.files,
                report.diffstat.insertions,
                report.diffstat.deletions
            ));
            if let Ok(v) = serde_json::to_value(&report) {
                result.extra.insert("worktree".into(), v);
            }
        }
        Err(e) => {
            result.warnings.push(format!(
                "worktree: could not commit the peer's work ({e}); it is left as the peer left \
                 it in {}",
                s.path.display()
            ));
            result.extra.insert(
                "worktree".into(),
                json!({
                    "id": s.id,
                    "path": s.path,
                    "branch": s.branch,
                    "base": s.base,
                    "error": e.to_string(),
                }),
            );
        }
    }
    if let Some(cmd) = &s.test_cmd {
        verify_run(s, plan, result, dir, stop, cmd);
    }
    if let Some(mut r) = store::load(&s.root, &s.id) {
        r.finished_ms = Some(store::now_ms());
        r.status = Some(result.status.as_str().to_string());
        r.pid = None;
        if let Err(e) = store::save(&s.root, &r) {
            result
                .warnings
                .push(format!("worktree: could not update its record: {e}"));
        }
    }
    match serde_json::to_vec(&*result) {
        Ok(json) => {
            if let Err(e) = fsutil::write_atomic(&dir.join("result.json"), &json) {
                result
                    .warnings
                    .push(format!("could not save result.json: {e}"));
            }
        }
        Err(e) => result
            .warnings
            .push(format!("could not save result.json: {e}")),
    }
}

fn verify_run(
    s: &Session,
    plan: &Plan,
    result: &mut RunResult,
    dir: &Path,
    stop: &verify::Stop,
    cmd: &str,
) {
    if result.status != Status::Success {
        result.warnings.push(format!(
            "--test-cmd was not run: the peer's run ended with status `{}`",
            result.status.as_str()
        ));
        return;
    }
    if !plan.cwd.is_dir() {
        result
            .warnings
            .push("--test-cmd was not run: the worktree is gone".into());
        return;
    }
    let env = [
        ("BATON_WORKTREE".to_string(), s.path.display().to_string()),
        ("BATON_BRANCH".to_string(), s.branch.clone()),
    ];
    match verify::run(
        cmd,
        &plan.cwd,
        &dir.join("test.log"),
        &env,
        Duration::from_millis(plan.timeout_ms),
        run::KILL_GRACE,
        stop,
    ) {
        Ok(checked) => {
            let v = &checked.verification;
            result.summary.push_str(&if v.passed {
                "; test-cmd passed".to_string()
            } else if checked.timed_out {
                "; test-cmd timed out".to_string()
            } else {
                format!(
                    "; test-cmd FAILED ({})",
                    v.exit_code
                        .map_or("no exit code".to_string(), |c| format!("exit {c}"))
                )
            });
            if let Some(sig) = checked.interrupted {
                result.status = Status::Cancelled;
                result.error = Some(ErrorInfo {
                    kind: "cancelled".into(),
                    message: format!(
                        "stopped by {} while --test-cmd ran",
                        process::signal_name(sig)
                    ),
                    hint: Some(format!(
                        "the peer's work is committed on {}; run the check yourself in {}",
                        s.branch,
                        plan.cwd.display()
                    )),
                });
            }
            result.verification = Some(checked.verification);
        }
        Err(e) => result
            .warnings
            .push(format!("--test-cmd could not be run: {e}")),
    }
}

/// Stage, revert outside `--allow`, commit, and describe the branch.
fn settle(s: &Session, plan: &Plan, status: Status) -> Result<(Report, Vec<String>)> {
    let wt = &s.path;
    if !wt.is_dir() {
        return Err(Error::io(
            "reading the worktree",
            std::io::Error::new(std::io::ErrorKind::NotFound, "its directory is gone"),
        ));
    }
    let mut notes = Vec::new();
    let mut g = git(wt);
    g.args(["add", "--all"]);
    git_run(g, "staging what the peer left", None)?;

    let reverted = match Allow::new(&s.allow)? {
        None => Vec::new(),
        Some(allow) => {
            let mut g = git(wt);
            g.args([
                "diff",
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
                let mut g = git(wt);
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

    let head = repo::rev(wt, "HEAD", "reading the worktree's HEAD")?;
    let branch_ref = format!("refs/heads/{}", s.branch);
    let on_branch = probe({
        let mut g = git(wt);
        g.args(["symbolic-ref", "-q", "HEAD"]);
        g
    })
    .is_some_and(|(ok, r)| ok && r == branch_ref);
    let old_branch = rev_of(wt, &branch_ref);
    let tree = {
        let mut g = git(wt);
        g.arg("write-tree");
        line(g, "writing the worktree's tree")?
    };
    let ident = repo::identity_env(wt);
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
        tip = repo::commit_tree(wt, &s.start_tree, &tip, &msg, &ident)?;
    }
    let tip_tree = repo::rev(wt, &format!("{tip}^{{tree}}"), "reading a tree")?;
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
        tip = repo::commit_tree(wt, &tree, &tip, &msg, &ident)?;
    }
    if old_branch.as_deref() != Some(tip.as_str()) {
        let mut g = git(wt);
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
        let mut g = git(wt);
        g.args(["symbolic-ref", "HEAD", &branch_ref]);
        git_run(g, "checking the branch out again", None)?;
    }
    let contains_base = probe({
        let mut g = git(wt);
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
        commits: repo::commits(wt, &s.base, &tip)?,
        diffstat: repo::diffstat(wt, &s.base, &tip)?,
        changed_files: repo::changed_paths(wt, &s.base, &tip)?,
        merge_hint: format!("git merge {}", s.branch),
        reverted,
        carried: s.carried.clone(),
    };
    Ok((report, notes))
}

impl Session {
    fn branch_source(&self) -> String {
        match &self.user_branch {
            Some(b) => format!("`{b}`"),
            None => format!("the detached HEAD at {}", short(&self.base)),
        }
    }
}

/// `baton run --worktree` in the foreground.
pub fn run(plan: Plan, c: &Checked, mode: Mode) -> Result<i32> {
    let spec = plan.command()?;
    let program = plan.program(&spec)?;
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
    let spec = wplan.command()?;
    let mut result = match run::execute(
        &wplan,
        &spec,
        &program,
        Some(&dir),
        &mut interrupts,
        &mut |_| {},
    ) {
        Ok(r) => r,
        Err(e) => {
            abandon(&session);
            return Err(e);
        }
    };
    finish(&session, &wplan, &mut result, &dir, &stop);
    output::print_result(&result, mode)?;
    Ok(result.status.exit_code())
}

/// What `--dry-run --worktree` prints: the run as it would be, in a
/// worktree that is not created (its id is a placeholder).
pub fn dry_run_json(c: &Checked, plan: &Plan) -> Result<Value> {
    let id = ids::new_id();
    let path = store::dir(&plan.root).join(&id);
    let branch = format!("baton/{id}");
    let p = c.plan_for(
        plan,
        &path,
        &branch,
        c.writable_dirs(&c.common_dir.join("worktrees").join(&id)),
    );
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

/// Lines for `--text` output of a result's `worktree` object.
pub fn text_lines(w: &Value) -> String {
    let mut s = String::new();
    let get = |k: &str| w.get(k).and_then(Value::as_str).unwrap_or("");
    s.push_str(&format!("worktree: {}\n", get("path")));
    let d = &w["diffstat"];
    s.push_str(&format!(
        "branch:   {} ({} file(s), +{} -{})\n",
        get("branch"),
        d["files"].as_u64().unwrap_or(0),
        d["insertions"].as_u64().unwrap_or(0),
        d["deletions"].as_u64().unwrap_or(0)
    ));
    if let Some(r) = w["reverted"].as_array().filter(|r| !r.is_empty()) {
        let names: Vec<&str> = r.iter().filter_map(Value::as_str).collect();
        s.push_str(&format!("reverted: {}\n", names.join(", ")));
    }
    if !get("merge_hint").is_empty() {
        s.push_str(&format!("merge:    {}\n", get("merge_hint")));
    }
    s
}

/// `baton worktree list|remove`.
pub fn command(cmd: WorktreeCommand, mode: Mode) -> Result<i32> {
    let cwd = std::env::current_dir().map_err(|e| Error::io("reading the current directory", e))?;
    let root = store::store_root(&cwd);
    match cmd {
        WorktreeCommand::List => {
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
        WorktreeCommand::Remove { id, branch, force } => {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn checked() -> Checked {
        Checked {
            top: "/repo".into(),
            rel_cwd: "sub".into(),
            common_dir: "/repo/.git".into(),
            base: "0123456789abcdef0123456789abcdef01234567".into(),
            user_branch: Some("main".into()),
            include_dirty: false,
            allow: vec!["src/**".into()],
            test_cmd: Some("make test".into()),
        }
    }

    #[test]
    fn the_brief_names_branch_allow_and_check() {
        let n = checked().brief_note("baton/x");
        assert!(n.contains("`baton/x`"));
        assert!(n.contains("0123456789ab"));
        assert!(n.contains("`src/**`"));
        assert!(n.contains("`make test`"));
        assert!(!n.contains("uncommitted changes, left"));
    }

    #[test]
    fn protected_paths_are_the_users_git_state_around_the_grants() {
        let d = tempfile::tempdir().unwrap();
        let c = d.path().join(".git");
        for dir in [
            "objects/ab",
            "refs/heads/baton",
            "refs/heads/feature",
            "refs/tags",
            "logs/refs/heads/baton",
            "worktrees/me",
            "worktrees/other",
            "hooks",
        ] {
            std::fs::create_dir_all(c.join(dir)).unwrap();
        }
        for f in [
            "HEAD",
            "index",
            "config",
            "packed-refs",
            "refs/heads/main",
            "refs/heads/baton/me",
            "refs/heads/feature/x",
            "logs/HEAD",
            "logs/refs/heads/main",
        ] {
            std::fs::write(c.join(f), "x").unwrap();
        }
        let checked = Checked {
            common_dir: c.clone(),
            ..checked()
        };
        let granted: Vec<PathBuf> = checked
            .writable_dirs(&c.join("worktrees/me"))
            .into_iter()
            .filter(|p| p.is_dir())
            .collect();
        let got = protected_paths(&c, &granted);
        let rel: Vec<String> = got
            .iter()
            .map(|p| {
                p.strip_prefix(c.canonicalize().unwrap())
                    .unwrap()
                    .display()
                    .to_string()
            })
            .collect();
        assert_eq!(
            rel,
            [
                "HEAD",
                "config",
                "hooks",
                "index",
                "logs/HEAD",
                "logs/refs/heads/main",
                "packed-refs",
                "refs/heads/feature",
                "refs/heads/main",
                "refs/tags",
                "worktrees/other",
            ]
        );
        // Nothing granted is under a denied path (a deny would win).
        for g in &granted {
            let g = g.canonicalize().unwrap();
            assert!(!got.iter().any(|p| g.starts_with(p)), "{}", g.display());
        }
    }

    #[test]
    fn writable_dirs_stay_out_of_the_users_head_and_index() {
        let d = checked().writable_dirs(Path::new("/repo/.git/worktrees/x"));
        assert!(d.contains(&PathBuf::from("/repo/.git/worktrees/x")));
        assert!(d.contains(&PathBuf::from("/repo/.git/objects")));
        assert!(!d.contains(&PathBuf::from("/repo/.git")));
        assert!(
            !d.iter()
                .any(|p| p.ends_with("index") || p.ends_with("HEAD"))
        );
    }
}
