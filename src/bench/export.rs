//! `baton bench export SET --format harbor DIR`: a task set written in
//! another harness's task layout, so it runs where baton does not (Harbor's
//! sandboxed cloud backends).
//!
//! Harbor runs each task in containers of its own, with no access to the
//! user's repository: every task folder carries what it needs, read from
//! the repository the set was mined from (run the export inside it): the
//! base commit's tree as a `git archive` tarball, the commit's versions of
//! the hidden test files (the test patch applied to the base versions, as
//! `bench run` prepares them), and the reference fix's source diff for
//! Harbor's oracle agent. The files' contents are made in [`harbor`].
//!
//! The export is meant to be shared (committed, uploaded, built by Docker
//! and copied into containers that may run as another user): folders are
//! 0755, files 0644, scripts 0755, not baton's private 0700/0600. It
//! holds nothing the repository does not.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::harbor::{self, Hidden};
use super::task::Task;
use super::{isolate, score, sets, task};
use crate::error::{Error, Result};
use crate::output::render::{self, Render};

/// The layouts `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Harbor's task folders (`task.toml`, `instruction.md`, `environment/`,
    /// `tests/`, `solution/`), one per task.
    Harbor,
}

/// What `bench export` was asked.
#[derive(Debug, Clone)]
pub struct ExportRequest {
    pub cwd: PathBuf,
    /// A set's name or folder, as `bench show` reads it.
    pub set: String,
    pub format: Format,
    /// Where to write (relative to `cwd`).
    pub dir: PathBuf,
    /// Write into a non-empty `dir`, replacing the tasks' folders.
    pub force: bool,
}

/// `bench export`'s result (`baton schema bench-export`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Exported {
    pub format: Format,
    /// The set's folder.
    pub set: String,
    /// The folder written, absolute.
    pub dir: String,
    /// The `schema_version` of each `task.toml` (Harbor's task format).
    pub harbor_schema: String,
    /// The tasks written, each in `<dir>/<id>/`, sorted by id.
    pub tasks: Vec<String>,
}

pub fn export(req: &ExportRequest) -> Result<Exported> {
    let Format::Harbor = req.format;
    let set_dir = sets::resolve(&req.cwd, &req.set)?;
    let info = sets::read_info(&set_dir)?;
    let tasks = task::read_set(&set_dir)?;
    let top = super::mine::toplevel(&req.cwd)?;
    let dir = req.cwd.join(&req.dir);
    prepare_dir(&dir, req.force)?;
    let by = format!("baton {}", env!("CARGO_PKG_VERSION"));
    let tmp = isolate::private_tmp("baton-export")?;
    let done = (|| {
        for t in &tasks {
            one(&top, t, &dir, &info.name, &by, &tmp)?;
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    done?;
    Ok(Exported {
        format: req.format,
        set: set_dir.display().to_string(),
        dir: dir.display().to_string(),
        harbor_schema: harbor::SCHEMA_VERSION.into(),
        tasks: tasks.into_iter().map(|t| t.id).collect(),
    })
}

/// `dir` made, or found empty; a non-empty one only with `--force`.
fn prepare_dir(dir: &Path, force: bool) -> Result<()> {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o755)
            .create(dir)
            .map_err(|e| Error::io(format!("creating {}", dir.display()), e)),
        Err(e) => Err(Error::io(format!("reading {}", dir.display()), e)),
        Ok(m) if !m.is_dir() => Err(Error::usage_hint(
            format!("{} is not a folder", dir.display()),
            "give a folder to write the tasks into (it is created when missing)",
        )),
        Ok(_) => {
            let mut rd = std::fs::read_dir(dir)
                .map_err(|e| Error::io(format!("reading {}", dir.display()), e))?;
            if rd.next().is_some() && !force {
                return Err(Error::usage_hint(
                    format!("{} is not empty", dir.display()),
                    "give an empty or new folder, or --force to replace the exported tasks' folders in it",
                ));
            }
            Ok(())
        }
    }
}

/// A folder, 0755, with its parents under it.
fn mkdir(p: &Path) -> Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(p)
        .map_err(|e| Error::io(format!("creating {}", p.display()), e))
}

/// A new file (never through a link: `create_new`), 0644 or 0755.
fn file(p: &Path, bytes: &[u8], exec: bool) -> Result<()> {
    if let Some(d) = p.parent() {
        mkdir(d)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(if exec { 0o755 } else { 0o644 })
        .open(p)
        .map_err(|e| Error::io(format!("creating {}", p.display()), e))?;
    f.write_all(bytes)
        .map_err(|e| Error::io(format!("writing {}", p.display()), e))
}

/// One task's folder, `<dir>/<id>/`, written anew.
fn one(top: &Path, t: &Task, dir: &Path, set: &str, by: &str, tmp: &Path) -> Result<()> {
    let tree = isolate::base_tree(top, &t.base)?;
    let root = dir.join(&t.id);
    match std::fs::symlink_metadata(&root) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(&root),
        Ok(_) => std::fs::remove_file(&root),
        Err(_) => Ok(()),
    }
    .map_err(|e| Error::io(format!("replacing {}", root.display()), e))?;
    mkdir(&root)?;
    file(
        &root.join("task.toml"),
        harbor::task_toml(t, set, by).as_bytes(),
        false,
    )?;
    file(
        &root.join("instruction.md"),
        harbor::instruction(t).as_bytes(),
        false,
    )?;

    let env = root.join("environment");
    mkdir(&env)?;
    let mut c = crate::git::git(top);
    c.args(["archive", "--format=tar", "-o"])
        .arg(env.join("repo.tar"))
        .arg(&tree);
    isolate::run(c, "writing the base tree's tarball")?;
    file(
        &env.join("Dockerfile"),
        harbor::dockerfile(t).as_bytes(),
        false,
    )?;

    let tests = root.join("tests");
    let hidden = score::Hidden::prepare(t, top, &tree, tmp)?;
    let mut steps = Vec::new();
    for h in &hidden.files {
        match &h.commit {
            Some(b) => {
                file(&tests.join("hidden").join(&h.path), b, false)?;
                steps.push(Hidden::Put(&h.path));
            }
            None => steps.push(Hidden::Remove(&h.path)),
        }
    }
    file(
        &tests.join("test.sh"),
        harbor::test_sh(t, &steps).as_bytes(),
        true,
    )?;
    file(
        &tests.join("expected.txt"),
        harbor::expected(t).as_bytes(),
        false,
    )?;
    let (name, parser) = harbor::parser(t.test_cmd.runner);
    file(&tests.join(name), parser.as_bytes(), false)?;

    let solution = root.join("solution");
    let fix = fix_patch(top, t)?;
    if !fix.is_empty() {
        file(&solution.join("fix.patch"), &fix, false)?;
    }
    file(
        &solution.join("solve.sh"),
        harbor::solve_sh(t, !fix.is_empty()).as_bytes(),
        true,
    )
}

/// The reference fix: the commit's changes to the task's source files, as
/// a patch `git apply` reads whatever the user's diff settings are.
fn fix_patch(top: &Path, t: &Task) -> Result<Vec<u8>> {
    if t.source_files.is_empty() {
        return Ok(Vec::new());
    }
    let mut g = crate::git::git(top);
    // A hand-edited task's path is a file name, never pathspec magic
    // (`:(glob)…`, `:/`, which would let the tests into the fix).
    g.env("GIT_LITERAL_PATHSPECS", "1")
        .arg("diff")
        .args(crate::git::DIFF)
        .args([
            "--binary",
            "--full-index",
            "--no-renames",
            "--no-color",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            &t.base,
            &t.commit,
            "--",
        ])
        .args(&t.source_files)
        .stderr(std::process::Stdio::piped());
    let out = g
        .output()
        .map_err(|e| Error::io("cutting the reference fix", e))?;
    if !out.status.success() {
        return Err(Error::usage_hint(
            format!(
                "task {:?}: its reference commit {} is not in the repository at {}: {}",
                t.id,
                t.commit,
                top.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            "run the export in the repository the set was mined from",
        ));
    }
    Ok(out.stdout)
}

impl Render for Exported {
    fn exit_code(&self) -> i32 {
        0
    }

    fn text(&self) -> String {
        let mut s = format!(
            "{} task(s) written for Harbor (task.toml schema {}) in {}\n",
            self.tasks.len(),
            self.harbor_schema,
            render::clean(&self.dir, render::Shape::Line)
        );
        for id in &self.tasks {
            s.push_str(&format!("  {id}/\n"));
        }
        s.push_str(
            "each environment/Dockerfile needs the project's toolchain and dependencies added (docs/bench.md)\n",
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_non_empty_folder_is_refused_unless_forced() {
        let d = tempfile::tempdir().unwrap();
        let new = d.path().join("a/b");
        prepare_dir(&new, false).unwrap();
        assert!(new.is_dir());
        prepare_dir(&new, false).unwrap();
        std::fs::write(new.join("x"), "").unwrap();
        let e = prepare_dir(&new, false).unwrap_err();
        assert_eq!(e.kind(), "usage");
        assert!(e.to_string().contains("not empty"), "{e}");
        prepare_dir(&new, true).unwrap();
        let e = prepare_dir(&new.join("x"), true).unwrap_err();
        assert!(e.to_string().contains("not a folder"), "{e}");
    }

    #[test]
    fn files_are_plain_and_never_written_through_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        file(&d.path().join("s/t.sh"), b"x", true).unwrap();
        file(&d.path().join("s/t.txt"), b"x", false).unwrap();
        let mode = |p: &str| {
            std::fs::metadata(d.path().join(p))
                .unwrap()
                .permissions()
                .mode()
                & 0o7777
        };
        // The umask may narrow these, never widen them.
        assert_eq!(mode("s/t.sh") & !0o755, 0);
        assert_eq!(mode("s/t.sh") & 0o700, 0o700);
        assert_eq!(mode("s/t.txt") & !0o644, 0);
        std::os::unix::fs::symlink(d.path().join("elsewhere"), d.path().join("s/l")).unwrap();
        assert!(file(&d.path().join("s/l"), b"x", false).is_err());
        assert!(!d.path().join("elsewhere").exists());
    }
}
