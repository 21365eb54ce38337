//! A group's JSON files, written atomically (0600) and read back, and the
//! wall clock its records use.

use std::path::Path;

use serde::{Serialize, de::DeserializeOwned};

use crate::error::{Error, Result};
use crate::fsutil;

pub use crate::ids::now_ms;

pub fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<()> {
    let data = serde_json::to_vec_pretty(v).map_err(|e| Error::Internal(e.to_string()))?;
    fsutil::write_atomic(path, &data)
}

/// `None` when the file does not exist; a file that does not parse is
/// `CorruptJob` (named by its folder, the group's id).
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<Option<T>> {
    match std::fs::read(path) {
        Ok(b) => serde_json::from_slice(&b)
            .map(Some)
            .map_err(|e| Error::CorruptJob {
                id: path
                    .parent()
                    .and_then(|p| p.file_name())
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                path: path.to_path_buf(),
                detail: e.to_string(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(format!("reading {}", path.display()), e)),
    }
}
