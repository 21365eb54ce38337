//! Where task sets live and what `bench list` and `bench show` print.
//!
//! A set mined without `--dir` is kept in the project's state folder,
//! `bench-sets/<NAME>/` (private, outside the work tree, so a peer's
//! `git clean` cannot take it); `--dir` puts one anywhere. A set is named
//! on the command line by its name (a state folder's) or by a path (anything
//! with a `/`, or that is not a valid name).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::output::render::{self, Render};

use super::task::{self, SET_FILE, SetInfo, Task};

/// The state folder's sub-folder of sets.
pub const SUB: &str = "bench-sets";

/// The set's name and folder for `mine`: `--dir`, else `--set` (default
/// `default`) in the project's state folder.
pub fn place(top: &Path, set: Option<&str>, dir: Option<&Path>) -> Result<(String, PathBuf)> {
    if let Some(d) = dir {
        let abs = if d.is_absolute() {
            d.to_path_buf()
        } else {
            std::env::current_dir()
                .map_err(|e| Error::io("reading the current directory", e))?
                .join(d)
        };
        let name = abs
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "default".into());
        return Ok((name, abs));
    }
    let name = set.unwrap_or("default");
    check_name(name)?;
    let root = crate::fsutil::project_root(top);
    Ok((
        name.to_string(),
        crate::state_dir::ensure_sub(&root, SUB)?.join(name),
    ))
}

fn check_name(name: &str) -> Result<()> {
    if task::valid_id(name) {
        Ok(())
    } else {
        Err(Error::usage_hint(
            format!("set name {name:?}: use 1-64 of a-z, 0-9 and -"),
            "or give a folder with --dir",
        ))
    }
}

/// Write `set.json` (atomically, private).
pub fn write_info(dir: &Path, info: &SetInfo) -> Result<()> {
    let b = serde_json::to_vec_pretty(info).map_err(|e| Error::Internal(e.to_string()))?;
    crate::fsutil::write_atomic(&dir.join(SET_FILE), &b)
}

/// Read a set's `set.json`.
pub fn read_info(dir: &Path) -> Result<SetInfo> {
    let p = dir.join(SET_FILE);
    let text = std::fs::read_to_string(&p).map_err(|e| {
        Error::usage_hint(
            format!("{}: {e}", p.display()),
            "a task set is a folder `baton bench mine` wrote (`baton bench list` names them)",
        )
    })?;
    serde_json::from_str(&text).map_err(|e| {
        Error::usage_hint(
            format!("{}: not a set file: {e}", p.display()),
            "docs/bench.md describes the format (`baton schema bench-set`)",
        )
    })
}

/// The folder `set` names, from `cwd`'s project.
pub fn resolve(cwd: &Path, set: &str) -> Result<PathBuf> {
    if !set.contains('/') && task::valid_id(set) {
        let root = crate::fsutil::project_root(cwd);
        let dir = crate::state_dir::project(&root)?.join(SUB).join(set);
        if !dir.is_dir() {
            return Err(Error::usage_hint(
                format!("no task set {set:?} in this project"),
                "`baton bench list` names them; give a folder as a path (./NAME)",
            ));
        }
        return Ok(dir);
    }
    Ok(cwd.join(set))
}

/// `bench list`: the sets in this project's state.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Listing {
    pub sets: Vec<SetLine>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SetLine {
    pub name: String,
    pub dir: String,
    /// How many task files it holds.
    pub tasks: usize,
    pub mined_at_ms: u64,
    /// The repository it was mined from.
    pub repo: String,
}

pub fn list(cwd: &Path) -> Result<Listing> {
    let root = crate::fsutil::project_root(cwd);
    let dir = crate::state_dir::project(&root)?.join(SUB);
    let mut sets = Vec::new();
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let Some(name) = e.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if !task::valid_id(&name) || !e.path().is_dir() {
            continue;
        }
        let Ok(info) = read_info(&e.path()) else {
            continue;
        };
        let tasks = std::fs::read_dir(e.path())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|f| {
                let n = f.file_name();
                let n = n.to_string_lossy();
                n.ends_with(".json") && n != SET_FILE
            })
            .count();
        sets.push(SetLine {
            name,
            dir: e.path().display().to_string(),
            tasks,
            mined_at_ms: info.mined_at_ms,
            repo: info.repo,
        });
    }
    sets.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Listing { sets })
}

/// `bench show SET`: the set and a line per task.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Shown {
    pub dir: String,
    pub set: SetInfo,
    pub tasks: Vec<TaskLine>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TaskLine {
    pub id: String,
    pub commit: String,
    /// The first line of the task text.
    pub title: String,
    pub fail_to_pass: usize,
    pub pass_to_pass: usize,
    pub test_files: usize,
}

/// `bench show SET [TASK]`.
pub enum Show {
    Set(Shown),
    Task(Box<Task>),
}

pub fn show(cwd: &Path, set: &str, id: Option<&str>) -> Result<Show> {
    let dir = resolve(cwd, set)?;
    if let Some(id) = id {
        if !task::valid_id(id) {
            return Err(Error::usage_hint(
                format!("task id {id:?}"),
                "`baton bench show SET` lists the ids",
            ));
        }
        let p = dir.join(format!("{id}.json"));
        if !p.is_file() {
            return Err(Error::usage_hint(
                format!("no task {id} in {}", dir.display()),
                "`baton bench show SET` lists the ids",
            ));
        }
        return Ok(Show::Task(Box::new(task::read(&p)?)));
    }
    let info = read_info(&dir)?;
    let tasks = task::read_set(&dir)?
        .into_iter()
        .map(|t| TaskLine {
            title: t.task.lines().next().unwrap_or("").to_string(),
            fail_to_pass: t.fail_to_pass.len(),
            pass_to_pass: t.pass_to_pass.len(),
            test_files: t.test_files.len(),
            id: t.id,
            commit: t.commit,
        })
        .collect();
    Ok(Show::Set(Shown {
        dir: dir.display().to_string(),
        set: info,
        tasks,
    }))
}

/// A time as people read it (UTC, to the second).
fn when(ms: u64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
    humantime::format_rfc3339_seconds(t).to_string()
}

impl Render for Listing {
    fn exit_code(&self) -> i32 {
        0
    }

    fn text(&self) -> String {
        if self.sets.is_empty() {
            return "no task sets in this project (`baton bench mine` makes one)\n".into();
        }
        let mut rows = vec![["SET", "TASKS", "MINED", "REPO"].map(String::from).to_vec()];
        for s in &self.sets {
            rows.push(vec![
                s.name.clone(),
                s.tasks.to_string(),
                when(s.mined_at_ms),
                s.repo.clone(),
            ]);
        }
        render::table(&rows)
    }
}

impl Render for Shown {
    fn exit_code(&self) -> i32 {
        0
    }

    fn text(&self) -> String {
        let mut s = format!(
            "set {} ({}): {} task(s), mined {} from {}\n",
            render::clean(&self.set.name, render::Shape::Line),
            render::clean(&self.dir, render::Shape::Line),
            self.tasks.len(),
            when(self.set.mined_at_ms),
            render::clean(&self.set.repo, render::Shape::Line)
        );
        let mut rows = vec![
            ["TASK", "FAIL→PASS", "PASS→PASS", "TEXT"]
                .map(String::from)
                .to_vec(),
        ];
        for t in &self.tasks {
            rows.push(vec![
                t.id.clone(),
                t.fail_to_pass.to_string(),
                t.pass_to_pass.to_string(),
                t.title.clone(),
            ]);
        }
        s.push_str(&render::table(&rows));
        s
    }
}

impl Render for Task {
    fn exit_code(&self) -> i32 {
        0
    }

    /// Everything here came from the repository (a commit message, file
    /// and test names): cleaned of control characters before a terminal
    /// sees it.
    fn text(&self) -> String {
        use render::{Shape, clean};
        let line = |x: &str| clean(x, Shape::Line).into_owned();
        let mut s = format!(
            "task {} (base {}, commit {})\n\n{}\n\nfail_to_pass:\n",
            self.id,
            &self.base[..12],
            &self.commit[..12],
            clean(self.task.trim(), Shape::Block)
        );
        for t in &self.fail_to_pass {
            s.push_str(&format!("  {}\n", line(t)));
        }
        s.push_str(&format!(
            "pass_to_pass: {} test(s)\ntest files: {}\nsource files: {}\ntest command ({:?}): {}\n",
            self.pass_to_pass.len(),
            line(&self.test_files.join(", ")),
            line(&self.source_files.join(", ")),
            self.test_cmd.runner,
            line(&self.test_cmd.command)
        ));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::task::{FORMAT, Runner, TestCmd};

    #[test]
    fn a_task_shown_to_people_carries_no_control_characters() {
        let t = Task {
            format: FORMAT,
            id: "0123456789ab".into(),
            base: "a".repeat(40),
            commit: "b".repeat(40),
            task: "Fix it\x1b]0;owned\x07\n\nbody\x1b[2J".into(),
            source_files: vec!["src/\x1b[31mx.rs".into()],
            test_files: vec!["tests/x.rs".into()],
            test_patch: "diff".into(),
            test_cmd: TestCmd {
                runner: Runner::Cargo,
                command: "sh t.sh".into(),
            },
            fail_to_pass: vec!["x\x1b[1m".into()],
            pass_to_pass: vec![],
            mined_at_ms: 0,
            mined_by: "baton".into(),
            described_by: None,
            describe_usage: None,
        };
        let text = t.text();
        assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
        assert!(text.contains("body"), "{text}");
    }

    #[test]
    fn a_set_name_is_checked_before_it_names_a_folder() {
        let d = tempfile::tempdir().unwrap();
        for bad in ["../x", "A", "", "-x", "a/b"] {
            let e = place(d.path(), Some(bad), None).unwrap_err();
            assert_eq!(e.kind(), "usage", "{bad}");
        }
        let (name, dir) = place(d.path(), None, Some(&d.path().join("s"))).unwrap();
        assert_eq!((name.as_str(), dir), ("s", d.path().join("s")));
    }
}
