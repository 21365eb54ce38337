//! A fan-out as asked for (`FanoutRequest`, built by `cli::run`), and its
//! settings as the record keeps them (`Settings`): how to pick, who judges,
//! the limits.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::run::RunRequest;
use crate::worktree::WorktreeOptions;

/// `baton run --agents a,b,c [--attempts N] …`, as given.
#[derive(Debug, Clone, Default)]
pub struct FanoutRequest {
    /// The run every candidate is (agent, model and access are per
    /// candidate; the rest — cwd, limits, effort, the task — is shared).
    pub run: RunRequest,
    /// `NAME` or `NAME:MODEL`; empty: the run's agent (or the default).
    pub agents: Vec<String>,
    /// Each agent this many times (at least 1).
    pub attempts: u32,
    /// The worktree flags (`--base`, `--include-dirty`, `--allow`,
    /// `--test-cmd`); every candidate gets its own worktree.
    pub worktree: WorktreeOptions,
    pub until_green: u32,
    /// `best` (default) or `first-green`.
    pub pick: Option<String>,
    /// `peers`, `none` or an agent (`NAME[:MODEL]`); `None`: `peers` when
    /// the candidates come from two vendors or more, else `none`.
    pub judge: Option<String>,
    pub seed: Option<u64>,
    pub keep_all: bool,
    pub budget_tokens: Option<u64>,
    pub max_wall: Option<String>,
    pub run_async: bool,
    pub dry_run: bool,
    /// `--notify` / `--no-notify`: whether the driver announces the
    /// fan-out's end (its candidates and judges never do).
    pub notify: crate::notify::Choice,
}

/// How the winner is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pick {
    /// Every candidate runs to its end; the eligible ones are ranked.
    Best,
    /// The first eligible candidate wins at once; the others are stopped.
    FirstGreen,
}

impl Pick {
    pub fn parse(s: Option<&str>) -> Result<Pick> {
        match s.map(str::trim) {
            None | Some("best") => Ok(Pick::Best),
            Some("first-green") => Ok(Pick::FirstGreen),
            Some(o) => Err(Error::usage_hint(
                format!("--pick `{o}` is not a way to pick"),
                "use --pick best (rank the eligible candidates) or --pick first-green",
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Pick::Best => "best",
            Pick::FirstGreen => "first-green",
        }
    }
}

/// Who ranks the eligible candidates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Judge {
    /// Each candidate's agent ranks the candidates it did not write.
    Peers,
    /// baton alone: the smaller diff, then a draw seeded with the seed.
    None,
    /// One named agent ranks them all.
    Agent {
        agent: String,
        model: Option<String>,
    },
}

impl Judge {
    pub fn as_str(&self) -> &'static str {
        match self {
            Judge::Peers => "peers",
            Judge::None => "none",
            Judge::Agent { .. } => "agent",
        }
    }
}

/// `NAME` or `NAME:MODEL` (`codex`, `claude:opus`) as (name, model).
pub fn split_spec(spec: &str) -> (&str, Option<&str>) {
    match spec.trim().split_once(':') {
        Some((a, m)) if !m.trim().is_empty() => (a.trim(), Some(m.trim())),
        Some((a, _)) => (a.trim(), None),
        None => (spec.trim(), None),
    }
}

/// What the fan-out keeps of its request beyond the candidates' plans.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Settings {
    pub pick: Pick,
    pub judge: Judge,
    pub seed: u64,
    pub until_green: u32,
    pub keep_all: bool,
    pub budget_tokens: Option<u64>,
    /// `--max-usd`: each candidate's runs are held to it as any run's, and
    /// the gate between rounds projects the fan-out's dollars against it.
    #[serde(default)]
    pub max_usd: Option<f64>,
    pub max_wall_ms: Option<u64>,
    /// `None`: a read-only fan-out, in place.
    pub worktree: Option<WorktreeOptions>,
    /// The shared limits (as `run` took them), for the judge's calls too.
    pub timeout_ms: u64,
    pub idle_timeout_ms: u64,
    pub effort: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_and_specs() {
        assert_eq!(Pick::parse(None).unwrap(), Pick::Best);
        assert_eq!(Pick::parse(Some("first-green")).unwrap(), Pick::FirstGreen);
        assert_eq!(Pick::parse(Some("fastest")).unwrap_err().exit_code(), 2);
        assert_eq!(split_spec("claude:opus"), ("claude", Some("opus")));
        assert_eq!(split_spec(" pi "), ("pi", None));
        assert_eq!(split_spec("codex:"), ("codex", None));
    }
}
