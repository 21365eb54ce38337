//! `baton run` (also the default command): its flags, the plain
//! `run::RunRequest` they become, and which operation the flags select.

use std::path::PathBuf;

use clap::Args;

use crate::error::Result;
use crate::output::{self, Mode};
use crate::run::{self, RunRequest};
use crate::worktree::{self, WorktreeOptions};
use crate::{dry_run, job, process, view};

#[derive(Debug, Clone, Args, Default)]
pub struct RunArgs {
    /// Peer agent: codex, claude, gemini (agy), zai (glm), pi, gemini-cli, opencode, qwen [default: codex, or `agent` in the config].
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

    /// The task (or give --prompt-file, or pipe it on stdin).
    #[arg(value_name = "TASK", allow_hyphen_values = false)]
    pub task: Vec<String>,
}

/// `run --worktree` and its options (see `worktree`).
#[derive(Debug, Clone, Args, Default)]
pub struct WorktreeArgs {
    /// Let the peer write in a new git worktree on its own branch `baton/<id>`, never in your checkout.
    #[arg(long = "worktree", id = "worktree")]
    pub enabled: bool,

    /// --worktree: the commit to branch from (default: HEAD).
    #[arg(long, value_name = "REF", requires = "worktree")]
    pub base: Option<String>,

    /// --worktree: start from your uncommitted changes too (staged, unstaged, untracked).
    #[arg(long, requires = "worktree")]
    pub include_dirty: bool,

    /// --worktree: the only paths the peer may change (repeatable); other changes are reverted.
    #[arg(long = "allow", value_name = "GLOB", requires = "worktree")]
    pub allow: Vec<String>,

    /// --worktree: a check to run in the worktree after the peer (run with `sh -c`).
    #[arg(long, value_name = "COMMAND", requires = "worktree")]
    pub test_cmd: Option<String>,
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

/// Plan the run, then do what the flags ask: print the plan (`--dry-run`),
/// start a job (`--async`), run in a new worktree, or run here.
pub fn command(args: RunArgs, mode: Mode) -> Result<i32> {
    // Two small files at most, nothing spawned: start-up stays fast.
    crate::config::install(crate::config::Config::load(args.cwd.as_deref())?);
    let (dry_run, detach, quiet) = (args.dry_run, args.detach, args.quiet);
    let options = worktree_options(args.worktree.clone());
    let request = request(args);
    let task = run::read_task(&request)?;
    let plan = run::plan(&request, task)?;
    // Validated before anything is created (exit 2 on a bad repository/base).
    let worktree = worktree::check(&options, &plan)?;
    let spec = plan.command()?;
    if dry_run {
        match &worktree {
            Some(c) => dry_run::print(&worktree::dry_run_json(c, &plan)?, mode)?,
            None => dry_run::print(&run::dry_run_json(&plan, &spec), mode)?,
        }
        return Ok(0);
    }
    if detach {
        let place = match &worktree {
            Some(c) => job::Place::NewWorktree(c),
            None => job::Place::Cwd,
        };
        job::print_started(&job::start(&plan, place, None)?, mode)?;
        return Ok(0);
    }
    if let Some(c) = worktree {
        let mut progress =
            view::progress::wanted(quiet).then(|| view::progress::Progress::install("peers"));
        // Erased once the peer ends, before the check runs and the result
        // (or an error) is printed.
        return worktree::run(plan, &c, mode, &mut || drop(progress.take()));
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
    let result = run::chain::run(
        &plan,
        dir.as_deref(),
        &mut interrupts,
        run::Hooks::new(&mut |_| {}),
    );
    // Erased before anything else is printed (the result, or an error).
    if let Some(p) = progress {
        p.stop();
    }
    let mut result = result?;
    result.warnings.extend(not_saved);
    run::save_result(dir.as_deref(), &mut result);
    output::print_result(&result, mode)?;
    Ok(result.status.exit_code())
}
