//! `Stop`: Ctrl-C/SIGTERM/SIGHUP heard by a child's waiter
//! (`Command::run_stoppable`), captured from the moment it is installed, so
//! a stop that lands between two children is not lost.

use std::io;
use std::process::ExitStatus;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::Duration;

use crate::error::{Error, Result};

pub(super) enum Ev {
    Signal(i32),
    Exited(io::Result<ExitStatus>),
}

/// Signals heard since `install` (or `following`), and the exit of the child
/// being waited for, on one channel.
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
    Following(super::Forward),
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
    pub fn following(ints: &super::Interrupts) -> Stop {
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

    pub(super) fn sender(&self) -> Sender<Ev> {
        self.tx.clone()
    }

    pub(super) fn recv_timeout(&self, d: Duration) -> std::result::Result<Ev, RecvTimeoutError> {
        self.rx.recv_timeout(d)
    }

    /// Stop the group `pgid` and wait for its leader's exit on this channel.
    pub(super) fn stop_leader(&self, pgid: libc::pid_t, grace: Duration) -> io::Result<ExitStatus> {
        super::stop_leader(pgid, grace, &self.rx, |e| match e {
            Ev::Exited(s) => Some(s),
            Ev::Signal(_) => None,
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
