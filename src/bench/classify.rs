//! Which changed files of a commit are tests, which are code, which are
//! neither: the split of a mined commit into its hidden test patch and its
//! reference fix.
//!
//! By default the conventions of the ecosystems baton detects (a file is a
//! test when its path says so: Rust `tests/`, `*_test.rs`, `tests.rs`;
//! Python `test_*.py`, `*_test.py`, `tests/`, `conftest.py`; JS/TS
//! `*.test.*`, `*.spec.*`, `__tests__/`; Go `*_test.go`); `--tests GLOB`
//! replaces them. Rust unit tests inside a `#[cfg(test)]` module of a
//! source file are judged apart (`history::unit_test_files`), from the diff.
//! Documentation (`*.md`, `docs/`, `LICENSE`, …) is neither code nor test:
//! a commit that fixes a typo beside a test has no fix to hide.

use globset::{GlobSet, GlobSetBuilder};

use crate::error::{Error, Result};

/// What a changed file is, for mining.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Test,
    Code,
    /// Documentation and the like: neither half of a task.
    Other,
}

/// How test files are recognised.
#[derive(Debug, Clone)]
pub enum Patterns {
    /// The ecosystems' conventions.
    Conventions,
    /// `--tests GLOB`… (matched against the whole path; `*` stays inside
    /// one folder, `**` crosses them).
    Globs(GlobSet),
}

impl Patterns {
    /// The globs given, or the conventions when none are.
    pub fn new(globs: &[String]) -> Result<Patterns> {
        if globs.is_empty() {
            return Ok(Patterns::Conventions);
        }
        let mut b = GlobSetBuilder::new();
        for g in globs {
            let glob = globset::GlobBuilder::new(g)
                .literal_separator(true)
                .build()
                .map_err(|e| {
                    Error::usage_hint(
                        format!("--tests {g:?}: {e}"),
                        "a glob over paths from the repository's top, e.g. 'tests/**' or '**/*_spec.rb'",
                    )
                })?;
            b.add(glob);
        }
        let set = b
            .build()
            .map_err(|e| Error::usage_hint(format!("--tests: {e}"), "check the globs"))?;
        Ok(Patterns::Globs(set))
    }

    /// Whether conventions (not the user's globs) decide, so that the
    /// `#[cfg(test)]` rule for Rust applies too.
    pub fn conventional(&self) -> bool {
        matches!(self, Patterns::Conventions)
    }

    pub fn kind(&self, path: &str) -> Kind {
        let test = match self {
            Patterns::Conventions => conventional_test(path),
            Patterns::Globs(set) => set.is_match(path),
        };
        if test {
            Kind::Test
        } else if is_doc(path) {
            Kind::Other
        } else {
            Kind::Code
        }
    }
}

fn conventional_test(path: &str) -> bool {
    let (dirs, name) = match path.rsplit_once('/') {
        Some((d, n)) => (d, n),
        None => ("", path),
    };
    let in_dir = |d: &str| dirs.split('/').any(|c| c == d);
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) => (s, e),
        None => (name, ""),
    };
    match ext {
        "rs" => in_dir("tests") || stem.ends_with("_test") || name == "tests.rs",
        "py" => {
            in_dir("tests")
                || in_dir("test")
                || stem.starts_with("test_")
                || stem.ends_with("_test")
                || name == "conftest.py"
        }
        "go" => stem.ends_with("_test"),
        "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => {
            in_dir("__tests__") || stem.ends_with(".test") || stem.ends_with(".spec")
        }
        // Snapshots and fixtures beside the tests belong to them.
        _ => in_dir("__tests__") || in_dir("tests") && !is_doc(path),
    }
}

/// Documentation, licences, changelogs: not code.
fn is_doc(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let upper = name.to_ascii_uppercase();
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    path.starts_with("docs/")
        || path.starts_with("doc/")
        || matches!(ext.as_deref(), Some("md" | "rst" | "adoc" | "txt"))
        || [
            "LICENSE",
            "LICENCE",
            "CHANGELOG",
            "AUTHORS",
            "NOTICE",
            "README",
        ]
        .iter()
        .any(|p| upper.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(p: &Patterns, paths: &[&str]) -> Vec<Kind> {
        paths.iter().map(|x| p.kind(x)).collect()
    }

    #[test]
    fn rust_tests_by_convention() {
        let p = Patterns::Conventions;
        use Kind::*;
        assert_eq!(
            kinds(
                &p,
                &[
                    "tests/parse.rs",
                    "crates/a/tests/it/main.rs",
                    "src/lexer_test.rs",
                    "src/parser/tests.rs",
                    "src/lib.rs",
                    "src/testsuite.rs",
                    "build.rs",
                ]
            ),
            [Test, Test, Test, Test, Code, Code, Code]
        );
    }

    #[test]
    fn python_tests_by_convention() {
        let p = Patterns::Conventions;
        use Kind::*;
        assert_eq!(
            kinds(
                &p,
                &[
                    "test_api.py",
                    "pkg/api_test.py",
                    "tests/unit/helpers.py",
                    "conftest.py",
                    "pkg/api.py",
                    "pkg/testing.py",
                ]
            ),
            [Test, Test, Test, Test, Code, Code]
        );
    }

    #[test]
    fn js_and_go_tests_by_convention() {
        let p = Patterns::Conventions;
        use Kind::*;
        assert_eq!(
            kinds(
                &p,
                &[
                    "src/a.test.ts",
                    "src/b.spec.js",
                    "src/__tests__/c.tsx",
                    "src/__tests__/__snapshots__/c.tsx.snap",
                    "src/a.ts",
                    "cmd/x_test.go",
                    "cmd/x.go",
                    "src/contest.js",
                ]
            ),
            [Test, Test, Test, Test, Code, Test, Code, Code]
        );
    }

    #[test]
    fn documentation_is_neither() {
        let p = Patterns::Conventions;
        use Kind::*;
        assert_eq!(
            kinds(
                &p,
                &["README.md", "docs/x.html", "LICENSE-MIT", "notes.txt"]
            ),
            [Other, Other, Other, Other]
        );
    }

    #[test]
    fn globs_replace_the_conventions() {
        let p = Patterns::new(&["spec/**".into(), "*_check.sh".into()]).unwrap();
        use Kind::*;
        assert_eq!(
            kinds(
                &p,
                &["spec/a/b.rb", "x_check.sh", "sub/x_check.sh", "tests/a.rs"]
            ),
            [Test, Test, Code, Code]
        );
        assert!(!p.conventional());
        assert!(Patterns::new(&[]).unwrap().conventional());
        let e = Patterns::new(&["a[".into()]).unwrap_err();
        assert_eq!(e.kind(), "usage");
    }
}
