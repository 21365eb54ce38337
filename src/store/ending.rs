//! How every kind of background work records its end, so a reader that
//! sees a terminal state finds a result beside it, even on a full disk:
//!
//! - the runner sets `reserve` aside at its start (`Runner::hold`, or
//!   `make_reserve` for a runner that holds its lock another way);
//! - the end is written result first (`store_result`: `result.json`; on a
//!   full disk again with the reserve freed, then a smaller result the kind
//!   makes, which says what was lost), and the state turns terminal only
//!   after it, with the reserve freed (`free_reserve`) so that write has room.
//!
//! One mechanism for jobs, councils and fan-outs (each kind says what its
//! result is and what is left of it when it cannot be stored).

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::fsutil;

/// What a runner sets aside, freed to record the end on a full disk: a
/// state file and a small result fit in it many times over.
pub const RESERVE: usize = 64 << 10;

/// The file name of a record's result (every kind).
pub const RESULT: &str = "result.json";

pub fn reserve_path(dir: &Path) -> PathBuf {
    dir.join("reserve")
}

/// Set room aside in the record's folder. Best effort: a disk already full
/// gets none (and no half-made reserve stays).
pub fn make_reserve(dir: &Path) {
    let p = reserve_path(dir);
    if fsutil::replace_file(&p, &[0u8; RESERVE]).is_err() {
        let _ = fs::remove_file(&p);
    }
}

pub fn free_reserve(dir: &Path) {
    let _ = fs::remove_file(reserve_path(dir));
}

/// How a kind writes its result file (compact for jobs, pretty for the
/// groups, as 0.3.2 wrote them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Compact,
    Pretty,
}

fn write<R: Serialize>(path: &Path, r: &R, enc: Encoding) -> Result<()> {
    let b = match enc {
        Encoding::Compact => serde_json::to_vec(r),
        Encoding::Pretty => serde_json::to_vec_pretty(r),
    }
    .map_err(|e| Error::Internal(e.to_string()))?;
    fsutil::write_atomic(path, &b)
}

/// Store `result` as the record's `result.json`; on a full disk, again with
/// the reserve freed, then what `less` keeps of it (told why). Returns what
/// was stored (or, if nothing could be, what the state should say). The
/// reserve is freed either way: the caller writes its terminal state next.
pub fn store_result<R: Serialize>(
    dir: &Path,
    result: R,
    enc: Encoding,
    less: impl FnOnce(R, &Error) -> R,
) -> R {
    let path = dir.join(RESULT);
    let stored = match write(&path, &result, enc) {
        Ok(()) => result,
        Err(e) => {
            free_reserve(dir);
            match write(&path, &result, enc) {
                Ok(()) => result,
                Err(_) => {
                    let small = less(result, &e);
                    let _ = write(&path, &small, enc);
                    small
                }
            }
        }
    };
    free_reserve(dir);
    stored
}

/// A group's runner: its lock (the one liveness rule, `lock`) and its
/// reserve, both for as long as this lives. Dropping it frees the reserve
/// (a council that waits for a person keeps no 64 KiB) and the lock.
pub struct Runner {
    dir: PathBuf,
    _lock: File,
}

impl Runner {
    /// Take the record's lock and set the reserve aside; `Ok(None)`:
    /// another process drives the record now.
    pub fn hold(dir: &Path) -> Result<Option<Runner>> {
        let Some(lock) = super::lock::hold(dir)? else {
            return Ok(None);
        };
        make_reserve(dir);
        Ok(Some(Runner {
            dir: dir.to_path_buf(),
            _lock: lock,
        }))
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        free_reserve(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_that_cannot_be_written_is_replaced_by_less_and_the_reserve_freed() {
        let d = tempfile::tempdir().unwrap();
        let runner = Runner::hold(d.path()).unwrap().expect("free");
        assert_eq!(
            fs::metadata(reserve_path(d.path())).unwrap().len(),
            RESERVE as u64
        );
        let got = store_result(d.path(), 7u32, Encoding::Compact, |_, _| 0);
        assert_eq!(got, 7);
        assert_eq!(fs::read_to_string(d.path().join(RESULT)).unwrap(), "7");
        assert!(!reserve_path(d.path()).exists());
        drop(runner);

        // A folder where nothing can be written (a directory in the
        // result's place): `less` is asked, with the reason.
        fs::remove_file(d.path().join(RESULT)).unwrap();
        fs::create_dir(d.path().join(RESULT)).unwrap();
        make_reserve(d.path());
        let got = store_result(d.path(), 7u32, Encoding::Pretty, |r, e| {
            assert!(!e.to_string().is_empty());
            r + 1
        });
        assert_eq!(got, 8);
        assert!(!reserve_path(d.path()).exists());
    }

    #[test]
    fn a_runner_frees_its_reserve_when_it_goes() {
        let d = tempfile::tempdir().unwrap();
        let r = Runner::hold(d.path()).unwrap().unwrap();
        assert!(Runner::hold(d.path()).unwrap().is_none());
        assert!(reserve_path(d.path()).exists());
        drop(r);
        assert!(!reserve_path(d.path()).exists());
        assert!(!super::super::lock::held(d.path()));
    }
}
