//! `--include-dirty`: the user's uncommitted state snapshotted through a
//! temporary index, so their own index, HEAD and files are never written.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::fsutil;

use super::Checked;
use super::repo;
use super::repo::{git, line, run as git_run};

pub(super) struct Dirty {
    pub(super) staged: String,
    pub(super) work: String,
    pub(super) carried: Vec<String>,
}

/// Snapshot the user's uncommitted state without writing their index: see
/// the module comment.
pub(super) fn snapshot_dirty(c: &Checked, store: &Path, id: &str) -> Result<Dirty> {
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
