//! The selected job's log read into transcript lines for the detail pane: a
//! tail from a remembered offset, each activity rendered as `baton logs` does.

use crate::agent::Agent;
use crate::job::store::Job;
use crate::view::Activity;
use crate::view::render;
use crate::view::tail::Tail;

/// How far back a log is read when its detail pane opens (enough for far
/// more than the 2,000 lines the pane keeps).
const FIRST_READ: u64 = 4 << 20;

/// Read per wake while the job runs.
const READ_PER_WAKE: usize = 1 << 20;

pub struct Feed {
    pub id: String,
    tail: Option<Tail>,
    started: bool,
    finished: bool,
}

impl Feed {
    pub fn open(job: &Job, agent_name: &str) -> Feed {
        let agent = job
            .read_spec()
            .map(|s| s.plan.agent)
            .or_else(|_| Agent::parse(agent_name));
        Feed {
            id: job.id.clone(),
            tail: agent
                .ok()
                .and_then(|a| Tail::new(job.stdout_log(), a).from_last(FIRST_READ).ok()),
            started: false,
            finished: false,
        }
    }

    /// A council run's transcript, from its log (`None`: the run has none).
    pub fn run(id: String, log: Option<std::path::PathBuf>, agent_name: &str) -> Feed {
        Feed {
            id,
            tail: log
                .zip(Agent::parse(agent_name).ok())
                .and_then(|(p, a)| Tail::new(p, a).from_last(FIRST_READ).ok()),
            started: false,
            finished: false,
        }
    }

    /// New transcript lines; `ended`: the log is complete (read it all and
    /// flush what the reducer holds back).
    pub fn lines(&mut self, ended: bool) -> Vec<String> {
        let Some(t) = self.tail.as_mut() else {
            return Vec::new();
        };
        if self.finished {
            return Vec::new();
        }
        let acts = if ended {
            self.finished = true;
            t.finish()
        } else if !self.started {
            // The pane opens on the whole kept history, not its first MiB.
            self.started = true;
            t.catch_up()
        } else {
            t.poll(READ_PER_WAKE)
        };
        // A read error leaves what was read; the next wake tries again.
        lines(&acts.unwrap_or_default())
    }
}

fn lines(acts: &[Activity]) -> Vec<String> {
    acts.iter()
        .filter_map(render::line)
        .flat_map(|l| l.lines().map(str::to_string).collect::<Vec<_>>())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::store::Store;

    #[test]
    fn a_log_becomes_lines_as_it_grows_and_once_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::in_dir(dir.path());
        let job = store.job("1m8q4fhwprzza");
        std::fs::create_dir_all(&job.dir).unwrap();
        let mut f = Feed::open(&job, "codex");
        assert!(f.lines(false).is_empty(), "no log yet");
        std::fs::write(
            job.stdout_log(),
            concat!(
                r#"{"type":"item.started","item":{"type":"command_execution","command":"make"}}"#,
                "\n",
                r#"{"type":"item.completed","item":{"type":"agent_message","text":"one\ntwo"}}"#,
                "\n"
            ),
        )
        .unwrap();
        assert_eq!(f.lines(false), ["$ make", "» one", "  two"]);
        assert!(f.lines(true).is_empty());
        assert!(f.lines(true).is_empty(), "read once");
    }
}
