//! `baton serve`: the real binary, spoken to in HTTP/1.1 over a plain
//! TcpStream — the token exchange, the Host/Origin/session/Content-Type gate,
//! the headers, the fleet and transcript streams (and their clocks), and the
//! two actions on fake jobs.

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{Env, fixture, record, wait_for};

const LONG: Duration = Duration::from_secs(20);

/// A running `baton serve`, stopped with SIGTERM when dropped (the council
/// view's tests use it too).
pub(crate) struct Server {
    child: Child,
    port: u16,
    token: String,
    line: Value,
}

impl Server {
    pub(crate) fn start(env: &Env) -> Server {
        Server::start_with(env, &[])
    }

    pub(crate) fn start_with(env: &Env, args: &[&str]) -> Server {
        let mut child = env
            .baton()
            .arg("serve")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start baton serve");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut l = String::new();
        out.read_line(&mut l).expect("the JSON line");
        let line: Value = serde_json::from_str(&l).unwrap_or_else(|e| panic!("{e}: {l:?}"));
        let port = line["port"].as_u64().unwrap() as u16;
        let url = line["url"].as_str().unwrap();
        let token = url
            .strip_prefix(&format!("http://127.0.0.1:{port}/#token="))
            .unwrap_or_else(|| panic!("the token is in the fragment: {url}"))
            .to_string();
        Server {
            child,
            port,
            token,
            line,
        }
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub(crate) fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The session, from a token exchange.
    pub(crate) fn login(&self) -> String {
        let r = self.req(
            "POST",
            "/api/session",
            &[("Origin", &self.origin())],
            Some(&format!(r#"{{"token":"{}"}}"#, self.token)),
        );
        assert_eq!(r.code, 200, "{}", r.body);
        assert!(r.header("set-cookie").is_none(), "no cookie: {}", r.head);
        r.json()["session"].as_str().expect("a session").to_string()
    }

    pub(crate) fn req(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> Resp {
        let mut h: Vec<(&str, &str)> = vec![];
        let host = self.host();
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            h.push(("Host", &host));
        }
        h.extend_from_slice(headers);
        http(self.port, method, path, &h, body)
    }

    pub(crate) fn get(&self, path: &str, session: &str) -> Resp {
        self.req("GET", path, &[("Authorization", &bearer(session))], None)
    }

    pub(crate) fn post(&self, path: &str, session: &str, body: &str) -> Resp {
        let o = self.origin();
        self.req(
            "POST",
            path,
            &[("Authorization", &bearer(session)), ("Origin", &o)],
            Some(body),
        )
    }

    /// An open event stream.
    pub(crate) fn stream(&self, path: &str, session: &str) -> Stream {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {session}\r\nAccept: text/event-stream\r\n\r\n",
            self.host()
        )
        .unwrap();
        s.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        Stream { s, buf: Vec::new() }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // SAFETY: a plain kill(2) of our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

/// The `Authorization` value that presents `session`.
pub(crate) fn bearer(session: &str) -> String {
    format!("Bearer {session}")
}

pub(crate) struct Resp {
    pub(crate) code: u16,
    head: String,
    pub(crate) body: String,
}

impl Resp {
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    }
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// One HTTP/1.1 request (Connection: close), read to the end.
fn http(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: Option<&str>) -> Resp {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(LONG)).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = body {
        // JSON unless the caller says otherwise.
        if !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        {
            req.push_str("Content-Type: application/json\r\n");
        }
        req.push_str(&format!("Content-Length: {}\r\n", b.len()));
    }
    req.push_str("\r\n");
    req.push_str(body.unwrap_or(""));
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let code = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        unchunk(body)
    } else {
        body.to_string()
    };
    Resp {
        code,
        head: head.to_string(),
        body,
    }
}

fn unchunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((len, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(len.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// An SSE response being read.
pub(crate) struct Stream {
    s: TcpStream,
    buf: Vec<u8>,
}

impl Stream {
    /// Read until the text received so far satisfies `cond` (or fail).
    pub(crate) fn until(&mut self, what: &str, cond: impl Fn(&str) -> bool) -> String {
        let end = Instant::now() + LONG;
        let mut b = [0u8; 8192];
        loop {
            let text = String::from_utf8_lossy(&self.buf).to_string();
            if cond(&text) {
                return text;
            }
            assert!(Instant::now() < end, "no {what} in:\n{text}");
            match self.s.read(&mut b) {
                Ok(0) => {
                    let text = String::from_utf8_lossy(&self.buf).to_string();
                    assert!(cond(&text), "stream closed without {what}:\n{text}");
                    return text;
                }
                Ok(n) => self.buf.extend_from_slice(&b[..n]),
                Err(_) => {}
            }
        }
    }
}

/// The fake `name` waits for `$FAKE_DIR/<gate>`, then prints `transcript`.
pub(crate) fn gated(env: &Env, name: &str, gate: &str, transcript: &str) {
    env.fake(
        name,
        &format!(
            "{}\nwhile [ ! -e \"$FAKE_DIR/{gate}\" ]; do sleep 0.02; done\ncat '{}'",
            record(name),
            fixture(transcript).display()
        ),
    );
}

fn start_job(env: &Env, args: &[&str]) -> String {
    let mut a = vec!["run", "--async"];
    a.extend_from_slice(args);
    let r = env.run(&a);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    r.json()["job_id"].as_str().unwrap().to_string()
}

#[test]
fn the_start_line_and_the_token_exchange() {
    let env = Env::new();
    let srv = Server::start(&env);
    assert_eq!(srv.line["pid"].as_u64().unwrap() as u32, srv.child.id());
    assert_eq!(srv.token.len(), 64, "256 bits, hex");
    assert!(srv.token.bytes().all(|b| b.is_ascii_hexdigit()));

    // A wrong token (and none at all) gets no session.
    let o = srv.origin();
    let wrong = format!(r#"{{"token":"{}"}}"#, "0".repeat(64));
    let r = srv.req("POST", "/api/session", &[("Origin", &o)], Some(&wrong));
    assert_eq!(r.code, 401);
    assert!(!r.body.contains("session\""), "{}", r.body);
    let r = srv.req("POST", "/api/session", &[("Origin", &o)], Some("{}"));
    assert_eq!(r.code, 401, "{}", r.body);

    // The right one: a session in the body, not the token, and no cookie at
    // all (a browser would send a cookie of 127.0.0.1 to every port of it).
    let right = format!(r#"{{"token":"{}"}}"#, srv.token);
    let r = srv.req("POST", "/api/session", &[("Origin", &o)], Some(&right));
    assert_eq!(r.code, 200, "{}", r.body);
    assert!(r.header("set-cookie").is_none(), "{}", r.head);
    let session = r.json()["session"].as_str().unwrap().to_string();
    assert_eq!(session.len(), 64);
    assert_ne!(session, srv.token, "the session is not the token");
    let r = srv.get("/api/jobs", &session);
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(r.json()["jobs"], serde_json::json!([]));
    // A new tab trades the same token again.
    let again = srv.req("POST", "/api/session", &[("Origin", &o)], Some(&right));
    assert_eq!(again.code, 200, "{}", again.body);
    assert_eq!(
        srv.get("/api/jobs", again.json()["session"].as_str().unwrap())
            .code,
        200
    );
}

#[test]
fn the_session_is_a_bearer_header_and_nothing_else_opens_the_api() {
    let env = Env::new();
    let srv = Server::start(&env);
    let session = srv.login();
    let good = bearer(&session);
    for path in ["/api/jobs", "/api/events", "/api/jobs/x/events"] {
        let refused: [(&str, String); 6] = [
            ("Accept", "*/*".into()),
            ("Authorization", bearer(&"a".repeat(64))),
            ("Authorization", bearer(&srv.token)),
            ("Authorization", format!("Basic {session}")),
            ("Authorization", session.clone()),
            // What a browser would send to every port of 127.0.0.1: useless here.
            ("Cookie", format!("baton_session={session}")),
        ];
        for (k, v) in &refused {
            let r = srv.req("GET", path, &[(k, v)], None);
            assert_eq!(r.code, 401, "{path} with {k}: {v}");
            assert!(
                r.header("www-authenticate")
                    .is_some_and(|w| w.starts_with("Bearer"))
            );
        }
    }
    let r = srv.req("GET", "/api/jobs", &[("Authorization", &good)], None);
    assert_eq!(r.code, 200, "{}", r.body);
    let mut s = srv.stream("/api/events", &session);
    s.until("the snapshot", |t| t.contains("event: snapshot"));

    // A change needs the session as much as a read does.
    let o = srv.origin();
    let cookie = format!("baton_session={session}");
    for (k, v) in [("Cookie", cookie.as_str()), ("Accept", "*/*")] {
        let r = srv.req(
            "POST",
            "/api/jobs/x/cancel",
            &[("Origin", &o), (k, v)],
            Some("{}"),
        );
        assert_eq!(r.code, 401, "{k}");
    }
}

#[test]
fn foreign_hosts_and_origins_are_refused() {
    let env = Env::new();
    let srv = Server::start(&env);
    let auth = bearer(&srv.login());
    let p = srv.port;

    // DNS rebinding: another name, even pointing here, is refused everywhere.
    for host in [
        format!("evil.example:{p}"),
        format!("127.0.0.1:{}", p + 1),
        "127.0.0.1".into(),
    ] {
        let r = srv.req("GET", "/", &[("Host", &host)], None);
        assert!(matches!(r.code, 421 | 403), "{host}: {}", r.code);
        let r = srv.req(
            "GET",
            "/api/jobs",
            &[("Host", &host), ("Authorization", &auth)],
            None,
        );
        assert!(matches!(r.code, 421 | 403), "{host}: {}", r.code);
    }
    let lh = format!("localhost:{p}");
    assert_eq!(srv.req("GET", "/", &[("Host", &lh)], None).code, 200);

    // A change from another origin, or with none, is refused even with the session.
    for origin in [
        "http://evil.example",
        "null",
        &format!("http://127.0.0.1:{}", p + 1),
    ] {
        let r = srv.req(
            "POST",
            "/api/jobs/x/cancel",
            &[("Authorization", &auth), ("Origin", origin)],
            Some("{}"),
        );
        assert_eq!(r.code, 403, "{origin}");
    }
    let r = srv.req(
        "POST",
        "/api/jobs/x/cancel",
        &[("Authorization", &auth)],
        Some("{}"),
    );
    assert_eq!(r.code, 403, "no Origin");
    let r = srv.req(
        "POST",
        "/api/session",
        &[("Origin", "http://evil.example")],
        Some(&format!(r#"{{"token":"{}"}}"#, srv.token)),
    );
    assert_eq!(r.code, 403, "even the token exchange");
    assert!(!r.body.contains(&srv.login()));
}

#[test]
fn a_change_takes_only_a_json_body() {
    let env = Env::new();
    gated(&env, "codex", "gate", "codex/codex-exec-basic.jsonl");
    let running = start_job(&env, &["--agent", "codex", "work"]);
    env.replay("claude", "claude/claude-stream.jsonl", 0);
    let ended = start_job(&env, &["--agent", "claude", "first"]);
    assert_eq!(env.run(&["wait", &ended]).code, 0);
    let srv = Server::start(&env);
    let auth = bearer(&srv.login());
    let o = srv.origin();
    let cancel = format!("/api/jobs/{running}/cancel");
    let cont = format!("/api/jobs/{ended}/continue");
    let token = format!("token={}", srv.token);
    for (path, ct, body) in [
        (
            cancel.as_str(),
            Some("application/x-www-form-urlencoded"),
            "",
        ),
        (cancel.as_str(), Some("text/plain"), "{}"),
        (
            cancel.as_str(),
            Some("multipart/form-data; boundary=b"),
            "--b--",
        ),
        (cancel.as_str(), None, "{}"),
        (
            cont.as_str(),
            Some("application/x-www-form-urlencoded"),
            "prompt=go",
        ),
        (cont.as_str(), Some("text/plain"), r#"{"prompt":"go"}"#),
        (
            "/api/session",
            Some("application/x-www-form-urlencoded"),
            token.as_str(),
        ),
    ] {
        let mut h = vec![("Authorization", auth.as_str()), ("Origin", o.as_str())];
        if let Some(ct) = ct {
            h.push(("Content-Type", ct));
        }
        let r = if ct.is_some() {
            srv.req("POST", path, &h, Some(body))
        } else {
            // No Content-Type at all (and so no body the helper would label).
            srv.req("POST", path, &[h[0], h[1], ("Content-Length", "0")], None)
        };
        assert_eq!(r.code, 415, "{path} as {ct:?}: {}", r.body);
    }
    // Nothing was done: the job still runs, no follow-up was started.
    assert_eq!(env.run(&["status", &running]).json()["status"], "running");
    let jobs = env.run(&["jobs", "--all"]).json();
    assert_eq!(jobs["jobs"].as_array().map_or(0, Vec::len), 2, "{jobs}");
    // JSON, with or without a charset, is what a change takes.
    let r = srv.req(
        "POST",
        &cancel,
        &[
            ("Authorization", &auth),
            ("Origin", &o),
            ("Content-Type", "application/json; charset=utf-8"),
        ],
        Some("{}"),
    );
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(r.json()["status"], "cancelled");
}

#[test]
fn on_port_80_a_host_without_its_port_is_ours() {
    // Browsers send `Host: 127.0.0.1` (no `:80`) there. Binding port 80
    // needs root: without it the Host rule is the unit test
    // `security::tests::on_port_80_the_host_without_its_port_is_ours`.
    // SAFETY: a plain getter.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: binding port 80 needs root");
        return;
    }
    if std::net::TcpListener::bind(("127.0.0.1", 80)).is_err() {
        eprintln!("skipped: port 80 of 127.0.0.1 is in use");
        return;
    }
    let env = Env::new();
    let srv = Server::start_with(&env, &["--port", "80"]);
    assert_eq!(srv.port, 80);
    for host in ["127.0.0.1", "localhost", "127.0.0.1:80"] {
        let r = srv.req("GET", "/", &[("Host", host)], None);
        assert_eq!(r.code, 200, "{host}: {}", r.body);
    }
    assert_eq!(
        srv.req("GET", "/", &[("Host", "evil.example")], None).code,
        421
    );
    // The page's own Origin on port 80 has no port either.
    let r = srv.req(
        "POST",
        "/api/session",
        &[("Host", "127.0.0.1"), ("Origin", "http://127.0.0.1")],
        Some(&format!(r#"{{"token":"{}"}}"#, srv.token)),
    );
    assert_eq!(r.code, 200, "{}", r.body);
    let session = r.json()["session"].as_str().unwrap().to_string();
    let r = srv.req(
        "GET",
        "/api/jobs",
        &[("Host", "127.0.0.1"), ("Authorization", &bearer(&session))],
        None,
    );
    assert_eq!(r.code, 200, "{}", r.body);
}

#[test]
fn the_page_and_its_headers() {
    let env = Env::new();
    let srv = Server::start(&env);
    for (path, kind) in [
        ("/", "text/html"),
        ("/app.js", "text/javascript"),
        ("/app.css", "text/css"),
    ] {
        let r = srv.req("GET", path, &[], None);
        assert_eq!(r.code, 200, "{path}");
        assert!(
            r.header("content-type").unwrap().starts_with(kind),
            "{path}"
        );
        let csp = r.header("content-security-policy").expect("CSP");
        for d in [
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            "connect-src 'self'",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
        ] {
            assert!(csp.contains(d), "{path}: {csp}");
        }
        assert_eq!(
            r.header("x-content-type-options").as_deref(),
            Some("nosniff")
        );
        assert_eq!(r.header("referrer-policy").as_deref(), Some("no-referrer"));
        assert_eq!(r.header("cache-control").as_deref(), Some("no-store"));
    }
    // Refusals carry them too.
    let r = srv.req("GET", "/api/jobs", &[], None);
    assert!(r.header("content-security-policy").is_some());

    // No inline script or style (the CSP would block them), and agent text is
    // never parsed as HTML.
    let html = srv.req("GET", "/", &[], None).body;
    assert!(
        !html.contains("<script>") && !html.contains("style="),
        "{html}"
    );
    assert!(!html.contains("onclick"), "{html}");
    let js = srv.req("GET", "/app.js", &[], None).body;
    for sink in [
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
    ] {
        assert!(!js.contains(sink), "app.js uses {sink}");
    }
    assert!(js.contains("textContent"));
}

#[test]
fn output_with_a_script_tag_is_served_as_json_text() {
    let env = Env::new();
    let evil = r#"<script>alert(document.cookie)</script><img src=x onerror=alert(1)>"#;
    env.fake(
        "codex",
        &format!(
            "{}\nprintf '%s\\n' '{{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}}'\n\
             printf '%s\\n' '{{\"type\":\"item.completed\",\"item\":{{\"type\":\"agent_message\",\"text\":\"{evil}\"}}}}'\n\
             printf '%s\\n' '{{\"type\":\"turn.completed\",\"usage\":{{\"input_tokens\":1,\"output_tokens\":1}}}}'",
            record("codex")
        ),
    );
    let id = start_job(&env, &["--agent", "codex", evil]);
    assert_eq!(env.run(&["wait", &id]).code, 0);
    let srv = Server::start(&env);
    let session = srv.login();

    let r = srv.get("/api/jobs", &session);
    assert!(
        r.header("content-type")
            .unwrap()
            .starts_with("application/json")
    );
    let j = r.json();
    assert_eq!(j["jobs"][0]["task"], evil, "kept as data, whole");

    let mut s = srv.stream(&format!("/api/jobs/{id}/events"), &session);
    let text = s.until("the end event", |t| t.contains("event: end"));
    assert!(
        text.to_ascii_lowercase()
            .contains("content-type: text/event-stream"),
        "{text}"
    );
    let line = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .find(|v| v["kind"] == "message")
        .unwrap_or_else(|| panic!("no message line in {text}"));
    assert!(line["text"].as_str().unwrap().contains(evil), "{line}");
}

#[test]
fn the_fleet_stream_shows_a_job_appear_and_end() {
    let env = Env::new();
    gated(&env, "codex", "gate", "codex/codex-exec-basic.jsonl");
    let srv = Server::start(&env);
    let session = srv.login();
    let mut s = srv.stream("/api/events", &session);
    s.until("the snapshot", |t| t.contains("event: snapshot"));

    let id = start_job(&env, &["--agent", "codex", "say hi"]);
    let running = format!(r#""job_id":"{id}","status":"running""#);
    s.until("the new running job", |t| t.contains(&running));
    // Its transcript streams while it runs, then ends.
    let mut tr = srv.stream(&format!("/api/jobs/{id}/events"), &session);
    fs::write(env.fake_dir.join("gate"), "").unwrap();
    let success = format!(r#""job_id":"{id}","status":"success""#);
    s.until("its end", |t| t.contains(&success));
    let t = tr.until("the end event", |t| t.contains("event: end"));
    assert!(t.contains("Hi from the mock model!"), "{t}");
    assert!(t.contains(r#""status":"success""#), "{t}");
}

#[test]
fn cancel_and_continue_do_what_the_commands_do() {
    let env = Env::new();
    gated(&env, "codex", "gate", "codex/codex-exec-basic.jsonl");
    let running = start_job(&env, &["--agent", "codex", "work"]);
    let srv = Server::start(&env);
    let session = srv.login();

    let r = srv.post(&format!("/api/jobs/{running}/cancel"), &session, "{}");
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(r.json()["status"], "cancelled");
    let st = env.run(&["status", &running]).json();
    assert_eq!(st["status"], "cancelled");

    // An unknown job: 404 with baton's error.
    let r = srv.post("/api/jobs/20260101-000000-zzzz/cancel", &session, "{}");
    assert!(matches!(r.code, 404 | 400), "{}: {}", r.code, r.body);
    assert_eq!(r.json()["status"], "error");

    // Continue an ended job: a new job on the same session, the prompt on its stdin.
    env.replay("claude", "claude/claude-stream.jsonl", 0);
    let ended = start_job(&env, &["--agent", "claude", "first"]);
    assert_eq!(env.run(&["wait", &ended]).code, 0);
    let r = srv.post(
        &format!("/api/jobs/{ended}/continue"),
        &session,
        r#"{"prompt":""}"#,
    );
    assert_eq!(r.code, 400, "an empty prompt: {}", r.body);
    let r = srv.post(
        &format!("/api/jobs/{ended}/continue"),
        &session,
        r#"{"prompt":"and now the tests"}"#,
    );
    assert_eq!(r.code, 202, "{}", r.body);
    let next = r.json()["job_id"].as_str().unwrap().to_string();
    assert_ne!(next, ended);
    assert_eq!(env.run(&["wait", &next]).code, 0);
    assert!(env.stdin("claude").contains("and now the tests"));
    assert!(
        env.argv("claude").iter().any(|a| a == "--resume"),
        "{:?}",
        env.argv("claude")
    );
    // The runner it started is reaped, not left a zombie of the server.
    let state = fs::read(env.records("jobs").join(&next).join("state.json")).unwrap();
    let state: Value = serde_json::from_slice(&state).unwrap();
    let pid = state["runner_pid"].as_i64().expect("a runner pid");
    let proc = format!("/proc/{pid}");
    assert!(
        wait_for(Duration::from_secs(5), || !std::path::Path::new(&proc)
            .exists()),
        "runner {pid} left as a zombie"
    );
}

#[test]
fn a_transcript_starts_with_a_bounded_backlog() {
    let env = Env::new();
    env.fake(
        "codex",
        &format!(
            "{}\ni=0\nwhile [ $i -lt 2500 ]; do i=$((i+1)); \
             printf '{{\"type\":\"item.completed\",\"item\":{{\"type\":\"agent_message\",\"text\":\"msg %s\"}}}}\\n' $i; done",
            record("codex")
        ),
    );
    let id = start_job(&env, &["--agent", "codex", "chatty"]);
    env.run(&["wait", &id]);
    let srv = Server::start(&env);
    let session = srv.login();
    let mut s = srv.stream(&format!("/api/jobs/{id}/events"), &session);
    let text = s.until("the end event", |t| t.contains("event: end"));
    let msgs: Vec<u64> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .filter_map(|v| {
            v["activity"]["text"]
                .as_str()?
                .strip_prefix("msg ")?
                .parse()
                .ok()
        })
        .collect();
    let lines = text.matches("event: line").count();
    assert!(lines <= 2000, "{lines} lines sent");
    assert_eq!(msgs.last(), Some(&2500), "the newest are kept");
    assert!(
        msgs[0] > 500 && msgs.len() >= 1999,
        "{} .. ({})",
        msgs[0],
        msgs.len()
    );
}

/// The wall clock, in ms since the epoch.
fn wall_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// Returns once the wall clock has reached `ms` (ms since the epoch): the
/// clock test needs time to pass since a recorded moment, not a fixed nap
/// after whatever the set-up took.
fn wall_reaches(ms: u64) {
    let now = wall_ms();
    if now < ms {
        std::thread::sleep(Duration::from_millis(ms - now));
    }
}

/// The first `snapshot` event of a new fleet stream, and the wall-clock
/// times just before the request and just after the event arrived.
fn snapshot(srv: &Server, session: &str) -> (Value, u64, u64) {
    let before = wall_ms();
    let mut s = srv.stream("/api/events", session);
    let text = s.until("the snapshot", |t| {
        t.split("event: snapshot\ndata: ")
            .nth(1)
            .is_some_and(|d| d.contains('\n'))
    });
    let after = wall_ms();
    let data = text.split("event: snapshot\ndata: ").nth(1).unwrap();
    let data = data.split('\n').next().unwrap();
    (serde_json::from_str(data).unwrap(), before, after)
}

fn job_in<'a>(snap: &'a Value, id: &str) -> &'a Value {
    snap["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["job_id"] == id)
        .unwrap_or_else(|| panic!("{id} not in {snap}"))
}

#[test]
fn every_snapshot_reads_the_clocks_when_it_is_sent() {
    // A page opened after a job last changed got the times of that change
    // (a 74 s job shown as "1s", a job ended 2 minutes ago as "42s ago").
    // The waits below are the point: wall time has to pass (counted from
    // the recorded times, so the set-up's own seconds count too).
    let env = Env::new();
    gated(&env, "codex", "gate", "codex/codex-exec-basic.jsonl");
    let id = start_job(&env, &["--agent", "codex", "slow"]);
    let srv = Server::start(&env);
    let session = srv.login();
    let state = || -> Value {
        let p = env.records("jobs").join(&id).join("state.json");
        serde_json::from_slice(&fs::read(p).unwrap()).unwrap()
    };
    let created = state()["created_ms"].as_u64().unwrap();

    // Running and silent: nothing changes, yet its elapsed time grows.
    wall_reaches(created + 2000);
    let (one, before, after) = snapshot(&srv, &session);
    let now1 = one["now_ms"].as_u64().unwrap();
    assert!((before..=after).contains(&now1), "{before} {now1} {after}");
    let j = job_in(&one, &id);
    assert_eq!(j["status"], "running");
    let e1 = j["elapsed_ms"].as_u64().unwrap();
    assert_eq!(e1, now1 - created, "elapsed at the time of sending: {j}");
    assert!(e1 >= 2000, "{j}");
    let a1 = j["last_activity_age_ms"].as_u64().unwrap();
    assert!(a1 >= 1000, "silent for a second at least: {j}");
    wall_reaches(now1 + 1000);
    let (two, _, _) = snapshot(&srv, &session);
    let now2 = two["now_ms"].as_u64().unwrap();
    let j = job_in(&two, &id);
    assert_eq!(j["elapsed_ms"].as_u64().unwrap(), now2 - created, "{j}");
    assert!(now2 - now1 >= 1000);
    assert_eq!(
        j["last_activity_age_ms"].as_u64().unwrap(),
        a1 + (now2 - now1),
        "the age of the last activity grows with the wall clock: {j}"
    );

    // Ended: its elapsed time stops, the age of its end keeps growing.
    fs::write(env.fake_dir.join("gate"), "").unwrap();
    assert_eq!(env.run(&["wait", &id]).code, 0);
    let ended = state()["ended_ms"].as_u64().expect("ended_ms");
    wall_reaches(ended + 1000);
    let (three, _, _) = snapshot(&srv, &session);
    let now3 = three["now_ms"].as_u64().unwrap();
    let j = job_in(&three, &id);
    assert_eq!(j["status"], "success", "{j}");
    assert_eq!(j["elapsed_ms"].as_u64().unwrap(), ended - created, "{j}");
    let age = j["last_activity_age_ms"].as_u64().unwrap();
    assert_eq!(age, now3 - ended, "ended {} ms ago: {j}", now3 - ended);
    assert!(age >= 1000, "{j}");
}

/// `GET /api/usage` is `baton usage --by agent` (what the page's panel
/// shows), behind the session like every other route.
#[test]
fn usage_is_what_baton_usage_says_and_needs_the_session() {
    let env = Env::new();
    env.replay("pi", "pi/pi-json-basic.jsonl", 0);
    assert_eq!(env.run(&["--agent", "pi", "x"]).code, 0);
    let srv = Server::start(&env);
    let r = srv.req("GET", "/api/usage", &[], None);
    assert_eq!(r.code, 401, "{}", r.body);
    let session = srv.login();
    let r = srv.get("/api/usage", &session);
    assert_eq!(r.code, 200, "{}", r.body);
    let page = r.json();
    let cli = env.run(&["usage", "--by", "agent"]).json();
    assert_eq!(page, cli);
    assert_eq!(page["groups"][0]["key"], "pi");
    assert_eq!(page["total"]["input_tokens"], 120);
}
