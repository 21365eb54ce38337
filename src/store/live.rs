//! THE LIVE INDEX: which records of a project may still be at work, so a
//! view across every repository (`view::repos`) reads a handful of records
//! per project rather than every `state.json` of 10,000 ended jobs.
//!
//! Theory of operation. `<project>/live/` holds one empty file per record
//! that is not over, named `<kind>.<id>` (`job.1m8q4fhwprzza`). The writers
//! keep it: each kind's one write of its record (`job::store`'s
//! `write_state`, `council::store::Record::save`, `fanout::store::Record::
//! save`) calls `set` with whether the record is still open, so a mark is
//! made when a record is made and cleared when its record turns terminal.
//!
//! A reader never trusts a mark: it reads the record it names, and shows
//! it as what it is (a runner that died leaves its mark: the record reads
//! `lost`). A mark whose record ended or vanished is stale and `forget`
//! removes it. Records written before the index existed are found once: a
//! project whose index lacks `complete` is scanned in full by the reader,
//! which marks every open record it finds (`backfill`) and then writes
//! `complete`. A writer racing that scan only adds marks; a record that ends
//! during it leaves a stale mark, read and removed later. Nothing here is
//! ever the truth about a record, only where to look.

use std::path::{Path, PathBuf};

use super::Kind;

/// The index's folder in a project's state folder.
pub const FOLDER: &str = "live";

/// Written once every open record of the project is marked, by the reader
/// after a full scan (a new project too: its scan finds nothing, cheaply).
const COMPLETE: &str = "complete";

/// The project's folder of a record in `record_dir` (`<project>/<kinds>/<id>`),
/// if it has that shape inside baton's state directory (`repos/<p>/…`): a
/// store in a bare test directory keeps no index.
fn project_of(record_dir: &Path, kind: Kind) -> Option<&Path> {
    let kinds = record_dir.parent()?;
    if kinds.file_name()? != kind.folder() {
        return None;
    }
    let project = kinds.parent()?;
    (project.parent()?.file_name()? == "repos").then_some(project)
}

fn mark_name(kind: Kind, id: &str) -> String {
    format!("{}.{id}", kind.name())
}

/// Record whether the record `id` of `kind` in `record_dir` is still open.
/// Best effort: an index that cannot be written costs only speed (the
/// reader checks every mark, and a project without a complete index is
/// scanned), never the work.
pub fn set(record_dir: &Path, kind: Kind, id: &str, open: bool) {
    let Some(project) = project_of(record_dir, kind) else {
        return;
    };
    let _ = set_in(project, kind, id, open);
}

fn set_in(project: &Path, kind: Kind, id: &str, open: bool) -> std::io::Result<()> {
    let dir = project.join(FOLDER);
    let mark = dir.join(mark_name(kind, id));
    if !open {
        return match std::fs::remove_file(&mark) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    if std::fs::symlink_metadata(&mark).is_ok() {
        return Ok(());
    }
    private_dir(&dir)?;
    use std::os::unix::fs::OpenOptionsExt;
    // An empty file made whole by its creation: no partial write to see.
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&mark)
    {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
        _ => Ok(()),
    }
}

/// `dir` as a private folder of ours; a link there is refused (baton makes none).
fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            if std::fs::symlink_metadata(dir)?.is_dir() {
                Ok(())
            } else {
                Err(std::io::Error::other("the live index is not a folder"))
            }
        }
        r => r,
    }
}

/// One mark: a record that may still be at work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    pub kind: Kind,
    pub id: String,
}

/// The marks of `project`, and whether the index holds every open record
/// (`false`: the project must be scanned, then `backfill`ed).
pub fn read(project: &Path) -> (Vec<Mark>, bool) {
    let dir = project.join(FOLDER);
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return (Vec::new(), false);
    };
    let mut complete = false;
    let mut marks = Vec::new();
    for e in rd.flatten() {
        let Some(name) = e.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if name == COMPLETE {
            complete = true;
            continue;
        }
        let Some((kind, id)) = name.split_once('.') else {
            continue;
        };
        let Some(kind) = Kind::LOOKUP.into_iter().find(|k| k.name() == kind) else {
            continue;
        };
        if crate::ids::is_valid(id) {
            marks.push(Mark {
                kind,
                id: id.to_string(),
            });
        }
    }
    // Newest first, as the stores list.
    marks.sort_by(|a, b| b.id.cmp(&a.id));
    (marks, complete)
}

/// After a full scan of `project`: mark every open record found, then say
/// the index is complete. Best effort (a read-only state folder is scanned
/// again next time).
pub fn backfill(project: &Path, open: &[Mark]) {
    let mut ok = true;
    for m in open {
        ok &= set_in(project, m.kind, &m.id, true).is_ok();
    }
    if ok && private_dir(&project.join(FOLDER)).is_ok() {
        // Empty, so its creation is the whole write; lost on a power cut,
        // it costs one more scan.
        use std::os::unix::fs::OpenOptionsExt;
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(project.join(FOLDER).join(COMPLETE));
    }
}

/// Remove a stale mark (its record ended or is gone).
pub fn forget(project: &Path, m: &Mark) {
    let _ = set_in(project, m.kind, &m.id, false);
}

/// The folder of the record a mark names.
pub fn record_dir(project: &Path, m: &Mark) -> PathBuf {
    project.join(m.kind.folder()).join(&m.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("repos").join("p-0123");
        std::fs::create_dir_all(p.join("jobs")).unwrap();
        (d, p)
    }

    #[test]
    fn a_record_is_marked_while_open_and_cleared_when_it_ends() {
        let (_d, p) = project();
        let job = p.join("jobs").join("1m8q4fhwprzza");
        set(&job, Kind::Job, "1m8q4fhwprzza", true);
        let (marks, complete) = read(&p);
        assert_eq!(
            marks,
            [Mark {
                kind: Kind::Job,
                id: "1m8q4fhwprzza".into()
            }]
        );
        assert!(!complete, "no scan has completed it yet");
        set(&job, Kind::Job, "1m8q4fhwprzza", true);
        assert_eq!(read(&p).0.len(), 1, "marking twice is one mark");
        set(&job, Kind::Job, "1m8q4fhwprzza", false);
        assert!(read(&p).0.is_empty());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(p.join(FOLDER))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    #[test]
    fn a_store_outside_the_state_layout_keeps_no_index() {
        let d = tempfile::tempdir().unwrap();
        let job = d.path().join("jobs").join("1m8q4fhwprzza");
        set(&job, Kind::Job, "1m8q4fhwprzza", true);
        assert!(!d.path().join(FOLDER).exists());
        // A council's folder is not a job's.
        let (_e, p) = project();
        set(
            &p.join("jobs").join("x"),
            Kind::Council,
            "1m8q4fhwprzza",
            true,
        );
        assert!(!p.join(FOLDER).exists());
    }

    #[test]
    fn a_new_project_is_scanned_once_and_its_run_writes_no_index() {
        let d = tempfile::tempdir().unwrap();
        let base = d.path().join("state");
        crate::state_dir::TEST_BASE.with(|b| *b.borrow_mut() = Some(base.clone()));
        let root = d.path().join("work");
        std::fs::create_dir(&root).unwrap();
        let p = crate::state_dir::ensure_project(&root).unwrap();
        crate::state_dir::TEST_BASE.with(|b| *b.borrow_mut() = None);
        assert!(!p.join(FOLDER).exists(), "a run makes no index folder");
        assert_eq!(read(&p), (Vec::new(), false), "the reader must scan it");
        backfill(&p, &[]);
        assert_eq!(read(&p), (Vec::new(), true));
    }

    #[test]
    fn backfill_completes_the_index_and_junk_is_ignored() {
        let (_d, p) = project();
        let m = Mark {
            kind: Kind::Fanout,
            id: "1m8q4fhwprzzb".into(),
        };
        backfill(&p, std::slice::from_ref(&m));
        std::fs::write(p.join(FOLDER).join("nonsense"), "").unwrap();
        std::fs::write(p.join(FOLDER).join("job.../x"), "").ok();
        let (marks, complete) = read(&p);
        assert_eq!((marks, complete), (vec![m.clone()], true));
        forget(&p, &m);
        assert_eq!(read(&p), (Vec::new(), true));
        assert_eq!(record_dir(&p, &m), p.join("fanouts").join("1m8q4fhwprzzb"));
    }
}
