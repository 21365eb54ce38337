//! `baton serve`: the job store as a local web page — the fleet, one job's
//! live transcript, cancel and continue — for the browser on this machine only.
//!
//! Theory of operation:
//! - One current-thread tokio runtime serves HTTP/1.1 on 127.0.0.1 (a port
//!   the OS picks unless `--port`). On start it prints one JSON line
//!   `{"url", "port", "pid"}`; the URL carries a fresh 256-bit token in its
//!   fragment (`security`), which the page trades once for a session it
//!   keeps in its own origin-scoped storage and sends as a header (no cookie).
//! - `repos` lists the repositories shown: this project, or with `--all`
//!   every project in the state directory (a request names one by its key,
//!   looked up in that listing). `fleets` watches their stores from one
//!   thread (one `fleet::Watcher` each, woken by `wake`) and publishes only
//!   changes; `sse` turns them into events per page, and tails
//!   one job's log for the page's detail pane.
//! - `routes` holds the page (embedded, `assets/`), the JSON routes and the
//!   two actions, which call what `baton cancel` / `baton continue` call.
//! - SIGINT or SIGTERM stops the server (exit 0); jobs are not touched.

mod clock;
mod elsewhere;
mod fleet;
mod fleets;
mod groups;
mod repos;
mod routes;
mod security;
mod sse;
mod wake;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::output::{self, Mode};
pub use repos::Scope;

/// What `baton serve` was asked for.
#[derive(Debug, Clone, Default)]
pub struct ServeRequest {
    /// The port on 127.0.0.1 (`None`: one the OS picks).
    pub port: Option<u16>,
    /// Open the page in the default browser.
    pub open: bool,
    /// This project, or every project (`--all`, `--repo PATTERN`).
    pub scope: Scope,
}

/// The line printed once the server listens.
#[derive(Debug, Serialize)]
struct Started {
    url: String,
    port: u16,
    pid: u32,
}

/// `baton serve`: serve until SIGINT or SIGTERM.
pub fn serve(req: ServeRequest, mode: Mode) -> Result<i32> {
    let here = match req.scope {
        Scope::Here => {
            let cwd = std::env::current_dir()
                .map_err(|e| Error::io("reading the current directory", e))?;
            Some(crate::fsutil::project_root(&cwd))
        }
        Scope::All { .. } => None,
    };
    let many = fleets::Many::new(req.scope.clone(), here)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("starting the server's runtime", e))?;
    let r = rt.block_on(run(many, req, mode));
    // Open event streams and their tail threads are not waited for.
    rt.shutdown_timeout(Duration::from_millis(200));
    r
}

async fn run(many: fleets::Many, req: ServeRequest, mode: Mode) -> Result<i32> {
    let want = req.port.unwrap_or(0);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", want))
        .await
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AddrInUse => Error::usage_hint(
                format!("port {want} on 127.0.0.1 is in use"),
                "choose another with `--port`, or leave it out to let the OS pick one",
            ),
            _ => Error::io(format!("listening on 127.0.0.1:{want}"), e),
        })?;
    let port = listener
        .local_addr()
        .map_err(|e| Error::io("reading the server's address", e))?
        .port();
    let sec = Arc::new(security::Secrets::new(port)?);
    let url = format!("http://127.0.0.1:{port}/#token={}", sec.token);
    let fleet = fleets::spawn(many);
    let children = Children::default();
    let app = routes::App {
        sec,
        fleet,
        children: children.clone(),
    };
    match mode {
        Mode::Json => output::json_line(&Started {
            url: url.clone(),
            port,
            pid: std::process::id(),
        })?,
        Mode::Text => output::text(&format!("{url}\n"))?,
    }
    eprintln!("baton serve: open {url}  (Ctrl-C stops the server; jobs keep running)");
    if req.open {
        open_browser(&url, &children);
    }
    tokio::spawn(children.clone().reap_forever());
    let server = axum::serve(listener, routes::router(app));
    tokio::select! {
        r = server => r.map_err(|e| Error::io("serving HTTP", e))?,
        () = stopped() => {}
    }
    Ok(0)
}

/// SIGINT or SIGTERM.
async fn stopped() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        // Without handlers the default action (exit) still stops us.
        return std::future::pending().await;
    };
    tokio::select! {
        _ = int.recv() => {}
        _ = term.recv() => {}
    }
}

/// `--open`: the platform's opener, with the URL as its one argument (no shell).
fn open_browser(url: &str, children: &Children) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    // In baton's group and without a parent-death signal, as it always
    // was: the opener hands the URL to a browser that is the user's.
    let spawned = crate::process::Command::new(opener)
        .arg(url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .group(crate::process::Group::Inherit)
        .parent_death(None)
        .spawn();
    match spawned {
        Ok(c) => children.add(c.id()),
        Err(e) => {
            eprintln!("baton serve: could not run `{opener}` ({e}); open the URL above by hand")
        }
    }
}

/// Children this long-lived process started and never waits for (job
/// runners started by `continue`, the browser opener): reaped by pid, never
/// with `waitpid(-1)`, which would steal the status of a child someone
/// else is waiting for.
#[derive(Debug, Clone, Default)]
pub struct Children(Arc<Mutex<Vec<u32>>>);

impl Children {
    pub fn add(&self, pid: u32) {
        if let Ok(mut v) = self.0.lock() {
            v.push(pid);
        }
    }

    async fn reap_forever(self) {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            if let Ok(mut v) = self.0.lock() {
                v.retain(|pid| {
                    // Kept while still running.
                    !crate::sys::proc::reap(*pid as libc::pid_t)
                });
            }
        }
    }
}
