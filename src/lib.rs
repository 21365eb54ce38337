//! baton: hand a task to a peer coding-agent CLI, supervise it, and report
//! one uniform JSON result.
//!
//! Module map: `cli` (command line), `run` (the run command), `agent/<cli>`
//! (one adapter per peer CLI: argv + output parser), `models` (model/effort
//! table), `process` (spawn, process groups, timeouts), `git` (changed
//! files), `result` (the public JSON), `output` (printers), `error` (tool
//! errors and exit codes), `fsutil` (private, atomic state files), `ids`,
//! `worktree` (`run --worktree` and `baton worktree`), `job` (background
//! jobs: store, runner, wait/cancel/logs).

pub mod agent;
pub mod agents_cmd;
pub mod ask;
pub mod cli;
pub mod config;
pub mod doctor;
pub mod error;
pub mod fsutil;
pub mod git;
pub mod ids;
pub mod job;
pub mod models;
pub mod output;
pub mod process;
pub mod prompt;
pub mod result;
pub mod run;
pub mod worktree;

use std::ffi::OsString;

use clap::Parser as _;
use clap::error::ErrorKind;

use crate::cli::{Cli, Command, ConfigCommand, RunArgs};
use crate::error::{Error, Result};
use crate::output::Mode;

/// Entry point: parse `args`, run the command, return the exit code.
pub fn run(args: impl IntoIterator<Item = OsString>) -> i32 {
    let args: Vec<OsString> = args.into_iter().collect();
    // Decided before parsing so that a usage error is reported in the mode asked for.
    let text = args
        .iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--text");
    let mode = if text { Mode::Text } else { Mode::Json };
    let args = hoist_output_flags(args);
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => return clap_error(e, mode),
    };
    match dispatch(cli, mode) {
        Ok(code) => code,
        Err(e) => {
            output::print_error(&e, mode);
            e.exit_code()
        }
    }
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
        _ => {
            let rendered = e.render().to_string();
            let first = rendered
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ")
                .to_string();
            let err = Error::usage_hint(first, "see `baton --help`");
            if mode == Mode::Json {
                let mut report = result::ErrorReport::from_error(&err);
                report.exit_code = Some(err.exit_code());
                output::json_line(&report);
            }
            eprint!("{rendered}");
            err.exit_code()
        }
    }
}

fn dispatch(cli: Cli, mode: Mode) -> Result<i32> {
    match cli.command {
        None => run_command(cli.run, mode),
        Some(Command::Run(args)) => run_command(args, mode),
        Some(Command::Ask(args)) => {
            config::install(config::Config::load(args.cwd.as_deref())?);
            ask::command(*args, mode)
        }
        Some(Command::Doctor(a)) => doctor::command(
            &doctor::DoctorRequest {
                agent: a.agent,
                probe: a.probe,
                cwd: None,
            },
            mode,
        ),
        Some(Command::Config(c)) => match c {
            ConfigCommand::Show => config::command::show(&config::Config::load(None)?, mode),
            ConfigCommand::Path => config::command::path(&config::Config::locate(None)?, mode),
            ConfigCommand::Init { project } => {
                config::command::init(&config::command::InitRequest { project, cwd: None }, mode)
            }
        },
        Some(Command::Agents) => Ok(agents_cmd::list(mode)),
        Some(Command::Schema) => {
            output::json_line(&result::schema());
            Ok(0)
        }
        Some(Command::Worktree(cmd)) => worktree::command(cmd, mode),
        Some(Command::Wait(a)) => job::wait(a, mode),
        Some(Command::Status(a)) => job::status(a, mode),
        Some(Command::Result(a)) => job::result(a, mode),
        Some(Command::Cancel(a)) => job::cancel(a, mode),
        Some(Command::Jobs(a)) => job::list(a, mode),
        Some(Command::Logs(a)) => job::logs::logs(a, mode),
        Some(Command::Continue(a)) => job::continue_job(a, mode),
        Some(Command::Prune(a)) => job::prune(a, mode),
        Some(Command::JobRunner(a)) => job::run_runner(a),
    }
}

fn run_command(args: RunArgs, mode: Mode) -> Result<i32> {
    // Two small files at most, nothing spawned: start-up stays fast.
    config::install(config::Config::load(args.cwd.as_deref())?);
    let task = run::read_task(&args)?;
    let plan = run::plan(&args, task)?;
    // Validated before anything is created (exit 2 on a bad repository/base).
    let worktree = worktree::check(&args.worktree, &plan)?;
    let spec = plan.command()?;
    if args.dry_run {
        match &worktree {
            Some(c) => output::json_line(&worktree::dry_run_json(c, &plan)?),
            None => output::json_line(&run::dry_run_json(&plan, &spec)),
        }
        return Ok(0);
    }
    if args.detach {
        let place = match &worktree {
            Some(c) => job::Place::NewWorktree(c),
            None => job::Place::Cwd,
        };
        job::print_started(&job::start(&plan, place, None)?, mode);
        return Ok(0);
    }
    if let Some(c) = worktree {
        return worktree::run(plan, &c, mode);
    }
    let program = plan.program(&spec)?;
    // Installed before the peer exists: a Ctrl-C can never orphan it.
    let mut interrupts = process::Interrupts::install()?;
    let (_id, dir) = run::new_run_dir(&plan.root)?;
    let result = run::execute(&plan, &spec, &program, &dir, &mut interrupts, &mut |_| {})?;
    output::print_result(&result, mode);
    Ok(result.status.exit_code())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
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
}
