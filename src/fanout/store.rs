//! A fan-out's record on disk: `fanouts/<id>/` in the project's state
//! folder: `state.json` (this `Record`, rewritten atomically at every
//! stage), `runs/` (each candidate's and judge's run, `group::runs`, for
//! `watch` and `serve`), the candidates' logs, and `result.json`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, IdOf, Result};
use crate::group::{now_ms, read_json, write_json};
use crate::run::Plan;
use crate::{fsutil, ids, state_dir};

use super::preflight::Preflight;
use super::request::Settings;

/// Where a fan-out stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// The candidates write, are tested, and repair.
    Writing,
    /// The judges rank the eligible candidates.
    Judging,
    /// Ended with a winner (or, read-only, with the answers).
    Done,
    /// Ended without an eligible candidate, or baton failed.
    Failed,
    /// Stopped by a signal or `baton cancel`.
    Cancelled,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Writing => "writing",
            Stage::Judging => "judging",
            Stage::Done => "done",
            Stage::Failed => "failed",
            Stage::Cancelled => "cancelled",
        }
    }

    pub fn is_terminal(self) -> bool {
        matches!(self, Stage::Done | Stage::Failed | Stage::Cancelled)
    }
}

/// One candidate as the record names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub id: String,
    pub agent: String,
    pub model: Option<String>,
    pub vendor: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    pub fanout_id: String,
    pub stage: Stage,
    pub created_ms: u64,
    pub updated_ms: u64,
    pub root: PathBuf,
    pub cwd: PathBuf,
    pub task: String,
    pub candidates: Vec<Entry>,
    /// Each candidate's run as `run::plan` made it (what a background
    /// runner starts).
    pub plans: Vec<Plan>,
    pub settings: Settings,
    /// The process driving the fan-out while it runs.
    pub pid: Option<u32>,
    /// Started with `--async`: `baton jobs` lists it.
    #[serde(default)]
    pub background: bool,
    /// Why it stopped, when it did not end with a winner.
    #[serde(default)]
    pub reason: Option<String>,
    /// Warnings found before the candidates started.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// `--notify` / `--no-notify` (records of 0.3.2: as `[notify]` says).
    #[serde(default)]
    pub notify: crate::notify::Choice,
    /// The terminal of the command that started the fan-out.
    #[serde(default)]
    pub origin: crate::notify::Origin,
}

/// The fan-outs folder of the project at `root` (created).
pub fn base(root: &Path) -> Result<PathBuf> {
    state_dir::ensure_sub(root, "fanouts")
}

/// A fan-out's folder; the id is checked so no path can escape.
pub fn dir(root: &Path, id: &str) -> Result<PathBuf> {
    if !ids::is_valid(id) {
        return Err(Error::InvalidId {
            what: IdOf::Fanout,
            id: id.into(),
        });
    }
    Ok(base(root)?.join(id))
}

impl Record {
    /// The record of a fan-out about to start (`background`: `--async`).
    pub fn new(p: &Preflight, background: bool) -> Record {
        let first = &p.candidates[0].plan;
        Record {
            fanout_id: p.fanout_id.clone(),
            stage: Stage::Writing,
            created_ms: now_ms(),
            updated_ms: now_ms(),
            root: first.root.clone(),
            cwd: first.cwd.clone(),
            task: p.task.clone(),
            candidates: p
                .candidates
                .iter()
                .map(|c| Entry {
                    id: c.id.clone(),
                    agent: c.plan.agent.name().to_string(),
                    model: c.plan.model.clone(),
                    vendor: c.vendor.clone(),
                })
                .collect(),
            plans: p.candidates.iter().map(|c| c.plan.clone()).collect(),
            settings: p.settings.clone(),
            pid: None,
            background,
            reason: None,
            warnings: p.warnings.clone(),
            notify: Default::default(),
            // Here, in the command the user ran (an `--async` runner has
            // no terminal of its own).
            origin: crate::notify::Origin::here(),
        }
    }

    /// baton could not go on: the record says so (best effort: the error
    /// itself is what the caller reports).
    pub fn fail(&mut self, e: &Error) {
        if !self.stage.is_terminal() {
            self.stage = Stage::Failed;
        }
        self.reason = Some(e.to_string());
        self.pid = None;
        let _ = self.save();
    }

    pub fn dir(&self) -> Result<PathBuf> {
        dir(&self.root, &self.fanout_id)
    }

    /// Whether the fan-out's runner lives: it holds the record's lock (a
    /// recorded pid may since name another process: `store::lock`).
    pub fn runner_alive(&self) -> bool {
        crate::store::record_dir(&self.root, crate::store::Kind::Fanout, &self.fanout_id)
            .is_ok_and(|d| crate::store::runner_alive(&d))
    }

    /// The fan-out as a record of background work: stopped at a terminal
    /// stage.
    pub fn header(&self) -> crate::store::Header {
        crate::store::Header::read(
            crate::store::Kind::Fanout,
            &self.fanout_id,
            crate::store::record_dir(&self.root, crate::store::Kind::Fanout, &self.fanout_id)
                .unwrap_or_default(),
            self.created_ms,
            self.stage.is_terminal(),
            self.updated_ms,
        )
    }

    pub fn save(&mut self) -> Result<()> {
        self.updated_ms = now_ms();
        let d = self.dir()?;
        fsutil::ensure_private_dir(&d)?;
        let open = !self.stage.is_terminal();
        let kind = crate::store::Kind::Fanout;
        if open {
            crate::store::live::set(&d, kind, &self.fanout_id, true);
        }
        write_json(&d.join("state.json"), self)?;
        if !open {
            crate::store::live::set(&d, kind, &self.fanout_id, false);
        }
        Ok(())
    }

    pub fn load(root: &Path, id: &str) -> Result<Record> {
        let d = dir(root, id)?;
        read_json(&d.join("state.json"))?.ok_or_else(|| Error::NotFound {
            what: IdOf::Fanout,
            id: id.into(),
            store: d.parent().map(Path::to_path_buf).unwrap_or_default(),
        })
    }

    /// The result, once the fan-out ended (`None` before).
    pub fn result(&self) -> Result<Option<serde_json::Value>> {
        read_json(&self.dir()?.join("result.json"))
    }
}

/// Every fan-out of the project at `root`, oldest first (a project with
/// none has no folder, and none is made).
pub fn list(root: &Path) -> Result<Vec<Record>> {
    let d = state_dir::project(root)?.join("fanouts");
    let Ok(rd) = std::fs::read_dir(&d) else {
        return Ok(Vec::new());
    };
    let mut out: Vec<Record> = rd
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| ids::is_valid(n))
        .filter_map(|n| {
            read_json::<Record>(&d.join(n).join("state.json"))
                .ok()
                .flatten()
        })
        .collect();
    out.sort_by_key(|r| (r.created_ms, r.fanout_id.clone()));
    Ok(out)
}
