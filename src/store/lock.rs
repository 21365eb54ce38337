//! The runner's lock: `<record>/lock`, held exclusively by the process
//! driving a piece of background work for its whole life, and dropped by
//! the kernel when that process dies, however it dies.
//!
//! Readers probe it with a shared lock, so probes never block each other
//! nor the runner. The platform calls are `std::fs::File`'s `flock`
//! wrappers: `hold` and `held` are the two functions a `sys` module takes
//! over when there is one.

use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// The lock's file name in a record's folder (as the job store names it).
pub const LOCK: &str = "lock";

pub fn path(dir: &Path) -> PathBuf {
    dir.join(LOCK)
}

/// Take the record's lock for this process (the file is made 0600). The
/// lock lives as long as the returned file: keep it for the runner's life.
/// `Ok(None)`: another process holds it (it drives this record now).
pub fn hold(dir: &Path) -> Result<Option<File>> {
    let p = path(dir);
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&p)
        .map_err(|e| Error::io(format!("opening {}", p.display()), e))?;
    match f.try_lock() {
        Ok(()) => Ok(Some(f)),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(Error::io(format!("locking {}", p.display()), e)),
    }
}

/// Whether some process holds the record's lock now. A record without a
/// lock file (one written before the lock existed, or a launch cut short)
/// has no live runner.
pub fn held(dir: &Path) -> bool {
    let Ok(f) = File::open(path(dir)) else {
        return false;
    };
    matches!(f.try_lock_shared(), Err(TryLockError::WouldBlock))
}

/// Wait until the lock is held (`want_held`) or free, for at most `timeout`
/// and only while `go_on` holds; whether it came to be.
pub fn wait_until(
    dir: &Path,
    want_held: bool,
    timeout: Duration,
    go_on: impl Fn() -> bool,
) -> bool {
    let until = Instant::now() + timeout;
    loop {
        if held(dir) == want_held {
            return true;
        }
        if !go_on() || Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_while_the_file_lives_and_free_after() {
        let d = tempfile::tempdir().unwrap();
        assert!(!held(d.path()), "no lock file: no runner");
        let f = hold(d.path()).unwrap().expect("free");
        assert!(held(d.path()));
        assert!(
            hold(d.path()).unwrap().is_none(),
            "a second holder is refused"
        );
        // Unlocked, not only closed: a child another test thread forks now
        // keeps a copy of the descriptor (and so the lock) until it execs.
        f.unlock().unwrap();
        drop(f);
        assert!(!held(d.path()));
        assert!(wait_until(d.path(), false, Duration::ZERO, || true));
    }
}
