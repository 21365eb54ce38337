//! `--test-cmd`: the user's own check, run in the worktree after the peer.
//!
//! The command is a string the user typed for exactly this purpose, so it is
//! run the way they would run it: `sh -c <command>`, as one argv array (baton
//! never splices it into another command line, so nothing else is ever
//! interpreted by a shell). It runs in its own process group with stdin
//! closed, stdout and stderr together in `test.log` beside the run's logs,
//! under the run's `--timeout`. On timeout or Ctrl-C/SIGTERM the whole group
//! is stopped (SIGTERM, grace, SIGKILL), as the peer would be.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::process;
use crate::result::Verification;

/// How much of the end of the output goes into `verification.output_tail`.
pub const TAIL_BYTES: usize = 4096;

enum Ev {
    Signal(i32),
    Exited(io::Result<ExitStatus>),
}

/// Ctrl-C/SIGTERM/SIGHUP, captured from the moment it is installed (before
/// the peer starts), so a stop that lands between the peer's end and the
/// check's start is not lost.
pub struct Stop {
    tx: Sender<Ev>,
    rx: Receiver<Ev>,
    source: Source,
}

/// Where a `Stop` hears of signals.
enum Source {
    /// Its own handlers.
    Signals(signal_hook::iterator::Handle),
    /// An `Interrupts` (a fan-out candidate's, which baton may fire itself).
    #[allow(dead_code)] // Held for its drop.
    Following(process::Forward),
}

impl Stop {
    pub fn install() -> Result<Stop> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
            .map_err(|e| Error::io("installing signal handlers", e))?;
        let handle = signals.handle();
        let (tx, rx) = mpsc::channel();
        let fwd = tx.clone();
        thread::spawn(move || {
            for s in signals.forever() {
                if fwd.send(Ev::Signal(s)).is_err() {
                    break;
                }
            }
        });
        Ok(Stop {
            tx,
            rx,
            source: Source::Signals(handle),
        })
    }

    /// A `Stop` that hears what `ints` hears (their signals, and what is
    /// fired on them) instead of installing handlers of its own.
    pub fn following(ints: &process::Interrupts) -> Stop {
        let (tx, rx) = mpsc::channel();
        let fwd = tx.clone();
        let forward = ints.forward(Box::new(move |s| {
            let _ = fwd.send(Ev::Signal(s));
        }));
        Stop {
            tx,
            rx,
            source: Source::Following(forward),
        }
    }

    /// A signal received since `install`, if any.
    pub fn pending(&self) -> Option<i32> {
        self.rx.try_iter().find_map(|e| match e {
            Ev::Signal(s) => Some(s),
            Ev::Exited(_) => None,
        })
    }
}

impl Drop for Stop {
    fn drop(&mut self) {
        if let Source::Signals(h) = &self.source {
            h.close();
        }
    }
}

/// How the check ended, beyond what `Verification` says.
#[derive(Debug)]
pub struct Checked {
    pub verification: Verification,
    pub timed_out: bool,
    /// Stopped by this signal (the user interrupted baton).
    pub interrupted: Option<i32>,
}

/// Run `command` with `sh -c` in `cwd`, output to `log`.
pub fn run(
    command: &str,
    cwd: &Path,
    log: &Path,
    env: &[(String, String)],
    timeout: Duration,
    grace: Duration,
    stop: &Stop,
) -> Result<Checked> {
    let argv = ["sh".to_string(), "-c".to_string(), command.to_string()];
    let mut checked = run_argv(&argv, cwd, log, env, timeout, grace, stop)?;
    checked.verification.command = command.to_string();
    Ok(checked)
}

/// Run `argv` (no shell) in `cwd`, output to `log`, as `run` does; the
/// council runs a test command a model wrote this way. The verification's
/// `command` is the argv joined by spaces.
pub fn run_argv(
    argv: &[String],
    cwd: &Path,
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
    if let Some(sig) = stop.pending() {
        return Ok(not_run(command, sig));
    }
    let out = crate::fsutil::create_private(log)?;
    let err = out
        .try_clone()
        .map_err(|e| Error::io("opening the --test-cmd log", e))?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .process_group(0);
    for (k, v) in env {
        cmd.env(k, v);
    }
    #[cfg(target_os = "linux")]
    unsafe {
        // As for the peer: if baton is killed outright, take the check with it.
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| Error::Spawn {
        binary: program.clone(),
        source: e,
    })?;
    let pgid = child.id() as libc::pid_t;
    let tx = stop.tx.clone();
    thread::spawn(move || {
        let _ = tx.send(Ev::Exited(child.wait()));
    });

    let deadline = Instant::now() + timeout;
    let mut timed_out = false;
    let mut interrupted = None;
    let mut status = None;
    while status.is_none() {
        let wait = deadline.saturating_duration_since(Instant::now());
        match stop.rx.recv_timeout(wait) {
            Ok(Ev::Exited(s)) => status = Some(s),
            Ok(Ev::Signal(s)) => {
                interrupted = Some(s);
                break;
            }
            Err(RecvTimeoutError::Timeout) => {
                timed_out = true;
                break;
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(Error::Internal("--test-cmd channel closed".into()));
            }
        }
    }
    let status = match status {
        Some(s) => s,
        None => process::stop_leader(pgid, grace, &stop.rx, |e| match e {
            Ev::Exited(s) => Some(s),
            Ev::Signal(_) => None,
        }),
    };
    // Whatever the command left running in its group goes too.
    process::stop_group_leftovers(pgid, grace);

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
    Ok(Checked {
        verification: Verification {
            command: command.to_string(),
            exit_code: code,
            passed: code == Some(0) && !timed_out && interrupted.is_none(),
            output_tail: tail,
        },
        timed_out,
        interrupted,
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
        },
        timed_out: false,
        interrupted: Some(sig),
    }
}

/// The last `max` bytes of `path` as text, starting at a line boundary when cut.
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
    let mut text = String::from_utf8_lossy(&buf).into_owned();
    if start > 0 {
        if let Some(i) = text.find('\n') {
            text.drain(..=i);
        }
        text.insert_str(0, "…\n");
    }
    text.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

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
