//! A worktree's git calls pinned to its repository, and the check that a
//! peer did not rewire the worktree before baton trusts it.
//!
//! A writer's worktree is a repository of its own (`own`: issue 31); its
//! `.git` must stay a real directory and its config what baton wrote, up to
//! keys that name no program (`verify_own`). What follows describes the
//! linked worktrees baton 0.3 made (still read for their jobs) and the test
//! command's checkout, which is one.
//!
//! A peer may write its worktree and the worktree's git directory
//! (`<common>/worktrees/<name>/`, granted so that it can commit). Left to
//! discovery, `git -C <worktree>` would follow whatever it finds there: no
//! `.git` file (the user's checkout above it), a `.git` naming another
//! repository, a `commondir` naming a config of the peer's making (with a
//! `core.fsmonitor` command), a `config.worktree`. So every call baton makes
//! in a worktree names the repository outright (`GIT_DIR`, `GIT_COMMON_DIR`,
//! which overrides the `commondir` file, and `GIT_WORK_TREE`), reads
//! attributes from the tree the peer started from (`GIT_ATTR_SOURCE`, git
//! 2.40 and later) instead of the peer's `.gitattributes`, and gets the
//! no-program overrides of `crate::git::git`. And before baton trusts the
//! worktree it checks that the files tying it to the repository still say
//! what they said when baton made it: a change is tampering, and the run
//! fails without a commit (see docs/worktree.md (Safety)).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// Where a worktree's git metadata is, and what its linking files said when
/// baton made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pin {
    /// The worktree's top directory.
    pub work_tree: PathBuf,
    /// Its git directory, `<common>/worktrees/<name>`.
    pub git_dir: PathBuf,
    /// The repository's common git directory.
    pub common_dir: PathBuf,
    /// The tree attributes are read from: the one the peer started from.
    pub attr_tree: String,
    /// `<work_tree>/.git` as git wrote it (`gitdir: …`).
    pub dot_git: String,
    /// `<git_dir>/gitdir` (the way back to the worktree).
    pub gitdir: String,
    /// `<git_dir>/commondir` (the way to the repository).
    pub commondir: String,
    /// SHA-256 of `<git_dir>/config.worktree`, which git reads when the
    /// repository enables `extensions.worktreeConfig`; `None`: absent or empty.
    #[serde(default)]
    pub config_worktree: Option<String>,
    /// `true`: the writer's own repository (`<work_tree>/.git` is its git
    /// directory and its common directory, its objects borrowed from the
    /// user's through `objects/info/alternates`); `false`: a linked
    /// worktree of the user's repository (made by an older baton, and the
    /// test command's checkout).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub own: bool,
    /// The writer repository's configuration file as baton made it: a
    /// change beyond the keys a peer may set (`OWN_CONFIG_FREE`) is
    /// tampering (it is the configuration baton's own git calls there read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
}

/// Configuration keys (lowercase prefixes) a peer may set in its own
/// repository without that counting as tampering: they name no program and
/// change nothing baton reads (identity, branch tracking, colours, hints).
/// Everything else (`core.*`, `filter.*`, `diff.*`, `include*`,
/// `extensions.*`, …) could make one of baton's unsandboxed git calls there
/// run a program or read something else.
const OWN_CONFIG_FREE: [&str; 8] = [
    "user.",
    "author.",
    "committer.",
    "branch.",
    "color.",
    "advice.",
    "init.",
    "alias.",
];

/// Configuration text `config` without the keys a peer may change, as
/// `git config --list` reads it (no includes followed: an `include.path` is
/// itself a key that counts). Read from stdin, from outside any repository:
/// nothing is discovered.
fn own_config(config: &[u8]) -> std::result::Result<String, String> {
    use std::io::Write;
    let mut child = crate::git::git(Path::new("/"))
        .args(["config", "--no-includes", "--file", "-", "--list", "-z"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("its `.git/config` could not be read: {e}"))?;
    if let Some(mut w) = child.stdin.take() {
        let _ = w.write_all(config);
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("its `.git/config` could not be read: {e}"))?;
    if !out.status.success() {
        return Err("its `.git/config` is not valid configuration".into());
    }
    let mut keep: Vec<String> = out
        .stdout
        .split(|b| *b == 0)
        .filter(|e| !e.is_empty())
        .map(|e| String::from_utf8_lossy(e).into_owned())
        .filter(|e| {
            let key = e.split('\n').next().unwrap_or("").to_ascii_lowercase();
            !OWN_CONFIG_FREE.iter().any(|f| key.starts_with(f))
        })
        .collect();
    keep.sort();
    Ok(keep.join("\0"))
}

/// The writer repository's configuration file in `git_dir`, as it is now.
fn own_config_file(git_dir: &Path) -> std::result::Result<Vec<u8>, String> {
    let file = git_dir.join("config");
    match std::fs::symlink_metadata(&file) {
        Ok(m) if m.is_file() => {}
        _ => return Err("its `.git/config` is no longer a regular file".into()),
    }
    std::fs::read(&file).map_err(|e| format!("its `.git/config` could not be read: {e}"))
}

fn read(p: &Path) -> Option<String> {
    std::fs::read(p)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// SHA-256 of a config file; `None` when it is absent or empty (claude's
/// sandbox leaves an empty `config.worktree` behind as a mount point, and
/// an empty file configures nothing).
fn config_sha(p: &Path) -> Option<String> {
    std::fs::read(p).ok().filter(|b| !b.is_empty()).map(|b| {
        Sha256::digest(b)
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect()
    })
}

/// A real directory: not a symlink to one (which a peer could aim anywhere).
fn real_dir(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
}

impl Pin {
    /// Record the writer repository baton has just made at `work_tree`
    /// (before any peer ran in it): its git directory is `<work_tree>/.git`.
    pub fn record_own(work_tree: &Path, attr_tree: &str) -> Result<Pin> {
        let git_dir = work_tree.join(".git");
        let config = own_config_file(&git_dir).map_err(|e| {
            Error::io(
                "reading the writer repository's configuration",
                std::io::Error::other(e),
            )
        })?;
        Ok(Pin {
            work_tree: work_tree.to_path_buf(),
            common_dir: git_dir.clone(),
            git_dir,
            attr_tree: attr_tree.to_string(),
            dot_git: String::new(),
            gitdir: String::new(),
            commondir: String::new(),
            config_worktree: None,
            own: true,
            config: Some(String::from_utf8_lossy(&config).into_owned()),
        })
    }

    /// Record a worktree git has just made (before any peer ran in it).
    pub fn record(
        work_tree: &Path,
        git_dir: &Path,
        common_dir: &Path,
        attr_tree: &str,
    ) -> Result<Pin> {
        let file = |p: PathBuf| {
            read(&p).ok_or_else(|| {
                Error::io(
                    format!("reading {}", p.display()),
                    std::io::Error::new(std::io::ErrorKind::NotFound, "git did not write it"),
                )
            })
        };
        Ok(Pin {
            work_tree: work_tree.to_path_buf(),
            git_dir: git_dir.to_path_buf(),
            common_dir: common_dir.to_path_buf(),
            attr_tree: attr_tree.to_string(),
            dot_git: file(work_tree.join(".git"))?,
            gitdir: file(git_dir.join("gitdir"))?,
            commondir: file(git_dir.join("commondir"))?,
            config_worktree: config_sha(&git_dir.join("config.worktree")),
            own: false,
            config: None,
        })
    }

    /// The pin of a worktree made by a baton that did not record one (a
    /// job started before the upgrade): the repository comes from the
    /// user's checkout `top`, never from the worktree, and the linking
    /// files are expected as git writes them by default.
    pub fn derive(work_tree: &Path, top: &Path, attr_tree: &str) -> Result<Pin> {
        let common_dir = {
            let mut c = crate::git::git(top);
            for v in crate::git::REDIRECTING_ENV {
                c.env_remove(v);
            }
            let out = c
                .args(["rev-parse", "--path-format=absolute", "--git-common-dir"])
                .stderr(std::process::Stdio::null())
                .output()
                .map_err(|e| Error::io("finding the repository's git directory", e))?;
            let dir = String::from_utf8_lossy(&out.stdout).trim_end().to_string();
            if !out.status.success() || dir.is_empty() {
                return Err(Error::io(
                    "finding the repository's git directory",
                    std::io::Error::other(format!("{} is not in a git repository", top.display())),
                ));
            }
            PathBuf::from(dir)
        };
        let name = work_tree.file_name().unwrap_or_default();
        let git_dir = common_dir.join("worktrees").join(name);
        let real = work_tree
            .canonicalize()
            .unwrap_or_else(|_| work_tree.to_path_buf());
        Ok(Pin {
            work_tree: work_tree.to_path_buf(),
            dot_git: format!("gitdir: {}\n", git_dir.display()),
            gitdir: format!("{}\n", real.join(".git").display()),
            commondir: "../..\n".into(),
            config_worktree: None,
            git_dir,
            common_dir,
            attr_tree: attr_tree.to_string(),
            own: false,
            config: None,
        })
    }

    /// `git` in the worktree, pinned (see the module comment). Variables a
    /// caller could have set to redirect it are replaced or removed.
    pub fn git(&self) -> Command {
        let mut c = crate::git::git(&self.work_tree);
        for v in crate::git::REDIRECTING_ENV {
            c.env_remove(v);
        }
        c.envs(self.env());
        c
    }

    /// The environment that pins a git call to this worktree.
    pub fn env(&self) -> Vec<(&'static str, std::ffi::OsString)> {
        let mut env = vec![
            ("GIT_DIR", self.git_dir.clone().into_os_string()),
            ("GIT_COMMON_DIR", self.common_dir.clone().into_os_string()),
            ("GIT_WORK_TREE", self.work_tree.clone().into_os_string()),
            (
                "GIT_INDEX_FILE",
                self.git_dir.join("index").into_os_string(),
            ),
            // A git that git itself starts in a nested repository (a
            // submodule's) never looks above the worktree.
            (
                "GIT_CEILING_DIRECTORIES",
                self.work_tree.clone().into_os_string(),
            ),
        ];
        if !self.attr_tree.is_empty() && crate::git::has_attr_source() {
            env.push(("GIT_ATTR_SOURCE", self.attr_tree.clone().into()));
        }
        env
    }

    /// What the peer changed of the files that tie the worktree to the
    /// repository, if anything. `Ok` also when the worktree directory is
    /// gone (that is not tampering; callers report it on their own).
    pub fn verify(&self) -> std::result::Result<(), String> {
        if !self.work_tree.exists() {
            return Ok(());
        }
        if !real_dir(&self.work_tree) {
            return Err(format!(
                "{} is no longer a directory",
                self.work_tree.display()
            ));
        }
        if self.own {
            return self.verify_own();
        }
        let dot_git = self.work_tree.join(".git");
        match std::fs::symlink_metadata(&dot_git) {
            Err(_) => return Err("the worktree's `.git` file was removed".into()),
            Ok(m) if m.is_dir() => {
                return Err("the worktree's `.git` file was replaced by a repository".into());
            }
            Ok(m) if !m.is_file() => {
                return Err("the worktree's `.git` file was replaced by a link".into());
            }
            Ok(_) => {}
        }
        let now = read(&dot_git).unwrap_or_default();
        if now != self.dot_git {
            return Err(format!(
                "the worktree's `.git` file was rewritten (it says `{}`)",
                crate::agent::clip(now.trim(), 200)
            ));
        }
        if !real_dir(&self.git_dir) {
            return Err(format!(
                "the worktree's git directory {} was removed or replaced",
                self.git_dir.display()
            ));
        }
        for (name, want) in [("commondir", &self.commondir), ("gitdir", &self.gitdir)] {
            let now = read(&self.git_dir.join(name));
            if now.as_ref() != Some(want) {
                return Err(format!(
                    "`{name}` in the worktree's git directory was {}",
                    match now {
                        None => "removed".to_string(),
                        Some(n) => format!(
                            "rewritten (it says `{}`)",
                            crate::agent::clip(n.trim(), 200)
                        ),
                    }
                ));
            }
        }
        if config_sha(&self.git_dir.join("config.worktree")) != self.config_worktree {
            return Err(
                "`config.worktree` in the worktree's git directory was written (git reads it \
                 as configuration)"
                    .into(),
            );
        }
        Ok(())
    }

    /// `verify` for the writer's own repository: its `.git` is still a real
    /// directory (a link would aim baton's git calls, which write refs and
    /// the index there, at another repository: the user's), and its
    /// configuration says what baton wrote, up to the keys a peer may set.
    fn verify_own(&self) -> std::result::Result<(), String> {
        if !real_dir(&self.git_dir) {
            return Err("the worktree's `.git` directory was removed or replaced".into());
        }
        for sub in ["objects", "refs"] {
            let p = self.git_dir.join(sub);
            match std::fs::symlink_metadata(&p) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    return Err(format!(
                        "`.git/{sub}` in the worktree was replaced by a link"
                    ));
                }
                // A `.git` gutted (`rm -rf .git` that a sandbox's read-only
                // mounts left half done) is not the repository baton made.
                Err(_) => return Err(format!("`.git/{sub}` in the worktree was removed")),
            }
        }
        if !std::fs::symlink_metadata(self.git_dir.join("HEAD")).is_ok_and(|m| m.is_file()) {
            return Err("`.git/HEAD` in the worktree was removed or replaced".into());
        }
        let now = own_config_file(&self.git_dir).map_err(|e| format!("{e} (git reads it)"))?;
        let was = self.config.as_deref().unwrap_or_default();
        // The same bytes (the usual case) need no parsing; otherwise only
        // the keys a peer may change may differ.
        if now != was.as_bytes()
            && own_config(&now).map_err(|e| format!("{e} (git reads it)"))?
                != own_config(was.as_bytes())?
        {
            return Err(
                "the worktree repository's `.git/config` was changed beyond `user.*`, \
                 `branch.*` and the like (git reads it as configuration)"
                    .into(),
            );
        }
        Ok(())
    }

    /// The tampering error for worktree `id`.
    pub fn tampered(&self, id: &str, what: String) -> Error {
        Error::WorktreeTampered {
            id: id.to_string(),
            path: self.work_tree.clone(),
            what,
        }
    }

    /// Put back the linking files baton recorded, so that git can remove
    /// the worktree (`git worktree remove` refuses one whose `.git` is
    /// missing). Only inside the worktree and its own git directory, and
    /// only when both are real directories.
    pub fn repair(&self) -> std::io::Result<()> {
        if self.own {
            // Nothing links it to the user's repository: removing it is
            // removing a directory.
            return Ok(());
        }
        if !real_dir(&self.work_tree) || !real_dir(&self.git_dir) {
            return Err(std::io::Error::other(
                "the worktree or its git directory is not a directory",
            ));
        }
        let dot_git = self.work_tree.join(".git");
        match std::fs::symlink_metadata(&dot_git) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&dot_git)?,
            Ok(_) => std::fs::remove_file(&dot_git)?,
            Err(_) => {}
        }
        std::fs::write(&dot_git, &self.dot_git)?;
        for (name, want) in [("commondir", &self.commondir), ("gitdir", &self.gitdir)] {
            let p = self.git_dir.join(name);
            let _ = std::fs::remove_file(&p);
            std::fs::write(&p, want)?;
        }
        if self.config_worktree.is_none() {
            let _ = std::fs::remove_file(self.git_dir.join("config.worktree"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin(d: &Path) -> Pin {
        let wt = d.join("wt");
        let gd = d.join("repo/.git/worktrees/wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::create_dir_all(&gd).unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", gd.display())).unwrap();
        std::fs::write(
            gd.join("gitdir"),
            format!("{}\n", wt.join(".git").display()),
        )
        .unwrap();
        std::fs::write(gd.join("commondir"), "../..\n").unwrap();
        Pin::record(&wt, &gd, &d.join("repo/.git"), "t").unwrap()
    }

    use crate::git::test_git as git;

    #[test]
    fn a_recorded_and_a_derived_pin_agree_and_pin_git_to_the_worktree() {
        let d = tempfile::tempdir().unwrap();
        let top = d.path().join("repo");
        std::fs::create_dir(&top).unwrap();
        git(&top, &["init", "-q"]);
        std::fs::write(top.join("a"), "a").unwrap();
        git(&top, &["add", "a"]);
        git(&top, &["commit", "-qm", "i"]);
        let wt = top.join(".baton/worktrees/0123456789abc");
        git(
            &top,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "baton/x",
                wt.to_str().unwrap(),
            ],
        );
        let gd = PathBuf::from(git(&wt, &["rev-parse", "--absolute-git-dir"]));
        let common = PathBuf::from(git(
            &top,
            &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        ));
        let recorded = Pin::record(&wt, &gd, &common, "").unwrap();
        let derived = Pin::derive(&wt, &top, "").unwrap();
        assert_eq!(recorded, derived);
        assert_eq!(derived.verify(), Ok(()));
        // With its `.git` gone, the pinned git still sees the worktree's
        // branch, never the checkout around it.
        std::fs::remove_file(wt.join(".git")).unwrap();
        assert!(derived.verify().is_err());
        let out = derived
            .git()
            .args(["symbolic-ref", "HEAD"])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "refs/heads/baton/x"
        );
    }

    #[test]
    fn every_linking_file_is_checked_and_repaired() {
        let d = tempfile::tempdir().unwrap();
        let p = pin(d.path());
        assert_eq!(p.verify(), Ok(()));
        // An empty one configures nothing (claude's sandbox leaves one).
        std::fs::write(p.git_dir.join("config.worktree"), "").unwrap();
        assert_eq!(p.verify(), Ok(()));
        let wt = &p.work_tree;
        let gd = &p.git_dir;
        type Tamper<'a> = Box<dyn Fn() + 'a>;
        let cases: Vec<(Tamper, &str)> = vec![
            (
                Box::new(|| std::fs::remove_file(wt.join(".git")).unwrap()),
                "removed",
            ),
            (
                Box::new(|| std::fs::write(wt.join(".git"), "gitdir: /elsewhere\n").unwrap()),
                "/elsewhere",
            ),
            (
                Box::new(|| {
                    std::fs::remove_file(wt.join(".git")).unwrap();
                    std::fs::create_dir(wt.join(".git")).unwrap();
                }),
                "repository",
            ),
            (
                Box::new(|| {
                    std::fs::remove_file(wt.join(".git")).unwrap();
                    std::os::unix::fs::symlink(gd, wt.join(".git")).unwrap();
                }),
                "link",
            ),
            (
                Box::new(|| std::fs::write(gd.join("commondir"), "/tmp/c\n").unwrap()),
                "commondir",
            ),
            (
                Box::new(|| std::fs::remove_file(gd.join("gitdir")).unwrap()),
                "gitdir",
            ),
            (
                Box::new(|| std::fs::write(gd.join("config.worktree"), "[core]\n").unwrap()),
                "config.worktree",
            ),
        ];
        for (tamper, says) in cases {
            tamper();
            let e = p.verify().unwrap_err();
            assert!(e.contains(says), "{e}");
            p.repair().unwrap();
            assert_eq!(p.verify(), Ok(()), "after: {says}");
        }
        // A missing worktree is not tampering (the caller says it is gone).
        std::fs::remove_dir_all(wt).unwrap();
        assert_eq!(p.verify(), Ok(()));
    }

    /// The writer's own repository: its configuration may gain `user.*`
    /// and the like, nothing else; its `.git` must stay a directory.
    #[test]
    fn an_own_repository_s_config_and_git_dir_are_checked() {
        let d = tempfile::tempdir().unwrap();
        let wt = d.path().join("wt");
        std::fs::create_dir(&wt).unwrap();
        git(&wt, &["init", "-q"]);
        let p = Pin::record_own(&wt, "").unwrap();
        assert!(p.own && p.git_dir == wt.join(".git") && p.common_dir == p.git_dir);
        assert_eq!(p.verify(), Ok(()));
        git(&wt, &["config", "user.name", "a peer"]);
        git(&wt, &["config", "branch.main.remote", "origin"]);
        assert_eq!(p.verify(), Ok(()));
        git(&wt, &["config", "core.fsmonitor", "touch /tmp/x"]);
        assert!(p.verify().unwrap_err().contains(".git/config"));
        git(&wt, &["config", "--unset", "core.fsmonitor"]);
        assert_eq!(p.verify(), Ok(()));
        git(&wt, &["config", "include.path", "/tmp/elsewhere"]);
        assert!(p.verify().is_err());
        git(&wt, &["config", "--unset", "include.path"]);
        assert_eq!(p.verify(), Ok(()));
        // Gutted by an `rm -rf .git` that read-only mounts left half done.
        let head = std::fs::read(wt.join(".git/HEAD")).unwrap();
        std::fs::remove_file(wt.join(".git/HEAD")).unwrap();
        assert!(p.verify().unwrap_err().contains(".git/HEAD"));
        std::fs::write(wt.join(".git/HEAD"), head).unwrap();
        std::fs::rename(wt.join(".git/refs"), d.path().join("refs")).unwrap();
        assert!(p.verify().unwrap_err().contains(".git/refs"));
        std::fs::rename(d.path().join("refs"), wt.join(".git/refs")).unwrap();
        assert_eq!(p.verify(), Ok(()));
        let real = d.path().join("real");
        std::fs::rename(wt.join(".git"), &real).unwrap();
        std::os::unix::fs::symlink(&real, wt.join(".git")).unwrap();
        assert!(p.verify().unwrap_err().contains("`.git`"));
        // Nothing links it to another repository: nothing to repair.
        assert!(p.repair().is_ok());
    }
}
