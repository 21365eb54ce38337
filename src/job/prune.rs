//! `baton prune`: remove every record baton keeps once it is old enough:
//! ended jobs (never running ones) with their logs and the worktrees no
//! remaining job uses (unless those hold uncommitted work), foreground run
//! records, and ended councils and fan-outs as whole records: the folder,
//! the runs it names, a fan-out's candidates' worktrees (`prune_records`).
//! A run folder a kept record names is never removed.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::output::{self, Mode};
use crate::result::SCHEMA_VERSION;

use super::prune_records::{self, GroupEntry, PrunedGroup, PrunedRun};
use super::store::{Job, Store, id_time_ms, now_ms};

#[derive(Serialize)]
pub(super) struct Pruned {
    pub(super) job_id: String,
    pub(super) status: &'static str,
    pub(super) agent: String,
    pub(super) task: String,
    pub(super) ended_ms: Option<u64>,
    pub(super) bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) worktree: Option<String>,
}

#[derive(Serialize)]
pub(super) struct KeptWorktree {
    pub(super) id: String,
    pub(super) reason: String,
}

/// How many records of each kind were (or, with `--dry-run`, would be) removed.
#[derive(Serialize, Default)]
struct Counts {
    jobs: usize,
    runs: usize,
    councils: usize,
    council_runs: usize,
    fanouts: usize,
    fanout_runs: usize,
    benches: usize,
    worktrees: usize,
}

/// `baton prune [--older-than D] [--dry-run]`: remove ended jobs, never
/// running ones. The worktree of a removed `--worktree` job goes too once no
/// remaining job uses it, unless it holds uncommitted changes; its branch,
/// which holds the work, always stays. Foreground run records and ended
/// councils and fan-outs (`groups`, read by the caller) go by the same age.
/// `older_than` was parsed by the caller before anything is read.
pub fn prune(
    older_than: Duration,
    dry_run: bool,
    mode: Mode,
    groups: Vec<GroupEntry>,
) -> Result<i32> {
    let older = older_than.as_millis() as u64;
    let store = Store::here()?;
    let now = now_ms();
    let cutoff = now.saturating_sub(older);
    let mut doomed: Vec<(Job, Pruned)> = Vec::new();
    let mut in_use = std::collections::HashSet::new();
    let mut running = 0usize;
    for id in store.ids()? {
        let job = store.job(&id);
        let s = match job.read_state() {
            Ok(s) => s,
            Err(e) => {
                // A directory without state (a launch in progress or cut
                // short: lost) or with a damaged one (corrupt): removed once
                // clearly abandoned, as of its start.
                let corrupt = matches!(e, Error::CorruptJob { .. });
                let born = id_time_ms(&id);
                if !job.runner_alive()
                    && born < cutoff
                    && (corrupt || now.saturating_sub(born) > 60_000)
                {
                    let bytes = dir_size(&job.dir);
                    doomed.push((
                        job,
                        Pruned {
                            job_id: id.clone(),
                            status: if corrupt { "corrupt" } else { "lost" },
                            agent: String::new(),
                            task: String::new(),
                            ended_ms: None,
                            bytes,
                            worktree: None,
                        },
                    ));
                }
                continue;
            }
        };
        let s = if s.status.is_terminal() {
            s
        } else {
            job.refresh()?
        };
        if !s.status.is_terminal() || s.ended_ms.unwrap_or(s.created_ms) > cutoff {
            running += usize::from(!s.status.is_terminal());
            in_use.extend(s.worktree.clone());
            continue;
        }
        let bytes = dir_size(&job.dir);
        doomed.push((
            job,
            Pruned {
                job_id: id.clone(),
                status: s.status.as_str(),
                agent: s.agent.clone(),
                task: s.task.clone(),
                ended_ms: s.ended_ms,
                bytes,
                worktree: s.worktree.clone(),
            },
        ));
    }
    let mut removed = Vec::new();
    let mut worktrees_removed = Vec::new();
    let mut worktrees_kept = Vec::new();
    for (job, p) in doomed {
        let session = p
            .worktree
            .as_ref()
            .filter(|w| !in_use.contains(*w))
            .and_then(|_| job.read_spec().ok())
            .and_then(|sp| sp.worktree);
        if !dry_run && !remove(&store, &job) {
            continue;
        }
        if let Some(w) = session.filter(|w| !worktrees_removed.contains(&w.id)) {
            let gone = dry_run || {
                match crate::worktree::store::remove(&w.root, &w.id, false, false) {
                    Ok(_) => true,
                    Err(e) => {
                        worktrees_kept.push(KeptWorktree {
                            id: w.id.clone(),
                            reason: e.to_string(),
                        });
                        false
                    }
                }
            };
            if gone {
                worktrees_removed.push(w.id);
            }
        }
        removed.push(p);
    }
    let (groups_removed, runs_removed, more) = prune_others(
        &store,
        &groups,
        now,
        cutoff,
        dry_run,
        (&mut worktrees_removed, &mut worktrees_kept),
    )?;
    let of = |kind: &str| -> Vec<&PrunedGroup> {
        groups_removed.iter().filter(|g| g.kind == kind).collect()
    };
    let (councils_removed, fanouts_removed, benches_removed) =
        (of("council"), of("fanout"), of("bench"));
    let counts = Counts {
        jobs: removed.len(),
        runs: runs_removed.len(),
        councils: councils_removed.len(),
        council_runs: councils_removed.iter().map(|c| c.runs).sum(),
        fanouts: fanouts_removed.len(),
        fanout_runs: fanouts_removed.iter().map(|c| c.runs).sum(),
        benches: benches_removed.len(),
        worktrees: worktrees_removed.len(),
    };
    let freed: u64 = removed.iter().map(|p| p.bytes).sum::<u64>()
        + runs_removed.iter().map(|r| r.bytes).sum::<u64>()
        + groups_removed.iter().map(|c| c.bytes).sum::<u64>();
    match mode {
        Mode::Json => output::json_line(&serde_json::json!({
            "schema_version": SCHEMA_VERSION,
            "dry_run": dry_run,
            "older_than_ms": older,
            "removed": removed,
            "runs_removed": runs_removed,
            "councils_removed": councils_removed.iter().map(|g| g.to_json()).collect::<Vec<_>>(),
            "fanouts_removed": fanouts_removed.iter().map(|g| g.to_json()).collect::<Vec<_>>(),
            "benches_removed": benches_removed.iter().map(|g| g.to_json()).collect::<Vec<_>>(),
            "counts": counts,
            "freed_bytes": freed,
            "running_kept": running,
            "runs_running_kept": more.runs_running,
            "councils_not_ended_kept": more.councils_not_ended,
            "fanouts_not_ended_kept": more.fanouts_not_ended,
            "benches_not_ended_kept": more.benches_not_ended,
            "worktrees_removed": worktrees_removed,
            "worktrees_kept": worktrees_kept,
        }))?,
        Mode::Text => {
            let verb = if dry_run { "would remove" } else { "removed" };
            let mut t = String::new();
            for p in &removed {
                t.push_str(&format!(
                    "{verb} {}  {:<10}  {:<9}  {}\n",
                    p.job_id, p.agent, p.status, p.task
                ));
            }
            for w in &worktrees_removed {
                t.push_str(&format!(
                    "{verb} worktree {w} (its branch baton/{w} stays)\n"
                ));
            }
            for k in &worktrees_kept {
                t.push_str(&format!("kept worktree {}: {}\n", k.id, k.reason));
            }
            for c in &groups_removed {
                let what = match c.kind {
                    "fanout" => "fan-out",
                    "bench" => "bench run",
                    _ => "council",
                };
                t.push_str(&format!(
                    "{verb} {what} {}  {:<10}  {} run(s)  {}\n",
                    c.id, c.stage, c.runs, c.task
                ));
            }
            if !runs_removed.is_empty() {
                t.push_str(&format!(
                    "{verb} {} foreground run record(s)\n",
                    runs_removed.len()
                ));
            }
            t.push_str(&format!(
                "{verb} {} job(s), {} run record(s), {} council(s) with {} run(s), {} fan-out(s) \
                 with {} run(s), {} bench run(s), {} worktree(s): {} KiB; kept {running} running \
                 job(s), {} running run(s), {} council(s) and {} fan-out(s) not ended, {} bench \
                 run(s) not ended\n",
                counts.jobs,
                counts.runs,
                counts.councils,
                counts.council_runs,
                counts.fanouts,
                counts.fanout_runs,
                counts.benches,
                counts.worktrees,
                freed.div_ceil(1024),
                more.runs_running,
                more.councils_not_ended,
                more.fanouts_not_ended,
                more.benches_not_ended,
            ));
            output::text(&t)?;
        }
    }
    Ok(0)
}

/// What was kept besides running jobs.
struct Kept {
    runs_running: usize,
    councils_not_ended: usize,
    fanouts_not_ended: usize,
    benches_not_ended: usize,
}

/// The worktrees removed and kept so far (jobs', then groups').
type Worktrees<'a> = (&'a mut Vec<String>, &'a mut Vec<KeptWorktree>);

/// Ended groups (councils, fan-outs: their folder, the runs they name, a
/// fan-out's worktrees) and foreground run records older than `cutoff`:
/// removed unless `dry_run`, and reported. A run that a group which stays
/// names is kept, whatever its age.
fn prune_others(
    store: &Store,
    groups: &[GroupEntry],
    now: u64,
    cutoff: u64,
    dry_run: bool,
    (wt_removed, wt_kept): Worktrees,
) -> Result<(Vec<PrunedGroup>, Vec<PrunedRun>, Kept)> {
    let mut doomed = Vec::new();
    let mut keep_runs: HashSet<PathBuf> = HashSet::new();
    let mut not_ended = [0, 0, 0];
    for (i, kind) in ["council", "fanout", "bench"].into_iter().enumerate() {
        let of_kind: Vec<GroupEntry> = groups.iter().filter(|g| g.kind == kind).cloned().collect();
        let (d, keep, n) = prune_records::groups(&of_kind, now, cutoff);
        doomed.extend(d.into_iter().map(|(g, p)| (g.clone(), p)));
        keep_runs.extend(keep);
        not_ended[i] = n;
    }
    let mut removed = Vec::new();
    let mut with_groups: HashSet<PathBuf> = HashSet::new();
    for (g, p) in doomed {
        with_groups.extend(g.runs.iter().filter(|r| !keep_runs.contains(*r)).cloned());
        let parent = g.dir.parent().unwrap_or(&g.dir);
        if !dry_run {
            if !prune_records::remove_dir(parent, &g.dir, &g.id) {
                continue;
            }
            for r in g.runs.iter().filter(|r| !keep_runs.contains(*r)) {
                let id = r.file_name().and_then(|n| n.to_str()).unwrap_or("run");
                prune_records::remove_dir(r.parent().unwrap_or(r), r, id);
            }
        }
        if let Some(root) = store.root() {
            let todo: Vec<String> = g
                .worktrees
                .iter()
                .filter(|w| !wt_removed.contains(w))
                .cloned()
                .collect();
            for w in todo {
                let gone = dry_run
                    || match crate::worktree::store::remove(root, &w, false, false) {
                        Ok(_) => true,
                        Err(e) => {
                            wt_kept.push(KeptWorktree {
                                id: w.clone(),
                                reason: e.to_string(),
                            });
                            false
                        }
                    };
                if gone {
                    wt_removed.push(w);
                }
            }
        }
        removed.push(p);
    }
    let kept = |runs_running| Kept {
        runs_running,
        councils_not_ended: not_ended[0],
        fanouts_not_ended: not_ended[1],
        benches_not_ended: not_ended[2],
    };
    let Some(root) = store.root() else {
        return Ok((removed, Vec::new(), kept(0)));
    };
    let runs_dir = crate::state_dir::project(root)?.join("runs");
    let (doomed_runs, runs_running) =
        prune_records::runs(&runs_dir, cutoff, &keep_runs, &with_groups);
    let mut runs_removed = Vec::new();
    for (dir, p) in doomed_runs {
        if dry_run || prune_records::remove_dir(&runs_dir, &dir, &p.run_id) {
            runs_removed.push(p);
        }
    }
    Ok((removed, runs_removed, kept(runs_running)))
}

/// Move the job out of sight first (one rename), then delete it, so no
/// reader ever sees a half-deleted job.
pub(super) fn remove(store: &Store, job: &Job) -> bool {
    let trash = store.dir.join(format!(
        ".trash-{}-{}",
        job.id,
        crate::ids::random_suffix(6)
    ));
    if std::fs::rename(&job.dir, &trash).is_err() {
        return false;
    }
    let _ = std::fs::remove_dir_all(&trash);
    true
}

pub(super) fn dir_size(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_time_round_trips() {
        let before = now_ms();
        let id = crate::ids::new_id();
        let t = id_time_ms(&id);
        assert!(t >= before && t <= now_ms(), "{t} vs {before}");
    }
}
