//! A group's stalls: while a fan-out, council or bench run is under way,
//! each of its runs (`runs`, those not ended and with a log) that prints
//! nothing for longer than `[notify] stall_after` is announced by the
//! group, as the group: one event per look, naming every run that fell
//! silent since the last one, each once per silence. The runs themselves
//! never announce (issue 33: "their parent does, once").

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use super::runs;
use crate::notify::stalls::{self, Stalls, Watched};
use crate::notify::{self, Choice, Event, Origin, Trigger, Work};

/// Who the group's stalls are announced as, and to whom.
#[derive(Debug, Clone)]
pub struct Owner {
    pub work: Work,
    /// The fan-out's, council's or bench run's id.
    pub id: String,
    pub repo: PathBuf,
    /// The group's record folder: its `runs/` are watched, and what each
    /// channel did is kept there (`notify.json`).
    pub dir: PathBuf,
    pub choice: Choice,
    pub origin: Origin,
}

/// Watch the group's runs until the guard is dropped (`None` when no
/// channel would announce a stall: no thread then).
pub fn watch(owner: Owner) -> Option<Stalls> {
    let after = stalls::threshold(&owner.repo, owner.choice)?;
    let dir = owner.dir.clone();
    Some(Stalls::watch_all(
        move || under_way(&dir),
        after,
        move |stalled| announce(&owner, &stalled),
    ))
}

/// The group's runs still under way that write logs, keyed by record name.
fn under_way(dir: &Path) -> Vec<Watched> {
    runs::list(dir)
        .into_iter()
        .filter(|r| r.ended_ms.is_none())
        .filter_map(|r| {
            let logs = r.log.as_deref()?.parent()?.to_path_buf();
            Some(Watched {
                key: r.name(),
                logs,
                since: UNIX_EPOCH + Duration::from_millis(r.started_ms),
            })
        })
        .collect()
}

fn announce(owner: &Owner, stalled: &[(Watched, Duration)]) {
    let recs = runs::list(&owner.dir);
    let mut agents: Vec<&str> = Vec::new();
    let mut lines = Vec::new();
    for (w, silent) in stalled {
        let Some(r) = recs.iter().find(|r| r.name() == w.key) else {
            continue;
        };
        if !agents.contains(&r.agent.as_str()) {
            agents.push(&r.agent);
        }
        lines.push(format!(
            "{} ({} {}) has printed nothing for {}s",
            r.agent,
            r.stage,
            r.who,
            silent.as_secs()
        ));
    }
    if lines.is_empty() {
        return;
    }
    let e = Event::new(Trigger::Stalled, owner.work, "running")
        .id(owner.id.as_str())
        .repo(owner.repo.as_path())
        .agent(agents.join(","))
        .summary(&lines.join("; "));
    notify::announce(&e, owner.choice, &owner.origin, Some(&owner.dir));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_runs_under_way_with_a_log_are_watched() {
        let d = tempfile::tempdir().unwrap();
        let who = runs::Who {
            agent: "codex",
            model: None,
        };
        let log = d.path().join("r1/stdout.log");
        let live = runs::start(d.path(), "writing", "c1", who, Some(&log)).unwrap();
        let ended = runs::start(d.path(), "writing", "c2", who, Some(&log)).unwrap();
        ended.end("success", &Default::default(), None);
        runs::start(d.path(), "judging", "judge", who, None).unwrap();
        let w = under_way(d.path());
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].key, live.record.name());
        assert_eq!(w[0].logs, d.path().join("r1"));
        let started = UNIX_EPOCH + Duration::from_millis(live.record.started_ms);
        assert_eq!(w[0].since, started);
        assert!(w[0].since <= std::time::SystemTime::now());
    }
}
