//! baton: hand a task to a peer coding-agent CLI, supervise it, and report
//! one uniform JSON result. `docs/architecture.md` draws the module map.

pub mod agent;
pub mod ask;
pub mod bench;
pub mod cli;
pub mod config;
pub mod council;
pub mod doctor;
pub mod duration;
pub mod error;
pub mod failure;
pub mod fanout;
pub mod fsutil;
pub mod git;

pub mod group;
pub mod ids;
pub mod job;
pub mod mcp;
pub mod notify;
pub mod output;
pub mod process;
pub mod prompt;
pub mod redact;
pub mod result;
pub mod run;
pub mod sandbox;
pub mod schema;
pub mod serve;
pub mod setup;
pub mod spend;
pub mod state_dir;
pub mod store;
pub mod sys;
pub mod view;
pub mod words;
pub mod worktree;

use std::ffi::OsString;

/// Entry point: parse `args`, run the command, return the exit code.
pub fn run(args: impl IntoIterator<Item = OsString>) -> i32 {
    let args: Vec<OsString> = args.into_iter().collect();
    // The sandbox helper execs a peer: it must not parse the whole command
    // line, read the configuration or touch stdin (src/sandbox/exec.rs).
    #[cfg(target_os = "linux")]
    if args.get(1).is_some_and(|a| a == sandbox::HELPER) {
        return sandbox::exec::main(&args[2..]);
    }
    cli::run(args)
}
