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

/// The base directory, without creating it.
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

/// The record folder of the project whose root is `root`, without creating it.
pub fn project(root: &Path) -> Result<PathBuf> {
    Ok(base()?.join("repos").join(key(root)))
}

/// The same, created private (0700), with its `root` file.
pub fn ensure_project(root: &Path) -> Result<PathBuf> {
    let dir = project(root)?;
    if !dir.is_dir() {
        fsutil::ensure_private_dir(&dir)?;
        let canonical = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let mut text = canonical.display().to_string();
        text.push('\n');
        // For people only: a full disk must not stop a run over it.
        let _ = fsutil::replace_file(&dir.join("root"), text.as_bytes());
    }
    Ok(dir)
}

/// `<sub>` of the project's record folder, created private.
pub fn ensure_sub(root: &Path, sub: &str) -> Result<PathBuf> {
    let d = ensure_project(root)?.join(sub);
    fsutil::ensure_private_dir(&d)?;
    Ok(d)
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
}
