//! The public JSON result: one object, one line, on stdout.
//!
//! This is a versioned contract read by programs (host agents). Fields are
//! added, never renamed; `schema_version` changes when a field changes
//! meaning. `baton schema` prints the JSON Schema derived from these types
//! (with the objects features add, `crate::schema`), and `tests/json.rs`
//! checks real results of every kind against it, unknown fields forbidden.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, exit};

mod warning;

pub use warning::Warning;

pub const SCHEMA_VERSION: u32 = 1;

/// How the delegation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The peer exited 0 *and* its CLI reported success.
    Success,
    /// The peer ran and failed, or its output could not be understood.
    Failed,
    /// `--timeout` or `--idle-timeout` expired; the peer was stopped.
    Timeout,
    /// Stopped on request (Ctrl-C, SIGTERM, `baton cancel`).
    Cancelled,
    /// A background job that has not ended yet.
    Running,
    /// A background job whose runner died without recording an end.
    Lost,
    /// baton itself could not do what was asked (see `error`).
    Error,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Success => "success",
            Status::Failed => "failed",
            Status::Timeout => "timeout",
            Status::Cancelled => "cancelled",
            Status::Running => "running",
            Status::Lost => "lost",
            Status::Error => "error",
        }
    }

    /// The process exit code a command reporting this status uses.
    pub fn exit_code(self) -> i32 {
        match self {
            Status::Success | Status::Running => exit::SUCCESS,
            Status::Failed | Status::Lost | Status::Error => exit::FAILED,
            Status::Timeout => exit::TIMEOUT,
            Status::Cancelled => exit::INTERRUPTED,
        }
    }

    pub fn is_terminal(self) -> bool {
        !matches!(self, Status::Running)
    }
}

/// Token usage of *this* run (not cumulative over a resumed session).
///
/// `input_tokens` counts every input token, including those served from a
/// cache; `cached_input_tokens` is the part of it read from a cache. Each CLI
/// reports these differently; the adapters normalise to this meaning.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cached_input_tokens: Option<u64>,
    /// Reasoning/thinking tokens, where the CLI reports them (part of output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_output_tokens: Option<u64>,
    /// Cost in US dollars: as the CLI reported it (claude, pi, opencode), else
    /// estimated from baton's price table (`cost_estimated`), else null (no
    /// price known for the model: it counts in tokens only).
    pub cost_usd: Option<f64>,
    /// `cost_usd` (or part of it, for a sum) was estimated from baton's
    /// dated price table (`baton agents` shows it), not reported by the CLI.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cost_estimated: bool,
}

impl Usage {
    pub fn is_empty(&self) -> bool {
        self.input_tokens.is_none() && self.output_tokens.is_none() && self.cost_usd.is_none()
    }

    /// Input plus output tokens (saturating), if any were reported.
    pub fn total_tokens(&self) -> Option<u64> {
        match (self.input_tokens, self.output_tokens) {
            (None, None) => None,
            (i, o) => Some(i.unwrap_or(0).saturating_add(o.unwrap_or(0))),
        }
    }

    /// Add `other` field by field; `None + x = x`. Counts saturate, dollars
    /// stay finite (`add_usd`), a cost that is no price is kept to be found.
    pub fn add(&mut self, other: &Usage) {
        fn sum(a: Option<u64>, b: Option<u64>) -> Option<u64> {
            match (a, b) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
            }
        }
        self.input_tokens = sum(self.input_tokens, other.input_tokens);
        self.output_tokens = sum(self.output_tokens, other.output_tokens);
        self.cached_input_tokens = sum(self.cached_input_tokens, other.cached_input_tokens);
        self.reasoning_output_tokens =
            sum(self.reasoning_output_tokens, other.reasoning_output_tokens);
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (None, None) => None,
            (Some(bad), _) | (_, Some(bad)) if usable_cost(bad).is_none() => Some(bad),
            (a, b) => Some(add_usd(a.unwrap_or(0.0), b.unwrap_or(0.0))),
        };
        self.cost_estimated |= other.cost_estimated;
    }

    /// `self - earlier`, for CLIs whose counters are cumulative per session.
    pub fn minus(&self, earlier: &Usage) -> Usage {
        fn sub(a: Option<u64>, b: Option<u64>) -> Option<u64> {
            a.map(|a| a.saturating_sub(b.unwrap_or(0)))
        }
        Usage {
            input_tokens: sub(self.input_tokens, earlier.input_tokens),
            output_tokens: sub(self.output_tokens, earlier.output_tokens),
            cached_input_tokens: sub(self.cached_input_tokens, earlier.cached_input_tokens),
            reasoning_output_tokens: sub(
                self.reasoning_output_tokens,
                earlier.reasoning_output_tokens,
            ),
            cost_usd: self.cost_usd,
            cost_estimated: self.cost_estimated,
        }
    }
}

/// `c` if it can be a price in dollars: finite and not negative.
pub fn usable_cost(c: f64) -> Option<f64> {
    (c.is_finite() && c >= 0.0).then_some(c)
}

/// Dollars added without leaving the finite numbers: `f64::MAX` for a sum
/// too large (over any budget; an infinity would print as JSON `null`).
pub fn add_usd(a: f64, b: f64) -> f64 {
    let s = a + b;
    if s.is_finite() { s } else { f64::MAX }
}

/// What a run (or an ask, or a council) was allowed to spend and what it
/// spent, when `--max-usd` or `--budget-tokens` was given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Spending {
    pub max_usd: Option<f64>,
    pub max_tokens: Option<u64>,
    /// Dollars spent by the calls with a known cost (null: none had one).
    pub spent_usd: Option<f64>,
    /// Input + output tokens of every call.
    pub spent_tokens: u64,
    /// Part of `spent_usd` was estimated from baton's price table.
    pub cost_estimated: bool,
    /// Calls with no known cost (no price for their model): `--max-usd`
    /// could count them in tokens only.
    pub unpriced_calls: u32,
    /// Peer calls counted (attempts, advisers, members).
    pub calls: u32,
    /// The limit stopped the work (`error.kind: "budget_exceeded"`).
    pub exceeded: bool,
}

/// The `error.kind` of a peer that ran and did not succeed, with when it
/// happens. With the named failures (`failure::Failure`: `auth_required`,
/// `rate_limited`, …, `agent_error`) and `error::KINDS` (baton could not do
/// its job) this is every value `error.kind` can have; `baton schema`
/// lists them.
pub const OUTCOME_KINDS: &[(&str, &str)] = &[
    (
        "nonzero_exit",
        "the peer exited with a code other than 0 without reporting success",
    ),
    (
        "unparsable_output",
        "the peer printed nothing baton understands",
    ),
    ("timeout", "--timeout expired; the peer was stopped"),
    (
        "idle_timeout",
        "the peer printed nothing for --idle-timeout; it was stopped",
    ),
    (
        "cancelled",
        "stopped on request: Ctrl-C, SIGTERM, `baton cancel`",
    ),
    (
        "lost",
        "a background job's runner ended without recording a result",
    ),
    (
        "result_not_stored",
        "a background job's result could not be stored (a full disk)",
    ),
    (
        "budget_exceeded",
        "--max-usd or --budget-tokens: the next call would cross the limit (not started), \
         or a running call crossed it (stopped with its whole process group)",
    ),
    (
        "acp_handshake_timeout",
        "an agent driven over ACP did not answer `initialize` in time; it was stopped",
    ),
    (
        "invalid_advice",
        "`ask`: the adviser's answer was not valid advice after one repair round",
    ),
    (
        "no_eligible_candidate",
        "`run --agents`: no candidate's change passed its tests untampered (each \
         candidate's `excluded_reason` says why)",
    ),
    (
        "no_answer",
        "`run --agents --read-only`: none of the candidates answered",
    ),
];

/// Why a run was not successful, or why baton could not run it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorInfo {
    /// Stable name, for programs: what happened to a peer that ran, or why
    /// baton could not do its job. Kinds may be added.
    // The values: `OUTCOME_KINDS` and `error::KINDS`.
    #[schemars(schema_with = "kind_schema")]
    pub kind: String,
    pub message: String,
    pub hint: Option<String>,
    /// `rate_limited`: seconds to wait before trying again, when the
    /// provider or the CLI said so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_s: Option<u64>,
}

/// Every kind, each with when it happens (one `const` per value, as for
/// `Status`).
fn kind_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let mut kinds: Vec<(&str, &str)> = Vec::new();
    let failures = crate::failure::Failure::ALL.map(|f| (f.kind(), f.when()));
    for &(k, when) in failures
        .iter()
        .chain(OUTCOME_KINDS)
        .chain(crate::error::KINDS)
    {
        if !kinds.iter().any(|(seen, _)| *seen == k) {
            kinds.push((k, when));
        }
    }
    let one_of: Vec<Value> = kinds
        .iter()
        .map(|(k, when)| serde_json::json!({"const": k, "type": "string", "description": when}))
        .collect();
    schemars::json_schema!({ "oneOf": one_of })
}

/// A tool call the peer CLI refused on its own (permission system, sandbox,
/// tool allowlist). This is how a read-only run shows what it prevented.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Denial {
    pub tool: String,
    pub detail: String,
}

/// A check run after the peer finished (worktree `--test-cmd`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Verification {
    pub command: String,
    pub exit_code: Option<i32>,
    pub passed: bool,
    pub output_tail: String,
    /// The commit tested, in a fresh checkout of it: what passed is what
    /// the branch held.
    #[serde(default)]
    pub commit: Option<String>,
    /// Who confined the command (a `SandboxReport`; network `none` under
    /// baton's sandbox). `crate::schema` describes it: this layer cannot
    /// name the type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub sandbox: Option<serde_json::Value>,
}

/// The result of one delegation (`run`, `wait`, `result`, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunResult {
    pub schema_version: u32,
    pub status: Status,
    /// One line for people.
    pub summary: String,
    /// The peer's final message.
    pub message: Option<String>,
    pub agent: String,
    /// The model that served the run as the CLI reported it, else the one
    /// baton asked for, else null (CLI default). `baton doctor` says which
    /// CLIs report it.
    pub model: Option<String>,
    /// The model baton asked for (after aliases), null for the CLI's default.
    /// When it differs from `model`, `warnings` has a `model_fallback:` line.
    #[serde(default)]
    pub model_requested: Option<String>,
    pub effort: Option<String>,
    pub access: String,
    pub cwd: String,
    /// The peer's own session id: pass it to `--resume` to continue the
    /// dialogue (a background job's: `baton continue ID`).
    pub session: Option<String>,
    /// Files whose content changed during the run (git repositories only).
    pub changed_files: Vec<String>,
    pub usage: Usage,
    pub duration_ms: u64,
    /// The peer process's exit code (null if it was stopped by a signal or never started).
    pub exit_code: Option<i32>,
    /// The peer's raw output stream (stderr sits beside it in `stderr.log`).
    pub log_path: Option<String>,
    pub warnings: Vec<Warning>,
    /// Tool calls the peer's CLI refused (permission denials, missing tools, sandbox).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub denials: Vec<Denial>,
    pub error: Option<ErrorInfo>,
    /// Result of a post-run check (worktree `--test-cmd`), else null.
    pub verification: Option<Verification>,
    /// Set for background jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    /// Every peer call of the run, in order, when there was more than one
    /// (`--retry`, `--fallback`): `agent` above is the one that served, and
    /// `usage` above is the sum over these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<Attempt>,
    /// The spending limit and what was spent, when `--max-usd` or
    /// `--budget-tokens` was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spending: Option<Spending>,
    /// Objects added by other features (`worktree`, `handoff`, ask's
    /// `advice`, …): this layer cannot name their types, so `crate::schema`
    /// adds each to the published schema beside these fields. A key put
    /// here that the schema does not describe fails `tests/json.rs`.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// One peer call of a run that took several (`--retry`, `--fallback`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Attempt {
    pub agent: String,
    pub model: Option<String>,
    pub status: Status,
    /// Its `error.kind` (null: it succeeded).
    pub kind: Option<String>,
    /// What the provider said about when to try again, if it said.
    #[serde(default)]
    pub retry_after_s: Option<u64>,
    pub duration_ms: u64,
    pub usage: Usage,
    /// Files it changed (a failure after a change is not handed on).
    #[serde(default)]
    pub changed_files: Vec<String>,
    pub log_path: Option<String>,
    /// What came after it: `retry` (the same agent again after
    /// `waited_ms`) or `fallback` (the next agent of the chain); null for
    /// the last attempt, whose result is the run's.
    #[serde(default)]
    pub then: Option<String>,
    /// `retry`: how long baton waited before the next attempt.
    #[serde(default)]
    pub waited_ms: Option<u64>,
}

/// What baton prints when it could not do its job at all (usage errors,
/// missing CLI, …): the same envelope with `status: "error"`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ErrorReport {
    pub schema_version: u32,
    pub status: Status,
    pub summary: String,
    pub error: ErrorInfo,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
}

impl ErrorReport {
    pub fn from_error(err: &Error) -> Self {
        ErrorReport {
            schema_version: SCHEMA_VERSION,
            status: Status::Error,
            summary: format!("baton: {err}"),
            error: ErrorInfo {
                retry_after_s: None,
                kind: err.kind().to_string(),
                message: err.to_string(),
                hint: err.hint(),
            },
            exit_code: None,
        }
    }
}

impl RunResult {
    /// The status's exit code, but `CHECK_FAILED` for a peer that succeeded
    /// whose work failed baton's check (`--test-cmd`): nothing to merge.
    pub fn exit_code(&self) -> i32 {
        match &self.verification {
            Some(v) if self.status == Status::Success && !v.passed => {
                crate::error::exit::CHECK_FAILED
            }
            _ => self.status.exit_code(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_minus_handles_cumulative_counters() {
        let total = Usage {
            input_tokens: Some(360),
            output_tokens: Some(36),
            cached_input_tokens: Some(0),
            reasoning_output_tokens: None,
            cost_usd: None,
            cost_estimated: false,
        };
        let before = Usage {
            input_tokens: Some(240),
            output_tokens: Some(24),
            cached_input_tokens: Some(0),
            reasoning_output_tokens: None,
            cost_usd: None,
            cost_estimated: false,
        };
        let d = total.minus(&before);
        assert_eq!(d.input_tokens, Some(120));
        assert_eq!(d.output_tokens, Some(12));
    }

    #[test]
    fn status_exit_codes_follow_the_readme() {
        assert_eq!(Status::Success.exit_code(), 0);
        assert_eq!(Status::Failed.exit_code(), 1);
        assert_eq!(Status::Timeout.exit_code(), 124);
        assert_eq!(Status::Cancelled.exit_code(), 130);
    }

    #[test]
    fn usage_sums_saturate_and_keep_a_bad_cost_to_be_found() {
        let mut a = Usage {
            input_tokens: Some(u64::MAX),
            output_tokens: Some(1),
            cost_usd: Some(1e308),
            ..Usage::default()
        };
        let b = Usage {
            input_tokens: Some(2),
            output_tokens: Some(u64::MAX),
            cost_usd: Some(1e308),
            ..Usage::default()
        };
        a.add(&b);
        // 0.3.2 (release): u64::MAX + 2 = 1, and 2e308 printed `null`.
        assert_eq!(a.input_tokens, Some(u64::MAX));
        assert_eq!(a.total_tokens(), Some(u64::MAX));
        assert_eq!(a.cost_usd, Some(f64::MAX));
        let mut c = Usage {
            cost_usd: Some(0.5),
            ..Usage::default()
        };
        c.add(&Usage {
            cost_usd: Some(-2.0),
            ..Usage::default()
        });
        assert_eq!(
            c.cost_usd,
            Some(-2.0),
            "not 0.5 - 2: found and refused later"
        );
        assert_eq!(usable_cost(-2.0), None);
        assert_eq!(usable_cost(f64::INFINITY), None);
        assert_eq!(usable_cost(0.0), Some(0.0));
    }
}
