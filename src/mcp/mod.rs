//! `baton mcp`: THE MODEL CONTEXT PROTOCOL SERVER (stdio), a surface beside
//! the command line (docs/mcp.md).
//!
//! Theory of operation:
//! - The tools are baton's commands. `cli` describes each one's flags from
//!   its clap definition (`input::Field`); a tool's input schema is made from
//!   those, and a call's arguments become that command's argv (`input::argv`),
//!   which the command line then validates as if a person had typed it. No
//!   feature is reimplemented here.
//! - Each call runs as a child `baton` process (this same binary, no shell,
//!   its own process group): configuration is per process and per project
//!   (`config::active()`, the cwd's `baton.toml`) and signal handling is
//!   process-global (`process::Interrupts`), so one process per call keeps
//!   every call exactly what the CLI would do, and concurrent calls apart.
//!   The child reads its argv from stdin (`child`), never from its command
//!   line, so no value is too long for one (E2BIG) or visible to others.
//!   The child's one JSON line is the tool's `structuredContent`; the
//!   tool's `outputSchema` is the top level of that command's published
//!   schema (`shape`).
//! - Progress: the child runs with `BATON_PROGRESS=lines` and writes the
//!   activity line of its live status (`view::progress`) to stderr; the
//!   server sends each change as `notifications/progress`, at most four a
//!   second, when the client gave a progress token. For `job_wait` the
//!   server follows the job's log itself (`follow`): the same reducers.
//! - Cancel (`notifications/cancelled`) or the client's going (stdin closed)
//!   sends SIGTERM to the child's group: the child's own supervisor stops
//!   the peer's group and records `cancelled`; SIGKILL follows if it lingers.
//!   A server killed outright takes its children with it (parent-death signal).
//! - Safety: every child gets `BATON_MAX_ACCESS` (the server's cap, checked
//!   where every run is planned), `BATON_ALLOW_TEST_CMD` and the inherited
//!   recursion depth (`guard`). Before a child starts the server refuses a
//!   `test_cmd` it does not allow (a shell command baton runs as the user,
//!   unconfined where baton's sandbox is off or missing) and a `cwd` or file outside its roots (`roots`).
//!   stdout carries only protocol lines (`transport`); children's stderr
//!   goes on to the server's stderr.

mod announce;
mod child;
mod follow;
mod guard;
pub mod input;
mod reply;
mod roots;
mod server;
mod shape;
pub mod tools;
mod transport;
mod wording;

use std::sync::atomic::Ordering;
use std::time::Duration;

use rmcp::ServiceExt;

pub use child::argv_from_stdin;
pub use guard::Options;
pub use server::instructions;

use crate::error::{Error, Result};
use crate::run::{ALLOW_TEST_CMD_VAR, MAX_ACCESS_VAR};

/// How long the server waits, once the client is gone, for its calls'
/// children to stop their peers.
const DRAIN: Duration = Duration::from_secs(15);

/// The environment every child gets.
fn child_env(options: &Options) -> Result<Vec<(String, String)>> {
    let cap = guard::cap(options)?;
    // Set either way: a `1` this server inherited must not outlive a
    // server that does not allow test commands.
    let test_cmd = if guard::test_cmd_allowed(options)? {
        "1"
    } else {
        "0"
    };
    Ok(vec![
        ("BATON_PROGRESS".into(), "lines".into()),
        (MAX_ACCESS_VAR.into(), cap.as_str().into()),
        (ALLOW_TEST_CMD_VAR.into(), test_cmd.into()),
        ("BATON_DEPTH".into(), guard::inherited_depth().to_string()),
    ])
}

/// The MCP tools as listed, for a server started with `options`.
pub fn listed(tools: &[tools::Described], options: &Options) -> Result<Vec<rmcp::model::Tool>> {
    let cap = guard::cap(options)?;
    let mut so_far = tools::SoFar::default();
    Ok(tools.iter().map(|t| t.tool(cap, &mut so_far)).collect())
}

/// Serve `tools` over stdin/stdout until the client closes stdin.
pub fn serve(options: &Options, tools: Vec<tools::Described>) -> Result<i32> {
    let env = child_env(options)?;
    let policy = guard::Policy::new(options)?;
    let listed = listed(&tools, options)?;
    let program = std::env::current_exe()
        .map_err(|e| Error::io("finding baton's own binary to run calls with", e))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("starting the MCP server", e))?;
    rt.block_on(async move {
        let (transport, gone) = transport::Stdio::new();
        let server = server::Server::new(policy, tools, listed, program, env, gone);
        let active = server.active();
        // A client that leaves before the handshake ends the server quietly.
        if let Ok(running) = server.serve(transport).await {
            let _ = running.waiting().await;
        }
        let until = tokio::time::Instant::now() + DRAIN;
        while active.load(Ordering::SeqCst) > 0 && tokio::time::Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    Ok(0)
}
