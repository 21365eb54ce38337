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
