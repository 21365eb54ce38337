//! The tailer: a running job's stdout log read from a remembered offset, a
//! bounded amount per wake, through the reducer into a `Live` summary.
//!
//! Only whole lines reach the reducer; a line longer than `MAX_LINE` is
//! skipped (bounded memory), as `logs` and the supervisor's pump do.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::time::SystemTime;

use serde::Serialize;

use super::activity::{Activity, Reducer, Step};
use crate::agent::Agent;
use crate::result::Usage;

const MAX_LINE: usize = 16 << 20;

/// The read buffer (kept between polls): a poll of a quiet log costs one
/// `fstat`, and a busy one no fresh allocation — with 50 peers streaming the
/// interactive view polls ~1,000 times a second.
const CHUNK: usize = 64 << 10;

/// What a job's activities add up to so far.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Live {
    /// The latest activity that says what the peer is doing.
    pub last: Option<Activity>,
    /// Files the peer said it changed, in first-touched order.
    pub files: Vec<String>,
    pub usage: Usage,
    pub plan: Option<Vec<Step>>,
    /// How many activities were seen.
    pub activities: u64,
}

impl Live {
    pub fn apply(&mut self, a: &Activity) {
        self.activities += 1;
        match a {
            Activity::Usage { usage } => {
                self.usage = usage.clone();
                return;
            }
            Activity::FileChange { path, .. } if !self.files.iter().any(|f| f == path) => {
                self.files.push(path.clone());
            }
            Activity::Plan { steps } => self.plan = Some(steps.clone()),
            // A command that went well leaves the command as what is being done.
            Activity::CommandEnd { failed: false, .. } => return,
            _ => {}
        }
        self.last = Some(a.clone());
    }

    /// The "now doing" line.
    pub fn doing(&self) -> Option<String> {
        self.last.as_ref().map(Activity::doing)
    }
}

/// Reads one log as it grows.
pub struct Tail {
    path: PathBuf,
    file: Option<File>,
    offset: u64,
    partial: Vec<u8>,
    overlong: bool,
    reducer: Reducer,
    buf: Vec<u8>,
    /// The log's modification time at the last poll (from the same `fstat`
    /// that sizes the read: the views need it, and a path `stat` costs a
    /// path walk per running job per frame).
    modified: Option<SystemTime>,
    pub live: Live,
}

impl Tail {
    pub fn new(path: PathBuf, agent: Agent) -> Tail {
        Tail {
            path,
            file: None,
            offset: 0,
            partial: Vec::new(),
            overlong: false,
            reducer: Reducer::new(agent),
            buf: Vec::new(),
            modified: None,
            live: Live::default(),
        }
    }

    /// Start no earlier than `keep` bytes before the end (a huge log is not
    /// read whole for a snapshot); the cut line is skipped.
    pub fn from_last(mut self, keep: u64) -> io::Result<Tail> {
        if self.open()? {
            let len = self.file.as_ref().expect("opened").metadata()?.len();
            if len > keep {
                self.offset = len - keep;
                self.overlong = true;
            }
        }
        Ok(self)
    }

    fn open(&mut self) -> io::Result<bool> {
        if self.file.is_none() {
            match File::open(&self.path) {
                Ok(f) => self.file = Some(f),
                // Not created yet: the peer has not started.
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Read at most `max` new bytes; the activities they completed. Returns
    /// fewer than `max` bytes' worth only when the log has no more yet.
    pub fn poll(&mut self, max: usize) -> io::Result<Vec<Activity>> {
        let mut out = Vec::new();
        if !self.open()? {
            return Ok(out);
        }
        let f = self.file.as_mut().expect("opened above");
        // Nothing new (the common case): one `fstat`, no read.
        let meta = f.metadata()?;
        self.modified = meta.modified().ok();
        let len = meta.len();
        if len <= self.offset {
            return Ok(out);
        }
        let mut left = max.min(usize::try_from(len - self.offset).unwrap_or(usize::MAX));
        let want = left.min(CHUNK);
        if self.buf.len() < want {
            self.buf.resize(want, 0);
        }
        let buf = &mut self.buf;
        while left > 0 {
            let want = left.min(buf.len());
            // `pread`: no seek before each read.
            let n = match f.read_at(&mut buf[..want], self.offset) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            self.offset += n as u64;
            left -= n;
            let mut b = &buf[..n];
            while let Some(i) = b.iter().position(|c| *c == b'\n') {
                let (head, rest) = b.split_at(i);
                if !self.overlong {
                    self.partial.extend_from_slice(head);
                    out.extend(self.reducer.feed(&self.partial));
                }
                self.partial.clear();
                self.overlong = false;
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
        }
        for a in &out {
            self.live.apply(a);
        }
        Ok(out)
    }

    /// The log's modification time as of the last poll (`None`: not seen yet).
    pub fn modified(&self) -> Option<SystemTime> {
        self.modified
    }

    /// How far the log has been read.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Read all there is now (in bounded steps); the activities.
    pub fn catch_up(&mut self) -> io::Result<Vec<Activity>> {
        let mut out = Vec::new();
        loop {
            let before = self.offset;
            out.extend(self.poll(1 << 20)?);
            if self.offset == before {
                return Ok(out);
            }
        }
    }

    /// Read everything left and flush the reducer (the log is complete).
    pub fn finish(&mut self) -> io::Result<Vec<Activity>> {
        let mut out = self.catch_up()?;
        let mut rest = Vec::new();
        if !self.partial.is_empty() && !self.overlong {
            rest.extend(self.reducer.feed(&std::mem::take(&mut self.partial)));
        }
        rest.extend(self.reducer.flush());
        for a in &rest {
            self.live.apply(a);
        }
        out.extend(rest);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn reads_from_the_remembered_offset_in_bounded_steps() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("stdout.log");
        let mut t = Tail::new(p.clone(), Agent::Codex);
        assert!(t.poll(1024).unwrap().is_empty(), "no log yet");
        let mut f = File::create(&p).unwrap();
        let cmd =
            br#"{"type":"item.started","item":{"type":"command_execution","command":"make"}}"#;
        f.write_all(cmd).unwrap();
        f.write_all(b"\n").unwrap();
        // Half a line: nothing yet, and a bounded read takes only 10 bytes.
        let msg = br#"{"type":"item.completed","item":{"type":"agent_message","text":"hi"}}"#;
        f.write_all(&msg[..20]).unwrap();
        let acts = t.poll(cmd.len() + 1).unwrap();
        assert_eq!(acts.len(), 1);
        assert_eq!(t.live.doing().unwrap(), "$ make");
        assert!(t.poll(10).unwrap().is_empty());
        f.write_all(&msg[20..]).unwrap();
        f.write_all(b"\n").unwrap();
        assert!(t.poll(1 << 20).unwrap().len() == 1);
        assert_eq!(t.live.doing().unwrap(), "» hi");
    }

    #[test]
    fn from_last_skips_the_cut_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("stdout.log");
        let line = br#"{"type":"item.completed","item":{"type":"agent_message","text":"x"}}"#;
        let mut f = File::create(&p).unwrap();
        for _ in 0..10 {
            f.write_all(line).unwrap();
            f.write_all(b"\n").unwrap();
        }
        let mut t = Tail::new(p, Agent::Codex)
            .from_last(line.len() as u64 + 5)
            .unwrap();
        assert_eq!(t.finish().unwrap().len(), 1);
    }
}
