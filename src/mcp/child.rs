//! One tool call as a child `baton` process: the same binary, the argv the
//! call's arguments became, no shell, its own process group; its one JSON
//! line read from stdout, its activity lines and warnings from stderr.
//!
//! A thread owns the child from spawn to reap. It spawns it, so the child's
//! parent-death signal (tied on Linux to the spawning thread) fires only if
//! the whole server dies, and it never exits before the child has.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::thread;

use tokio::sync::mpsc::UnboundedSender;

use crate::view::progress::LINES_PREFIX;

/// The stderr kept for an error message when a child printed no result.
const STDERR_TAIL: usize = 4 << 10;

/// What a call starts.
#[derive(Debug, Clone)]
pub struct Spawn {
    pub program: PathBuf,
    pub argv: Vec<OsString>,
    pub env: Vec<(String, String)>,
}

/// What the child's thread reports, in this order: `Started` (unless the
/// spawn failed), any number of `Activity`, then `Ended`.
#[derive(Debug)]
pub enum Event {
    /// The child runs, leading its own process group `pid`.
    Started(u32),
    /// A new one-line activity ("codex: editing src/parse.rs · 1.2k tokens").
    Activity(String),
    Ended(Ended),
}

#[derive(Debug, Default)]
pub struct Ended {
    pub stdout: Vec<u8>,
    /// The end of what it wrote on stderr (activity lines left out).
    pub stderr_tail: String,
    pub code: Option<i32>,
    pub signal: Option<i32>,
    /// Why it could not be started at all.
    pub spawn_error: Option<String>,
}

/// Start the child on its own thread; events go to `tx`.
pub fn start(s: Spawn, tx: UnboundedSender<Event>) {
    thread::spawn(move || {
        let ended = run(s, &tx);
        let _ = tx.send(Event::Ended(ended));
    });
}

fn run(s: Spawn, tx: &UnboundedSender<Event>) -> Ended {
    let mut cmd = Command::new(&s.program);
    cmd.args(&s.argv)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for (k, v) in &s.env {
        cmd.env(k, v);
    }
    #[cfg(target_os = "linux")]
    // SAFETY: one async-signal-safe syscall between fork and exec.
    unsafe {
        // The server killed outright: SIGTERM lets the child stop its peer
        // (its own supervisor does that on SIGTERM) instead of orphaning it.
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Ended {
                spawn_error: Some(format!("could not start {}: {e}", s.program.display())),
                ..Ended::default()
            };
        }
    };
    let _ = tx.send(Event::Started(child.id()));
    let stderr = child.stderr.take().map(|err| {
        let tx = tx.clone();
        thread::spawn(move || follow_stderr(err, &tx))
    });
    let mut stdout = Vec::new();
    if let Some(mut out) = child.stdout.take() {
        let _ = out.read_to_end(&mut stdout);
    }
    let stderr_tail = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
    let status = child.wait();
    Ended {
        stdout,
        stderr_tail,
        code: status.as_ref().ok().and_then(|s| s.code()),
        signal: status.as_ref().ok().and_then(|s| s.signal()),
        spawn_error: None,
    }
}

/// Activity lines become events; every other line goes on to the server's
/// own stderr (the host's log of the server) and into the kept tail.
fn follow_stderr(err: impl Read, tx: &UnboundedSender<Event>) -> String {
    let mut tail = String::new();
    let mut log = std::io::stderr();
    for line in BufReader::new(err).split(b'\n').map_while(|l| l.ok()) {
        let text = String::from_utf8_lossy(&line);
        if let Some(json) = text.strip_prefix(LINES_PREFIX) {
            if let Some(a) = activity(json) {
                let _ = tx.send(Event::Activity(a));
            }
            continue;
        }
        let _ = writeln!(log, "{text}");
        tail.push_str(&text);
        tail.push('\n');
        if tail.len() > 2 * STDERR_TAIL {
            let cut = tail.len() - STDERR_TAIL;
            let cut = (cut..tail.len())
                .find(|i| tail.is_char_boundary(*i))
                .unwrap_or(cut);
            tail.drain(..cut);
        }
    }
    tail
}

fn activity(json: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    v.get("activity")?.as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activity_lines_are_events_and_the_rest_is_kept() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let input = format!(
            "warning: one\n{LINES_PREFIX}{{\"activity\":\"codex: $ cargo test\",\"tokens\":12}}\n\
{LINES_PREFIX}not json\nwarning: two\n"
        );
        let tail = follow_stderr(input.as_bytes(), &tx);
        assert_eq!(tail, "warning: one\nwarning: two\n");
        match rx.try_recv() {
            Ok(Event::Activity(a)) => assert_eq!(a, "codex: $ cargo test"),
            other => panic!("{other:?}"),
        }
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn a_child_that_cannot_start_says_why() {
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let e = run(
            Spawn {
                program: "/nonexistent/baton".into(),
                argv: Vec::new(),
                env: Vec::new(),
            },
            &tx,
        );
        assert!(e.spawn_error.unwrap().contains("could not start"));
    }
}
