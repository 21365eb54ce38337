//! `baton status ID` and `baton result ID` for a bench run's id: where it
//! stands (its `state.json`, its lock, the trials recorded against the
//! trials planned) and, as its result, its report. A bench run is driven in
//! the foreground (`bench run`), so `wait` and `cancel` have nothing to
//! wait for or stop: they say so.

use std::path::Path;

use serde::Serialize;

use super::spec::{self, TRIALS_DIR};
use super::state::{STATE_FILE, Stage, State};
use super::{task, trial};
use crate::error::{Error, Result};

/// What `baton status <bench-id>` prints.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub bench_id: String,
    /// `running` (its runner holds the lock), `done`, `interrupted`,
    /// `failed`, or `lost` (it said `running` and its lock is free: the
    /// runner died; `bench run --resume` goes on).
    pub status: String,
    pub record: String,
    pub settings: Vec<String>,
    pub repeat: u32,
    /// Trials recorded so far, and solved among them.
    pub trials: usize,
    pub solved: usize,
    /// Trials of this run's share (tasks × settings × repeat, its shard's
    /// slice); `null` when the set folder is gone.
    pub planned: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The next step.
    pub hint: String,
}

pub fn status(record: &Path, id: &str) -> Result<Status> {
    let s = spec::read(record)?;
    let text = std::fs::read_to_string(record.join(STATE_FILE))
        .map_err(|e| Error::io(format!("reading {}", record.join(STATE_FILE).display()), e))?;
    let st: State = serde_json::from_str(&text).map_err(|e| {
        Error::usage_hint(
            format!("{}: not a bench run's state: {e}", record.display()),
            "the record is damaged: run the bench again",
        )
    })?;
    let alive = crate::store::runner_alive(record);
    let status = match st.stage {
        Stage::Running if !alive => "lost",
        Stage::Running => "running",
        Stage::Done => "done",
        Stage::Interrupted => "interrupted",
        Stage::Failed => "failed",
    };
    let trials = trial::read_dir(&record.join(TRIALS_DIR))?;
    let planned = task::read_set(&s.set).ok().map(|tasks| {
        let all = tasks.len() * s.settings.len() * s.repeat as usize;
        match s.shard {
            Some(sh) => (0..all).filter(|n| sh.holds(*n)).count(),
            None => all,
        }
    });
    let hint = match status {
        "running" => format!("`baton bench report {id}` shows what is recorded so far"),
        "lost" | "interrupted" => format!("`baton bench run --resume {id}` runs the trials left"),
        _ => format!("`baton bench report {id}` (or `baton result {id}`) reads the report"),
    };
    Ok(Status {
        bench_id: id.to_string(),
        status: status.to_string(),
        record: record.display().to_string(),
        settings: s.settings,
        repeat: s.repeat,
        solved: trials.iter().filter(|t| t.solved).count(),
        trials: trials.len(),
        planned,
        reason: st.reason,
        hint,
    })
}

impl crate::output::render::Render for Status {
    fn text(&self) -> String {
        let planned = self
            .planned
            .map_or_else(|| "?".to_string(), |p| p.to_string());
        format!(
            "bench {}: {} — {} of {} trials recorded, {} solved ({})\n{}\n",
            self.bench_id,
            self.status,
            self.trials,
            planned,
            self.solved,
            self.settings.join(", "),
            self.hint
        )
    }

    fn exit_code(&self) -> i32 {
        match self.status.as_str() {
            "failed" | "lost" => crate::error::exit::FAILED,
            _ => crate::error::exit::SUCCESS,
        }
    }
}

/// `wait`/`cancel` of a bench id: nothing runs in the background.
pub fn foreground_only(verb: &str, id: &str) -> Error {
    Error::usage_hint(
        format!("{id} is a bench run: `baton {verb}` has nothing to do for it"),
        format!(
            "a bench run is driven by its `baton bench run` in the foreground (Ctrl-C stops it, \
             `bench run --resume {id}` goes on); `baton status {id}` says where it stands"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::spec::{Shard, Spec};

    fn record(stage: Stage, shard: Option<Shard>) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let set = d.path().join("set");
        std::fs::create_dir_all(&set).unwrap();
        for id in ["a", "b", "c"] {
            let mut t = crate::bench::task::tests::sample();
            t.id = id.into();
            task::write(&set, &t).unwrap();
        }
        spec::write(
            d.path(),
            &Spec {
                format: 1,
                id: "x".into(),
                set,
                settings: vec!["codex".into(), "pi".into()],
                repeat: 2,
                shard,
                created_at_ms: 1,
                options: Default::default(),
            },
        )
        .unwrap();
        super::super::state::write(d.path(), "x", stage, None).unwrap();
        d
    }

    #[test]
    fn a_running_record_without_its_runner_is_lost_and_says_resume() {
        let d = record(Stage::Running, None);
        let s = status(d.path(), "x").unwrap();
        assert_eq!(s.status, "lost");
        assert_eq!(s.planned, Some(12));
        assert_eq!((s.trials, s.solved), (0, 0));
        assert!(s.hint.contains("--resume x"), "{}", s.hint);
        assert_eq!(crate::output::render::Render::exit_code(&s), 1);
    }

    #[test]
    fn a_done_shard_counts_its_slice_of_the_trials() {
        let d = record(Stage::Done, Some(Shard { index: 2, of: 5 }));
        let s = status(d.path(), "x").unwrap();
        assert_eq!(s.status, "done");
        // 12 trials, places 1, 6, 11.
        assert_eq!(s.planned, Some(3));
        assert_eq!(crate::output::render::Render::exit_code(&s), 0);
        std::fs::remove_dir_all(d.path().join("set")).unwrap();
        assert_eq!(status(d.path(), "x").unwrap().planned, None);
    }
}
