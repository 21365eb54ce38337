//! `baton bench report ID_OR_DIR [--html FILE]`: find the bench run's
//! record, read its spec and trials (and its task set, if the set's folder
//! is still there: only for the tasks' count and titles), make the report
//! (`report::build`), print it, and write the page when asked.
//!
//! A damaged trial file is an error that names it (`trial::read_dir`): a
//! report that quietly left trials out would say something false.

use std::path::{Path, PathBuf};

use super::{html, report, spec, task, trial};
use crate::error::{Error, IdOf, Result};
use crate::output::{self, Mode};
use crate::store::{Kind, record_dir};

/// What `baton bench report` was asked.
#[derive(Debug, Clone)]
pub struct ReportRequest {
    /// A bench run's id, or the folder of its record.
    pub target: String,
    /// Where to write the HTML page.
    pub html: Option<PathBuf>,
    /// The repository whose bench runs an id is looked up in.
    pub cwd: Option<PathBuf>,
}

pub fn command(req: ReportRequest, mode: Mode) -> Result<i32> {
    let cwd = crate::run::resolve_cwd(req.cwd.as_deref())?;
    let record = locate(&cwd, &req.target)?;
    let mut r = read(&record)?;
    if let Some(path) = &req.html {
        let page = html::page(&r);
        let path = cwd_join(path)?;
        crate::fsutil::write_atomic(&path, page.as_bytes())?;
        r.html = Some(path.display().to_string());
    }
    output::emit(&r, mode)
}

/// `path` against the process's current directory, as a shell would.
fn cwd_join(path: &Path) -> Result<PathBuf> {
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    let here =
        std::env::current_dir().map_err(|e| Error::io("reading the current directory", e))?;
    Ok(here.join(path))
}

/// The record folder `target` names: a path (from the current directory,
/// as `--html`'s, whatever `--cwd` says) when it has a `/` in it or is not
/// an id but a folder that exists, else a bench run's id in the store of
/// the repository at `cwd`.
pub fn locate(cwd: &Path, target: &str) -> Result<PathBuf> {
    let as_path = cwd_join(Path::new(target))?;
    if target.contains('/') || (!crate::ids::is_valid(target) && as_path.is_dir()) {
        if !as_path.join(spec::SPEC_FILE).is_file() {
            return Err(Error::usage_hint(
                format!(
                    "{} is not a bench run's record: it has no {}",
                    as_path.display(),
                    spec::SPEC_FILE
                ),
                "give a bench run's id, or the folder `benches/<id>` of baton's state that \
                 holds its bench.json",
            ));
        }
        return Ok(as_path);
    }
    let root = crate::fsutil::project_root(cwd);
    let dir = record_dir(&root, Kind::Bench, target)?;
    if !dir.join(spec::SPEC_FILE).is_file() {
        return Err(Error::NotFound {
            what: IdOf::Bench,
            id: target.to_string(),
            store: dir.parent().map(Path::to_path_buf).unwrap_or_default(),
        });
    }
    Ok(dir)
}

/// Every bench run of the project at `root`, newest first, as `baton
/// serve`'s bench panel shows them (`GET /api/benches`): a record that
/// cannot be read is listed with why, never dropped and never fatal.
pub fn all(root: &Path) -> Result<Listing> {
    let dir = crate::state_dir::project(root)?.join(Kind::Bench.folder());
    let mut ids: Vec<String> = match std::fs::read_dir(&dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| crate::ids::is_valid(n))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(Error::io(format!("listing {}", dir.display()), e)),
    };
    // Ids sort by the time they were made.
    ids.sort_by(|a, b| b.cmp(a));
    let mut out = Listing::default();
    for id in ids {
        match read(&dir.join(&id)) {
            Ok(r) => out.benches.push(r),
            Err(e) => out.unreadable.push(Unreadable {
                id,
                error: e.to_string(),
            }),
        }
    }
    Ok(out)
}

/// What `all` found.
#[derive(Debug, Default, serde::Serialize)]
pub struct Listing {
    pub benches: Vec<report::Report>,
    pub unreadable: Vec<Unreadable>,
}

/// A record `all` could not read, and why.
#[derive(Debug, serde::Serialize)]
pub struct Unreadable {
    pub id: String,
    pub error: String,
}

/// The report of the record in `record`.
pub fn read(record: &Path) -> Result<report::Report> {
    let s = spec::read(record)?;
    let trials = trial::read_dir(&record.join(spec::TRIALS_DIR))?;
    let set = if s.set.is_dir() {
        task::read_set(&s.set).map_err(|e| format!("the set could not be read: {e}"))
    } else {
        Err(format!("{} is not there any more", s.set.display()))
    };
    Ok(report::build(
        &s,
        &trials,
        set.as_deref().map_err(Clone::clone),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_without_a_spec_is_not_a_record() {
        let d = tempfile::tempdir().unwrap();
        let dir = format!("{}/", d.path().display());
        let e = locate(d.path(), &dir).unwrap_err();
        assert_eq!(e.kind(), "usage");
        assert!(e.to_string().contains("bench.json"), "{e}");
        std::fs::write(d.path().join("bench.json"), "{}").unwrap();
        assert_eq!(locate(d.path(), &dir).unwrap(), PathBuf::from(&dir));
        // Not an id and no such folder: an invalid id.
        let e = locate(d.path(), "no such").unwrap_err();
        assert_eq!(e.kind(), "invalid_job_id");
    }

    #[test]
    fn a_damaged_set_or_no_trials_folder_still_reports() {
        let d = tempfile::tempdir().unwrap();
        let set = d.path().join("set");
        std::fs::create_dir_all(&set).unwrap();
        std::fs::write(set.join("t1.json"), "{}").unwrap();
        let s = spec::Spec {
            format: 1,
            id: "0k1m2n3p4q5r6".into(),
            set: set.clone(),
            settings: vec!["a".into()],
            repeat: 1,
            shard: None,
            created_at_ms: 0,
            options: Default::default(),
        };
        spec::write(d.path(), &s).unwrap();
        let r = read(d.path()).unwrap();
        assert_eq!(r.trials, 0);
        assert_eq!(r.set_tasks, None);
        let note = r.set_note.unwrap();
        assert!(
            note.starts_with("the set could not be read: ") && note.contains("t1.json"),
            "{note}"
        );
        std::fs::remove_file(set.join("t1.json")).unwrap();
        let r = read(d.path()).unwrap();
        assert_eq!((r.set_tasks, r.set_note), (Some(0), None));
    }
}
