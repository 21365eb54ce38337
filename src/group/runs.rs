//! A record of each run of a group (`<group>/runs/*.json`: a council's
//! member runs, a fan-out's candidate and reviewer runs): who ran which
//! stage, where its log is, and how it ended, for the views.
//!
//! The group's own artifacts (calls, rounds) say what was answered; these
//! records say what is running now, so `watch` and `serve` can show a group
//! as its runs. Written when a run starts and again when it ends,
//! atomically; a record that cannot be written is only a warning: the view
//! is not worth failing a council or a fan-out for.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::files::{now_ms, read_json, write_json};
use crate::fsutil;
use crate::result::Usage;

/// Who runs: an agent and the model it was asked for.
#[derive(Debug, Clone, Copy)]
pub struct Who<'a> {
    pub agent: &'a str,
    pub model: Option<&'a str>,
}

/// One run as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The stage: a council's (`proposing`, `critiquing`, `revising`,
    /// `synthesizing`, `reviewing`, `implementing`, `repairing`) or a
    /// fan-out's (`writing`, `repairing`, `judging`).
    pub stage: String,
    /// `m0`, `m1`, … (members), `chair`, `fallback_chair`, `writer`; a
    /// fan-out's candidate (`c1`, …) or judge (`judge-c1`, `judge`).
    pub who: String,
    /// `member`, `chair`, `writer` or `reviewer`.
    pub role: String,
    pub agent: String,
    pub model: Option<String>,
    /// The absolute path of the stdout log the peer writes (`None`: no run
    /// directory could be made, so nothing of the run is on disk).
    pub log: Option<PathBuf>,
    /// The review or repair round, for the stages that have rounds.
    #[serde(default)]
    pub round: Option<u32>,
    pub started_ms: u64,
    pub ended_ms: Option<u64>,
    /// `ok`, `abstained`, `timeout`, `error` (calls) or the writer's run
    /// status (`success`, `failed`, `timeout`, `cancelled`, …).
    pub outcome: Option<String>,
    pub usage: Option<Usage>,
}

impl RunRecord {
    /// The record's name: `<stage>-<who>[-<round>]` (its file, less `.json`).
    pub fn name(&self) -> String {
        match self.round {
            Some(r) => format!("{}-{}-{r}", self.stage, self.who),
            None => format!("{}-{}", self.stage, self.who),
        }
    }
}

/// The role a stage gives its runs.
pub fn role(stage: &str, who: &str) -> &'static str {
    match stage {
        "implementing" | "repairing" | "writing" => "writer",
        "reviewing" | "judging" => "reviewer",
        "synthesizing" if who.contains("chair") => "chair",
        _ => "member",
    }
}

/// `reviewing2` → (`reviewing`, Some(2)): the call cache keys a round into
/// its stage name; the run record keeps them apart.
pub fn split_round(stage: &str) -> (&str, Option<u32>) {
    let head = stage.trim_end_matches(|c: char| c.is_ascii_digit());
    match stage[head.len()..].parse() {
        Ok(r) if !head.is_empty() => (head, Some(r)),
        _ => (stage, None),
    }
}

/// A run under way: its record, rewritten by `end`.
#[derive(Debug)]
pub struct Started {
    path: PathBuf,
    pub record: RunRecord,
}

/// Record that a run starts (`stage` may carry its round, as `reviewing0`).
/// `None`, with a warning on stderr, when the record cannot be written.
pub fn start(
    group_dir: &Path,
    stage: &str,
    who: &str,
    m: Who<'_>,
    log: Option<&Path>,
) -> Option<Started> {
    let (stage, round) = split_round(stage);
    let record = RunRecord {
        stage: stage.to_string(),
        who: who.to_string(),
        role: role(stage, who).to_string(),
        agent: m.agent.to_string(),
        model: m.model.map(str::to_string),
        log: log.map(Path::to_path_buf),
        round,
        started_ms: now_ms(),
        ended_ms: None,
        outcome: None,
        usage: None,
    };
    let dir = group_dir.join("runs");
    let s = Started {
        path: dir.join(format!("{}.json", record.name())),
        record,
    };
    let r = fsutil::ensure_private_dir(&dir).and_then(|()| write_json(&s.path, &s.record));
    match r {
        Ok(()) => Some(s),
        Err(e) => {
            warn(&s.path, &e);
            None
        }
    }
}

impl Started {
    /// Remove the record: the run is over and nothing should list it (a
    /// bench run shows only its trials in flight; their results are its
    /// trial files).
    pub fn forget(self) {
        let _ = std::fs::remove_file(&self.path);
    }

    /// Record how the run ended (the model the CLI reported, if any).
    pub fn end(mut self, outcome: &str, usage: &Usage, model: Option<&str>) {
        self.record.ended_ms = Some(now_ms());
        self.record.outcome = Some(outcome.to_string());
        self.record.usage = Some(usage.clone());
        if let Some(m) = model {
            self.record.model = Some(m.to_string());
        }
        if let Err(e) = write_json(&self.path, &self.record) {
            warn(&self.path, &e);
        }
    }
}

fn warn(path: &Path, e: &crate::error::Error) {
    use std::io::Write;
    // Not `eprintln!`, which panics when stderr cannot be written: a
    // background runner's stderr is its `runner.log`, on the disk that is
    // full right now, and the panic took the candidate's thread with it.
    let _ = writeln!(
        std::io::stderr(),
        "baton: warning: the run record {} could not be written ({e}); \
         `watch` and `serve` will not show this run",
        path.display()
    );
}

/// A group's run records, in the order they started.
pub fn list(group_dir: &Path) -> Vec<RunRecord> {
    let Ok(rd) = std::fs::read_dir(group_dir.join("runs")) else {
        return Vec::new();
    };
    let mut out: Vec<RunRecord> = rd
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.ends_with(".json")))
        .filter_map(|e| read_json::<RunRecord>(&e.path()).ok().flatten())
        .collect();
    out.sort_by_key(|a| (a.started_ms, a.name()));
    out
}

/// The run folders a group's run records name (its members', candidates'
/// or judges' `runs/<id>/`), kept to folders of the project's `runs_dir`:
/// a record is data, not a path to trust. `baton prune` removes them with
/// the group, and never while a group that stays names them.
pub fn run_dirs(group_dir: &Path, runs_dir: &Path) -> Vec<PathBuf> {
    list(group_dir)
        .into_iter()
        .filter_map(|r| r.log?.parent().map(Path::to_path_buf))
        .filter(|d| {
            d.parent() == Some(runs_dir)
                && d.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(crate::ids::is_valid)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn member() -> Who<'static> {
        Who {
            agent: "codex",
            model: None,
        }
    }

    #[test]
    fn a_run_is_recorded_at_its_start_and_rewritten_at_its_end() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("r/stdout.log");
        let s = start(d.path(), "reviewing1", "m2", member(), Some(&log)).unwrap();
        let path = d.path().join("runs/reviewing-m2-1.json");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let r = &list(d.path())[0];
        assert_eq!(
            (r.stage.as_str(), r.role.as_str(), r.round),
            ("reviewing", "reviewer", Some(1))
        );
        assert_eq!(r.log.as_deref(), Some(log.as_path()));
        assert_eq!((r.ended_ms, &r.outcome, &r.usage), (None, &None, &None));
        let u = Usage {
            input_tokens: Some(7),
            ..Usage::default()
        };
        s.end("ok", &u, Some("gpt-x"));
        let r = &list(d.path())[0];
        assert!(r.ended_ms.is_some());
        assert_eq!(r.outcome.as_deref(), Some("ok"));
        assert_eq!(r.usage.as_ref().unwrap().input_tokens, Some(7));
        assert_eq!(r.model.as_deref(), Some("gpt-x"));
    }

    #[test]
    fn an_unwritable_record_is_a_warning_not_a_failure() {
        let d = tempfile::tempdir().unwrap();
        // `runs` is a file: no record can go under it.
        std::fs::write(d.path().join("runs"), "").unwrap();
        assert!(start(d.path(), "proposing", "m0", member(), None).is_none());
        assert!(list(d.path()).is_empty());
    }

    #[test]
    fn roles_and_rounds_by_stage() {
        assert_eq!(role("synthesizing", "fallback_chair"), "chair");
        assert_eq!(role("implementing", "writer"), "writer");
        assert_eq!(role("critiquing", "m1"), "member");
        assert_eq!(split_round("reviewing12"), ("reviewing", Some(12)));
        assert_eq!(split_round("proposing"), ("proposing", None));
    }
}
