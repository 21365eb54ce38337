//! The command line: clap lives here and nowhere else. Each command's file
//! turns its arguments into a plain request and calls the feature that does it.
//!
//! `run` is the default command: `baton [OPTIONS] [--] [TASK]...` is `baton
//! run …`. `run()` parses (after `hoist_output_flags`), reports usage errors
//! in the output mode asked for, and `dispatch`es.

pub mod ask;
pub mod attach;
pub mod bench;
pub mod completions;
pub mod council;
pub mod doctor;
pub mod jobs;
pub mod manpage;
pub mod mcp;
pub mod notify;
pub mod run;
pub mod serve;
pub mod setup;
mod typo;
pub mod usage;
pub mod watch;
pub mod worktree;

use std::ffi::OsString;

use clap::error::ErrorKind;
use clap::{Args, Parser, Subcommand};

use crate::error::{Error, Result};
use crate::output::{self, Mode};

use self::jobs as job;
pub use self::run::{RunArgs, WorktreeArgs};
pub use self::worktree::WorktreeCommand;

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

#[derive(Debug, Clone, Args, Default)]
pub struct SchemaArgs {
    /// Which schema [default: result, what run, wait, continue and ask print].
    #[arg(value_name = "NAME", value_parser = schema_names())]
    pub name: Option<String>,
}

/// The names `baton schema` takes, listed by `--help` from the one list
/// (`schema::NAMES`), so the help cannot fall behind it (`run` is an old
/// name of `result`, accepted and not shown).
fn schema_names() -> clap::builder::PossibleValuesParser {
    let mut names: Vec<clap::builder::PossibleValue> = crate::schema::NAMES
        .iter()
        .map(|n| clap::builder::PossibleValue::new(*n))
        .collect();
    names.push(clap::builder::PossibleValue::new("run").hide(true));
    names.push(clap::builder::PossibleValue::new("notify_event").hide(true));
    clap::builder::PossibleValuesParser::new(names)
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
//
// `defer`: a command's arguments are built only when that command is
// parsed (a foreground run builds none of the other twenty). Whatever walks
// the whole tree (completions, man pages, MCP tools) starts from
// `full_command()`, which builds them all.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Delegate a task to a peer agent CLI (the default command).
    Run(RunArgs),
    /// Ask one or more advisers for a read-only second opinion, returned as structured advice.
    Ask(Box<ask::AskArgs>),
    /// List the supported agents, whether their CLIs are installed, and their options.
    Agents,
    /// What peers spent: tokens, cost and runs (ok, failed by kind, fell back), from baton's records.
    Usage(usage::UsageArgs),
    /// Several peers propose, critique each other blind, a chair plans, one writes, the others review.
    Council(Sub<council::CouncilCommand>),
    /// Which peer works best on this repository: tasks from its history, trials, a report with error bars.
    Bench(Sub<bench::BenchCommand>),
    /// Print the JSON Schema of the result, or of another output (`baton schema --help` names them).
    Schema(SchemaArgs),
    /// Notifications ([notify] in the config): send a test one to each configured channel.
    Notify(Sub<notify::NotifyCommand>),
    /// Check that everything is in place: agent CLIs, versions, credentials, sandboxes, baton itself.
    Doctor(doctor::DoctorArgs),
    /// The configuration: show what is in effect (and from where), the file paths, or write a template.
    Config(Sub<doctor::ConfigCommand>),
    /// Worktrees made by `run --worktree`: list or remove them.
    Worktree(Sub<WorktreeCommand>),
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
    /// See every job at a glance: state, what each peer is doing, tokens, files.
    Watch(watch::WatchArgs),
    /// A local web page of every job, live: transcripts, cancel, continue (127.0.0.1 only).
    Serve(serve::ServeArgs),
    /// Start a job that continues the peer session of an earlier job.
    Continue(job::ContinueArgs),
    /// Take over an ended job's session in the peer CLI's own interactive interface.
    Attach(attach::AttachArgs),
    /// Remove what ended long ago: jobs and their logs, run records, councils.
    Prune(job::PruneArgs),
    /// Serve baton's commands as MCP tools over stdio, for any MCP host (see docs/mcp.md).
    Mcp(mcp::McpArgs),
    /// Install the `peer` skill for claude, codex, pi and gemini without a marketplace.
    Setup(setup::SetupArgs),
    /// Print a shell completion script: bash, zsh, fish, powershell or elvish.
    Completions(setup::CompletionsArgs),
    /// Print the man page baton.1, or write every page into --dir.
    Man(setup::ManArgs),
    /// Job ids for the completion scripts, newest first.
    #[command(name = "__complete-jobs", hide = true)]
    CompleteJobs,
    /// The background council runner (started by `council … --async`).
    #[command(name = "__council-runner", hide = true)]
    CouncilRunner(council::RunnerArgs),
    /// The background job runner (started by `run --async`).
    #[command(name = "__job-runner", hide = true)]
    JobRunner(job::RunnerArgs),
    /// The background fan-out runner (started by `run --agents … --async`).
    #[command(name = "__fanout-runner", hide = true)]
    FanoutRunner(council::RunnerArgs),
}

// A command with commands of its own. A `#[command(subcommand)]` variant
// would build its whole tree on every parse (clap defers only a variant
// that holds arguments): this one is built when it is the command parsed.
// A `//` comment: a doc comment here would replace each command's about.
#[derive(Debug, Args)]
pub struct Sub<T: Subcommand> {
    #[command(subcommand)]
    pub command: T,
}

/// Entry point: parse `args`, run the command, return the exit code.
pub fn run(args: impl IntoIterator<Item = OsString>) -> i32 {
    let args: Vec<OsString> = args.into_iter().collect();
    // A call of `baton mcp` gives its arguments on stdin (mcp::child).
    let args = match crate::mcp::argv_from_stdin(args) {
        Ok(a) => a,
        Err(e) => {
            let e = Error::io("reading the arguments from stdin", e);
            output::print_error(&e, Mode::Json);
            return e.exit_code();
        }
    };
    // Decided before parsing so that a usage error is reported in the mode asked for.
    let text = args
        .iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--text");
    let mode = if text { Mode::Text } else { Mode::Json };
    let args = hoist_output_flags(args);
    // Built once: the typo check below reads the command names from it
    // (a second build cost every foreground run a tenth of a millisecond).
    let mut command = <Cli as clap::CommandFactory>::command();
    let cli = match command
        .try_get_matches_from_mut(&args)
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m))
    {
        Ok(c) => c,
        Err(e) => return clap_error(e.format(&mut command), mode),
    };
    if cli.command.is_none()
        && let Err(e) = typo::check(&args, &cli.run.task, &visible_commands(&command))
    {
        output::print_error(&e, mode);
        return e.exit_code();
    }
    match dispatch(cli, mode) {
        Ok(code) => code,
        Err(e) => {
            output::print_error(&e, mode);
            e.exit_code()
        }
    }
}

/// The whole command tree, every command's arguments built (see `defer`
/// on `Command`).
pub fn full_command() -> clap::Command {
    use clap::CommandFactory as _;
    let mut c = Cli::command();
    c.build();
    c
}

/// The names of the commands `--help` lists.
fn visible_commands(cli: &clap::Command) -> Vec<String> {
    cli.get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_string())
        .collect()
}

/// `baton --text jobs` means `baton jobs --text`. Because `run` is the
/// default command, clap would otherwise take a flag before the subcommand
/// as the start of a run and `jobs` as its task.
fn hoist_output_flags(mut args: Vec<OsString>) -> Vec<OsString> {
    use clap::CommandFactory as _;
    let flags = args
        .iter()
        .skip(1)
        .take_while(|a| *a == "--json" || *a == "--text")
        .count();
    if flags == 0 {
        return args;
    }
    let Some(next) = args.get(1 + flags).and_then(|a| a.to_str()) else {
        return args;
    };
    let is_subcommand = Cli::command()
        .get_subcommands()
        .any(|c| c.get_name() == next && !c.is_hide_set());
    if is_subcommand {
        let moved: Vec<OsString> = args.drain(1..1 + flags).collect();
        args.splice(2..2, moved);
    }
    args
}

fn clap_error(e: clap::Error, mode: Mode) -> i32 {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            0
        }
        kind => {
            let rendered = e.render().to_string();
            let (message, hint) = clap_parts(&rendered, kind);
            let err = Error::usage_hint(message, hint);
            if mode == Mode::Json {
                let mut report = crate::result::ErrorReport::from_error(&err);
                report.exit_code = Some(err.exit_code());
                let _ = output::json_line(&report);
            }
            eprint!("{rendered}");
            err.exit_code()
        }
    }
}

/// clap's rendered error as a message and a hint, so JSON carries all of it:
/// the message's lines joined (`… not provided: <ID>`), then its tips
/// (`a similar argument exists: '--agent'`) and the usage line as the hint.
/// A command called without its subcommand renders its help: the message
/// names the commands it takes.
fn clap_parts(rendered: &str, kind: ErrorKind) -> (String, String) {
    let (mut lines, mut tips, mut commands) = (Vec::new(), Vec::new(), Vec::new());
    let (mut usage, mut section) = (None, "");
    for raw in rendered.lines() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(u) = line.strip_prefix("Usage: ") {
            usage = Some(u.to_string());
        } else if line.ends_with(':') && usage.is_some() {
            section = line;
        } else if let Some(t) = line.strip_prefix("tip: ") {
            tips.push(t.to_string());
        } else if usage.is_none() {
            lines.push(line.trim_start_matches("error: ").to_string());
        } else if section == "Commands:" && !raw.starts_with("   ") {
            // A command's line; a wrapped description is indented deeper.
            commands.extend(line.split_whitespace().next().map(str::to_string));
        }
    }
    let message = match (kind, lines.split_first()) {
        (ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand, _) if !commands.is_empty() => {
            format!("a command is missing: one of {}", commands.join(", "))
        }
        (_, Some((first, rest))) if !rest.is_empty() => format!("{first} {}", rest.join(", ")),
        (_, Some((first, _))) => first.clone(),
        (_, None) => "invalid arguments".to_string(),
    };
    tips.extend(usage.map(|u| format!("usage: {u}")));
    tips.push("see `--help`".into());
    (message, tips.join("; "))
}

fn dispatch(cli: Cli, mode: Mode) -> Result<i32> {
    // A plan, record or flag may name an agent the user brought.
    crate::config::bring_user_agents();
    setup::one_output(cli.command.as_ref(), cli.output)?;
    match cli.command {
        None => run::command(cli.run, mode),
        Some(Command::Run(args)) => run::command(args, mode),
        Some(Command::Ask(args)) => {
            crate::config::install(crate::config::Config::load(args.cwd.as_deref())?);
            ask::command(*args, mode)
        }
        Some(Command::Doctor(a)) => doctor::doctor(a, mode),
        Some(Command::Config(c)) => doctor::config(c.command, mode),
        Some(Command::Agents) => crate::doctor::agents::list(mode),
        Some(Command::Usage(a)) => usage::command(a, mode),
        Some(Command::Notify(c)) => notify::command(c.command, mode),
        Some(Command::Schema(a)) => {
            let v = crate::schema::named(a.name.as_deref()).ok_or_else(|| {
                Error::usage_hint(
                    format!("no schema `{}`", a.name.as_deref().unwrap_or_default()),
                    format!("use one of: {}", crate::schema::NAMES.join(", ")),
                )
            })?;
            output::json_line(&v)?;
            Ok(0)
        }
        Some(Command::Council(c)) => council::command(c.command, mode),
        Some(Command::Bench(c)) => bench::command(c.command, mode),
        Some(Command::CouncilRunner(a)) => council::runner(a),
        Some(Command::FanoutRunner(a)) => crate::fanout::runner(&a.id, &a.root),
        Some(Command::Worktree(c)) => worktree::command(c.command, mode),
        Some(Command::Wait(a)) => jobs::wait(a, mode),
        Some(Command::Status(a)) => jobs::status(a, mode),
        Some(Command::Result(a)) => jobs::result(a, mode),
        Some(Command::Cancel(a)) => jobs::cancel(a, mode),
        Some(Command::Jobs(a)) => jobs::list(a, mode),
        Some(Command::Logs(a)) => jobs::logs(a, mode),
        Some(Command::Watch(a)) => watch::command(a, mode),
        Some(Command::Serve(a)) => serve::command(a, mode),
        Some(Command::Continue(a)) => jobs::continue_job(a, mode),
        Some(Command::Attach(a)) => attach::command(a, mode),
        Some(Command::Prune(a)) => jobs::prune(a, mode),
        Some(Command::Mcp(a)) => mcp::command(a),
        Some(Command::Setup(a)) => setup::setup(a, mode),
        Some(Command::Completions(a)) => setup::completions(a),
        Some(Command::Man(a)) => setup::man(a, mode),
        Some(Command::CompleteJobs) => setup::complete_jobs(),
        Some(Command::JobRunner(a)) => jobs::run_runner(a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn a_commands_arguments_are_built_only_when_needed() {
        use clap::CommandFactory as _;
        let args = |c: &clap::Command, name: &str| {
            c.find_subcommand(name)
                .map(|s| s.get_arguments().count())
                .unwrap_or_default()
        };
        // Deferred: a run parses its own flags, not the other commands'.
        let lazy = Cli::command();
        assert_eq!(args(&lazy, "jobs"), 0);
        // Nor the commands of a command that has some (`Sub`).
        let subs = |c: &clap::Command, name: &str| {
            c.find_subcommand(name).unwrap().get_subcommands().count()
        };
        for name in ["council", "bench", "notify", "config", "worktree"] {
            assert_eq!(subs(&lazy, name), 0, "{name}");
        }
        // Built for whatever walks the whole tree.
        let full = full_command();
        for name in ["council", "bench", "notify", "config", "worktree"] {
            assert!(subs(&full, name) > 0, "{name}");
        }
        assert!(args(&full, "jobs") > 3, "{}", args(&full, "jobs"));
        let all = full.find_subcommand("jobs").unwrap();
        assert!(all.get_arguments().any(|a| a.get_id() == "all_repos"));
        // The names (and `hide`) are there either way.
        assert_eq!(
            lazy.get_subcommands()
                .map(|c| c.get_name())
                .collect::<Vec<_>>(),
            full.get_subcommands()
                .map(|c| c.get_name())
                .filter(|n| *n != "help")
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn output_flags_before_a_subcommand_move_after_it() {
        assert_eq!(
            hoist_output_flags(os(&["baton", "--text", "jobs", "--all"])),
            os(&["baton", "jobs", "--text", "--all"])
        );
        assert_eq!(
            hoist_output_flags(os(&["baton", "--json", "--text", "agents"])),
            os(&["baton", "agents", "--json", "--text"])
        );
        // A task is left alone.
        assert_eq!(
            hoist_output_flags(os(&["baton", "--text", "fix", "it"])),
            os(&["baton", "--text", "fix", "it"])
        );
        assert_eq!(
            hoist_output_flags(os(&["baton", "jobs"])),
            os(&["baton", "jobs"])
        );
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

    fn parts(args: &[&str]) -> (String, String) {
        let e = Cli::try_parse_from(args).unwrap_err();
        clap_parts(&e.render().to_string(), e.kind())
    }

    #[test]
    fn a_clap_error_keeps_its_missing_arguments_tips_and_usage() {
        let (m, h) = parts(&["baton", "wait"]);
        assert_eq!(
            m,
            "the following required arguments were not provided: <ID>"
        );
        assert_eq!(h, "usage: baton wait <ID>; see `--help`");
        let (m, _) = parts(&["baton", "council", "approve"]);
        assert_eq!(
            m,
            "the following required arguments were not provided: --plan-sha256 <HEX>, <ID>"
        );
        let (m, h) = parts(&["baton", "--agnet", "codex", "x"]);
        assert_eq!(m, "unexpected argument '--agnet' found");
        assert!(
            h.starts_with("a similar argument exists: '--agent'; usage: baton "),
            "{h}"
        );
        let (m, h) = parts(&["baton", "worktree"]);
        assert_eq!(m, "a command is missing: one of list, remove");
        assert!(h.starts_with("usage: baton worktree "), "{h}");
    }

    #[test]
    fn unknown_options_are_errors_not_prompt_text() {
        assert!(Cli::try_parse_from(["baton", "fix", "--frobnicate"]).is_err());
        assert!(Cli::try_parse_from(["baton", "run", "--frobnicate", "x"]).is_err());
    }
}
