//! Which repositories one start of the server shows, and the only way a
//! request names one.
//!
//! Theory of operation: every repository is known by its record folder's
//! name in the state directory (`<name>-<hash>`, `state_dir::repos`), its
//! *key*. The page gets the keys from the server (`/api/repos`, the fleet
//! stream) and sends one back with an action (`?repo=KEY`); a key is
//! looked up in the server's own listing, never joined to a path, so a
//! request can only reach a store the server listed. Plain `baton serve`
//! shows this project only (every project is still listed, for the usage
//! panel's filter); `--all` shows every project whose root still exists
//! (`--repo PATTERN`: only those whose root contains PATTERN). A project
//! whose root is gone is listed, marked so, and never watched.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::job::store::Store;
use crate::state_dir;

/// What the server shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Scope {
    /// The project the server was started in (`baton serve`).
    #[default]
    Here,
    /// Every project in the state directory (`--all`), or those whose root
    /// contains the pattern (`--repo PATTERN`).
    All { pattern: Option<String> },
}

impl Scope {
    pub fn is_all(&self) -> bool {
        matches!(self, Scope::All { .. })
    }
}

/// One repository as the server lists it.
#[derive(Clone, Serialize)]
pub struct RepoInfo {
    /// Its key: the name of its record folder.
    pub repo: String,
    /// What people read: its root, or the folder's name when no root is recorded.
    pub label: String,
    /// Whether its root is still a directory.
    pub exists: bool,
    /// Whether its work is on this page (`--all`: every existing project the
    /// pattern matches; else only this project).
    pub shown: bool,
    /// Its jobs, while shown.
    #[serde(skip)]
    pub store: Option<Arc<Store>>,
    /// Its record folder (its ledger is there, root or not).
    #[serde(skip)]
    pub dir: PathBuf,
}

/// The server's listing, replaced as a whole when the state directory changes.
pub type Listing = Arc<Vec<RepoInfo>>;

/// The key of the record folder `dir`.
fn key_of(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Every repository for `scope`; `here` is the project the server runs
/// in (`Scope::Here` shows it even before its first job made its folder).
pub fn list(scope: &Scope, here: Option<&Path>) -> Result<Vec<RepoInfo>> {
    let mut out: Vec<RepoInfo> = state_dir::repos()?
        .into_iter()
        .map(|r| {
            let label = r.label();
            RepoInfo {
                repo: key_of(&r.dir),
                exists: r.exists,
                shown: false,
                store: None,
                dir: r.dir.clone(),
                label,
            }
            .with_store(&r.dir, r.root.as_deref())
        })
        .collect();
    match scope {
        Scope::All { pattern } => {
            for r in &mut out {
                r.shown =
                    r.store.is_some() && pattern.as_deref().is_none_or(|p| r.label.contains(p));
                if !r.shown {
                    r.store = None;
                }
            }
        }
        Scope::Here => {
            let Some(root) = here else {
                return Ok(out);
            };
            let store = Store::at_root(root)?;
            let key = store.dir.parent().map(key_of).unwrap_or_default();
            for r in &mut out {
                r.shown = r.repo == key;
                r.store = None;
            }
            match out.iter_mut().find(|r| r.shown) {
                Some(r) => r.store = Some(Arc::new(store)),
                None => out.push(RepoInfo {
                    repo: key,
                    label: root.display().to_string(),
                    exists: true,
                    shown: true,
                    dir: store
                        .dir
                        .parent()
                        .map(Path::to_path_buf)
                        .unwrap_or_default(),
                    store: Some(Arc::new(store)),
                }),
            }
        }
    }
    Ok(out)
}

impl std::fmt::Debug for RepoInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RepoInfo")
            .field("repo", &self.repo)
            .field("exists", &self.exists)
            .field("shown", &self.shown)
            .finish()
    }
}

impl RepoInfo {
    /// With its store when its root exists and names this very folder (a
    /// `root` file that points elsewhere is not followed).
    fn with_store(mut self, dir: &Path, root: Option<&Path>) -> RepoInfo {
        if !self.exists {
            return self;
        }
        self.store = root
            .and_then(|root| Store::at_root(root).ok())
            .filter(|s| s.dir.parent() == Some(dir))
            .map(Arc::new);
        self
    }

    /// The project's root, while it is shown.
    pub fn root(&self) -> Option<PathBuf> {
        self.store
            .as_ref()
            .and_then(|s| s.root().map(Path::to_path_buf))
    }
}

/// The repository `key` names in `listing`; with no key, the one shown when
/// only one is (plain `baton serve`). Anything else is refused: a key the
/// server did not list, a project whose root is gone or whose work is not
/// on this page, no key while several are shown (usage errors: 400).
pub fn pick<'a>(listing: &'a [RepoInfo], key: Option<&str>) -> Result<&'a RepoInfo> {
    let shown = || listing.iter().filter(|r| r.shown);
    let Some(key) = key else {
        let mut it = shown();
        return match (it.next(), it.next()) {
            (Some(one), None) => Ok(one),
            _ => Err(Error::usage_hint(
                "which repository? this server shows several",
                "add `?repo=KEY`: the `repo` of the job in the fleet (`/api/repos` lists them)",
            )),
        };
    };
    match listing.iter().find(|r| r.repo == key) {
        Some(r) if r.shown && r.store.is_some() => Ok(r),
        Some(r) if !r.exists => Err(not_listed(
            key,
            format!("its root {} no longer exists", r.label),
        )),
        Some(_) => Err(not_listed(key, "its work is not shown on this page".into())),
        None => Err(not_listed(
            key,
            "the server lists no such repository".into(),
        )),
    }
}

/// Any repository `key` names in `listing`, shown or not (the usage panel:
/// a ledger outlives its project's root).
pub fn any<'a>(listing: &'a [RepoInfo], key: &str) -> Result<&'a RepoInfo> {
    listing
        .iter()
        .find(|r| r.repo == key)
        .ok_or_else(|| not_listed(key, "the server lists no such repository".into()))
}

fn not_listed(key: &str, why: String) -> Error {
    Error::usage_hint(
        format!(
            "repository `{}` cannot be acted on here: {why}",
            key.escape_debug()
        ),
        "use a `repo` key from `/api/repos` (the page lists them)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(repo: &str, exists: bool, shown: bool) -> RepoInfo {
        RepoInfo {
            repo: repo.into(),
            label: format!("/src/{repo}"),
            exists,
            shown,
            store: shown.then(|| Arc::new(Store::in_dir(Path::new("/nonexistent")))),
            dir: PathBuf::from("/nonexistent"),
        }
    }

    #[test]
    fn only_a_listed_shown_repository_is_picked() {
        let l = vec![
            info("a-1", true, true),
            info("b-2", true, true),
            info("gone-3", false, false),
            info("hidden-4", true, false),
        ];
        assert_eq!(pick(&l, Some("b-2")).unwrap().repo, "b-2");
        for bad in ["gone-3", "hidden-4", "c-9", "../a-1", "a-1/..", ""] {
            let e = pick(&l, Some(bad)).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad}: {e}");
        }
        assert!(
            pick(&l, Some("gone-3"))
                .unwrap_err()
                .to_string()
                .contains("no longer exists")
        );
        // Several shown: a request must say which.
        assert_eq!(pick(&l, None).unwrap_err().exit_code(), 2);
        // One shown (plain `baton serve`): no key needed.
        assert_eq!(pick(&l[..1], None).unwrap().repo, "a-1");
        // The usage panel may name any listed repository, not an unlisted one.
        assert_eq!(any(&l, "gone-3").unwrap().repo, "gone-3");
        assert!(any(&l, "c-9").is_err());
    }
}
