//! `--test-cmd`: the user's own check, run after the peer in a fresh
//! checkout of the commit baton made (`checkout`).
//!
//! The command is a string the user typed for exactly this purpose, so it is
//! run the way they would run it: `sh -c <command>`, as one argv array (baton
//! never splices it into another command line, so nothing else is ever
//! interpreted by a shell). It runs in its own process group with stdin
//! closed, under the run's `--timeout`. Its stdout and stderr share one pipe
//! that a thread of baton's copies into `test.log` beside the run's logs,
//! keeping at most the last `log_max()` bytes (a test that prints without
//! end must not fill the disk; the end is what says why it failed). On
//! timeout or Ctrl-C/SIGTERM the whole group is stopped (SIGTERM, grace,
//! SIGKILL), as the peer would be.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::process::Stdio;
use std::thread;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::process;
use crate::result::Verification;

/// How much of the end of the output goes into `verification.output_tail`.
pub const TAIL_BYTES: usize = 4096;

/// The most of its output a test command's `test.log` keeps (its end).
pub const LOG_MAX: u64 = 16 << 20;

/// `LOG_MAX`, unless `BATON_TEST_LOG_MAX` lowers it. Internal and
/// undocumented for users (like `BATON_MAX_LINE`): the test of a cut log
/// need not push tens of megabytes through a debug build.
pub fn log_max() -> u64 {
    std::env::var("BATON_TEST_LOG_MAX")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|n| *n >= 1024)
        .map_or(LOG_MAX, |n| n.min(LOG_MAX))
}

/// Ctrl-C/SIGTERM/SIGHUP, captured from the moment it is installed (before
/// the peer starts), so a stop that lands between the peer's end and the
/// check's start is not lost. (Owned by `process`, the one launcher.)
pub use crate::process::Stop;

/// How the check ended, beyond what `Verification` says.
#[derive(Debug)]
pub struct Checked {
    /// Who confined the command (`run::confine::test`).
    pub sandbox: Option<crate::sandbox::SandboxReport>,
    pub verification: Verification,
    pub timed_out: bool,
    /// Stopped by this signal (the user interrupted baton).
    pub interrupted: Option<i32>,
    /// The bytes of output `test.log` does not keep (its start), when the
    /// command printed more than `log_max()`.
    pub log_dropped: u64,
}

impl Checked {
    /// The warning a result carries when `test.log` was cut, naming `log`.
    pub fn log_warning(&self, log: &Path) -> Option<String> {
        (self.log_dropped > 0).then(|| {
            format!(
                "the test command printed more than {} MiB: {} keeps the end of its output; \
                 the first {} bytes were dropped",
                log_max() >> 20,
                log.display(),
                self.log_dropped
            )
        })
    }
}

/// Where a test command runs and how it is confined: `top`, the fresh
/// checkout it may write (with no network at all), under `sandbox`.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    pub cwd: &'a Path,
    pub top: &'a Path,
    pub sandbox: crate::sandbox::Want,
}

/// Run `command` with `sh -c` in `at`, output to `log`.
pub fn run(
    command: &str,
    at: Place,
    log: &Path,
    env: &[(String, String)],
    timeout: Duration,
    grace: Duration,
    stop: &Stop,
) -> Result<Checked> {
    let argv = ["sh".to_string(), "-c".to_string(), command.to_string()];
    let mut checked = run_argv(&argv, at, log, env, timeout, grace, stop)?;
    checked.verification.command = command.to_string();
    Ok(checked)
}

/// Run `argv` (no shell) in `cwd`, output to `log`, as `run` does; the
/// council runs a test command a model wrote this way. The verification's
/// `command` is the argv joined by spaces.
pub fn run_argv(
    argv: &[String],
    at: Place,
    log: &Path,
    env: &[(String, String)],
    timeout: Duration,
    grace: Duration,
    stop: &Stop,
) -> Result<Checked> {
    let command = &argv.join(" ");
    let Some((program, args)) = argv.split_first() else {
        return Err(Error::Internal("an empty test command".into()));
    };
    let cwd = at.cwd;
    if let Some(sig) = stop.pending() {
        return Ok(not_run(command, sig));
    }
    // Confined as a peer is, in its checkout, with no network (a test
    // needs none, and a planted one must not phone home).
    let id = log.parent().and_then(|d| d.file_name()).map_or_else(
        || "test".to_string(),
        |n| format!("test-{}", n.to_string_lossy()),
    );
    let confined = crate::run::confine::test(at.sandbox, at.top, &id)?;
    // Read too: a cut copies the end of the log to its start.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(log)
        .map_err(|e| Error::io(format!("creating {}", log.display()), e))?;
    let (reader, out) = io::pipe().map_err(|e| Error::io("making the --test-cmd pipe", e))?;
    let err = out
        .try_clone()
        .map_err(|e| Error::io("making the --test-cmd pipe", e))?;
    // As for the peer: its own group, stdin closed, taken along if baton
    // is killed outright, stopped as a group at the deadline or on a signal.
    let mut cmd = process::Command::new(program)
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .deadline(timeout)
        .grace(grace);
    for (k, v) in env {
        cmd = cmd.env(k, v);
    }
    if let Some(w) = &confined.wrap {
        cmd = cmd.wrap(Box::new(w.clone()));
    }
    // baton's copies of the pipe's write end go with `cmd` once it is
    // spawned: the copier sees the end of the output once the command's
    // group has closed its own.
    let copier = thread::spawn(move || copy_capped(reader, file, log_max()));
    let ended = cmd.run_stoppable(stop).map_err(|e| Error::Spawn {
        binary: program.clone(),
        source: e,
    })?;
    let (status, timed_out, interrupted) = (ended.status, ended.timed_out, ended.interrupted);
    // A process that left the group may still hold the pipe: the log is
    // read as far as it got, without waiting for that one.
    let log_dropped = join_copier(copier);

    let code = status.as_ref().ok().and_then(|s| s.code());
    let mut tail = read_tail(log, TAIL_BYTES);
    if timed_out {
        tail.push_str(&format!(
            "\n[baton: --test-cmd did not finish within {}s; its process group was stopped]",
            timeout.as_secs_f64()
        ));
    } else if let Some(sig) = interrupted {
        tail.push_str(&format!(
            "\n[baton: --test-cmd stopped by {}]",
            process::signal_name(sig)
        ));
    }
    let report = confined.report.clone();
    drop(confined);
    Ok(Checked {
        sandbox: Some(report.clone()),
        verification: Verification {
            command: command.to_string(),
            exit_code: code,
            passed: code == Some(0) && !timed_out && interrupted.is_none(),
            output_tail: tail,
            commit: None,
            sandbox: serde_json::to_value(&report).ok(),
        },
        timed_out,
        interrupted,
        log_dropped,
    })
}

fn not_run(command: &str, sig: i32) -> Checked {
    Checked {
        verification: Verification {
            command: command.to_string(),
            exit_code: None,
            passed: false,
            output_tail: format!(
                "[baton: --test-cmd not run: stopped by {}]",
                process::signal_name(sig)
            ),
            commit: None,
            sandbox: None,
        },
        sandbox: None,
        timed_out: false,
        interrupted: Some(sig),
        log_dropped: 0,
    }
}

/// Wait up to a moment for the copier after the command's group is gone;
/// the bytes it dropped. (A process that escaped the group and still holds
/// the pipe keeps the copier reading: it is left to end on its own.)
fn join_copier(copier: thread::JoinHandle<u64>) -> u64 {
    let until = Instant::now() + Duration::from_secs(2);
    while !copier.is_finished() && Instant::now() < until {
        thread::sleep(Duration::from_millis(5));
    }
    if copier.is_finished() {
        copier.join().unwrap_or(0)
    } else {
        0
    }
}

/// Copy `from` into `log` until its end, keeping at most `max` bytes: past
/// that, the oldest half is dropped (the file then starts with a line
/// saying how much). Memory stays one buffer however much is printed.
/// Returns the bytes dropped.
fn copy_capped(mut from: io::PipeReader, log: File, max: u64) -> u64 {
    let mut buf = vec![0u8; 64 << 10];
    let mut len = 0u64;
    let mut dropped = 0u64;
    let mut ok = true;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        // A log that cannot be written (a full disk) does not stop the
        // command: its output is still drained.
        if !ok {
            continue;
        }
        ok = log.write_all_at(&buf[..n], len).is_ok();
        len += n as u64;
        if ok && len > max {
            match keep_end(&log, len, max / 2, &mut dropped) {
                Ok(kept) => len = kept,
                Err(_) => ok = false,
            }
        }
    }
    dropped
}

/// Keep the last `keep` bytes of the `len` in `log`, after a line saying
/// how many of the first were dropped (`dropped` counts them over every
/// cut). Copied forward in place, a buffer at a time. The new length.
fn keep_end(log: &File, len: u64, keep: u64, dropped: &mut u64) -> io::Result<u64> {
    let from = len.saturating_sub(keep);
    // Past the first cut the file starts with the header, which is not
    // output (every cut drops more than a header's length: `len > max`).
    let old_header = if *dropped > 0 {
        header(0).len() as u64
    } else {
        0
    };
    *dropped += from.saturating_sub(old_header);
    let head = header(*dropped);
    log.write_all_at(head.as_bytes(), 0)?;
    let mut at = head.len() as u64;
    let mut buf = vec![0u8; 64 << 10];
    let mut src = from;
    while src < len {
        let n = ((len - src) as usize).min(buf.len());
        log.read_exact_at(&mut buf[..n], src)?;
        log.write_all_at(&buf[..n], at)?;
        src += n as u64;
        at += n as u64;
    }
    log.set_len(at)?;
    Ok(at)
}

/// The first line of a cut `test.log`, always the same length (the count
/// padded) so that a later cut can tell it from the output.
fn header(dropped: u64) -> String {
    format!("[baton: the first {dropped:>20} bytes of the output were dropped; this is its end]\n")
}

/// The last `max` bytes of `path` as text, marked `…` where cut. The cut
/// falls on a line boundary when one is near the start of what is kept;
/// otherwise (one long line) it keeps the end of that line, from a
/// character boundary: the end of the output is what says why a check
/// failed, and the repair prompt is built from it.
pub fn read_tail(path: &Path, max: usize) -> String {
    let Ok(mut f) = File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(max as u64);
    if f.seek(SeekFrom::Start(start)).is_err() {
        return String::new();
    }
    let mut buf = Vec::with_capacity(max);
    let _ = f.take(max as u64).read_to_end(&mut buf);
    tail_text(&buf, start > 0)
}

/// `read_tail`'s text of `buf`, the end of a longer output when `cut`.
fn tail_text(buf: &[u8], cut: bool) -> String {
    if !cut {
        return String::from_utf8_lossy(buf).trim_end().to_string();
    }
    // What follows the first line break, when that break is within the
    // first quarter and something but blank space follows it.
    let at_line = buf
        .iter()
        .position(|b| *b == b'\n')
        .filter(|i| *i < buf.len() / 4)
        .map(|i| &buf[i + 1..])
        .filter(|rest| rest.iter().any(|b| !b.is_ascii_whitespace()));
    let text = match at_line {
        Some(rest) => format!("…\n{}", String::from_utf8_lossy(rest)),
        None => {
            // Mid-line: skip the continuation bytes of a character cut in two.
            let from = buf
                .iter()
                .take(3)
                .take_while(|b| (**b & 0xC0) == 0x80)
                .count();
            format!("…{}", String::from_utf8_lossy(&buf[from..]))
        }
    };
    text.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 29: a last line of 4 KiB or more left only "…".
    #[test]
    fn the_end_of_a_long_last_line_is_kept_from_a_character_boundary() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("log");
        // 3-byte characters, so the window starts inside one.
        let line = format!("start {} assertion failed: 1 == 2", "€".repeat(3000));
        std::fs::write(&p, format!("first line\n{line}\n")).unwrap();
        let t = read_tail(&p, TAIL_BYTES);
        assert!(t.starts_with('…'), "{t}");
        assert!(t.ends_with("assertion failed: 1 == 2"), "{t}");
        assert!(!t.contains('\u{FFFD}'), "cut inside a character");
        assert!(t.len() > TAIL_BYTES - 8, "{}", t.len());
        // A line break near the start of the window: cut there.
        let a = "a".repeat(50);
        std::fs::write(&p, format!("{}\n{a}\nlast\n", "x".repeat(100))).unwrap();
        assert_eq!(read_tail(&p, 60), format!("…\n{a}\nlast"));
    }

    #[test]
    fn a_log_past_its_limit_keeps_its_end() {
        use std::io::Write;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("test.log");
        let open = || {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&p)
                .unwrap()
        };
        let (r, mut w) = io::pipe().unwrap();
        let file = open();
        let copier = thread::spawn(move || copy_capped(r, file, 10_000));
        for i in 0..5000 {
            writeln!(w, "line {i:05}").unwrap();
        }
        drop(w);
        let dropped = copier.join().unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.len() <= 10_000, "{}", text.len());
        assert!(text.starts_with("[baton: the first "), "{}", &text[..100]);
        assert!(text.ends_with("line 04999\n"));
        // Every byte is either kept or counted as dropped.
        let total = 5000 * "line 00000\n".len() as u64;
        let kept = (text.len() - header(0).len()) as u64;
        assert_eq!(dropped + kept, total, "{dropped} + {kept}");
        let n: u64 = text["[baton: the first ".len()..]
            .trim_start()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(n, dropped);
        // Under the limit: as printed.
        let (r, mut w) = io::pipe().unwrap();
        let file = open();
        let copier = thread::spawn(move || copy_capped(r, file, 10_000));
        w.write_all(b"ok\n").unwrap();
        drop(w);
        assert_eq!(copier.join().unwrap(), 0);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "ok\n");
    }

    #[test]
    fn tail_is_bounded_and_starts_on_a_line() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("log");
        let text: String = (0..2000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&p, &text).unwrap();
        let t = read_tail(&p, 100);
        assert!(t.len() <= 100 + "…\n".len());
        assert!(t.starts_with("…\nline "), "{t}");
        assert!(t.ends_with("line 1999"));
        std::fs::write(&p, "short\n").unwrap();
        assert_eq!(read_tail(&p, 100), "short");
        assert_eq!(read_tail(&d.path().join("missing"), 100), "");
    }
}
