//! `baton run` (also the default command): its flags, the plain
//! `run::RunRequest` they become, and which operation the flags select.

use std::path::PathBuf;

use clap::Args;

use crate::error::{Error, Result};
use crate::fanout::FanoutRequest;
use crate::output::{self, Mode};
use crate::run::{self, RunRequest};
use crate::worktree::{self, WorktreeOptions};
use crate::{fanout, job, notify, process, view};

#[derive(Debug, Clone, Args, Default)]
pub struct RunArgs {
    /// Peer agent: codex, claude, gemini (agy), zai (glm), pi, gemini-cli, opencode, qwen, copilot, kilo, cline, nanocoder, or one your user file brings [default: codex, or `agent` in the config].
    #[arg(long, short = 'a', value_name = "NAME")]
    pub agent: Option<String>,

    /// Model or alias (see `baton agents`); unknown ids pass through with a warning.
    #[arg(long, short = 'm', value_name = "M")]
    pub model: Option<String>,

    /// Reasoning effort (accepted values depend on the agent).
    #[arg(long, short = 'e', value_name = "E")]
    pub effort: Option<String>,

    /// read-only, workspace (default) or full; enforced by the CLI's own switches.
    #[arg(long, value_name = "MODE", conflicts_with_all = ["read_only", "full_access"])]
    pub access: Option<String>,

    /// Same as `--access read-only`.
    #[arg(long, conflicts_with = "full_access")]
    pub read_only: bool,

    /// Same as `--access full`.
    #[arg(long)]
    pub full_access: bool,

    /// baton's own sandbox for agents without one and for --test-cmd: auto (default: where this machine has one), require (fail if it has none) or off [default: run.sandbox].
    #[arg(long, value_name = "MODE")]
    pub sandbox: Option<String>,

    /// What a peer under baton's sandbox may reach: all (default: it needs its provider), provider (only its provider's hosts and --network-host, through baton's proxy) or none (no IP at all: an agent with a model of its own, offline).
    #[arg(long, value_name = "NET")]
    pub network: Option<String>,

    /// With --network provider: one more host the peer may reach, HOST[:PORT] (no port: 443 and 80) [repeatable; also run.network_hosts].
    #[arg(long = "network-host", value_name = "HOST")]
    pub network_host: Vec<String>,

    /// Directory the peer works in (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Read the task from a file (`-` for stdin).
    #[arg(long, value_name = "PATH")]
    pub prompt_file: Option<PathBuf>,

    /// Continue the peer's own session (the `session` of an earlier result).
    #[arg(long, value_name = "SESSION")]
    pub resume: Option<String>,

    /// Stop the peer after this long (e.g. 90s, 45m, 2h) [default: 60m, or run.timeout in the config].
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,

    /// Stop the peer when it prints nothing for this long [default: 15m, or run.idle_timeout].
    #[arg(long, value_name = "DURATION")]
    pub idle_timeout: Option<String>,

    /// codex: configuration profile.
    #[arg(long, value_name = "P")]
    pub profile: Option<String>,

    /// pi, opencode: provider (e.g. openai, anthropic, zai); qwen: its --auth-type.
    #[arg(long, value_name = "P")]
    pub provider: Option<String>,

    /// How to talk to the agent: headless (its CLI's own mode) or acp (the
    /// Agent Client Protocol). Default: the agent's own (`baton agents`).
    #[arg(long, value_name = "T")]
    pub transport: Option<String>,

    /// Send the task as-is, without baton's brief.
    #[arg(long)]
    pub raw: bool,

    /// Stop rather than spend more than this many dollars (reported or estimated cost; see `baton agents`).
    #[arg(long, value_name = "USD")]
    pub max_usd: Option<f64>,

    /// Stop rather than spend more than this many tokens (input + output).
    #[arg(long, value_name = "N")]
    pub budget_tokens: Option<u64>,

    /// When the agent cannot answer (rate limit, quota, provider down, auth, unknown model) before changing a file, hand the task to these, in order: `claude,pi:glm-5.2` [default: run.fallback in the config].
    #[arg(long, value_name = "A,B:MODEL,…", value_delimiter = ',')]
    pub fallback: Option<Vec<String>>,

    /// Try a rate-limited or unavailable provider again this many times, waiting as it asks (within --timeout) [default: 0, or run.retry].
    #[arg(long, value_name = "N")]
    pub retry: Option<u32>,

    /// Print the exact argv, environment changes and prompt, and run nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Start as a background job and print its id at once (see `baton wait`).
    #[arg(long = "async")]
    pub detach: bool,

    /// No live status line on stderr (drawn only when stderr is a terminal; also BATON_PROGRESS=0).
    #[arg(long)]
    pub quiet: bool,

    #[command(flatten)]
    pub worktree: WorktreeArgs,

    #[command(flatten)]
    pub fanout: FanoutArgs,

    #[command(flatten)]
    pub notify: NotifyArgs,

    /// The task (or give --prompt-file, or pipe it on stdin).
    #[arg(value_name = "TASK", allow_hyphen_values = false)]
    pub task: Vec<String>,
}

// `--notify` / `--no-notify`, on every command that starts work (`run`,
// `continue`, `council`, `bench run`). A plain comment, not a doc comment:
// clap takes a flattened struct's doc as the command's `about`, and with
// the commands' arguments deferred (`cli::Command`) it would replace theirs.
#[derive(Debug, Clone, Args, Default)]
pub struct NotifyArgs {
    /// Announce this work when it ends, waits for approval, is stopped or stalls, even where `[notify] on` leaves that out (on the desktop and terminal if no channel is configured; see docs/notify.md).
    #[arg(long, conflicts_with = "no_notify")]
    pub notify: bool,

    /// Announce nothing about this work, whatever `[notify]` says.
    #[arg(long)]
    pub no_notify: bool,
}

impl NotifyArgs {
    pub fn choice(&self) -> notify::Choice {
        match (self.notify, self.no_notify) {
            (true, _) => notify::Choice::On,
            (_, true) => notify::Choice::Off,
            _ => notify::Choice::Config,
        }
    }
}

// `run --worktree` and its options (see `worktree`). (Plain comment: see `NotifyArgs`.)
#[derive(Debug, Clone, Args, Default)]
pub struct WorktreeArgs {
    /// Let the peer write in a new git worktree on its own branch `baton/<id>`, never in your checkout.
    #[arg(long = "worktree", id = "worktree")]
    pub enabled: bool,

    /// --worktree, --agents: the commit to branch from (default: HEAD).
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,

    /// --worktree, --agents: start from your uncommitted changes too (staged, unstaged, untracked).
    #[arg(long)]
    pub include_dirty: bool,

    /// --worktree, --agents: the only paths the peer may change (repeatable); other changes are reverted.
    #[arg(long = "allow", value_name = "GLOB")]
    pub allow: Vec<String>,

    /// --worktree, --agents: a check to run in the worktree after the peer (run with `sh -c`).
    #[arg(long, value_name = "COMMAND")]
    pub test_cmd: Option<String>,
}

// Best of N: several writers at once, each in its own worktree (see `fanout`).
// (Plain comments on flattened structs: see `NotifyArgs`.)
#[derive(Debug, Clone, Args, Default)]
pub struct FanoutArgs {
    /// Fan out: these agents attempt the task at once, each in its own worktree (`NAME:MODEL` picks a model).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        conflicts_with = "agent"
    )]
    pub agents: Vec<String>,

    /// Fan out: each agent attempts the task this many times (`--agent codex --attempts 3`: best of 3).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=16))]
    pub attempts: Option<u32>,

    /// Fan out: a candidate whose tests fail gets their output as its next turn, at most R times [default: 0].
    #[arg(long, value_name = "R")]
    pub until_green: Option<u32>,

    /// Fan out: best (rank the eligible candidates) or first-green (the first eligible wins, the others stop) [default: best].
    #[arg(long, value_name = "HOW")]
    pub pick: Option<String>,

    /// Fan out: who ranks: peers (each agent ranks the others' candidates, blind), none, or an agent [default: peers with two vendors or more, else none].
    #[arg(long, value_name = "WHO")]
    pub judge: Option<String>,

    /// Fan out: the seed of the judges' blind shuffles and of the draw that breaks a tie (replays both).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Fan out: keep every candidate's branch and worktree, not only the winner's.
    #[arg(long)]
    pub keep_all: bool,

    /// Fan out: start no repair round or judge once this much wall time would be crossed (e.g. 30m).
    #[arg(long, value_name = "DURATION")]
    pub max_wall: Option<String>,
}

impl FanoutArgs {
    /// Whether the flags ask for a fan-out at all.
    fn wanted(&self) -> bool {
        !self.agents.is_empty() || self.attempts.is_some()
    }

    /// The first fan-out-only flag given, if any.
    fn given(&self) -> Option<&'static str> {
        [
            (self.until_green.is_some(), "--until-green"),
            (self.pick.is_some(), "--pick"),
            (self.judge.is_some(), "--judge"),
            (self.seed.is_some(), "--seed"),
            (self.keep_all, "--keep-all"),
            (self.max_wall.is_some(), "--max-wall"),
        ]
        .into_iter()
        .find_map(|(g, f)| g.then_some(f))
    }
}

impl WorktreeArgs {
    /// The first option of worktree mode given, if any.
    fn given(&self) -> Option<&'static str> {
        [
            (self.base.is_some(), "--base"),
            (self.include_dirty, "--include-dirty"),
            (!self.allow.is_empty(), "--allow"),
            (self.test_cmd.is_some(), "--test-cmd"),
        ]
        .into_iter()
        .find_map(|(g, f)| g.then_some(f))
    }
}

/// The flags as a request the `run` module understands (no clap there).
pub fn request(a: RunArgs) -> RunRequest {
    RunRequest {
        agent: a.agent,
        model: a.model,
        effort: a.effort,
        access: a.access,
        read_only: a.read_only,
        full_access: a.full_access,
        sandbox: a.sandbox,
        network: a.network,
        network_hosts: a.network_host,
        cwd: a.cwd,
        prompt_file: a.prompt_file,
        resume: a.resume,
        timeout: a.timeout,
        idle_timeout: a.idle_timeout,
        profile: a.profile,
        provider: a.provider,
        transport: a.transport,
        raw: a.raw,
        task: a.task,
        max_usd: a.max_usd,
        budget_tokens: a.budget_tokens,
        fallback: a.fallback,
        retry: a.retry,
        // Every value is the flag of its name.
        origins: Default::default(),
    }
}

pub fn worktree_options(w: WorktreeArgs) -> WorktreeOptions {
    WorktreeOptions {
        enabled: w.enabled,
        base: w.base,
        include_dirty: w.include_dirty,
        allow: w.allow,
        test_cmd: w.test_cmd,
    }
}

/// A fan-out's flags as the request `fanout` understands.
pub fn fanout_request(a: RunArgs) -> FanoutRequest {
    let f = a.fanout.clone();
    let (dry_run, run_async) = (a.dry_run, a.detach);
    let worktree = worktree_options(a.worktree.clone());
    // One --budget-tokens: each candidate's calls are held to it as any
    // run's, and no repair round or judge starts once the fan-out's
    // projected total would cross it.
    let budget_tokens = a.budget_tokens;
    let notify = a.notify.choice();
    FanoutRequest {
        run: request(a),
        agents: f.agents,
        attempts: f.attempts.unwrap_or(1),
        worktree,
        until_green: f.until_green.unwrap_or(0),
        pick: f.pick,
        judge: f.judge,
        seed: f.seed,
        keep_all: f.keep_all,
        budget_tokens,
        max_wall: f.max_wall,
        run_async,
        dry_run,
        notify,
    }
}

/// Plan the run, then do what the flags ask: print the plan (`--dry-run`),
/// start a job (`--async`), fan out, run in a new worktree, or run here.
pub fn command(args: RunArgs, mode: Mode) -> Result<i32> {
    // Two small files at most, nothing spawned: start-up stays fast.
    crate::config::install(crate::config::Config::load(args.cwd.as_deref())?);
    // Before anything starts: a run, a worktree and a fan-out alike.
    if args.worktree.test_cmd.is_some() {
        run::check_test_cmd_cap("`--test-cmd`")?;
    }
    if args.fanout.wanted() {
        if args.resume.is_some() {
            return Err(Error::usage_hint(
                "--resume continues one session; a fan-out starts one per candidate",
                "drop --resume, or drop --agents/--attempts",
            ));
        }
        return fanout::command(fanout_request(args), mode);
    }
    if let Some(flag) = args.fanout.given() {
        return Err(Error::usage_hint(
            format!("{flag} is an option of a fan-out"),
            "fan out with --agents a,b,c or --attempts N, or drop it",
        ));
    }
    if !args.worktree.enabled
        && let Some(flag) = args.worktree.given()
    {
        return Err(Error::usage_hint(
            format!("{flag} is an option of worktree mode"),
            "add --worktree (or fan out with --agents), or drop it",
        ));
    }
    let (dry_run, detach, quiet) = (args.dry_run, args.detach, args.quiet);
    let choice = args.notify.choice();
    let options = worktree_options(args.worktree.clone());
    let request = request(args);
    let task = run::read_task(&request)?;
    let plan = run::plan(&request, task)?;
    // Validated before anything is created (exit 2 on a bad repository/base).
    let worktree = worktree::check(&options, &plan)?;
    let spec = plan.command()?;
    // Before a job, a worktree or a run folder exists: inside a host's
    // sandbox without network the peer could only fail, slowly.
    let plan_json = || match &worktree {
        Some(c) => worktree::dry_run_json(c, &plan),
        None => Ok(run::dry_run_json(&plan, &spec)),
    };
    if let Some(code) = run::gate::pass(dry_run, mode, plan_json)? {
        return Ok(code);
    }
    if detach {
        let place = match &worktree {
            Some(c) => job::Place::NewWorktree(c),
            None => job::Place::Cwd,
        };
        job::print_started(&job::start(&plan, place, None, choice)?, mode)?;
        return Ok(0);
    }
    // This process owns a foreground run: it announces its end (and its
    // stalls), captured where the user typed the command.
    let mut notice = run::Notice {
        work: notify::Work::Run,
        choice,
        origin: notify::Origin::here(),
        id: None,
        repo: plan.root.clone(),
        record: None,
    };
    if let Some(c) = worktree {
        let mut progress =
            view::progress::wanted(quiet).then(|| view::progress::Progress::install("peers"));
        // Erased once the peer ends, before the check runs and the result
        // (or an error) is printed.
        return worktree::run(plan, &c, mode, &mut || drop(progress.take()), notice);
    }
    plan.program(&spec)?;
    plan.check_chain_installed()?;
    // Installed before the peer exists: a Ctrl-C can never orphan it.
    let mut interrupts = process::Interrupts::install()?;
    let (dir, not_saved) = run::run_dir_or_warning(&plan.root)?;
    // The line tails the run's log (`run::observe`), so it needs a run directory.
    let progress = dir
        .as_ref()
        .filter(|_| view::progress::wanted(quiet))
        .map(|_| view::progress::Progress::install("peers"));
    notice.id = (dir.as_deref())
        .and_then(|d| d.file_name())
        .map(|n| n.to_string_lossy().into_owned());
    notice.record = dir.clone();
    let stalls = (dir.as_deref()).and_then(|d| notice.stalls(plan.agent.name(), d));
    let result = run::chain::run(
        &plan,
        dir.as_deref(),
        &mut interrupts,
        run::Hooks::new(&mut |_| {}),
    );
    drop(stalls);
    // Erased before anything else is printed (the result, or an error).
    if let Some(p) = progress {
        p.stop();
    }
    let mut result = result.inspect_err(|e| notice.failed(plan.agent.name(), e))?;
    result
        .warnings
        .extend(not_saved.map(crate::result::Warning::from));
    run::save_result(dir.as_deref(), &mut result);
    output::print_result(&result, mode)?;
    notice.ended(&result);
    Ok(result.status.exit_code())
}
