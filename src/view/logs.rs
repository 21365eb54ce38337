//! `baton logs ID [--follow] [--raw]`: the peer's output so far, rendered for
//! people (`render`) or raw; with `--follow`, live until the job ends.
//!
//! Following blocks instead of polling: one thread sleeps on the job's lock
//! (woken by the kernel when the runner exits, as in `wait`), another on an
//! inotify watch of the job directory (woken when the peer's output grows).
//! Where inotify is not available (non-Linux), growth is checked every 250 ms
//! — the only poll in the job commands, and only while following.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread;

use super::render::Renderer;
use crate::agent::Agent;
use crate::error::{Error, Result};
use crate::job::store::{Job, Store};
use crate::output::Mode;
use crate::output::render::{Shape, clean};

/// A line longer than this is not rendered (bounded memory); `--raw` shows it.
const MAX_LINE: usize = 16 << 20;

pub fn logs(id: &std::ffi::OsStr, follow: bool, raw: bool, _mode: Mode) -> Result<i32> {
    let job = Store::here()?.open(id)?;
    let s = job.refresh()?;
    let agent = match job.read_spec() {
        Ok(sp) => sp.plan.agent,
        Err(_) => Agent::parse(&s.agent)?,
    };
    let mut watch = if follow && !s.status.is_terminal() {
        Some(Watch::start(&job)?)
    } else {
        None
    };
    let stdout = io::stdout();
    let mut out = Printer {
        w: stdout.lock(),
        renderer: (!raw).then(|| Renderer::new(agent)),
        partial: Vec::new(),
        overlong: false,
    };
    let mut tail = Tail {
        path: job.stdout_log(),
        file: None,
    };
    // A closed stdout (`| head`) ends the command quietly.
    let shown = (|| -> io::Result<()> {
        loop {
            // Looked at *before* reading, so the last read sees everything
            // the runner wrote before it exited.
            let ended = watch.as_ref().is_none_or(|w| w.ended);
            tail.copy_new(&mut out)?;
            out.w.flush()?;
            match watch.as_mut() {
                Some(w) if !ended => w.wait(),
                _ => break,
            }
        }
        out.finish()?;
        if out.renderer.is_some() {
            footer(&job, &mut out.w)?;
        }
        out.w.flush()
    })();
    match shown {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(Error::io(format!("printing the log of job {}", job.id), e))
        }
        _ => Ok(0),
    }
}

fn footer(job: &Job, w: &mut impl Write) -> io::Result<()> {
    match job.refresh() {
        Ok(s) if s.status.is_terminal() => {
            let summary = s.summary.unwrap_or_else(|| s.status.as_str().to_string());
            writeln!(
                w,
                "── {}: {}",
                s.status.as_str(),
                clean(&summary, Shape::Line)
            )
        }
        Ok(_) => writeln!(
            w,
            "── running; `baton logs --follow {}` to keep watching",
            job.id
        ),
        Err(_) => Ok(()),
    }
}

/// Reads what was appended to the log since the last call.
struct Tail {
    path: PathBuf,
    file: Option<File>,
}

impl Tail {
    fn copy_new(&mut self, out: &mut Printer<impl Write>) -> io::Result<()> {
        if self.file.is_none() {
            match File::open(&self.path) {
                Ok(f) => self.file = Some(f),
                // Not created yet: the runner has not started the peer.
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        let f = self.file.as_mut().expect("opened above");
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = match f.read(&mut buf) {
                Ok(0) => return Ok(()),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            out.bytes(&buf[..n])?;
        }
    }
}

struct Printer<W: Write> {
    w: W,
    /// `None` for `--raw`.
    renderer: Option<Renderer>,
    partial: Vec<u8>,
    overlong: bool,
}

impl<W: Write> Printer<W> {
    fn bytes(&mut self, mut b: &[u8]) -> io::Result<()> {
        if self.renderer.is_none() {
            return self.w.write_all(b);
        }
        while let Some(i) = b.iter().position(|c| *c == b'\n') {
            let (head, rest) = b.split_at(i);
            if !self.overlong {
                self.partial.extend_from_slice(head);
                let line = std::mem::take(&mut self.partial);
                self.line(&line)?;
            }
            self.overlong = false;
            self.partial.clear();
            b = &rest[1..];
        }
        if !self.overlong {
            if self.partial.len() + b.len() > MAX_LINE {
                self.overlong = true;
                self.partial = Vec::new();
            } else {
                self.partial.extend_from_slice(b);
            }
        }
        Ok(())
    }

    fn line(&mut self, line: &[u8]) -> io::Result<()> {
        let Some(r) = self.renderer.as_mut() else {
            return Ok(());
        };
        for l in r.feed(line) {
            writeln!(self.w, "{}", clean(&l, Shape::Block))?;
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        if !self.partial.is_empty() && !self.overlong {
            let line = std::mem::take(&mut self.partial);
            self.line(&line)?;
        }
        if let Some(r) = self.renderer.as_mut() {
            for l in r.flush() {
                writeln!(self.w, "{}", clean(&l, Shape::Block))?;
            }
        }
        Ok(())
    }
}

enum Event {
    Grew,
    Ended,
}

/// Wakes the follower when the log may have grown or the job ended.
struct Watch {
    rx: Receiver<Event>,
    ended: bool,
}

impl Watch {
    fn start(job: &Job) -> Result<Watch> {
        let (tx, rx) = mpsc::channel();
        let lock = job.open_lock()?;
        let end = tx.clone();
        thread::spawn(move || {
            let _ = lock.lock_shared();
            drop(lock);
            let _ = end.send(Event::Ended);
        });
        watch_growth(&job.dir, tx);
        Ok(Watch { rx, ended: false })
    }

    /// Block until something happened; then take every pending event.
    fn wait(&mut self) {
        let mut next = self.rx.recv().map_err(|_| mpsc::TryRecvError::Disconnected);
        loop {
            match next {
                Ok(Event::Ended) => self.ended = true,
                Ok(Event::Grew) => {}
                Err(mpsc::TryRecvError::Empty) => return,
                // Both threads gone: nothing more can happen.
                Err(mpsc::TryRecvError::Disconnected) => {
                    self.ended = true;
                    return;
                }
            }
            next = self.rx.try_recv();
        }
    }
}

#[cfg(target_os = "linux")]
fn watch_growth(dir: &Path, tx: Sender<Event>) {
    let Some(fd) = crate::sys::inotify::Inotify::new(false) else {
        return poll_growth(tx);
    };
    if fd.add(dir, libc::IN_MODIFY | libc::IN_CREATE).is_none() {
        return poll_growth(tx);
    }
    thread::spawn(move || {
        let mut buf = [0u8; 4096];
        loop {
            match fd.read(&mut buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Ok(n) if n > 0 => {}
                _ => break,
            }
            if tx.send(Event::Grew).is_err() {
                break;
            }
        }
    });
}

#[cfg(not(target_os = "linux"))]
fn watch_growth(_dir: &Path, tx: Sender<Event>) {
    poll_growth(tx)
}

fn poll_growth(tx: Sender<Event>) {
    thread::spawn(move || {
        while tx.send(Event::Grew).is_ok() {
            thread::sleep(std::time::Duration::from_millis(250));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printer_renders_whole_lines_across_reads() {
        let mut p = Printer {
            w: Vec::new(),
            renderer: Some(Renderer::new(Agent::Codex)),
            partial: Vec::new(),
            overlong: false,
        };
        let line =
            br#"{"type":"item.completed","item":{"type":"agent_message","text":"hi there"}}"#;
        let (a, b) = line.split_at(20);
        p.bytes(a).unwrap();
        assert!(p.w.is_empty());
        p.bytes(b).unwrap();
        p.bytes(b"\n").unwrap();
        p.finish().unwrap();
        assert_eq!(String::from_utf8(p.w).unwrap(), "» hi there\n");
    }

    #[test]
    fn watch_never_drops_the_end() {
        let (tx, rx) = mpsc::channel();
        let mut w = Watch { rx, ended: false };
        tx.send(Event::Grew).unwrap();
        w.wait();
        assert!(!w.ended);
        tx.send(Event::Grew).unwrap();
        tx.send(Event::Ended).unwrap();
        tx.send(Event::Grew).unwrap();
        w.wait();
        assert!(w.ended);
        let (tx, rx) = mpsc::channel::<Event>();
        let mut w = Watch { rx, ended: false };
        drop(tx);
        w.wait();
        assert!(w.ended);
    }

    #[test]
    fn raw_printer_copies_bytes() {
        let mut p = Printer {
            w: Vec::new(),
            renderer: None,
            partial: Vec::new(),
            overlong: false,
        };
        p.bytes(b"a\nb").unwrap();
        p.finish().unwrap();
        assert_eq!(p.w, b"a\nb");
    }
}
