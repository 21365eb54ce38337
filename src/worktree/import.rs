//! Bringing a writer's commit into the user's repository (`import`).
//!
//! The writer's repository is the peer's: it wrote its objects, refs,
//! config and hooks directory. So the commit baton made there reaches the
//! user's repository only through a transfer that recomputes every object's
//! hash and checks that the history is complete — a `git fetch` with
//! `fetch.fsckObjects` — and never lets git read that repository's
//! configuration or run its hooks (CVE-2024-32004, CVE-2024-32465: a
//! repository made by someone else, fetched from locally, can run code).
//!
//! How: baton makes a bare git directory of its own in its state directory
//! (`imports/<id>`, 0700): a `config` baton writes, one ref naming the
//! commit, and `objects/info/alternates` pointing at the writer's object
//! store, nothing else of it. The user's repository fetches that ref from
//! it over the `file://` transport, which is the non-local one: a separate
//! `git upload-pack` serves a pack and the user's `index-pack` checks it,
//! instead of objects being copied or linked over. `upload-pack` reads the
//! configuration of baton's directory, not the writer's, and runs no hook.
//! The user's branch then moves to the commit with a compare-and-swap.

use std::path::Path;

use crate::error::{Error, Result};

use super::Session;
use super::create::REGISTER;
use super::repo::{git, run as git_run};

/// Fetch `commit` from the writer's repository of `s` into the user's and
/// move `refs/heads/<branch>` there from `old` (`None`: whatever it is).
pub(super) fn import(s: &Session, commit: &str, old: Option<&str>) -> Result<()> {
    let writer_objects = s.path.join(".git").join("objects");
    let dir = crate::state_dir::ensure_sub(&s.root, "imports")?.join(&s.id);
    let made = make_source(&dir, &writer_objects, commit);
    let fetched = made.and_then(|()| {
        // A fetch reads every worktree's administrative files (their HEADs
        // are reachability roots): not while a sibling's test checkout is
        // being registered ("failed to read …/commondir").
        let _one_at_a_time = REGISTER.lock().unwrap_or_else(|e| e.into_inner());
        fetch(&s.top, &dir)
    });
    let _ = std::fs::remove_dir_all(&dir);
    fetched?;
    let mut g = git(&s.top);
    g.args([
        "update-ref",
        "-m",
        "baton: the writer's commit, imported",
        &format!("refs/heads/{}", s.branch),
        commit,
    ]);
    if let Some(o) = old {
        g.arg(o);
    }
    git_run(
        g,
        "moving the branch in your repository to the imported commit",
        None,
    )?;
    Ok(())
}

/// baton's bare git directory at `dir`: its own config and one ref
/// (`refs/heads/tip` = `commit`); objects read from `objects` only.
fn make_source(dir: &Path, objects: &Path, commit: &str) -> Result<()> {
    let io = |e| Error::io("preparing the import of the writer's commit", e);
    if dir.exists() {
        // Left by a baton that died while importing.
        std::fs::remove_dir_all(dir).map_err(io)?;
    }
    std::fs::create_dir_all(dir.join("objects").join("info")).map_err(io)?;
    std::fs::create_dir_all(dir.join("refs").join("heads")).map_err(io)?;
    let sha256 = commit.len() == 64;
    let config = if sha256 {
        "[core]\n\trepositoryformatversion = 1\n\tbare = true\n[extensions]\n\tobjectformat = sha256\n"
    } else {
        "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
    };
    let files = [
        ("config", config.to_string()),
        ("HEAD", "ref: refs/heads/tip\n".to_string()),
        ("refs/heads/tip", format!("{commit}\n")),
        (
            "objects/info/alternates",
            format!("{}\n", objects.display()),
        ),
    ];
    for (name, content) in files {
        std::fs::write(dir.join(name), content).map_err(io)?;
    }
    Ok(())
}

/// `git fetch file://<dir> refs/heads/tip` in the user's repository, every
/// object checked; nothing but the objects is written (no ref, no
/// `FETCH_HEAD`).
fn fetch(top: &Path, dir: &Path) -> Result<()> {
    let mut g = git(top);
    // `protocol.allow=never` (`crate::git::NO_EXEC`) stays for every other
    // transport; a protocol's own setting wins over it.
    g.args([
        "-c",
        "protocol.file.allow=always",
        "-c",
        "fetch.fsckObjects=true",
        "-c",
        "transfer.fsckObjects=true",
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-write-fetch-head",
        "--no-recurse-submodules",
    ]);
    g.arg(format!("file://{}", dir.display()));
    g.arg("refs/heads/tip");
    git_run(
        g,
        "importing the writer's commit into your repository (a fetch that checks every object)",
        None,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::git::test_git as git;

    /// CVE-2024-32004/32465: a repository someone else wrote can make git
    /// run programs when fetched from as a repository. The writer's
    /// configuration and hooks here would leave a marker if git read them;
    /// the import goes through baton's own git dir and leaves none.
    #[test]
    fn the_import_reads_no_config_and_runs_no_hook_of_the_writer_s_repository() {
        let d = tempfile::tempdir().unwrap();
        let d = d.path().canonicalize().unwrap();
        crate::state_dir::TEST_BASE.with(|b| *b.borrow_mut() = Some(d.join("state")));
        let top = d.join("repo");
        std::fs::create_dir(&top).unwrap();
        git(&top, &["init", "-q", "-b", "main"]);
        std::fs::write(top.join("a"), "a\n").unwrap();
        git(&top, &["add", "a"]);
        git(&top, &["commit", "-qm", "base"]);
        let base = git(&top, &["rev-parse", "HEAD"]);
        git(&top, &["update-ref", "refs/heads/baton/x", &base]);
        // The writer's repository: the user's objects through alternates,
        // one commit of its own, and every trap a fetch could spring.
        let w = d.join("writer");
        git(&d, &["init", "-q", "-b", "baton/x", w.to_str().unwrap()]);
        std::fs::write(
            w.join(".git/objects/info/alternates"),
            format!("{}\n", top.join(".git/objects").display()),
        )
        .unwrap();
        git(&w, &["reset", "-q", &base]);
        std::fs::write(w.join("b"), "peer\n").unwrap();
        git(&w, &["add", "b"]);
        git(&w, &["commit", "-qm", "peer"]);
        let commit = git(&w, &["rev-parse", "HEAD"]);
        let marker = d.join("PWNED");
        let touch = format!("touch '{}'; false", marker.display());
        for (k, v) in [
            ("core.fsmonitor", touch.as_str()),
            ("core.alternateRefsCommand", touch.as_str()),
            ("uploadpack.packObjectsHook", touch.as_str()),
            ("core.sshCommand", touch.as_str()),
            ("core.hooksPath", w.join(".git/hooks").to_str().unwrap()),
        ] {
            git(&w, &["config", k, v]);
        }
        for hook in [
            "reference-transaction",
            "post-checkout",
            "pre-auto-gc",
            "post-merge",
        ] {
            let p = w.join(".git/hooks").join(hook);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, format!("#!/bin/sh\n{touch}\n")).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let s = Session {
            id: "x".into(),
            job_id: None,
            root: top.clone(),
            top: top.clone(),
            path: w.clone(),
            branch: "baton/x".into(),
            base: base.clone(),
            start_tree: String::new(),
            carried: Vec::new(),
            user_branch: None,
            allow: Vec::new(),
            test_cmd: None,
            pin: None,
            run_from: None,
            anonymous: false,
            common_dir: Some(top.join(".git")),
        };
        import(&s, &commit, Some(&base)).unwrap();
        assert!(!marker.exists(), "git ran a program of the writer's");
        assert_eq!(git(&top, &["rev-parse", "refs/heads/baton/x"]), commit);
        assert_eq!(git(&top, &["show", &format!("{commit}:b")]), "peer");
        // The compare-and-swap: the branch moved since, so no import.
        let e = import(&s, &base, Some(&base)).unwrap_err();
        assert!(e.to_string().contains("moving the branch"), "{e}");
        assert_eq!(git(&top, &["rev-parse", "refs/heads/baton/x"]), commit);
        assert!(!marker.exists());
    }
}
