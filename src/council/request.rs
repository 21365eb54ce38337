//! The council commands as plain requests: `CouncilRequest` (a new council)
//! and `Action` (what to do), built by `cli::council`.

use std::path::PathBuf;

/// A new council, as asked for (`discuss` or `plan`).
#[derive(Debug, Clone, Default)]
pub struct CouncilRequest {
    /// `discuss` or `plan`.
    pub kind: String,
    pub members: Vec<String>,
    pub chair: Option<String>,
    pub writer: Option<String>,
    pub depth: String,
    pub repair_rounds: u32,
    pub quorum: usize,
    pub seed: Option<u64>,
    pub max_wall: Option<String>,
    pub budget_tokens: Option<u64>,
    pub max_usd: Option<f64>,
    pub test_cmd: Option<String>,
    pub allow: Vec<String>,
    /// Approve at once and execute (`plan --yes`).
    pub yes: bool,
    pub run_async: bool,
    pub dry_run: bool,
    pub effort: Option<String>,
    pub timeout: String,
    pub idle_timeout: String,
    /// The packet flags of `baton ask` (question = the task).
    pub packet: crate::ask::AskRequest,
    /// `--notify` / `--no-notify`: whether the driver announces the
    /// council (its members never do).
    pub notify: crate::notify::Choice,
}

/// What to do.
#[derive(Debug, Clone)]
pub enum Action {
    Start(Box<CouncilRequest>),
    Approve {
        id: String,
        plan_sha256: String,
    },
    Execute {
        id: String,
    },
    Status {
        id: String,
    },
    Result {
        id: String,
    },
    Report {
        id: String,
    },
    Cancel {
        id: String,
    },
    Resume {
        id: String,
    },
    List,
    /// The background runner of `--async` (hidden command).
    Runner {
        id: String,
        root: PathBuf,
    },
}
