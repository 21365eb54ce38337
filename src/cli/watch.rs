//! `baton watch`: its flags. `--once` prints one snapshot; without it, the
//! interactive terminal view (`view::tui`).

use clap::Args;

use crate::error::Result;
use crate::output::Mode;
use crate::view;

#[derive(Debug, Clone, Args)]
pub struct WatchArgs {
    /// Print one snapshot of every job and exit (JSON, or a table with --text).
    #[arg(long)]
    pub once: bool,
    /// Run CMD when a job ends, fails or stalls, with BATON_JOB_ID,
    /// BATON_JOB_STATUS and BATON_JOB_AGENT set. Split into words like a shell
    /// would, run without one.
    #[arg(long, value_name = "CMD", conflicts_with = "once")]
    pub on_change: Option<String>,
    /// Show the work of every repository baton keeps records for, each row
    /// with its repository (see docs/watch.md for what is listed).
    #[arg(long)]
    pub all: bool,
    /// With --all: only repositories whose root path contains PATTERN.
    #[arg(long, value_name = "PATTERN", requires = "all")]
    pub repo: Option<String>,
}

pub fn command(a: WatchArgs, mode: Mode) -> Result<i32> {
    let filter = a.all.then(|| view::repos::Filter {
        repo: a.repo,
        ..view::repos::Filter::default()
    });
    if a.once {
        return match filter {
            Some(f) => view::repos::once(&f, mode),
            None => view::watch::once(mode),
        };
    }
    view::tui::run(view::tui::Options {
        on_change: a.on_change,
        all: filter,
    })
}
