//! The command line (clap derive). `run` is the default command: `baton
//! [OPTIONS] [--] [TASK]...` is `baton run …`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::error::{Error, Result};
use crate::job::args as job;

pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("BATON_TARGET"),
    ", commit ",
    env!("BATON_COMMIT"),
    ")"
);

#[derive(Debug, Parser)]
#[command(
    name = "baton",
    version = VERSION,
    about = "Hand a task to a peer coding-agent CLI and get one honest JSON result back",
    args_conflicts_with_subcommands = true,
    disable_help_subcommand = true,
    after_help = "Exit codes: 0 success · 1 peer failed · 2 usage error · 4 job not found · \
124 timeout · 127 peer CLI not installed · 130 interrupted/cancelled"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub run: RunArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Clone, Copy, Args, Default)]
pub struct OutputArgs {
    /// Print one JSON object on stdout (the default).
    #[arg(long, global = true, conflicts_with = "text")]
    pub json: bool,
    /// Print for people instead of JSON.
    #[arg(long, global = true)]
    pub text: bool,
}

// Parsed once per process: boxing `RunArgs` would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Delegate a task to a peer agent CLI (the default command).
    Run(RunArgs),
    /// Ask one or more advisers for a read-only second opinion, returned as structured advice.
    Ask(Box<crate::ask::AskArgs>),
    /// List the supported agents, whether their CLIs are installed, and their options.
    Agents,
    /// Print the JSON Schema of the result.
    Schema,
    /// Worktrees made by `run --worktree`: list or remove them.
    #[command(subcommand)]
    Worktree(WorktreeCommand),
    /// Wait for a background job to end and print its result.
    Wait(job::WaitArgs),
    /// Print a background job's state without waiting.
    Status(job::IdArgs),
    /// Print a job's result if it ended, else its running status.
    Result(job::IdArgs),
    /// Stop a background job and its whole process tree.
    Cancel(job::IdArgs),
    /// List background jobs (running first).
    Jobs(job::JobsArgs),
    /// Show a job's progress: messages, commands, file changes, errors.
    Logs(job::LogsArgs),
    /// Start a job that continues the peer session of an earlier job.
    Continue(job::ContinueArgs),
    /// Remove ended jobs and their logs.
    Prune(job::PruneArgs),
    /// The background job runner (started by `run --async`).
    #[command(name = "__job-runner", hide = true)]
    JobRunner(job::RunnerArgs),
}

#[derive(Debug, Clone, Args, Default)]
pub struct RunArgs {
    /// Peer agent: codex, claude, gemini (agy), zai (glm), pi, gemini-cli, opencode, qwen.
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

    /// Stop the peer after this long (e.g. 90s, 45m, 2h).
    #[arg(long, value_name = "DURATION", default_value = "60m")]
    pub timeout: String,

    /// Stop the peer when it prints nothing for this long.
    #[arg(long, value_name = "DURATION", default_value = "15m")]
    pub idle_timeout: String,

    /// codex: configuration profile.
    #[arg(long, value_name = "P")]
    pub profile: Option<String>,

    /// pi, opencode: provider (e.g. openai, anthropic, zai); qwen: its --auth-type.
    #[arg(long, value_name = "P")]
    pub provider: Option<String>,

    /// Send the task as-is, without baton's brief.
    #[arg(long)]
    pub raw: bool,

    /// Print the exact argv, environment changes and prompt, and run nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Start as a background job and print its id at once (see `baton wait`).
    #[arg(long = "async")]
    pub detach: bool,

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

#[derive(Debug, Subcommand)]
pub enum WorktreeCommand {
    /// List baton's worktrees: id, branch, age, state and diffstat.
    List,
    /// Remove a worktree (its committed work stays on its branch unless --branch).
    Remove {
        /// The worktree id (the run or job id).
        #[arg(value_name = "ID")]
        id: String,
        /// Also delete its branch `baton/<id>`.
        #[arg(long)]
        branch: bool,
        /// Remove it even if it has uncommitted changes (they are lost).
        #[arg(long)]
        force: bool,
    },
}

/// Parse `90`, `90s`, `45m`, `2h`, `1h30m`, `500ms`, `7d`.
pub fn parse_duration(s: &str) -> Result<Duration> {
    let bad = || {
        Error::usage_hint(
            format!("invalid duration `{s}`"),
            "use a number with a unit: 500ms, 90s, 45m, 2h, 1h30m, 7d",
        )
    };
    let t = s.trim();
    if t.is_empty() {
        return Err(bad());
    }
    if let Ok(n) = t.parse::<u64>() {
        return Ok(Duration::from_secs(n));
    }
    let mut total = Duration::ZERO;
    let mut num = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() || c == '.' {
            num.push(c);
            continue;
        }
        let mut unit = c.to_string();
        while let Some(&n) = chars.peek() {
            if n.is_ascii_alphabetic() {
                unit.push(n);
                chars.next();
            } else {
                break;
            }
        }
        let v: f64 = num.parse().map_err(|_| bad())?;
        num.clear();
        let secs = match unit.as_str() {
            "ms" => v / 1000.0,
            "s" | "sec" | "secs" => v,
            "m" | "min" | "mins" => v * 60.0,
            "h" | "hr" | "hrs" => v * 3600.0,
            "d" => v * 86400.0,
            _ => return Err(bad()),
        };
        total += Duration::from_secs_f64(secs);
    }
    if !num.is_empty() {
        return Err(bad());
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("45m").unwrap(), Duration::from_secs(2700));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(
            parse_duration("7d").unwrap(),
            Duration::from_secs(7 * 86400)
        );
        assert!(parse_duration("10x").is_err());
        assert!(parse_duration("m").is_err());
        assert!(parse_duration("5m3").is_err());
    }

    #[test]
    fn run_is_the_default_command() {
        let c = Cli::try_parse_from(["baton", "--agent", "claude", "fix", "it"]).unwrap();
        assert!(c.command.is_none());
        assert_eq!(c.run.agent.as_deref(), Some("claude"));
        assert_eq!(c.run.task, ["fix", "it"]);
        let c = Cli::try_parse_from(["baton", "run", "--read-only", "--", "--not-a-flag"]).unwrap();
        match c.command {
            Some(Command::Run(r)) => {
                assert!(r.read_only);
                assert_eq!(r.task, ["--not-a-flag"]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unknown_options_are_errors_not_prompt_text() {
        assert!(Cli::try_parse_from(["baton", "fix", "--frobnicate"]).is_err());
        assert!(Cli::try_parse_from(["baton", "run", "--frobnicate", "x"]).is_err());
    }
}
