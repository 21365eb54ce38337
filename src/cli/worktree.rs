//! `baton worktree list|remove`: the subcommands' flags and the
//! `worktree::Manage` request they become.

use clap::Subcommand;

use crate::error::Result;
use crate::output::Mode;
use crate::worktree::{self, Manage};

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

pub fn command(cmd: WorktreeCommand, mode: Mode) -> Result<i32> {
    let manage = match cmd {
        WorktreeCommand::List => Manage::List,
        WorktreeCommand::Remove { id, branch, force } => Manage::Remove { id, branch, force },
    };
    worktree::command(manage, mode)
}
