//! What `baton setup` wrote: every file with its SHA-256, and every directory
//! it had to create, so a rerun and `--uninstall` touch only setup's own work.
//!
//! One manifest per scope: user scope in `$XDG_STATE_HOME/baton/setup.json`
//! (default ~/.local/state/baton), project scope in `<project>/.baton/setup.json`.
//! A file whose content no longer matches its recorded checksum was changed by
//! someone else, and setup leaves it alone unless `--force`.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Manifest {
    pub schema_version: u32,
    #[serde(default)]
    pub files: Vec<FileEntry>,
    /// Directories setup created (removed on uninstall once empty).
    #[serde(default)]
    pub dirs: Vec<DirEntry>,
    /// Entries setup put into files that are not its own (`--mcp`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entries: Vec<Entry>,
}

/// One entry in a host's configuration file (`baton setup --mcp`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    pub path: PathBuf,
    /// Where in the file: `mcpServers.baton`, `mcp.baton`, `mcp_servers.baton`.
    pub key: String,
    /// Of the entry's value (JSON, keys sorted), or of `text`.
    pub sha256: String,
    /// `mcp-claude`, `mcp-codex`, …
    pub owner: String,
    /// The exact text setup appended (TOML), removed as is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Setup created the file: removed on uninstall when nothing else is left.
    #[serde(default)]
    pub created_file: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FileEntry {
    pub path: PathBuf,
    pub sha256: String,
    /// `claude`, `codex`, `pi`, `gemini` or `man`.
    pub owner: String,
    /// Where `path` led when setup wrote it, every symlink resolved: what
    /// uninstall removes, reached without following any link (a link swapped
    /// in since is not followed). Missing in manifests of baton 0.2.0, where
    /// `path` itself is walked that way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub real: Option<PathBuf>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DirEntry {
    pub path: PathBuf,
    /// As for files; `setup` for the manifest's own directories.
    pub owner: String,
    /// As for files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub real: Option<PathBuf>,
}

impl FileEntry {
    /// The place uninstall looks at (see `real`).
    pub fn target(&self) -> &Path {
        self.real.as_deref().unwrap_or(&self.path)
    }
}

impl DirEntry {
    pub fn target(&self) -> &Path {
        self.real.as_deref().unwrap_or(&self.path)
    }
}

pub fn sha256_hex(data: &[u8]) -> String {
    let digest = Sha256::digest(data);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The checksum of the file at `path`, `None` when there is no file.
pub fn file_sha(path: &Path) -> Result<Option<String>> {
    match fs::read(path) {
        Ok(data) => Ok(Some(sha256_hex(&data))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(format!("reading {}", path.display()), e)),
    }
}

impl Manifest {
    pub fn load(path: &Path) -> Result<Manifest> {
        let text = match fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Manifest {
                    schema_version: 1,
                    ..Manifest::default()
                });
            }
            Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
        };
        serde_json::from_str(&text).map_err(|e| Error::Refused {
            kind: "setup_manifest",
            message: format!("{} is not a baton setup manifest: {e}", path.display()),
            hint: "move it aside; setup then treats every existing file as not its own \
                   (use --force to replace them)"
                .into(),
        })
    }

    pub fn file(&self, path: &Path) -> Option<&FileEntry> {
        self.files.iter().find(|f| f.path == path)
    }

    /// Record a file setup just wrote (and where it really is).
    pub fn record_file(&mut self, path: &Path, sha256: String, owner: &str) {
        self.files.retain(|f| f.path != path);
        self.files.push(FileEntry {
            path: path.to_path_buf(),
            sha256,
            owner: owner.to_string(),
            real: fs::canonicalize(path).ok(),
        });
    }

    pub fn entry(&self, path: &Path) -> Option<&Entry> {
        self.entries.iter().find(|e| e.path == path)
    }

    pub fn record_entry(&mut self, e: Entry) {
        self.entries.retain(|x| x.path != e.path);
        self.entries.push(e);
    }

    pub fn forget_entry(&mut self, path: &Path) {
        self.entries.retain(|e| e.path != path);
    }

    pub fn forget_file(&mut self, path: &Path) {
        self.files.retain(|f| f.path != path);
    }

    pub fn record_dir(&mut self, path: &Path, owner: &str) {
        if !self.dirs.iter().any(|d| d.path == path) {
            self.dirs.push(DirEntry {
                path: path.to_path_buf(),
                owner: owner.to_string(),
                real: fs::canonicalize(path).ok(),
            });
        }
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
            && self.entries.is_empty()
            && self.dirs.iter().all(|d| d.owner == "setup")
    }

    pub fn to_json(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).unwrap_or_default();
        out.push(b'\n');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_replacing_an_entry() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("setup.json");
        let mut m = Manifest::load(&p).unwrap();
        assert!(m.is_empty());
        m.record_file(Path::new("/a"), sha256_hex(b"x"), "pi");
        m.record_file(Path::new("/a"), sha256_hex(b"y"), "pi");
        m.record_dir(Path::new("/d"), "pi");
        m.record_dir(Path::new("/d"), "pi");
        fs::write(&p, m.to_json()).unwrap();
        let back = Manifest::load(&p).unwrap();
        assert_eq!(back.files.len(), 1);
        assert_eq!(back.files[0].sha256, sha256_hex(b"y"));
        assert_eq!(back.dirs.len(), 1);
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn a_damaged_manifest_is_refused_with_a_hint() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("setup.json");
        fs::write(&p, "{not json").unwrap();
        let e = Manifest::load(&p).unwrap_err();
        assert_eq!(e.kind(), "setup_manifest");
        assert!(e.hint().unwrap().contains("--force"));
    }
}
