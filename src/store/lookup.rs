//! One lookup by id: which kind of background work an id names in the
//! project at `root`, and where its record is.
//!
//! A council, a fan-out or a bench run is found by its `state.json` (the folder can
//! exist a moment before it); a job by its folder alone (a launch cut short
//! is still a job: `job::store` reads it as lost). Anything else — an id
//! that is malformed or names nothing — is `None`, and the job commands
//! answer it as they always have (`invalid_job_id`, `job_not_found`).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::{Kind, record_dir};

/// A record found by its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub kind: Kind,
    pub id: String,
    /// The record's folder.
    pub dir: PathBuf,
}

pub fn find(root: &Path, raw: &OsStr) -> Option<Found> {
    let id = raw.to_str().filter(|s| crate::ids::is_valid(s))?;
    Kind::LOOKUP.into_iter().find_map(|kind| {
        let dir = record_dir(root, kind, id).ok()?;
        let here = match kind {
            Kind::Job => std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()),
            Kind::Council | Kind::Fanout | Kind::Bench => dir.join("state.json").is_file(),
        };
        here.then(|| Found {
            kind,
            id: id.to_string(),
            dir,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_found_by_its_id_in_its_folder() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        crate::state_dir::TEST_BASE.with(|b| *b.borrow_mut() = Some(root.join("state")));
        for kind in [Kind::Job, Kind::Council, Kind::Fanout, Kind::Bench] {
            let id = crate::ids::new_id();
            let dir = record_dir(&root, kind, &id).unwrap();
            assert!(dir.ends_with(format!("{}/{id}", kind.folder())));
            assert_eq!(find(&root, OsStr::new(&id)), None, "{kind:?}: nothing yet");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("state.json"), "{}").unwrap();
            assert_eq!(
                find(&root, OsStr::new(&id)),
                Some(Found { kind, id, dir }),
                "{kind:?}"
            );
        }
        assert_eq!(Kind::Bench.folder(), "benches");
        crate::state_dir::TEST_BASE.with(|b| *b.borrow_mut() = None);
    }
}
