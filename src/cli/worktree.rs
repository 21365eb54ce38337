//! `baton worktree list|remove`: the subcommands' flags and the
//! `worktree::Manage` request they become.

use clap::Subcommand;

use crate::error::Result;
use crate::output::Mode;
use crate::worktree::{self, Manage, Select};

#[derive(Debug, Subcommand)]
pub enum WorktreeCommand {
    /// List baton's worktrees: id, branch, age, state and diffstat.
    List,
    /// Remove a worktree by id, or by --all, --merged or --finished (its branch stays unless --branch).
    Remove {
        /// The worktree id (the run or job id).
        #[arg(value_name = "ID", required_unless_present_any = ["all", "merged", "finished"])]
        id: Option<String>,
        /// Every worktree (one a run works in stays; exit 1 if any stays).
        #[arg(long, conflicts_with_all = ["id", "merged", "finished"])]
        all: bool,
        /// Those whose branch is merged into HEAD, as `git branch -d` judges it.
        #[arg(long, conflicts_with = "id")]
        merged: bool,
        /// Those whose run finished (not running, not interrupted).
        #[arg(long, conflicts_with = "id")]
        finished: bool,
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
        WorktreeCommand::Remove {
            id: Some(id),
            branch,
            force,
            ..
        } => Manage::Remove { id, branch, force },
        WorktreeCommand::Remove {
            id: None,
            all,
            merged,
            finished,
            branch,
            force,
        } => Manage::RemoveMany {
            select: Select {
                all,
                merged,
                finished,
            },
            branch,
            force,
        },
    };
    worktree::command(manage, mode)
}
