//! Validation of a candidate: its tests run twice, in checkouts of its
//! own, never in the user's work tree or index.
//!
//! A: the parent's tree with the hidden test patch applied; B: the
//! commit's tree. fail_to_pass are the tests that did not pass in A and
//! pass in B (at least one is needed); pass_to_pass those that passed in
//! both; a test that passed in A and does not pass in B rejects the
//! candidate (the commit broke it, or it is flaky). A candidate that passes
//! runs A once more: a fail_to_pass test that passes then failed by chance
//! and is dropped (no fail_to_pass left: `flaky`), as is a pass_to_pass
//! test that fails then. One rerun catches a test that fails at random,
//! not one that fails once in a hundred runs.
//!
//! Each checkout is a fresh repository in baton's state directory
//! (`checks/bench-*`, private, removed afterwards) that borrows the user's
//! objects through `objects/info/alternates`: `read-tree -u` writes the
//! tree, `git apply` the patch, and HEAD is the commit checked out, so a
//! test suite that asks git finds a repository. Why not `git worktree add`
//! in the user's repository: that registers each checkout there (visible in
//! `git worktree list` while mining runs, and left behind by a baton that
//! is killed); this way nothing of the user's repository is written at all.
//! The test command runs as a `--test-cmd` does (`worktree::verify::run`:
//! `sh -c`, its own process group, under baton's sandbox where there is
//! one, no network), under `--test-timeout`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::worktree::verify::{self, Place, Stop};

use super::outcomes::{self, Outcome, Outcomes};
use super::task::TestCmd;

/// Why a commit looked at did not become a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// A root commit: there is no parent to start from.
    RootCommit,
    /// It changes no test file.
    NoTests,
    /// It changes tests but no code (documentation is not code).
    NoSourceChange,
    /// A path it changes is not one a task may name (`..`, `.git/…`,
    /// control characters).
    BadPath,
    /// The hidden test patch does not apply to the parent's tree.
    PatchDoesNotApply,
    /// The test command printed no test outcome at the commit (it could not
    /// start, did not build, or timed out).
    TestCmdFailedToRun,
    /// No test fails at the parent (with the test patch) and passes at the
    /// commit.
    NoFailToPass,
    /// A test that passed at the parent (with the test patch) does not
    /// pass at the commit.
    BreaksPassing,
    /// Every fail_to_pass test passed when the parent's tests ran again:
    /// they fail by chance, not for want of the fix.
    Flaky,
    /// The task fails its own checks (`task::Task::check`: an empty
    /// message, say).
    BadTask,
    /// Mining was interrupted (Ctrl-C) before this candidate was judged.
    Interrupted,
}

/// What validating one candidate found.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Task {
        fail_to_pass: Vec<String>,
        pass_to_pass: Vec<String>,
    },
    Rejected(Reason, String),
}

/// What every validation of one mining shares.
#[derive(Debug, Clone)]
pub struct Setup {
    /// `checks/` in the project's state folder.
    pub checks: PathBuf,
    /// The user's object directory, borrowed by each checkout.
    pub objects: PathBuf,
    pub test_cmd: TestCmd,
    pub timeout: Duration,
    pub sandbox: crate::sandbox::Want,
}

impl Setup {
    /// For the repository at `top`.
    pub fn new(
        top: &Path,
        test_cmd: TestCmd,
        timeout: Duration,
        sandbox: crate::sandbox::Want,
    ) -> Result<Setup> {
        let mut g = crate::git::git(top);
        g.args(["rev-parse", "--path-format=absolute", "--git-common-dir"]);
        let out = g
            .output()
            .map_err(|e| Error::io("finding the repository's objects", e))?;
        let common = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !out.status.success() || common.is_empty() {
            return Err(Error::usage_hint(
                "not in a git repository",
                "run `baton bench mine` inside the repository to mine",
            ));
        }
        Ok(Setup {
            checks: crate::state_dir::ensure_sub(top, "checks")?,
            objects: PathBuf::from(common).join("objects"),
            test_cmd,
            timeout,
            sandbox,
        })
    }
}

/// Validate the candidate `commit` (first parent `parent`) whose hidden
/// tests are `patch`: A, B, and for a task A again (flaky tests out).
pub fn validate(
    s: &Setup,
    parent: &str,
    commit: &str,
    patch: &str,
    stop: &Stop,
) -> Result<Verdict> {
    let name = format!("bench-{}-{}", std::process::id(), &commit[..12]);
    let a = match side(s, &format!("{name}-a"), parent, Some(patch), stop)? {
        Side::Ran(o) => o,
        Side::NoPatch(why) => return Ok(Verdict::Rejected(Reason::PatchDoesNotApply, why)),
        Side::Stopped => return Ok(Verdict::Rejected(Reason::Interrupted, String::new())),
    };
    let b = match side(s, &format!("{name}-b"), commit, None, stop)? {
        Side::Ran(o) => o,
        Side::NoPatch(why) => return Ok(Verdict::Rejected(Reason::PatchDoesNotApply, why)),
        Side::Stopped => return Ok(Verdict::Rejected(Reason::Interrupted, String::new())),
    };
    let (fail_to_pass, pass_to_pass) = match judge(&a, &b) {
        Verdict::Task {
            fail_to_pass,
            pass_to_pass,
        } => (fail_to_pass, pass_to_pass),
        rejected => return Ok(rejected),
    };
    // Once more at the parent: a test that fails there only by chance
    // (the commonest false task) passes now.
    let again = match side(s, &format!("{name}-c"), parent, Some(patch), stop)? {
        Side::Ran(o) => o,
        Side::NoPatch(why) => return Ok(Verdict::Rejected(Reason::PatchDoesNotApply, why)),
        Side::Stopped => return Ok(Verdict::Rejected(Reason::Interrupted, String::new())),
    };
    Ok(steady(fail_to_pass, pass_to_pass, &again))
}

/// A task's lists without the tests that ran otherwise at the parent the
/// second time (`again`); `Flaky` when no fail_to_pass test is left.
pub fn steady(fail_to_pass: Vec<String>, pass_to_pass: Vec<String>, again: &Outcomes) -> Verdict {
    let passed = |t: &String| again.get(t) == Some(&Outcome::Passed);
    let (flaky, steady): (Vec<String>, Vec<String>) = fail_to_pass.into_iter().partition(passed);
    if steady.is_empty() {
        let names: Vec<&String> = flaky.iter().collect();
        return Verdict::Rejected(
            Reason::Flaky,
            format!(
                "failed at the parent once, then passed there: {}",
                list(&names)
            ),
        );
    }
    Verdict::Task {
        fail_to_pass: steady,
        pass_to_pass: pass_to_pass.into_iter().filter(passed).collect(),
    }
}

/// The verdict from the outcomes at the parent (`a`) and the commit (`b`).
pub fn judge(a: &Outcomes, b: &Outcomes) -> Verdict {
    if b.is_empty() {
        return Verdict::Rejected(
            Reason::TestCmdFailedToRun,
            "the test command printed no test outcome at the commit".into(),
        );
    }
    let passed = |o: &Outcomes, t: &str| o.get(t) == Some(&Outcome::Passed);
    let broken: Vec<&String> = a
        .iter()
        .filter(|(t, o)| **o == Outcome::Passed && !passed(b, t))
        .map(|(t, _)| t)
        .collect();
    if !broken.is_empty() {
        return Verdict::Rejected(
            Reason::BreaksPassing,
            format!("passed at the parent, not at the commit: {}", list(&broken)),
        );
    }
    let fail_to_pass: Vec<String> = b
        .iter()
        .filter(|(t, o)| **o == Outcome::Passed && !passed(a, t))
        .map(|(t, _)| t.clone())
        .collect();
    if fail_to_pass.is_empty() {
        return Verdict::Rejected(
            Reason::NoFailToPass,
            "every test that passes at the commit passes at the parent too".into(),
        );
    }
    let pass_to_pass = a
        .iter()
        .filter(|(t, o)| **o == Outcome::Passed && passed(b, t))
        .map(|(t, _)| t.clone())
        .collect();
    Verdict::Task {
        fail_to_pass,
        pass_to_pass,
    }
}

fn list(names: &[&String]) -> String {
    let mut s: Vec<&str> = names.iter().take(5).map(|n| n.as_str()).collect();
    let more = names.len().saturating_sub(5);
    let extra = format!("and {more} more");
    if more > 0 {
        s.push(&extra);
    }
    s.join(", ")
}

enum Side {
    Ran(Outcomes),
    NoPatch(String),
    Stopped,
}

/// Check `rev` out as `checks/<name>`, apply `patch`, run the tests, read
/// their outcomes; the checkout and its log are removed afterwards.
fn side(s: &Setup, name: &str, rev: &str, patch: Option<&str>, stop: &Stop) -> Result<Side> {
    let dir = s.checks.join(name);
    let log = s.checks.join(format!("{name}.log"));
    let _gone = Gone(vec![dir.clone(), log.clone()]);
    Gone::remove(&dir);
    crate::fsutil::ensure_private_dir(&dir)?;
    git_ok(&dir, &["init", "-q"], "making a checkout for the tests")?;
    let alternates = dir.join(".git/objects/info/alternates");
    std::fs::write(&alternates, format!("{}\n", s.objects.display()))
        .map_err(|e| Error::io(format!("writing {}", alternates.display()), e))?;
    git_ok(
        &dir,
        &[
            crate::git::PARALLEL_CHECKOUT[0],
            crate::git::PARALLEL_CHECKOUT[1],
            "read-tree",
            "-u",
            "--reset",
            rev,
        ],
        "checking the tree out",
    )?;
    git_ok(
        &dir,
        &["update-ref", "--no-deref", "HEAD", rev],
        "setting HEAD",
    )?;
    if let Some(p) = patch {
        let file = dir.join(".git/baton-test.patch");
        crate::fsutil::write_atomic(&file, p.as_bytes())?;
        let out = crate::git::git(&dir)
            .args(["apply", "--whitespace=nowarn"])
            .arg(&file)
            .output()
            .map_err(|e| Error::io("applying the test patch", e))?;
        if !out.status.success() {
            return Ok(Side::NoPatch(
                String::from_utf8_lossy(&out.stderr).trim().to_string(),
            ));
        }
    }
    let at = Place {
        cwd: &dir,
        top: &dir,
        sandbox: s.sandbox,
    };
    let command = s.test_cmd.for_tests(&[]);
    let checked = verify::run(
        &command,
        at,
        &log,
        &[],
        s.timeout,
        crate::run::KILL_GRACE,
        stop,
    )?;
    if checked.interrupted.is_some() {
        return Ok(Side::Stopped);
    }
    let text = std::fs::read(&log).unwrap_or_default();
    Ok(Side::Ran(outcomes::parse(
        s.test_cmd.runner,
        &String::from_utf8_lossy(&text),
    )))
}

fn git_ok(dir: &Path, args: &[&str], purpose: &str) -> Result<()> {
    let out = crate::git::git(dir)
        .args(args)
        .output()
        .map_err(|e| Error::io(purpose, e))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(Error::io(
            purpose,
            std::io::Error::other(String::from_utf8_lossy(&out.stderr).trim().to_string()),
        ))
    }
}

/// Paths removed when it is dropped (whatever the test command left,
/// read-only folders included).
struct Gone(Vec<PathBuf>);

impl Gone {
    fn remove(p: &Path) {
        use std::os::unix::fs::PermissionsExt;
        if p.is_dir() {
            // A test may leave folders without write permission.
            let mut stack = vec![p.to_path_buf()];
            while let Some(d) = stack.pop() {
                let _ = std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700));
                for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                    if e.file_type().is_ok_and(|t| t.is_dir()) {
                        stack.push(e.path());
                    }
                }
            }
            let _ = std::fs::remove_dir_all(p);
        } else {
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Drop for Gone {
    fn drop(&mut self) {
        for p in &self.0 {
            Gone::remove(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(pairs: &[(&str, Outcome)]) -> Outcomes {
        pairs.iter().map(|(n, o)| (n.to_string(), *o)).collect()
    }

    #[test]
    fn the_verdict_follows_the_two_runs() {
        use Outcome::*;
        let a = o(&[("old", Passed), ("new", Failed), ("skip", Skipped)]);
        let b = o(&[
            ("old", Passed),
            ("new", Passed),
            ("skip", Skipped),
            ("added", Passed),
        ]);
        assert_eq!(
            judge(&a, &b),
            Verdict::Task {
                fail_to_pass: vec!["added".into(), "new".into()],
                pass_to_pass: vec!["old".into()],
            }
        );
        let same = o(&[("old", Passed)]);
        assert!(matches!(
            judge(&same, &same),
            Verdict::Rejected(Reason::NoFailToPass, _)
        ));
        let broke = o(&[("old", Failed), ("new", Passed)]);
        assert!(
            matches!(judge(&a, &broke), Verdict::Rejected(Reason::BreaksPassing, m) if m.contains("old"))
        );
        assert!(matches!(
            judge(&a, &Outcomes::new()),
            Verdict::Rejected(Reason::TestCmdFailedToRun, _)
        ));
    }

    #[test]
    fn a_test_that_passes_at_the_parent_the_second_time_is_flaky() {
        use Outcome::*;
        let f2p = vec!["fixed".to_string(), "lucky".to_string()];
        let p2p = vec!["old".to_string(), "shaky".to_string()];
        let again = o(&[
            ("fixed", Failed),
            ("lucky", Passed),
            ("old", Passed),
            ("shaky", Failed),
        ]);
        assert_eq!(
            steady(f2p.clone(), p2p.clone(), &again),
            Verdict::Task {
                fail_to_pass: vec!["fixed".into()],
                pass_to_pass: vec!["old".into()],
            }
        );
        let all_lucky = o(&[("fixed", Passed), ("lucky", Passed)]);
        assert!(matches!(
            steady(f2p, p2p, &all_lucky),
            Verdict::Rejected(Reason::Flaky, m) if m.contains("lucky")
        ));
    }
}
