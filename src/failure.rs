//! Why a peer could not answer, named: the stable `error.kind` of a run that
//! failed because of its provider, its credentials or its sandbox.
//!
//! A CLI's own message stays in `error.message`; the kind is what a host
//! agent acts on (wait and retry, switch agent, fix a key, shorten the
//! prompt). Kinds come from what is observable in a CLI's output (exit code,
//! JSON error fields, stderr), classified per CLI by its adapter from
//! recorded transcripts. A guess that could be wrong is `agent_error`:
//! telling a host "rate limited" when the key is wrong costs it more than
//! telling it nothing.

use serde::{Deserialize, Serialize};

/// A named failure. `AgentError` is everything that could not be named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Failure {
    /// No credentials, wrong ones, or an expired login.
    AuthRequired,
    /// The provider said "too many requests" (HTTP 429 or its words for it).
    RateLimited,
    /// Billing, monthly or credit limits: retrying will not help soon.
    QuotaExhausted,
    /// The model asked for is unknown or not available to this account.
    ModelNotFound,
    /// The prompt (with history) is over the model's context window.
    ContextTooLong,
    /// The provider is down or overloaded (5xx, 529 "overloaded").
    ProviderUnavailable,
    /// The provider could not be reached: connection refused or reset,
    /// DNS, TLS.
    Network,
    /// The CLI refused an action by its own access rules and could not
    /// finish without it.
    SandboxDenied,
    /// baton runs inside a host agent's sandbox that blocks what the peer
    /// needs (its network); detected before the peer starts.
    HostSandbox,
    /// A spending limit (`--max-usd`, `--budget-tokens`) would be crossed.
    BudgetExceeded,
    /// Anything else the peer reported as a failure.
    AgentError,
}

impl Failure {
    pub const ALL: [Failure; 11] = [
        Failure::AuthRequired,
        Failure::RateLimited,
        Failure::QuotaExhausted,
        Failure::ModelNotFound,
        Failure::ContextTooLong,
        Failure::ProviderUnavailable,
        Failure::Network,
        Failure::SandboxDenied,
        Failure::HostSandbox,
        Failure::BudgetExceeded,
        Failure::AgentError,
    ];

    /// The stable `error.kind` string.
    pub fn kind(self) -> &'static str {
        match self {
            Failure::AuthRequired => "auth_required",
            Failure::RateLimited => "rate_limited",
            Failure::QuotaExhausted => "quota_exhausted",
            Failure::ModelNotFound => "model_not_found",
            Failure::ContextTooLong => "context_too_long",
            Failure::ProviderUnavailable => "provider_unavailable",
            Failure::Network => "network",
            Failure::SandboxDenied => "sandbox_denied",
            Failure::HostSandbox => "host_sandbox",
            Failure::BudgetExceeded => "budget_exceeded",
            Failure::AgentError => "agent_error",
        }
    }

    pub fn from_kind(kind: &str) -> Option<Failure> {
        Failure::ALL.into_iter().find(|f| f.kind() == kind)
    }

    /// What to do about it; `agent` is the CLI's name in baton (`codex`).
    pub fn hint(self, agent: &str) -> String {
        match self {
            Failure::AuthRequired => format!(
                "{agent} has no valid credentials: log in or set its API key \
                 (`baton doctor --text` shows what is missing), or use another agent"
            ),
            Failure::RateLimited => format!(
                "{agent}'s provider is rate-limiting: wait (retry_after_s when given) and run again, \
                 use --retry N, or --fallback another agent"
            ),
            Failure::QuotaExhausted => format!(
                "{agent}'s account has used up its quota or credit: add credit or wait for the \
                 limit to reset, or use another agent (--fallback)"
            ),
            Failure::ModelNotFound => format!(
                "{agent} does not know that model or this account cannot use it: pick another \
                 (`baton agents --text` lists them) or drop --model"
            ),
            Failure::ContextTooLong => "the prompt is over the model's context window: \
                 shorten the task or what it brings in, or pick a model with a larger window"
                .to_string(),
            Failure::ProviderUnavailable => format!(
                "{agent}'s provider is down or overloaded: run again later, use --retry N, or \
                 --fallback another agent"
            ),
            Failure::Network => format!(
                "{agent} could not reach its provider: check the network, proxy and DNS \
                 (`baton doctor --probe`)"
            ),
            Failure::SandboxDenied => format!(
                "{agent}'s own sandbox refused what the task needed (see denials): give more \
                 access (--access workspace or full) if that is what you want"
            ),
            Failure::HostSandbox => Failure::host_sandbox_hint(SandboxHost::Unknown),
            Failure::BudgetExceeded => "the spending limit would be crossed: raise \
                 --max-usd / --budget-tokens, or narrow the task"
                .to_string(),
            Failure::AgentError => "read the message; the full output is in log_path".to_string(),
        }
    }

    /// What a host agent (or its user) does so that baton, run through the
    /// host's shell tool, can reach the network its peers need: run it
    /// outside the host's sandbox, or open the sandbox's network. The
    /// setting names are the hosts' own (Codex 0.171, Claude Code 2.1.332).
    pub fn host_sandbox_hint(host: SandboxHost) -> String {
        match host {
            SandboxHost::Codex => "run baton outside Codex's sandbox: ask to run this command \
                 unsandboxed (`sandbox_permissions: \"require_escalated\"` with a justification; \
                 the user approves), or have the user enable network access for workspace-write: \
                 `[sandbox_workspace_write]` `network_access = true` in ~/.codex/config.toml, or \
                 start codex with `-c sandbox_workspace_write.network_access=true`; do not retry \
                 inside the sandbox"
                .to_string(),
            SandboxHost::ClaudeCode => "run baton outside Claude Code's sandbox: re-run this \
                 Bash command with `dangerouslyDisableSandbox: true` (the user approves it), or \
                 have the user add `\"excludedCommands\": [\"baton:*\"]` under `sandbox` in \
                 ~/.claude/settings.json or .claude/settings.json and run baton as a plain command \
                 (no `cd`, `$(…)` or redirect in the same call); do not retry inside the sandbox"
                .to_string(),
            SandboxHost::Unknown => "run baton outside the sandbox it is in, or allow that \
                 sandbox network access for baton's commands; the peer needs its model's server"
                .to_string(),
        }
    }

    /// Kinds after which the same task may go to the next agent of a
    /// `--fallback` chain: the peer could not start working at all.
    pub fn falls_back(self) -> bool {
        matches!(
            self,
            Failure::RateLimited
                | Failure::QuotaExhausted
                | Failure::ProviderUnavailable
                | Failure::AuthRequired
                | Failure::ModelNotFound
        )
    }

    /// Kinds that `--retry N` retries on the same agent (they pass).
    pub fn retries(self) -> bool {
        matches!(self, Failure::RateLimited | Failure::ProviderUnavailable)
    }
}

/// The host agent whose sandbox baton found itself in (`host_sandbox`),
/// named by the markers it puts in its commands' environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxHost {
    /// Codex's shell tool under `workspace-write` or `read-only` without
    /// network access.
    Codex,
    /// Claude Code's Bash tool with its sandbox on.
    ClaudeCode,
    /// A sandbox without a marker baton knows; its network is blocked all
    /// the same.
    Unknown,
}

impl SandboxHost {
    /// How messages name it: "Codex's sandbox".
    pub fn sandbox_name(self) -> &'static str {
        match self {
            SandboxHost::Codex => "Codex's sandbox",
            SandboxHost::ClaudeCode => "Claude Code's sandbox",
            SandboxHost::Unknown => "a sandbox",
        }
    }
}

/// A failure a CLI's output named, with what the provider said about when
/// to try again (`retry-after`), if it said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Named {
    pub failure: Failure,
    pub retry_after_s: Option<u64>,
}

impl Named {
    pub fn new(failure: Failure) -> Named {
        Named {
            failure,
            retry_after_s: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_unique_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for f in Failure::ALL {
            assert!(seen.insert(f.kind()), "duplicate kind {}", f.kind());
            assert_eq!(Failure::from_kind(f.kind()), Some(f));
            assert_eq!(
                serde_json::to_value(f).unwrap(),
                serde_json::Value::String(f.kind().into())
            );
            assert!(!f.hint("codex").is_empty());
        }
        assert_eq!(Failure::from_kind("nonsense"), None);
    }

    #[test]
    fn each_host_is_told_its_own_way_out() {
        let codex = Failure::host_sandbox_hint(SandboxHost::Codex);
        for want in [
            "require_escalated",
            "[sandbox_workspace_write]",
            "network_access = true",
            "-c sandbox_workspace_write.network_access=true",
        ] {
            assert!(codex.contains(want), "{want}: {codex}");
        }
        let claude = Failure::host_sandbox_hint(SandboxHost::ClaudeCode);
        for want in [
            "dangerouslyDisableSandbox: true",
            "excludedCommands",
            "baton:*",
        ] {
            assert!(claude.contains(want), "{want}: {claude}");
        }
        assert!(!codex.contains("dangerouslyDisableSandbox") && !claude.contains("network_access"));
        assert_eq!(
            Failure::HostSandbox.hint("codex"),
            Failure::host_sandbox_hint(SandboxHost::Unknown)
        );
        // The tool error baton raises before a peer starts is this kind.
        let e = crate::error::Error::HostSandbox {
            message: String::new(),
            hint: String::new(),
        };
        assert_eq!(e.kind(), Failure::HostSandbox.kind());
    }

    #[test]
    fn only_failures_before_any_work_fall_back() {
        assert!(Failure::RateLimited.falls_back());
        assert!(Failure::AuthRequired.falls_back());
        assert!(!Failure::ContextTooLong.falls_back());
        assert!(!Failure::SandboxDenied.falls_back());
        assert!(!Failure::AgentError.falls_back());
        assert!(Failure::RateLimited.retries());
        assert!(!Failure::QuotaExhausted.retries());
    }
}
