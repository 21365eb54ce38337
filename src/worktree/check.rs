//! `check`: everything `--worktree` can refuse before anything exists (a
//! repository with commits, `--base`, access, globs), and the plan moved into a worktree.

use std::path::{Path, PathBuf};

use crate::agent::Access;
use crate::error::{Error, Result};
use crate::prompt;
use crate::run::Plan;

use super::allow::Allow;
use super::repo::{git, line, probe};
use super::{Checked, WorktreeOptions, short};

/// Validate `--worktree` and its options against the plan. Fails with a
/// usage error (exit 2) before anything is created.
pub fn check(args: &WorktreeOptions, plan: &Plan) -> Result<Option<Checked>> {
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
    // The questions below are independent: asked at once, not one git
    // process after another (this is before any candidate can start).
    let base_arg = args
        .base
        .as_deref()
        .map(str::trim)
        .filter(|b| !b.is_empty() && !b.starts_with('-'))
        .map(str::to_string);
    // A commit and its tree in one call (`super::repo::revs`); when that
    // does not answer, the commit alone, as `--verify` checks it.
    let with_tree = |rev: &str| match super::repo::revs(
        &top,
        &[&format!("{rev}^{{commit}}"), &format!("{rev}^{{tree}}")],
    ) {
        Some(mut v) => {
            let tree = v.pop();
            v.pop().map(|c| (c, tree))
        }
        None => verify(&format!("{rev}^{{commit}}")).map(|c| (c, None)),
    };
    let (head, given_base, baton_branch, common_dir, user_branch, identity) =
        std::thread::scope(|s| {
            // Asked once a process, by the first pinned git call otherwise:
            // in one candidate's way.
            s.spawn(crate::git::has_attr_source);
            let head = s.spawn(|| with_tree("HEAD"));
            let given_base = s.spawn(|| base_arg.as_deref().and_then(with_tree));
            let baton_branch = s.spawn(|| verify("refs/heads/baton"));
            let identity = s.spawn(|| super::create::repo_identity(&top));
            let common_dir = s.spawn(|| {
                let mut c = git(&top);
                c.args(["rev-parse", "--path-format=absolute", "--git-common-dir"]);
                line(c, "finding the repository's git directory").map(PathBuf::from)
            });
            let user_branch = probe({
                let mut c = git(&top);
                c.args(["symbolic-ref", "-q", "--short", "HEAD"]);
                c
            })
            .filter(|(ok, _)| *ok)
            .map(|(_, b)| b);
            let join =
                |e| Error::Internal(format!("a git call of the worktree check panicked: {e:?}"));
            Ok::<_, Error>((
                head.join().map_err(join)?,
                given_base.join().map_err(join)?,
                baton_branch.join().map_err(join)?,
                common_dir.join().map_err(join)?,
                user_branch,
                identity.join().map_err(join)?,
            ))
        })?;
    // Only a repository without HEAD needs to know whether it has any ref.
    let any_ref = || {
        probe({
            let mut c = git(&top);
            c.args(["for-each-ref", "--count=1", "--format=%(refname)"]);
            c
        })
        .is_some_and(|(ok, out)| ok && !out.is_empty())
    };
    if head.is_none() && (args.base.is_none() || !any_ref()) {
        return Err(Error::usage_hint(
            format!(
                "the repository at {} has no commits yet: a worktree branches from a commit",
                top.display()
            ),
            "commit something first (or pass --base with an existing commit)",
        ));
    }
    let (base, base_tree) = match &args.base {
        None => head.clone().expect("checked above"),
        Some(b) => {
            let b = b.trim();
            given_base.ok_or_else(|| {
                Error::usage_hint(
                    format!("--base `{b}` is not a commit in this repository"),
                    "give a branch, tag or commit id (`git log --oneline` lists commits)",
                )
            })?
        }
    };
    let head = head.map(|(c, _)| c);
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
    if baton_branch.is_some() {
        return Err(Error::usage_hint(
            "a branch named `baton` exists, so git cannot create `baton/<id>` branches beside it",
            "rename that branch (git branch -m baton <new-name>)",
        ));
    }
    let common_dir = common_dir?;
    Ok(Some(Checked {
        top,
        rel_cwd,
        common_dir,
        base,
        base_tree,
        user_branch,
        include_dirty: args.include_dirty,
        allow: args.allow.clone(),
        test_cmd: args.test_cmd.clone(),
        anonymous: false,
        title: None,
        identity,
    }))
}

impl Checked {
    /// The plan moved into worktree `path` (pure: creates nothing).
    pub fn plan_for(&self, plan: &Plan, path: &Path, branch: &str, writable: Vec<PathBuf>) -> Plan {
        let mut p = plan.clone();
        // Nothing of the user's `.git` is granted; for a CLI whose sandbox
        // opens more than it is granted (claude's), all of it is denied.
        p.protected_paths = protected_paths(&self.common_dir, &[]);
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
    pub(super) fn brief_note(&self, branch: &str) -> String {
        let mut s = format!(
            "\nThis directory is a git repository made for this task (the person's history is \
             readable in it), on its own branch `{branch}` (from commit {}{}). The person's own \
             checkout is elsewhere: work only here. You may commit on this branch; whatever you \
             leave uncommitted, baton commits when you finish.\n",
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
    /// to commit there: its own repository's git directory `<path>/.git`
    /// (codex keeps a `.git` under a writable root read-only unless it is a
    /// root of its own). Nothing of the user's `.git`: the writer's
    /// repository has its own objects and refs (`create`). One function for
    /// the run and `--dry-run`, so that the dry run shows the run's argv.
    pub(super) fn writable_dirs(&self, path: &Path) -> Vec<PathBuf> {
        vec![path.join(".git")]
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
pub(super) fn protected_paths(common: &Path, granted: &[PathBuf]) -> Vec<PathBuf> {
    pub(super) fn walk(dir: &Path, granted: &[PathBuf], out: &mut Vec<PathBuf>) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn checked() -> Checked {
        Checked {
            top: "/repo".into(),
            rel_cwd: "sub".into(),
            common_dir: "/repo/.git".into(),
            base: "0123456789abcdef0123456789abcdef01234567".into(),
            base_tree: None,
            user_branch: Some("main".into()),
            include_dirty: false,
            allow: vec!["src/**".into()],
            test_cmd: Some("make test".into()),
            anonymous: false,
            title: None,
            identity: None,
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
        for dir in ["objects/ab", "refs/heads/baton", "refs/tags", "hooks"] {
            std::fs::create_dir_all(c.join(dir)).unwrap();
        }
        for f in ["HEAD", "index", "config", "refs/heads/main"] {
            std::fs::write(c.join(f), "x").unwrap();
        }
        let granted = vec![c.join("refs/heads/baton")];
        let rel = |got: Vec<PathBuf>| -> Vec<String> {
            got.iter()
                .map(|p| {
                    p.strip_prefix(c.canonicalize().unwrap())
                        .unwrap()
                        .display()
                        .to_string()
                })
                .collect()
        };
        assert_eq!(
            rel(protected_paths(&c, &granted)),
            [
                "HEAD",
                "config",
                "hooks",
                "index",
                "objects",
                "refs/heads/main",
                "refs/tags"
            ]
        );
        // What a writer gets: nothing granted, all of it denied.
        assert_eq!(
            rel(protected_paths(&c, &[])),
            ["HEAD", "config", "hooks", "index", "objects", "refs"]
        );
    }

    /// Issue 31: a peer granted the user's `.git/objects` replaced a loose
    /// object of the user's; one granted `refs/heads/baton` moved a
    /// sibling's tested branch. A writer is granted its own `.git` only.
    #[test]
    fn writable_dirs_are_the_writer_s_own_git_dir_only() {
        let checked = checked();
        let path = Path::new("/repo/.baton/worktrees/x");
        let d = checked.writable_dirs(path);
        assert_eq!(d, [path.join(".git")]);
        assert!(!d.iter().any(|p| p.starts_with(&checked.common_dir)));
    }
}
