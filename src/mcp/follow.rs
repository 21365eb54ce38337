//! `job_wait`'s progress: the waited-for job's log followed from this
//! process (the child `baton wait` only blocks on the job's lock), reduced
//! to the same one-line activity as a foreground run's. A council's or a
//! fan-out's id has no log of its own: its records and its running peers'
//! logs are followed instead, as `watch` follows them.

use std::ffi::OsStr;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::agent::Agent;
use crate::job::store::Store;
use crate::view::group::group_dirs;
use crate::view::group_watch::Groups;
use crate::view::progress::{activity, group_activity};
use crate::view::tail::Tail;

/// Most of the log read per poll: a flood of output cannot stall the server.
const READ_PER_POLL: usize = 256 << 10;

pub enum JobLog {
    /// A job: its peer's `stdout.log`.
    Job { tail: Box<Tail>, agent: Agent },
    /// A council or a fan-out: its record and its runs.
    Group { groups: Groups, id: String },
}

impl JobLog {
    /// What to follow for `id` in this directory's store; `None` for an id
    /// that names nothing here (a typo: `baton wait` reports those).
    pub fn open(id: &str) -> Option<JobLog> {
        let store = Store::here().ok()?;
        if let Ok(job) = store.open(OsStr::new(id)) {
            let agent = job.read_spec().ok()?.plan.agent;
            return Some(JobLog::Job {
                tail: Box::new(Tail::new(job.stdout_log(), agent)),
                agent,
            });
        }
        // Checked the way the group views check a client's id: valid, and a
        // folder of this project's groups with a record in it.
        let dirs = group_dirs(&store);
        let known = crate::ids::is_valid(id)
            && dirs
                .iter()
                .any(|(_, d)| d.join(id).join("state.json").is_file());
        known.then(|| JobLog::Group {
            groups: Groups::in_folders(dirs),
            id: id.to_string(),
        })
    }

    /// What the peers are doing now, once one has said anything.
    pub fn poll(&mut self) -> Option<String> {
        match self {
            JobLog::Job { tail, agent } => {
                // A read error (the log not there yet) leaves the activity as it was.
                let _ = tail.poll(READ_PER_POLL);
                (tail.live.activities > 0).then(|| activity(&[(*agent, &tail.live, false)]))
            }
            JobLog::Group { groups, id } => {
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as u64);
                groups.refresh(now, false);
                group_activity(groups.get(id)?)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::result::Usage;
    use crate::view::group::{GroupView, RunView};
    use crate::view::progress::group_activity;

    fn run(stage: &str, agent: &str, status: &'static str, doing: Option<&str>) -> RunView {
        RunView {
            name: format!("{stage}-{agent}"),
            stage: stage.into(),
            who: agent.into(),
            round: None,
            role: "member".into(),
            agent: agent.into(),
            model: None,
            status,
            elapsed_ms: 0,
            doing: doing.map(Into::into),
            usage: Usage::default(),
            last_activity_age_ms: None,
            log: None,
        }
    }

    fn view(kind: &str, runs: Vec<RunView>, tokens: u64) -> GroupView {
        GroupView {
            council_id: "1m8q4fhwprzza".into(),
            kind: kind.into(),
            stage: "critiquing",
            status: "running",
            task: "t".into(),
            created_ms: 0,
            elapsed_ms: 0,
            members: Vec::new(),
            usage: Usage {
                input_tokens: Some(tokens),
                output_tokens: Some(0),
                ..Usage::default()
            },
            runs,
            progress: None,
        }
    }

    /// A group followed from outside says what its own runner says: the
    /// latest stage's peers after the stage, the tokens of every stage.
    #[test]
    fn a_groups_line_names_the_latest_stage_and_its_peers() {
        assert_eq!(group_activity(&view("discuss", Vec::new(), 0)), None);
        let runs = vec![
            run("proposing", "codex", "ok", None),
            run("proposing", "claude", "ok", None),
            run("critiquing", "codex", "running", Some("thinking\nmore")),
            run("critiquing", "claude", "ok", None),
            run("critiquing", "pi", "stalled", None),
        ];
        assert_eq!(
            group_activity(&view("plan", runs, 3300)).as_deref(),
            Some(
                "council: critiquing — 3 peers (1 done) · codex: thinking · pi: starting · 3.3k tokens"
            )
        );
        let one = vec![run("round-1", "pi", "running", Some("$ cargo test"))];
        assert_eq!(
            group_activity(&view("fanout", one, 0)).as_deref(),
            Some("fan-out: round-1 — pi: $ cargo test")
        );
    }
}
