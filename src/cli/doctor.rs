//! `baton doctor` and `baton config`: their flags, and the plain requests
//! (`doctor::DoctorRequest`, `config::command::InitRequest`) they become.

use clap::{Args, Subcommand};

use crate::config::{self, Config};
use crate::doctor::{self, DoctorRequest};
use crate::error::Result;
use crate::output::Mode;

#[derive(Debug, Clone, Args, Default)]
pub struct DoctorArgs {
    /// Check only this agent (it then decides the exit code instead of the default agent).
    #[arg(long, short = 'a', value_name = "NAME")]
    pub agent: Option<String>,
    /// Also send each ready agent a tiny prompt through `baton run --read-only` (costs tokens).
    #[arg(long)]
    pub probe: bool,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the merged configuration with the source of every value.
    Show,
    /// Print where the user and project config files are.
    Path,
    /// Write a commented template to the user file (never over an existing one).
    Init {
        /// Write the project's baton.toml (at the repository root) instead.
        #[arg(long)]
        project: bool,
    },
}

pub fn doctor(a: DoctorArgs, mode: Mode) -> Result<i32> {
    doctor::command(
        &DoctorRequest {
            agent: a.agent,
            probe: a.probe,
            cwd: None,
        },
        mode,
    )
}

pub fn config(c: ConfigCommand, mode: Mode) -> Result<i32> {
    match c {
        ConfigCommand::Show => config::command::show(&Config::load(None)?, mode),
        ConfigCommand::Path => config::command::path(&Config::locate(None)?, mode),
        ConfigCommand::Init { project } => {
            config::command::init(&config::command::InitRequest { project, cwd: None }, mode)
        }
    }
}
