//! The usage ledger: one JSON line per peer call, appended to
//! `<state dir>/repos/<project>/usage.jsonl` when the call ends. `baton
//! usage` reads these files (and nothing else) across every project.
//!
//! Why a ledger and not the result files: results are spread over one
//! folder per run, job and council (10,000 runs are 10,000 files to open),
//! `baton prune` deletes them while the money stays spent, and council
//! member calls and repair rounds have no result of their own. Every call
//! passes `run::execute`, which appends here, so nothing is left out.
//!
//! One `write(2)` of a line opened with `O_APPEND` lands whole even when
//! several jobs of a project end at once; a line that does not parse (a
//! disk that filled up mid-line) is skipped by readers.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::result::{Usage, usable_cost};
use crate::state_dir;

pub const FILE: &str = "usage.jsonl";

/// One peer call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// When it ended (ms since the epoch).
    pub at: u64,
    /// The run it belongs to: its attempts, retries and repair rounds share it.
    pub run: String,
    pub agent: String,
    #[serde(default)]
    pub model: Option<String>,
    /// `success`, `failed`, `timeout`, `cancelled`.
    pub status: String,
    /// `error.kind` when it did not succeed.
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub input: u64,
    #[serde(default)]
    pub output: u64,
    #[serde(default)]
    pub cached: u64,
    /// Dollars, reported or estimated; null when no price was known.
    #[serde(default)]
    pub cost: Option<f64>,
    /// `cost` was estimated from the price table.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub est: bool,
    /// This call ran as a fallback for another agent of the run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fb: bool,
    /// How long it took.
    #[serde(default)]
    pub ms: u64,
}

impl Entry {
    pub fn usage(&self) -> Usage {
        Usage {
            input_tokens: Some(self.input),
            output_tokens: Some(self.output),
            cached_input_tokens: Some(self.cached),
            reasoning_output_tokens: None,
            cost_usd: self.cost,
            cost_estimated: self.est,
        }
    }

    /// The entry of a call that ended with `usage` (what is unknown counts 0).
    pub fn of_usage(mut self, u: &Usage) -> Entry {
        self.input = u.input_tokens.unwrap_or(0);
        self.output = u.output_tokens.unwrap_or(0);
        self.cached = u.cached_input_tokens.unwrap_or(0);
        // A cost that cannot be a price is not recorded as one.
        self.cost = u.cost_usd.and_then(usable_cost);
        self.est = u.cost_estimated && self.cost.is_some();
        self
    }
}

/// Append `e` to the ledger of the project at `root`.
pub fn append(root: &Path, e: &Entry) -> Result<()> {
    let dir = state_dir::ensure_project(root)?;
    let path = dir.join(FILE);
    let mut line = serde_json::to_vec(e).map_err(|e| Error::Internal(e.to_string()))?;
    line.push(b'\n');
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
    f.write_all(&line)
        .map_err(|e| Error::io(format!("appending to {}", path.display()), e))
}

/// Every entry of one ledger file that parses, in order. A missing file
/// has none. A negative cost (written by hand, or by another program) is
/// read as no known cost: it would take dollars off every total.
pub fn read(path: &Path) -> Vec<Entry> {
    let Ok(text) = std::fs::read(path) else {
        return Vec::new();
    };
    text.split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .filter_map(|l| serde_json::from_slice::<Entry>(l).ok())
        .map(|mut e| {
            if e.cost.is_some_and(|c| usable_cost(c).is_none()) {
                e.cost = None;
                e.est = false;
            }
            e
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(run: &str, input: u64) -> Entry {
        Entry {
            at: 1,
            run: run.into(),
            agent: "codex".into(),
            model: None,
            status: "success".into(),
            kind: None,
            input: 0,
            output: 0,
            cached: 0,
            cost: None,
            est: false,
            fb: false,
            ms: 5,
        }
        .of_usage(&Usage {
            input_tokens: Some(input),
            ..Usage::default()
        })
    }

    #[test]
    fn appends_lines_and_skips_what_does_not_parse() {
        let d = tempfile::tempdir().unwrap();
        state_dir::TEST_BASE.with(|b| *b.borrow_mut() = Some(d.path().join("state")));
        let root = d.path().join("proj");
        std::fs::create_dir_all(&root).unwrap();
        append(&root, &entry("a", 10)).unwrap();
        let path = state_dir::project(&root).unwrap().join(FILE);
        // A line cut short by a full disk, then a good one.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"{\"at\":2,\"run\":\"b\",\"ag").unwrap();
        f.write_all(b"\n").unwrap();
        append(&root, &entry("c", 30)).unwrap();
        let got = read(&path);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], entry("a", 10));
        assert_eq!(got[1].run, "c");
        assert_eq!(got[1].usage().input_tokens, Some(30));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(read(&d.path().join("none")).is_empty());
        state_dir::TEST_BASE.with(|b| *b.borrow_mut() = None);
    }

    #[test]
    fn a_negative_or_absurd_cost_is_no_known_cost() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join(FILE);
        let line = |cost: &str| {
            format!(
                "{{\"at\":1,\"run\":\"r\",\"agent\":\"pi\",\"status\":\"success\",\
                 \"input\":5,\"cost\":{cost},\"est\":true}}\n"
            )
        };
        std::fs::write(&path, line("-3.5") + &line("0.25")).unwrap();
        let got = read(&path);
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].cost, got[0].est), (None, false));
        assert_eq!((got[1].cost, got[1].est), (Some(0.25), true));
        // Nor is one written.
        let e = entry("x", 1).of_usage(&Usage {
            input_tokens: Some(1),
            cost_usd: Some(-1.0),
            cost_estimated: true,
            ..Usage::default()
        });
        assert_eq!((e.cost, e.est), (None, false));
    }
}
