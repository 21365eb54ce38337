//! `baton watch --once`: one snapshot of every job — state, agent, what the
//! peer is doing now, files, tokens, cost — as JSON for scripts or a table.
//!
//! Built on the fast listing path of `jobs` (`Store::states`, one small file
//! per job, which holds an ended job's counts too); only running jobs have
//! their spec and log read (and jobs ended by an older baton their result).

use std::io::Write;
use std::time::UNIX_EPOCH;

use serde::Serialize;

use super::group::{self, GroupView};
use super::tail::{Live, Tail};
use crate::agent::Agent;
use crate::error::{Error, Result};
use crate::job::human;
use crate::job::store::{Job, JobState, Spec, State, Store, id_time_ms, now_ms};
use crate::output::Mode;
use crate::result::{SCHEMA_VERSION, Usage};

/// Most of a running job's log read for a snapshot (its end).
const SNAPSHOT_READ: u64 = 8 << 20;

/// One job as `watch` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct JobView {
    pub job_id: String,
    /// A job state, or `stalled`: running but silent past half its idle timeout.
    pub status: &'static str,
    pub agent: String,
    pub model: Option<String>,
    pub task: String,
    pub created_ms: u64,
    pub elapsed_ms: u64,
    /// Running: the latest activity. Ended: the summary.
    pub doing: Option<String>,
    pub files_changed: Vec<String>,
    pub usage: Usage,
    /// Since the peer last printed anything (running) or since the job ended.
    pub last_activity_age_ms: Option<u64>,
    /// What the row is in the interactive fleet (never in the JSON).
    #[serde(skip)]
    pub row: Row,
}

/// A fleet row: a job, a council's header, or one of a council's runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Row {
    #[default]
    Job,
    Council,
    Run {
        council: String,
        /// Who ran it (`m0`, `chair`, `writer`): the ID column shows it.
        who: String,
        /// The run's stdout log, for its transcript.
        log: Option<std::path::PathBuf>,
        /// The council's last run (its tree glyph closes the group).
        last: bool,
    },
}

/// Every job, running first, then what needs attention, then the rest;
/// and every council as a group of its members' runs, running first.
#[derive(Debug, Serialize)]
pub struct Snapshot {
    pub schema_version: u32,
    pub now_ms: u64,
    pub jobs: Vec<JobView>,
    /// An `--async` council is here only: the job store holds no row for
    /// it (`baton jobs` adds one from its record), so it is never shown twice.
    pub councils: Vec<GroupView>,
}

/// Order groups: running, needs attention, the rest (newest first within).
pub fn group(status: &str) -> u8 {
    match status {
        "running" => 0,
        "stalled" | "failed" | "lost" | "timeout" | "corrupt" => 1,
        _ => 2,
    }
}

/// The snapshot of `store` at `now`.
pub fn snapshot(store: &Store, now: u64) -> Result<Snapshot> {
    let mut states = store.states()?;
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4)
        .min(states.len().div_ceil(256).max(1));
    let chunk = states.len().div_ceil(threads).max(1);
    // The states are moved into their views, not cloned: with 10,000 ended
    // jobs, copying every string twice was a good part of the time.
    let mut jobs: Vec<JobView> = Vec::with_capacity(states.len());
    std::thread::scope(|sc| {
        let parts: Vec<_> = states
            .chunks_mut(chunk)
            .map(|c| {
                sc.spawn(move || {
                    c.iter_mut()
                        .map(|(j, s)| view_owned(j, s.take(), now))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in parts {
            jobs.extend(h.join().unwrap_or_default());
        }
    });
    // Ids sort by start time and the store lists newest first: a stable sort keeps that.
    jobs.sort_by_key(|v| group(v.status));
    let councils = group::all_groups(&group::watch_dirs(store), now);
    Ok(Snapshot {
        schema_version: SCHEMA_VERSION,
        now_ms: now,
        jobs,
        councils,
    })
}

/// One job's view. Cheap for an ended job (its state, or its result); a
/// running job's log is read (at most its last 8 MiB) — the interactive view
/// keeps its own tail per running job instead (`base`, `live_into`).
pub fn view(job: &Job, recorded: &Option<State>, now: u64) -> JobView {
    view_owned(job, recorded.clone(), now)
}

/// `view`, taking the state: `snapshot` moves 10,000 states into their
/// views instead of copying every string of each.
fn view_owned(job: &Job, recorded: Option<State>, now: u64) -> JobView {
    let mut s = match recorded {
        Some(s) if s.status.is_terminal() => s,
        // The runner's lock decides: a dead runner's job becomes `lost`.
        Some(s) => job.refresh().unwrap_or(s),
        // No readable state: the store repairs what it can (a launch cut short).
        None => match job.refresh() {
            Ok(s) => s,
            Err(_) => return corrupt(job, now),
        },
    };
    let mut v = base_owned(&mut s, now);
    if s.status == JobState::Running {
        running(job, &s, now, &mut v);
    } else if let Some(t) = s.totals.take() {
        v.files_changed = t.changed_files;
        v.usage = t.usage;
    } else if let Ok(Some(r)) = job.read_result() {
        v.files_changed = r.changed_files;
        v.usage = r.usage;
    }
    v
}

/// What a job's state alone says (no log, no result read).
pub fn base(s: &State, now: u64) -> JobView {
    base_owned(&mut s.clone(), now)
}

/// `base`, moving the strings out of `s` (its agent, times and status stay).
fn base_owned(s: &mut State, now: u64) -> JobView {
    JobView {
        job_id: std::mem::take(&mut s.id),
        status: s.status.as_str(),
        agent: s.agent.clone(),
        model: s.model.take(),
        task: std::mem::take(&mut s.task),
        created_ms: s.created_ms,
        elapsed_ms: s.duration_ms(now),
        doing: s.summary.take(),
        files_changed: Vec::new(),
        usage: Usage::default(),
        last_activity_age_ms: s.ended_ms.map(|e| now.saturating_sub(e)),
        row: Row::Job,
    }
}

/// A running job's view completed from its tail's summary: the activity,
/// files, tokens, the age of its last output, and `stalled`.
pub fn live_into(
    v: &mut JobView,
    live: &Live,
    last_output_ms: u64,
    idle_timeout_ms: u64,
    now: u64,
) {
    v.doing = live
        .doing()
        .or_else(|| Some("waiting for the peer's first event".into()));
    v.files_changed = live.files.clone();
    v.usage = live.usage.clone();
    let age = now.saturating_sub(last_output_ms);
    v.last_activity_age_ms = Some(age);
    if stalled(age, idle_timeout_ms) {
        v.status = "stalled";
    }
}

/// The stalled rule: silent for more than half the idle timeout (0: none).
pub fn stalled(age_ms: u64, idle_timeout_ms: u64) -> bool {
    idle_timeout_ms > 0 && age_ms > idle_timeout_ms / 2
}

/// When the peer last printed anything: the newer of its logs' modification
/// times (the supervisor's idle clock counts stdout and stderr), or `since`.
pub fn last_output_ms(job: &Job, since: u64) -> u64 {
    newest_ms(
        [job.stdout_log(), job.stderr_log()].map(|p| p.metadata().ok()?.modified().ok()),
        since,
    )
}

/// The newest of some modification times, in ms (`since` if none is known).
pub fn newest_ms(times: [Option<std::time::SystemTime>; 2], since: u64) -> u64 {
    times
        .iter()
        .flatten()
        .filter_map(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as u64)
        .max()
        .unwrap_or(since)
}

/// A running job's idle timeout as `stalled` counts it: 0 for an agent that
/// does not stream progress (agy) or a job without one.
pub fn idle_timeout_ms(spec: Option<&Spec>) -> u64 {
    spec.filter(|sp| sp.plan.agent.streams_progress())
        .map_or(0, |sp| sp.plan.idle_timeout_ms)
}

/// A job whose record cannot be read (`baton status ID` says why).
fn corrupt(job: &Job, now: u64) -> JobView {
    JobView {
        job_id: job.id.clone(),
        status: "corrupt",
        agent: "unknown".into(),
        model: None,
        task: String::new(),
        created_ms: id_time_ms(&job.id),
        elapsed_ms: now.saturating_sub(id_time_ms(&job.id)),
        doing: Some(format!(
            "its record is damaged; see `baton status {}`",
            job.id
        )),
        files_changed: Vec::new(),
        usage: Usage::default(),
        last_activity_age_ms: None,
        row: Row::Job,
    }
}

/// What a running job's log and spec add: the activity, and `stalled`.
fn running(job: &Job, s: &State, now: u64, v: &mut JobView) {
    let spec = job.read_spec().ok();
    let agent = spec
        .as_ref()
        .map(|sp| sp.plan.agent)
        .or_else(|| Agent::parse(&s.agent).ok());
    let mut live = Live::default();
    if let Some(agent) = agent
        && let Ok(mut tail) = Tail::new(job.stdout_log(), agent).from_last(SNAPSHOT_READ)
    {
        // A read error leaves what was read: the snapshot still shows the job.
        let _ = tail.catch_up();
        live = tail.live;
    }
    let last = last_output_ms(job, s.created_ms);
    live_into(v, &live, last, idle_timeout_ms(spec.as_ref()), now);
}

/// `baton watch --once`.
pub fn once(mode: Mode) -> Result<i32> {
    let snap = snapshot(&Store::here()?, now_ms())?;
    let bytes = match mode {
        Mode::Json => {
            let mut b = serde_json::to_vec(&snap).map_err(|e| Error::Internal(e.to_string()))?;
            b.push(b'\n');
            b
        }
        Mode::Text => {
            crate::output::render::clean(&text(&snap), crate::output::render::Shape::Block)
                .into_owned()
                .into_bytes()
        }
    };
    // One write: the line can be megabytes; a closed stdout is not an error.
    let _ = std::io::stdout().lock().write_all(&bytes);
    Ok(0)
}

/// Tokens for people: `950`, `12.3k`, `4.1M`.
pub fn tokens(n: u64) -> String {
    match n {
        0..1000 => n.to_string(),
        1000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// Input plus output tokens, if the CLI reported any.
pub fn total_tokens(u: &Usage) -> Option<u64> {
    u.total_tokens()
}

/// The table for people, then a block per group (council, fan-out, bench run).
pub fn text(snap: &Snapshot) -> String {
    let mut t = jobs_text(snap);
    for c in &snap.councils {
        t.push_str(&group_text(c));
    }
    t
}

/// A group's block (a council or a fan-out): its header line, then one indented line per run.
pub fn group_text(c: &GroupView) -> String {
    let tok = total_tokens(&c.usage).map_or("-".into(), tokens);
    let mut t = format!(
        "\n{} {}  {}  {}  stage {}  {}  {} tokens  {}\n",
        match c.kind.as_str() {
            "fanout" => "fan-out",
            "bench" => "bench run",
            _ => "council",
        },
        c.council_id,
        c.kind,
        c.status,
        c.stage,
        human(c.elapsed_ms),
        tok,
        crate::agent::clip(c.task.lines().next().unwrap_or(""), 60)
    );
    if c.runs.is_empty() && c.kind == "bench" {
        t.push_str("  (no trial in flight)\n");
    } else if c.runs.is_empty() {
        t.push_str("  (no member run yet)\n");
    }
    for r in &c.runs {
        let tok = total_tokens(&r.usage).map_or("-".into(), tokens);
        t.push_str(&format!(
            "  {:<24}  {:<9}  {:<10}  {:>7}  {:>7}  {}\n",
            r.name,
            r.status,
            r.agent,
            human(r.elapsed_ms),
            tok,
            crate::agent::clip(
                r.doing
                    .as_deref()
                    .unwrap_or("")
                    .lines()
                    .next()
                    .unwrap_or(""),
                60
            )
        ));
    }
    t
}

fn jobs_text(snap: &Snapshot) -> String {
    if snap.jobs.is_empty() {
        return "no jobs\n".into();
    }
    let mut t = format!(
        "{:<13}  {:<9}  {:<10}  {:>7}  {:>5}  {:>7}  {:>5}  DOING\n",
        "ID", "STATUS", "AGENT", "ELAPSED", "LAST", "TOKENS", "FILES"
    );
    for v in &snap.jobs {
        let mut tok = total_tokens(&v.usage).map_or("-".into(), tokens);
        if let Some(c) = v.usage.cost_usd {
            tok = format!("{tok} ${c:.2}");
        }
        let doing = v.doing.as_deref().unwrap_or("");
        t.push_str(&format!(
            "{:<13}  {:<9}  {:<10}  {:>7}  {:>5}  {:>7}  {:>5}  {}\n",
            v.job_id,
            v.status,
            v.agent,
            human(v.elapsed_ms),
            v.last_activity_age_ms.map_or("-".into(), human),
            tok,
            v.files_changed.len(),
            crate::agent::clip(doing.lines().next().unwrap_or(""), 80)
        ));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_put_running_first_then_attention() {
        let mut v = [
            "success",
            "failed",
            "running",
            "cancelled",
            "stalled",
            "lost",
        ];
        v.sort_by_key(|s| group(s));
        assert_eq!(
            v,
            [
                "running",
                "failed",
                "stalled",
                "lost",
                "success",
                "cancelled"
            ]
        );
    }

    #[test]
    fn token_counts_for_people() {
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(12_345), "12.3k");
        assert_eq!(tokens(4_100_000), "4.1M");
    }
}
