//! `baton notify test`: its flags, handed to `notify::test`.

use clap::Subcommand;

use crate::config::{self, Config};
use crate::error::Result;
use crate::notify::{Origin, test};
use crate::output::{self, Mode};

#[derive(Debug, Subcommand)]
pub enum NotifyCommand {
    /// Send one test notification to each channel configured in [notify] (whatever `on` says).
    Test,
}

pub fn command(c: NotifyCommand, mode: Mode) -> Result<i32> {
    match c {
        NotifyCommand::Test => {
            let cfg = config::install(Config::load(None)?);
            output::emit(&test::run(cfg, &Origin::here())?, mode)
        }
    }
}
