//! Which command runs a repository's tests, and in which format it prints
//! their outcomes: `--test-cmd`/`--runner` as given, else detected from the
//! files at the repository's top (docs/bench.md lists the rules).

use std::path::Path;

use crate::error::{Error, Result};

use super::task::{Runner, TestCmd};

/// The test command: `--test-cmd` with `--runner` (or the detected
/// runner), else the one detected from the repository's files.
pub fn test_cmd(top: &Path, given: Option<&str>, runner: Option<Runner>) -> Result<TestCmd> {
    let detected = detect(top);
    let hint = "give the command that runs the tests and the format it prints, e.g. \
                --test-cmd 'cargo test --no-fail-fast' --runner cargo (runners: cargo, pytest, go, jest)";
    match (given, runner, detected) {
        (Some(c), _, _) if c.trim().is_empty() => {
            Err(Error::usage_hint("--test-cmd is empty", hint))
        }
        (Some(c), Some(r), _) => Ok(TestCmd {
            runner: r,
            command: c.to_string(),
        }),
        (Some(c), None, Some(d)) => Ok(TestCmd {
            runner: d.runner,
            command: c.to_string(),
        }),
        (Some(_), None, None) => Err(Error::usage_hint(
            "--test-cmd needs --runner here: baton cannot tell which format its output is in",
            hint,
        )),
        (None, Some(r), _) => Ok(TestCmd {
            runner: r,
            command: default_command(r, top).to_string(),
        }),
        (None, None, Some(d)) => Ok(d),
        (None, None, None) => Err(Error::usage_hint(
            "no test command: baton found no Cargo.toml, pytest setup, go.mod or jest/vitest package.json",
            hint,
        )),
    }
}

pub fn default_command(r: Runner, top: &Path) -> &'static str {
    match r {
        Runner::Cargo => "cargo test --no-fail-fast",
        Runner::Pytest => "python3 -m pytest -rA",
        Runner::Go => "go test -v ./...",
        Runner::Jest => {
            let pkg = std::fs::read_to_string(top.join("package.json")).unwrap_or_default();
            if pkg.contains("vitest") {
                "npx vitest run --reporter=json"
            } else {
                "npx jest --json"
            }
        }
    }
}

/// The runner the repository's files point at (at its top), if one.
fn detect(top: &Path) -> Option<TestCmd> {
    let has = |f: &str| top.join(f).is_file();
    let read = |f: &str| std::fs::read_to_string(top.join(f)).unwrap_or_default();
    let runner = if has("Cargo.toml") {
        Runner::Cargo
    } else if has("pytest.ini")
        || has("conftest.py")
        || read("pyproject.toml").contains("[tool.pytest")
        || read("setup.cfg").contains("[tool:pytest]")
        || read("tox.ini").contains("[pytest]")
        || any_py_test(top)
    {
        Runner::Pytest
    } else if has("go.mod") {
        Runner::Go
    } else if has("package.json") && {
        let p = read("package.json");
        p.contains("\"jest\"") || p.contains("\"vitest\"")
    } {
        Runner::Jest
    } else {
        return None;
    };
    Some(TestCmd {
        runner,
        command: default_command(runner, top).to_string(),
    })
}

/// A `test_*.py` at the top or in `tests/`.
fn any_py_test(top: &Path) -> bool {
    [top.to_path_buf(), top.join("tests")].iter().any(|d| {
        std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                let n = e.file_name();
                let n = n.to_string_lossy();
                n.starts_with("test_") && n.ends_with(".py")
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(files: &[(&str, &str)]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for (f, text) in files {
            let p = d.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        d
    }

    fn detected(files: &[(&str, &str)]) -> Option<(Runner, String)> {
        let d = at(files);
        test_cmd(d.path(), None, None)
            .ok()
            .map(|t| (t.runner, t.command))
    }

    #[test]
    fn each_ecosystem_is_detected_from_its_files() {
        let cargo = Some((Runner::Cargo, "cargo test --no-fail-fast".to_string()));
        assert_eq!(detected(&[("Cargo.toml", "[package]")]), cargo);
        let pytest = Some((Runner::Pytest, "python3 -m pytest -rA".to_string()));
        assert_eq!(
            detected(&[("pyproject.toml", "[tool.pytest.ini_options]")]),
            pytest
        );
        assert_eq!(detected(&[("tests/test_a.py", "")]), pytest);
        assert_eq!(detected(&[("conftest.py", "")]), pytest);
        let go = Some((Runner::Go, "go test -v ./...".to_string()));
        assert_eq!(detected(&[("go.mod", "module x")]), go);
        let jest = Some((Runner::Jest, "npx jest --json".to_string()));
        assert_eq!(
            detected(&[("package.json", r#"{"devDependencies":{"jest":"29"}}"#)]),
            jest
        );
        let vitest = Some((Runner::Jest, "npx vitest run --reporter=json".to_string()));
        assert_eq!(
            detected(&[("package.json", r#"{"devDependencies":{"vitest":"1"}}"#)]),
            vitest
        );
        assert_eq!(detected(&[("package.json", "{}")]), None);
        assert_eq!(detected(&[("README", "")]), None);
    }

    #[test]
    fn given_flags_win_and_a_command_without_a_format_is_refused() {
        let d = at(&[("Cargo.toml", "")]);
        let t = test_cmd(d.path(), Some("make check"), None).unwrap();
        assert_eq!(
            (t.runner, t.command.as_str()),
            (Runner::Cargo, "make check")
        );
        let t = test_cmd(d.path(), None, Some(Runner::Go)).unwrap();
        assert_eq!(t.command, "go test -v ./...");
        let empty = at(&[]);
        let e = test_cmd(empty.path(), Some("make check"), None).unwrap_err();
        assert!(e.to_string().contains("--runner"), "{e}");
        let e = test_cmd(empty.path(), None, None).unwrap_err();
        assert_eq!(e.kind(), "usage");
        assert!(test_cmd(d.path(), Some("  "), None).is_err());
    }
}
