//! Scoring a trial once its peer is gone: the hidden tests written over
//! whatever the peer did to them, test infrastructure it changed reverted
//! (both reported as `tampered_tests`), then the task's test command run as
//! baton runs a `--test-cmd` (`sh -c`, own process group, timeout, under
//! baton's sandbox where there is one) and its per-test outcomes read.
//!
//! The commit's version of each hidden test file is made before the peer
//! starts (`Hidden::prepare`: the test patch applied with `git apply` over
//! the base versions in a scratch repository of baton's), so a task whose
//! patch does not apply costs no peer call. Every write into the trial
//! goes through `put`, which never follows a link the peer left.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use super::isolate::{self, Grader, Place};
use super::outcomes::{self, Outcomes};
use super::task::Task;
use crate::error::{Error, Result};
use crate::process::Stop;

/// Test infrastructure a peer may not change: reverted to the base after
/// it, and reported. A file name matches at any depth; a `dir/name` entry
/// matches those two components at any depth; a name ending in `.*`
/// matches any extension. (`pyproject.toml` is judged by its test
/// sections alone: `PYPROJECT`.)
pub const INFRA: &[&str] = &[
    "conftest.py",
    "pytest.ini",
    "tox.ini",
    "setup.cfg",
    "jest.config.*",
    "vitest.config.*",
    ".cargo/config.toml",
    ".cargo/config",
];

/// A file whose test sections only are infrastructure: `[tool.pytest*]`.
/// When the peer changed those, the whole file is reverted (and reported);
/// other changes to it stay.
pub const PYPROJECT: &str = "pyproject.toml";

/// The `[tool.pytest*]` tables of a pyproject.toml, written out in a form
/// that compares by content (`None`: not TOML, which differs from any
/// parsed file).
pub fn pytest_sections(bytes: &[u8]) -> Option<String> {
    use toml::de::{DeTable, DeValue};
    fn canon(v: &DeValue, out: &mut String) {
        match v {
            DeValue::Table(t) => {
                let mut kv: Vec<_> = t.iter().collect();
                kv.sort_by(|a, b| a.0.get_ref().cmp(b.0.get_ref()));
                out.push('{');
                for (k, v) in kv {
                    out.push_str(&format!("{:?}=", k.get_ref()));
                    canon(v.get_ref(), out);
                    out.push(',');
                }
                out.push('}');
            }
            DeValue::Array(a) => {
                out.push('[');
                for v in a {
                    canon(v.get_ref(), out);
                    out.push(',');
                }
                out.push(']');
            }
            DeValue::String(x) => out.push_str(&format!("{x:?}")),
            other => out.push_str(&format!("{other:?}")),
        }
    }
    let text = std::str::from_utf8(bytes).ok()?;
    let doc = DeTable::parse(text).ok()?;
    let mut out = String::new();
    if let Some(DeValue::Table(tool)) = doc.get_ref().get("tool").map(|v| v.get_ref()) {
        let mut kv: Vec<_> = tool
            .iter()
            .filter(|(k, _)| k.get_ref().starts_with("pytest"))
            .collect();
        kv.sort_by(|a, b| a.0.get_ref().cmp(b.0.get_ref()));
        for (k, v) in kv {
            out.push_str(k.get_ref());
            canon(v.get_ref(), &mut out);
        }
    }
    Some(out)
}

/// Whether `path` (relative, `/`-separated) is test infrastructure.
pub fn is_infra(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    let name = parts.last().copied().unwrap_or("");
    INFRA.iter().any(|pat| match pat.split_once('/') {
        Some((dir, file)) => parts.len() >= 2 && parts[parts.len() - 2] == dir && name == file,
        None => match pat.strip_suffix('*') {
            Some(stem) => name.starts_with(stem) && name.len() > stem.len(),
            None => name == *pat,
        },
    })
}

/// One hidden test file's base and commit versions (`None`: absent).
#[derive(Debug)]
pub struct HiddenFile {
    pub path: String,
    pub base: Option<Vec<u8>>,
    pub commit: Option<Vec<u8>>,
}

/// The hidden test files of a task.
#[derive(Debug)]
pub struct Hidden {
    pub files: Vec<HiddenFile>,
}

impl Hidden {
    /// The commit's versions, made in a scratch repository in `tmp`.
    pub fn prepare(task: &Task, user: &Path, tree: &str, tmp: &Path) -> Result<Hidden> {
        let scratch = tmp.join("hidden");
        crate::fsutil::ensure_private_dir(&scratch)?;
        let mut c = crate::git::git(&scratch);
        c.args(["init", "-q", "--template="]);
        isolate::run(c, "making a scratch repository")?;
        let mut base = Vec::new();
        for p in &task.test_files {
            let mut c = crate::git::git(user);
            c.args(["cat-file", "blob"])
                .arg(format!("{tree}:{p}"))
                .stderr(std::process::Stdio::null());
            let out = c
                .output()
                .map_err(|e| Error::io("reading a test file's base version", e))?;
            let b = out.status.success().then_some(out.stdout);
            if let Some(b) = &b {
                put(&scratch, p, b)?;
            }
            base.push(b);
        }
        let patch = tmp.join("test.patch");
        std::fs::write(&patch, &task.test_patch)
            .map_err(|e| Error::io("writing the test patch", e))?;
        let mut c = crate::git::git(&scratch);
        c.args(["apply", "--whitespace=nowarn"]).arg(&patch);
        isolate::run(c, "applying the test patch").map_err(|e| {
            Error::usage_hint(
                format!(
                    "task {:?}: its test patch does not apply to the base: {e}",
                    task.id
                ),
                "mine the set again, or correct the task file by hand (docs/bench.md)",
            )
        })?;
        let files = task
            .test_files
            .iter()
            .zip(base)
            .map(|(p, b)| HiddenFile {
                path: p.clone(),
                base: b,
                commit: std::fs::read(scratch.join(p)).ok(),
            })
            .collect();
        let _ = std::fs::remove_dir_all(&scratch);
        let _ = std::fs::remove_file(&patch);
        Ok(Hidden { files })
    }
}

/// Write `bytes` at `rel` under `top`, replacing a link or a non-directory
/// on the way (never writing through one).
pub fn put(top: &Path, rel: &str, bytes: &[u8]) -> Result<()> {
    let target = clear_way(top, rel)?;
    if std::fs::symlink_metadata(&target).is_ok_and(|m| m.is_dir()) {
        std::fs::remove_dir_all(&target)
            .map_err(|e| Error::io(format!("removing {}", target.display()), e))?;
    }
    crate::fsutil::replace_file(&target, bytes)
}

/// Remove whatever is at `rel` under `top` (a file, a link, a folder).
pub fn remove(top: &Path, rel: &str) -> Result<()> {
    let target = clear_way(top, rel)?;
    match std::fs::symlink_metadata(&target) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(&target),
        Ok(_) => std::fs::remove_file(&target),
        Err(_) => Ok(()),
    }
    .map_err(|e| Error::io(format!("removing {}", target.display()), e))
}

/// `top/rel` with every folder on the way a real folder (a link or a file
/// there is removed, a missing one made).
fn clear_way(top: &Path, rel: &str) -> Result<PathBuf> {
    let io = |p: &Path, e| Error::io(format!("preparing {}", p.display()), e);
    let comps: Vec<_> = Path::new(rel).components().collect();
    let mut at = top.to_path_buf();
    for (i, c) in comps.iter().enumerate() {
        let Component::Normal(n) = c else {
            return Err(Error::Internal(format!("{rel}: not a plain relative path")));
        };
        at.push(n);
        if i + 1 == comps.len() {
            break;
        }
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                std::fs::remove_file(&at).map_err(|e| io(&at, e))?;
                std::fs::create_dir(&at).map_err(|e| io(&at, e))?;
            }
            Err(_) => std::fs::create_dir(&at).map_err(|e| io(&at, e))?,
        }
    }
    Ok(at)
}

/// What `rel` holds in the trial now (`None`: nothing, or not a file).
fn now(top: &Path, rel: &str) -> Option<Vec<u8>> {
    let p = top.join(rel);
    let m = std::fs::symlink_metadata(&p).ok()?;
    if !m.is_file() {
        return Some(b"\0baton: not a regular file".to_vec());
    }
    std::fs::read(p).ok()
}

/// Write the hidden tests over the peer's work; the files it had changed.
pub fn restore_tests(top: &Path, hidden: &Hidden) -> Result<Vec<String>> {
    let mut tampered = Vec::new();
    for f in &hidden.files {
        if now(top, &f.path) != f.base {
            tampered.push(f.path.clone());
        }
        match &f.commit {
            Some(b) => put(top, &f.path, b)?,
            None => remove(top, &f.path)?,
        }
    }
    Ok(tampered)
}

/// Every file of the work tree named as test infrastructure (`.git` and
/// `node_modules` folders left aside; links not followed).
fn infra_files(top: &Path) -> Vec<String> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let Some(name) = e.file_name().to_str().map(str::to_string) else {
                continue;
            };
            let r = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            if is_dir && (r == ".git" || name == "node_modules") {
                continue;
            }
            if is_infra(&r) || name == PYPROJECT {
                out.push(r.clone());
            }
            if is_dir {
                walk(&e.path(), &r, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(top, "", &mut out);
    out
}

/// Revert test infrastructure the peer added, changed or removed; the
/// paths it touched (hidden test files left to `restore_tests`).
pub fn revert_infra(g: &Grader, top: &Path, hidden: &Hidden) -> Result<Vec<String>> {
    let is_pyproject = |p: &str| p.rsplit('/').next() == Some(PYPROJECT);
    let mut paths: Vec<String> = g
        .base_paths()?
        .into_iter()
        .filter(|p| is_infra(p) || is_pyproject(p))
        .collect();
    paths.extend(infra_files(top));
    paths.sort();
    paths.dedup();
    let mut tampered = Vec::new();
    for p in paths {
        if hidden.files.iter().any(|f| f.path == p) {
            continue;
        }
        let base = g.base_blob(&p);
        let current = now(top, &p);
        if current == base {
            continue;
        }
        if is_pyproject(&p) {
            let sections = |b: &Option<Vec<u8>>| b.as_deref().map(pytest_sections);
            let same = match (sections(&base), sections(&current)) {
                // Added, or removed: only a file with pytest sections counts.
                (None, Some(Some(s))) | (Some(Some(s)), None) => s.is_empty(),
                (a, b) => a == b,
            };
            if same {
                continue;
            }
        }
        match &base {
            Some(b) => put(top, &p, b)?,
            None => remove(top, &p)?,
        }
        tampered.push(p);
    }
    Ok(tampered)
}

/// How the task's tests ended.
#[derive(Debug)]
pub struct Tests {
    pub outcomes: Outcomes,
    pub still_failing: Vec<String>,
    pub broken: Vec<String>,
    pub solved: bool,
}

/// Run the task's test command in the restored trial (output in `log`).
pub fn run_tests(
    task: &Task,
    place: &Place,
    sandbox: crate::sandbox::Want,
    log: &Path,
    timeout: Duration,
    stop: &Stop,
) -> Result<Tests> {
    let mut want = task.fail_to_pass.clone();
    want.extend(task.pass_to_pass.iter().cloned());
    let command = task.test_cmd.for_tests(&want);
    let at = crate::worktree::verify::Place {
        cwd: &place.top,
        top: &place.top,
        sandbox,
    };
    let checked = crate::worktree::verify::run(
        &command,
        at,
        log,
        &[],
        timeout,
        crate::run::KILL_GRACE,
        stop,
    )?;
    if let Some(sig) = checked.interrupted {
        return Err(Error::Interrupted {
            signal: crate::process::signal_name(sig),
        });
    }
    let text = std::fs::read(log)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let outcomes = outcomes::parse(task.test_cmd.runner, &text);
    let still_failing = outcomes::not_passed(&task.fail_to_pass, &outcomes);
    let broken = outcomes::not_passed(&task.pass_to_pass, &outcomes);
    Ok(Tests {
        solved: still_failing.is_empty() && broken.is_empty(),
        outcomes,
        still_failing,
        broken,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn infrastructure_is_matched_by_name_at_any_depth() {
        for yes in [
            "conftest.py",
            "a/b/conftest.py",
            "pytest.ini",
            "pkg/jest.config.js",
            "vitest.config.mts",
            ".cargo/config.toml",
            "sub/.cargo/config",
        ] {
            assert!(is_infra(yes), "{yes}");
        }
        for no in [
            "myconftest.py",
            "jest.config",
            "config.toml",
            "cargo/config.toml",
            "pyproject.toml",
            "src/lib.rs",
        ] {
            assert!(!is_infra(no), "{no}");
        }
    }

    #[test]
    fn only_the_pytest_sections_of_a_pyproject_count() {
        let base = b"[project]\nname = \"x\"\n[tool.pytest.ini_options]\naddopts = \"-q\"\n";
        let deps = b"[project]\nname = \"x\"\ndependencies = [\"y\"]\n[tool.pytest.ini_options]\naddopts = \"-q\"\n";
        let cheat = b"[project]\nname = \"x\"\n[tool.pytest.ini_options]\naddopts = \"-q --deselect t.py::a\"\n";
        assert_eq!(pytest_sections(base), pytest_sections(deps));
        assert_ne!(pytest_sections(base), pytest_sections(cheat));
        assert_eq!(pytest_sections(b"[project]\n").as_deref(), Some(""));
        assert_eq!(pytest_sections(b"not = = toml"), None);
    }

    #[test]
    fn a_write_never_goes_through_a_link_the_peer_left() {
        let d = tempfile::tempdir().unwrap();
        let (top, outside) = (d.path().join("top"), d.path().join("outside"));
        std::fs::create_dir_all(&top).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, top.join("tests")).unwrap();
        put(&top, "tests/t.sh", b"x").unwrap();
        assert!(!outside.join("t.sh").exists());
        assert_eq!(std::fs::read(top.join("tests/t.sh")).unwrap(), b"x");
        std::os::unix::fs::symlink(outside.join("f"), top.join("conftest.py")).unwrap();
        std::fs::write(outside.join("f"), "keep").unwrap();
        remove(&top, "conftest.py").unwrap();
        assert!(outside.join("f").exists() && !top.join("conftest.py").exists());
    }
}
