//! What a job runs (`spec.json`): the `Plan`, the exact command, and the
//! worktree session, stored so the runner can execute them later.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::agent::CommandSpec;
use crate::error::{Error, Result};
use crate::run::Plan;

/// The command a job runs, as resolved (and validated) when it was started.
/// A mirror of `agent::CommandSpec` that can be stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredCommand {
    pub program: String,
    pub args: Vec<String>,
    pub env_set: Vec<(String, String)>,
    pub env_remove: Vec<String>,
    pub stdin: Option<String>,
    pub warnings: Vec<String>,
}

impl StoredCommand {
    pub fn from_spec(spec: &CommandSpec) -> Result<StoredCommand> {
        let args = spec
            .args
            .iter()
            .map(|a| {
                a.to_str().map(str::to_string).ok_or_else(|| {
                    Error::usage_hint(
                        format!(
                            "argument `{}` is not valid UTF-8; background jobs cannot store it",
                            a.to_string_lossy()
                        ),
                        "run it in the foreground (without --async), or use a UTF-8 path",
                    )
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(StoredCommand {
            program: spec.program.clone(),
            args,
            env_set: spec.env_set.clone(),
            env_remove: spec.env_remove.clone(),
            stdin: spec.stdin.clone(),
            warnings: spec.warnings.clone(),
        })
    }

    pub fn to_spec(&self) -> CommandSpec {
        let mut c = CommandSpec::new(&self.program);
        c.args(&self.args);
        c.env_set = self.env_set.clone();
        c.env_remove = self.env_remove.clone();
        c.stdin = self.stdin.clone();
        c.warnings = self.warnings.clone();
        c
    }
}

/// `spec.json`: written once, before the runner starts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Spec {
    pub version: u32,
    pub id: String,
    pub created_ms: u64,
    pub plan: Plan,
    pub command: StoredCommand,
    /// The peer CLI as found on PATH at start.
    pub program: PathBuf,
    /// The job whose peer session this one continues (`baton continue`).
    pub resumed_from: Option<String>,
    /// `run --async --worktree` (and its continuations): the worktree the
    /// peer works in, committed to when it ends.
    #[serde(default)]
    pub worktree: Option<crate::worktree::Session>,
    /// `run --async --worktree`: what the worktree was made from, so a
    /// fallback agent gets a fresh one at the same base.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<crate::worktree::Checked>,
    /// `--notify` / `--no-notify`: whether the runner announces the job
    /// (0.3.2's specs have none: as `[notify]` says).
    #[serde(default)]
    pub notify: crate::notify::Choice,
    /// The terminal of the command that started the job, to ring if it
    /// is still there when the job ends.
    #[serde(default)]
    pub origin: crate::notify::Origin,
}
