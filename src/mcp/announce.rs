//! Ended work announced to the host: every background job, fan-out and
//! council a call of this server started (`run` with `async`, also with
//! `agents`; `continue`; `council_discuss`, `council_plan` and
//! `council_execute` with `async`) is watched, and when it stops the host
//! gets one `notifications/message` (level `info`, logger `baton`) with its
//! id, status and cleaned summary (docs/mcp.md#job-ends); a council whose
//! plan waits for `council_approve` is announced as `needs_approval`.
//!
//! One task watches all of them: one inotify instance (a watch per record
//! folder, which the one store gives every kind, `store`) read through
//! tokio, so the server sleeps until a folder changes. Work stops when its
//! `state.json` is replaced by a stopped one (a rename: `IN_MOVED_TO`), or
//! when its runner dies without writing one: the kernel closes the
//! runner's `lock`, which it holds open for writing (`IN_CLOSE_WRITE`), and
//! the record then reads as `lost`. What this task reads itself (the
//! state, a shared probe of the lock) is opened read-only, so it never
//! wakes itself. Where inotify is missing (macOS) a tick looks instead. The
//! host's `logging/setLevel` is honoured: above `info`, nothing is sent.
#![allow(deprecated)] // MCP logging: deprecated by the 2026-07-28 draft (SEP-2577), current in 2025-11-25.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use crate::job::store::{Job, Store};
use crate::notify::{Event, Trigger, Work};
use crate::store::Kind;

/// The logger name every announcement carries.
pub const LOGGER: &str = "baton";
/// The level of an announcement.
const LEVEL: LoggingLevel = LoggingLevel::Info;
/// How often the jobs are looked at where no inotify wakes the task, and,
/// with it, how often anyway (a missed event must not lose an announcement).
const TICK_WITHOUT_INOTIFY: Duration = Duration::from_secs(1);
const TICK_WITH_INOTIFY: Duration = Duration::from_secs(30);

/// Where a job that a call started is handed to the watcher, and the level
/// the host asked for.
#[derive(Clone)]
pub struct Announcer {
    tx: mpsc::UnboundedSender<(String, Peer<RoleServer>)>,
    level: Arc<AtomicU8>,
}

impl Announcer {
    /// The announcer and its watching task (on the current runtime), which
    /// ends when the client is gone.
    pub fn start(gone: watch::Receiver<bool>) -> Announcer {
        let (tx, rx) = mpsc::unbounded_channel();
        let level = Arc::new(AtomicU8::new(rank(LEVEL)));
        tokio::spawn(watch_jobs(rx, level.clone(), gone));
        Announcer { tx, level }
    }

    /// `logging/setLevel`: announcements are sent while `info` is at or
    /// above `level`.
    pub fn set_level(&self, level: LoggingLevel) {
        self.level.store(rank(level), Ordering::SeqCst);
    }

    /// Watch the work a call's result names: the job or fan-out of a
    /// `run`/`continue` that is still running (its `job_id`), the council
    /// of a council call made with `async` (its `council_id`).
    pub fn started(
        &self,
        tool: &str,
        asynchronous: bool,
        structured: &Value,
        peer: &Peer<RoleServer>,
    ) {
        let id = match tool {
            "run" | "continue" => (structured.get("status").and_then(Value::as_str)
                == Some("running"))
            .then(|| structured.get("job_id"))
            .flatten(),
            _ if tool.starts_with("council_") && asynchronous => structured.get("council_id"),
            _ => None,
        };
        if let Some(id) = id.and_then(Value::as_str) {
            let _ = self.tx.send((id.to_string(), peer.clone()));
        }
    }
}

/// The order of the syslog levels MCP uses.
fn rank(l: LoggingLevel) -> u8 {
    match l {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// One watched piece of work.
struct Watched {
    what: What,
    wd: Option<Wd>,
}

/// What kind of work it is, with what reads its record.
enum What {
    Job(Job),
    /// A fan-out or a council: its id and kind, read from the project.
    Group(Kind, String),
}

/// An inotify watch descriptor.
type Wd = i32;

async fn watch_jobs(
    mut rx: mpsc::UnboundedReceiver<(String, Peer<RoleServer>)>,
    level: Arc<AtomicU8>,
    mut gone: watch::Receiver<bool>,
) {
    let (Ok(store), Ok(root)) = (Store::here(), crate::group::background::project_root()) else {
        return;
    };
    let wake = Wake::new();
    let tick = if wake.is_some() {
        TICK_WITH_INOTIFY
    } else {
        TICK_WITHOUT_INOTIFY
    };
    let mut watched: HashMap<String, Watched> = HashMap::new();
    // What was announced of each id (its trigger and status): a council
    // that waited for approval and was executed is announced again at its
    // end, never twice for the same stop.
    let mut announced: HashSet<String> = HashSet::new();
    let mut peer: Option<Peer<RoleServer>> = None;
    loop {
        tokio::select! {
            got = rx.recv() => {
                let Some((id, p)) = got else { return };
                peer = Some(p);
                if watched.contains_key(&id) {
                    continue;
                }
                let Some(found) = crate::store::find(&root, OsStr::new(&id)) else { continue };
                let what = match found.kind {
                    Kind::Job => match store.open(OsStr::new(&id)) {
                        Ok(job) => What::Job(job),
                        Err(_) => continue,
                    },
                    Kind::Fanout | Kind::Council => What::Group(found.kind, id.clone()),
                    Kind::Bench => continue,
                };
                let wd = wake.as_ref().and_then(|w| w.add(&found.dir));
                watched.insert(id, Watched { what, wd });
            }
            _ = Wake::changed(wake.as_ref()) => {}
            _ = tokio::time::sleep(tick), if !watched.is_empty() => {}
            _ = gone.wait_for(|g| *g) => return,
        }
        let Some(peer) = peer.as_ref() else { continue };
        let stopped: Vec<(String, Option<Value>)> = watched
            .iter()
            .filter_map(|(id, w)| Some((id.clone(), stopped(&root, &w.what)?)))
            .collect();
        for (id, data) in stopped {
            let Some(w) = watched.remove(&id) else {
                continue;
            };
            if let (Some(wake), Some(wd)) = (wake.as_ref(), w.wd) {
                wake.remove(wd);
            }
            let Some(data) = data else { continue };
            if !announced.insert(format!("{id}/{}/{}", data["trigger"], data["status"])) {
                continue;
            }
            if level.load(Ordering::SeqCst) <= rank(LEVEL) {
                let p = LoggingMessageNotificationParam::new(LEVEL, data).with_logger(LOGGER);
                let _ = peer.notify_logging_message(p).await;
            }
        }
    }
}

/// `None` while the work runs; once it has stopped, what to tell the host
/// (`Some(None)`: it stopped, but its record cannot be read to say how).
fn stopped(root: &std::path::Path, what: &What) -> Option<Option<Value>> {
    match what {
        What::Job(job) => {
            let s = job.refresh().ok()?;
            s.status.is_terminal().then(|| announcement(job))
        }
        What::Group(Kind::Fanout, id) => {
            let rec = crate::fanout::store::Record::load(root, id).ok()?;
            let e = crate::fanout::ended_event(&rec)?;
            Some(data(e, id))
        }
        What::Group(_, id) => {
            let rec = crate::council::store::Record::load(root, id).ok()?;
            let e = match (crate::council::flow::event(&rec), rec.header().standing) {
                (Some(e), _) => e,
                (None, crate::store::Standing::Lost) => Event::ended(Work::Council, "lost", None)
                    .id(id.as_str())
                    .repo(rec.root.as_path())
                    .summary(rec.reason.as_deref().unwrap_or_default()),
                (None, _) => return None,
            };
            Some(data(e, id))
        }
    }
}

/// What the host is told of an ended job: the notification event every
/// channel gets (`notify::Event`: status, failure kind, agent, the summary
/// cleaned, capped and redacted) and a `message` line for a host that
/// shows text.
fn announcement(job: &Job) -> Option<Value> {
    let state = job.read_state().ok()?;
    let result = job.read_result().ok().flatten();
    let kind = result
        .as_ref()
        .and_then(|r| r.error.as_ref())
        .map(|e| e.kind.as_str());
    let status = state.status.as_str();
    // `Event::summary` redacts, strips and caps (notify::clean).
    let summary = state.summary.clone().unwrap_or_default();
    let event = Event::ended(Work::Job, status, kind)
        .id(job.id.clone())
        .agent(state.agent.clone())
        .summary(&summary);
    data(event, &job.id)
}

/// The event as the host gets it: cleaned, with the id the job tools take
/// (`job_id`) and a `message` line for a host that shows text.
fn data(event: Event, id: &str) -> Option<Value> {
    let event = event.finish();
    let work = match event.work {
        Work::Fanout => "fan-out",
        Work::Council => "council",
        _ => "job",
    };
    let agent = event.agent.as_deref().unwrap_or("");
    let mut message = match event.trigger {
        Trigger::NeedsApproval => format!(
            "baton council {id} ({agent}) waits for approval: council_approve, then council_execute"
        ),
        _ => format!("baton {work} {id} ({agent}) ended: {}", event.status),
    };
    if !event.summary.trim().is_empty() {
        message.push_str(" — ");
        message.push_str(event.summary.trim());
    }
    let mut data = serde_json::to_value(&event).ok()?;
    let obj = data.as_object_mut()?;
    obj.insert("job_id".into(), id.into());
    obj.insert("message".into(), message.into());
    Some(data)
}

/// The inotify instance, read through tokio (Linux); `None` elsewhere or
/// when it cannot be had.
struct Wake {
    #[cfg(target_os = "linux")]
    fd: tokio::io::unix::AsyncFd<crate::sys::inotify::Inotify>,
}

#[cfg(target_os = "linux")]
impl Wake {
    /// A replaced file (the state), a closed writer (the runner's lock,
    /// however the runner ended) or a folder removed (a prune).
    const MASK: u32 = libc::IN_MOVED_TO | libc::IN_CLOSE_WRITE | libc::IN_DELETE_SELF;

    fn new() -> Option<Wake> {
        let i = crate::sys::inotify::Inotify::new(true)?;
        tokio::io::unix::AsyncFd::new(i).ok().map(|fd| Wake { fd })
    }

    fn add(&self, dir: &std::path::Path) -> Option<Wd> {
        self.fd.get_ref().add(dir, Self::MASK)
    }

    fn remove(&self, wd: Wd) {
        self.fd.get_ref().remove(wd);
    }

    /// Resolves when something changed (the events drained); never
    /// without an instance.
    async fn changed(w: Option<&Wake>) {
        let Some(w) = w else {
            return std::future::pending().await;
        };
        let Ok(mut guard) = w.fd.readable().await else {
            return std::future::pending().await;
        };
        let mut buf = [0u8; 4096];
        while guard.get_inner().read(&mut buf).is_ok_and(|n| n > 0) {}
        guard.clear_ready();
    }
}

#[cfg(not(target_os = "linux"))]
impl Wake {
    fn new() -> Option<Wake> {
        None
    }
    fn add(&self, _dir: &std::path::Path) -> Option<Wd> {
        None
    }
    fn remove(&self, _wd: Wd) {}
    async fn changed(_w: Option<&Wake>) {
        std::future::pending().await
    }
}
