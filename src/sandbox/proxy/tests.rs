use super::*;

/// A one-shot HTTP server on 127.0.0.1 that answers every request with
/// what it received, and its port.
fn echo_server() -> u16 {
    let l = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { return };
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 1024];
                while head::head_end(&buf).is_none() {
                    match c.read(&mut chunk) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let body = String::from_utf8_lossy(&buf).into_owned();
                let _ = write!(
                    c,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    port
}

fn ask(proxy: &Proxy, request: &str) -> String {
    let mut c = UnixStream::connect(proxy.socket()).unwrap();
    c.write_all(request.as_bytes()).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut out = Vec::new();
    let _ = c.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn proxy(rules: &[&str]) -> (tempfile::TempDir, Proxy) {
    let dir = tempfile::tempdir().unwrap();
    let rules = rules.iter().map(|r| Rule::parse(r).unwrap()).collect();
    let p = Proxy::start(Allowlist::new(rules), &dir.path().join("proxy.sock")).unwrap();
    (dir, p)
}

#[test]
fn an_allowed_host_is_reached_in_both_forms_and_a_refused_one_counted() {
    let up = echo_server();
    let (_d, p) = proxy(&[&format!("127.0.0.1:{up}")]);
    let got = ask(
        &p,
        &format!("GET http://127.0.0.1:{up}/v1/models HTTP/1.1\r\nHost: 127.0.0.1:{up}\r\n\r\n"),
    );
    assert!(got.starts_with("HTTP/1.1 200 OK"), "{got}");
    assert!(
        got.contains("GET /v1/models HTTP/1.1"),
        "origin form: {got}"
    );
    assert!(got.contains("Connection: close"), "{got}");
    // CONNECT: the tunnel is set up, then the bytes pass as they are.
    let got = ask(
        &p,
        &format!("CONNECT 127.0.0.1:{up} HTTP/1.1\r\n\r\nGET /inner HTTP/1.1\r\n\r\n"),
    );
    assert!(
        got.starts_with("HTTP/1.1 200 Connection Established\r\n\r\nHTTP/1.1 200 OK"),
        "{got}"
    );
    assert!(got.contains("GET /inner"), "{got}");
    // Another port of the same address, another host: 403, recorded once each.
    for _ in 0..2 {
        let got = ask(&p, "CONNECT evil.example:443 HTTP/1.1\r\n\r\n");
        assert!(got.starts_with("HTTP/1.1 403"), "{got}");
    }
    let got = ask(
        &p,
        &format!("GET http://127.0.0.1:{}/ HTTP/1.1\r\n\r\n", up + 1),
    );
    assert!(got.starts_with("HTTP/1.1 403"), "{got}");
    let r = p.refused();
    assert_eq!(r.count, 3);
    assert_eq!(
        r.hosts,
        vec![
            "evil.example:443".to_string(),
            format!("127.0.0.1:{}", up + 1)
        ]
    );
    // The same proxy on its TCP port.
    let mut c = TcpStream::connect(("127.0.0.1", p.port())).unwrap();
    c.write_all(b"CONNECT nope.example:443 HTTP/1.1\r\n\r\n")
        .unwrap();
    let mut out = String::new();
    let _ = c.read_to_string(&mut out);
    assert!(out.starts_with("HTTP/1.1 403"), "{out}");
}

#[test]
fn bad_and_oversized_heads_get_400_and_431_and_are_not_counted() {
    let (_d, p) = proxy(&["example.com"]);
    assert!(ask(&p, "GET /local HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 400"));
    let big = format!(
        "GET http://example.com/ HTTP/1.1\r\nX: {}\r\n\r\n",
        "y".repeat(20_000)
    );
    assert!(ask(&p, &big).starts_with("HTTP/1.1 431"));
    assert_eq!(p.refused(), Refused::default());
}

#[test]
fn the_refused_list_is_capped_the_count_is_not() {
    let (_d, p) = proxy(&[]);
    for i in 0..(REFUSED_CAP + 4) {
        ask(&p, &format!("CONNECT h{i}.example:443 HTTP/1.1\r\n\r\n"));
    }
    let r = p.refused();
    assert_eq!(
        (r.hosts.len(), r.count),
        (REFUSED_CAP, REFUSED_CAP as u64 + 4)
    );
}

#[test]
fn dropping_the_proxy_removes_its_socket() {
    let (_d, p) = proxy(&[]);
    let sock = p.socket().to_path_buf();
    assert!(sock.exists());
    drop(p);
    assert!(!sock.exists());
}
