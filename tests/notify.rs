//! Notifications end to end through `baton notify test`: the command
//! channel (argv exactly as configured, no shell, the event as JSON on
//! stdin), the URL channel against servers on 127.0.0.1 (one that records,
//! one that hangs, one that answers 500), the terminal channel on a real
//! pseudo-terminal, and the desktop channel against a real session bus
//! (`dbus-daemon` and a listener that owns `org.freedesktop.Notifications`).

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::{Env, Run, record, wait_for};

/// A repository directory whose name is a peer's worst: shell
/// metacharacters, an escape sequence, a bell, a carriage return. Its name
/// reaches the notification's body (cleaned), its path the event's `repo`.
const EVIL: &str = "evil $(touch pwned) `touch pwned2` ; rm -rf x \u{1b}[2J\u{7}\rend";
const EVIL_CLEAN: &str = "evil $(touch pwned) `touch pwned2` ; rm -rf x end";

fn user_file(env: &Env, text: &str) {
    std::fs::write(env.tmp.path().join("user-config.toml"), text).unwrap();
}

fn evil_dir(env: &Env) -> PathBuf {
    let d = env.work.join(EVIL);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn notify_test(env: &Env, cwd: &Path, vars: &[(&str, &str)]) -> Run {
    let mut c = env.baton();
    c.current_dir(cwd).args(["notify", "test"]);
    for (k, v) in vars {
        c.env(k, v);
    }
    Run::from(c.output().unwrap())
}

#[test]
fn with_no_channel_configured_notify_test_says_how_to_configure_one() {
    let env = Env::new();
    let r = env.run(&["notify", "test"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    let j = r.json();
    assert_eq!(j["error"]["kind"], "config");
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no notification channel")
    );
    assert!(j["error"]["hint"].as_str().unwrap().contains("[notify]"));
}

#[test]
fn the_command_channel_gets_argv_as_configured_and_the_event_on_stdin() {
    let env = Env::new();
    env.fake("notify-rec", &record("notify-rec"));
    let prog = env.bin.join("notify-rec");
    user_file(
        &env,
        &format!(
            "[notify]\ncommand = [{:?}, \"$(touch pwned)\", \"`touch pwned2`\", \"; rm -rf x\", \"a b\"]\n",
            prog.display().to_string()
        ),
    );
    let dir = evil_dir(&env);
    let r = notify_test(&env, &dir, &[]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        r.json()["channels"],
        serde_json::json!([{"channel": "command", "ok": true}])
    );
    assert_eq!(
        env.argv("notify-rec"),
        ["$(touch pwned)", "`touch pwned2`", "; rm -rf x", "a b"]
    );
    let stdin = env.stdin("notify-rec");
    assert_eq!(stdin.lines().count(), 1, "{stdin:?}");
    let e: serde_json::Value = serde_json::from_str(&stdin).unwrap();
    assert_eq!(e["trigger"], "test");
    assert_eq!(e["repo"], dir.display().to_string());
    let summary = e["summary"].as_str().unwrap();
    assert!(
        !summary.is_empty() && !summary.chars().any(char::is_control),
        "{summary:?}"
    );
    // Nothing was ever handed to a shell.
    for p in [&env.work, &dir, &env.tmp.path().to_path_buf()] {
        assert!(!p.join("pwned").exists() && !p.join("pwned2").exists());
    }
    // A program that fails: the delivery failed, said why, exit 1.
    env.fake("notify-rec", "echo 'cannot reach home' >&2; exit 3");
    let r = notify_test(&env, &dir, &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let err = r.json()["channels"][0]["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(err.contains("exit status 3: cannot reach home"), "{err}");
}

/// A server on 127.0.0.1: each connection gets the next answer (`None`:
/// none, ever); every request it read is kept.
fn server(answers: Vec<Option<u16>>) -> (String, Arc<Mutex<Vec<String>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/baton-topic", l.local_addr().unwrap());
    let got = Arc::new(Mutex::new(Vec::new()));
    let g = got.clone();
    std::thread::spawn(move || {
        for answer in answers {
            let Ok((mut s, _)) = l.accept() else { return };
            let mut req = Vec::new();
            let mut buf = [0u8; 8192];
            s.set_read_timeout(Some(Duration::from_millis(500)))
                .unwrap();
            while let Ok(n) = s.read(&mut buf) {
                if n == 0 {
                    break;
                }
                req.extend_from_slice(&buf[..n]);
                // Headers and a body of the announced length: the request is whole.
                let text = String::from_utf8_lossy(&req);
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let len = head
                        .lines()
                        .find_map(|l| l.strip_prefix("Content-Length: "))
                        .and_then(|n| n.trim().parse::<usize>().ok())
                        .unwrap_or(0);
                    if body.len() >= len {
                        break;
                    }
                }
            }
            g.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&req).into_owned());
            match answer {
                Some(c) => {
                    let _ = write!(s, "HTTP/1.1 {c} X\r\nContent-Length: 0\r\n\r\n");
                }
                None => std::thread::sleep(Duration::from_secs(60)),
            }
        }
    });
    (url, got)
}

#[test]
fn the_url_channel_posts_the_event_with_the_bearer_token() {
    let env = Env::new();
    let (url, got) = server(vec![Some(200)]);
    user_file(
        &env,
        &format!("[notify]\nurl = \"{url}\"\nurl_token_env = \"BATON_TEST_NTFY\"\n"),
    );
    let dir = evil_dir(&env);
    let r = notify_test(&env, &dir, &[("BATON_TEST_NTFY", "tok-s3cr3t-value")]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(!r.stdout.contains("tok-s3cr3t") && !r.stderr.contains("tok-s3cr3t"));
    let req = got.lock().unwrap()[0].clone();
    let (head, body) = req.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("POST /baton-topic HTTP/1.1\r\n"), "{head}");
    assert!(
        head.contains("\r\nContent-Type: application/json"),
        "{head}"
    );
    assert!(
        head.contains("\r\nAuthorization: Bearer tok-s3cr3t-value"),
        "{head}"
    );
    let e: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(e["trigger"], "test");
    assert_eq!(e["id"], "notify-test");
    // The token's variable unset: a failed delivery that names it.
    let r = notify_test(&env, &dir, &[]);
    assert_eq!(r.code, 1);
    let err = r.json()["channels"][0]["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        err.contains("`BATON_TEST_NTFY` (url_token_env) is not set"),
        "{err}"
    );
}

#[test]
fn a_server_that_hangs_fails_the_delivery_within_its_bound() {
    let env = Env::new();
    let (url, got) = server(vec![None, None]);
    user_file(&env, &format!("[notify]\nurl = \"{url}\"\n"));
    // The real bound is 10 s (process::timeouts::NOTIFY_URL); 2 s here.
    let t = Instant::now();
    let r = Run::from(
        env.baton()
            .args(["notify", "test"])
            .env("BATON_NOTIFY_URL_TIMEOUT_MS", "2000")
            .output()
            .unwrap(),
    );
    let took = t.elapsed();
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(took >= Duration::from_secs(2), "gave up early: {took:?}");
    assert!(took < Duration::from_secs(8), "{took:?}");
    let c = &r.json()["channels"][0];
    assert_eq!(c["ok"], false);
    assert!(c["error"].as_str().unwrap().contains("no answer"), "{c}");
    assert_eq!(got.lock().unwrap().len(), 1, "a time-out is not retried");
}

#[test]
fn a_server_that_answers_500_is_tried_twice_then_the_delivery_fails() {
    let env = Env::new();
    let (url, got) = server(vec![Some(500), Some(500), Some(200)]);
    user_file(&env, &format!("[notify]\nurl = \"{url}\"\n"));
    let r = env.run(&["notify", "test"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(r.json()["channels"][0]["error"], "HTTP 500 (tried twice)");
    assert_eq!(got.lock().unwrap().len(), 2);
}

#[test]
fn the_terminal_channel_rings_the_terminal_that_ran_the_command() {
    let env = Env::new();
    user_file(&env, "[notify]\nterminal = true\n");
    let (r, tty) = crate::watch::run_on_pty(&env, &["notify", "test"], &[]);
    assert_eq!(r.code, 0, "{}\n{tty:?}", r.stdout);
    assert!(tty.contains('\u{7}'), "{tty:?}");
    assert!(
        tty.contains("\u{1b}]9;baton run test notification"),
        "{tty:?}"
    );
    assert!(
        tty.contains("\u{1b}]777;notify;baton run test notification · notify-test;work: "),
        "{tty:?}"
    );
    // Without a terminal: a failed delivery, no panic.
    let r = env.run(&["notify", "test"]);
    assert_eq!(r.code, 1);
    assert!(
        r.json()["channels"][0]["error"]
            .as_str()
            .unwrap()
            .contains("without a terminal")
    );
}

/// A process killed when the test ends, however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn have(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether the desktop tests can run: they fail under CI, rather than
/// skip, when a tool is missing.
fn desktop_tools() -> bool {
    let tools = have("dbus-daemon", &["--version"])
        && have("notify-send", &["--version"])
        && have("/usr/bin/python3", &["-c", "import dbus, dbus.service, gi"]);
    if !tools {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but dbus-daemon, notify-send or python3-dbus/python3-gi is missing \
             (apt-get install dbus-daemon libnotify-bin python3-dbus python3-gi)"
        );
        eprintln!(
            "skipped: the desktop test needs dbus-daemon, notify-send, python3-dbus, python3-gi"
        );
    }
    tools
}

/// A private session bus (with `config`, else the system's session
/// configuration), stopped when the guard drops; its address.
fn session_bus(config: Option<&Path>) -> (Killed, String) {
    let mut c = Command::new("dbus-daemon");
    match config {
        Some(f) => c.arg(format!("--config-file={}", f.display())),
        None => c.arg("--session"),
    };
    let mut daemon = c
        .args(["--nofork", "--print-address=1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(daemon.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line.trim().to_string();
    assert!(addr.starts_with("unix:"), "{addr:?}");
    (Killed(daemon), addr)
}

/// `baton doctor`'s `notify.desktop` check, on the bus at `addr`.
fn desktop_check(env: &Env, addr: &str) -> serde_json::Value {
    let mut c = env.baton();
    c.args(["doctor"]).env("DBUS_SESSION_BUS_ADDRESS", addr);
    let d = Run::from(c.output().unwrap()).json();
    d["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "notify.desktop")
        .unwrap()
        .clone()
}

/// doctor asks the bus itself (baton's own D-Bus client): a bus where
/// nothing owns `org.freedesktop.Notifications` and nothing can be started
/// for it is a problem; one that can start a server is not.
#[test]
fn doctor_asks_the_bus_whether_a_notification_server_is_there() {
    if !desktop_tools() {
        return;
    }
    let env = Env::new();
    let services = env.tmp.path().join("services");
    fs::create_dir_all(&services).unwrap();
    let config = env.tmp.path().join("bus.conf");
    fs::write(
        &config,
        format!(
            "<busconfig><type>session</type><listen>unix:tmpdir={}</listen>\
             <auth>EXTERNAL</auth><servicedir>{}</servicedir>\
             <policy context=\"default\"><allow send_destination=\"*\" eavesdrop=\"true\"/>\
             <allow eavesdrop=\"true\"/><allow own=\"*\"/></policy></busconfig>",
            env.tmp.path().display(),
            services.display()
        ),
    )
    .unwrap();
    // Wanted: a problem is a warning (else information).
    user_file(&env, "[notify]\ndesktop = true\n");
    let (_daemon, addr) = session_bus(Some(&config));
    let check = desktop_check(&env, &addr);
    assert_eq!(check["ok"], false, "{check}");
    assert_eq!(check["severity"], "warning", "{check}");
    let m = check["message"].as_str().unwrap();
    assert!(
        m.contains("no program owns org.freedesktop.Notifications") && m.contains(&addr),
        "{check}"
    );
    assert!(
        check["hint"]
            .as_str()
            .unwrap()
            .contains("notification daemon"),
        "{check}"
    );

    // A server the bus starts on demand (read when the bus starts).
    fs::write(
        services.join("org.freedesktop.Notifications.service"),
        "[D-BUS Service]\nName=org.freedesktop.Notifications\nExec=/bin/false\n",
    )
    .unwrap();
    let (_daemon, addr) = session_bus(Some(&config));
    let check = desktop_check(&env, &addr);
    assert_eq!(check["ok"], true, "{check}");
    assert!(
        check["message"]
            .as_str()
            .unwrap()
            .contains("starts a notification server"),
        "{check}"
    );
}

#[test]
fn the_desktop_channel_reaches_a_real_session_bus() {
    if !desktop_tools() {
        return;
    }
    let env = Env::new();
    let (_daemon, addr) = session_bus(None);
    let out = env.tmp.path().join("notifications.jsonl");
    let listener = Command::new("/usr/bin/python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/notify_listener.py"))
        .arg(&out)
        .env("DBUS_SESSION_BUS_ADDRESS", &addr)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let _listener = Killed(listener);
    let ready = PathBuf::from(format!("{}.ready", out.display()));
    assert!(
        wait_for(Duration::from_secs(20), || ready.exists()),
        "the listener never owned the name"
    );
    user_file(&env, "[notify]\ndesktop = true\n");
    let dir = evil_dir(&env);
    let r = notify_test(&env, &dir, &[("DBUS_SESSION_BUS_ADDRESS", &addr)]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.json()["channels"][0]["ok"], true, "{}", r.stdout);
    let got = std::fs::read_to_string(&out).unwrap();
    let calls: Vec<serde_json::Value> = got
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(calls.len(), 1, "{got}");
    assert_eq!(calls[0]["app_name"], "baton");
    assert_eq!(
        calls[0]["summary"],
        "baton run test notification · notify-test"
    );
    let body = calls[0]["body"].as_str().unwrap();
    assert!(
        body.starts_with(&format!("{EVIL_CLEAN}: If you can read this")),
        "{body:?}"
    );
    assert!(!body.chars().any(char::is_control), "{body:?}");
    // doctor finds the helper, the bus, and the server that owns the name.
    let check = desktop_check(&env, &addr);
    assert_eq!(check["ok"], true, "{check}");
    let m = check["message"].as_str().unwrap();
    assert!(
        m.contains(&addr) && m.contains("a notification server owns org.freedesktop.Notifications"),
        "{check}"
    );
}

/// An HTTPS server on 127.0.0.1 (python's stdlib, a self-signed certificate
/// made by openssl) that records one POST: `https://` goes through curl,
/// told to trust the certificate by `CURL_CA_BUNDLE`.
const HTTPS_SERVER: &str = r#"
import http.server, json, os, ssl, sys
out, cert, key = sys.argv[1:4]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        with open(out, "w") as f:
            json.dump({"path": self.path, "headers": dict(self.headers), "body": body.decode()}, f)
        self.send_response(204)
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
s.socket = ctx.wrap_socket(s.socket, server_side=True)
with open(out + ".port.tmp", "w") as f:
    f.write(str(s.server_address[1]))
os.replace(out + ".port.tmp", out + ".port")
s.handle_request()
"#;

#[test]
fn https_goes_through_curl_with_the_token_in_no_argv() {
    if !(have("openssl", &["version"]) && have("curl", &["--version"])) {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but openssl or curl is missing"
        );
        eprintln!("skipped: the https test needs openssl and curl");
        return;
    }
    let env = Env::new();
    let t = env.tmp.path();
    let (cert, key) = (t.join("cert.pem"), t.join("key.pem"));
    let ok = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args([
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok, "openssl req");
    let out = t.join("request.json");
    let server = Command::new("python3")
        .args(["-c", HTTPS_SERVER])
        .arg(&out)
        .arg(&cert)
        .arg(&key)
        .spawn()
        .unwrap();
    let _server = Killed(server);
    let port_file = PathBuf::from(format!("{}.port", out.display()));
    // Written whole under another name, then renamed into place.
    assert!(wait_for(Duration::from_secs(20), || port_file.exists()));
    let port: u16 = std::fs::read_to_string(&port_file)
        .unwrap()
        .parse()
        .unwrap();
    user_file(
        &env,
        &format!(
            "[notify]\nurl = \"https://127.0.0.1:{port}/hook\"\nurl_token_env = \"BATON_TEST_NTFY\"\n"
        ),
    );
    let r = notify_test(
        &env,
        &env.work,
        &[
            ("BATON_TEST_NTFY", "tok-over-tls"),
            ("CURL_CA_BUNDLE", cert.to_str().unwrap()),
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let got: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(got["path"], "/hook");
    assert_eq!(got["headers"]["Authorization"], "Bearer tok-over-tls");
    assert_eq!(got["headers"]["Content-Type"], "application/json");
    let e: serde_json::Value = serde_json::from_str(got["body"].as_str().unwrap()).unwrap();
    assert_eq!(e["trigger"], "test");
    // curl's config file, which held the token, is gone.
    let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("baton-notify-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
