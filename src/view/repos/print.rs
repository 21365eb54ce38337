//! The view across repositories printed: `watch --all --once` (the snapshot
//! as JSON, or a table with a REPO column) and `jobs --all-repos` (one row
//! per job, council or fan-out, with its repository).

use std::io::Write;

use serde::Serialize;

use super::{AllSnapshot, Filter, RepoSummary, snapshot_all};
use crate::error::{Error, Result};
use crate::output::Mode;
use crate::result::SCHEMA_VERSION;
use crate::view::watch;

/// `baton watch --all --once`.
pub fn once(filter: &Filter, mode: Mode) -> Result<i32> {
    let snap = snapshot_all(crate::ids::now_ms(), filter)?;
    let bytes = match mode {
        Mode::Json => json(&snap)?,
        Mode::Text => {
            crate::output::render::clean(&text(&snap), crate::output::render::Shape::Block)
                .into_owned()
                .into_bytes()
        }
    };
    // One write: the line can be large; a closed stdout is not an error.
    let _ = std::io::stdout().lock().write_all(&bytes);
    Ok(0)
}

fn json(v: &impl Serialize) -> Result<Vec<u8>> {
    let mut b = serde_json::to_vec(v).map_err(|e| Error::Internal(e.to_string()))?;
    b.push(b'\n');
    Ok(b)
}

/// One row of `jobs --all-repos`: a job, a council or a fan-out.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Row {
    pub repo: String,
    /// `job`, `council` or `fanout`.
    pub kind: &'static str,
    pub job_id: String,
    pub status: &'static str,
    /// The agent (a job), or the group's kind (`plan`, `discuss`, `fanout`).
    pub agent: String,
    pub task: String,
    pub created_ms: u64,
    pub elapsed_ms: u64,
    /// Running: what the peer does now. Ended: the summary.
    pub summary: Option<String>,
}

/// `baton jobs --all-repos --json` (`baton schema jobs-all-repos`).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Listing {
    pub schema_version: u32,
    pub repos: Vec<RepoSummary>,
    /// Running first, then what needs attention, then the newest.
    pub jobs: Vec<Row>,
    /// Records in all the repositories listed, and how many are not rows.
    pub total: usize,
    pub hidden: usize,
}

/// `baton jobs --all-repos [--all] [--repo PATTERN]`.
pub fn jobs_listing(filter: &Filter, mode: Mode) -> Result<i32> {
    let snap = snapshot_all(crate::ids::now_ms(), filter)?;
    let l = listing(snap);
    match mode {
        Mode::Json => crate::output::write_stdout(&json(&l)?)?,
        Mode::Text => crate::output::text(&listing_text(&l))?,
    }
    Ok(0)
}

fn listing(snap: AllSnapshot) -> Listing {
    let total: usize = snap
        .repos
        .iter()
        .map(|r| r.jobs_total + r.groups_total)
        .sum();
    let mut jobs: Vec<Row> = snap
        .jobs
        .into_iter()
        .map(|r| Row {
            repo: r.repo,
            kind: "job",
            job_id: r.job.job_id,
            status: r.job.status,
            agent: r.job.agent,
            task: r.job.task,
            created_ms: r.job.created_ms,
            elapsed_ms: r.job.elapsed_ms,
            summary: r.job.doing,
        })
        .collect();
    jobs.extend(snap.councils.into_iter().map(|g| Row {
        repo: g.repo,
        kind: if g.group.kind == "fanout" {
            "fanout"
        } else {
            "council"
        },
        job_id: g.group.council_id,
        status: g.group.status,
        agent: g.group.kind,
        task: g.group.task,
        created_ms: g.group.created_ms,
        elapsed_ms: g.group.elapsed_ms,
        summary: None,
    }));
    jobs.sort_by(|a, b| {
        (watch::group(a.status), b.created_ms, &b.job_id).cmp(&(
            watch::group(b.status),
            a.created_ms,
            &a.job_id,
        ))
    });
    Listing {
        schema_version: SCHEMA_VERSION,
        hidden: total.saturating_sub(jobs.len()),
        total,
        repos: snap.repos,
        jobs,
    }
}

fn listing_text(l: &Listing) -> String {
    let mut t = String::new();
    for r in l.repos.iter().filter(|r| r.status != "ok") {
        t.push_str(&format!(
            "repo {} is {}{}\n",
            r.repo,
            r.status,
            r.error
                .as_deref()
                .map_or(String::new(), |e| format!(": {e}"))
        ));
    }
    if l.jobs.is_empty() {
        t.push_str("no jobs\n");
        return t;
    }
    t.push_str(&format!(
        "{:<24}  {:<13}  {:<10}  {:<9}  {:>8}  TASK\n",
        "REPO", "ID", "AGENT", "STATUS", "DURATION"
    ));
    for r in &l.jobs {
        t.push_str(&format!(
            "{:<24}  {:<13}  {:<10}  {:<9}  {:>8}  {}\n",
            short(&r.repo),
            r.job_id,
            r.agent,
            r.status,
            crate::job::human(r.elapsed_ms),
            crate::output::render::clean(&r.task, crate::output::render::Shape::Line)
        ));
    }
    if l.hidden > 0 {
        t.push_str(&format!(
            "({} older records not shown; `baton jobs --all-repos --all` lists every one)\n",
            l.hidden
        ));
    }
    t
}

/// `watch --all --once --text`: the repositories, then the table with a
/// REPO column, then a block per group.
pub fn text(snap: &AllSnapshot) -> String {
    let mut t = String::new();
    for r in &snap.repos {
        t.push_str(&format!(
            "repo {}  {}  {} jobs ({} not listed)  {} groups ({} not listed){}\n",
            r.repo,
            r.status,
            r.jobs_total,
            r.jobs_hidden,
            r.groups_total,
            r.groups_hidden,
            r.error
                .as_deref()
                .map_or(String::new(), |e| format!("  {e}"))
        ));
    }
    if snap.repos.is_empty() {
        t.push_str("no repositories with baton records\n");
    }
    t.push('\n');
    if snap.jobs.is_empty() {
        t.push_str("no jobs\n");
    } else {
        t.push_str(&format!(
            "{:<24}  {:<13}  {:<9}  {:<10}  {:>7}  {:>7}  DOING\n",
            "REPO", "ID", "STATUS", "AGENT", "ELAPSED", "TOKENS"
        ));
    }
    for r in &snap.jobs {
        let v = &r.job;
        let tok = watch::total_tokens(&v.usage).map_or("-".into(), watch::tokens);
        let doing = v.doing.as_deref().unwrap_or("");
        t.push_str(&format!(
            "{:<24}  {:<13}  {:<9}  {:<10}  {:>7}  {:>7}  {}\n",
            short(&r.repo),
            v.job_id,
            v.status,
            v.agent,
            crate::job::human(v.elapsed_ms),
            tok,
            crate::agent::clip(doing.lines().next().unwrap_or(""), 60)
        ));
    }
    for g in &snap.councils {
        let block = watch::group_text(&g.group);
        t.push_str(&format!("\n[{}]", short(&g.repo)));
        t.push_str(&block);
    }
    t
}

/// A repository's label for a narrow column: its last path components.
pub fn short(repo: &str) -> String {
    let n = repo.chars().count();
    if n <= 24 {
        return repo.to_string();
    }
    let tail: String = repo.chars().skip(n - 23).collect();
    format!("…{tail}")
}
