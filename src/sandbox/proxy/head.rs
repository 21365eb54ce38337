//! A client's request head, as the proxy reads it (pure: bytes in, a
//! decision out). Two forms are served: `CONNECT host:port` (a tunnel, what
//! clients do for https) and the absolute form `GET http://host:port/path`
//! (what they send a proxy for plain http), which goes upstream in origin
//! form with `Connection: close`, so one connection carries one request to
//! the host that was checked.

use super::allow::Target;

/// The longest head read; a client that sends more gets 431.
pub const MAX_HEAD: usize = 16 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    Connect(Target),
    /// Plain http: `head` is what goes upstream.
    Forward {
        target: Target,
        head: Vec<u8>,
    },
}

impl Request {
    pub fn target(&self) -> &Target {
        match self {
            Request::Connect(t) | Request::Forward { target: t, .. } => t,
        }
    }
}

/// Why a head is not served (400, or 431 for `TooLarge`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bad {
    TooLarge,
    Line(String),
}

/// Where the head ends in `buf` (just past the blank line), if it does.
pub fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// Parse a complete head (up to and including the blank line).
pub fn parse(head: &[u8]) -> Result<Request, Bad> {
    if head.len() > MAX_HEAD {
        return Err(Bad::TooLarge);
    }
    let text = std::str::from_utf8(head).map_err(|_| Bad::Line("not text".into()))?;
    let (line, rest) = text
        .split_once("\r\n")
        .ok_or_else(|| Bad::Line("no request line".into()))?;
    let mut words = line.split(' ');
    let (Some(method), Some(uri), Some(version), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return Err(Bad::Line(format!("`{line}` is not METHOD TARGET VERSION")));
    };
    if !matches!(version, "HTTP/1.1" | "HTTP/1.0") {
        return Err(Bad::Line(format!("unsupported version `{version}`")));
    }
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(Bad::Line(format!("bad method `{method}`")));
    }
    let bad = |m: String| Bad::Line(m);
    if method == "CONNECT" {
        return Target::parse(uri, None).map(Request::Connect).map_err(bad);
    }
    let after = uri
        .get(..7)
        .filter(|s| s.eq_ignore_ascii_case("http://"))
        .map(|_| &uri[7..])
        .ok_or_else(|| bad(format!("`{uri}`: only CONNECT and absolute http:// URIs")))?;
    let (authority, path) = match after.find(['/', '?']) {
        Some(i) => (&after[..i], &after[i..]),
        None => (after, "/"),
    };
    if authority.contains('@') {
        return Err(bad(format!("`{uri}`: user information in the URI")));
    }
    let target = Target::parse(authority, Some(80)).map_err(bad)?;
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    let mut out = format!("{method} {path} {version}\r\n");
    let mut host = false;
    for h in rest.split("\r\n").filter(|h| !h.is_empty()) {
        let name = h
            .split(':')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match name.as_str() {
            "connection" | "proxy-connection" | "keep-alive" | "proxy-authorization" => continue,
            "host" => host = true,
            _ => {}
        }
        out.push_str(h);
        out.push_str("\r\n");
    }
    if !host {
        out.push_str(&format!("Host: {authority}\r\n"));
    }
    out.push_str("Connection: close\r\n\r\n");
    Ok(Request::Forward {
        target,
        head: out.into_bytes(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Request, Bad> {
        parse(s.as_bytes())
    }

    #[test]
    fn connect_names_host_and_port() {
        let r = p("CONNECT API.Example.com.:443 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!(
            r,
            Request::Connect(Target::parse("api.example.com:443", None).unwrap())
        );
        let v6 = p("CONNECT [::1]:8443 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!(v6.target().to_string(), "[::1]:8443");
        // CONNECT must name a port.
        assert!(p("CONNECT example.com HTTP/1.1\r\n\r\n").is_err());
    }

    #[test]
    fn an_absolute_uri_goes_upstream_in_origin_form_closed() {
        let r = p("GET http://127.0.0.1:4000/v1/chat?x=1 HTTP/1.1\r\nHost: 127.0.0.1:4000\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive\r\nProxy-Authorization: Basic eA==\r\nAccept: */*\r\n\r\n").unwrap();
        let Request::Forward { target, head } = r else {
            panic!("not forwarded")
        };
        assert_eq!(target.to_string(), "127.0.0.1:4000");
        assert_eq!(
            String::from_utf8(head).unwrap(),
            "GET /v1/chat?x=1 HTTP/1.1\r\nHost: 127.0.0.1:4000\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        let Request::Forward { target, head } =
            p("POST HTTP://Example.com?q HTTP/1.0\r\n\r\n").unwrap()
        else {
            panic!()
        };
        assert_eq!(target.to_string(), "example.com:80");
        assert_eq!(
            String::from_utf8(head).unwrap(),
            "POST /?q HTTP/1.0\r\nHost: Example.com\r\nConnection: close\r\n\r\n"
        );
    }

    #[test]
    fn bad_request_lines_are_refused() {
        for bad in [
            "\r\n\r\n",
            "GET\r\n\r\n",
            "GET /path HTTP/1.1\r\n\r\n",
            "GET https://example.com/ HTTP/1.1\r\n\r\n",
            "GET http://user@example.com/ HTTP/1.1\r\n\r\n",
            "GET http://exa mple.com/ HTTP/1.1\r\n\r\n",
            "GET  http://example.com/ HTTP/1.1\r\n\r\n",
            "get http://example.com/ HTTP/1.1\r\n\r\n",
            "GET http://example.com/ HTTP/2\r\n\r\n",
            "GET http://example.com:99999/ HTTP/1.1\r\n\r\n",
            "CONNECT a.com:443/x HTTP/1.1\r\n\r\n",
        ] {
            assert!(matches!(p(bad), Err(Bad::Line(_))), "{bad:?}");
        }
        assert!(parse(b"GET http://\xff/ HTTP/1.1\r\n\r\n").is_err());
    }

    #[test]
    fn an_oversized_head_is_too_large() {
        let big = format!(
            "GET http://a.com/ HTTP/1.1\r\nX: {}\r\n\r\n",
            "y".repeat(MAX_HEAD)
        );
        assert_eq!(p(&big), Err(Bad::TooLarge));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n\r\nbody"), Some(18));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n"), None);
    }
}
