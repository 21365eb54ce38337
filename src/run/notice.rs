//! A foreground run's or a job's notifications, sent by the process that
//! owns it: its end (`Notice::ended`) and its stalls (`Notice::stalls`, a
//! peer silent for longer than `[notify] stall_after`, `notify::stalls`).
//! Runs inside another piece of work (fan-out candidates and judges,
//! council members, bench trials) get no `Notice`: their parent announces
//! their ends once, and their stalls as its own (`group::stalls`).

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::notify::stalls::{self, Stalls};
use crate::notify::{self, Choice, Event, Origin, Trigger, Work};
use crate::result::RunResult;

/// Who is told about one run or job, and as what.
#[derive(Debug, Clone)]
pub struct Notice {
    pub work: Work,
    pub choice: Choice,
    pub origin: Origin,
    /// The run's or job's id.
    pub id: Option<String>,
    /// The repository it works in.
    pub repo: PathBuf,
    /// Its record folder: where what each channel did is kept.
    pub record: Option<PathBuf>,
}

impl Notice {
    /// The work ended with `r`: `ended`, or `stopped` for a failure kind
    /// that waits for the user.
    pub fn ended(&self, r: &RunResult) {
        let kind = r.error.as_ref().map(|e| e.kind.as_str());
        let e = Event::ended(self.work, r.status.as_str(), kind)
            .agent(r.agent.as_str())
            .summary(&r.summary);
        self.announce(e);
    }

    /// The work could not be carried to a result (baton's own error).
    pub fn failed(&self, agent: &str, err: &Error) {
        let e = Event::ended(self.work, "failed", Some(err.kind()))
            .agent(agent)
            .summary(&err.to_string());
        self.announce(e);
    }

    fn announce(&self, e: Event) {
        if self.choice == Choice::Off {
            return;
        }
        let e = match &self.id {
            Some(id) => e.id(id.as_str()),
            None => e,
        };
        let e = e.repo(self.repo.as_path());
        notify::announce(&e, self.choice, &self.origin, self.record.as_deref());
    }

    /// Announce each stall of the peer writing its logs in `logs` until
    /// the returned guard is dropped (`None` with `--no-notify`).
    pub fn stalls(&self, agent: &str, logs: &Path) -> Option<Stalls> {
        let after = stalls::threshold(&self.repo, self.choice)?;
        let me = self.clone();
        let agent = agent.to_string();
        Some(Stalls::watch(logs, after, move |silent| {
            let e = Event::new(Trigger::Stalled, me.work, "running")
                .agent(agent.as_str())
                .summary(&format!(
                    "{agent} has printed nothing for {}s",
                    silent.as_secs()
                ));
            me.announce(e);
        }))
    }
}
