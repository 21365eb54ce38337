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
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

mod clean;
pub mod command;
pub mod dbus;
pub mod desktop;
pub mod record;
pub mod settings;
pub mod stalls;
pub mod terminal;
pub mod test;
pub mod url;

pub use clean::clean;
pub use settings::{Channel, Settings};

/// The longest `announce` takes, every channel together (each has a
/// shorter deadline of its own; this bounds a channel that misbehaves).
pub const BOUND: Duration = Duration::from_secs(15);

/// Why an event is sent (`[notify] on = [...]` names these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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

    /// A trigger `[notify] on` may name (`test` is none of them).
    pub fn parse(s: &str) -> Option<Trigger> {
        [
            Trigger::Ended,
            Trigger::NeedsApproval,
            Trigger::Stopped,
            Trigger::Stalled,
        ]
        .into_iter()
        .find(|t| t.as_str() == s)
    }
}

/// The failure kinds after which work does not go on without the user:
/// their end is announced as `stopped`, not `ended`.
pub const STOPPING_KINDS: &[&str] = &["budget_exceeded", "quota_exhausted", "auth_required"];

/// What kind of work an event is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
/// reads it as JSON on stdin, the URL channel posts it; `baton schema
/// notify-event`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// The summary as given, until `finish` cleans it into `summary`:
    /// cleaning compiles the redaction rules (milliseconds), which work
    /// that no channel will announce must not pay for. Never serialised.
    #[serde(skip)]
    #[schemars(skip)]
    raw_summary: Option<String>,
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
            raw_summary: None,
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
    /// (by `finish`) before any channel sees it.
    pub fn summary(mut self, text: &str) -> Event {
        self.summary = String::new();
        self.raw_summary = Some(text.to_string());
        self
    }

    /// The event as channels and records see it: the summary cleaned.
    /// `announce` and `deliver` call it; anyone else who shows an event
    /// must too (until then `summary` is empty, never raw).
    pub fn finish(mut self) -> Event {
        if let Some(raw) = self.raw_summary.take() {
            self.summary = clean(&raw);
        }
        self
    }
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
    /// When that terminal's device was made (its ctime, in ns). A closed
    /// pts's number is handed to the next terminal opened, so the path
    /// alone would ring a stranger's terminal; writing to a tty leaves its
    /// ctime alone. Absent in records written before 0.4.1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tty_ctime_ns: Option<i64>,
}

impl Origin {
    /// The terminal of this process, if it has one: stderr's, else
    /// stdout's, else stdin's (a command piped into `jq` still rings the
    /// terminal it was typed in).
    pub fn here() -> Origin {
        use std::os::fd::AsFd;
        let tty = crate::sys::fd::ttyname(std::io::stderr().as_fd())
            .or_else(|| crate::sys::fd::ttyname(std::io::stdout().as_fd()))
            .or_else(|| crate::sys::fd::ttyname(std::io::stdin().as_fd()));
        let tty_ctime_ns = tty
            .as_deref()
            .and_then(|t| std::fs::metadata(t).ok())
            .map(|m| terminal::ctime_ns(&m));
        Origin { tty, tty_ctime_ns }
    }
}

/// What one channel did with one event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Delivery {
    /// `desktop`, `terminal`, `command` or `url`.
    pub channel: String,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Delivery {
    pub fn ok(channel: &str) -> Delivery {
        Delivery {
            channel: channel.to_string(),
            ok: true,
            error: None,
        }
    }

    pub fn failed(channel: &str, error: impl Into<String>) -> Delivery {
        Delivery {
            channel: channel.to_string(),
            ok: false,
            error: Some(error.into()),
        }
    }
}

/// Deliver `event` to every configured channel the user's `choice` and
/// `[notify] on` allow; record what each did in `record` (the work's
/// record folder) when given. Never fails and never panics: a
/// notification must not fail the work. Returns within `BOUND`.
pub fn announce(
    event: &Event,
    choice: Choice,
    origin: &Origin,
    record: Option<&Path>,
) -> Vec<Delivery> {
    if choice == Choice::Off {
        return Vec::new();
    }
    announce_as(
        Settings::load(event.repo.as_deref()),
        event,
        choice,
        origin,
        record,
    )
}

/// `announce` with the settings given (read, or the error reading them).
fn announce_as(
    settings: crate::error::Result<Settings>,
    event: &Event,
    choice: Choice,
    origin: &Origin,
    record: Option<&Path>,
) -> Vec<Delivery> {
    let (event, deliveries) = match settings {
        Ok(s) => {
            let channels = s.plan(event.trigger, choice);
            // Nothing to send: nothing cleaned, recorded or started.
            if channels.is_empty() {
                return Vec::new();
            }
            let event = event.clone().finish();
            let d = deliver(&channels, &event, origin, BOUND);
            (event, d)
        }
        // A broken config file: said once, as a failed delivery.
        Err(e) => (
            event.clone().finish(),
            vec![Delivery::failed("config", clean(&e.to_string()))],
        ),
    };
    if let Some(dir) = record {
        record::append(dir, &event, &deliveries);
    }
    deliveries
}

/// Deliver `event` to `channels` at once, each on its own thread; one
/// `Delivery` per channel, in their order, within `bound` (a channel still
/// busy then is reported failed and left to its own deadline).
pub fn deliver(
    channels: &[Channel],
    event: &Event,
    origin: &Origin,
    bound: Duration,
) -> Vec<Delivery> {
    if channels.is_empty() {
        return Vec::new();
    }
    let event = &event.clone().finish();
    let until = Instant::now() + bound;
    let (tx, rx) = mpsc::channel();
    for (i, ch) in channels.iter().enumerate() {
        let (to, ch, event, origin) = (tx.clone(), ch.clone(), event.clone(), origin.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("notify-{}", ch.name()))
            .spawn(move || {
                let r = std::panic::catch_unwind(|| one(&ch, &event, &origin))
                    .unwrap_or_else(|_| Err("the channel failed unexpectedly".into()));
                let _ = to.send((i, r));
            });
        if let Err(e) = spawned {
            let _ = tx.send((i, Err(format!("could not start a thread: {e}"))));
        }
    }
    drop(tx);
    let mut got: Vec<Option<Result<(), String>>> = vec![None; channels.len()];
    while got.iter().any(Option::is_none) {
        match rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
            Ok((i, r)) => got[i] = Some(r),
            Err(_) => break,
        }
    }
    channels
        .iter()
        .zip(got)
        .map(|(ch, r)| match r {
            Some(Ok(())) => Delivery::ok(ch.name()),
            Some(Err(e)) => Delivery::failed(ch.name(), e),
            None => Delivery::failed(
                ch.name(),
                format!("no answer within {}", crate::process::seconds(bound)),
            ),
        })
        .collect()
}

/// One channel, one event.
fn one(ch: &Channel, event: &Event, origin: &Origin) -> Result<(), String> {
    match ch {
        Channel::Command(argv) => command::deliver(argv, event),
        Channel::Desktop => {
            let (title, body) = terminal::title_and_body(event);
            desktop::deliver(&title, &body)
        }
        Channel::Terminal => {
            let (title, body) = terminal::title_and_body(event);
            terminal::deliver(origin, &title, &body)
        }
        Channel::Url { url, token_env } => {
            let body = serde_json::to_vec(event).map_err(|e| e.to_string())?;
            url::deliver(url, token_env.as_deref(), &body)
        }
    }
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
    fn a_summary_is_cleaned_when_finished_and_never_shown_raw_before() {
        let e = Event::new(Trigger::Ended, Work::Job, "failed").summary("\u{1b}[2Jboom\u{7}");
        assert_eq!(e.summary, "");
        assert!(!serde_json::to_string(&e).unwrap().contains("boom"));
        let f = e.finish();
        assert_eq!(f.summary, "boom");
        // Finishing twice changes nothing.
        assert_eq!(f.clone().finish(), f);
    }

    #[test]
    fn the_triggers_on_may_name_are_the_configs() {
        let names: Vec<&str> = crate::config::NOTIFY_TRIGGERS.to_vec();
        for n in &names {
            assert_eq!(Trigger::parse(n).map(Trigger::as_str), Some(*n));
        }
        assert_eq!(Trigger::parse("test"), None);
        assert_eq!(names.len(), 4);
    }

    #[test]
    fn origin_here_is_a_terminal_or_none() {
        // Under `cargo test` the streams may or may not be terminals; when
        // one is, its path is a character device.
        if let Some(t) = Origin::here().tty {
            use std::os::unix::fs::FileTypeExt;
            assert!(
                std::fs::metadata(&t).unwrap().file_type().is_char_device(),
                "{t:?}"
            );
        }
    }

    #[test]
    fn channels_are_delivered_at_once_within_the_bound() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        let sh = |script: String| Channel::Command(vec!["sh".into(), "-c".into(), script]);
        let chans = [
            sh(format!("sleep 1; cat > '{}'", a.display())),
            sh(format!("sleep 1; cat > '{}'", b.display())),
            sh("exit 1".into()),
            Channel::Command(vec!["sh".into(), "-c".into(), "sleep 20".into()]),
        ];
        let e = Event::new(Trigger::Ended, Work::Job, "success").summary("hi");
        let t = std::time::Instant::now();
        let got = deliver(&chans, &e, &Origin::default(), Duration::from_secs(3));
        let took = t.elapsed();
        // Concurrent: two 1 s channels and a stuck one, all within the bound.
        assert!(took < Duration::from_millis(3800), "{took:?}");
        assert!(got[0].ok && got[1].ok, "{got:?}");
        assert!(!got[2].ok && !got[3].ok, "{got:?}");
        assert!(
            got[3].error.as_deref().unwrap().contains("no answer"),
            "{got:?}"
        );
        assert!(
            std::fs::read_to_string(&a)
                .unwrap()
                .contains("\"summary\":\"hi\"")
        );
        assert!(b.exists());
    }

    #[test]
    fn announce_follows_the_rules_and_records_what_each_channel_did() {
        let d = tempfile::tempdir().unwrap();
        let got = d.path().join("got");
        let settings = || {
            Ok(Settings {
                command: Some(vec![
                    "sh".into(),
                    "-c".into(),
                    format!("cat >> '{}'", got.display()),
                ]),
                on: vec![Trigger::Ended],
                ..Settings::from_config(&crate::config::Config::default())
            })
        };
        let e = Event::ended(Work::Job, "failed", None).summary("\u{1b}[2Jboom");
        let o = Origin::default();
        let rec = Some(d.path());
        assert!(announce_as(settings(), &e, Choice::Off, &o, rec).is_empty());
        let stall = Event::new(Trigger::Stalled, Work::Job, "running");
        assert!(announce_as(settings(), &stall, Choice::Config, &o, rec).is_empty());
        assert!(!got.exists() && record::read(d.path()).is_none());
        let r = announce_as(settings(), &e, Choice::Config, &o, rec);
        assert_eq!(r, vec![Delivery::ok("command")]);
        let r = announce_as(settings(), &stall, Choice::On, &o, rec);
        assert_eq!(r, vec![Delivery::ok("command")]);
        let lines = std::fs::read_to_string(&got).unwrap();
        assert_eq!(lines.lines().count(), 2);
        assert!(lines.contains("\"summary\":\"boom\""), "{lines}");
        let kept = record::read(d.path()).unwrap().notifications;
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[1].trigger, Trigger::Stalled);
        // A config that cannot be read is one failed delivery, recorded.
        let bad = Err(crate::error::Error::usage_hint("broken", "fix it"));
        let r = announce_as(bad, &e, Choice::Config, &o, rec);
        assert_eq!(r.len(), 1);
        assert!(!r[0].ok && r[0].channel == "config");
    }

    #[test]
    fn choice_and_origin_read_back_from_older_records() {
        // A spec written before notifications has neither field.
        let o: Origin = serde_json::from_str("{}").unwrap();
        assert_eq!(o, Origin::default());
        assert_eq!(Choice::default(), Choice::Config);
    }
}
