//! Inside bubblewrap's network namespace, `--network provider`'s child has
//! only a loopback: the helper listens on `127.0.0.1:PORT` there (the
//! address `HTTPS_PROXY` names) and relays each connection to the proxy's
//! unix socket, which the sandbox shows the child (`Policy::proxy_socket`).
//!
//! The listener is bound before the helper confines itself (Landlock then
//! refuses TCP binds) and before it forks, so a client that connects at
//! once waits in the backlog rather than failing. The forked relay lives in
//! the sandbox's PID namespace and the peer's process group: it ends with
//! the run.

use std::net::TcpListener;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use super::sys;

/// Bind, fork the relay, return in the parent.
pub fn start(port: u16, socket: &Path) -> Result<(), String> {
    let listener = TcpListener::bind(("127.0.0.1", port))
        .map_err(|e| format!("the proxy relay cannot listen on 127.0.0.1:{port}: {e}"))?;
    match sys::fork().map_err(|e| format!("forking the proxy relay: {e}"))? {
        Some(_) => Ok(()),
        None => {
            let _ = sys::stdio_to_null();
            relay_all(listener, socket.to_path_buf());
            std::process::exit(0)
        }
    }
}

fn relay_all(listener: TcpListener, socket: PathBuf) {
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        let socket = socket.clone();
        let _ = std::thread::Builder::new().spawn(move || {
            if let Ok(up) = UnixStream::connect(&socket) {
                super::proxy::relay(conn, up);
            }
        });
    }
}
