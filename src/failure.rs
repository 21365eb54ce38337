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

    /// When it happens, as `baton schema` lists it beside the kind.
    pub fn when(self) -> &'static str {
        match self {
            Failure::AuthRequired => {
                "the peer's CLI has no valid credentials: none, a wrong key, an expired login"
            }
            Failure::RateLimited => {
                "the provider is rate-limiting (HTTP 429 or its words for it); retry_after_s \
                 when it or the CLI said how long to wait"
            }
            Failure::QuotaExhausted => {
                "the account's quota, credit or spending limit is used up (billing)"
            }
            Failure::ModelNotFound => "the model is unknown or not available to this account",
            Failure::ContextTooLong => "the prompt is over the model's context window",
            Failure::ProviderUnavailable => "the provider is down or overloaded (5xx, 529)",
            Failure::Network => {
                "the provider could not be reached: connection refused or reset, DNS, TLS"
            }
            Failure::SandboxDenied => {
                "the peer's CLI refused an action by its own access rules and could not go on"
            }
            Failure::HostSandbox => {
                "baton runs inside a host agent's sandbox that blocks the peer's network"
            }
            Failure::BudgetExceeded => {
                "a spending limit (--max-usd, --budget-tokens) would be crossed"
            }
            Failure::AgentError => {
                "the peer's CLI reported an error no other kind names (its message says what)"
            }
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

    /// Kinds a CLI's own retries can get past: the provider's load, its
    /// outage, the network. The others (a wrong key, a spent quota, an
    /// unknown model, a prompt too long) fail the same way on every try.
    pub fn passes(self) -> bool {
        matches!(
            self,
            Failure::RateLimited | Failure::ProviderUnavailable | Failure::Network
        )
    }

    /// The supervisor's default rule while a CLI retries on its own after
    /// a failure it has shown: stop it at once when the failure is one no
    /// retry can mend; let it retry when it may pass (`--timeout` still
    /// bounds it).
    pub fn stops_early(self) -> bool {
        !self.passes() && self != Failure::AgentError
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

/// The one table from what a provider answered to a kind, shared by every
/// adapter (each adapter finds the status and the error text in its CLI's
/// own output, then asks here).
///
/// `status` is the HTTP status when the CLI shows it; `text` is the
/// provider's error as the CLI passes it on (message, or the whole JSON
/// body). Only an adapter knows which part of its CLI's output is that
/// error: never pass model output here, its words prove nothing.
///
/// Provider codes decide first, because the same status means different
/// things (OpenAI answers 429 for a rate limit and for a spent quota;
/// Gemini answers 429 `RESOURCE_EXHAUSTED` with the same words for both,
/// and only the quota id says per minute or per day). Then the status
/// alone, where it has one meaning. `None`: not sure.
pub fn from_provider(status: Option<u16>, text: &str) -> Option<Failure> {
    // Codes and phrases are matched without case: CLIs re-case the
    // provider's words ("Prompt is too long", "Credit balance is too low").
    let lower = text.to_ascii_lowercase();
    let has = |words: &[&str]| {
        words
            .iter()
            .any(|w| lower.contains(&w.to_ascii_lowercase()))
    };
    // Gemini's RESOURCE_EXHAUSTED: a day's (or month's) quota is spent, or
    // a minute's rate is. Its message is the same for both.
    if has(&["RESOURCE_EXHAUSTED"])
        || status == Some(429) && has(&["quotaId", "Quota exceeded for metric"])
    {
        if has(&["PerDay", "PerMonth", "per day", "Daily"]) {
            return Some(Failure::QuotaExhausted);
        }
        if has(&["PerMinute", "per minute"]) {
            return Some(Failure::RateLimited);
        }
    }
    // OpenAI's `insufficient_quota` message, when a CLI kept only the
    // message (with or without the status): it points to OpenAI's error
    // docs. (Gemini's rate limit starts with the same words but points to
    // its rate-limit page.)
    if has(&["exceeded your current quota"])
        && has(&["platform.openai.com/docs/guides/error-codes"])
    {
        return Some(Failure::QuotaExhausted);
    }
    for (words, kind) in PROVIDER_CODES {
        if has(words) {
            return Some(*kind);
        }
    }
    match status? {
        401 => Some(Failure::AuthRequired),
        402 => Some(Failure::QuotaExhausted),
        // 429 without a code that says billing is a rate limit at every
        // provider measured (Gemini's quota case is decided above).
        429 if !has(&["RESOURCE_EXHAUSTED", "exceeded your current quota"]) => {
            Some(Failure::RateLimited)
        }
        // A 404 is only about the model when the text says so (a wrong base
        // URL is a 404 too).
        404 if lower.contains("model") => Some(Failure::ModelNotFound),
        500 | 502 | 503 | 504 | 529 => Some(Failure::ProviderUnavailable),
        _ => None,
    }
}

/// Provider error codes and the few fixed messages that name one kind
/// beyond doubt (OpenAI `error.code`/`type`, Anthropic `error.type`, Gemini
/// `error.status`/`reason`), most specific first.
const PROVIDER_CODES: &[(&[&str], Failure)] = &[
    (
        &[
            "insufficient_quota",
            "billing_error",
            "credit balance is too low",
            "credit_balance_exhausted",
            "spend_limit_exceeded",
            "usage_limit_exceeded",
            "enforced_spend_limit_reached",
        ],
        Failure::QuotaExhausted,
    ),
    (
        &[
            "context_length_exceeded",
            "prompt is too long",
            "exceeds the maximum number of tokens",
            "maximum context length is",
        ],
        Failure::ContextTooLong,
    ),
    (
        &[
            "invalid_api_key",
            "authentication_error",
            "API_KEY_INVALID",
            "API key not valid",
            "UNAUTHENTICATED",
            "PERMISSION_DENIED",
            "Incorrect API key provided",
            "invalid x-api-key",
        ],
        Failure::AuthRequired,
    ),
    (
        &[
            "rate_limit_exceeded",
            "rate_limit_error",
            // OpenAI's message for a 429 rate limit ("… for gpt-4o in
            // organization … on requests per min"), for agents that drop
            // the status (kilo, cline over ACP).
            "Rate limit reached for",
        ],
        Failure::RateLimited,
    ),
    (
        &[
            "model_not_found",
            // OpenAI's and Gemini's words for it, for CLIs that drop the code.
            "does not exist or you do not have access to it",
            "is not found for API version",
        ],
        Failure::ModelNotFound,
    ),
    (
        &[
            "overloaded_error",
            "server_is_overloaded",
            "service_unavailable_error",
            // OpenAI's messages for its 503 and 500, for agents that drop
            // the status (kilo, cline over ACP).
            "The server is overloaded or not ready yet",
            "The server had an error while processing your request",
        ],
        Failure::ProviderUnavailable,
    ),
];

/// Whether a CLI's error is about reaching the provider at all (connection
/// refused or reset, DNS, TLS), in the words of the HTTP clients the CLIs
/// use (node's `fetch`/undici and the OpenAI/Anthropic SDKs, Rust's
/// reqwest in codex).
pub fn is_network(text: &str) -> bool {
    const WORDS: &[&str] = &[
        "ECONNREFUSED",
        "ECONNRESET",
        "ENOTFOUND",
        "EAI_AGAIN",
        "ETIMEDOUT",
        "EHOSTUNREACH",
        "ENETUNREACH",
        "Connection refused",
        "connection refused",
        "Connection reset",
        "connection reset",
        "socket hang up",
        "error sending request",
        "fetch failed",
        "getaddrinfo",
        "certificate",
        // The OpenAI SDK's `APIConnectionError` (pi, qwen).
        "Connection error.",
        // Bun's fetch (opencode): refused, and reset.
        "Unable to connect. Is the computer able to access the url?",
        "The socket connection was closed unexpectedly",
    ];
    WORDS.iter().any(|w| text.contains(w))
}

/// The HTTP status a CLI put at the start of its error text: `429 Rate
/// limit…` (pi, qwen inside `[API Error: …]`).
pub fn leading_status(text: &str) -> Option<u16> {
    let t = text.trim_start();
    let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
    let rest = &t[digits.len()..];
    (digits.len() == 3 && (rest.is_empty() || rest.starts_with(' ')))
        .then(|| digits.parse().ok())
        .flatten()
        .filter(|s| (400..600).contains(s))
}

/// How long the provider said to wait, in whole seconds rounded up, from
/// the forms the CLIs pass on: a `retry-after` header, Gemini's
/// `"retryDelay": "7s"` and "Please retry in 7.5s", OpenAI's "Please try
/// again in 20s" / "in 1m30s" / "in 450ms".
pub fn retry_after_in(text: &str) -> Option<u64> {
    const LEADS: &[&str] = &[
        "retry-after:",
        "Retry-After:",
        "\"retryDelay\":\"",
        "\"retryDelay\": \"",
        "\\\"retryDelay\\\":\\\"",
        "\\\"retryDelay\\\": \\\"",
        "retry in ",
        "try again in ",
    ];
    LEADS.iter().find_map(|lead| {
        let i = text.find(lead)?;
        parse_wait(text[i + lead.len()..].trim_start())
    })
}

/// "7", "7s", "7.5s", "450ms", "1m30s", "2h3m4s" at the start of `s`, in
/// whole seconds rounded up; a bare number is seconds (the header's form).
fn parse_wait(s: &str) -> Option<u64> {
    let mut total_ms = 0f64;
    let mut rest = s;
    let mut any = false;
    loop {
        if !rest.starts_with(|c: char| c.is_ascii_digit()) {
            break;
        }
        let n: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        // "7s." ends a sentence: the dot is not a decimal point.
        let n = n.trim_end_matches('.').to_string();
        let v: f64 = n.parse().ok()?;
        rest = &rest[n.len()..];
        let unit: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        let ms = match unit.as_str() {
            "ms" => 1.0,
            "" | "s" | "sec" | "secs" | "seconds" => 1000.0,
            "m" | "min" | "mins" | "minutes" => 60_000.0,
            "h" | "hr" | "hours" => 3_600_000.0,
            _ => return None,
        };
        total_ms += v * ms;
        any = true;
        rest = &rest[unit.len()..];
        if unit.is_empty() || unit == "seconds" {
            break;
        }
    }
    any.then(|| (total_ms / 1000.0).ceil() as u64)
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

    #[test]
    fn provider_codes_decide_before_the_status() {
        use Failure::*;
        let openai_quota = r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}"#;
        assert_eq!(from_provider(Some(429), openai_quota), Some(QuotaExhausted));
        let openai_rate = r#"{"error":{"message":"Rate limit reached for m","type":"requests","code":"rate_limit_exceeded"}}"#;
        assert_eq!(from_provider(Some(429), openai_rate), Some(RateLimited));
        assert_eq!(
            from_provider(Some(429), "Too Many Requests"),
            Some(RateLimited)
        );
        assert_eq!(from_provider(Some(401), "whatever"), Some(AuthRequired));
        assert_eq!(from_provider(None, "invalid x-api-key"), Some(AuthRequired));
        assert_eq!(
            from_provider(
                Some(400),
                "Your credit balance is too low to access the Anthropic API."
            ),
            Some(QuotaExhausted)
        );
        assert_eq!(
            from_provider(
                Some(400),
                "prompt is too long: 208310 tokens > 200000 maximum"
            ),
            Some(ContextTooLong)
        );
        assert_eq!(from_provider(Some(400), "mock: scripted bad request"), None);
        assert_eq!(
            from_provider(Some(404), "model: claude-x"),
            Some(ModelNotFound)
        );
        assert_eq!(from_provider(Some(404), "no such route"), None);
        assert_eq!(
            from_provider(Some(529), "Overloaded"),
            Some(ProviderUnavailable)
        );
        assert_eq!(from_provider(Some(403), "Forbidden"), None);
        assert_eq!(from_provider(None, "something odd"), None);
    }

    #[test]
    fn gemini_quota_and_rate_differ_only_by_quota_id() {
        let words = "You exceeded your current quota, please check your plan and billing details.";
        let day = format!(
            r#"{{"error":{{"code":429,"message":"{words}","status":"RESOURCE_EXHAUSTED","details":[{{"quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}}]}}}}"#
        );
        let minute = day.replace("PerDay", "PerMinute").replace("-FreeTier", "");
        assert_eq!(
            from_provider(Some(429), &day),
            Some(Failure::QuotaExhausted)
        );
        assert_eq!(
            from_provider(Some(429), &minute),
            Some(Failure::RateLimited)
        );
        // Without the quota id the two cannot be told apart.
        let bare = format!(
            r#"{{"error":{{"code":429,"message":"{words}","status":"RESOURCE_EXHAUSTED"}}}}"#
        );
        assert_eq!(from_provider(Some(429), &bare), None);
    }

    #[test]
    fn leading_status_is_a_whole_http_error_code() {
        assert_eq!(leading_status("429 Rate limit reached"), Some(429));
        assert_eq!(leading_status(" 500 The server had an error"), Some(500));
        assert_eq!(leading_status("4290 tokens"), None);
        assert_eq!(leading_status("200 OK"), None);
        assert_eq!(leading_status("Connection error."), None);
    }

    #[test]
    fn only_unmendable_failures_stop_a_retrying_cli() {
        assert!(Failure::AuthRequired.stops_early());
        assert!(Failure::ModelNotFound.stops_early());
        assert!(Failure::ContextTooLong.stops_early());
        assert!(!Failure::AgentError.stops_early());
        assert!(Failure::QuotaExhausted.stops_early());
        assert!(!Failure::RateLimited.stops_early());
        assert!(!Failure::Network.stops_early());
    }

    #[test]
    fn openai_quota_message_without_its_code() {
        let m = "429 You exceeded your current quota, please check your plan and billing details. \
                 For more information on this error, read the docs: \
                 https://platform.openai.com/docs/guides/error-codes/api-errors.";
        assert_eq!(from_provider(Some(429), m), Some(Failure::QuotaExhausted));
        let gemini = "You exceeded your current quota, please check your plan and billing details. \
                      For more information on this error, head to: \
                      https://ai.google.dev/gemini-api/docs/rate-limits.";
        assert_eq!(from_provider(Some(429), gemini), None);
        // Kilo and cline over ACP pass the message on without the status.
        assert_eq!(from_provider(None, m), Some(Failure::QuotaExhausted));
        assert_eq!(from_provider(None, gemini), None);
    }

    #[test]
    fn openai_messages_without_their_status() {
        // What kilo and cline pass on over ACP (tests/fixtures/failures/acp).
        let rate = "Rate limit reached for gpt-4o in organization org-mock on requests per min \
                    (RPM): Limit 500, Used 500, Requested 1. Please try again in 7s.";
        assert_eq!(from_provider(None, rate), Some(Failure::RateLimited));
        assert_eq!(retry_after_in(rate), Some(7));
        for m in [
            "The server is overloaded or not ready yet.",
            "The server had an error while processing your request. Sorry about that!",
        ] {
            assert_eq!(
                from_provider(None, m),
                Some(Failure::ProviderUnavailable),
                "{m}"
            );
        }
        // A sentence that only sounds like one stays unnamed.
        assert_eq!(from_provider(None, "the server is slow today"), None);
    }

    #[test]
    fn network_words() {
        assert!(is_network("connect ECONNREFUSED 127.0.0.1:9"));
        assert!(is_network("Connection failed: error sending request"));
        assert!(is_network("TypeError: fetch failed"));
        assert!(!is_network("401 Unauthorized"));
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(retry_after_in("Please try again in 20s. Visit"), Some(20));
        assert_eq!(retry_after_in("Please try again in 1m30s."), Some(90));
        assert_eq!(retry_after_in("Please try again in 450ms."), Some(1));
        assert_eq!(retry_after_in("Please retry in 7.5s."), Some(8));
        assert_eq!(retry_after_in(r#""retryDelay": "37025s""#), Some(37025));
        assert_eq!(retry_after_in(r#""retryDelay":"7s""#), Some(7));
        assert_eq!(retry_after_in("retry-after: 30"), Some(30));
        assert_eq!(retry_after_in("no wait here"), None);
        assert_eq!(retry_after_in("try again in a moment"), None);
    }
}
