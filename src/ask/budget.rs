//! The per-task consultation budget: an agent may ask about one `task_id`
//! only so many times (default 2: a question and one follow-up), so it cannot
//! loop on advice instead of working.
//!
//! Kept in `ask-budget/<safe name>.json` in the project's state folder
//! (`state_dir`). The read-check-write happens
//! under an exclusive `flock` on a sibling lock file, so two asks started at
//! once cannot both take the last consultation; the write is atomic. File
//! names come from the task id through a character filter plus a hash, so no
//! task id can name a path outside that directory.

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::fsutil;

pub const DEFAULT_LIMIT: u32 = 2;
const MAX_TASK_ID: usize = 200;

/// What the result reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(rename = "AskBudget")]
pub struct Budget {
    pub task_id: String,
    /// Consultations used, this one included.
    pub used: u32,
    pub limit: u32,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    task_id: String,
    used: u32,
    #[serde(default)]
    consultations: Vec<Consultation>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Consultation {
    request_id: String,
    at_ms: u64,
}

/// The limit: `BATON_ASK_BUDGET` (set by the person, like
/// `BATON_MAX_DEPTH`), else `ask.budget` in the config, else 2.
pub fn limit_from_env() -> Result<u32> {
    if let Some(n) = crate::config::active().lookup("ask.budget")
        && let crate::config::Val::Int(n) = n.value
    {
        return Ok(u32::try_from(n).unwrap_or(u32::MAX));
    }
    match std::env::var("BATON_ASK_BUDGET") {
        Err(_) => Ok(DEFAULT_LIMIT),
        Ok(v) => v.trim().parse::<u32>().map_err(|_| {
            Error::usage_hint(
                format!("BATON_ASK_BUDGET=`{v}` is not a number"),
                "set it to the number of consultations allowed per task_id (default 2)",
            )
        }),
    }
}

/// The task id as the budget counts it: without surrounding blanks, so
/// `" race1"` and `"race1"` cannot get a budget each.
pub fn normalize_task_id(id: &str) -> Result<String> {
    let t = id.trim();
    validate_task_id(t)?;
    Ok(t.to_string())
}

pub fn validate_task_id(id: &str) -> Result<()> {
    if id.trim().is_empty() || id.len() > MAX_TASK_ID || id.chars().any(char::is_control) {
        return Err(Error::usage_hint(
            format!("`{}` is not a usable task_id", id.escape_debug()),
            format!("use up to {MAX_TASK_ID} printable characters, e.g. `fix-flaky-login-test`"),
        ));
    }
    Ok(())
}

/// A file name for a task id: readable part + hash, never a path.
pub fn file_stem(task_id: &str) -> String {
    let readable: String = task_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(48)
        .collect();
    let hash = crate::ask::packet::hex(&Sha256::digest(task_id.as_bytes()));
    format!("{readable}-{}", &hash[..16])
}

/// The project's budget directory, created private.
pub fn dir(root: &Path) -> Result<PathBuf> {
    crate::state_dir::ensure_sub(root, "ask-budget")
}

/// Take one consultation for `task_id` from the budgets in `dir`, or refuse
/// (exit 2) when none is left.
pub fn consume(dir: &Path, task_id: &str, limit: u32, request_id: &str) -> Result<Budget> {
    let task_id = &normalize_task_id(task_id)?;
    let stem = file_stem(task_id);
    let path = dir.join(format!("{stem}.json"));
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(dir.join(format!("{stem}.lock")))
        .map_err(|e| Error::io("opening the ask budget lock", e))?;
    // flock(2) (the standard library's lock); released when `lock` is closed.
    lock.lock()
        .map_err(|e| Error::io("locking the ask budget", e))?;
    let mut rec: Record = match std::fs::read(&path) {
        Ok(b) => serde_json::from_slice(&b).map_err(|e| {
            Error::Internal(format!("ask budget {} is corrupt: {e}", path.display()))
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Record {
            task_id: task_id.to_string(),
            ..Record::default()
        },
        Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
    };
    if rec.used >= limit {
        return Err(Error::Refused {
            kind: "budget_exhausted",
            message: format!(
                "task_id `{task_id}` has used {} of its {limit} consultations; no more advice \
                 for this task",
                rec.used
            ),
            hint: "decide with the advice you already have (the person can raise \
                   BATON_ASK_BUDGET)"
                .into(),
        });
    }
    rec.used += 1;
    rec.consultations.push(Consultation {
        request_id: request_id.to_string(),
        at_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0),
    });
    let bytes = serde_json::to_vec_pretty(&rec).map_err(|e| Error::Internal(e.to_string()))?;
    fsutil::write_atomic(&path, &bytes)?;
    drop(lock);
    Ok(Budget {
        task_id: task_id.to_string(),
        used: rec.used,
        limit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_then_refused_with_the_count() {
        let d = tempfile::tempdir().unwrap();
        let b1 = consume(d.path(), "fix-login", 2, "r1").unwrap();
        assert_eq!((b1.used, b1.limit), (1, 2));
        let b2 = consume(d.path(), "fix-login", 2, "r2").unwrap();
        assert_eq!(b2.used, 2);
        let e = consume(d.path(), "fix-login", 2, "r3").unwrap_err();
        assert_eq!(e.kind(), "budget_exhausted");
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("used 2 of its 2"), "{e}");
        // Blanks around the id do not make another task.
        let e = consume(d.path(), " fix-login\t", 2, "r3").unwrap_err();
        assert_eq!(e.kind(), "budget_exhausted");
        // Another task has its own budget.
        assert_eq!(consume(d.path(), "other", 2, "r4").unwrap().used, 1);
    }

    #[test]
    fn state_is_private_and_names_are_safe() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        for id in [
            "../../etc/passwd",
            "a/b",
            ".hidden",
            "ünï cødé",
            "x".repeat(200).as_str(),
        ] {
            consume(d.path(), id, 5, "r").unwrap();
        }
        let dir = d.path();
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().into_string().unwrap();
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)),
                "{name}"
            );
            assert!(!name.starts_with('.'), "{name}");
            let mode = e.metadata().unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{name}");
        }
        assert!(!d.path().join("etc").exists());
        // Distinct ids that filter to the same characters stay distinct.
        assert_ne!(file_stem("a/b"), file_stem("a_b"));
        assert!(validate_task_id("").is_err());
        assert!(validate_task_id("a\nb").is_err());
        assert!(validate_task_id(&"x".repeat(201)).is_err());
    }

    #[test]
    fn concurrent_asks_cannot_overspend() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().to_path_buf();
        let ok: usize = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|i| {
                    let root = &root;
                    s.spawn(move || consume(root, "race", 3, &format!("r{i}")).is_ok())
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap() as usize).sum()
        });
        assert_eq!(ok, 3);
    }

    #[test]
    fn the_config_default_agrees() {
        assert_eq!(crate::config::ASK_BUDGET, DEFAULT_LIMIT);
        assert_eq!(
            crate::config::ASK_MAX_CHARS,
            crate::ask::packet::DEFAULT_MAX_CHARS
        );
    }
}
