//! Making the worktree (`prepare`: the writer's repository of its own, on a
//! new branch from the base) and taking it away again when a run is
//! abandoned before its peer starts.

use std::path::Path;

use crate::error::{Error, Result};
use crate::git::pin::Pin;
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
        let tree = match &c.base_tree {
            Some(t) => t.clone(),
            None => {
                let mut g = git(&c.top);
                g.args(["rev-parse", &format!("{}^{{tree}}", c.base)]);
                line(g, "reading the base commit")?
            }
        };
        (tree, None, Vec::new())
    };

    if let Err(e) = create(c, &path, &branch, &start_tree, staged.as_deref(), &carried) {
        discard(&c.top, &path, &branch);
        return Err(e);
    }
    // Read right after baton made the repository, before any peer ran
    // there: from now on every git call in it is pinned to these paths.
    let pin = match Pin::record_own(&path, &start_tree) {
        Ok(p) => p,
        Err(e) => {
            discard(&c.top, &path, &branch);
            return Err(e);
        }
    };
    let writable = c.writable_dirs(&path);
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
        task: crate::agent::clip(
            c.title
                .as_deref()
                .unwrap_or(&plan.task)
                .lines()
                .next()
                .unwrap_or(""),
            200,
        ),
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
        anonymous: c.anonymous,
        common_dir: Some(c.common_dir.clone()),
    };
    Ok((p, session))
}

/// Held while `git worktree add` registers a worktree: git reads every
/// other worktree's administrative files as it adds one, and one being
/// added at the same moment is half written ("failed to read …/commondir").
/// Writers no longer get linked worktrees (see `create`); the test
/// command's checkout (`checkout`) still is one.
pub(super) static REGISTER: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Make the writer's repository at `path`: a repository of its own (its
/// own `.git` with objects, refs, index, config and hooks directory) whose
/// objects are read from the user's repository through
/// `objects/info/alternates`, on `branch` at the base, its files and index
/// the start tree (and the user's staged state with `--include-dirty`).
///
/// Not a linked worktree: a peer that can commit in a linked worktree can
/// write the user's object store and every `baton/` branch (a fan-out
/// candidate moved a sibling's tested branch; a peer replaced a loose
/// object of the user's). Here what the peer writes stays in its own
/// repository; baton brings the result over with a verifying fetch
/// (`import`). Then the user's branch `baton/<id>` is created at the base,
/// so that `worktree list` and `remove --branch` see it from the start.
pub(super) fn create(
    c: &Checked,
    path: &Path,
    branch: &str,
    start_tree: &str,
    staged: Option<&str>,
    carried: &[String],
) -> Result<()> {
    let git_dir = path.join(".git");
    let mut g = git(&c.top);
    // No templates: the user's template hooks are no business of the
    // writer's repository (baton's own calls never run hooks anyway).
    g.args(["init", "--quiet", "--template=", "-b", branch]);
    // The object format follows the user's repository (a base of 64 hex
    // digits is SHA-256); the ref format is git's default.
    if c.base.len() == 64 {
        g.arg("--object-format=sha256");
    }
    g.arg(path);
    git_run(g, "making the writer's repository", None)?;
    let objects = c.common_dir.join("objects");
    let info = git_dir.join("objects").join("info");
    // A hooks directory of its own, empty (no templates were copied).
    std::fs::create_dir_all(git_dir.join("hooks"))
        .and_then(|()| std::fs::create_dir_all(&info))
        .and_then(|()| std::fs::write(info.join("alternates"), format!("{}\n", objects.display())))
        .map_err(|e| Error::io("linking the writer's repository to your objects", e))?;
    // The user's identity, when their repository sets it (the peer's
    // commits and baton's are made as the user's would be).
    if let Some(ident) = &c.identity {
        use std::io::Write;
        std::fs::OpenOptions::new()
            .append(true)
            .open(git_dir.join("config"))
            .and_then(|mut f| f.write_all(ident.as_bytes()))
            .map_err(|e| Error::io("writing the writer's repository configuration", e))?;
    }
    let pin = Pin::record_own(path, start_tree)?;
    // The branch at the base: written as git's files format keeps a ref
    // (one git call less per writer, `bench/worktree.sh`), or by git when
    // the user's configuration made another ref format the default.
    let refs = git_dir.join("refs").join("heads");
    let written = !git_dir.join("reftable").exists()
        && refs.is_dir()
        && crate::fsutil::write_atomic(&refs.join(branch), format!("{}\n", c.base).as_bytes())
            .is_ok();
    if !written {
        let mut g = pin.git();
        g.args(["update-ref", &format!("refs/heads/{branch}"), &c.base, ""]);
        git_run(g, "setting the writer's branch to the base", None)?;
    }
    // Files and index = the start tree: the base's, or the user's
    // work-tree state (then the index = their staged state, below).
    let mut g = pin.git();
    g.args(crate::git::PARALLEL_CHECKOUT)
        .args(["read-tree", "-u", "--reset", start_tree]);
    let what = if carried.is_empty() {
        "checking out the base in the worktree"
    } else {
        "checking out your uncommitted changes in the worktree"
    };
    git_run(g, what, None)?;
    if let Some(s) = staged.filter(|_| !carried.is_empty()) {
        let mut g = pin.git();
        g.args(["read-tree", s]);
        git_run(g, "staging your staged changes in the worktree", None)?;
    }
    // Created, never moved: `""` as the old value fails when it exists.
    let mut g = git(&c.top);
    g.args([
        "update-ref",
        "-m",
        "baton: a writer starts from here",
        &format!("refs/heads/{branch}"),
        &c.base,
        "",
    ]);
    git_run(g, "creating the branch in your repository", None)?;
    Ok(())
}

/// `user.name`/`user.email` as the user's repository's own configuration
/// sets them, as a config section; `None` when it sets neither (the global
/// configuration applies in the writer's repository as anywhere).
pub(super) fn repo_identity(top: &Path) -> Option<String> {
    let mut g = git(top);
    g.args([
        "config",
        "--local",
        "-z",
        "--get-regexp",
        r"^user\.(name|email)$",
    ]);
    let (ok, out) = probe(g)?;
    if !ok || out.is_empty() {
        return None;
    }
    let mut s = String::from("[user]\n");
    for entry in out.split('\0').filter(|e| !e.is_empty()) {
        let (key, value) = entry.split_once('\n')?;
        let name = key.strip_prefix("user.")?;
        let value = value.replace('\\', "\\\\").replace('"', "\\\"");
        s.push_str(&format!("\t{name} = \"{value}\"\n"));
    }
    Some(s)
}

/// Remove a worktree and branch baton just made (best effort: on failure).
pub(super) fn discard(top: &Path, path: &Path, branch: &str) {
    // Serialised with the registrations, and retried: a fan-out's
    // candidates make and drop worktrees at the same moments (one falls
    // back while another's is being added), and a branch whose worktree
    // removal failed is still checked out, so `branch -D` refused it and
    // the branch stayed behind (seen in CI). A deletion also takes
    // `packed-refs.lock`, which another baton process may hold.
    let _one_at_a_time = REGISTER.lock().unwrap_or_else(|e| e.into_inner());
    let own = std::fs::symlink_metadata(path.join(".git")).is_ok_and(|m| m.is_dir());
    if own {
        // A repository of its own: nothing of the user's points at it.
        let _ = std::fs::remove_dir_all(path);
    }
    let mut g = git(top);
    g.args(["worktree", "remove", "--force"]).arg(path);
    if !own && !probe(g).is_some_and(|(ok, _)| ok) {
        let _ = std::fs::remove_dir_all(path);
        let mut g = git(top);
        g.args(["worktree", "prune"]);
        let _ = probe(g);
    }
    for wait in [0, 50, 100, 200, 400, 800] {
        std::thread::sleep(std::time::Duration::from_millis(wait));
        let mut g = git(top);
        g.args(["branch", "-D", "--end-of-options", branch]);
        let deleted = probe(g).is_some_and(|(ok, _)| ok);
        if deleted || rev_of(top, &format!("refs/heads/{branch}")).is_none() {
            break;
        }
    }
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

#[cfg(test)]
mod tests {
    use std::process::Command;

    use crate::agent::{Access, Agent};
    use crate::worktree::{WorktreeOptions, check, prepare};

    fn git(dir: &std::path::Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    /// A fan-out makes its candidates' worktrees at once, each on its own
    /// thread; unserialised, `git worktree add` read a sibling's half-made
    /// administrative files and failed ("failed to read …/commondir").
    #[test]
    fn worktrees_made_at_once_all_succeed() {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path().canonicalize().unwrap().join("repo");
        std::fs::create_dir_all(top.join("src")).unwrap();
        git(&top, &["init", "-q", "-b", "main"]);
        for i in 0..20 {
            std::fs::write(top.join(format!("src/f{i}.txt")), format!("{i}\n")).unwrap();
        }
        git(&top, &["add", "-A"]);
        git(&top, &["commit", "-qm", "base"]);
        let state = tmp.path().join("state");
        let plan = crate::run::Plan {
            task: "t".into(),
            prompt: "t".into(),
            timeout_ms: 1000,
            idle_timeout_ms: 1000,
            ..crate::run::Plan::test(Agent::Pi, Access::Workspace, &top)
        };
        let opts = WorktreeOptions {
            enabled: true,
            ..WorktreeOptions::default()
        };
        let c = check(&opts, &plan).unwrap().unwrap();
        let id = crate::ids::new_id();
        for round in 0..8 {
            let made: Vec<_> = std::thread::scope(|s| {
                (1..=8)
                    .map(|n| {
                        let (c, plan, state) = (&c, &plan, state.clone());
                        let wid = format!("{id}-{}", round * 8 + n);
                        s.spawn(move || {
                            crate::state_dir::TEST_BASE.with(|b| *b.borrow_mut() = Some(state));
                            prepare(c, plan, &wid, None).map(|(_, s)| s)
                        })
                    })
                    .collect::<Vec<_>>()
                    .into_iter()
                    .map(|h| h.join().unwrap())
                    .collect()
            });
            for m in made {
                let s = m.unwrap_or_else(|e| panic!("round {round}: {e}"));
                assert_eq!(
                    std::fs::read_to_string(s.path.join("src/f7.txt")).unwrap(),
                    "7\n"
                );
            }
        }
    }
}
