//! The two Server-Sent Event streams: fleet changes (`/api/events`) and one
//! job's transcript (`/api/jobs/{id}/events`).
//!
//! Fleet: one `snapshot` event, then a `job` event per job whose view
//! changed and a `gone` event per removed job — found by comparing each
//! job's `Arc` with the last one sent, so a silent fleet sends nothing —
//! a `councils` event (the whole array) when a council changed, and a
//! `repos` event when the listing of repositories changed. Every job and
//! council carries the key of its repository (`repo`). Every
//! event carries `now_ms`, the time it was made, and its views' clocks as
//! they read then (`clock`), however long ago the view last changed.
//! Transcript (a job's, or a council run's: `Source`): the last `BACKLOG` activities from the reducer (a
//! bounded read of its log's end), then new ones as they come, then `end`.
//! A transcript is read by its own thread, which stops once the page is gone.

use std::collections::HashMap;
use std::convert::Infallible;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use serde::Serialize;
use tokio::sync::{mpsc, watch};

use super::clock;
use super::fleet::{JobEntry, TICK};
use super::fleets::{Fleets, tag};
use super::wake::Waker;
use crate::agent::Agent;
use crate::job::store::Job;
use crate::job::store::now_ms;
use crate::view::{Activity, Tail, render};

/// Most activities sent before live ones (the page keeps about as many lines).
const BACKLOG: usize = 2000;
/// Most of the log's end read for the backlog.
const BACKLOG_BYTES: u64 = 4 << 20;
/// Most log bytes read per wake.
const READ_PER_WAKE: usize = 256 << 10;

/// An mpsc receiver as the stream `Sse` wants.
pub struct Events(mpsc::Receiver<Event>);

impl futures_core::Stream for Events {
    type Item = Result<Event, Infallible>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx).map(|e| e.map(Ok))
    }
}

fn sse(
    rx: mpsc::Receiver<Event>,
) -> Sse<impl futures_core::Stream<Item = Result<Event, Infallible>>> {
    Sse::new(Events(rx)).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

/// `/api/events`.
pub fn fleet(
    mut rx: watch::Receiver<Arc<Fleets>>,
) -> Sse<impl futures_core::Stream<Item = Result<Event, Infallible>>> {
    let (tx, out) = mpsc::channel(64);
    tokio::spawn(async move {
        let first = rx.borrow_and_update().clone();
        // Per repository: the jobs' views as last sent, by id.
        let mut sent: HashMap<Arc<str>, HashMap<String, JobEntry>> = first
            .parts
            .iter()
            .map(|p| (p.repo.clone(), p.fleet.jobs.iter().cloned().collect()))
            .collect();
        let snapshot = first.to_json(now_ms());
        if tx
            .send(Event::default().event("snapshot").data(snapshot))
            .await
            .is_err()
        {
            return;
        }
        let mut last = first;
        while rx.changed().await.is_ok() {
            let f = rx.borrow_and_update().clone();
            let now = now_ms();
            let mut events = Vec::new();
            if !Arc::ptr_eq(&last.repos, &f.repos) {
                let data = format!(r#"{{"now_ms":{now},"repos":{}}}"#, f.repos_json());
                events.push(Event::default().event("repos").data(data));
            }
            let councils_changed = last.parts.len() != f.parts.len()
                || last.parts.iter().zip(&f.parts).any(|(a, b)| {
                    a.repo != b.repo || !Arc::ptr_eq(&a.fleet.councils, &b.fleet.councils)
                });
            if councils_changed {
                let data = format!(r#"{{"now_ms":{now},"councils":{}}}"#, f.councils_json(now));
                events.push(Event::default().event("councils").data(data));
            }
            for p in &f.parts {
                let was = sent.entry(p.repo.clone()).or_default();
                for (id, j) in &p.fleet.jobs {
                    if was.get(id).is_none_or(|old| !Arc::ptr_eq(old, j)) {
                        let job = tag(&clock::json(j, now), &p.repo);
                        let data = format!(r#"{{"now_ms":{now},"job":{job}}}"#);
                        events.push(Event::default().event("job").data(data));
                        was.insert(id.clone(), j.clone());
                    }
                }
            }
            // Jobs removed, and every job of a repository no longer shown.
            for (repo, was) in &mut sent {
                let live: std::collections::HashSet<&String> = f
                    .parts
                    .iter()
                    .find(|p| p.repo == *repo)
                    .map(|p| p.fleet.jobs.iter().map(|(i, _)| i).collect())
                    .unwrap_or_default();
                if was.len() == live.len() {
                    continue;
                }
                let gone: Vec<String> = was.keys().filter(|i| !live.contains(i)).cloned().collect();
                for id in gone {
                    was.remove(&id);
                    let data = serde_json::json!({ "job_id": id, "repo": &**repo }).to_string();
                    events.push(Event::default().event("gone").data(data));
                }
            }
            sent.retain(|_, was| !was.is_empty());
            last = f;
            for e in events {
                if tx.send(e).await.is_err() {
                    return;
                }
            }
        }
    });
    sse(out)
}

/// One transcript line as the page gets it.
#[derive(Serialize)]
struct Line<'a> {
    /// The activity's kind (`message`, `command`, `error`, …), for styling.
    kind: &'static str,
    /// What `baton logs` prints for it.
    text: String,
    activity: &'a Activity,
}

fn kind(a: &Activity) -> &'static str {
    match a {
        Activity::Session { .. } => "session",
        Activity::Message { .. } => "message",
        Activity::Thinking { .. } => "thinking",
        Activity::Command { .. } | Activity::CommandEnd { .. } => "command",
        Activity::FileChange { .. } => "file",
        Activity::Tool { .. } => "tool",
        Activity::ToolFailed { .. } | Activity::Error { .. } | Activity::Denied { .. } => "error",
        Activity::Plan { .. } => "plan",
        Activity::Usage { .. } => "usage",
        Activity::Done { .. } => "done",
        Activity::Waiting { .. } => "waiting",
        Activity::Text { .. } => "text",
    }
}

/// The SSE events of these activities (those `logs` would print).
fn lines(acts: &[Activity]) -> Vec<Event> {
    acts.iter()
        .filter_map(|a| {
            let text = render::line(a)?;
            let data = serde_json::to_string(&Line {
                kind: kind(a),
                text,
                activity: a,
            })
            .ok()?;
            Some(Event::default().event("line").data(data))
        })
        .collect()
}

/// What a transcript follows: a log, when it is complete, how it ended.
pub struct Source {
    pub log: PathBuf,
    pub agent: Agent,
    /// What the waker listens to: a directory, then those where the log
    /// and its record change.
    pub base: PathBuf,
    pub dirs: Vec<PathBuf>,
    /// Whether the log is complete (the peer or its runner is gone).
    pub ended: Box<dyn Fn() -> bool + Send>,
    /// The `end` event's data.
    pub end: Box<dyn Fn() -> serde_json::Value + Send>,
}

/// `/api/jobs/{id}/events` for `job`, whose peer is `agent`.
pub fn transcript(
    job: Job,
    agent: Agent,
) -> Sse<impl futures_core::Stream<Item = Result<Event, Infallible>>> {
    let ended = {
        let j = job.clone();
        move || {
            j.read_state()
                .map(|s| s.status.is_terminal())
                .unwrap_or(true)
                || !j.runner_alive()
        }
    };
    let end = {
        let j = job.clone();
        move || {
            let status = j
                .refresh()
                .map_or("unknown", |s| s.status.as_str())
                .to_string();
            serde_json::json!({ "job_id": j.id, "status": status })
        }
    };
    follow_source(Source {
        log: job.stdout_log(),
        agent,
        base: job.dir.parent().unwrap_or(&job.dir).to_path_buf(),
        dirs: vec![job.dir.clone()],
        ended: Box::new(ended),
        end: Box::new(end),
    })
}

/// A transcript of any `Source` as Server-Sent Events.
pub fn follow_source(
    src: Source,
) -> Sse<impl futures_core::Stream<Item = Result<Event, Infallible>>> {
    let (tx, out) = mpsc::channel(256);
    let _ = std::thread::Builder::new()
        .name("baton-serve-tail".into())
        .spawn(move || follow(src, tx));
    sse(out)
}

fn follow(src: Source, tx: mpsc::Sender<Event>) {
    let send_all = |evs: Vec<Event>| evs.into_iter().all(|e| tx.blocking_send(e).is_ok());
    let Ok(mut tail) = Tail::new(src.log.clone(), src.agent).from_last(BACKLOG_BYTES) else {
        return;
    };
    // Read whether it ended first: the log is complete if it had.
    let mut done = (src.ended)();
    let backlog = if done { tail.finish() } else { tail.catch_up() }.unwrap_or_default();
    let mut evs = lines(&backlog);
    let cut = evs.len().saturating_sub(BACKLOG);
    if !send_all(evs.split_off(cut)) {
        return;
    }
    let mut waker = Waker::new(&src.base);
    let mut behind = false;
    while !done {
        // Behind (a burst larger than one read): read on without waiting.
        if !behind {
            waker.wait(TICK, &src.dirs);
        }
        if tx.is_closed() {
            return;
        }
        done = (src.ended)();
        let acts = if done {
            tail.finish()
        } else {
            tail.poll(READ_PER_WAKE)
        };
        behind = !done && src.log.metadata().is_ok_and(|m| m.len() > tail.offset());
        if !send_all(lines(&acts.unwrap_or_default())) {
            return;
        }
    }
    let data = (src.end)().to_string();
    let _ = tx.blocking_send(Event::default().event("end").data(data));
}
