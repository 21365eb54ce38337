//! NOTIFICATIONS: telling the person who started a piece of work that it
//! ended, waits for them, was stopped or stalled — with nothing left open.
//!
//! Theory of operation. The process that owns the work (a foreground
//! `run`, the job runner, the council or fan-out driver, a bench run) builds
//! one `Event` when it matters and calls `announce` once; a fan-out's
//! candidates, a council's members and a bench's trials never announce on
//! their own (their parent does, once). `announce` reads `[notify]` from the
//! configuration, keeps the triggers the user asked for (`on`), and delivers
//! to every configured channel (desktop, the terminal that started the
//! work, a command, a URL). A failed channel is recorded (`Delivery`, in
//! the work's record folder when it has one) and never fails the work.
//!
//! Text in an event is a peer's output: `Event::summary` strips control
//! characters, caps the length and redacts secrets before any channel sees
//! it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Why an event is sent (`[notify] on = [...]` names these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// The work ended (success, failed, timeout, cancelled, …).
    Ended,
    /// A council waits for the user's approval.
    NeedsApproval,
    /// A budget or a failure kind stopped the work (`budget_exceeded`,
    /// `quota_exhausted`, `auth_required`): it will not go on by itself.
    Stopped,
    /// A peer has printed nothing for longer than the threshold.
    Stalled,
    /// `baton notify test`.
    Test,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Ended => "ended",
            Trigger::NeedsApproval => "needs_approval",
            Trigger::Stopped => "stopped",
            Trigger::Stalled => "stalled",
            Trigger::Test => "test",
        }
    }
}

/// The failure kinds after which work does not go on without the user:
/// their end is announced as `stopped`, not `ended`.
pub const STOPPING_KINDS: &[&str] = &["budget_exceeded", "quota_exhausted", "auth_required"];

/// What kind of work an event is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Work {
    /// A foreground `baton run`.
    Run,
    /// A background job (`run --async`, `continue`).
    Job,
    Fanout,
    Council,
    Bench,
}

/// One notification, as every channel receives it (the command channel
/// reads it as JSON on stdin; `baton schema notify_event`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub schema_version: u32,
    pub trigger: Trigger,
    pub work: Work,
    /// The job, fan-out, council or bench id (a foreground run: its run id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The repository the work runs in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repo: Option<PathBuf>,
    /// The work's status (`success`, `failed`, `timeout`, `cancelled`,
    /// `needs_approval`, `running` for a stall).
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The summary line: cleaned, capped and redacted (`Event::summary`).
    pub summary: String,
    pub at_ms: u64,
}

impl Event {
    /// The end of a piece of work: `stopped` when its failure kind means
    /// it will not go on without the user, else `ended`.
    pub fn ended(work: Work, status: &str, failure_kind: Option<&str>) -> Event {
        let trigger = if failure_kind.is_some_and(|k| STOPPING_KINDS.contains(&k)) {
            Trigger::Stopped
        } else {
            Trigger::Ended
        };
        Event::new(trigger, work, status).failure_kind(failure_kind)
    }

    pub fn new(trigger: Trigger, work: Work, status: &str) -> Event {
        Event {
            schema_version: crate::result::SCHEMA_VERSION,
            trigger,
            work,
            id: None,
            repo: None,
            status: status.to_string(),
            failure_kind: None,
            agent: None,
            summary: String::new(),
            at_ms: crate::ids::now_ms(),
        }
    }

    pub fn id(mut self, id: impl Into<String>) -> Event {
        self.id = Some(id.into());
        self
    }

    pub fn repo(mut self, repo: impl Into<PathBuf>) -> Event {
        self.repo = Some(repo.into());
        self
    }

    pub fn agent(mut self, agent: impl Into<String>) -> Event {
        self.agent = Some(agent.into());
        self
    }

    pub fn failure_kind(mut self, kind: Option<&str>) -> Event {
        self.failure_kind = kind.map(str::to_string);
        self
    }

    /// The summary line, from a peer's text: cleaned, capped, redacted
    /// before any channel sees it.
    pub fn summary(mut self, text: &str) -> Event {
        self.summary = clean(text);
        self
    }
}

/// A peer's text made safe to show: control characters gone, length
/// capped, secrets redacted. (Filled in by the notify core.)
pub fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(200)
        .collect()
}

/// `--notify` / `--no-notify` on the command that started the work,
/// carried to the process that owns it (a job's spec, a council's or
/// fan-out's request).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Choice {
    /// As `[notify]` says.
    #[default]
    Config,
    /// `--notify`: announce this work even where the configuration would
    /// not (with the desktop and terminal channels if none is configured).
    On,
    /// `--no-notify`: never announce this work.
    Off,
}

/// Where the work was started, captured by the process the user ran and
/// carried to the one that owns the work: the terminal to ring, if any.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// The controlling terminal of the command the user ran (its path,
    /// e.g. `/dev/pts/3`), when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tty: Option<PathBuf>,
}

impl Origin {
    /// The terminal of this process, if it has one. (Filled in by the
    /// notify core.)
    pub fn here() -> Origin {
        Origin::default()
    }
}

/// What one channel did with one event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    /// `desktop`, `terminal`, `command` or `url`.
    pub channel: String,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Deliver `event` to every configured channel the user's `choice` and
/// `[notify] on` allow; record what each did in `record` (the work's
/// record folder) when given. Never fails and never panics: a
/// notification must not fail the work. (Filled in by the notify core.)
pub fn announce(
    event: &Event,
    choice: Choice,
    origin: &Origin,
    record: Option<&Path>,
) -> Vec<Delivery> {
    let _ = (event, choice, origin, record);
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stopping_failure_kind_is_announced_as_stopped() {
        let e = Event::ended(Work::Job, "failed", Some("quota_exhausted"));
        assert_eq!(e.trigger, Trigger::Stopped);
        let e = Event::ended(Work::Job, "failed", Some("agent_error"));
        assert_eq!(e.trigger, Trigger::Ended);
        let e = Event::ended(Work::Fanout, "success", None);
        assert_eq!(e.trigger, Trigger::Ended);
        assert_eq!(e.failure_kind, None);
    }

    #[test]
    fn choice_and_origin_read_back_from_older_records() {
        // A spec written before notifications has neither field.
        let o: Origin = serde_json::from_str("{}").unwrap();
        assert_eq!(o, Origin::default());
        assert_eq!(Choice::default(), Choice::Config);
    }
}
