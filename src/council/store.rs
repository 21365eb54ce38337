//! A council's record on disk: `councils/<id>/` in the state directory, the
//! state file (`state.json`) and content-addressed artifacts, all atomic.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize, de::DeserializeOwned};
use sha2::{Digest, Sha256};

use super::machine::{Event, Stage};
use crate::error::{Error, IdOf, Result};
use crate::group::runs::Who;
pub use crate::group::{now_ms, read_json, write_json};
use crate::store::ending;
use crate::{fsutil, ids, state_dir};

/// One member as resolved at preflight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Member {
    pub agent: String,
    pub model: Option<String>,
    pub vendor: String,
}

impl Member {
    /// The member as its run records name it.
    pub fn who(&self) -> Who<'_> {
        Who {
            agent: &self.agent,
            model: self.model.as_deref(),
        }
    }
}

/// What the council was asked, fixed at preflight (resume uses these, not
/// today's flags or config).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Settings {
    pub depth: String,
    pub quorum: usize,
    pub repair_rounds: u32,
    pub test_cmd: Option<String>,
    pub allow: Vec<String>,
    pub budget_tokens: Option<u64>,
    /// `--max-usd`: dollars the council's calls may spend (projected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_usd: Option<f64>,
    pub max_wall_ms: Option<u64>,
    pub timeout: String,
    pub idle_timeout: String,
    pub effort: Option<String>,
    pub scope: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Approval {
    /// `explicit` (`approve`) or `auto` (`plan --yes`).
    pub mode: String,
    pub plan_sha256: String,
    pub base_commit: Option<String>,
    pub authorized_files: Vec<String>,
    pub at_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub council_id: String,
    /// `discuss` or `plan`.
    pub kind: String,
    pub stage: Stage,
    pub created_ms: u64,
    pub root: PathBuf,
    pub cwd: PathBuf,
    pub task: String,
    pub settings: Settings,
    pub members: Vec<Member>,
    /// `None`: `--chair none`, baton's mechanical merge.
    pub chair: Option<Member>,
    pub writer: Option<Member>,
    pub seed: u64,
    pub packet_sha256: String,
    pub base_commit: Option<String>,
    pub warnings: Vec<String>,
    pub approval: Option<Approval>,
    pub plan_sha256: Option<String>,
    /// Why the council stopped where it did (needs_human, failed, cancelled).
    pub reason: Option<String>,
    /// The process driving it now (cancel signals it), if any.
    pub pid: Option<u32>,
    /// Whether `plan` was asked to go on through execution once approved.
    #[serde(default)]
    pub execute: bool,
    /// When the record was last written (the result's `duration_ms` runs
    /// from `created_ms` to here).
    #[serde(default)]
    pub updated_ms: u64,
    /// Started with `--async`: a background job that `baton jobs` lists and
    /// `baton wait/status/result/cancel/logs` accept (`as_job`).
    #[serde(default)]
    pub background: bool,
    /// The stage a cancel stopped (`resume` reopens the council there).
    #[serde(default)]
    pub cancelled_in: Option<Stage>,
    /// Why the last stop was a spending limit (`budget_exceeded`), so the
    /// result names it; cleared by every other stop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_kind: Option<String>,
    /// `--notify` / `--no-notify` (records of 0.3.2: as `[notify]` says).
    #[serde(default)]
    pub notify: crate::notify::Choice,
    /// The terminal of the command that started the council.
    #[serde(default)]
    pub origin: crate::notify::Origin,
}

pub fn sha256_hex(data: &[u8]) -> String {
    let d = Sha256::digest(data);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The councils folder of the project at `root`.
pub fn base(root: &Path) -> Result<PathBuf> {
    state_dir::ensure_sub(root, "councils")
}

pub fn new_id() -> String {
    ids::new_id()
}

/// A council's folder; the id is checked so no path can escape.
pub fn dir(root: &Path, id: &str) -> Result<PathBuf> {
    if !ids::is_valid(id) {
        return Err(Error::InvalidId {
            what: IdOf::Council,
            id: id.into(),
        });
    }
    Ok(base(root)?.join(id))
}

/// A command that the council's stage does not allow now.
pub fn not_now(rec: &Record, what: &str, hint: &str) -> Error {
    Error::usage_hint(
        format!(
            "council `{}` is at stage `{}`: it cannot {what} now",
            rec.council_id,
            rec.stage.as_str()
        ),
        hint,
    )
}

impl Record {
    pub fn dir(&self) -> Result<PathBuf> {
        dir(&self.root, &self.council_id)
    }

    /// Whether the council's runner lives: it holds the record's lock (a
    /// recorded pid may since name another process: `store::lock`).
    pub fn runner_alive(&self) -> bool {
        crate::store::record_dir(&self.root, crate::store::Kind::Council, &self.council_id)
            .is_ok_and(|d| crate::store::runner_alive(&d))
    }

    /// The council as a record of background work: stopped at a terminal
    /// stage or one that waits for a person.
    pub fn header(&self) -> crate::store::Header {
        crate::store::Header::read(
            crate::store::Kind::Council,
            &self.council_id,
            crate::store::record_dir(&self.root, crate::store::Kind::Council, &self.council_id)
                .unwrap_or_default(),
            self.created_ms,
            self.stage.is_terminal() || self.stage.is_waiting(),
            self.updated_ms,
        )
    }

    /// Write the record. A council's result is its envelope, built from
    /// this record and the artifacts each stage wrote before it advanced,
    /// so a reader that sees a stage can always build the result of it.
    /// When the council stops here (a terminal stage, or one that waits for
    /// a person), the runner's reserve (`store::ending`) is freed first, so
    /// this write has room on a full disk and the council never reads as
    /// running, or lost, because its end could not be recorded.
    pub fn save(&mut self) -> Result<()> {
        self.updated_ms = now_ms();
        let d = self.dir()?;
        fsutil::ensure_private_dir(&d)?;
        if self.stage.is_terminal() || self.stage.is_waiting() {
            ending::free_reserve(&d);
        }
        // One waiting for approval stays in the live index: it needs a person.
        let open = !self.stage.is_terminal();
        let kind = crate::store::Kind::Council;
        if open {
            crate::store::live::set(&d, kind, &self.council_id, true);
        }
        write_json(&d.join("state.json"), self)?;
        if !open {
            crate::store::live::set(&d, kind, &self.council_id, false);
        }
        Ok(())
    }

    pub fn load(root: &Path, id: &str) -> Result<Record> {
        let d = dir(root, id)?;
        read_json(&d.join("state.json"))?.ok_or_else(|| Error::NotFound {
            what: IdOf::Council,
            id: id.into(),
            store: d.parent().map(Path::to_path_buf).unwrap_or_default(),
        })
    }

    /// Move by the state machine, persisting the new stage.
    pub fn advance(&mut self, event: Event) -> Result<Stage> {
        let to = super::machine::next(self.stage, event).ok_or_else(|| {
            Error::Internal(format!(
                "council {}: {event:?} cannot happen in stage {}",
                self.council_id,
                self.stage.as_str()
            ))
        })?;
        if to == Stage::Cancelled {
            self.cancelled_in = Some(self.stage);
        }
        self.stage = to;
        self.save()?;
        Ok(to)
    }

    /// Stop with a reason (needs_human, failed, cancelled).
    pub fn stop(&mut self, event: Event, reason: impl Into<String>) -> Result<Stage> {
        self.reason = Some(reason.into());
        self.stop_kind = None;
        self.advance(event)
    }

    pub fn warn(&mut self, w: impl Into<String>) {
        let w = w.into();
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }

    /// A stage artifact (`proposals.json`, …), if written.
    pub fn artifact<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>> {
        read_json(&self.dir()?.join(name))
    }

    pub fn put_artifact<T: Serialize>(&self, name: &str, v: &T) -> Result<()> {
        write_json(&self.dir()?.join(name), v)
    }

    /// Where a call's result lives: keyed by stage, member, round and the
    /// sha256 of the exact prompt, so a resumed council reuses it only if
    /// it would send the very same bytes.
    pub fn call_path(&self, stage: &str, who: &str, prompt: &str) -> Result<PathBuf> {
        let d = self.dir()?.join("calls");
        fsutil::ensure_private_dir(&d)?;
        Ok(d.join(format!(
            "{stage}-{who}-{}.json",
            sha256_hex(prompt.as_bytes())
        )))
    }
}

/// Every council of the project, newest first.
pub fn list(root: &Path) -> Result<Vec<Record>> {
    let mut out = Vec::new();
    let b = base(root)?;
    for e in std::fs::read_dir(&b).map_err(|e| Error::io(format!("reading {}", b.display()), e))? {
        let Ok(e) = e else { continue };
        let name = e.file_name().to_string_lossy().into_owned();
        if !ids::is_valid(&name) {
            continue;
        }
        if let Ok(Some(r)) = read_json::<Record>(&e.path().join("state.json")) {
            out.push(r);
        }
    }
    out.sort_by(|a, b| b.council_id.cmp(&a.council_id));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(root: &Path) -> Record {
        Record {
            council_id: ids::new_id(),
            kind: "discuss".into(),
            stage: Stage::Proposing,
            created_ms: now_ms(),
            root: root.to_path_buf(),
            cwd: root.to_path_buf(),
            task: "the task".into(),
            settings: Settings::default(),
            members: Vec::new(),
            chair: None,
            writer: None,
            seed: 1,
            packet_sha256: String::new(),
            base_commit: None,
            warnings: Vec::new(),
            approval: None,
            plan_sha256: None,
            reason: None,
            pid: None,
            execute: false,
            updated_ms: 0,
            background: true,
            cancelled_in: None,
            stop_kind: None,
            notify: Default::default(),
            origin: Default::default(),
        }
    }

    #[test]
    fn a_stage_that_stops_the_council_frees_the_reserve_before_it_is_written() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        state_dir::TEST_BASE.with(|b| *b.borrow_mut() = Some(root.join("state")));
        let mut rec = record(&root);
        rec.save().unwrap();
        let dir = rec.dir().unwrap();
        // Its runner's reserve stays while the council runs...
        let runner = ending::Runner::hold(&dir).unwrap().unwrap();
        rec.save().unwrap();
        assert!(ending::reserve_path(&dir).exists());
        // ...and is freed for the write that stops it (the runner holds on).
        rec.stop(Event::Fail, "it broke").unwrap();
        assert!(!ending::reserve_path(&dir).exists());
        assert_eq!(
            Record::load(&root, &rec.council_id).unwrap().stage,
            Stage::Failed
        );
        drop(runner);
        state_dir::TEST_BASE.with(|b| *b.borrow_mut() = None);
    }
}
