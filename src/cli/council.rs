//! `baton council …`: its subcommands and flags, and the plain
//! `council::Action` they become. The council itself lives in `council`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::council::{self, Action, CouncilRequest};
use crate::error::Result;
use crate::output::Mode;

#[derive(Debug, Subcommand)]
pub enum CouncilCommand {
    /// Stages 1–4, read-only: proposals, a blind critique and the chair's synthesis.
    Discuss(StartArgs),
    /// Stages 1–4 ending in an executable plan, which then waits for approval (`--yes`: approve and execute at once).
    Plan(StartArgs),
    /// Approve a plan, bound to its sha256 and base commit; then run `execute`.
    Approve(ApproveArgs),
    /// Carry out an approved plan: implement, verify, review, repair (stages 6–9 and the terminal gate).
    Execute(IdArg),
    /// Where a council is, without waiting.
    Status(IdArg),
    /// A council's whole result (JSON, or --text).
    Result(IdArg),
    /// The whole record for people, as markdown.
    Report(IdArg),
    /// Stop a council (and the members it is running).
    Cancel(IdArg),
    /// Continue a council from its first unfinished stage, reusing every finished call.
    Resume(IdArg),
    /// Every council of this repository, newest first.
    List(ListArgs),
}

#[derive(Debug, Clone, Args)]
pub struct IdArg {
    #[arg(value_name = "ID")]
    pub id: String,
    /// The repository (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// The repository (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct ApproveArgs {
    #[arg(value_name = "ID")]
    pub id: String,
    /// The sha256 of the plan you read (`plan.sha256` in the result).
    #[arg(long, value_name = "HEX", required = true)]
    pub plan_sha256: String,
    /// The repository (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct StartArgs {
    /// Members: `codex,claude,pi` (`NAME:MODEL` picks a model) [default: every installed agent with a read-only mode, at most 3, distinct vendors first].
    #[arg(long, value_name = "A,B,…", value_delimiter = ',')]
    pub members: Vec<String>,
    /// The chair (`NAME[:MODEL]`), or `none` for baton's mechanical merge [default: the first member].
    #[arg(long, value_name = "NAME|none")]
    pub chair: Option<String>,
    /// The writer [default: the author the chair adopted most].
    #[arg(long, value_name = "NAME")]
    pub writer: Option<String>,
    /// quick (no critique), standard, or deep (a revision round after critique).
    #[arg(long, value_name = "DEPTH", default_value = "standard")]
    pub depth: String,
    /// Repair rounds of the writer at most.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub repair_rounds: u32,
    /// Valid proposals needed to go on.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub quorum: usize,
    /// Replay the label shuffles of an earlier council.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Stop with needs_human once this much wall time has passed.
    #[arg(long, value_name = "DURATION")]
    pub max_wall: Option<String>,
    /// Stop with needs_human rather than cross this many tokens (projected).
    #[arg(long, value_name = "N")]
    pub budget_tokens: Option<u64>,
    /// Stop with needs_human rather than cross this many dollars (projected; reported or estimated cost).
    #[arg(long, value_name = "USD")]
    pub max_usd: Option<f64>,
    /// The test command baton runs in the worktree as the oracle (overrides the plan's).
    #[arg(long, value_name = "CMD")]
    pub test_cmd: Option<String>,
    /// Files the writer may change (overrides the plan's authorized_files; repeatable).
    #[arg(long, value_name = "GLOB")]
    pub allow: Vec<String>,
    /// plan: approve at once and execute (recorded as `approval.mode: "auto"`).
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// plan: execute once approved (needs --yes; else `approve` then `execute`).
    #[arg(long, requires = "yes")]
    pub execute: bool,
    /// Run in the background; `baton council status|result|cancel ID` follow it.
    #[arg(long = "async")]
    pub run_async: bool,
    /// Print the plan of calls and each member's argv, and run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Reasoning effort for every member.
    #[arg(long, short = 'e', value_name = "E")]
    pub effort: Option<String>,
    /// Stop a member after this long (it is then `timeout`, never retried).
    #[arg(long, value_name = "DURATION", default_value = "20m")]
    pub timeout: String,
    /// Stop a member that prints nothing for this long.
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub idle_timeout: String,
    /// Read the packet from a JSON file (`-` for stdin); flags add to it.
    #[arg(long, value_name = "FILE")]
    pub packet: Option<PathBuf>,
    /// diagnosis, design_critique, code_review, experiment_review or other.
    #[arg(long, value_name = "TYPE")]
    pub help_type: Option<String>,
    /// What you are trying to achieve.
    #[arg(long, value_name = "TEXT")]
    pub goal: Option<String>,
    /// A constraint (repeatable).
    #[arg(long = "constraint", value_name = "TEXT")]
    pub constraints: Vec<String>,
    /// Something already tried (repeatable).
    #[arg(long, value_name = "TEXT")]
    pub tried: Vec<String>,
    /// An observation (repeatable).
    #[arg(long = "observation", value_name = "TEXT")]
    pub observations: Vec<String>,
    /// Your current hypothesis.
    #[arg(long, value_name = "TEXT")]
    pub hypothesis: Option<String>,
    /// A code or log snippet (repeatable).
    #[arg(long = "snippet", value_name = "TEXT")]
    pub snippets: Vec<String>,
    /// A file to inline, optionally with lines: `src/a.rs`, `src/a.rs:10-40` (repeatable).
    #[arg(long = "file", short = 'f', value_name = "PATH[:A-B]")]
    pub files: Vec<String>,
    /// Include `git diff HEAD`, or `--diff=REV` for another base.
    #[arg(long, value_name = "REV", num_args = 0..=1, require_equals = true, default_missing_value = "HEAD")]
    pub diff: Option<String>,
    /// Refuse a packet larger than this many characters (never truncated) [default: 200000].
    #[arg(long, value_name = "N")]
    pub max_chars: Option<usize>,
    /// The repository (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// The question (discuss) or the task (plan).
    #[arg(value_name = "TEXT")]
    pub task: Vec<String>,
    #[command(flatten)]
    pub notify: super::run::NotifyArgs,
}

fn request(kind: &str, a: StartArgs) -> CouncilRequest {
    CouncilRequest {
        notify: a.notify.choice(),
        kind: kind.into(),
        members: a.members,
        chair: a.chair,
        writer: a.writer,
        depth: a.depth,
        repair_rounds: a.repair_rounds,
        quorum: a.quorum,
        seed: a.seed,
        max_wall: a.max_wall,
        budget_tokens: a.budget_tokens,
        max_usd: a.max_usd,
        test_cmd: a.test_cmd,
        allow: a.allow,
        yes: a.yes,
        run_async: a.run_async,
        dry_run: a.dry_run,
        effort: a.effort,
        timeout: a.timeout,
        idle_timeout: a.idle_timeout,
        packet: crate::ask::AskRequest {
            packet: a.packet,
            help_type: a.help_type,
            goal: a.goal,
            constraints: a.constraints,
            tried: a.tried,
            observations: a.observations,
            hypothesis: a.hypothesis,
            snippets: a.snippets,
            files: a.files,
            diff: a.diff,
            max_chars: a.max_chars,
            cwd: a.cwd,
            question: a.task,
            ..Default::default()
        },
    }
}

pub fn command(c: CouncilCommand, mode: Mode) -> Result<i32> {
    // Refused before any member is paid for (`execute` checks again, for a
    // plan's own test command).
    if let CouncilCommand::Discuss(a) | CouncilCommand::Plan(a) = &c
        && a.test_cmd.is_some()
    {
        crate::run::check_test_cmd_cap("`--test-cmd`")?;
    }
    let (action, cwd) = match c {
        CouncilCommand::Discuss(a) => {
            let cwd = a.cwd.clone();
            (Action::Start(Box::new(request("discuss", a))), cwd)
        }
        CouncilCommand::Plan(a) => {
            let cwd = a.cwd.clone();
            (Action::Start(Box::new(request("plan", a))), cwd)
        }
        CouncilCommand::Approve(a) => (
            Action::Approve {
                id: a.id,
                plan_sha256: a.plan_sha256,
            },
            a.cwd,
        ),
        CouncilCommand::Execute(a) => (Action::Execute { id: a.id }, a.cwd),
        CouncilCommand::Status(a) => (Action::Status { id: a.id }, a.cwd),
        CouncilCommand::Result(a) => (Action::Result { id: a.id }, a.cwd),
        CouncilCommand::Report(a) => (Action::Report { id: a.id }, a.cwd),
        CouncilCommand::Cancel(a) => (Action::Cancel { id: a.id }, a.cwd),
        CouncilCommand::Resume(a) => (Action::Resume { id: a.id }, a.cwd),
        CouncilCommand::List(a) => (Action::List, a.cwd),
    };
    // For a program that follows the council (`baton mcp`): each member's
    // activity with its stage, as lines on stderr. A person at a terminal
    // gets no live line: the council's stages print their own messages.
    if starts_peers(&action) {
        // The chain every run goes through (`run.fallback`, `run.retry`)
        // and each agent's options (`agents.<name>.*`), as `ask` reads
        // them: for the members and the writer alike.
        crate::config::install(crate::config::Config::load(cwd.as_deref())?);
    }
    let progress = (crate::view::progress::lines_mode() && starts_peers(&action))
        .then(|| crate::view::progress::Progress::install("members"));
    let r = council::command(action, cwd, mode);
    if let Some(p) = progress {
        p.stop();
    }
    r
}

/// Whether the action may start members in this process.
fn starts_peers(a: &Action) -> bool {
    matches!(
        a,
        Action::Start(_) | Action::Approve { .. } | Action::Execute { .. } | Action::Resume { .. }
    )
}

/// The hidden `__council-runner ID --root DIR` of `--async`.
#[derive(Debug, Clone, Args)]
pub struct RunnerArgs {
    pub id: String,
    #[arg(long)]
    pub root: PathBuf,
}

pub fn runner(a: RunnerArgs) -> Result<i32> {
    crate::config::install(crate::config::Config::load(Some(&a.root))?);
    council::command(
        Action::Runner {
            id: a.id,
            root: a.root.clone(),
        },
        Some(a.root),
        Mode::Json,
    )
}
