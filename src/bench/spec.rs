//! What a bench run was asked to do: `bench.json` in its record
//! (`benches/<id>/` of the project's state), written once at its start and
//! read by `--resume`, `merge` and `report`. Its trials are files in the
//! record's `trials/` folder (`super::trial`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The spec's file in a bench run's record.
pub const SPEC_FILE: &str = "bench.json";
/// The folder of its trials.
pub const TRIALS_DIR: &str = "trials";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Spec {
    /// Always 1.
    pub format: u32,
    /// The bench run's id (`crate::ids`).
    pub id: String,
    /// The task set's folder (absolute).
    pub set: PathBuf,
    /// The settings as given to `--agents`: `AGENT` or `AGENT:MODEL`.
    pub settings: Vec<String>,
    /// How many times each task goes to each setting.
    pub repeat: u32,
    /// `--shard I/N`: this run holds the trials whose place in the sorted
    /// (task, setting, repeat) list is I-1 modulo N.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    pub created_at_ms: u64,
    /// What else the run was given (access, timeout, budget), for the record.
    #[serde(default)]
    pub options: serde_json::Map<String, serde_json::Value>,
}

/// One slice of N: `index` from 1 to `of`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Shard {
    pub index: u32,
    pub of: u32,
}

impl Shard {
    /// `I/N`, 1 ≤ I ≤ N ≤ 1000.
    pub fn parse(s: &str) -> Result<Shard> {
        let bad = || {
            Error::usage_hint(
                format!("--shard {s}: not I/N"),
                "give the slice as I/N with 1 <= I <= N, e.g. --shard 2/4",
            )
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, of) = (
            i.trim().parse::<u32>().map_err(|_| bad())?,
            n.trim().parse::<u32>().map_err(|_| bad())?,
        );
        if index == 0 || index > of || of > 1000 {
            return Err(bad());
        }
        Ok(Shard { index, of })
    }

    /// Whether the `n`-th (0-based) item of the sorted list is this shard's.
    pub fn holds(self, n: usize) -> bool {
        n % self.of as usize == (self.index - 1) as usize
    }
}

impl Spec {
    /// A whole-number option (`attempts`, `until_green`), `default` when
    /// the run was not given it (a record older than the flag).
    pub fn option_u32(&self, key: &str, default: u32) -> u32 {
        self.options
            .get(key)
            .and_then(|v| v.as_u64())
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(default)
    }
}

/// Read a record's spec.
pub fn read(record: &Path) -> Result<Spec> {
    let p = record.join(SPEC_FILE);
    let text = std::fs::read_to_string(&p)
        .map_err(|e| Error::io(format!("reading {}", p.display()), e))?;
    serde_json::from_str(&text).map_err(|e| {
        Error::usage_hint(
            format!("{}: not a bench run's spec: {e}", p.display()),
            "the record is damaged: run the bench again",
        )
    })
}

/// Write a record's spec (atomically).
pub fn write(record: &Path, s: &Spec) -> Result<()> {
    let b = serde_json::to_vec_pretty(s).map_err(|e| Error::Internal(e.to_string()))?;
    crate::fsutil::write_atomic(&record.join(SPEC_FILE), &b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_a_list_into_disjoint_slices_that_cover_it() {
        for bad in ["0/2", "3/2", "1", "a/b", "1/1001", "-1/2"] {
            assert_eq!(Shard::parse(bad).unwrap_err().kind(), "usage", "{bad}");
        }
        let shards: Vec<Shard> = (1..=3)
            .map(|i| Shard::parse(&format!("{i}/3")).unwrap())
            .collect();
        for n in 0..20 {
            assert_eq!(shards.iter().filter(|s| s.holds(n)).count(), 1, "{n}");
        }
    }

    #[test]
    fn a_spec_reads_back() {
        let d = tempfile::tempdir().unwrap();
        let s = Spec {
            format: 1,
            id: "x".into(),
            set: "/s".into(),
            settings: vec!["codex".into(), "pi:glm-5.2".into()],
            repeat: 3,
            shard: Some(Shard { index: 1, of: 2 }),
            created_at_ms: 5,
            options: Default::default(),
        };
        write(d.path(), &s).unwrap();
        assert_eq!(read(d.path()).unwrap(), s);
    }
}
