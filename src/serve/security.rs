//! The server's gate: the start token, the session token it is exchanged
//! for, the Host/Origin/session/Content-Type checks on every request, and the headers.
//!
//! Why each check exists (docs/serve.md has the whole model):
//! - Host: a page on another site can point its own name at 127.0.0.1 (DNS
//!   rebinding) and then talk to us as "same origin"; it cannot make the
//!   browser send `Host: 127.0.0.1:PORT`, so any other Host is refused.
//! - Origin on POST: a cross-site form or fetch carries its own Origin.
//! - Session in a header, never a cookie: a browser sends a cookie of
//!   `127.0.0.1` to every port of that host, so any other local listener
//!   would receive it. The page keeps the session in its own memory and
//!   `sessionStorage` (both scoped to scheme, host *and* port) and sends it
//!   as `Authorization: Bearer …`, which no browser adds by itself.
//! - Content-Type on POST: a plain HTML form cannot send `application/json`.

use std::io::Read;

use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::{Error, Result};

/// The headers every response carries.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; \
frame-ancestors 'none'";

/// What one start of the server knows: its port, the token printed in the
/// URL, and the session the page presents on every API call.
#[derive(Debug, Clone)]
pub struct Secrets {
    pub port: u16,
    /// 256 bits, hex: printed once, in the URL's fragment.
    pub token: String,
    /// 256 bits, hex: a different value, handed out by `/api/session` in
    /// exchange for the token and presented as `Authorization: Bearer`.
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

    /// The hosts a browser on this machine sends for us. On port 80 a
    /// browser leaves the port out (`Host: 127.0.0.1`), so that form is
    /// ours there, and only there.
    pub fn host_ok(&self, host: &str) -> bool {
        ["127.0.0.1", "localhost"].iter().any(|name| {
            host == format!("{name}:{}", self.port) || (self.port == 80 && host == *name)
        })
    }

    /// The origins of our own page (the port left out on 80, as browsers do).
    pub fn origin_ok(&self, origin: &str) -> bool {
        origin
            .strip_prefix("http://")
            .is_some_and(|host| self.host_ok(host))
    }

    /// Whether `token` is the start token (constant time).
    pub fn token_ok(&self, token: &str) -> bool {
        ct_eq(token.as_bytes(), self.token.as_bytes())
    }

    /// Whether the request presents our session as `Authorization: Bearer`
    /// (constant time). A cookie is not looked at: none is ever set.
    pub fn session_ok(&self, headers: &HeaderMap) -> bool {
        headers
            .get_all(header::AUTHORIZATION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .filter_map(|v| v.trim().split_once(' '))
            .any(|(scheme, v)| {
                scheme.eq_ignore_ascii_case("bearer")
                    && ct_eq(v.trim().as_bytes(), self.session.as_bytes())
            })
    }
}

/// Whether the request's body is declared JSON (`application/json`, any
/// parameters such as `charset` allowed).
fn json_body(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
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

/// Every request: Host, then Origin on a POST, then the session on `/api/`
/// (except the token exchange itself, which proves the token instead), then
/// a JSON Content-Type on a POST.
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
    let change = req.method() != Method::GET && req.method() != Method::HEAD;
    if change {
        let origin = headers.get(header::ORIGIN).and_then(|h| h.to_str().ok());
        if !origin.is_some_and(|o| sec.origin_ok(o)) {
            return Some(refuse(
                StatusCode::FORBIDDEN,
                "baton serve: a change must come from the page itself (Origin)\n",
            ));
        }
    }
    let path = req.uri().path();
    if path.starts_with("/api/") && path != "/api/session" && !sec.session_ok(headers) {
        let mut r = refuse(
            StatusCode::UNAUTHORIZED,
            "baton serve: no session; open the URL `baton serve` printed (with its #token)\n",
        );
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"baton serve\""),
        );
        return Some(r);
    }
    // After the session check: a stranger learns nothing about the routes.
    if change && !json_body(headers) {
        return Some(refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "baton serve: a change takes a JSON body (Content-Type: application/json)\n",
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
        assert!(!s.host_ok("127.0.0.1"), "the bare host means port 80");
        assert!(!s.host_ok("127.0.0.1:4242.evil.example") && !s.host_ok(""));
        assert!(s.origin_ok("http://localhost:4242") && s.origin_ok("http://127.0.0.1:4242"));
        assert!(!s.origin_ok("https://127.0.0.1:4242") && !s.origin_ok("null"));
        assert!(!s.origin_ok("http://127.0.0.1") && !s.origin_ok("http://127.0.0.1:4243"));
    }

    #[test]
    fn on_port_80_the_host_without_its_port_is_ours() {
        // Browsers leave the default port out of Host and Origin.
        let s = Secrets { port: 80, ..sec() };
        assert!(s.host_ok("127.0.0.1") && s.host_ok("localhost"));
        assert!(s.host_ok("127.0.0.1:80") && s.host_ok("localhost:80"));
        assert!(s.origin_ok("http://127.0.0.1") && s.origin_ok("http://localhost"));
        assert!(!s.host_ok("evil.example") && !s.host_ok("127.0.0.1:8080"));
        assert!(!s.origin_ok("http://evil.example") && !s.origin_ok("https://127.0.0.1"));
    }

    #[test]
    fn the_session_is_a_bearer_header_never_a_cookie() {
        let s = sec();
        let session = "s".repeat(64);
        let mut h = HeaderMap::new();
        assert!(!s.session_ok(&h));
        h.insert(
            header::COOKIE,
            format!("baton_session={session}").parse().unwrap(),
        );
        assert!(!s.session_ok(&h), "a cookie is not a session");
        h.insert(
            header::AUTHORIZATION,
            format!("Bearer {session}").parse().unwrap(),
        );
        assert!(s.session_ok(&h));
        h.insert(
            header::AUTHORIZATION,
            format!("bearer {session}").parse().unwrap(),
        );
        assert!(s.session_ok(&h), "the scheme is case-insensitive");
        for wrong in [
            format!("Bearer {}", "t".repeat(64)),
            format!("Basic {session}"),
            format!("Bearer {}", &session[1..]),
            session.clone(),
        ] {
            h.insert(header::AUTHORIZATION, wrong.parse().unwrap());
            assert!(!s.session_ok(&h), "{wrong}");
        }
    }

    #[test]
    fn a_json_body_is_application_json() {
        let mut h = HeaderMap::new();
        assert!(!json_body(&h));
        for (ct, ok) in [
            ("application/json", true),
            ("application/json; charset=utf-8", true),
            ("Application/JSON", true),
            ("application/x-www-form-urlencoded", false),
            ("text/plain", false),
            ("multipart/form-data; boundary=x", false),
            ("application/jsonx", false),
        ] {
            h.insert(header::CONTENT_TYPE, ct.parse().unwrap());
            assert_eq!(json_body(&h), ok, "{ct}");
        }
    }
}
