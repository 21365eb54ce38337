//! One tool call as a child `baton` process: the same binary, the argv the
//! call's arguments became, no shell, its own process group; its one JSON
//! line read from stdout, its activity lines and warnings from stderr.
//!
//! The argv goes on the child's stdin, not on its command line: Linux
//! refuses one argument of 128 KiB or more (`E2BIG`), which a task easily
//! is, and a command line is readable by every user of the machine
//! (`/proc/PID/cmdline`). The child is started as `baton __argv-on-stdin`
//! and reads its real arguments first thing (`argv_from_stdin`).
//!
//! A thread owns the child from spawn to reap. It spawns it, so the child's
//! parent-death signal (tied on Linux to the spawning thread) fires only if
//! the whole server dies, and it never exits before the child has.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::thread;

use tokio::sync::mpsc::UnboundedSender;

use crate::process;
use crate::view::progress::LINES_PREFIX;

/// The stderr kept for an error message when a child printed no result.
const STDERR_TAIL: usize = 4 << 10;

/// The one argument of a call's child: its arguments follow on stdin, each
/// ended by a NUL byte (no argument can hold one).
pub const ARGV_ON_STDIN: &str = "__argv-on-stdin";

/// The most a child reads as its arguments: more than one MCP message
/// (`transport::MAX_LINE`) can carry.
const MAX_ARGV: u64 = 2 * super::transport::MAX_LINE as u64;

/// `args` as given, or, for `baton __argv-on-stdin`, the program and the
/// arguments read from stdin (to its end).
pub fn argv_from_stdin(args: Vec<OsString>) -> std::io::Result<Vec<OsString>> {
    use std::os::unix::ffi::OsStringExt;
    if args.len() != 2 || args[1] != ARGV_ON_STDIN {
        return Ok(args);
    }
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_ARGV + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_ARGV {
        return Err(std::io::Error::other("the arguments on stdin are too long"));
    }
    let mut out = vec![args[0].clone()];
    if let Some(body) = bytes.strip_suffix(b"\0") {
        out.extend(
            body.split(|b| *b == 0)
                .map(|a| OsString::from_vec(a.to_vec())),
        );
    } else if !bytes.is_empty() {
        return Err(std::io::Error::other(
            "the arguments on stdin are cut short",
        ));
    }
    Ok(out)
}

/// `argv` as the child reads it.
fn encode(argv: &[OsString]) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    let mut b = Vec::new();
    for a in argv {
        b.extend_from_slice(a.as_bytes());
        b.push(0);
    }
    b
}

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
    // The server killed outright: SIGTERM lets the child stop its peer
    // (its own supervisor does that on SIGTERM) instead of orphaning it.
    let mut cmd = process::Command::new(&s.program)
        .arg(ARGV_ON_STDIN)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .parent_death(Some(libc::SIGTERM));
    for (k, v) in &s.env {
        cmd = cmd.env(k, v);
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
    // On its own thread: the child may end (or fill its stdout) before it
    // has read them all. Dropping the pipe ends its stdin.
    if let Some(mut stdin) = child.stdin.take() {
        let bytes = encode(&s.argv);
        thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        });
    }
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
    fn arguments_cross_stdin_as_they_were() {
        let argv: Vec<OsString> = ["run", "--agent=codex", "--", "", "a b\nc é"]
            .iter()
            .map(OsString::from)
            .collect();
        let bytes = encode(&argv);
        assert_eq!(bytes.iter().filter(|b| **b == 0).count(), argv.len());
        let body = bytes.strip_suffix(b"\0").unwrap();
        let back: Vec<OsString> = body
            .split(|b| *b == 0)
            .map(|a| OsString::from(String::from_utf8(a.to_vec()).unwrap()))
            .collect();
        assert_eq!(back, argv);
        // Any other command line is left as it is.
        let plain: Vec<OsString> = vec!["baton".into(), "run".into()];
        assert_eq!(argv_from_stdin(plain.clone()).unwrap(), plain);
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
