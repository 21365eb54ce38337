//! The output pumps: copy a peer's stdout and stderr into its log files as
//! they arrive, and feed stdout lines to the agent's streaming parser.
//! Lines that are not UTF-8 or longer than `max_line()` are mended, and a
//! log that cannot be written stops there: both become warnings.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::agent::{Parser, Signal};

use super::{Msg, STDERR_TAIL, max_line};

/// A log file that stops being written at its first failure (a full disk),
/// leaving a note that it is incomplete: the output is still parsed.
pub(super) struct Log {
    file: Option<File>,
    name: &'static str,
    notes: Arc<Mutex<Vec<String>>>,
}

impl Log {
    pub(super) fn new(file: File, name: &'static str, notes: &Arc<Mutex<Vec<String>>>) -> Log {
        Log {
            file: Some(file),
            name,
            notes: notes.clone(),
        }
    }

    fn write(&mut self, b: &[u8]) {
        if let Some(f) = &mut self.file
            && let Err(e) = f.write_all(b)
        {
            self.file = None;
            self.notes.lock().unwrap().push(format!(
                "{} is incomplete: writing it failed ({e}); the result was read from the \
                 output itself",
                self.name
            ));
        }
    }
}

/// What the stdout pump tells the result about lines it had to mend.
#[derive(Default)]
struct Mended {
    not_utf8: u64,
    cut: u64,
}

impl Mended {
    fn notes(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.not_utf8 > 0 {
            v.push(format!(
                "{} line(s) of the peer's output were not valid UTF-8; they were read with the \
                 invalid bytes replaced by U+FFFD (the raw bytes are in log_path)",
                self.not_utf8
            ));
        }
        if self.cut > 0 {
            v.push(format!(
                "{} line(s) of the peer's output were longer than {} MiB; only their first {} \
                 MiB were read, so the message may be truncated (the whole line is in log_path)",
                self.cut,
                max_line() as f64 / 1048576.0,
                max_line() as f64 / 1048576.0
            ));
        }
        v
    }
}

/// What the stdout pump shares with the supervisor.
pub(super) struct Pump<'a> {
    pub activity: &'a AtomicU64,
    /// Set while it parses what it read (not waiting on the pipe).
    pub parsing: &'a AtomicBool,
    pub started: Instant,
    pub tx: &'a mpsc::Sender<Msg>,
    pub notes: &'a Mutex<Vec<String>>,
}

pub(super) fn pump_stdout(
    mut out: impl Read,
    mut log: Option<Log>,
    parser: &Mutex<Option<Parser>>,
    pump: &Pump,
) {
    let Pump {
        activity,
        parsing,
        started,
        tx,
        notes,
    } = *pump;
    let mut reader = BufReader::with_capacity(256 << 10, &mut out);
    let mut line: Vec<u8> = Vec::new();
    // The current line passed MAX_LINE: `line` holds its first MAX_LINE
    // bytes and the rest is skipped up to its end.
    let mut overlong = false;
    let mut mended = Mended::default();
    let limit = max_line();
    loop {
        let buf = match reader.fill_buf() {
            Ok([]) => break,
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        activity.store(started.elapsed().as_millis() as u64, Ordering::Relaxed);
        parsing.store(true, Ordering::Relaxed);
        // Log before parsing: the raw stream is the source of truth.
        if let Some(l) = &mut log {
            l.write(buf);
        }
        let n = buf.len();
        let mut rest = buf;
        let mut guard = parser.lock().unwrap();
        while let Some(i) = memchr(b'\n', rest) {
            let (head, tail) = rest.split_at(i);
            let signal = if overlong {
                overlong = false;
                let kept = std::mem::take(&mut line);
                feed_cut(&mut guard, &kept, &mut mended)
            } else if line.is_empty() {
                feed(&mut guard, head, &mut mended)
            } else {
                line.extend_from_slice(head);
                let s = feed(&mut guard, &line, &mut mended);
                line.clear();
                s
            };
            send(tx, signal);
            rest = &tail[1..];
        }
        if !overlong {
            if line.len() + rest.len() > limit {
                overlong = true;
                let room = limit - line.len();
                line.extend_from_slice(&rest[..room]);
            } else {
                line.extend_from_slice(rest);
            }
        }
        drop(guard);
        reader.consume(n);
        parsing.store(false, Ordering::Relaxed);
    }
    parsing.store(true, Ordering::Relaxed);
    if !line.is_empty() {
        let mut guard = parser.lock().unwrap();
        let s = if overlong {
            feed_cut(&mut guard, &line, &mut mended)
        } else {
            feed(&mut guard, &line, &mut mended)
        };
        send(tx, s);
    }
    notes.lock().unwrap().extend(mended.notes());
}

/// Pass what a line told the parser on to the supervisor.
fn send(tx: &mpsc::Sender<Msg>, s: Signal) {
    let m = match s {
        Signal::Nothing => return,
        Signal::TurnFinished => Msg::TurnFinished,
        Signal::Failing(f) => Msg::Failing(f),
    };
    let _ = tx.send(m);
}

/// Linux: a 1 MiB pipe instead of the default 64 KiB lets a fast peer
/// write in bigger bursts, so baton wakes up and copies less often, and
/// takes most prompts in one write. Best effort: the limit
/// (`/proc/sys/fs/pipe-max-size`) may be lower. Returns the pipe's capacity
/// (the POSIX minimum, 4096, where it cannot be known).
pub(super) fn enlarge_pipe(fd: &impl std::os::fd::AsFd) -> usize {
    crate::sys::fd::enlarge_pipe(fd.as_fd(), 1 << 20)
}

/// Feed one line; one that is not UTF-8 is fed with its bad bytes replaced
/// (a JSON parser refuses it whole, and with it the peer's final message).
fn feed(p: &mut Option<Parser>, line: &[u8], mended: &mut Mended) -> Signal {
    let Some(p) = p else {
        return Signal::Nothing;
    };
    if std::str::from_utf8(line).is_ok() {
        return p.feed(line);
    }
    mended.not_utf8 += 1;
    p.feed(String::from_utf8_lossy(line).as_bytes())
}

/// Feed the first `MAX_LINE` bytes of a longer line, closed into JSON.
fn feed_cut(p: &mut Option<Parser>, kept: &[u8], mended: &mut Mended) -> Signal {
    mended.cut += 1;
    match crate::process::json_cut::close(kept) {
        Some(closed) => feed(p, &closed, &mut Mended::default()),
        None => Signal::Nothing,
    }
}

/// The C library's `memchr` (vectorised): finding line ends is a large part
/// of the pump's work when a peer prints hundreds of megabytes.
pub(super) fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    crate::sys::fd::memchr(needle, hay)
}

/// Longest stderr line the parser is shown (the rest of it is only logged):
/// retry notices are short, stack traces need not be read whole.
const STDERR_LINE: usize = 16 << 10;

pub(super) fn pump_stderr(
    mut err: impl Read,
    mut log: Option<Log>,
    tail: &Mutex<Vec<u8>>,
    parser: &Mutex<Option<Parser>>,
    activity: &AtomicU64,
    started: Instant,
    tx: &mpsc::Sender<Msg>,
) {
    let mut buf = vec![0u8; 64 << 10];
    let mut line: Vec<u8> = Vec::new();
    loop {
        let n = match err.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        activity.store(started.elapsed().as_millis() as u64, Ordering::Relaxed);
        if let Some(l) = &mut log {
            l.write(&buf[..n]);
        }
        {
            let mut t = tail.lock().unwrap();
            t.extend_from_slice(&buf[..n]);
            if t.len() > STDERR_TAIL {
                let cut = t.len() - STDERR_TAIL;
                t.drain(..cut);
            }
        }
        let mut rest = &buf[..n];
        while !rest.is_empty() {
            let (head, done) = match memchr(b'\n', rest) {
                Some(i) => (&rest[..i], Some(i + 1)),
                None => (rest, None),
            };
            let room = STDERR_LINE.saturating_sub(line.len());
            line.extend_from_slice(&head[..head.len().min(room)]);
            match done {
                Some(i) => {
                    feed_stderr(parser, &line, tx);
                    line.clear();
                    rest = &rest[i..];
                }
                None => rest = &[],
            }
        }
    }
    if !line.is_empty() {
        feed_stderr(parser, &line, tx);
    }
}

fn feed_stderr(parser: &Mutex<Option<Parser>>, line: &[u8], tx: &mpsc::Sender<Msg>) {
    let text = String::from_utf8_lossy(line);
    let s = match parser.lock().unwrap().as_mut() {
        Some(p) => p.feed_stderr(text.as_bytes()),
        None => return,
    };
    send(tx, s);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memchr_finds_the_first_match() {
        assert_eq!(memchr(b'\n', b"ab\ncd\n"), Some(2));
        assert_eq!(memchr(b'\n', b"abcd"), None);
        assert_eq!(memchr(b'\n', b""), None);
        assert_eq!(memchr(b'\n', &b"x\n"[1..]), Some(0));
    }
}
