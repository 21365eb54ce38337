//! baton's own files: private permissions and atomic writes.
//!
//! State files are 0600 and directories 0700 (they hold prompts and peer
//! transcripts). Every state write goes to a temp file in the same directory,
//! is fsynced, renamed over the target, and the directory fsynced, so a reader
//! never sees a torn file and a crash leaves the old or the new content.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::sys::fd as sys;

pub fn ensure_private_dir(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    // `recursive` applies the mode to new parents as well, but an umask may
    // have narrowed it; make the leaf exact.
    let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o700));
    Ok(())
}

/// Create (or truncate) a file readable by its owner only.
pub fn create_private(path: &Path) -> Result<File> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| Error::io(format!("creating {}", path.display()), e))
}

/// Write `data` to `path` atomically (temp file, fsync, rename, fsync dir).
pub fn write_atomic(path: &Path, data: &[u8]) -> Result<()> {
    write_replacing(path, data, true)
}

/// Like `write_atomic` (a reader sees the old or the new content, never a
/// torn file) but without the fsyncs, for records whose loss on a power cut
/// is harmless: a run's copy of its prompt and result (the result is printed
/// on stdout anyway) and usage bookkeeping. On common disks each fsync costs
/// milliseconds to tens of milliseconds, on every run's critical path.
pub fn replace_file(path: &Path, data: &[u8]) -> Result<()> {
    write_replacing(path, data, false)
}

fn write_replacing(path: &Path, data: &[u8], durable: bool) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("state");
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        crate::ids::random_suffix(6)
    ));
    let ctx = |what: &str| format!("{what} {}", path.display());
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(|e| Error::io(ctx("writing"), e))?;
    let written = f
        .write_all(data)
        .map_err(|e| Error::io(ctx("writing"), e))
        .and_then(|()| {
            if durable {
                f.sync_all().map_err(|e| Error::io(ctx("syncing"), e))
            } else {
                Ok(())
            }
        });
    drop(f);
    if let Err(e) = written {
        // A full disk must not leave half-written temp files behind.
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    if let Err(e) = fs::rename(&tmp, path) {
        let _ = fs::remove_file(&tmp);
        return Err(Error::io(ctx("renaming into place"), e));
    }
    if durable && let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The project `cwd` belongs to: the git top-level of `cwd`, else `cwd`.
/// Its records are kept under this key (`state_dir`), its worktrees in
/// `<root>/.baton/worktrees`.
///
/// Found by walking up to a `.git` entry (directory, or file for linked
/// worktrees) instead of spawning git: this is on every command's path.
pub fn project_root(cwd: &Path) -> PathBuf {
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        if d.join(".git").exists() {
            return d.to_path_buf();
        }
        dir = d.parent();
    }
    cwd.to_path_buf()
}

/// `<root>/.baton` (where worktrees go), created 0700 with a `.gitignore` of `*` so it
/// never shows up in `git status`.
pub fn baton_dir(root: &Path) -> Result<PathBuf> {
    let dir = root.join(".baton");
    ensure_private_dir(&dir)?;
    let gi = dir.join(".gitignore");
    if !gi.exists() {
        write_atomic(&gi, b"*\n")?;
    }
    Ok(dir)
}

/// Why a directory could not be reached without following a link.
#[derive(Debug)]
pub enum Walk {
    /// A component does not exist.
    Gone,
    /// This component is a symlink (or not a directory).
    Link(PathBuf),
    Io(std::io::Error),
}

/// A directory reached from `/` one component at a time, each opened
/// relative to the one before with `O_NOFOLLOW`: no symlink anywhere on
/// the way, and what is done through it happens in that very directory,
/// whatever is renamed or swapped above it meanwhile. For removing only
/// what baton itself made (`setup --uninstall`).
pub struct DirNoFollow {
    fd: std::os::fd::OwnedFd,
}

impl DirNoFollow {
    /// `dir` (absolute, without `..`) opened so.
    pub fn open(dir: &Path) -> std::result::Result<DirNoFollow, Walk> {
        use std::path::Component;
        let mut fd = open_at(None, Path::new("/"), libc::O_DIRECTORY).map_err(Walk::Io)?;
        let mut at = PathBuf::from("/");
        for c in dir.components() {
            let name = match c {
                Component::RootDir | Component::CurDir => continue,
                Component::Normal(n) => n,
                Component::Prefix(_) | Component::ParentDir => {
                    return Err(Walk::Io(std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        format!("{} is not an absolute path without `..`", dir.display()),
                    )));
                }
            };
            at.push(name);
            let next = open_at(
                Some(&fd),
                Path::new(name),
                libc::O_DIRECTORY | libc::O_NOFOLLOW,
            );
            match next {
                Ok(n) => fd = n,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Walk::Gone),
                Err(e) => {
                    let is_link = fs::symlink_metadata(&at)
                        .is_ok_and(|m| m.file_type().is_symlink() || !m.is_dir());
                    return Err(if is_link { Walk::Link(at) } else { Walk::Io(e) });
                }
            }
        }
        Ok(DirNoFollow { fd })
    }

    /// The regular file `name` in this directory, not following a link
    /// there; non-blocking, so a FIFO put there cannot hang the caller.
    pub fn open_file(&self, name: &std::ffi::OsStr) -> std::io::Result<File> {
        let fd = open_at(
            Some(&self.fd),
            Path::new(name),
            libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY,
        )?;
        Ok(File::from(fd))
    }

    /// `name`'s own type and identity (a link is reported as a link).
    pub fn lstat(&self, name: &std::ffi::OsStr) -> std::io::Result<EntryStat> {
        use std::os::fd::AsFd;
        let st = sys::lstat_at(self.fd.as_fd(), &c_name(Path::new(name))?)?;
        Ok(EntryStat {
            format: st.format,
            dev: st.dev,
            ino: st.ino,
        })
    }

    /// Remove the entry `name` of this directory (`dir`: an empty directory).
    pub fn remove(&self, name: &std::ffi::OsStr, dir: bool) -> std::io::Result<()> {
        use std::os::fd::AsFd;
        sys::unlink_at(self.fd.as_fd(), &c_name(Path::new(name))?, dir)
    }
}

/// What `DirNoFollow::lstat` tells of an entry.
#[derive(Debug, Clone, Copy)]
pub struct EntryStat {
    format: u32,
    pub dev: u64,
    pub ino: u64,
}

impl EntryStat {
    #[allow(clippy::unnecessary_cast)]
    pub fn is_dir(&self) -> bool {
        self.format == libc::S_IFDIR as u32
    }
    #[allow(clippy::unnecessary_cast)]
    pub fn is_symlink(&self) -> bool {
        self.format == libc::S_IFLNK as u32
    }
}

fn c_name(p: &Path) -> std::io::Result<std::ffi::CString> {
    sys::c_path(p)
}

/// `openat(dir or the cwd, p, O_RDONLY | O_CLOEXEC | flags)`.
fn open_at(
    dir: Option<&std::os::fd::OwnedFd>,
    p: &Path,
    flags: libc::c_int,
) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::AsFd;
    sys::open_at(dir.map(|d| d.as_fd()), &c_name(p)?, libc::O_RDONLY | flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_is_private_and_replaces() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("state.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // no temp files left behind
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn replace_file_is_private_and_replaces() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("result.json");
        replace_file(&p, b"one").unwrap();
        replace_file(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn baton_dir_is_private_and_ignored() {
        let d = tempfile::tempdir().unwrap();
        let b = baton_dir(d.path()).unwrap();
        let mode = fs::metadata(&b).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert_eq!(fs::read_to_string(b.join(".gitignore")).unwrap(), "*\n");
    }

    #[test]
    fn project_root_finds_git_dir() {
        let d = tempfile::tempdir().unwrap();
        fs::create_dir_all(d.path().join("a/b")).unwrap();
        fs::create_dir(d.path().join(".git")).unwrap();
        assert_eq!(project_root(&d.path().join("a/b")), d.path());
    }
}
