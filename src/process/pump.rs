//! The output pumps: copy a peer's stdout and stderr into its log files as
//! they arrive, and feed stdout lines to the agent's streaming parser.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self};
use std::time::Instant;

use crate::agent::{Parser, Signal};

use super::{MAX_LINE, Msg, STDERR_TAIL};

pub(super) fn pump_stdout(
    mut out: impl Read,
    mut log: File,
    parser: &Mutex<Option<Parser>>,
    activity: &AtomicU64,
    started: Instant,
    tx: &mpsc::Sender<Msg>,
) {
    let mut reader = BufReader::with_capacity(256 << 10, &mut out);
    let mut line: Vec<u8> = Vec::new();
    let mut overlong = false;
    loop {
        let buf = match reader.fill_buf() {
            Ok([]) => break,
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        activity.store(started.elapsed().as_millis() as u64, Ordering::Relaxed);
        // Log before parsing: the raw stream is the source of truth.
        let _ = log.write_all(buf);
        let n = buf.len();
        let mut rest = buf;
        let mut guard = parser.lock().unwrap();
        while let Some(i) = memchr(b'\n', rest) {
            let (head, tail) = rest.split_at(i);
            let signal = if overlong {
                overlong = false;
                line.clear();
                Signal::Nothing
            } else if line.is_empty() {
                feed(&mut guard, head)
            } else {
                line.extend_from_slice(head);
                let s = feed(&mut guard, &line);
                line.clear();
                s
            };
            if signal == Signal::TurnFinished {
                let _ = tx.send(Msg::TurnFinished);
            }
            rest = &tail[1..];
        }
        if !overlong {
            if line.len() + rest.len() > MAX_LINE {
                overlong = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(rest);
            }
        }
        drop(guard);
        reader.consume(n);
    }
    if !line.is_empty() && !overlong {
        let mut guard = parser.lock().unwrap();
        if feed(&mut guard, &line) == Signal::TurnFinished {
            let _ = tx.send(Msg::TurnFinished);
        }
    }
    let _ = log.flush();
}

/// Linux: a 1 MiB pipe instead of the default 64 KiB lets a fast peer
/// write in bigger bursts, so baton wakes up and copies less often, and
/// takes most prompts in one write. Best effort: the limit
/// (`/proc/sys/fs/pipe-max-size`) may be lower. Returns the pipe's capacity
/// (the POSIX minimum, 4096, where it cannot be known).
pub(super) fn enlarge_pipe(fd: &impl std::os::fd::AsRawFd) -> usize {
    #[cfg(target_os = "linux")]
    // SAFETY: fcntl on a pipe descriptor we own; failure leaves it unchanged.
    unsafe {
        libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, 1 << 20);
        let n = libc::fcntl(fd.as_raw_fd(), libc::F_GETPIPE_SZ);
        if n > 0 {
            return n as usize;
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
    4096
}

pub(super) fn feed(p: &mut Option<Parser>, line: &[u8]) -> Signal {
    match p {
        Some(p) => p.feed(line),
        None => Signal::Nothing,
    }
}

/// The C library's `memchr` (vectorised): finding line ends is a large part
/// of the pump's work when a peer prints hundreds of megabytes.
pub(super) fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    // SAFETY: the pointer and length describe a live slice; memchr reads
    // at most `len` bytes and returns null or a pointer inside it.
    let p = unsafe { libc::memchr(hay.as_ptr().cast(), i32::from(needle), hay.len()) };
    (!p.is_null()).then(|| p as usize - hay.as_ptr() as usize)
}

pub(super) fn pump_stderr(
    mut err: impl Read,
    mut log: File,
    tail: &Mutex<Vec<u8>>,
    activity: &AtomicU64,
    started: Instant,
) {
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match err.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        activity.store(started.elapsed().as_millis() as u64, Ordering::Relaxed);
        let _ = log.write_all(&buf[..n]);
        let mut t = tail.lock().unwrap();
        t.extend_from_slice(&buf[..n]);
        if t.len() > STDERR_TAIL {
            let cut = t.len() - STDERR_TAIL;
            t.drain(..cut);
        }
    }
    let _ = log.flush();
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
