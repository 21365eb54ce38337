//! `--network provider` (issue 31): a peer under baton's sandbox reaches
//! its provider only through the proxy baton runs for the run. A fake peer
//! (a) fetches an allowed host through the proxy, (b) CONNECTs to a host
//! that is not allowed and gets 403 (the result lists it), (c) connects
//! straight to a listening 127.0.0.1 port and fails; under each backend
//! this machine has, and through a whole `baton run`.

use std::fs;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use baton::sandbox::proxy::{Allowlist, Proxy, Rule};
use baton::sandbox::{Mode, Network, Policy};
use serde_json::{Value, json};

use crate::support::{BATON, Env, Run, fixture};

/// A server on 127.0.0.1 that answers every request `UP-OK`; its port.
fn upstream() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { return };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let mut seen = Vec::new();
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match c.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = c.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nUP-OK",
                );
            });
        }
    });
    port
}

/// The three attempts, each result a line of `net.txt` in the cwd.
fn probe_script(up: u16) -> String {
    format!(
        r#"import os, socket, urllib.request
out = []
try:
    out.append("allowed=" + urllib.request.urlopen("http://127.0.0.1:{up}/v1/ok", timeout=10).read().decode())
except Exception as e:
    out.append("allowed=fail %r" % e)
try:
    h, p = os.environ["HTTPS_PROXY"].split("//", 1)[1].rstrip("/").rsplit(":", 1)
    s = socket.create_connection((h, int(p)), 5)
    s.sendall(b"CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n")
    got = b""
    # The answer may come in pieces: read its status line whole.
    while b"\r\n" not in got:
        chunk = s.recv(64)
        if not chunk:
            break
        got += chunk
    out.append("connect=" + got.decode().split("\r\n")[0])
except Exception as e:
    out.append("connect=fail %r" % e)
try:
    socket.create_connection(("127.0.0.1", {up}), 3).close()
    out.append("direct=yes")
except Exception:
    out.append("direct=no")
open("net.txt", "w").write("\n".join(out) + "\n")
"#
    )
}

const WANT: &str = "allowed=UP-OK\nconnect=HTTP/1.1 403 Forbidden\ndirect=no\n";

fn skip() -> bool {
    !Path::new("/usr/bin/python3").exists()
}

#[test]
fn each_backend_lets_the_allowed_host_through_and_nothing_else() {
    if skip() {
        return;
    }
    for backend in ["bwrap", "landlock"] {
        if !crate::sandbox::works(backend) {
            continue;
        }
        let up = upstream();
        let d = tempfile::tempdir().unwrap();
        let tmp = d.path().join("tmp");
        let net = d.path().join("net");
        fs::create_dir_all(&tmp).unwrap();
        fs::create_dir_all(&net).unwrap();
        let rule = Rule::parse(&format!("127.0.0.1:{up}")).unwrap();
        let proxy = Proxy::start(Allowlist::new(vec![rule]), &net.join("proxy.sock")).unwrap();
        let mut p =
            Policy::new(Mode::Workspace, tmp, None, &[]).with_workspace(d.path().join("tmp"));
        p.network = Network::Provider { port: proxy.port() };
        p.proxy_socket = Some(proxy.socket().to_path_buf());
        let script = d.path().join("probe.py");
        fs::write(&script, probe_script(up)).unwrap();
        let args = json!({"stage": {"wrap": {"backend": backend}}, "policy": p});
        let out = Command::new(BATON)
            .current_dir(d.path().join("tmp"))
            .args([
                "__sandbox-exec",
                &args.to_string(),
                "--",
                "/usr/bin/python3",
            ])
            .arg(&script)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{backend}: {err}");
        let got = fs::read_to_string(d.path().join("tmp/net.txt")).unwrap();
        assert_eq!(got, WANT, "{backend}: {err}");
        let r = proxy.refused();
        assert_eq!(r.hosts, vec!["evil.example:443"], "{backend}");
        let report: Value = serde_json::from_str(err.lines().next().unwrap()).unwrap();
        assert_eq!(report["network"], "provider", "{backend}: {report}");
        let port_only = report["degraded"]
            .as_array()
            .is_some_and(|d| d.iter().any(|x| x == "provider_port_any_host"));
        // Under bubblewrap the child has no network but the relay; Landlock
        // names the proxy's port, on any address (reported).
        assert_eq!(port_only, backend == "landlock", "{backend}: {report}");
    }
}

fn run(env: &Env, home: &Path, args: &[&str]) -> (Run, Value) {
    let r = Run::from(
        env.baton()
            .env("HOME", home)
            .env("BATON_SANDBOX", "require")
            .args(args)
            .output()
            .unwrap(),
    );
    let j = r.json();
    (r, j)
}

#[test]
fn a_provider_run_reaches_its_host_through_the_proxy_and_lists_what_was_refused() {
    if skip() || !(crate::sandbox::works("bwrap") || crate::sandbox::works("landlock")) {
        return;
    }
    let env = Env::new();
    env.git_init();
    let home = env.tmp.path().join("home");
    fs::create_dir_all(&home).unwrap();
    let up = upstream();
    let script = env.tmp.path().join("probe.py");
    fs::write(&script, probe_script(up)).unwrap();
    let answer = fixture("pi/pi-json-basic.jsonl");
    env.fake(
        "pi",
        &format!(
            "cat > /dev/null\n/usr/bin/python3 '{}'\ncat '{}'",
            script.display(),
            answer.display()
        ),
    );
    let host = format!("127.0.0.1:{up}");
    let (r, j) = run(
        &env,
        &home,
        &[
            "run",
            "--agent",
            "pi",
            "--network",
            "provider",
            "--network-host",
            &host,
            "x",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(fs::read_to_string(env.work.join("net.txt")).unwrap(), WANT);
    let s = &j["sandbox"];
    assert_eq!(s["network"], "provider", "{j}");
    assert_eq!(s["refused_hosts"], json!(["evil.example:443"]), "{j}");
    assert_eq!(s["refused_count"], 1, "{j}");
    // Without the host the same fetch is refused too.
    let (r, j) = run(
        &env,
        &home,
        &["run", "--agent", "pi", "--network", "provider", "x"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let got = fs::read_to_string(env.work.join("net.txt")).unwrap();
    assert!(got.starts_with("allowed=fail"), "{got}");
    assert_eq!(j["sandbox"]["refused_count"], 2, "{j}");
    // The dry run names the proxy and its hosts, and starts nothing.
    let (r, j) = run(
        &env,
        &home,
        &[
            "run",
            "--agent",
            "qwen",
            "--network",
            "provider",
            "--network-host",
            "Extra.Example.:8443",
            "--dry-run",
            "x",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let allowed = j["sandbox"]["proxy"]["allowed_hosts"].to_string();
    assert!(
        allowed.contains("\"extra.example:8443\"") && allowed.contains("dashscope"),
        "{j}"
    );
    assert!(
        j["sandbox"]["proxy"]["socket"]
            .as_str()
            .unwrap()
            .ends_with("proxy.sock"),
        "{j}"
    );
}

#[test]
fn provider_is_refused_where_batons_sandbox_does_not_confine_the_peer() {
    let env = Env::new();
    env.git_init();
    let home = env.tmp.path().join("home");
    fs::create_dir_all(&home).unwrap();
    env.replay("codex", "codex/codex-exec-basic.jsonl", 0);
    env.replay("pi", "pi/pi-json-basic.jsonl", 0);
    for (args, says) in [
        (
            vec!["run", "--agent", "codex", "--network", "provider", "x"],
            "needs baton's sandbox",
        ),
        (
            vec![
                "run",
                "--agent",
                "pi",
                "--full-access",
                "--network",
                "provider",
                "x",
            ],
            "needs baton's sandbox",
        ),
        (
            vec![
                "run",
                "--agent",
                "pi",
                "--sandbox",
                "off",
                "--network",
                "provider",
                "x",
            ],
            "needs baton's sandbox",
        ),
        // A fallback agent baton does not confine would run with every
        // address: refused before anything starts, the chain named.
        (
            vec![
                "run",
                "--agent",
                "pi",
                "--fallback",
                "codex",
                "--network",
                "provider",
                "x",
            ],
            "does not confine codex",
        ),
        (
            vec![
                "run",
                "--agent",
                "pi",
                "--fallback",
                "opencode,codex",
                "--network",
                "none",
                "x",
            ],
            "does not confine codex",
        ),
        (
            vec!["run", "--agent", "pi", "--network-host", "a.example", "x"],
            "is for --network provider",
        ),
        (
            vec![
                "run",
                "--agent",
                "pi",
                "--network",
                "provider",
                "--network-host",
                "a b",
                "x",
            ],
            "--network-host",
        ),
    ] {
        let (r, j) = run(&env, &home, &args);
        assert_eq!(
            (r.code, j["error"]["kind"].as_str()),
            (2, Some("usage")),
            "{args:?}: {j}"
        );
        assert!(
            j["error"]["message"].as_str().unwrap().contains(says),
            "{args:?}: {j}"
        );
        if args.contains(&"--fallback") {
            assert!(
                j["error"]["hint"]
                    .as_str()
                    .unwrap()
                    .contains("in the fallback chain"),
                "{args:?}: {j}"
            );
        }
    }
    assert!(!env.called("codex") && !env.called("pi"));
}
