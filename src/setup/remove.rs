//! `setup --uninstall`: remove what the manifest recorded, at the place it
//! recorded, without following a link anywhere on the way.
//!
//! Why: a skill directory swapped for a symlink after setup made uninstall
//! delete the `SKILL.md` in the link's target, a file setup never wrote.
//! Each recorded file is reached from `/` through `fsutil::DirNoFollow`
//! (every component opened with `O_NOFOLLOW`), along the real path setup
//! recorded when it wrote the file; its content is read and it is removed
//! through that same directory descriptor, so a link swapped in before or
//! during the walk is never followed. A link in the way leaves the file
//! where it is, and the report says which link and why (`link`).

use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::SetupRequest;
use super::manifest::{Manifest, sha256_hex};
use super::report::HostReport;
use crate::error::{Error, Result};
use crate::fsutil::{DirNoFollow, Walk};

/// What is at a recorded file's place.
enum Found {
    Gone,
    /// A symlink setup did not make is in the way; the text says which.
    Link(String),
    /// Something else than a regular file is there now.
    Other(String),
    File {
        dir: DirNoFollow,
        sha: String,
        dev: u64,
        ino: u64,
    },
}

/// Remove `owner`'s recorded files that still hold what setup wrote (any
/// content with `--force`), then its directories once empty.
pub(super) fn uninstall(
    owner: &str,
    req: &SetupRequest,
    manifest: &mut Manifest,
    rep: &mut HostReport,
) -> Result<()> {
    let entries: Vec<_> = manifest
        .files
        .iter()
        .filter(|f| f.owner == owner)
        .cloned()
        .collect();
    for f in entries {
        let target = f.target();
        let name = target.file_name().unwrap_or_default();
        match find(target)? {
            Found::Gone => {
                rep.skip(f.path.clone(), "gone");
                if !req.dry_run {
                    manifest.forget_file(&f.path);
                }
            }
            // Never removed, not even with --force: what a link leads to
            // is not what setup wrote.
            Found::Link(why) => rep.skip_because(f.path.clone(), "link", why),
            Found::Other(what) => rep.skip_because(f.path.clone(), "changed", what),
            Found::File { dir, sha, dev, ino } if sha == f.sha256 || req.force => {
                if !req.dry_run {
                    // The entry must still be the file that was read.
                    let same = dir
                        .lstat(name)
                        .is_ok_and(|st| st.dev == dev && st.ino == ino);
                    if !same {
                        rep.skip_because(
                            f.path.clone(),
                            "changed",
                            "it was replaced while setup was removing it".into(),
                        );
                        continue;
                    }
                    dir.remove(name, false)
                        .map_err(|e| Error::io(format!("removing {}", target.display()), e))?;
                    manifest.forget_file(&f.path);
                }
                rep.removed.push(f.path.clone());
            }
            Found::File { .. } => rep.skip(f.path.clone(), "changed"),
        }
    }
    if !req.dry_run {
        remove_empty_dirs(manifest, |d| d == owner);
    }
    Ok(())
}

/// What is at `target` (absolute), reached without following links.
fn find(target: &Path) -> Result<Found> {
    let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
        return Ok(Found::Other(format!(
            "{} is not a file path",
            target.display()
        )));
    };
    let dir = match DirNoFollow::open(parent) {
        Ok(d) => d,
        Err(Walk::Gone) => return Ok(Found::Gone),
        Err(Walk::Link(at)) => return Ok(Found::Link(link_reason(&at))),
        Err(Walk::Io(e)) => return Err(Error::io(format!("reaching {}", parent.display()), e)),
    };
    let mut file = match dir.open_file(name) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Gone),
        Err(e) => {
            return Ok(match dir.lstat(name) {
                Ok(st) if st.is_symlink() => Found::Link(link_reason(target)),
                Ok(_) => Found::Other(format!("{} is not a regular file now", target.display())),
                Err(_) => return Err(Error::io(format!("reading {}", target.display()), e)),
            });
        }
    };
    let meta = file
        .metadata()
        .map_err(|e| Error::io(format!("reading {}", target.display()), e))?;
    if !meta.is_file() {
        return Ok(Found::Other(format!(
            "{} is not a regular file now",
            target.display()
        )));
    }
    let mut data = Vec::new();
    file.read_to_end(&mut data)
        .map_err(|e| Error::io(format!("reading {}", target.display()), e))?;
    Ok(Found::File {
        dir,
        sha: sha256_hex(&data),
        dev: meta.dev(),
        ino: meta.ino(),
    })
}

/// Why nothing is removed through the link at `at`.
fn link_reason(at: &Path) -> String {
    let to = std::fs::read_link(at)
        .map(|t| format!(" (to {})", t.display()))
        .unwrap_or_default();
    format!(
        "{} is a symlink{to} that baton setup did not make; nothing is removed through it",
        at.display()
    )
}

/// Remove the recorded directories `owned` selects that are empty (or
/// gone), deepest first, and forget them. Each is removed in its parent
/// reached without links; one that is a link now, or holds anything, stays.
pub(super) fn remove_empty_dirs(manifest: &mut Manifest, owned: impl Fn(&str) -> bool) {
    let mut dirs: Vec<(std::path::PathBuf, std::path::PathBuf)> = manifest
        .dirs
        .iter()
        .filter(|d| owned(&d.owner))
        .map(|d| (d.path.clone(), d.target().to_path_buf()))
        .collect();
    dirs.sort_by_key(|(_, t)| std::cmp::Reverse(t.components().count()));
    for (path, target) in dirs {
        if remove_empty_dir(&target) {
            manifest.dirs.retain(|e| e.path != path);
        }
    }
}

/// Whether `target` is gone now: removed here when it was an empty
/// directory (rmdir fails on anything in it: exactly the ones that hold
/// files setup did not write stay).
fn remove_empty_dir(target: &Path) -> bool {
    let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
        return false;
    };
    let dir = match DirNoFollow::open(parent) {
        Ok(d) => d,
        Err(Walk::Gone) => return true,
        Err(_) => return false,
    };
    match dir.lstat(name) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Ok(st) if st.is_dir() => dir.remove(name, true).is_ok(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_file_behind_a_swapped_in_link_is_found_as_a_link() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().canonicalize().unwrap();
        fs::create_dir_all(real.join("skills/peer")).unwrap();
        fs::write(real.join("skills/peer/SKILL.md"), "x").unwrap();
        let Found::File { sha, .. } = find(&real.join("skills/peer/SKILL.md")).unwrap() else {
            panic!("a plain file");
        };
        assert_eq!(sha, sha256_hex(b"x"));
        // The directory swapped for a link to another one with the same file.
        fs::create_dir_all(real.join("other")).unwrap();
        fs::rename(real.join("skills/peer"), real.join("moved")).unwrap();
        fs::write(real.join("other/SKILL.md"), "x").unwrap();
        symlink(real.join("other"), real.join("skills/peer")).unwrap();
        let Found::Link(why) = find(&real.join("skills/peer/SKILL.md")).unwrap() else {
            panic!("a link in the way");
        };
        assert!(why.contains("skills/peer is a symlink (to "), "{why}");
        // The file itself a link.
        fs::remove_file(real.join("skills/peer")).unwrap();
        fs::create_dir(real.join("skills/peer")).unwrap();
        symlink(
            real.join("other/SKILL.md"),
            real.join("skills/peer/SKILL.md"),
        )
        .unwrap();
        assert!(matches!(
            find(&real.join("skills/peer/SKILL.md")).unwrap(),
            Found::Link(_)
        ));
        assert!(matches!(
            find(&real.join("nothing/here")).unwrap(),
            Found::Gone
        ));
        // An empty directory reached through a link is not removed.
        fs::create_dir(real.join("other/empty")).unwrap();
        fs::remove_file(real.join("skills/peer/SKILL.md")).unwrap();
        fs::remove_dir(real.join("skills/peer")).unwrap();
        symlink(real.join("other"), real.join("skills/peer")).unwrap();
        assert!(!remove_empty_dir(&real.join("skills/peer/empty")));
        assert!(real.join("other/empty").is_dir());
        assert!(!remove_empty_dir(&real.join("skills/peer")));
        assert!(remove_empty_dir(&real.join("other/empty")));
        assert!(!real.join("other/empty").exists());
    }
}
