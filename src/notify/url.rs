//! The URL channel: an HTTP POST of the event as JSON (ntfy, a webhook),
//! with an optional bearer token read from the variable `url_token_env`
//! names when the notification is sent.
//!
//! `http://` is spoken here over a `TcpStream` (connect within 5 s, the
//! whole exchange within 10 s). `https://` is handed to the system `curl`,
//! started through the one launcher: its URL, headers and time-out in a
//! curl config file (0600, removed after), the body on stdin, so the token
//! is in no argv (`ps` shows argv to every user) — and baton carries no TLS
//! stack (binary size). At most one retry, a second later, after a
//! connection error or a 5xx answer; then the delivery has failed. The
//! token is never written to a log, an error or `notify.json`.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::process::Failed;

pub const CONNECT: Duration = Duration::from_secs(5);

/// How long one delivery may take in all (`process::timeouts`: 10 s).
fn total() -> Duration {
    crate::process::timeouts::NOTIFY_URL.shortened()
}
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// How one try ended, when it did not succeed.
#[derive(Debug)]
enum Fail {
    /// Worth one more try (no connection, a 5xx).
    Again(String),
    Final(String),
}

/// POST `body` to `url`; the token from `token_env`, if named and set.
pub fn deliver(url: &str, token_env: Option<&str>, body: &[u8]) -> Result<(), String> {
    let token = match token_env {
        Some(var) => match std::env::var(var) {
            Ok(t) if !t.trim().is_empty() => Some(t.trim().to_string()),
            _ => return Err(format!("`{var}` (url_token_env) is not set")),
        },
        None => None,
    };
    if token
        .as_deref()
        .is_some_and(|t| t.chars().any(|c| c.is_control()))
    {
        return Err("the token holds a control character (a line break?)".into());
    }
    post_with_retry(url, token.as_deref(), body, RETRY_AFTER)
}

fn post_with_retry(
    url: &str,
    token: Option<&str>,
    body: &[u8],
    wait: Duration,
) -> Result<(), String> {
    let mut last = String::new();
    for attempt in 0..2 {
        if attempt > 0 {
            std::thread::sleep(wait);
        }
        match post(url, token, body) {
            Ok(()) => return Ok(()),
            Err(Fail::Final(e)) => return Err(e),
            Err(Fail::Again(e)) => last = e,
        }
    }
    Err(format!("{last} (tried twice)"))
}

fn post(url: &str, token: Option<&str>, body: &[u8]) -> Result<(), Fail> {
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("https://") {
        curl(url, token, body)
    } else if let Some(rest) = lower.strip_prefix("http://").map(|_| &url[7..]) {
        http(rest, token, body)
    } else {
        Err(Fail::Final(
            "the URL is neither http:// nor https://".into(),
        ))
    }
}

/// The status of an answer: 2xx is done, 5xx worth another try.
fn judge(code: u16) -> Result<(), Fail> {
    match code {
        200..=299 => Ok(()),
        500..=599 => Err(Fail::Again(format!("HTTP {code}"))),
        _ => Err(Fail::Final(format!("HTTP {code}"))),
    }
}

/// `http://` natively: one request, `Connection: close`, the status line read.
fn http(rest: &str, token: Option<&str>, body: &[u8]) -> Result<(), Fail> {
    let total = total();
    let until = Instant::now() + total;
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) if rest[i..].starts_with('/') => (&rest[..i], rest[i..].to_string()),
        Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
        None => (rest, "/".to_string()),
    };
    let path = path.split('#').next().unwrap_or("/").to_string();
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let addr = if hostport.starts_with('[') && hostport.ends_with(']') || !hostport.contains(':') {
        format!("{hostport}:80")
    } else {
        hostport.to_string()
    };
    let addrs: Vec<_> = addr
        .to_socket_addrs()
        .map_err(|e| Fail::Again(format!("resolving {hostport}: {e}")))?
        .collect();
    let mut stream = None;
    let mut why = format!("{hostport} has no address");
    for a in addrs {
        match TcpStream::connect_timeout(&a, CONNECT) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => why = format!("connecting to {hostport}: {e}"),
        }
    }
    let mut s = stream.ok_or(Fail::Again(why))?;
    let left = || {
        until
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1))
    };
    let timeout = |e: std::io::Error| {
        if matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ) {
            Fail::Final(format!(
                "no answer from {hostport} within {}",
                crate::process::seconds(total)
            ))
        } else {
            Fail::Again(format!("talking to {hostport}: {e}"))
        }
    };
    let _ = s.set_write_timeout(Some(left()));
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: {hostport}\r\nUser-Agent: baton/{}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        env!("CARGO_PKG_VERSION"),
        body.len()
    );
    if let Some(t) = token {
        head.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes())
        .and_then(|()| s.write_all(body))
        .map_err(timeout)?;
    // The status line is all that is needed; read until it is whole.
    let mut got = Vec::new();
    let mut buf = [0u8; 512];
    while !got.contains(&b'\n') && got.len() < 8192 {
        let _ = s.set_read_timeout(Some(left()));
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) => return Err(timeout(e)),
        }
        if Instant::now() >= until {
            return Err(Fail::Final(format!(
                "no answer from {hostport} within {}",
                crate::process::seconds(total)
            )));
        }
    }
    let line = String::from_utf8_lossy(&got);
    let code = line
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse::<u16>().ok())
        .ok_or_else(|| Fail::Again(format!("{hostport} gave no HTTP answer")))?;
    judge(code)
}

/// A string in a curl config file: quoted, `\` and `"` escaped (the URL
/// and token hold no control characters, checked before).
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// What curl reads from its config file (`--config`).
fn curl_config(url: &str, token: Option<&str>) -> String {
    let mut c = format!(
        "url = {}\nheader = \"Content-Type: application/json\"\ndata-binary = \"@-\"\n\
         max-time = {}\nconnect-timeout = {}\nsilent\nshow-error\noutput = \"/dev/null\"\n\
         write-out = \"%{{http_code}}\"\nproto = \"=https\"\n",
        quoted(url),
        total().as_secs().max(1),
        CONNECT.as_secs()
    );
    if let Some(t) = token {
        c.push_str(&format!(
            "header = {}\n",
            quoted(&format!("Authorization: Bearer {t}"))
        ));
    }
    c
}

/// `https://` through the system curl (see the module comment).
fn curl(url: &str, token: Option<&str>, body: &[u8]) -> Result<(), Fail> {
    let dir = std::env::temp_dir();
    let path = dir.join(format!(
        "baton-notify-{}-{}.curl",
        std::process::id(),
        crate::ids::random_suffix(8)
    ));
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| Fail::Final(format!("writing curl's config in {}: {e}", dir.display())))?;
        f.write_all(curl_config(url, token).as_bytes())
            .map_err(|e| Fail::Final(format!("writing curl's config: {e}")))?;
    }
    let (reader, mut writer) = std::io::pipe().map_err(|e| Fail::Final(format!("a pipe: {e}")))?;
    // The event is a few KiB, under a pipe's buffer (see command.rs).
    let wrote = writer.write_all(body);
    drop(writer);
    let out = wrote
        .map_err(|e| Fail::Final(format!("writing the event: {e}")))
        .and_then(|()| {
            crate::process::Command::new("curl")
                .arg("-q")
                .arg("--config")
                .arg(&path)
                .stdin(reader)
                .stdout(Stdio::piped())
                .deadline(total() + Duration::from_secs(2))
                .grace(Duration::from_millis(500))
                .output()
                .map_err(|e| match e {
                    Failed::Spawn(e) if e.kind() == std::io::ErrorKind::NotFound => Fail::Final(
                        "https:// needs the system `curl`, which is not installed".into(),
                    ),
                    other => Fail::Final(format!("curl: {other}")),
                })
        });
    let _ = std::fs::remove_file(&path);
    let out = out?;
    let code: u16 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0);
    if code != 0 {
        return judge(code);
    }
    let said = super::command::last_line(&out.stderr);
    // curl's exit codes: 6 and 7 are no address / no connection.
    match out.status.code() {
        Some(6 | 7) => Err(Fail::Again(said)),
        Some(c) => Err(Fail::Final(format!("curl exited with {c}: {said}"))),
        None => Err(Fail::Final("curl was stopped by a signal".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::sync::{Arc, Mutex};

    /// A server on 127.0.0.1 answering each connection with the next of
    /// `answers` (None: never answer); what it received, one per request.
    fn server(answers: Vec<Option<u16>>) -> (String, Arc<Mutex<Vec<String>>>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/topic?x=1", l.local_addr().unwrap());
        let got = Arc::new(Mutex::new(Vec::new()));
        let g = got.clone();
        std::thread::spawn(move || {
            for answer in answers {
                let Ok((mut s, _)) = l.accept() else { return };
                let mut req = Vec::new();
                let mut buf = [0u8; 4096];
                s.set_read_timeout(Some(Duration::from_millis(300)))
                    .unwrap();
                while let Ok(n) = s.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    req.extend_from_slice(&buf[..n]);
                }
                g.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&req).into_owned());
                match answer {
                    Some(c) => {
                        let _ = write!(s, "HTTP/1.1 {c} X\r\nContent-Length: 0\r\n\r\n");
                    }
                    None => std::thread::sleep(Duration::from_secs(30)),
                }
            }
        });
        (url, got)
    }

    #[test]
    fn http_posts_json_with_the_bearer_token() {
        let (url, got) = server(vec![Some(200)]);
        post_with_retry(&url, Some("tok-123"), b"{\"a\":1}", Duration::ZERO).unwrap();
        let req = got.lock().unwrap()[0].clone();
        assert!(req.starts_with("POST /topic?x=1 HTTP/1.1\r\n"), "{req}");
        assert!(req.contains("Content-Type: application/json\r\n"), "{req}");
        assert!(req.contains("Authorization: Bearer tok-123\r\n"), "{req}");
        assert!(req.ends_with("\r\n\r\n{\"a\":1}"), "{req}");
    }

    #[test]
    fn a_5xx_is_tried_twice_then_failed_and_a_4xx_once() {
        let (url, got) = server(vec![Some(500), Some(503), Some(200)]);
        let e = post_with_retry(&url, None, b"{}", Duration::ZERO).unwrap_err();
        assert_eq!(e, "HTTP 503 (tried twice)");
        assert_eq!(got.lock().unwrap().len(), 2);
        let (url, got) = server(vec![Some(404), Some(200)]);
        assert_eq!(
            post_with_retry(&url, None, b"{}", Duration::ZERO).unwrap_err(),
            "HTTP 404"
        );
        assert_eq!(got.lock().unwrap().len(), 1);
        // Nobody listening: a connection error, tried twice.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", l.local_addr().unwrap());
        drop(l);
        let e = post_with_retry(&url, None, b"{}", Duration::ZERO).unwrap_err();
        assert!(
            e.contains("connecting to") && e.contains("tried twice"),
            "{e}"
        );
    }

    #[test]
    fn the_token_is_in_curls_config_never_its_argv() {
        let c = curl_config("https://h/x", Some("se\"cr\\et"));
        assert!(
            c.contains("header = \"Authorization: Bearer se\\\"cr\\\\et\"\n"),
            "{c}"
        );
        assert!(c.contains("url = \"https://h/x\"\n"));
        assert!(c.contains("data-binary = \"@-\"\n") && c.contains("max-time = 10\n"));
        let e = deliver(
            "http://127.0.0.1:9/",
            Some("BATON_TEST_NO_SUCH_TOKEN"),
            b"{}",
        )
        .unwrap_err();
        assert!(
            e.contains("`BATON_TEST_NO_SUCH_TOKEN` (url_token_env) is not set"),
            "{e}"
        );
    }
}
