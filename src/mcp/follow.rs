//! `job_wait`'s progress: the waited-for job's log followed from this
//! process (the child `baton wait` only blocks on the job's lock), reduced
//! to the same one-line activity as a foreground run's.

use std::ffi::OsStr;

use crate::agent::Agent;
use crate::job::store::Store;
use crate::view::progress::activity;
use crate::view::tail::Tail;

/// Most of the log read per poll: a flood of output cannot stall the server.
const READ_PER_POLL: usize = 256 << 10;

pub struct JobLog {
    tail: Tail,
    agent: Agent,
}

impl JobLog {
    /// The log of job `id` in this directory's store; `None` for an id that
    /// names no job here (a council, a typo: `baton wait` reports those).
    pub fn open(id: &str) -> Option<JobLog> {
        let job = Store::here().ok()?.open(OsStr::new(id)).ok()?;
        let agent = job.read_spec().ok()?.plan.agent;
        Some(JobLog {
            tail: Tail::new(job.stdout_log(), agent),
            agent,
        })
    }

    /// What the peer is doing now, once it has said anything.
    pub fn poll(&mut self) -> Option<String> {
        // A read error (the log not there yet) leaves the activity as it was.
        let _ = self.tail.poll(READ_PER_POLL);
        (self.tail.live.activities > 0).then(|| activity(&[(self.agent, &self.tail.live, false)]))
    }
}
