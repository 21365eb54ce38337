//! Making the worktree (`prepare`: `git worktree add` on a new branch from the
//! base) and taking it away again when a run is abandoned before its peer starts.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::git_pin::Pin;
use crate::run::Plan;

use super::include_dirty::snapshot_dirty;
use super::repo::{At, git, line, probe, run as git_run};
use super::store;
use super::{Checked, Session};

/// Create worktree `id` for `plan`. `job_id` names a background job.
pub fn prepare(
    c: &Checked,
    plan: &Plan,
    id: &str,
    job_id: Option<&str>,
) -> Result<(Plan, Session)> {
    if !store::is_id(id) {
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
    // Read right after git made the worktree, before any peer ran there:
    // from now on every git call in it is pinned to these paths.
    let pinned = (|| {
        let mut g = git(&path);
        g.args(["rev-parse", "--absolute-git-dir"]);
        let gitdir = PathBuf::from(line(g, "finding the worktree's git directory")?);
        Pin::record(&path, &gitdir, &c.common_dir, &start_tree)
    })();
    let pin = match pinned {
        Ok(p) => p,
        Err(e) => {
            discard(&c.top, &path, &branch);
            return Err(e);
        }
    };
    let gitdir = pin.git_dir.clone();
    let writable = c
        .writable_dirs(&gitdir)
        .into_iter()
        .filter(|d| d.is_dir())
        .collect();
    let mut p = c.plan_for(plan, &path, &branch, writable);
    p.git_pin = Some(pin.clone());
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
        pin: Some(pin.clone()),
        tampered: None,
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
        pin: Some(pin),
        run_from: None,
    };
    Ok((p, session))
}

pub(super) fn create(
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
pub(super) fn discard(top: &Path, path: &Path, branch: &str) {
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
    let Ok(pin) = s.pin() else {
        return;
    };
    // A worktree whose git files changed is not "untouched": it stays.
    let untouched =
        pin.verify().is_ok() && rev_of(&pin, "HEAD").as_deref() == Some(s.base.as_str()) && {
            let mut g = pin.git();
            g.args(["add", "--all"]);
            probe(g).is_some_and(|(ok, _)| ok)
                && probe({
                    let mut g = pin.git();
                    g.arg("diff").args(crate::git::DIFF).args([
                        "--cached",
                        "--quiet",
                        &s.start_tree,
                        "--",
                    ]);
                    g
                })
                .is_some_and(|(ok, _)| ok)
        };
    if untouched {
        discard(&s.top, &s.path, &s.branch);
        store::forget(&s.root, &s.id);
    }
}

pub(super) fn rev_of(at: &(impl At + ?Sized), rev: &str) -> Option<String> {
    probe({
        let mut g = at.git();
        g.args(["rev-parse", "--verify", "-q", "--end-of-options", rev]);
        g
    })
    .filter(|(ok, _)| *ok)
    .map(|(_, s)| s)
}
