//! The oracle: baton runs the test command itself after a writer's attempt
//! (a council's stage 7, each fan-out candidate), in a fresh checkout of the
//! attempt's commit (`checkout`: what the branch holds, nothing the writer
//! left beside it), and `git diff --check` over base..branch.
//!
//! A test command the user typed (`--test-cmd`) runs as they would run it,
//! `sh -c`; one a model wrote (a council chair's) is split into words and
//! run without a shell, so a model cannot smuggle a pipeline, redirection
//! or expansion into baton's own execution (such a command is refused and
//! the verification says why). Either way it runs in its own process
//! group, stdin closed, under a timeout that stops the whole group
//! (`worktree::verify`).

use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::run;

use super::attempt::Attempt;
use super::checkout::Checkout;
use super::repo;
use super::verify::{self as wverify, Stop};

/// What the oracle said. `command: None`: there is no test command, so
/// nothing was run and `passed` is false (nothing proves the change works).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    pub command: Option<String>,
    pub exit_code: Option<i32>,
    pub passed: bool,
    #[serde(default)]
    pub timed_out: bool,
    /// Stopped by this signal (the user interrupted baton).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<i32>,
    /// The end of stdout and stderr together (`worktree::verify::TAIL_BYTES`).
    pub output_tail: String,
    pub duration_ms: u64,
    /// `git diff --check base..branch`: one `path:line: problem` each.
    pub whitespace_errors: Vec<String>,
    /// Why the test command was not run, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
    /// The commit tested (in a fresh checkout of it); null when there was
    /// none to test.
    #[serde(default)]
    pub commit: Option<String>,
    /// The bytes of output `test.log` dropped (its start; it keeps the end).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub log_dropped: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The test command and how to run it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestCmd {
    pub text: String,
    /// `true` only for the user's own `--test-cmd` (run with `sh -c`);
    /// one a model wrote is run as plain words.
    pub shell: bool,
}

/// Run the oracle in the worktree `imp` describes, its output in `log`.
/// `timeout` stops a hanging command (its whole process group).
pub fn verify(
    imp: &Attempt,
    test: Option<&TestCmd>,
    log: &Path,
    timeout: Duration,
    stop: &Stop,
) -> Result<Verification> {
    // `git diff --check` reads only the commits, so it runs beside the test
    // command instead of before it (it is a git process on the way from
    // the peer's end to its tests otherwise).
    std::thread::scope(|s| {
        let check = imp.commit.as_ref().map(|head| {
            let (top, base) = (&imp.worktree.top, &imp.worktree.base);
            s.spawn(move || diff_check(top, base, head))
        });
        let v = run_tests(imp, test, log, timeout, stop);
        let whitespace_errors = match check {
            Some(h) => h
                .join()
                .map_err(|_| Error::Internal("git diff --check panicked".into()))??,
            None => Vec::new(),
        };
        v.map(|v| Verification {
            whitespace_errors,
            ..v
        })
    })
}

/// The test command's part of `verify` (`whitespace_errors` left empty).
fn run_tests(
    imp: &Attempt,
    test: Option<&TestCmd>,
    log: &Path,
    timeout: Duration,
    stop: &Stop,
) -> Result<Verification> {
    let mut v = Verification {
        command: test.map(|t| t.text.clone()),
        exit_code: None,
        passed: false,
        timed_out: false,
        interrupted: None,
        output_tail: String::new(),
        duration_ms: 0,
        whitespace_errors: Vec::new(),
        not_run: None,
        commit: imp.commit.clone(),
        log_dropped: 0,
    };
    let Some(test) = test else {
        v.not_run = Some("the plan names no test command".into());
        return Ok(v);
    };
    let Some(commit) = imp.commit.as_deref() else {
        v.not_run = Some("baton committed nothing to test".into());
        return Ok(v);
    };
    let argv = if test.shell {
        vec!["sh".to_string(), "-c".to_string(), test.text.clone()]
    } else {
        match crate::words::split(&test.text) {
            Ok(w) => w,
            Err(why) => {
                v.not_run = Some(format!(
                    "the plan's test command is not run without a shell: {why}; give it \
                     yourself with --test-cmd to run it with `sh -c`"
                ));
                return Ok(v);
            }
        }
    };
    let started = Instant::now();
    let c = match Checkout::make(&imp.worktree, commit) {
        Ok(c) => c,
        Err(e) => {
            v.not_run = Some(format!(
                "baton could not check {commit} out to test it: {e}"
            ));
            return Ok(v);
        }
    };
    let env = [
        ("BATON_WORKTREE".to_string(), c.top.display().to_string()),
        ("BATON_BRANCH".to_string(), imp.worktree.branch.clone()),
        ("BATON_COMMIT".to_string(), commit.to_string()),
    ];
    let rel = imp
        .run_plan
        .cwd
        .strip_prefix(&imp.worktree.path)
        .unwrap_or(Path::new(""));
    let checked = c
        .cwd(rel)
        .and_then(|cwd| wverify::run_argv(&argv, &cwd, log, &env, timeout, run::KILL_GRACE, stop));
    // A checkout that stays is only disk space: `worktree remove` and the
    // next check of this worktree take it away.
    let _ = c.remove();
    let checked = checked?;
    v.duration_ms = started.elapsed().as_millis() as u64;
    v.log_dropped = checked.log_dropped;
    v.exit_code = checked.verification.exit_code;
    v.passed = checked.verification.passed;
    v.timed_out = checked.timed_out;
    v.interrupted = checked.interrupted;
    v.output_tail = checked.verification.output_tail;
    Ok(v)
}

/// `git diff --check base head` in the user's repository (the commits are
/// in its object store; the worktree's own git files are the writer's).
pub fn diff_check(top: &Path, base: &str, head: &str) -> Result<Vec<String>> {
    let mut g = repo::git(top);
    g.arg("diff")
        .args(crate::git::DIFF)
        .args(["--check", "--no-color", base, head, "--"]);
    let out = g
        .output()
        .map_err(|e| Error::io("running git diff --check", e))?;
    // Exit 2 (or 1 with old gits) means "problems found"; anything the
    // command printed on stderr is a real failure.
    if !out.status.success() && out.stdout.is_empty() {
        return Err(Error::io(
            "running git diff --check",
            std::io::Error::other(String::from_utf8_lossy(&out.stderr).trim().to_string()),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        // The offending line itself follows each report, prefixed `+`/`-`.
        .filter(|l| !l.is_empty() && !l.starts_with(['+', '-', ' ']))
        .map(str::to_string)
        .collect())
}

/// The diff reviewers see: `git diff base head` in the user's repository.
pub fn diff_text(top: &Path, base: &str, head: &str) -> Result<String> {
    let mut g = repo::git(top);
    g.arg("diff")
        .args(crate::git::DIFF)
        .args(["--no-color", "--find-renames", base, head, "--"]);
    let out = repo::run(g, "reading the writer's diff", None)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}
