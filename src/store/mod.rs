//! ONE STORE FOR BACKGROUND WORK: what a job, a council and a fan-out (and
//! the bench runs to come) share on disk, whichever feature wrote them.
//!
//! Theory of operation. Every piece of background work is a folder
//! `<kind>s/<id>/` in the project's state folder (`state_dir`), named by an
//! id from `ids` (one format, one generator, so an id names one record of
//! one kind), holding its `state.json` (the kind's own payload, written
//! atomically by `fsutil::write_atomic`) and `lock`:
//! - liveness is that lock alone (`lock`): the runner holds it exclusively
//!   for its whole life and the kernel drops it however the runner dies, so
//!   a record whose stage is not terminal and whose lock can be taken is
//!   `lost`. A recorded pid names the process to signal, never whether the
//!   work is alive (a pid can be reused);
//! - one lookup by id (`lookup::find`) says which kind of record an id
//!   names, for every command that takes an id (`baton status|wait|result|
//!   cancel|logs`, `serve`, `watch`);
//! - one header (`header::Header`: id, kind, where it stands, created and
//!   ended, its folder) that every kind's record reads as;
//! - one way to record the end (`ending`): the result before the terminal
//!   state, a reserve against a full disk;
//! - one clock (`now_ms`, from `ids`);
//! - one index of what may still be at work (`live`), kept by each kind's
//!   one write of its record, for the view across repositories.
//!
//! The kinds keep their payload types (`job::store`, `council::store`,
//! `fanout::store`); this module sits below them all and knows no feature.

pub mod ending;
pub mod header;
pub mod live;
pub mod lock;
pub mod lookup;

use std::path::{Path, PathBuf};

use crate::error::{Error, IdOf, Result};

pub use crate::ids::now_ms;
pub use header::{Header, Standing};
pub use lookup::{Found, find};

/// The kinds of background work, each with its folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// One peer run in the background (`run --async`, `continue`).
    Job,
    /// A council (`council … --async`, or one driven in the foreground).
    Council,
    /// A fan-out (`run --agents … [--async]`).
    Fanout,
    /// A bench run (the `bench` command to come): found and pruned like
    /// the others, nothing writes one yet.
    Bench,
}

impl Kind {
    /// The order an id is looked up in: the groups first (their records
    /// were made by the features above the job store), then the jobs.
    pub const LOOKUP: [Kind; 4] = [Kind::Council, Kind::Fanout, Kind::Bench, Kind::Job];

    /// The folder of this kind in the project's state folder.
    pub fn folder(self) -> &'static str {
        match self {
            Kind::Job => "jobs",
            Kind::Council => "councils",
            Kind::Fanout => "fanouts",
            Kind::Bench => "benches",
        }
    }

    /// Its name in results and `prune`'s report (`<name>_id`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Job => "job",
            Kind::Council => "council",
            Kind::Fanout => "fanout",
            Kind::Bench => "bench",
        }
    }
}

/// The folder of the record `id` of `kind` in the project at `root`,
/// created nowhere (reading a record must not make folders). The id is
/// checked so no path can escape.
pub fn record_dir(root: &Path, kind: Kind, id: &str) -> Result<PathBuf> {
    if !crate::ids::is_valid(id) {
        let what = match kind {
            Kind::Job => IdOf::Job,
            Kind::Council => IdOf::Council,
            Kind::Fanout => IdOf::Fanout,
            Kind::Bench => IdOf::Bench,
        };
        return Err(Error::InvalidId {
            what,
            id: id.into(),
        });
    }
    Ok(crate::state_dir::project(root)?
        .join(kind.folder())
        .join(id))
}

/// Whether the runner of the record in `dir` is alive now: it holds the
/// record's lock (the one liveness rule; see the module comment).
pub fn runner_alive(dir: &Path) -> bool {
    // No folder (a record whose place could not be named): no runner, and
    // never a `lock` looked up relative to the current directory.
    !dir.as_os_str().is_empty() && lock::held(dir)
}
