//! The header every record of background work reads as, whichever kind
//! wrote it: id, kind, where it stands, when it was created and ended, and
//! its folder (whose `lock` says whether its runner lives).
//!
//! The kinds keep their own `state.json` (0.3.2's records read unchanged);
//! each says only whether its payload has stopped (a terminal stage, or
//! one that waits for a person) and when it was last written. Where it
//! stands then follows from the one liveness rule, here and nowhere else.

use std::path::PathBuf;

use super::{Kind, runner_alive};

/// Where a piece of background work stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Not stopped, and its runner holds the lock.
    Running,
    /// Its record says it stopped (ended, or waits for a person).
    Stopped,
    /// Not stopped, and no runner holds the lock: the runner died mid-way.
    Lost,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub id: String,
    pub kind: Kind,
    pub standing: Standing,
    pub created_ms: u64,
    /// When it stopped, or was last written before it was lost; `None`
    /// while it runs.
    pub ended_ms: Option<u64>,
    /// The record's folder (its lock is `lock::path(dir)`).
    pub dir: PathBuf,
}

impl Header {
    /// The header of the record in `dir`: `stopped` and `last_ms` (when
    /// the record was last written) are its payload's to say.
    pub fn read(
        kind: Kind,
        id: &str,
        dir: PathBuf,
        created_ms: u64,
        stopped: bool,
        last_ms: u64,
    ) -> Header {
        let standing = if stopped {
            Standing::Stopped
        } else if runner_alive(&dir) {
            Standing::Running
        } else {
            Standing::Lost
        };
        Header {
            id: id.to_string(),
            kind,
            standing,
            created_ms,
            ended_ms: (standing != Standing::Running).then_some(last_ms.max(created_ms)),
            dir,
        }
    }

    /// Milliseconds it ran: until it ended, or until `now`.
    pub fn duration_ms(&self, now: u64) -> u64 {
        self.ended_ms.unwrap_or(now).saturating_sub(self.created_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standing_follows_the_lock_not_a_pid() {
        let d = tempfile::tempdir().unwrap();
        let read = |stopped| Header::read(Kind::Council, "x", d.path().into(), 10, stopped, 20);
        let lost = read(false);
        assert_eq!((lost.standing, lost.ended_ms), (Standing::Lost, Some(20)));
        assert_eq!(read(true).standing, Standing::Stopped);
        let runner = crate::store::lock::hold(d.path()).unwrap();
        let running = read(false);
        assert_eq!(
            (running.standing, running.ended_ms),
            (Standing::Running, None)
        );
        assert_eq!(running.duration_ms(15), 5);
        assert_eq!(
            read(true).standing,
            Standing::Stopped,
            "a runner finishing up"
        );
        drop(runner);
    }
}
