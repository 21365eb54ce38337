//! A bench run seen as a group (`view::group`): its record's spec and
//! state as a `group::Head`, its trials recorded against those planned as
//! the head's `progress`, and the peer calls in flight as its runs (the
//! runner lists each in the record's `runs/` while it runs and forgets it
//! after: `bench::attempt`). `watch` and `watch --once` show it so.
//!
//! Cheap enough for every look: the set's task files are counted, not
//! read; the trial files (small) are read for the solved count.

use std::path::Path;

use super::group::{BenchProgress, Head, MemberView};
use crate::bench::spec::{self, TRIALS_DIR};
use crate::bench::state::{STATE_FILE, Stage, State};
use crate::bench::task::SET_FILE;
use crate::bench::trial;

/// The bench run in `dir` (`None`: absent or unreadable).
pub fn load(dir: &Path) -> Option<Head> {
    let s = spec::read(dir).ok()?;
    let st: State = crate::group::read_json(&dir.join(STATE_FILE)).ok()??;
    let trials = trial::read_dir(&dir.join(TRIALS_DIR)).unwrap_or_default();
    let solved = trials.iter().filter(|t| t.solved).count() as u64;
    let total = tasks_in(&s.set).map(|n| {
        let all = n * s.settings.len() * s.repeat as usize;
        match s.shard {
            Some(sh) => (0..all).filter(|k| sh.holds(*k)).count() as u64,
            None => all as u64,
        }
    });
    let progress = BenchProgress {
        done: trials.len() as u64,
        total,
        solved,
    };
    let set = s.set.file_name().map_or_else(
        || s.set.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let stage = match st.stage {
        Stage::Running => "running",
        Stage::Done => "done",
        Stage::Interrupted => "interrupted",
        Stage::Failed => "failed",
    };
    Some(Head {
        id: s.id.clone(),
        kind: "bench".into(),
        stage,
        stopped: st.stage != Stage::Running,
        task: format!("bench {set}: {}", line(&progress)),
        created_ms: s.created_at_ms,
        updated_ms: st.updated_ms,
        // No peer is called stalled here: a trial's peer has its own
        // timeout (`--timeout`), and the runs show how long each is silent.
        idle_ms: 0,
        pid: st.pid,
        members: s
            .settings
            .iter()
            .map(|setting| {
                let (agent, model) = match setting.split_once(':') {
                    Some((a, m)) => (a.to_string(), Some(m.to_string())),
                    None => (setting.clone(), None),
                };
                MemberView {
                    vendor: crate::agent::Agent::parse(&agent)
                        .map_or_else(|_| agent.clone(), |a| a.vendor(None, model.as_deref())),
                    agent,
                    model,
                    role: "writer",
                }
            })
            .collect(),
        progress: Some(progress),
    })
}

/// `3/8 trials, 2 solved` (`3 trials` when the set is gone).
pub fn line(p: &BenchProgress) -> String {
    match p.total {
        Some(t) => format!("{}/{t} trials, {} solved", p.done, p.solved),
        None => format!("{} trials, {} solved", p.done, p.solved),
    }
}

/// How many task files the set's folder holds (`None`: it is gone).
fn tasks_in(set: &Path) -> Option<usize> {
    let rd = std::fs::read_dir(set).ok()?;
    Some(
        rd.flatten()
            .filter(|e| {
                let n = e.file_name();
                let n = n.to_string_lossy();
                n.ends_with(".json") && n != SET_FILE
            })
            .count(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_line_says_what_is_known() {
        let p = |total| BenchProgress {
            done: 3,
            total,
            solved: 2,
        };
        assert_eq!(line(&p(Some(8))), "3/8 trials, 2 solved");
        assert_eq!(line(&p(None)), "3 trials, 2 solved");
    }
}
