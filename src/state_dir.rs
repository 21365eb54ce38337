//! Where baton keeps its records (runs, jobs, codex usage, ask budgets,
//! worktree records): in the user's state directory, one folder per project.
//!
//! Not in the work tree: a peer may write there, and the commonest agent
//! clean-up (`git clean -fdx`) deletes every untracked file, records of other
//! jobs included. The user's state directory is outside what any sandboxed
//! peer may write. The base is `$BATON_STATE_DIR` when set (tests, or a
//! person who wants it elsewhere), else the platform's state directory
//! (`$XDG_STATE_HOME/baton`, by default `~/.local/state/baton`; on macOS
//! `~/Library/Application Support/baton`). Each project gets
//! `<base>/repos/<name>-<hash>/`, keyed by its canonical root directory, with
//! a `root` file naming it for people.
//!
//! The folders are used only if no one else can change them (`check`): the
//! base, `repos`, the project's folder and its sub-folders must be owned by
//! us (or root) and not writable by group or others, and nothing below the
//! base may be a symlink (baton never makes one; a link planted at
//! `repos/<p>/runs` made `run` write wherever it pointed). Checked that way,
//! a path cannot be swapped after the check by anyone but the user: no
//! openat walk is needed. The base itself may be a link (a user's choice).
//!
//! Inside a host agent's sandbox (baton run by Codex's or Claude Code's
//! shell tool, `sandbox::host::host`) the platform's base is often outside
//! what the sandbox lets a command write (Codex's workspace-write: the
//! home is read-only, `/tmp` is not). There, and only when `BATON_STATE_DIR`
//! is not set, baton keeps its records in `$TMPDIR/baton-<uid>` (else
//! `/tmp/baton-<uid>`) — a folder it makes itself, refused if it is a link
//! or someone else's — and each result says so (`fallback_note`). The same
//! sandbox gives the same answer on every call, so `run --async` and a
//! later `wait` find the same store. Not the work tree: a peer's
//! `git clean -fdx` would delete the records there.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::fsutil;

/// Overrides the base directory.
pub const ENV: &str = "BATON_STATE_DIR";

#[cfg(test)]
thread_local! {
    /// A unit test's own base directory, for this thread only: setting
    /// `BATON_STATE_DIR` would race with every other test in the process.
    pub static TEST_BASE: std::cell::RefCell<Option<PathBuf>> = const { std::cell::RefCell::new(None) };
}

/// The base directory, without creating it (except inside a host agent's
/// sandbox, where finding out whether it can be written creates it).
pub fn base() -> Result<PathBuf> {
    #[cfg(test)]
    if let Some(d) = TEST_BASE.with(|b| b.borrow().clone()) {
        return Ok(d);
    }
    if let Some(d) = std::env::var_os(ENV).filter(|d| !d.is_empty()) {
        let d = PathBuf::from(d);
        if d.is_relative() {
            return Err(Error::usage_hint(
                format!("{ENV}={} is not an absolute path", d.display()),
                format!("set {ENV} to an absolute directory, or unset it"),
            ));
        }
        return Ok(d);
    }
    let platform = platform()?;
    Ok(match fallback(&platform) {
        Some(f) => f.used.clone(),
        None => platform,
    })
}

/// The platform's state directory for baton.
fn platform() -> Result<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "baton").ok_or_else(|| {
        Error::usage_hint(
            "no home directory to keep baton's records in",
            format!("set HOME, or {ENV} to a directory baton may write"),
        )
    })?;
    Ok(dirs
        .state_dir()
        .unwrap_or_else(|| dirs.data_local_dir())
        .to_path_buf())
}

/// The state directory baton uses in place of the platform's inside a host
/// agent's sandbox that does not let it write there.
struct Fallback {
    platform: PathBuf,
    used: PathBuf,
    host: crate::failure::SandboxHost,
    why: std::io::Error,
}

/// Decided once per process: the environment does not change, and every
/// record of one command must land in one place.
fn fallback(platform: &Path) -> Option<&'static Fallback> {
    static FALLBACK: std::sync::OnceLock<Option<Fallback>> = std::sync::OnceLock::new();
    FALLBACK
        .get_or_init(|| {
            // Outside a host's tool nothing is moved: a full or read-only
            // disk is reported as it always was.
            let host = crate::sandbox::host::host()?;
            let why = writable(platform).err()?;
            let tmp = std::env::var_os("TMPDIR")
                .map(PathBuf::from)
                .filter(|t| t.is_absolute())
                .unwrap_or_else(|| PathBuf::from("/tmp"));
            // SAFETY: geteuid has no preconditions and cannot fail.
            let used = tmp.join(format!("baton-{}", crate::sys::proc::euid()));
            own_private_dir(&used).ok()?;
            writable(&used).ok()?;
            Some(Fallback {
                platform: platform.to_path_buf(),
                used,
                host,
                why,
            })
        })
        .as_ref()
}

/// `dir` exists (made private if new) and a file can be made in it.
fn writable(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if !dir.is_dir() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    // Writable permission bits say nothing under a read-only bind mount or
    // a sandbox's rules: only a real write does.
    let probe = dir.join(format!(".baton-write-probe-{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&probe)?;
    std::fs::remove_file(&probe)
}

/// `dir` in a shared directory such as `/tmp`: made by us with mode 0700,
/// or already there as a real directory of ours that only we can write.
/// A link (planted by someone else before we made it) is refused.
fn own_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(dir)?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = crate::sys::proc::euid();
    let private = meta.permissions().mode() & 0o022 == 0;
    if meta.file_type().is_dir() && meta.uid() == me && private {
        Ok(())
    } else {
        Err(std::io::Error::other(format!(
            "{} is not a private directory of this user",
            dir.display()
        )))
    }
}

/// The warning every result carries while records are kept in the
/// fallback (`None` when they are where they always are).
pub fn fallback_note() -> Option<String> {
    #[cfg(test)]
    if TEST_BASE.with(|b| b.borrow().is_some()) {
        return None;
    }
    if std::env::var_os(ENV).is_some_and(|d| !d.is_empty()) {
        return None;
    }
    let f = fallback(&platform().ok()?)?;
    Some(format!(
        "records are kept in {} because baton cannot write its state directory {} inside {} \
         ({}): they go when that temporary directory is cleared, `baton jobs` run outside the \
         sandbox does not list them (BATON_STATE_DIR={} does), and a peer that may write there \
         could change them",
        f.used.display(),
        f.platform.display(),
        f.host.sandbox_name(),
        f.why,
        f.used.display()
    ))
}

/// The folders baton keeps in a project's record folder (each is checked
/// by `project`, which every caller goes through).
const SUBS: &[&str] = &[
    "runs",
    "jobs",
    "councils",
    "fanouts",
    "benches",
    "bench-sets",
    "worktrees",
    "checks",
    "sessions",
    "ask-budget",
    "ask",
    "live",
];

/// The error kind of a state directory baton will not use.
pub const UNSAFE: &str = "unsafe_state_dir";

/// The record folder of the project whose root is `root`, without creating
/// it; refused (`unsafe_state_dir`) when others could change it.
///
/// The whole chain (base, `repos`, the project's folder, its sub-folders,
/// the project's key) is checked once per process: a foreground run asked
/// for it three times (its folder, the session file, the ledger), some 60
/// system calls. Checked once is as safe: a folder that passed is ours and
/// writable by no one else, so only we (or root) could swap it after the
/// check, which a second check in the same process would not stop either
/// (it would race the swap). Where a folder is made or written into
/// (`ensure_project`, `ensure_sub`), the project's folder and that
/// sub-folder are looked at again (one `lstat` each): a link or a foreign
/// folder found there is still refused. Every baton command is a new
/// process, and checks again.
pub fn project(root: &Path) -> Result<PathBuf> {
    let base = base()?;
    if let Some(dir) = checked(&base, root) {
        return Ok(dir);
    }
    check(&base, Follow::Yes)?;
    let repos = base.join("repos");
    check(&repos, Follow::No)?;
    let dir = repos.join(key(root));
    if check(&dir, Follow::No)? {
        // One listing rather than an `lstat` per folder baton may keep
        // there: only those present are looked at.
        let rd = std::fs::read_dir(&dir)
            .map_err(|e| Error::io(format!("listing {}", dir.display()), e))?;
        for e in rd {
            let e = e.map_err(|e| Error::io(format!("listing {}", dir.display()), e))?;
            if e.file_name().to_str().is_some_and(|n| SUBS.contains(&n)) {
                check(&e.path(), Follow::No)?;
            }
        }
    }
    CHECKED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((base, root.to_path_buf(), dir.clone()));
    Ok(dir)
}

/// The projects checked in this process: (base, root as asked, folder).
static CHECKED: std::sync::Mutex<Vec<(PathBuf, PathBuf, PathBuf)>> =
    std::sync::Mutex::new(Vec::new());

fn checked(base: &Path, root: &Path) -> Option<PathBuf> {
    CHECKED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .find(|(b, r, _)| b == base && r == root)
        .map(|(_, _, d)| d.clone())
}

/// What a new process would do: check everything again (tests only).
#[cfg(test)]
pub fn forget_checks() {
    CHECKED.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

#[derive(Clone, Copy, PartialEq)]
enum Follow {
    Yes,
    No,
}

/// `path`, if it exists, is a directory that only we can change: owned by
/// us (or root), not writable by group or others, and (`Follow::No`) not
/// a symlink.
/// Whether it exists.
fn check(path: &Path, follow: Follow) -> Result<bool> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = match follow {
        Follow::Yes => std::fs::metadata(path),
        Follow::No => std::fs::symlink_metadata(path),
    };
    let meta = match meta {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(Error::io(format!("checking {}", path.display()), e)),
    };
    let shown = path.display();
    let refuse = |message: String, hint: String| Error::Refused {
        kind: "unsafe_state_dir",
        message,
        hint,
    };
    if meta.file_type().is_symlink() {
        let to = std::fs::read_link(path)
            .map(|t| format!(" (to {})", t.display()))
            .unwrap_or_default();
        return Err(refuse(
            format!(
                "{shown} is a symlink{to} inside baton's state directory; baton never makes one \
                 there, so it does not follow it"
            ),
            format!(
                "remove the link (`rm {shown}`; baton makes the folder again); to keep the \
                 records elsewhere, set {ENV} to that directory"
            ),
        ));
    }
    if !meta.is_dir() {
        return Err(refuse(
            format!("{shown} in baton's state directory is not a directory"),
            format!("move {shown} away; baton makes the folder again"),
        ));
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = crate::sys::proc::euid();
    if meta.uid() != me && meta.uid() != 0 {
        return Err(refuse(
            format!(
                "{shown} is owned by uid {}, not by you (uid {me}): its owner could read and \
                 change baton's records",
                meta.uid()
            ),
            format!("set {ENV} to a directory of your own, or `chown $(id -u) {shown}`"),
        ));
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(refuse(
            format!(
                "{shown} is writable by {} (mode {mode:04o}): another user could read or replace \
                 baton's records (prompts, transcripts, results)",
                match (mode & 0o020 != 0, mode & 0o002 != 0) {
                    (true, true) => "group and others",
                    (true, false) => "its group",
                    _ => "others",
                }
            ),
            format!("chmod 700 {shown}"),
        ));
    }
    Ok(true)
}

/// The same, created private (0700), with its `root` file.
pub fn ensure_project(root: &Path) -> Result<PathBuf> {
    let dir = project(root)?;
    // Looked at again where records are made (see `project`).
    if !check(&dir, Follow::No)? {
        fsutil::ensure_private_dir(&dir)?;
        let canonical = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let mut text = canonical.display().to_string();
        text.push('\n');
        // For people only: a full disk must not stop a run over it.
        let _ = fsutil::replace_file(&dir.join("root"), text.as_bytes());
        // No live index is made here (`store::live`): the first view across
        // repositories scans this new project once, which costs a few
        // failed directory opens, and completes its index then. Making it
        // here cost every run in a new project a folder and two fsyncs.
    }
    Ok(dir)
}

/// `<sub>` of the project's record folder, created private.
pub fn ensure_sub(root: &Path, sub: &str) -> Result<PathBuf> {
    let d = ensure_project(root)?.join(sub);
    if !check(&d, Follow::No)? {
        fsutil::ensure_private_dir(&d)?;
    }
    Ok(d)
}

/// One project baton keeps records for, found in the state directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    /// Its record folder (`<base>/repos/<name>-<hash>`).
    pub dir: PathBuf,
    /// The project's root as its `root` file names it (`None`: no such
    /// file, a folder made by a baton older than that file or damaged).
    pub root: Option<PathBuf>,
    /// Whether that root is still a directory on this machine: a deleted
    /// or moved project is shown as such, never looked into.
    pub exists: bool,
}

impl Repo {
    /// What people read for it: the root, or the folder's name.
    pub fn label(&self) -> String {
        match &self.root {
            Some(r) => r.display().to_string(),
            None => self
                .dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        }
    }
}

/// Every project in the state directory, sorted by label. Nothing is
/// created; a base or `repos` folder that is missing gives none, one that
/// is unsafe (`check`) is refused as `project` refuses it. Entries that
/// are not private folders of ours (a link, a file) are skipped: the views
/// across repositories must never follow what someone planted there.
pub fn repos() -> Result<Vec<Repo>> {
    let base = base()?;
    if !check(&base, Follow::Yes)? {
        return Ok(Vec::new());
    }
    let dir = base.join("repos");
    if !check(&dir, Follow::No)? {
        return Ok(Vec::new());
    }
    let rd =
        std::fs::read_dir(&dir).map_err(|e| Error::io(format!("listing {}", dir.display()), e))?;
    let mut out: Vec<Repo> = rd
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| check(&e.path(), Follow::No).unwrap_or(false))
        .map(|e| {
            let dir = e.path();
            let root = std::fs::read_to_string(dir.join("root"))
                .ok()
                .map(|s| PathBuf::from(s.trim_end_matches('\n')))
                .filter(|p| p.is_absolute());
            let exists = root.as_ref().is_some_and(|r| r.is_dir());
            Repo { dir, root, exists }
        })
        .collect();
    out.sort_by_key(|r| r.label());
    Ok(out)
}

/// `<name>-<16 hex digits of the path's SHA-256>`: readable in a listing,
/// unique per directory, never more than one path component.
fn key(root: &Path) -> String {
    // The same project reached through a symlink is the same project.
    let canonical = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let name: String = canonical
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let name = name.trim_start_matches('.');
    let hash = Sha256::digest(canonical.as_os_str().as_encoded_bytes());
    let hex: String = hash[..8].iter().map(|b| format!("{b:02x}")).collect();
    if name.is_empty() {
        hex
    } else {
        format!("{name}-{hex}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repos_lists_every_project_and_says_which_are_gone() {
        let d = tempfile::tempdir().unwrap();
        let base = d.path().join("state");
        TEST_BASE.with(|b| *b.borrow_mut() = Some(base.clone()));
        assert_eq!(repos().unwrap(), Vec::new(), "no base yet: no projects");
        let here = d.path().join("here");
        let gone = d.path().join("gone");
        std::fs::create_dir_all(&here).unwrap();
        std::fs::create_dir_all(&gone).unwrap();
        ensure_project(&here).unwrap();
        ensure_project(&gone).unwrap();
        std::fs::remove_dir(&gone).unwrap();
        // Planted: a link among the projects is skipped, never followed.
        std::os::unix::fs::symlink(&here, base.join("repos").join("planted")).unwrap();
        let found = repos().unwrap();
        TEST_BASE.with(|b| *b.borrow_mut() = None);
        let seen: Vec<(String, bool)> = found
            .iter()
            .map(|r| {
                (
                    r.root
                        .as_ref()
                        .unwrap()
                        .file_name()
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                    r.exists,
                )
            })
            .collect();
        assert_eq!(seen, vec![("gone".into(), false), ("here".into(), true)]);
    }

    #[test]
    fn keys_are_one_readable_component_per_directory() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("my proj");
        let b = d.path().join("other");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let ka = key(&a);
        assert!(ka.starts_with("my_proj-"), "{ka}");
        assert_eq!(ka.len(), "my_proj-".len() + 16);
        assert_ne!(ka, key(&b));
        // Through a symlink: the same key.
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&a, &link).unwrap();
        assert_eq!(key(&link), ka);
        assert!(!key(Path::new("/")).contains('/'));
        assert!(!key(Path::new("/x/..")).contains('/'));
    }

    fn with_base<T>(base: &Path, f: impl FnOnce() -> T) -> T {
        TEST_BASE.with(|b| *b.borrow_mut() = Some(base.to_path_buf()));
        let out = f();
        TEST_BASE.with(|b| *b.borrow_mut() = None);
        out
    }

    #[test]
    fn a_symlink_inside_the_state_directory_is_refused() {
        use std::os::unix::fs::symlink;
        let d = tempfile::tempdir().unwrap();
        let (base, root, elsewhere) = (
            d.path().join("state"),
            d.path().join("proj"),
            d.path().join("elsewhere"),
        );
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        with_base(&base, || {
            let dir = ensure_project(&root).unwrap();
            for sub in ["runs", "jobs", "councils", "fanouts", "worktrees"] {
                symlink(&elsewhere, dir.join(sub)).unwrap();
                // Where a folder is used to write in, at once; anywhere, in
                // the next process (checks are made once per process).
                let made = ensure_sub(&root, sub).unwrap_err();
                forget_checks();
                for e in [made, project(&root).unwrap_err()] {
                    assert_eq!(e.kind(), UNSAFE, "{sub}: {e}");
                    assert!(e.to_string().contains("is a symlink"), "{e}");
                    assert!(e.hint().unwrap().contains("rm "), "{e:?}");
                }
                std::fs::remove_file(dir.join(sub)).unwrap();
            }
            // The project's folder itself, and `repos`.
            std::fs::remove_dir_all(&dir).unwrap();
            symlink(&elsewhere, &dir).unwrap();
            assert_eq!(ensure_sub(&root, "runs").unwrap_err().kind(), UNSAFE);
            std::fs::remove_file(&dir).unwrap();
            std::fs::remove_dir_all(base.join("repos")).unwrap();
            symlink(&elsewhere, base.join("repos")).unwrap();
            forget_checks();
            assert_eq!(project(&root).unwrap_err().kind(), UNSAFE);
            assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        });
    }

    #[test]
    fn a_state_directory_others_can_write_is_refused_and_a_linked_base_is_not() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let (base, root) = (d.path().join("state"), d.path().join("proj"));
        std::fs::create_dir_all(&root).unwrap();
        with_base(&base, || {
            let dir = ensure_sub(&root, "runs").unwrap();
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&base), 0o700);
            assert_eq!(mode(&dir), 0o700);
            for (p, m, who) in [
                (&base, 0o770, "its group"),
                (&base, 0o757, "others"),
                (&dir, 0o777, "group and others"),
            ] {
                std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
                // In a new process (checks are made once per process).
                forget_checks();
                let e = project(&root).unwrap_err();
                assert_eq!(e.kind(), UNSAFE);
                assert!(e.to_string().contains(&format!("writable by {who}")), "{e}");
                assert_eq!(e.hint().unwrap(), format!("chmod 700 {}", p.display()));
                std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o700)).unwrap();
            }
            // Readable by others is their business (not writable: no swap).
            std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
            assert!(project(&root).is_ok());
        });
        // The base may be a link to the real directory.
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&base, &link).unwrap();
        with_base(&link, || assert!(ensure_sub(&root, "runs").is_ok()));
    }
}
