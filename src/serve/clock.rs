//! The views' clocks moved to the moment they are sent: a view is kept with
//! the time its clocks were read, and every event re-reads them at send time.
//!
//! Why: the watcher publishes a view only when the job changed, so a page
//! opened later would otherwise get a silent job's `elapsed_ms` and the age
//! of its last activity as they were at its last change (a 74 s job shown
//! as "1s"). Advancing by the time passed gives what `view::watch` would
//! compute now, without re-reading any file: a running clock (`elapsed_ms`
//! of what has not ended, every `last_activity_age_ms`) grows with the wall
//! clock, a stopped one (an ended job's `elapsed_ms`) does not.

use serde::Serialize;

use crate::view::group::{GroupView, RunView};
use crate::view::watch::JobView;

/// A view and the wall-clock time (ms) at which its clocks were read.
#[derive(Debug, Clone)]
pub struct Timed<V> {
    pub view: V,
    pub at_ms: u64,
}

/// A view whose clocks can be advanced.
pub trait Clocks: Clone + Serialize {
    /// Advance the clocks that run by `ms`.
    fn advance(&mut self, ms: u64);
}

/// The statuses whose `elapsed_ms` `view::watch` computes from now (a
/// damaged record's too: its age is taken from its id).
fn job_elapsed_runs(status: &str) -> bool {
    matches!(status, "running" | "stalled" | "corrupt")
}

impl Clocks for JobView {
    fn advance(&mut self, ms: u64) {
        if job_elapsed_runs(self.status) {
            self.elapsed_ms += ms;
        }
        if let Some(a) = self.last_activity_age_ms.as_mut() {
            *a += ms;
        }
    }
}

impl Clocks for RunView {
    fn advance(&mut self, ms: u64) {
        // A `lost` run never recorded its end: its elapsed runs on, as in
        // `view::group`.
        if matches!(self.status, "running" | "stalled" | "lost") {
            self.elapsed_ms += ms;
        }
        if let Some(a) = self.last_activity_age_ms.as_mut() {
            *a += ms;
        }
    }
}

impl Clocks for GroupView {
    fn advance(&mut self, ms: u64) {
        // An ended council's elapsed stops at its last update.
        if self.status == "running" {
            self.elapsed_ms += ms;
        }
        for r in &mut self.runs {
            r.advance(ms);
        }
    }
}

impl<V: Clocks> Timed<V> {
    /// The view with its clocks as they read at `now_ms`.
    pub fn at(&self, now_ms: u64) -> V {
        let mut v = self.view.clone();
        v.advance(now_ms.saturating_sub(self.at_ms));
        v
    }
}

/// One view at `now_ms`, as JSON.
pub fn json<V: Clocks>(t: &Timed<V>, now_ms: u64) -> String {
    serde_json::to_string(&t.at(now_ms)).unwrap_or_else(|_| "null".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::watch::Row;

    fn job(status: &'static str, elapsed: u64, age: Option<u64>) -> JobView {
        JobView {
            job_id: "j".into(),
            status,
            agent: "codex".into(),
            model: None,
            task: "t".into(),
            created_ms: 1_000,
            elapsed_ms: elapsed,
            doing: None,
            files_changed: vec![],
            usage: Default::default(),
            last_activity_age_ms: age,
            row: Row::Job,
        }
    }

    #[test]
    fn a_running_job_ages_and_an_ended_one_only_grows_older() {
        let t = Timed {
            view: job("running", 1_000, Some(500)),
            at_ms: 2_000,
        };
        let v = t.at(76_000);
        assert_eq!(
            (v.elapsed_ms, v.last_activity_age_ms),
            (75_000, Some(74_500))
        );
        let t = Timed {
            view: job("success", 74_000, Some(0)),
            at_ms: 75_000,
        };
        let v = t.at(195_000);
        assert_eq!(
            (v.elapsed_ms, v.last_activity_age_ms),
            (74_000, Some(120_000)),
            "ended 2 minutes ago"
        );
        // A clock read later than `now` (it cannot run backwards) stays.
        assert_eq!(t.at(10).elapsed_ms, 74_000);
        let v = Timed {
            view: job("corrupt", 10, None),
            at_ms: 0,
        }
        .at(5);
        assert_eq!((v.elapsed_ms, v.last_activity_age_ms), (15, None));
    }

    #[test]
    fn a_council_s_clocks_run_while_it_runs() {
        let run = |status: &'static str, age: Option<u64>| RunView {
            name: "proposing-m0".into(),
            stage: "proposing".into(),
            who: "m0".into(),
            round: None,
            role: "member".into(),
            agent: "codex".into(),
            model: None,
            status,
            elapsed_ms: 100,
            doing: None,
            usage: Default::default(),
            last_activity_age_ms: age,
            log: None,
        };
        let council = |status: &'static str| GroupView {
            council_id: "c".into(),
            kind: "discuss".into(),
            stage: "proposing",
            status,
            task: "t".into(),
            created_ms: 0,
            elapsed_ms: 100,
            members: vec![],
            usage: Default::default(),
            runs: vec![
                run("running", Some(10)),
                run("ok", Some(20)),
                run("lost", None),
            ],
            progress: None,
        };
        let v = Timed {
            view: council("running"),
            at_ms: 1_000,
        }
        .at(3_000);
        assert_eq!(v.elapsed_ms, 2_100);
        let r: Vec<(u64, Option<u64>)> = v
            .runs
            .iter()
            .map(|r| (r.elapsed_ms, r.last_activity_age_ms))
            .collect();
        assert_eq!(r, [(2_100, Some(2_010)), (100, Some(2_020)), (2_100, None)]);
        let v = Timed {
            view: council("cancelled"),
            at_ms: 1_000,
        }
        .at(3_000);
        assert_eq!(v.elapsed_ms, 100, "an ended council's clock stopped");
    }
}
