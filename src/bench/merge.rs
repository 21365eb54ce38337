//! `baton bench merge`: the records of shards (`--shard I/N` on several
//! machines, their `benches/<id>/` folders copied back) joined into one
//! record, as if one run had made every trial.
//!
//! Records join only when their specs agree on everything but the id, the
//! time and the shard (set, settings, repeat, options): trials of different
//! questions must not be summed. A trial found in two records must be the
//! same record in both; two that disagree are refused rather than one
//! picked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::spec::{self, SPEC_FILE, Spec, TRIALS_DIR};
use super::trial::{self, Trial};
use crate::error::{Error, IdOf, Result};
use crate::store::{self, Kind};

/// What `bench merge` prints.
#[derive(Debug, Clone, Serialize)]
pub struct Merged {
    pub bench_id: String,
    pub record: PathBuf,
    /// The records joined (their folders).
    pub from: Vec<PathBuf>,
    /// Trials in the merged record.
    pub trials: usize,
}

impl crate::output::render::Render for Merged {
    fn text(&self) -> String {
        format!(
            "bench {}: {} trials from {} records ({})\n",
            self.bench_id,
            self.trials,
            self.from.len(),
            self.record.display()
        )
    }

    fn exit_code(&self) -> i32 {
        0
    }
}

/// A record named by its folder, or by its id in this project's state.
fn locate(root: &Path, given: &str) -> Result<PathBuf> {
    let p = Path::new(given);
    if p.join(SPEC_FILE).is_file() {
        return Ok(p.to_path_buf());
    }
    let d = store::record_dir(root, Kind::Bench, given)?;
    if d.join(SPEC_FILE).is_file() {
        return Ok(d);
    }
    Err(Error::NotFound {
        what: IdOf::Bench,
        id: given.to_string(),
        store: d.parent().map(Path::to_path_buf).unwrap_or_default(),
    })
}

/// The part of a spec that must agree.
fn question(s: &Spec) -> Spec {
    Spec {
        id: String::new(),
        shard: None,
        created_at_ms: 0,
        ..s.clone()
    }
}

pub fn merge(root: &Path, records: &[String], into: Option<&str>) -> Result<Merged> {
    if records.is_empty() {
        return Err(Error::usage_hint(
            "no records to merge",
            "baton bench merge ID_OR_DIR ID_OR_DIR...",
        ));
    }
    let dirs: Vec<PathBuf> = records
        .iter()
        .map(|r| locate(root, r))
        .collect::<Result<_>>()?;
    let specs: Vec<Spec> = dirs.iter().map(|d| spec::read(d)).collect::<Result<_>>()?;
    let want = question(&specs[0]);
    for (d, s) in dirs.iter().zip(&specs).skip(1) {
        if question(s) != want {
            return Err(Error::usage_hint(
                format!(
                    "{} ran another bench than {} (set, settings, repeat or options differ)",
                    d.display(),
                    dirs[0].display()
                ),
                "merge only the shards of one bench run",
            ));
        }
    }
    let mut trials: BTreeMap<String, Trial> = BTreeMap::new();
    for d in &dirs {
        for t in trial::read_dir(&d.join(TRIALS_DIR))? {
            let name = trial::file_name(&t.task, &t.setting, t.repeat);
            match trials.get(&name) {
                Some(seen) if *seen != t => {
                    return Err(Error::usage_hint(
                        format!(
                            "trial {} differs between the records ({})",
                            name.trim_end_matches(".json"),
                            d.display()
                        ),
                        "the same trial was run twice: merge one of the two records",
                    ));
                }
                _ => {
                    trials.insert(name, t);
                }
            }
        }
    }
    let id = match into {
        Some(id) => id.to_string(),
        None => crate::ids::new_id(),
    };
    let out = store::record_dir(root, Kind::Bench, &id)?;
    if out.join(SPEC_FILE).is_file() {
        let s = spec::read(&out)?;
        if question(&s) != want || s.shard.is_some() {
            return Err(Error::usage_hint(
                format!("--into {id}: that record ran another bench, or is a shard"),
                "merge into a new record (leave out --into)",
            ));
        }
        for t in trial::read_dir(&out.join(TRIALS_DIR))? {
            let name = trial::file_name(&t.task, &t.setting, t.repeat);
            if trials.get(&name).is_some_and(|x| *x != t) {
                return Err(Error::usage_hint(
                    format!("trial {name} differs from the one --into {id} holds"),
                    "merge into a new record (leave out --into)",
                ));
            }
        }
    }
    crate::state_dir::ensure_sub(root, Kind::Bench.folder())?;
    crate::fsutil::ensure_private_dir(&out.join(TRIALS_DIR))?;
    let merged = Spec {
        id: id.clone(),
        shard: None,
        created_at_ms: store::now_ms(),
        ..specs[0].clone()
    };
    spec::write(&out, &merged)?;
    super::state::write(&out, &id, super::state::Stage::Done, None)?;
    for t in trials.values() {
        trial::write(&out.join(TRIALS_DIR), t)?;
    }
    Ok(Merged {
        bench_id: id,
        trials: trial::read_dir(&out.join(TRIALS_DIR))?.len(),
        record: out,
        from: dirs,
    })
}
