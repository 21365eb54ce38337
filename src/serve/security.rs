//! The server's gate: the start token, the session cookie it is exchanged
//! for, the Host/Origin/cookie checks on every request, and the headers.
//!
//! Why each check exists (docs/serve.md has the whole model):
//! - Host: a page on another site can point its own name at 127.0.0.1 (DNS
//!   rebinding) and then talk to us as "same origin"; it cannot make the
//!   browser send `Host: 127.0.0.1:PORT`, so any other Host is refused.
//! - Origin on POST: a cross-site form or fetch carries its own Origin.
//! - Cookie: the token lives only in the URL fragment (never sent to a
//!   server, never in a log); the page trades it once for an HttpOnly,
//!   SameSite=Strict cookie that scripts cannot read and other sites cannot send.

use std::io::Read;

use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::{Error, Result};

/// The name of the session cookie.
pub const COOKIE: &str = "baton_session";

/// The headers every response carries.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; \
frame-ancestors 'none'";

/// What one start of the server knows: its port, the token printed in the
/// URL, and the session value the cookie carries.
#[derive(Debug, Clone)]
pub struct Secrets {
    pub port: u16,
    /// 256 bits, hex: printed once, in the URL's fragment.
    pub token: String,
    /// 256 bits, hex: a different value, set as the cookie by `/api/session`.
    pub session: String,
}

impl Secrets {
    pub fn new(port: u16) -> Result<Secrets> {
        Ok(Secrets {
            port,
            token: random_hex()?,
            session: random_hex()?,
        })
    }

    /// The hosts a browser on this machine sends for us.
    fn host_ok(&self, host: &str) -> bool {
        host == format!("127.0.0.1:{}", self.port) || host == format!("localhost:{}", self.port)
    }

    fn origin_ok(&self, origin: &str) -> bool {
        origin == format!("http://127.0.0.1:{}", self.port)
            || origin == format!("http://localhost:{}", self.port)
    }

    /// Whether `token` is the start token (constant time).
    pub fn token_ok(&self, token: &str) -> bool {
        ct_eq(token.as_bytes(), self.token.as_bytes())
    }

    /// Whether the request carries our session cookie (constant time).
    fn cookie_ok(&self, headers: &HeaderMap) -> bool {
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|kv| kv.trim().split_once('='))
            .any(|(k, v)| k == COOKIE && ct_eq(v.as_bytes(), self.session.as_bytes()))
    }

    /// The `Set-Cookie` value for a browser that showed the token.
    pub fn set_cookie(&self) -> String {
        format!(
            "{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/",
            self.session
        )
    }
}

/// 32 bytes from the kernel's CSPRNG, as 64 hex digits.
fn random_hex() -> Result<String> {
    let mut b = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .map_err(|e| Error::io("reading /dev/urandom for the server's token", e))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// Equal without an early exit, so timing says nothing about where a guess
/// went wrong (the lengths are public: always 64).
pub fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn refuse(code: StatusCode, why: &'static str) -> Response {
    (
        code,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        why,
    )
        .into_response()
}

/// Every request: Host, then Origin on a POST, then the cookie on `/api/`
/// (except the token exchange itself, which proves the token instead).
pub async fn gate(
    State(sec): State<std::sync::Arc<Secrets>>,
    req: Request,
    next: Next,
) -> Response {
    let mut res = match check(&sec, &req) {
        Some(refused) => refused,
        None => next.run(req).await,
    };
    // On refusals too: the CSP applies to whatever a browser renders.
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    res
}

/// The refusal for `req`, if it is refused.
fn check(sec: &Secrets, req: &Request) -> Option<Response> {
    let headers = req.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    if !host.is_some_and(|h| sec.host_ok(h)) {
        return Some(refuse(
            StatusCode::MISDIRECTED_REQUEST,
            "baton serve: this server answers only to 127.0.0.1 and localhost\n",
        ));
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let origin = headers.get(header::ORIGIN).and_then(|h| h.to_str().ok());
        if !origin.is_some_and(|o| sec.origin_ok(o)) {
            return Some(refuse(
                StatusCode::FORBIDDEN,
                "baton serve: a change must come from the page itself (Origin)\n",
            ));
        }
    }
    let path = req.uri().path();
    if path.starts_with("/api/") && path != "/api/session" && !sec.cookie_ok(headers) {
        return Some(refuse(
            StatusCode::UNAUTHORIZED,
            "baton serve: no session; open the URL `baton serve` printed (with its #token)\n",
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sec() -> Secrets {
        Secrets {
            port: 4242,
            token: "t".repeat(64),
            session: "s".repeat(64),
        }
    }

    #[test]
    fn tokens_are_256_bits_and_differ() {
        let s = Secrets::new(1).unwrap();
        assert_eq!(s.token.len(), 64);
        assert!(s.token.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(s.token, s.session);
        assert_ne!(s.token, Secrets::new(1).unwrap().token);
    }

    #[test]
    fn constant_time_compare_is_still_a_compare() {
        assert!(ct_eq(b"abc", b"abc"));
        assert!(!ct_eq(b"abc", b"abd"));
        assert!(!ct_eq(b"abc", b"ab"));
        assert!(sec().token_ok(&"t".repeat(64)));
        assert!(!sec().token_ok(&"t".repeat(63)));
    }

    #[test]
    fn only_our_own_host_and_origin() {
        let s = sec();
        assert!(s.host_ok("127.0.0.1:4242") && s.host_ok("localhost:4242"));
        assert!(!s.host_ok("evil.example:4242") && !s.host_ok("127.0.0.1:4243"));
        assert!(!s.host_ok("127.0.0.1"));
        assert!(s.origin_ok("http://localhost:4242"));
        assert!(!s.origin_ok("https://127.0.0.1:4242") && !s.origin_ok("null"));
    }

    #[test]
    fn the_cookie_must_be_ours() {
        let s = sec();
        let mut h = HeaderMap::new();
        assert!(!s.cookie_ok(&h));
        h.insert(
            header::COOKIE,
            format!("a=b; {COOKIE}={}", "s".repeat(64)).parse().unwrap(),
        );
        assert!(s.cookie_ok(&h));
        h.insert(
            header::COOKIE,
            format!("{COOKIE}={}", "t".repeat(64)).parse().unwrap(),
        );
        assert!(!s.cookie_ok(&h), "the token is not the session");
        assert!(s.set_cookie().contains("HttpOnly; SameSite=Strict; Path=/"));
    }
}
