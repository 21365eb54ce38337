//! Tool errors: baton itself could not do what was asked.
//!
//! These are kept apart from agent outcomes (`result::Status`): a peer that ran
//! and failed, timed out or was cancelled is a well-formed result, not an
//! `Error`. Every variant has a stable `kind()` string (part of the JSON
//! contract) and an exit code documented in the README.

use std::io;
use std::path::PathBuf;

/// What an id was asked for as, so that `NotFound` and `InvalidId` name it.
///
/// One kind per error whatever the id names (`job_not_found`,
/// `invalid_job_id`, part of the JSON contract since jobs were the only
/// records): a caller knows what it asked for, and would do the same with a
/// council's unknown id as with a job's. Only the message and the hint differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdOf {
    /// A job's, or an id the job commands take that no record knows (they
    /// accept councils and fan-outs too, and fall back to the job store).
    Job,
    /// `baton council …`'s.
    Council,
    /// A fan-out's record (`fanouts/<id>/`).
    Fanout,
    /// A council or a fan-out (the page's group routes).
    Group,
    /// A `baton bench` run's record (`benches/<id>/`).
    Bench,
}

impl IdOf {
    /// The word a message names the id with.
    pub fn noun(self) -> &'static str {
        match self {
            IdOf::Job => "job",
            IdOf::Council => "council",
            IdOf::Fanout => "fan-out",
            IdOf::Group => "council or fan-out",
            IdOf::Bench => "bench run",
        }
    }

    /// Where the ids of this kind are listed.
    fn lister(self) -> &'static str {
        match self {
            IdOf::Council => "baton council list",
            IdOf::Job | IdOf::Fanout | IdOf::Group | IdOf::Bench => "baton jobs --all",
        }
    }
}

/// Exit codes, in one place so the README table and the code cannot drift.
pub mod exit {
    pub const SUCCESS: i32 = 0;
    /// The peer ran and failed (or baton hit an I/O problem; `error.kind` says which).
    pub const FAILED: i32 = 1;
    pub const USAGE: i32 = 2;
    /// Reserved for the plugin shim: no binary for this platform.
    pub const UNSUPPORTED_PLATFORM: i32 = 3;
    pub const JOB_NOT_FOUND: i32 = 4;
    /// The peer finished and baton's own check of its work failed: a
    /// worktree run whose `--test-cmd` failed (`status` stays the peer's
    /// outcome), a fan-out whose candidates' tests all failed, a council
    /// that ended `needs_human` with failing tests. Nothing to merge.
    pub const CHECK_FAILED: i32 = 5;
    pub const TIMEOUT: i32 = 124;
    pub const NOT_INSTALLED: i32 = 127;
    pub const INTERRUPTED: i32 = 130;
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The command line (or a packet/flag combination) is not valid.
    #[error("{message}")]
    Usage {
        message: String,
        hint: Option<String>,
    },

    /// The agent cannot enforce the requested access mode; baton refuses
    /// rather than silently running with more access than asked for.
    #[error("`{agent}` cannot run with `--access {access}`: {reason}")]
    UnsupportedAccess {
        agent: &'static str,
        access: &'static str,
        reason: &'static str,
        hint: String,
    },

    /// `BATON_DEPTH` reached `BATON_MAX_DEPTH`: a delegated peer tried to delegate again.
    #[error("recursion guard: BATON_DEPTH={depth} has reached BATON_MAX_DEPTH={max}")]
    RecursionLimit { depth: u32, max: u32 },

    /// The peer CLI is not on PATH.
    #[error("`{binary}` (the {agent} CLI) was not found on PATH")]
    NotInstalled {
        agent: &'static str,
        binary: String,
        hint: String,
    },

    /// An id that is well-formed but names no record of `what` in this
    /// repository's store (kind `job_not_found` for every `what`).
    #[error("no {} `{id}` in {store}", .what.noun())]
    NotFound {
        what: IdOf,
        id: String,
        store: PathBuf,
    },

    /// A job whose record cannot be read: cut short or damaged (a full
    /// disk, a crash of the file system, a hand edit), not a bug in baton.
    #[error("the record of job `{id}` is damaged ({path}): {detail}")]
    CorruptJob {
        id: String,
        path: PathBuf,
        detail: String,
    },

    /// An id that is not of baton's form (path traversal, odd characters,
    /// …), given where an id of `what` was asked for (kind `invalid_job_id`).
    #[error("`{id}` is not a valid {} id", .what.noun())]
    InvalidId { what: IdOf, id: String },

    /// baton was interrupted (Ctrl-C / SIGTERM) before it had a result to report.
    #[error("interrupted by {signal}")]
    Interrupted { signal: &'static str },

    /// Spawning the peer failed for a reason other than "not installed".
    #[error("could not start `{binary}`: {source}")]
    Spawn {
        binary: String,
        #[source]
        source: io::Error,
    },

    /// A file-system or pipe operation of baton's own failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },

    /// baton refused on purpose: a credential-like file, a packet over its
    /// size limit, an exhausted consultation budget (`baton ask`). `kind`
    /// names which, for programs; each is listed in `KINDS`.
    #[error("{message}")]
    Refused {
        kind: &'static str,
        message: String,
        hint: String,
    },

    /// A config file (or a `BATON_*` variable standing for a config key) is
    /// not valid: unknown key, wrong type, bad value, or a credential in a
    /// file that is committed. Never ignored: `where_` names the file and line.
    #[error("{where_}: `{key}`: {message}")]
    Config {
        where_: String,
        key: String,
        message: String,
        hint: String,
    },

    /// A peer changed the files that tie its worktree to the repository
    /// (`.git`, `gitdir`, `commondir`, `config.worktree`): baton trusts
    /// nothing in that worktree any more and commits nothing.
    #[error(
        "the peer tampered with worktree `{id}`: {what}; baton committed nothing and left the worktree as the peer left it"
    )]
    WorktreeTampered {
        id: String,
        path: PathBuf,
        what: String,
    },

    /// baton could not commit what a peer left in its worktree (a git call
    /// failed: the peer locked the branch, made a file unreadable, removed
    /// the worktree, the import refused an object, …). The run is `failed`;
    /// the files stay where the peer left them and the user's branch holds
    /// only what baton imported before.
    #[error(
        "baton could not commit the peer's work on `{branch}` ({reason}); {}",
        left_where(path, uncommitted.as_deref())
    )]
    WorktreeCommitFailed {
        id: String,
        path: PathBuf,
        branch: String,
        reason: String,
        /// Paths on disk that differ from the branch (`None`: not known,
        /// say because the worktree is gone).
        uncommitted: Option<Vec<String>>,
    },

    /// A worktree id that is well-formed but not one of this repository's
    /// (`baton worktree remove`).
    #[error("no worktree `{id}` in {store}")]
    WorktreeNotFound { id: String, store: PathBuf },

    /// baton runs inside a host agent's sandbox that keeps peers from their
    /// models: no network at all (Codex's `workspace-write`), or only
    /// through the host's allowlisting proxy (Claude Code's sandbox). Found
    /// before any peer starts (`sandbox::host::check`); `message` names the
    /// sandbox and what it blocks, `hint` how that host gets out of it.
    #[error("{message}")]
    HostSandbox { message: String, hint: String },

    /// A bug in baton. Please report it.
    #[error("internal error: {0}")]
    Internal(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Every `kind` a tool error can have, with when it happens: `Error::kind`
/// of each variant and each `Refused` kind. `baton schema` publishes this
/// list as the values of `error.kind`; `tests/json.rs` finds every kind
/// in the source and fails when one is missing here, and again when one
/// here has no case in the contract test.
pub const KINDS: &[(&str, &str)] = &[
    (
        "usage",
        "the command line (or a flag combination) is not valid",
    ),
    (
        "unsupported_access",
        "the agent cannot enforce the access asked for (agy read-only, agy as an adviser)",
    ),
    (
        "recursion_limit",
        "BATON_DEPTH reached BATON_MAX_DEPTH: a delegated peer tried to delegate again",
    ),
    (
        "agent_not_installed",
        "the peer CLI is not on PATH (exit 127)",
    ),
    (
        "job_not_found",
        "no job with this id in this repository (exit 4)",
    ),
    ("corrupt_job", "the job's record is cut short or damaged"),
    ("invalid_job_id", "the id is not of baton's form"),
    (
        "interrupted",
        "Ctrl-C or SIGTERM before there was a result to report (exit 130)",
    ),
    (
        "spawn_failed",
        "the peer CLI was found but could not be started",
    ),
    (
        "io",
        "a file-system or pipe operation of baton's own failed",
    ),
    (
        "config",
        "a config file or BATON_* value is not valid (names the file, line and key)",
    ),
    (
        "worktree_tampered",
        "the peer rewired its worktree's git metadata; nothing was committed",
    ),
    ("internal", "a bug in baton"),
    (
        "worktree_commit_failed",
        "--worktree: baton could not commit what the peer left; the message names the worktree, the branch and what was left uncommitted",
    ),
    (
        "worktree_not_found",
        "`worktree remove`: no worktree with this id (exit 4)",
    ),
    (
        "unsafe_value",
        "a model, effort, profile, provider or session id that may not reach a CLI's argv (names its source)",
    ),
    (
        "access_capped",
        "the access asked for is over BATON_MAX_ACCESS (set by `baton mcp` for the runs it starts), a test command under a cap below full, or (`baton mcp`) a test_cmd the server does not allow or a cwd outside its roots",
    ),
    (
        "unsafe_state_dir",
        "the state directory, or a folder in it, is a symlink or writable by others",
    ),
    (
        "credential_file",
        "a credential-like file (or content) was refused before it was read or sent",
    ),
    (
        "packet_too_large",
        "the ask packet is over --max-chars (never truncated)",
    ),
    (
        "budget_exhausted",
        "the task's consultation budget is used up",
    ),
    (
        "config_exists",
        "`config init` would overwrite an existing file",
    ),
    (
        "no_session",
        "`attach`: the job's peer never started a session",
    ),
    ("job_running", "`attach`: the job is still running"),
    ("setup_manifest", "setup's manifest is not one baton wrote"),
    (
        "quorum_unreachable",
        "a council has fewer usable members than its quorum",
    ),
    (
        "council_busy",
        "another council is writing in this repository",
    ),
    (
        "plan_changed",
        "a council's plan changed after the council wrote it",
    ),
    (
        "plan_sha256_mismatch",
        "`council approve --plan-sha256` is not the plan's hash",
    ),
    (
        "base_moved",
        "the repository moved from the council plan's base commit",
    ),
    (
        "unpriced_model",
        "--max-usd with a model baton has no price for, on an agent whose CLI reports no cost: nothing was started; the hint says how to price it or to use --budget-tokens",
    ),
    (
        "sandbox_unavailable",
        "--sandbox require (or run.sandbox = \"require\") where baton's sandbox cannot be set up for a peer without one of its own: nothing was started; the hint says how to check the machine (`baton doctor`)",
    ),
    (
        "host_sandbox",
        "baton runs inside a host agent's sandbox that keeps peers from their models (Codex's workspace-write without network, Claude Code's sandbox): nothing was started; the hint says how that host runs baton outside it",
    ),
];

impl Error {
    pub fn usage(message: impl Into<String>) -> Self {
        Error::Usage {
            message: message.into(),
            hint: None,
        }
    }

    pub fn usage_hint(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Error::Usage {
            message: message.into(),
            hint: Some(hint.into()),
        }
    }

    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// Stable machine-readable name of the error, part of the JSON contract.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Usage { .. } => "usage",
            Error::UnsupportedAccess { .. } => "unsupported_access",
            Error::RecursionLimit { .. } => "recursion_limit",
            Error::NotInstalled { .. } => "agent_not_installed",
            Error::NotFound { .. } => "job_not_found",
            Error::CorruptJob { .. } => "corrupt_job",
            Error::InvalidId { .. } => "invalid_job_id",
            Error::Interrupted { .. } => "interrupted",
            Error::Spawn { .. } => "spawn_failed",
            Error::Io { .. } => "io",
            Error::Refused { kind, .. } => kind,
            Error::Config { .. } => "config",
            Error::WorktreeTampered { .. } => "worktree_tampered",
            Error::WorktreeCommitFailed { .. } => "worktree_commit_failed",
            Error::WorktreeNotFound { .. } => "worktree_not_found",
            // = `Failure::HostSandbox.kind()` (a unit test keeps them one).
            Error::HostSandbox { .. } => "host_sandbox",
            Error::Internal(_) => "internal",
        }
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage { .. }
            | Error::UnsupportedAccess { .. }
            | Error::RecursionLimit { .. }
            | Error::InvalidId { .. }
            | Error::Refused { .. }
            | Error::Config { .. } => exit::USAGE,
            Error::NotInstalled { .. } => exit::NOT_INSTALLED,
            Error::NotFound { .. } | Error::WorktreeNotFound { .. } => exit::JOB_NOT_FOUND,
            Error::Interrupted { .. } => exit::INTERRUPTED,
            Error::Spawn { .. }
            | Error::Io { .. }
            | Error::CorruptJob { .. }
            | Error::WorktreeTampered { .. }
            | Error::WorktreeCommitFailed { .. }
            | Error::HostSandbox { .. }
            | Error::Internal(_) => exit::FAILED,
        }
    }

    /// What the caller should do next.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::Usage { hint, .. } => hint.clone(),
            Error::UnsupportedAccess { hint, .. } => Some(hint.clone()),
            Error::RecursionLimit { .. } => Some(
                "do the task yourself; a delegated peer may not delegate again \
                 (the user can raise BATON_MAX_DEPTH)"
                    .into(),
            ),
            Error::NotInstalled { hint, .. } => Some(hint.clone()),
            Error::NotFound { what, .. } => Some(format!(
                "run `{}` in the same repository to list {} ids",
                what.lister(),
                what.noun()
            )),
            Error::CorruptJob { .. } => Some(
                "`baton jobs` lists it as `corrupt` and `baton prune` removes it like an ended \
                 job (`baton prune --older-than 0` at once); the peer's logs are beside the file"
                    .into(),
            ),
            Error::InvalidId {
                what: IdOf::Job, ..
            } => Some(
                "job ids are 13 lowercase letters and digits, as printed by `baton run --async`"
                    .into(),
            ),
            Error::InvalidId { what, .. } => Some(format!(
                "{} ids are 13 lowercase letters and digits, as printed when it started",
                what.noun()
            )),
            Error::Interrupted { .. } => None,
            Error::Spawn { .. } => {
                Some("check that the CLI is executable and runs on its own".into())
            }
            Error::Io { .. } => None,
            Error::Refused { hint, .. } => Some(hint.clone()),
            Error::Config { hint, .. } => Some(hint.clone()),
            Error::WorktreeTampered { id, path, .. } => Some(format!(
                "your checkout is untouched. The peer's files are in {} (do not run git there: \
                 its git metadata is the peer's now); `baton worktree remove {id} --force` \
                 removes it safely; baton made no commit on baton/{id} for this run",
                path.display()
            )),
            Error::WorktreeCommitFailed {
                id, path, branch, ..
            } => Some(if path.is_dir() {
                format!(
                    "your checkout is untouched. Look at the files in {} and commit them there \
                     yourself, or discard them with `baton worktree remove {id} --force`; \
                     {branch} in your repository holds only what baton imported before (the \
                     peer's own commits, if any, are in the worktree's repository)",
                    path.display()
                )
            } else {
                format!(
                    "your checkout is untouched; {branch} holds only what baton imported before; \
                     `baton worktree remove {id}` forgets the worktree"
                )
            }),
            Error::WorktreeNotFound { .. } => {
                Some("run `baton worktree list` in the same repository to list worktree ids".into())
            }
            Error::HostSandbox { hint, .. } => Some(hint.clone()),
            Error::Internal(_) => Some("this is a bug in baton; please report it".into()),
        }
    }
}

/// Where a worktree's uncommitted work was left, for `WorktreeCommitFailed`.
fn left_where(path: &std::path::Path, uncommitted: Option<&[String]>) -> String {
    match uncommitted {
        None if !path.exists() => format!("nothing is left in {}", path.display()),
        None => format!("what the peer left is in {}", path.display()),
        Some([]) => format!("nothing is left uncommitted in {}", path.display()),
        Some(paths) => {
            let shown: Vec<&str> = paths.iter().take(20).map(String::as_str).collect();
            let more = match paths.len() - shown.len() {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            format!(
                "{} path(s) left uncommitted in {}: {}{more}",
                paths.len(),
                path.display(),
                shown.join(", ")
            )
        }
    }
}
