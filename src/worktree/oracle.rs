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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Who confined the command (`run::confine::test`); absent when it did
    /// not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::sandbox::SandboxReport>,
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
        sandbox: None,
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
    let checked = c.cwd(rel).and_then(|cwd| {
        let at = wverify::Place {
            cwd: &cwd,
            top: &c.top,
            sandbox: imp.run_plan.sandbox,
        };
        wverify::run_argv(&argv, at, log, &env, timeout, run::KILL_GRACE, stop)
    });
    // A checkout that stays is only disk space: `worktree remove` and the
    // next check of this worktree take it away.
    let _ = c.remove();
    let checked = checked?;
    v.duration_ms = started.elapsed().as_millis() as u64;
    v.log_dropped = checked.log_dropped;
    v.sandbox = checked.sandbox.clone();
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

/// The most of a diff `diff_text` holds in memory (bytes); a council's
/// reviewers are shown less (`council::review::MAX_DIFF_BYTES`).
pub const DIFF_READ_MAX: usize = 1 << 20;

/// The diff reviewers see: `git diff base head` in the user's repository,
/// at most `DIFF_READ_MAX` bytes of it (`diff_capped`).
pub fn diff_text(top: &Path, base: &str, head: &str) -> Result<String> {
    diff_capped(top, base, head, DIFF_READ_MAX).map(|d| d.text)
}

/// A diff read with bounded memory (a writer can commit 100 MB): all of it
/// when it fits, else its head and its tail with a note between them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capped {
    pub text: String,
    /// The whole diff's size.
    pub bytes: u64,
    /// Bytes of it `text` leaves out (0: `text` is the whole diff).
    pub left_out: u64,
}

/// `git diff base head`, streamed: at most `max` bytes are kept (the first
/// three quarters and the last quarter, cut on line boundaries, when it is
/// longer), never the whole output.
pub fn diff_capped(top: &Path, base: &str, head: &str, max: usize) -> Result<Capped> {
    use std::io::Read;
    let purpose = "reading the writer's diff";
    let mut g = repo::git(top);
    g.arg("diff")
        .args(crate::git::DIFF)
        .args(["--no-color", "--find-renames", base, head, "--"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = g.spawn().map_err(|e| Error::io(purpose, e))?;
    let mut err = child.stderr.take().expect("stderr is piped");
    let said = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = (&mut err).take(16 << 10).read_to_end(&mut b);
        let _ = std::io::copy(&mut err, &mut std::io::sink());
        b
    });
    let mut out = child.stdout.take().expect("stdout is piped");
    let mut keep = HeadTail::new(max);
    let mut buf = vec![0u8; 64 << 10];
    let read = loop {
        match out.read(&mut buf) {
            Ok(0) => break Ok(()),
            Ok(n) => keep.push(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
    };
    drop(out);
    let status = child.wait().map_err(|e| Error::io(purpose, e))?;
    let said = said.join().unwrap_or_default();
    read.map_err(|e| Error::io(purpose, e))?;
    if !status.success() {
        let said = String::from_utf8_lossy(&said);
        let msg = said
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("fatal:") || l.starts_with("error:"))
            .collect::<Vec<_>>()
            .join("; ");
        let msg = if msg.is_empty() {
            format!("git exited with {status}")
        } else {
            msg
        };
        return Err(Error::io(purpose, std::io::Error::other(msg)));
    }
    Ok(keep.finish())
}

/// The first `max` bytes of a stream and a window on its last `max / 4`,
/// and how long it was.
struct HeadTail {
    max: usize,
    head: Vec<u8>,
    tail: Vec<u8>,
    bytes: u64,
}

impl HeadTail {
    fn new(max: usize) -> HeadTail {
        HeadTail {
            max,
            head: Vec::new(),
            tail: Vec::new(),
            bytes: 0,
        }
    }

    fn push(&mut self, b: &[u8]) {
        self.bytes += b.len() as u64;
        let room = self.max.saturating_sub(self.head.len()).min(b.len());
        self.head.extend_from_slice(&b[..room]);
        let t = self.max / 4;
        self.tail.extend_from_slice(b);
        // Trimmed in bulk: a copy per `t` bytes streamed, not per read.
        if self.tail.len() > 2 * t {
            self.tail.drain(..self.tail.len() - t);
        }
    }

    fn finish(self) -> Capped {
        if self.bytes <= self.max as u64 {
            return Capped {
                text: String::from_utf8_lossy(&self.head).into_owned(),
                bytes: self.bytes,
                left_out: 0,
            };
        }
        let t = self.max / 4;
        // The last `t` bytes start after the first `max - t`: no overlap.
        let head = &self.head[..self.max - t];
        let head = match head.iter().rposition(|b| *b == b'\n') {
            Some(i) => &head[..=i],
            None => head,
        };
        let tail = &self.tail[self.tail.len().saturating_sub(t)..];
        let tail = match tail.iter().position(|b| *b == b'\n') {
            Some(i) => &tail[i + 1..],
            None => tail,
        };
        let left_out = self.bytes - head.len() as u64 - tail.len() as u64;
        Capped {
            text: format!(
                "{}[baton: {left_out} bytes of this diff ({} in all) are left out here; read \
                 the branch for them]\n{}",
                String::from_utf8_lossy(head),
                self.bytes,
                String::from_utf8_lossy(tail)
            ),
            bytes: self.bytes,
            left_out,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(chunks: &[&[u8]], max: usize) -> Capped {
        let mut k = HeadTail::new(max);
        for c in chunks {
            k.push(c);
        }
        k.finish()
    }

    #[test]
    fn a_diff_that_fits_is_kept_whole() {
        let c = read(&[b"a\n", b"b\n"], 4);
        assert_eq!((c.text.as_str(), c.bytes, c.left_out), ("a\nb\n", 4, 0));
    }

    #[test]
    fn a_long_diff_keeps_its_head_and_tail_on_line_boundaries() {
        let lines: Vec<String> = (0..10_000).map(|i| format!("line {i:05}\n")).collect();
        let all = lines.concat();
        // Fed in uneven pieces, as a pipe gives them.
        let pieces: Vec<&[u8]> = all.as_bytes().chunks(777).collect();
        let c = read(&pieces, 4000);
        assert_eq!(c.bytes, all.len() as u64);
        assert!(
            c.text.starts_with("line 00000\nline 00001\n"),
            "{}",
            &c.text[..40]
        );
        assert!(c.text.ends_with("line 09999\n"));
        let (head, rest) = c.text.split_once("[baton: ").unwrap();
        let (note, tail) = rest.split_once('\n').unwrap();
        assert!(head.len() <= 3000 && head.ends_with('\n'), "{}", head.len());
        assert!(
            tail.len() <= 1000 && tail.starts_with("line "),
            "{}",
            tail.len()
        );
        assert_eq!(c.left_out, c.bytes - head.len() as u64 - tail.len() as u64);
        assert!(
            note.starts_with(&format!(
                "{} bytes of this diff ({} in all)",
                c.left_out, c.bytes
            )),
            "{note}"
        );
        // Every kept line is whole.
        for l in head.lines().chain(tail.lines()) {
            assert!(l.len() == 10 && l.starts_with("line "), "{l:?}");
        }
    }

    #[test]
    fn a_diff_just_over_the_limit_and_one_without_newlines() {
        let c = read(&[&[b'x'; 4001]], 4000);
        assert_eq!(c.left_out, 1);
        assert!(c.text.len() < 4000 + 120);
        let c = read(&[&b"\xff".repeat(9000)], 400);
        assert_eq!(c.bytes, 9000);
        assert!(c.text.contains("[baton: 8600 bytes"), "{}", c.text);
    }
}
