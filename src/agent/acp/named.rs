//! How an ACP agent's failure is named: the words it passed on from its
//! provider, through the shared table (`crate::failure`), and the agent's
//! own sentences where it replaced the provider's status with one
//! (measured: docs/failures.md, tests/fixtures/failures/acp).

use serde_json::Value;

use crate::failure::{self, Failure, Named};

/// What one of an agent's own error sentences stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Said {
    /// The HTTP status the agent mapped to it; the provider's words after
    /// it (if the agent kept them) still decide first.
    Status(u16),
    /// A kind beyond doubt (the agent's words for a network error).
    Kind(Failure),
}

/// Nanocoder's sentences, one per HTTP status it maps (its
/// `error-parser.js`, 1.30.0; recorded: tests/fixtures/failures/acp/nanocoder).
/// A 429 that mentions a quota keeps the provider's words after "Rate limit: ".
pub(super) const NANOCODER_SAID: &[(&str, Said)] = &[
    (
        "Authentication failed: Invalid API key or credentials",
        Said::Status(401),
    ),
    (
        "Model not found: The requested model may not exist",
        Said::Status(404),
    ),
    ("Rate limit exceeded: Too many requests", Said::Status(429)),
    ("Rate limit: ", Said::Status(429)),
    ("Server error: ", Said::Status(500)),
    (
        "Connection failed: Unable to reach the model server",
        Said::Kind(Failure::Network),
    ),
    ("Context too large: ", Said::Kind(Failure::ContextTooLong)),
];

/// Copilot's words for a provider it cannot reach (recorded:
/// tests/fixtures/failures/acp/copilot/refused.acp); its other errors carry
/// the status (`(HTTP 401)`, `Last error: 429 …`).
pub(super) const COPILOT_SAID: &[(&str, Said)] = &[(
    "Could not connect to local model provider",
    Said::Kind(Failure::Network),
)];

/// The kind of a `session/prompt` JSON-RPC error, from the provider's
/// words the agent passed on (Qwen Code's and Nanocoder's `data.details`
/// first, under their generic "Internal error"), by the table every adapter
/// shares. gemini-cli puts the HTTP status in the error's `code`
/// (docs/agents-acp.md).
pub(super) fn prompt_failure(said: &[(&str, Said)], e: &Value) -> Option<Named> {
    let status = e
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| (400..600).contains(c));
    let texts = [e.pointer("/data/details"), e.get("message")];
    texts
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find_map(|t| classify_with(said, status, t))
}

/// Copilot's text after the notices it sends for each retry of its own
/// ("Info: Request failed due to a transient API error. Retrying..."),
/// where its error comes last (recorded: tests/fixtures/failures/acp/copilot).
pub(super) fn after_notices(m: &str) -> &str {
    const RETRYING: &str = "Retrying...";
    let mut m = m;
    while let Some(rest) = m.strip_prefix("Info: ") {
        match rest.find(RETRYING) {
            Some(i) => m = rest[i + RETRYING.len()..].trim_start(),
            None => break,
        }
    }
    m
}

/// The shared provider table applied to an agent's error text: the
/// agent's own sentences for a status (`said`), a status at its start
/// (`429 …`, or inside qwen's `[API Error: 429 …]`), after copilot's `Last
/// error: ` or in its `(HTTP 401)`, the provider's codes, network words.
/// Unsure: `None` (`agent_error`).
pub(super) fn classify_with(
    said: &[(&str, Said)],
    status: Option<u16>,
    text: &str,
) -> Option<Named> {
    let t = text.trim();
    let t = t
        .strip_prefix("[API Error:")
        .map(|r| r.split_once(']').map_or(r, |(a, _)| a).trim())
        .unwrap_or(t);
    let mut status = status;
    for (words, what) in said {
        if t.starts_with(words) {
            match *what {
                Said::Status(s) => status = status.or(Some(s)),
                Said::Kind(failure) => {
                    return Some(Named {
                        failure,
                        retry_after_s: failure::retry_after_in(t),
                    });
                }
            }
            break;
        }
    }
    let status = status
        .or_else(|| failure::leading_status(t))
        .or_else(|| {
            t.find("Last error: ")
                .and_then(|i| failure::leading_status(&t[i + "Last error: ".len()..]))
        })
        .or_else(|| http_in_parens(t));
    let failure = failure::from_provider(status, t)
        .or_else(|| failure::is_network(t).then_some(Failure::Network))?;
    Some(Named {
        failure,
        retry_after_s: failure::retry_after_in(t),
    })
}

/// The status in copilot's `… (HTTP 401).`
fn http_in_parens(t: &str) -> Option<u16> {
    let i = t.find("(HTTP ")?;
    let rest = &t[i + "(HTTP ".len()..];
    let digits = rest.get(..3)?;
    (rest[3..].starts_with(')') && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
        .filter(|s| (400..600).contains(s))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn kind(n: Option<Named>) -> Option<(&'static str, Option<u64>)> {
        n.map(|n| (n.failure.kind(), n.retry_after_s))
    }

    #[test]
    fn a_prompt_error_is_classified_by_the_shared_table() {
        // Qwen Code's shape: a generic message, the API's words in details.
        let e = json!({"code": -32603, "message": "Internal error",
            "data": {"details": "[API Error: 429 Rate limit reached. Please try again in 7s.]"}});
        assert_eq!(
            kind(prompt_failure(&[], &e)),
            Some(("rate_limited", Some(7)))
        );
        let e = json!({"code": -32603, "message": "401 Incorrect API key provided: e2e-key"});
        assert_eq!(kind(prompt_failure(&[], &e)), Some(("auth_required", None)));
        // gemini-cli: the HTTP status as the error's code, the API's body.
        let e =
            json!({"code": 429, "message": "{\"error\":{\"code\":429,\"message\":\"slow down\"}}"});
        assert_eq!(kind(prompt_failure(&[], &e)), Some(("rate_limited", None)));
        let e =
            json!({"code": -32603, "message": "fetch failed: connect ECONNREFUSED 127.0.0.1:9"});
        assert_eq!(kind(prompt_failure(&[], &e)), Some(("network", None)));
    }

    #[test]
    fn copilots_error_after_its_retry_notices_carries_the_status() {
        let notice = "Info: Request failed due to a transient API error. Retrying...";
        let m = format!(
            "{notice}{notice}Error: Authentication failed with provider at \
             http://127.0.0.1:1/v1 (HTTP 401).\n  Check your COPILOT_PROVIDER_API_KEY."
        );
        let e = after_notices(&m);
        assert!(e.starts_with("Error: Authentication failed"), "{e}");
        let said = crate::agent::acp::builtin(crate::agent::Agent::Copilot)
            .unwrap()
            .said;
        let k = |t: &str| kind(classify_with(said, None, t));
        assert_eq!(k(&e["Error: ".len()..]), Some(("auth_required", None)));
        assert_eq!(
            k("Model 'm' not found on provider at http://x/v1 (HTTP 404)."),
            Some(("model_not_found", None))
        );
        assert_eq!(
            k(
                "Failed to get response from the AI model; retried 5 times (total retry wait \
               time: 39.31 seconds) Last error: 429 Rate limit reached for mock-model in \
               organization org-mock. Please try again in 7s."
            ),
            Some(("rate_limited", Some(7)))
        );
        assert_eq!(
            k(
                "Failed to get response from the AI model; retried 5 times Last error: 503 The \
               server is overloaded or not ready yet."
            ),
            Some(("provider_unavailable", None))
        );
        assert_eq!(
            k("Could not connect to local model provider at http://127.0.0.1:9/v1."),
            Some(("network", None))
        );
        // An answer that is not an error keeps its notices' text as is.
        assert_eq!(after_notices("Info: done."), "Info: done.");
        assert_eq!(
            after_notices(&format!("{notice}The answer.")),
            "The answer."
        );
    }

    #[test]
    fn nanocoders_own_sentences_stand_for_the_status_it_mapped() {
        let said = crate::agent::acp::builtin(crate::agent::Agent::Nanocoder)
            .unwrap()
            .said;
        let k = |details: &str| {
            kind(prompt_failure(
                said,
                &json!({"code": -32603, "message": "Internal error",
                    "data": {"details": details}}),
            ))
        };
        assert_eq!(
            k("Authentication failed: Invalid API key or credentials"),
            Some(("auth_required", None))
        );
        assert_eq!(
            k("Rate limit exceeded: Too many requests. Please wait and try again"),
            Some(("rate_limited", None))
        );
        assert_eq!(
            k(
                "Rate limit: You exceeded your current quota, please check your plan and billing \
               details. For more information on this error, read the docs: \
               https://platform.openai.com/docs/guides/error-codes/api-errors."
            ),
            Some(("quota_exhausted", None))
        );
        assert_eq!(
            k("Model not found: The requested model may not exist or is unavailable"),
            Some(("model_not_found", None))
        );
        assert_eq!(
            k("Server error: The server is overloaded or not ready yet."),
            Some(("provider_unavailable", None))
        );
        assert_eq!(
            k("Connection failed: Unable to reach the model server"),
            Some(("network", None))
        );
        // Another agent's identical words are not nanocoder's mapping.
        assert_eq!(
            kind(prompt_failure(
                &[],
                &json!({"message": "Authentication failed: Invalid API key or credentials"})
            )),
            None
        );
    }

    #[test]
    fn an_error_without_a_status_or_code_stays_unnamed() {
        // No guessing: words that are not the provider's stay agent_error.
        for e in [
            json!({"code": -32603, "message": "Internal error"}),
            json!({"code": -32602, "message": "Invalid params"}),
            json!({"message": "400 mock: scripted bad request"}),
        ] {
            assert_eq!(kind(prompt_failure(&[], &e)), None, "{e}");
        }
        // copilot's recorded text error for a 400 (tests/fixtures/acp/copilot/error.acp).
        assert_eq!(
            kind(classify_with(&[], None, "400 mock: scripted bad request")),
            None
        );
        assert_eq!(kind(classify_with(&[], None, "end_of_budget")), None);
    }
}
