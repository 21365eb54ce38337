//! The proxy of `--network provider`: baton runs it for the length of one
//! confined run, and it lets the child reach only the hosts of its
//! allowlist (the agent's provider, the base URLs the run passes, the
//! user's `--network-host`s).
//!
//! Theory of operation: one thread accepts on a unix socket (bubblewrap:
//! the child has no network, and baton's helper relays its
//! `127.0.0.1:PORT` to this socket, `forward`), and one on a TCP port of
//! the host's loopback (Landlock: the child may connect to that port only).
//! Each client gets a thread: its head is read (at most
//! [`head::MAX_HEAD`] bytes, with a deadline), parsed, checked; a refused
//! target gets 403 and is recorded; an allowed one is dialled and the bytes
//! are copied both ways until either side closes. Threads, not tokio: a
//! run has a handful of connections and the proxy must stop with a drop.

pub mod allow;
pub mod head;

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream, ToSocketAddrs};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use allow::{Allowlist, Rule, Target};

/// How many distinct refused targets a result lists.
pub const REFUSED_CAP: usize = 16;
/// A client that has not sent its head by then is dropped.
const HEAD_DEADLINE: Duration = Duration::from_secs(30);
const DIAL_DEADLINE: Duration = Duration::from_secs(15);

/// What the proxy turned away.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refused {
    /// Distinct targets (`host:port`), in order, at most [`REFUSED_CAP`].
    pub hosts: Vec<String>,
    /// Every refused request.
    pub count: u64,
}

struct Shared {
    allow: Allowlist,
    refused: Mutex<Refused>,
    stop: AtomicBool,
}

impl Shared {
    fn refuse(&self, t: &Target) {
        let mut r = self.refused.lock().unwrap_or_else(|p| p.into_inner());
        r.count += 1;
        let name = t.to_string();
        if r.hosts.len() < REFUSED_CAP && !r.hosts.contains(&name) {
            r.hosts.push(name);
        }
    }
}

/// A running proxy; dropping it stops accepting (connections under way
/// end when either side closes) and removes the socket.
pub struct Proxy {
    shared: Arc<Shared>,
    port: u16,
    socket: PathBuf,
}

impl Proxy {
    /// Listen on `socket` (created; its directory must be private) and on
    /// a free port of 127.0.0.1.
    pub fn start(allow: Allowlist, socket: &Path) -> io::Result<Proxy> {
        let tcp = TcpListener::bind(("127.0.0.1", 0))?;
        let port = tcp.local_addr()?.port();
        let unix = UnixListener::bind(socket)?;
        let shared = Arc::new(Shared {
            allow,
            refused: Mutex::default(),
            stop: AtomicBool::new(false),
        });
        let s = shared.clone();
        std::thread::Builder::new()
            .name("baton-proxy-tcp".into())
            .spawn(move || accept_loop(|| tcp.accept().map(|(c, _)| c), &s))?;
        let s = shared.clone();
        std::thread::Builder::new()
            .name("baton-proxy-unix".into())
            .spawn(move || accept_loop(|| unix.accept().map(|(c, _)| c), &s))?;
        Ok(Proxy {
            shared,
            port,
            socket: socket.to_path_buf(),
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    pub fn refused(&self) -> Refused {
        self.shared
            .refused
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake both accept calls; each sees the flag and returns.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        let _ = UnixStream::connect(&self.socket);
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// A client or upstream connection the proxy can split in two.
pub(super) trait Duplex: Read + Write + Send + Sized + 'static {
    fn split(&self) -> io::Result<Self>;
    fn close_write(&self);
    fn deadline(&self, d: Option<Duration>) -> io::Result<()>;
}

impl Duplex for TcpStream {
    fn split(&self) -> io::Result<Self> {
        self.try_clone()
    }
    fn close_write(&self) {
        let _ = self.shutdown(Shutdown::Write);
    }
    fn deadline(&self, d: Option<Duration>) -> io::Result<()> {
        self.set_read_timeout(d)
    }
}

impl Duplex for UnixStream {
    fn split(&self) -> io::Result<Self> {
        self.try_clone()
    }
    fn close_write(&self) {
        let _ = self.shutdown(Shutdown::Write);
    }
    fn deadline(&self, d: Option<Duration>) -> io::Result<()> {
        self.set_read_timeout(d)
    }
}

fn accept_loop<S: Duplex>(mut accept: impl FnMut() -> io::Result<S>, shared: &Arc<Shared>) {
    loop {
        let conn = accept();
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(conn) = conn else {
            // EMFILE and the like: back off rather than spin.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        let s = shared.clone();
        let _ = std::thread::Builder::new()
            .name("baton-proxy-conn".into())
            .spawn(move || serve(conn, &s));
    }
}

fn reply<S: Write>(client: &mut S, status: &str, why: &str) {
    let body = format!("baton: {why}\n");
    // One write: `write!` on the socket would send each piece of the
    // format apart (a client reading the status line once got half of it).
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = client.write_all(head.as_bytes());
}

/// One client: read its head, decide, relay.
fn serve<S: Duplex>(mut client: S, shared: &Shared) {
    if client.deadline(Some(HEAD_DEADLINE)).is_err() {
        return;
    }
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(end) = head::head_end(&buf) {
            break end;
        }
        if buf.len() > head::MAX_HEAD {
            return reply(
                &mut client,
                "431 Request Header Fields Too Large",
                "head too large",
            );
        }
        match client.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let request = match head::parse(&buf[..end]) {
        Ok(r) => r,
        Err(head::Bad::TooLarge) => {
            return reply(
                &mut client,
                "431 Request Header Fields Too Large",
                "head too large",
            );
        }
        Err(head::Bad::Line(why)) => return reply(&mut client, "400 Bad Request", &why),
    };
    let target = request.target().clone();
    if !shared.allow.allows(&target) {
        shared.refuse(&target);
        let why = format!("{target} is not an allowed host of this run (--network provider)");
        return reply(&mut client, "403 Forbidden", &why);
    }
    let Some(upstream) = dial(&target) else {
        return reply(
            &mut client,
            "502 Bad Gateway",
            &format!("cannot reach {target}"),
        );
    };
    let mut upstream = upstream;
    let sent = match &request {
        head::Request::Connect(_) => client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .and_then(|_| upstream.write_all(&buf[end..])),
        head::Request::Forward { head, .. } => upstream
            .write_all(head)
            .and_then(|_| upstream.write_all(&buf[end..])),
    };
    if sent.is_err() || client.deadline(None).is_err() {
        return;
    }
    relay(client, upstream);
}

fn dial(t: &Target) -> Option<TcpStream> {
    let addrs = (t.host.as_str(), t.port).to_socket_addrs().ok()?;
    addrs
        .into_iter()
        .find_map(|a| TcpStream::connect_timeout(&a, DIAL_DEADLINE).ok())
}

/// Copy both ways; each direction's end closes the other side's writing.
pub(super) fn relay<C: Duplex, U: Duplex>(client: C, upstream: U) {
    let (Ok(mut c_read), Ok(mut u_read)) = (client.split(), upstream.split()) else {
        return;
    };
    let (mut c_write, mut u_write) = (client, upstream);
    let up = std::thread::spawn(move || {
        let _ = io::copy(&mut c_read, &mut u_write);
        u_write.close_write();
    });
    let _ = io::copy(&mut u_read, &mut c_write);
    c_write.close_write();
    let _ = up.join();
}

#[cfg(test)]
mod tests;
