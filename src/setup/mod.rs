//! `baton setup`: install (or `--uninstall`) the `peer` skill for each host
//! CLI without a plugin marketplace, and baton's man pages.
//!
//! Theory of operation: every file setup writes is recorded with its SHA-256
//! in a manifest (see `manifest`). A file is written when it is missing, or
//! when it still has the checksum setup recorded (an update); a file with
//! the wanted content is left as it is; anything else is someone else's and
//! is skipped as a conflict unless `--force`. Uninstall removes only
//! recorded files whose content is still what setup wrote, at the place
//! recorded, never through a symlink (`remove`), then the directories setup
//! created once they are empty. `--dry-run` runs the same decisions and
//! touches nothing.

pub mod host;
pub mod manifest;
pub mod mcp;
mod remove;
pub mod report;
pub mod skill;

use std::fs;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::fsutil;

pub use host::{Host, Places, Scope};
use manifest::{Manifest, file_sha, sha256_hex};
pub use mcp::McpHost;
use remove::{remove_empty_dirs, uninstall};
use report::HostReport;
pub use report::Report;

/// What setup is asked to do; built by the command line.
#[derive(Debug, Clone)]
pub struct SetupRequest {
    /// Host names (`claude`, `codex`, `pi`, `gemini`) or `all`.
    pub targets: Vec<String>,
    /// Also install (or remove) the man pages.
    pub man: bool,
    /// Hosts (or `all`) whose MCP configuration gets baton's server (`--mcp`).
    pub mcp: Vec<String>,
    pub scope: Scope,
    pub uninstall: bool,
    pub dry_run: bool,
    pub force: bool,
    /// The baton the written skill calls (the running binary).
    pub exe: PathBuf,
    /// The man pages (`baton.1`, …) with their content, when `man`.
    pub man_pages: Vec<(String, Vec<u8>)>,
    pub places: Places,
}

/// One thing setup manages: a host's skill, or the man pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Host(Host),
    Man,
    /// baton's MCP server in a host's configuration file.
    Mcp(McpHost),
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Host(h) => h.name(),
            Target::Man => "man",
            Target::Mcp(h) => h.owner(),
        }
    }
}

/// The targets `names` select. `all` means every host, plus the man pages
/// in user scope (they have no per-project place).
pub fn targets(names: &[String], man: bool, mcp: &[String], scope: Scope) -> Result<Vec<Target>> {
    let hosts = || Host::ALL.map(|h| h.name()).join(", ");
    let mut out = Vec::new();
    let mut add = |t: Target| {
        if !out.contains(&t) {
            out.push(t);
        }
    };
    for name in names {
        if name == "all" {
            Host::ALL.into_iter().for_each(|h| add(Target::Host(h)));
            if scope == Scope::User {
                add(Target::Man);
            }
        } else if let Some(h) = Host::parse(name) {
            add(Target::Host(h));
        } else {
            return Err(Error::usage_hint(
                format!("unknown host `{name}`"),
                format!("name one or more of: {}, or `all`", hosts()),
            ));
        }
    }
    if man {
        if scope == Scope::Project {
            return Err(Error::usage_hint(
                "man pages have no project scope",
                "drop `--man`, or run it with `--scope user` (the default)",
            ));
        }
        add(Target::Man);
    }
    for name in mcp {
        if scope == Scope::Project {
            return Err(Error::usage_hint(
                "`--mcp` writes your user configuration only",
                "drop `--scope project`",
            ));
        }
        if name == "all" {
            McpHost::ALL.into_iter().for_each(|h| add(Target::Mcp(h)));
        } else if let Some(h) = McpHost::parse(name) {
            add(Target::Mcp(h));
        } else {
            return Err(Error::usage_hint(
                format!("unknown MCP host `{name}`"),
                format!(
                    "name one or more of: {}, or `all`",
                    McpHost::ALL.map(|h| h.name()).join(", ")
                ),
            ));
        }
    }
    if out.is_empty() {
        return Err(Error::usage_hint(
            "name the hosts to set up",
            format!(
                "e.g. `baton setup all` or `baton setup claude codex`; hosts: {}; `--man` for the man pages",
                hosts()
            ),
        ));
    }
    Ok(out)
}

/// Run setup; the report lists per host what was (or would be) done.
pub fn run(req: &SetupRequest) -> Result<Report> {
    let targets = targets(&req.targets, req.man, &req.mcp, req.scope)?;
    let manifest_path = match req.scope {
        Scope::User => req.places.state_dir()?.join("setup.json"),
        Scope::Project => req.places.project.join(".baton/setup.json"),
    };
    let mut manifest = Manifest::load(&manifest_path)?;
    let before = manifest.to_json();
    let done = apply(&targets, req, &mut manifest);
    // Saved even when a later file failed, so what was written stays
    // recorded (and removable); an unchanged manifest is not rewritten, so
    // a rerun writes nothing.
    if !req.dry_run && manifest.to_json() != before {
        save(&manifest_path, &mut manifest, req.scope, &req.places)?;
    }
    let hosts = done?;
    let conflict = hosts.iter().any(HostReport::has_conflict);
    let through_link = hosts
        .iter()
        .any(|h| h.skipped.iter().any(|s| s.reason == "link"));
    Ok(Report {
        schema_version: 1,
        status: if conflict { "conflict" } else { "ok" },
        action: if req.uninstall {
            "uninstall"
        } else {
            "install"
        },
        scope: req.scope,
        dry_run: req.dry_run,
        baton: req.exe.clone(),
        manifest: manifest_path,
        hosts,
        hint: conflict.then(|| {
            if through_link {
                "a path setup wrote now leads through a symlink setup did not make (see `detail`); \
                 nothing was removed through it, not even with --force: look at it, and remove \
                 the file yourself if it is yours"
            } else if req.uninstall {
                "the skipped files changed after baton setup wrote them; \
                 `--uninstall --force` removes them anyway"
            } else {
                "the skipped files were not written by baton setup (or changed since); \
                 look at them, then rerun with `--force` to replace them"
            }
            .to_string()
        }),
    })
}

fn apply(
    targets: &[Target],
    req: &SetupRequest,
    manifest: &mut Manifest,
) -> Result<Vec<HostReport>> {
    let mut hosts = Vec::new();
    for &t in targets {
        let dir = match t {
            Target::Host(h) => h.skills_dir(req.scope, &req.places)?,
            Target::Man => req.places.man1_dir()?,
            Target::Mcp(h) => h.config_file(&req.places)?,
        };
        let mut rep = HostReport::new(t.name(), dir);
        if let Target::Mcp(host) = t {
            let job = mcp::Job {
                host,
                exe: &req.exe,
                places: &req.places,
                dry_run: req.dry_run,
                force: req.force,
            };
            if req.uninstall {
                mcp::uninstall(&job, manifest, &mut rep)?;
            } else {
                mcp::install(&job, manifest, &mut rep)?;
            }
        } else if req.uninstall {
            uninstall(t.name(), req, manifest, &mut rep)?;
        } else {
            for (path, content) in files_for(t, req)? {
                install_file(&path, &content, t.name(), req, manifest, &mut rep)?;
            }
        }
        hosts.push(rep);
    }
    Ok(hosts)
}

/// The files `t` consists of, with their wanted content.
fn files_for(t: Target, req: &SetupRequest) -> Result<Vec<(PathBuf, Vec<u8>)>> {
    Ok(match t {
        Target::Host(h) => {
            let dir = h.skills_dir(req.scope, &req.places)?.join(skill::NAME);
            vec![(dir.join("SKILL.md"), skill::render(&req.exe).into_bytes())]
        }
        Target::Mcp(_) => Vec::new(),
        Target::Man => {
            if req.man_pages.is_empty() {
                return Err(Error::Internal("setup was given no man pages".into()));
            }
            let dir = req.places.man1_dir()?;
            req.man_pages
                .iter()
                .map(|(name, text)| (dir.join(name), text.clone()))
                .collect()
        }
    })
}

fn install_file(
    path: &Path,
    content: &[u8],
    owner: &str,
    req: &SetupRequest,
    manifest: &mut Manifest,
    rep: &mut HostReport,
) -> Result<()> {
    let want = sha256_hex(content);
    let have = file_sha(path)?;
    let ours = |sha: &String| manifest.file(path).is_some_and(|f| &f.sha256 == sha);
    let write = match &have {
        None => true,
        Some(sha) if *sha == want => {
            rep.skip(path.to_path_buf(), "unchanged");
            return Ok(());
        }
        Some(sha) => ours(sha) || req.force,
    };
    if !write {
        rep.skip(path.to_path_buf(), "not_ours");
        return Ok(());
    }
    if !req.dry_run {
        let dir = path.parent().unwrap_or(Path::new("/"));
        create_dirs(dir, owner, manifest)?;
        fsutil::write_atomic(path, content)?;
        // Hosts (and man) read these as the user; nothing in them is secret.
        fs::set_permissions(path, fs::Permissions::from_mode(0o644))
            .map_err(|e| Error::io(format!("setting the mode of {}", path.display()), e))?;
        manifest.record_file(path, want, owner);
    }
    rep.written.push(path.to_path_buf());
    Ok(())
}

/// Create `dir` and its missing parents, recording each one created.
fn create_dirs(dir: &Path, owner: &str, manifest: &mut Manifest) -> Result<()> {
    let missing: Vec<&Path> = dir.ancestors().take_while(|a| !a.exists()).collect();
    for d in missing.into_iter().rev() {
        fs::DirBuilder::new()
            .mode(0o755)
            .create(d)
            .map_err(|e| Error::io(format!("creating {}", d.display()), e))?;
        manifest.record_dir(d, owner);
    }
    Ok(())
}

/// Write the manifest, or when it records nothing any more, remove it and
/// the directories made for it.
fn save(path: &Path, manifest: &mut Manifest, scope: Scope, places: &Places) -> Result<()> {
    if manifest.files.is_empty() && manifest.entries.is_empty() {
        if path.exists() {
            fs::remove_file(path)
                .map_err(|e| Error::io(format!("removing {}", path.display()), e))?;
        }
        remove_empty_dirs(manifest, |_| true);
        if manifest.dirs.is_empty() {
            return Ok(());
        }
    }
    let dir = path.parent().unwrap_or(Path::new("/"));
    match scope {
        // `.baton` is baton's own git-ignored state directory.
        Scope::Project => {
            fsutil::baton_dir(&places.project)?;
        }
        Scope::User => {
            create_dirs(dir, "setup", manifest)?;
            let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o700));
        }
    }
    fsutil::write_atomic(path, &manifest.to_json())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn all_means_every_host_and_man_pages_for_the_user() {
        let all = targets(&names(&["all"]), false, &[], Scope::User).unwrap();
        assert_eq!(all.len(), 5);
        assert!(all.contains(&Target::Man));
        let project = targets(&names(&["all"]), false, &[], Scope::Project).unwrap();
        assert_eq!(project.len(), 4);
        assert!(!project.contains(&Target::Man));
        let two = targets(&names(&["pi", "claude", "pi"]), true, &[], Scope::User).unwrap();
        assert_eq!(
            two,
            [
                Target::Host(Host::Pi),
                Target::Host(Host::Claude),
                Target::Man
            ]
        );
    }

    #[test]
    fn bad_selections_are_usage_errors() {
        for (n, man, scope) in [
            (names(&["vim"]), false, Scope::User),
            (names(&[]), false, Scope::User),
            (names(&["pi"]), true, Scope::Project),
        ] {
            let e = targets(&n, man, &[], scope).unwrap_err();
            assert_eq!(e.kind(), "usage", "{n:?}");
            assert!(e.hint().is_some());
        }
    }
}
