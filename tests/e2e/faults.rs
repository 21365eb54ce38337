//! Provider faults, answered the way each real API answers them: HTTP
//! status, body shape and headers (`retry-after`, rate-limit headers,
//! request ids) for the OpenAI Responses and Chat Completions APIs, the
//! Anthropic Messages API and the Gemini API; and two network faults (a
//! connection reset after the request, a refused connection).
//!
//! The shapes follow each provider's public error documentation:
//! - OpenAI: `{"error": {"message", "type", "param", "code"}}`; 401
//!   `invalid_api_key`, 429 `rate_limit_exceeded` (with `retry-after` and
//!   `x-ratelimit-*`) or 429 `insufficient_quota` (same status, billing),
//!   404 `model_not_found`, 400 `context_length_exceeded`, 500, 503.
//! - Anthropic: `{"type": "error", "error": {"type", "message"},
//!   "request_id"}`; 401 `authentication_error`, 429 `rate_limit_error`
//!   (`retry-after`, `anthropic-ratelimit-*`), 400 "credit balance is too
//!   low", 404 `not_found_error` naming the model, 400 "prompt is too long",
//!   500 `api_error`, 529 `overloaded_error`.
//! - Gemini: `{"error": {"code", "message", "status", "details"}}`; 401
//!   `UNAUTHENTICATED`, 400 `API_KEY_INVALID` (what a wrong API key really
//!   gets), 403 `PERMISSION_DENIED`, 429 `RESOURCE_EXHAUSTED` for both a
//!   rate limit and a spent quota — the same message; only the
//!   `QuotaFailure` quota id (per minute vs per day) and the `RetryInfo`
//!   delay tell them apart —, 404 `NOT_FOUND`, 400 `INVALID_ARGUMENT` for
//!   the input token count, 500 `INTERNAL`, 503 `UNAVAILABLE`.

use std::io::Write;
use std::net::TcpStream;

use serde_json::{Value, json};

use crate::mock::Api;

/// What `retry-after` says when a scenario does not choose (distinct from
/// the CLIs' own backoff steps of 1, 2, 4, 8 s, so a recording shows which
/// one a CLI waited).
pub const RETRY_AFTER_S: u64 = 7;

/// A fault a scenario step can ask for: `{"fault": "<name>"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Wrong key: 401 (Gemini: 401 UNAUTHENTICATED).
    Auth,
    /// Gemini only: 400 INVALID_ARGUMENT, reason API_KEY_INVALID.
    KeyInvalid,
    /// Gemini only: 403 PERMISSION_DENIED.
    PermissionDenied,
    /// 429 with `retry-after`.
    RateLimit,
    /// Billing: OpenAI 429 insufficient_quota, Anthropic 400 credit
    /// balance, Gemini 429 RESOURCE_EXHAUSTED on a per-day quota.
    Quota,
    ModelNotFound,
    ContextTooLong,
    /// 500.
    ServerError,
    /// OpenAI 503, Anthropic 529, Gemini 503.
    Overloaded,
    /// The request is read, then the connection is reset (RST).
    Reset,
}

impl Fault {
    pub const ALL: [Fault; 10] = [
        Fault::Auth,
        Fault::KeyInvalid,
        Fault::PermissionDenied,
        Fault::RateLimit,
        Fault::Quota,
        Fault::ModelNotFound,
        Fault::ContextTooLong,
        Fault::ServerError,
        Fault::Overloaded,
        Fault::Reset,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Fault::Auth => "auth",
            Fault::KeyInvalid => "key_invalid",
            Fault::PermissionDenied => "permission_denied",
            Fault::RateLimit => "rate_limit",
            Fault::Quota => "quota",
            Fault::ModelNotFound => "model_not_found",
            Fault::ContextTooLong => "context_too_long",
            Fault::ServerError => "server_error",
            Fault::Overloaded => "overloaded",
            Fault::Reset => "reset",
        }
    }

    pub fn parse(s: &str) -> Option<Fault> {
        Fault::ALL.into_iter().find(|f| f.name() == s)
    }

    /// Whether every request of the account fails, helper calls (titles,
    /// routers, memory) included; a wrong model or a long prompt fails only
    /// the turn that carries it.
    pub fn account_wide(self) -> bool {
        !matches!(self, Fault::ModelNotFound | Fault::ContextTooLong)
    }

    /// Whether the API has this fault (the Gemini-only auth variants).
    pub fn speaks(self, api: Api) -> bool {
        match self {
            Fault::KeyInvalid | Fault::PermissionDenied => api == Api::Gemini,
            _ => true,
        }
    }
}

/// An HTTP error answer.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

/// The error `api` answers for `fault` (`None`: a network fault, no answer).
pub fn reply(api: Api, fault: Fault, model: &str, retry_after: u64) -> Option<Reply> {
    let r = match api {
        Api::Anthropic => anthropic(fault, model, retry_after)?,
        Api::Gemini => gemini(fault, model, retry_after)?,
        Api::Responses | Api::Chat | Api::Other => openai(api, fault, model, retry_after)?,
    };
    Some(r)
}

fn h(k: &str, v: impl ToString) -> (String, String) {
    (k.to_string(), v.to_string())
}

fn openai(api: Api, fault: Fault, model: &str, retry_after: u64) -> Option<Reply> {
    let err = |status: u16, message: &str, kind: &str, param: Value, code: Value| Reply {
        status,
        headers: vec![h("x-request-id", "req_mockfault0001")],
        body: json!({"error": {"message": message, "type": kind, "param": param, "code": code}}),
    };
    Some(match fault {
        Fault::Auth | Fault::KeyInvalid | Fault::PermissionDenied => err(
            401,
            "Incorrect API key provided: e2e-***-key. You can find your API key at \
             https://platform.openai.com/account/api-keys.",
            "invalid_request_error",
            Value::Null,
            json!("invalid_api_key"),
        ),
        Fault::RateLimit => {
            let mut r = err(
                429,
                &format!(
                    "Rate limit reached for {model} in organization org-mock on requests per min \
                     (RPM): Limit 500, Used 500, Requested 1. Please try again in {retry_after}s. \
                     Visit https://platform.openai.com/account/rate-limits to learn more."
                ),
                "requests",
                Value::Null,
                json!("rate_limit_exceeded"),
            );
            r.headers.extend([
                h("retry-after", retry_after),
                h("x-ratelimit-limit-requests", 500),
                h("x-ratelimit-remaining-requests", 0),
                h("x-ratelimit-reset-requests", format!("{retry_after}s")),
                h("x-ratelimit-limit-tokens", 30000),
                h("x-ratelimit-remaining-tokens", 29000),
                h("x-ratelimit-reset-tokens", "2s"),
            ]);
            r
        }
        Fault::Quota => err(
            429,
            "You exceeded your current quota, please check your plan and billing details. For \
             more information on this error, read the docs: \
             https://platform.openai.com/docs/guides/error-codes/api-errors.",
            "insufficient_quota",
            Value::Null,
            json!("insufficient_quota"),
        ),
        Fault::ModelNotFound => err(
            404,
            &format!("The model `{model}` does not exist or you do not have access to it."),
            "invalid_request_error",
            Value::Null,
            json!("model_not_found"),
        ),
        // The Responses API words it after its own field (`input`).
        Fault::ContextTooLong if api == Api::Responses => err(
            400,
            "Your input exceeds the context window of this model. Please adjust your input and \
             try again.",
            "invalid_request_error",
            json!("input"),
            json!("context_length_exceeded"),
        ),
        Fault::ContextTooLong => err(
            400,
            "This model's maximum context length is 128000 tokens. However, your messages \
             resulted in 245630 tokens. Please reduce the length of the messages.",
            "invalid_request_error",
            json!("messages"),
            json!("context_length_exceeded"),
        ),
        Fault::ServerError => err(
            500,
            "The server had an error while processing your request. Sorry about that!",
            "server_error",
            Value::Null,
            Value::Null,
        ),
        Fault::Overloaded => err(
            503,
            "The server is overloaded or not ready yet.",
            "service_unavailable_error",
            Value::Null,
            json!("server_is_overloaded"),
        ),
        Fault::Reset => return None,
    })
}

fn anthropic(fault: Fault, model: &str, retry_after: u64) -> Option<Reply> {
    let err = |status: u16, kind: &str, message: &str| Reply {
        status,
        headers: vec![h("request-id", "req_mockfault0001")],
        body: json!({"type": "error", "error": {"type": kind, "message": message},
            "request_id": "req_mockfault0001"}),
    };
    Some(match fault {
        Fault::Auth | Fault::KeyInvalid | Fault::PermissionDenied => {
            err(401, "authentication_error", "invalid x-api-key")
        }
        Fault::RateLimit => {
            let mut r = err(
                429,
                "rate_limit_error",
                "This request would exceed the rate limit for your organization (mock-org) of \
                 50 requests per minute. For details, refer to: \
                 https://docs.claude.com/en/api/rate-limits. You can see the response headers \
                 for current usage. Please reduce the prompt length or the maximum tokens \
                 requested, or try again later.",
            );
            r.headers.extend([
                h("retry-after", retry_after),
                h("anthropic-ratelimit-requests-limit", 50),
                h("anthropic-ratelimit-requests-remaining", 0),
                h("anthropic-ratelimit-requests-reset", "2026-01-01T00:00:07Z"),
            ]);
            r
        }
        Fault::Quota => err(
            400,
            "invalid_request_error",
            "Your credit balance is too low to access the Anthropic API. Please go to Plans & \
             Billing to upgrade or purchase credits.",
        ),
        Fault::ModelNotFound => err(404, "not_found_error", &format!("model: {model}")),
        Fault::ContextTooLong => err(
            400,
            "invalid_request_error",
            "prompt is too long: 208310 tokens > 200000 maximum",
        ),
        Fault::ServerError => err(500, "api_error", "Internal server error"),
        Fault::Overloaded => err(529, "overloaded_error", "Overloaded"),
        Fault::Reset => return None,
    })
}

fn gemini(fault: Fault, model: &str, retry_after: u64) -> Option<Reply> {
    let err = |status: u16, grpc: &str, message: &str, details: Value| Reply {
        status,
        headers: Vec::new(),
        body: {
            let mut e = json!({"code": status, "message": message, "status": grpc});
            if !details.is_null() {
                e["details"] = details;
            }
            json!({"error": e})
        },
    };
    // The message of both 429s: the same words for a minute's rate and a
    // day's quota.
    let exhausted = |metric: &str, limit: u64, delay: &str| {
        format!(
            "You exceeded your current quota, please check your plan and billing details. For \
             more information on this error, head to: \
             https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, \
             head to: https://ai.dev/usage?tab=rate-limit. \n* Quota exceeded for metric: \
             generativelanguage.googleapis.com/{metric}, limit: {limit}, model: {model}\nPlease \
             retry in {delay}."
        )
    };
    let quota_details = |quota_id: &str, metric: &str, limit: u64, delay: &str| {
        json!([
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
                "quotaMetric": format!("generativelanguage.googleapis.com/{metric}"),
                "quotaId": quota_id,
                "quotaDimensions": {"location": "global", "model": model},
                "quotaValue": limit.to_string()}]},
            {"@type": "type.googleapis.com/google.rpc.Help", "links": [{
                "description": "Learn more about Gemini API quotas",
                "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}
        ])
    };
    Some(match fault {
        Fault::Auth => err(
            401,
            "UNAUTHENTICATED",
            "Request had invalid authentication credentials. Expected OAuth 2 access token, \
             login cookie or other valid authentication credential. See \
             https://developers.google.com/identity/sign-in/web/devconsole-project.",
            json!([{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "ACCESS_TOKEN_TYPE_UNSUPPORTED",
                "metadata": {"service": "generativelanguage.googleapis.com"}}]),
        ),
        Fault::KeyInvalid => err(
            400,
            "INVALID_ARGUMENT",
            "API key not valid. Please pass a valid API key.",
            json!([{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
                "metadata": {"service": "generativelanguage.googleapis.com"}},
                {"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US",
                "message": "API key not valid. Please pass a valid API key."}]),
        ),
        Fault::PermissionDenied => err(
            403,
            "PERMISSION_DENIED",
            "Method doesn't allow unregistered callers (callers without established identity). \
             Please use API Key or other form of API consumer identity to call this API.",
            Value::Null,
        ),
        Fault::RateLimit => {
            let delay = format!("{retry_after}s");
            err(
                429,
                "RESOURCE_EXHAUSTED",
                &exhausted("generate_content_requests", 10, &delay),
                quota_details(
                    "GenerateRequestsPerMinutePerProjectPerModel",
                    "generate_content_requests",
                    10,
                    &delay,
                ),
            )
        }
        Fault::Quota => err(
            429,
            "RESOURCE_EXHAUSTED",
            &exhausted("generate_content_free_tier_requests", 250, "37025s"),
            quota_details(
                "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                "generate_content_free_tier_requests",
                250,
                "37025s",
            ),
        ),
        Fault::ModelNotFound => err(
            404,
            "NOT_FOUND",
            &format!(
                "models/{model} is not found for API version v1beta, or is not supported for \
                 generateContent. Call ListModels to see the list of available models and their \
                 supported methods."
            ),
            Value::Null,
        ),
        Fault::ContextTooLong => err(
            400,
            "INVALID_ARGUMENT",
            "The input token count (1234567) exceeds the maximum number of tokens allowed \
             (1048576).",
            Value::Null,
        ),
        Fault::ServerError => err(
            500,
            "INTERNAL",
            "An internal error has occurred. Please retry or report in \
             https://developers.generativeai.google/guide/troubleshooting",
            Value::Null,
        ),
        Fault::Overloaded => err(
            503,
            "UNAVAILABLE",
            "The model is overloaded. Please try again later.",
            Value::Null,
        ),
        Fault::Reset => return None,
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Error",
    }
}

/// Answer `fault` on `s` (the request has been read).
pub fn answer(
    mut s: &TcpStream,
    api: Api,
    fault: Fault,
    model: &str,
    retry_after: u64,
) -> std::io::Result<()> {
    let Some(r) = reply(api, fault, model, retry_after) else {
        reset(s);
        return Ok(());
    };
    let body = r.body.to_string();
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        r.status,
        reason(r.status),
        body.len()
    );
    for (k, v) in &r.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes())?;
    s.write_all(body.as_bytes())?;
    s.flush()
}

/// Close with a reset, not a FIN: a zero linger time makes the kernel
/// send RST and drop what is unsent (what a crashed proxy or a dropped
/// route looks like to the client: `ECONNRESET`).
fn reset(s: &TcpStream) {
    use std::os::fd::AsRawFd;
    let l = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid socket descriptor we own and a properly sized linger.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&l as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
    // The caller drops the stream next: that close is the reset.
}

/// A 127.0.0.1 port nothing listens on (a refused connection). The port
/// stays bound, never listening, for the whole test process: a port that
/// was bound and closed again could be handed to another test's server
/// (CI once saw a cell get "407 Proxy Authentication Required" from one).
pub fn closed_port() -> u16 {
    static PORT: std::sync::OnceLock<u16> = std::sync::OnceLock::new();
    *PORT.get_or_init(|| {
        // SAFETY: plain socket calls on a descriptor this function owns; it
        // is kept open (never listening) until the process exits.
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
            let mut addr: libc::sockaddr_in = std::mem::zeroed();
            addr.sin_family = libc::AF_INET as libc::sa_family_t;
            addr.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
            addr.sin_port = 0;
            let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            let r = libc::bind(fd, (&raw const addr).cast(), len);
            assert_eq!(r, 0, "bind: {}", std::io::Error::last_os_error());
            let mut got: libc::sockaddr_in = std::mem::zeroed();
            let mut glen = len;
            let r = libc::getsockname(fd, (&raw mut got).cast(), &mut glen);
            assert_eq!(r, 0, "getsockname: {}", std::io::Error::last_os_error());
            u16::from_be(got.sin_port)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closed_port_refuses_and_stays_taken() {
        let port = closed_port();
        let e = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused, "{e}");
        // Nobody else gets it while the tests run.
        assert!(std::net::TcpListener::bind(("127.0.0.1", port)).is_err());
        assert_eq!(closed_port(), port);
    }

    #[test]
    fn every_api_answers_every_fault_it_speaks() {
        for api in [Api::Responses, Api::Chat, Api::Anthropic, Api::Gemini] {
            for f in Fault::ALL {
                if !f.speaks(api) {
                    continue;
                }
                let r = reply(api, f, "m", 7);
                assert_eq!(r.is_none(), f == Fault::Reset, "{api:?} {f:?}");
                if let Some(r) = r {
                    assert!(r.status >= 400, "{api:?} {f:?}");
                    assert!(r.body.get("error").is_some(), "{api:?} {f:?}");
                }
            }
        }
        let rl = reply(Api::Anthropic, Fault::RateLimit, "m", 7).unwrap();
        assert!(rl.headers.contains(&("retry-after".into(), "7".into())));
        let g = reply(Api::Gemini, Fault::Quota, "m", 7).unwrap();
        assert_eq!(g.body["error"]["status"], "RESOURCE_EXHAUSTED");
    }
}
