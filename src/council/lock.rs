//! The per-repository council lock: one council at a time writes (stages
//! 6–9) in a repository; a second one is refused at once, not queued.
//!
//! Refused rather than waited for: a writer can take an hour, and a
//! council that silently waits that long (holding its members' budget and
//! the user's terminal) is worse than one that says who holds the lock and
//! can be resumed later. An flock on `councils/lock` in the repository's
//! state directory: the kernel drops it however its holder ends (crash,
//! kill -9), so a stale lock never needs cleaning.

use std::fs::{File, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::state_dir;

/// Held while a council implements, verifies, reviews and repairs. The
/// stage functions take `&CouncilLock` so they cannot run without it.
#[derive(Debug)]
pub struct CouncilLock {
    file: File,
    pub path: PathBuf,
    pub council_id: String,
}

impl CouncilLock {
    /// Take the lock of the repository whose root is `root` for
    /// `council_id`, or refuse with the id of the council that holds it.
    pub fn acquire(root: &Path, council_id: &str) -> Result<CouncilLock> {
        use std::os::unix::fs::OpenOptionsExt;
        let path = state_dir::ensure_sub(root, "councils")?.join("lock");
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder
                    .split_whitespace()
                    .next()
                    .unwrap_or("another council");
                return Err(Error::Refused {
                    kind: "council_busy",
                    message: format!(
                        "council `{holder}` is writing in this repository; one council \
                         implements at a time"
                    ),
                    hint: format!(
                        "wait for it (`baton council status {holder}`) or cancel it, then \
                         `baton council resume {council_id}`"
                    ),
                });
            }
            Err(TryLockError::Error(e)) => {
                return Err(Error::io(format!("locking {}", path.display()), e));
            }
        }
        // For the refusal message only; the lock is the flock, not this text.
        let _ = file.set_len(0);
        let _ = file.seek(SeekFrom::Start(0));
        let _ = writeln!(file, "{council_id} {}", std::process::id());
        Ok(CouncilLock {
            file,
            path,
            council_id: council_id.to_string(),
        })
    }
}

impl Drop for CouncilLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}
