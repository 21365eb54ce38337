//! Reading one config file without trusting what sits at its path: only a
//! regular file (after symlinks), a project file only inside its repository,
//! at most `MAX_BYTES`, and an open that never blocks.
//!
//! Why: `baton.toml` comes with the repository, and git commits symlinks. A
//! `baton.toml` linked to `/dev/zero` was read until memory ran out; a FIFO
//! of that name hung every `run`, `ask` and `config`; a link to a file
//! elsewhere would make someone else's file this project's settings. The
//! type is checked twice: with `stat` before opening (so no device is even
//! opened) and with `fstat` on the opened descriptor (what is read is what
//! was checked, whatever is swapped in between); the open itself is
//! non-blocking, so a FIFO swapped in between cannot hang it either.

use std::fs::{Metadata, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::Scope;
use crate::error::{Error, Result};

/// The most a config file may hold (a real one is well under 10 KiB).
pub const MAX_BYTES: u64 = 1 << 20;

/// The text of the config file at `path`, `None` when there is none. A
/// project file must resolve to a place inside `root` (its repository).
pub fn read(path: &Path, scope: Scope, root: &Path) -> Result<Option<String>> {
    let refuse = |message: String, hint: String| Error::Config {
        where_: path.display().to_string(),
        key: "(file)".into(),
        message: format!("not read: {message}"),
        hint,
    };
    let replace_hint = || match scope {
        Scope::Project => format!(
            "a config file must be a regular file: remove {} (`git rm` it if the repository \
             carries it) or put a real file there",
            path.display()
        ),
        Scope::User => format!(
            "a config file must be a regular file: point BATON_CONFIG at one, or remove {}",
            path.display()
        ),
    };
    // Before opening: a device or FIFO is never opened at all.
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            return Err(refuse(not_regular(path, &m), replace_hint()));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
    }
    // O_NONBLOCK: should a FIFO have been swapped in since, the open returns
    // at once (and `fstat` below refuses it); O_NOCTTY: a terminal swapped in
    // never becomes ours.
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
    };
    let meta = file
        .metadata()
        .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
    if !meta.is_file() {
        return Err(refuse(not_regular(path, &meta), replace_hint()));
    }
    if scope == Scope::Project {
        check_inside(path, root, &meta).map_err(|(message, hint)| refuse(message, hint))?;
    }
    let too_big = |size: String| {
        refuse(
            format!("{size}, over the 1 MiB a config file may hold"),
            format!(
                "a config file is a few lines of TOML: check that {} is the file you meant",
                path.display()
            ),
        )
    };
    if meta.len() > MAX_BYTES {
        return Err(too_big(format!("{} bytes", meta.len())));
    }
    // At most one byte past the limit: a file that grows while it is read
    // is refused too, never read on without end.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    (&file)
        .take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(too_big("more than 1 MiB".into()));
    }
    String::from_utf8(bytes).map(Some).map_err(|e| {
        refuse(
            format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
            "save it as UTF-8".into(),
        )
    })
}

/// Why `meta` is not a file baton reads, naming what the path leads to.
fn not_regular(path: &Path, meta: &Metadata) -> String {
    let t = meta.file_type();
    let what = if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    };
    match link_target(path) {
        Some(to) => format!(
            "it is a symlink to {}, {what}, not a regular file",
            to.display()
        ),
        None => format!("it is {what}, not a regular file"),
    }
}

fn link_target(path: &Path) -> Option<PathBuf> {
    let is_link = std::fs::symlink_metadata(path)
        .ok()?
        .file_type()
        .is_symlink();
    is_link.then(|| std::fs::canonicalize(path).ok()).flatten()
}

/// A project file must resolve into its repository, and be the very file
/// that was opened (device and inode), so a link swapped after the open
/// cannot pass for the file that was checked.
fn check_inside(
    path: &Path,
    root: &Path,
    opened: &Metadata,
) -> std::result::Result<(), (String, String)> {
    let real = std::fs::canonicalize(path).map_err(|e| {
        (
            format!("its real path could not be found ({e})"),
            "check the file and the directories above it".to_string(),
        )
    })?;
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    if !real.starts_with(&root) {
        return Err((
            format!(
                "it resolves to {}, outside the repository {}",
                real.display(),
                root.display()
            ),
            format!(
                "a project's {} is read only from inside the repository: remove the link, \
                 or put such settings in your user file (`baton config path`)",
                super::PROJECT_FILE
            ),
        ));
    }
    let same =
        std::fs::metadata(&real).is_ok_and(|m| m.dev() == opened.dev() && m.ino() == opened.ino());
    if !same {
        return Err((
            "it changed while it was being read".into(),
            "run the command again".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn repo() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("repo");
        fs::create_dir_all(root.join(".git")).unwrap();
        (d, root)
    }

    fn refused(r: Result<Option<String>>) -> String {
        let e = r.unwrap_err();
        assert_eq!(e.kind(), "config", "{e}");
        assert!(e.hint().is_some_and(|h| !h.is_empty()));
        e.to_string()
    }

    #[test]
    fn a_regular_file_is_read_and_a_missing_one_is_none() {
        let (_d, root) = repo();
        let p = root.join("baton.toml");
        assert_eq!(read(&p, Scope::Project, &root).unwrap(), None);
        fs::write(&p, "agent = \"pi\"\n").unwrap();
        assert_eq!(
            read(&p, Scope::Project, &root).unwrap().as_deref(),
            Some("agent = \"pi\"\n")
        );
        // A link inside the repository to a regular file is fine.
        fs::create_dir(root.join("conf")).unwrap();
        fs::rename(&p, root.join("conf/baton.toml")).unwrap();
        symlink("conf/baton.toml", &p).unwrap();
        assert!(read(&p, Scope::Project, &root).unwrap().is_some());
    }

    #[test]
    fn devices_fifos_and_directories_are_refused_without_blocking() {
        let (d, root) = repo();
        let p = root.join("baton.toml");
        symlink("/dev/zero", &p).unwrap();
        let m = refused(read(&p, Scope::Project, &root));
        assert!(
            m.contains("symlink to /dev/zero, a character device"),
            "{m}"
        );
        fs::remove_file(&p).unwrap();
        crate::sys::fd::mkfifo(&p, 0o600).unwrap();
        let m = refused(read(&p, Scope::Project, &root));
        assert!(m.contains("it is a FIFO"), "{m}");
        // The user file gets the same checks.
        let m = refused(read(&p, Scope::User, &root));
        assert!(m.contains("FIFO"), "{m}");
        let m = refused(read(d.path(), Scope::User, &root));
        assert!(m.contains("a directory"), "{m}");
    }

    #[test]
    fn a_project_file_may_not_lead_out_of_the_repository() {
        let (d, root) = repo();
        let outside = d.path().join("elsewhere.toml");
        fs::write(&outside, "agent = \"pi\"\n").unwrap();
        let p = root.join("baton.toml");
        symlink(&outside, &p).unwrap();
        let m = refused(read(&p, Scope::Project, &root));
        assert!(m.contains("outside the repository"), "{m}");
        // The user's own file may be anywhere.
        assert!(read(&p, Scope::User, &root).unwrap().is_some());
    }

    #[test]
    fn a_file_over_one_mib_is_refused() {
        let (_d, root) = repo();
        let p = root.join("baton.toml");
        fs::write(&p, vec![b'#'; MAX_BYTES as usize]).unwrap();
        assert!(read(&p, Scope::Project, &root).unwrap().is_some());
        fs::write(&p, vec![b'#'; MAX_BYTES as usize + 1]).unwrap();
        let m = refused(read(&p, Scope::Project, &root));
        assert!(m.contains("over the 1 MiB"), "{m}");
    }
}
