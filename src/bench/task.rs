//! A task set: a folder of plain JSON files, one per task (`<id>.json`),
//! beside a `set.json` that says how it was mined. Editable by hand, so
//! everything read back is checked here (ids, commits, paths, test names):
//! a task file is input from whoever could write the folder.

use std::path::{Component, Path};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The format of the files this baton writes and reads.
pub const FORMAT: u32 = 1;

/// The file beside the tasks that describes the set.
pub const SET_FILE: &str = "set.json";

/// One task: a commit of the repository's history turned into "make the
/// hidden tests pass from the parent's tree".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// Always 1 (`FORMAT`).
    pub format: u32,
    /// The task's name: its file is `<id>.json`. Lowercase letters, digits
    /// and `-`, 1 to 64 characters (mined: the commit's first 12 hex).
    pub id: String,
    /// The parent commit (40 hex): the tree the peer starts from.
    pub base: String,
    /// The commit the task was mined from (40 hex): the reference fix.
    pub commit: String,
    /// What the peer is told: the commit message (or a peer's description).
    pub task: String,
    /// Files the reference fix changed outside the tests (for the report;
    /// never shown to the peer).
    pub source_files: Vec<String>,
    /// Files of the hidden test patch, relative to the repository's top.
    pub test_files: Vec<String>,
    /// `git diff --binary --full-index base commit -- <test_files>`:
    /// applied over the peer's work before the tests run.
    pub test_patch: String,
    pub test_cmd: TestCmd,
    /// Tests that fail at `base` and pass at `commit`, both with the test
    /// patch applied: the ones the peer must make pass.
    pub fail_to_pass: Vec<String>,
    /// Tests that pass at `base` (with the patch) and at `commit`: the ones
    /// the peer must not break.
    pub pass_to_pass: Vec<String>,
    /// When it was mined (milliseconds since the epoch, UTC).
    pub mined_at_ms: u64,
    /// `baton <version>` that mined it.
    pub mined_by: String,
    /// The agent that wrote `task` from the failing tests (`--describe`),
    /// when not the commit message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub described_by: Option<String>,
    /// What the `--describe` peer spent on this task, whether its text was
    /// kept or refused: shown by `bench report` apart from the trials'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub describe_usage: Option<PeerUsage>,
}

/// One peer call's spending, as the usage ledger has it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PeerUsage {
    /// `AGENT` or `AGENT:MODEL`, as given.
    pub agent: String,
    /// Input + output tokens, when the CLI reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// Dollars, when the CLI reported them or baton could price the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    pub wall_ms: u64,
}

/// What `--describe` cost over a set's tasks (or one mining's): its own
/// line, never mixed with the trials' cost.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DescribeUsage {
    /// The describing agents, sorted.
    pub agents: Vec<String>,
    /// Peer calls (one per task described or tried).
    pub calls: u64,
    /// Tokens over the calls that reported them.
    pub tokens: u64,
    /// Dollars over every call; null when any call is unpriced.
    pub cost_usd: Option<f64>,
    /// Calls without a cost.
    pub unpriced_calls: u64,
    pub wall_ms: u64,
}

impl DescribeUsage {
    /// The sum of `usages`; `None` when there is none.
    pub fn sum<'a>(usages: impl Iterator<Item = &'a PeerUsage>) -> Option<DescribeUsage> {
        let all: Vec<&PeerUsage> = usages.collect();
        if all.is_empty() {
            return None;
        }
        let mut agents: Vec<String> = all.iter().map(|u| u.agent.clone()).collect();
        agents.sort();
        agents.dedup();
        let unpriced = all.iter().filter(|u| u.cost_usd.is_none()).count() as u64;
        Some(DescribeUsage {
            agents,
            calls: all.len() as u64,
            tokens: all.iter().filter_map(|u| u.tokens).sum(),
            cost_usd: (unpriced == 0).then(|| all.iter().filter_map(|u| u.cost_usd).sum()),
            unpriced_calls: unpriced,
            wall_ms: all.iter().map(|u| u.wall_ms).sum(),
        })
    }

    /// The line `--text` prints.
    pub fn line(&self) -> String {
        let cost = match self.cost_usd {
            Some(c) => format!("${c:.2}"),
            None => format!("cost unknown ({} call(s) unpriced)", self.unpriced_calls),
        };
        format!(
            "describing the tasks (--describe, not in the trials' cost): {} call(s) by {}, {} \
             tokens, {cost}",
            self.calls,
            self.agents.join(", "),
            self.tokens
        )
    }
}

/// How a task's tests run and how their outcomes are read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TestCmd {
    /// Which output format the per-test outcomes are read from.
    pub runner: Runner,
    /// Run as `--test-cmd` is (`sh -c`, under baton's sandbox where there
    /// is one). `{tests}` is replaced by the selected tests' names, each
    /// shell-quoted; without it the whole suite runs.
    pub command: String,
}

/// The test runners whose per-test outcomes baton reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Runner {
    /// libtest's `test NAME ... ok|FAILED|ignored` lines (`cargo test`).
    Cargo,
    /// pytest with `-rA`: `PASSED|FAILED|ERROR NODEID` summary lines.
    Pytest,
    /// `go test -v`: `--- PASS|FAIL: Name` lines.
    Go,
    /// jest or vitest with `--reporter=json`/`--json` on stdout.
    Jest,
}

/// What `set.json` says about the set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetInfo {
    /// Always 1.
    pub format: u32,
    /// The set's name (its folder's, when kept in baton's state).
    pub name: String,
    /// The repository it was mined from (its top, as it was then).
    pub repo: String,
    pub mined_at_ms: u64,
    pub mined_by: String,
    /// The options it was mined with (`--since`, `--max`, `--paths`, the
    /// test command), as given, for the record.
    #[serde(default)]
    pub options: serde_json::Map<String, serde_json::Value>,
}

/// A task id: lowercase letters, digits and `-`, 1 to 64 characters, not
/// starting with `-` (it names a file and reaches argv as a test name never).
pub fn valid_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && !id.starts_with('-')
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// 40 lowercase hex digits.
pub fn valid_sha(s: &str) -> bool {
    s.len() == 40
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A path inside the repository: relative, no `..`, nothing under `.git`.
pub fn valid_path(p: &str) -> bool {
    if p.is_empty() || p.contains('\0') {
        return false;
    }
    let path = Path::new(p);
    let mut first = true;
    for c in path.components() {
        match c {
            Component::Normal(n) => {
                if first && n == ".git" {
                    return false;
                }
                first = false;
            }
            Component::CurDir => {}
            _ => return false,
        }
    }
    !first
}

/// A test's name as a runner prints it: printable, no newline, at most
/// 1 KiB. It reaches a shell only quoted (`quote`).
pub fn valid_test_name(t: &str) -> bool {
    !t.is_empty() && t.len() <= 1024 && !t.chars().any(char::is_control)
}

/// `s` as one shell word: single-quoted, a `'` written `'\''`.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

impl TestCmd {
    /// The command line that runs `tests` (all of them when the command
    /// has no `{tests}`).
    pub fn for_tests(&self, tests: &[String]) -> String {
        let words: Vec<String> = tests.iter().map(|t| quote(t)).collect();
        self.command.replace("{tests}", &words.join(" "))
    }
}

impl Task {
    /// Every field a hand (or a hostile peer, if the folder was in its
    /// reach) could have made wrong, refused with the field named.
    pub fn check(&self) -> Result<()> {
        let bad = |what: String| {
            Err(Error::usage_hint(
                format!("task {:?}: {what}", self.id),
                "mine the set again, or correct the task file by hand (docs/bench.md)",
            ))
        };
        if self.format != FORMAT {
            return bad(format!(
                "format {} (this baton reads {FORMAT})",
                self.format
            ));
        }
        if !valid_id(&self.id) {
            return bad("the id must be 1-64 of a-z, 0-9 and -".into());
        }
        for (name, sha) in [("base", &self.base), ("commit", &self.commit)] {
            if !valid_sha(sha) {
                return bad(format!("{name} is not a 40-hex commit"));
            }
        }
        if self.task.trim().is_empty() {
            return bad("the task text is empty".into());
        }
        for p in self.source_files.iter().chain(&self.test_files) {
            if !valid_path(p) {
                return bad(format!("{p:?} is not a path inside the repository"));
            }
        }
        if self.test_files.is_empty() || self.test_patch.is_empty() {
            return bad("no hidden tests".into());
        }
        if self.fail_to_pass.is_empty() {
            return bad("fail_to_pass is empty: nothing to solve".into());
        }
        for t in self.fail_to_pass.iter().chain(&self.pass_to_pass) {
            if !valid_test_name(t) {
                return bad(format!("test name {t:?}"));
            }
        }
        if self.test_cmd.command.trim().is_empty() {
            return bad("the test command is empty".into());
        }
        Ok(())
    }
}

/// Read and check one task file.
pub fn read(path: &Path) -> Result<Task> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
    let t: Task = serde_json::from_str(&text).map_err(|e| {
        Error::usage_hint(
            format!("{}: not a task file: {e}", path.display()),
            "docs/bench.md describes the format (`baton schema bench-task`)",
        )
    })?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if stem != t.id {
        return Err(Error::usage_hint(
            format!("{}: its id is {:?}", path.display(), t.id),
            "a task file is named <id>.json",
        ));
    }
    t.check()?;
    Ok(t)
}

/// Every task of the set in `dir`, sorted by id (`set.json` and files that
/// are not `.json` left aside).
pub fn read_set(dir: &Path) -> Result<Vec<Task>> {
    let rd =
        std::fs::read_dir(dir).map_err(|e| Error::io(format!("reading {}", dir.display()), e))?;
    let mut tasks = Vec::new();
    for e in rd {
        let e = e.map_err(|e| Error::io(format!("reading {}", dir.display()), e))?;
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if name == SET_FILE || !name.ends_with(".json") {
            continue;
        }
        tasks.push(read(&e.path())?);
    }
    tasks.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(tasks)
}

/// Write a task as `<dir>/<id>.json` (atomically, private).
pub fn write(dir: &Path, t: &Task) -> Result<()> {
    t.check()?;
    let b = serde_json::to_vec_pretty(t).map_err(|e| Error::Internal(e.to_string()))?;
    crate::fsutil::write_atomic(&dir.join(format!("{}.json", t.id)), &b)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn describing_costs_sum_and_one_unpriced_call_makes_the_cost_unknown() {
        let u = |agent: &str, cost| PeerUsage {
            agent: agent.into(),
            tokens: Some(10),
            cost_usd: cost,
            wall_ms: 5,
        };
        assert_eq!(DescribeUsage::sum(std::iter::empty()), None);
        let both = [u("pi", Some(0.5)), u("codex", Some(0.25))];
        let s = DescribeUsage::sum(both.iter()).unwrap();
        assert_eq!(
            (s.calls, s.tokens, s.cost_usd, s.wall_ms),
            (2, 20, Some(0.75), 10)
        );
        assert_eq!(s.agents, ["codex", "pi"]);
        let one_unpriced = [u("pi", Some(0.5)), u("pi", None)];
        let s = DescribeUsage::sum(one_unpriced.iter()).unwrap();
        assert_eq!((s.cost_usd, s.unpriced_calls), (None, 1));
        assert!(
            s.line().ends_with("cost unknown (1 call(s) unpriced)"),
            "{}",
            s.line()
        );
    }

    pub fn sample() -> Task {
        Task {
            format: FORMAT,
            id: "0123456789ab".into(),
            base: "a".repeat(40),
            commit: "b".repeat(40),
            task: "Fix the empty-input case".into(),
            source_files: vec!["src/lib.rs".into()],
            test_files: vec!["tests/empty.rs".into()],
            test_patch: "diff --git a/tests/empty.rs b/tests/empty.rs\n".into(),
            test_cmd: TestCmd {
                runner: Runner::Cargo,
                command: "cargo test -- --exact {tests}".into(),
            },
            fail_to_pass: vec!["empty::parses".into()],
            pass_to_pass: vec!["full::parses".into()],
            mined_at_ms: 1,
            mined_by: "baton 0.3.2".into(),
            described_by: None,
            describe_usage: None,
        }
    }

    #[test]
    fn a_written_task_reads_back_the_same() {
        let d = tempfile::tempdir().unwrap();
        let t = sample();
        write(d.path(), &t).unwrap();
        std::fs::write(d.path().join(SET_FILE), "{}").unwrap();
        assert_eq!(read_set(d.path()).unwrap(), vec![t]);
    }

    /// What a case expects in the error, and the edit that makes it.
    type Case = (&'static str, fn(&mut Task));

    #[test]
    fn a_hand_edited_task_is_checked_field_by_field() {
        let cases: Vec<Case> = vec![
            ("id", |t| t.id = "../x".into()),
            ("base", |t| t.base = "HEAD".into()),
            ("commit", |t| t.commit = "--upload-pack=x".into()),
            ("path", |t| t.test_files = vec!["../../etc/passwd".into()]),
            ("path", |t| t.test_files = vec!["/etc/passwd".into()]),
            ("path", |t| {
                t.source_files = vec![".git/hooks/pre-commit".into()]
            }),
            ("test name", |t| t.fail_to_pass = vec!["a\nb".into()]),
            ("nothing to solve", |t| t.fail_to_pass.clear()),
            ("format", |t| t.format = 2),
        ];
        for (says, edit) in cases {
            let mut t = sample();
            edit(&mut t);
            let e = t.check().unwrap_err();
            assert_eq!(e.kind(), "usage", "{says}");
            assert!(
                e.to_string().contains(says) || says == "path",
                "{says}: {e}"
            );
        }
        sample().check().unwrap();
    }

    #[test]
    fn a_file_whose_name_is_not_its_id_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let t = sample();
        let b = serde_json::to_vec(&t).unwrap();
        std::fs::write(d.path().join("other.json"), b).unwrap();
        let e = read_set(d.path()).unwrap_err();
        assert!(e.to_string().contains("its id is"), "{e}");
    }

    #[test]
    fn test_names_reach_the_shell_quoted() {
        let c = TestCmd {
            runner: Runner::Pytest,
            command: "pytest -rA {tests}".into(),
        };
        let got = c.for_tests(&["t.py::a".into(), "x'; rm -rf ~; '".into()]);
        assert_eq!(got, r"pytest -rA 't.py::a' 'x'\''; rm -rf ~; '\'''");
        let all = TestCmd {
            runner: Runner::Go,
            command: "go test -v ./...".into(),
        };
        assert_eq!(all.for_tests(&["X".into()]), "go test -v ./...");
    }
}
