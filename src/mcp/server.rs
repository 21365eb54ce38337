//! The MCP handler: `tools/list` from the described tools, `tools/call` as a
//! child `baton` process followed to its end, with progress and cancel.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

#[allow(deprecated)] // MCP logging: see `announce`.
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, InitializeResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::agent::Agent;

use super::announce::Announcer;
use super::child::{self, Ended, Event, Spawn};
use super::follow::JobLog;
use super::guard::Policy;
use super::tools::Described;
use super::{input, reply};

/// Progress notifications at most this often (a few a second).
const PROGRESS_EVERY: Duration = Duration::from_millis(250);
/// After SIGTERM, how long the child has to stop its peer (which gets
/// `run::KILL_GRACE` itself) before its group is killed.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// What the `instructions` of the handshake say: which agents there are
/// (from the agent table), when to use `run` with `async` + `job_wait`, and this
/// server's limits.
pub fn instructions(policy: &Policy) -> String {
    let agents: Vec<&str> = Agent::ALL.iter().map(|a| a.name()).collect();
    let test_cmd = if policy.test_cmd {
        ""
    } else {
        " This server refuses `test_cmd`."
    };
    format!(
        "baton delegates coding tasks to peer agent CLIs ({}; `agents` lists which are \
installed) and returns one JSON result. `run` blocks until the peer ends, which can take many \
minutes: when your tool calls time out sooner, call it with `async: true` (returns a job id \
at once), then `job_wait` with a `timeout` below your limit, again while the status is `running`. `ask` \
gets read-only advice. Calls work in {} (a `cwd` must be inside).{test_cmd}",
        agents.join(", "),
        policy.roots.listed(),
    )
}

pub struct Server {
    policy: Policy,
    tools: Vec<Described>,
    listed: Vec<Tool>,
    program: PathBuf,
    env: Vec<(String, String)>,
    gone: watch::Receiver<bool>,
    active: Arc<AtomicUsize>,
    /// Announces the end of every job a call started.
    announcer: Announcer,
}

/// Counts a call in flight until dropped.
struct InFlight(Arc<AtomicUsize>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Server {
    pub fn new(
        policy: Policy,
        tools: Vec<Described>,
        listed: Vec<Tool>,
        program: PathBuf,
        env: Vec<(String, String)>,
        gone: watch::Receiver<bool>,
    ) -> Server {
        Server {
            policy,
            tools,
            listed,
            program,
            env,
            announcer: Announcer::start(gone.clone()),
            gone,
            active: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Calls still in flight (the server waits for them before it exits).
    pub fn active(&self) -> Arc<AtomicUsize> {
        self.active.clone()
    }

    /// Start the child and follow it to its end: its activity as progress
    /// (when the client gave a token), a cancel or the client's going as
    /// SIGTERM to the child's group, SIGKILL if it lingers.
    async fn follow(
        &self,
        s: Spawn,
        token: Option<ProgressToken>,
        mut job_log: Option<JobLog>,
        ctx: &RequestContext<RoleServer>,
    ) -> Ended {
        self.active.fetch_add(1, Ordering::SeqCst);
        let _in_flight = InFlight(self.active.clone());
        let (tx, mut rx) = mpsc::unbounded_channel();
        child::start(s, tx);
        let mut gone = self.gone.clone();
        let mut pid: Option<u32> = None;
        let mut stopping: Option<Instant> = None;
        let mut killed = false;
        let mut pending: Option<String> = None;
        let mut sent_at: Option<Instant> = None;
        let mut sent = 0u32;
        let far = Instant::now() + Duration::from_secs(365 * 24 * 3600);
        let mut last_seen = String::new();
        let mut tick = tokio::time::interval(PROGRESS_EVERY);
        loop {
            let flush_at = sent_at.map_or_else(Instant::now, |t| t + PROGRESS_EVERY);
            let kill_at = stopping.map_or(far, |t| t + STOP_GRACE);
            tokio::select! {
                ev = rx.recv() => match ev {
                    Some(Event::Started(p)) => {
                        pid = Some(p);
                        if stopping.is_some() {
                            signal(p, libc::SIGTERM);
                        }
                    }
                    Some(Event::Activity(a)) => pending = Some(a),
                    Some(Event::Ended(e)) => return e,
                    None => return Ended {
                        spawn_error: Some("the call's thread ended without a result".into()),
                        ..Ended::default()
                    },
                },
                _ = ctx.ct.cancelled(), if stopping.is_none() => {
                    stopping = Some(Instant::now());
                    if let Some(p) = pid {
                        signal(p, libc::SIGTERM);
                    }
                }
                _ = client_gone(&mut gone), if stopping.is_none() => {
                    stopping = Some(Instant::now());
                    if let Some(p) = pid {
                        signal(p, libc::SIGTERM);
                    }
                }
                _ = tokio::time::sleep_until(flush_at), if pending.is_some() && token.is_some() => {
                    if let (Some(t), Some(msg)) = (&token, pending.take()) {
                        sent += 1;
                        sent_at = Some(Instant::now());
                        let p = ProgressNotificationParam::new(t.clone(), f64::from(sent))
                            .with_message(msg);
                        let _ = ctx.peer.notify_progress(p).await;
                    }
                }
                _ = tick.tick(), if job_log.is_some() && token.is_some() => {
                    if let Some(a) = job_log.as_mut().and_then(JobLog::poll)
                        && a != last_seen
                    {
                        last_seen.clone_from(&a);
                        pending = Some(a);
                    }
                }
                _ = tokio::time::sleep_until(kill_at), if stopping.is_some() && !killed => {
                    killed = true;
                    if let Some(p) = pid {
                        signal(p, libc::SIGKILL);
                    }
                }
            }
        }
    }
}

/// Resolves once the client is gone (or the transport that tells it is).
async fn client_gone(rx: &mut watch::Receiver<bool>) {
    let _ = rx.wait_for(|g| *g).await;
}

/// Signal the child's whole group (it leads it).
fn signal(pid: u32, sig: i32) {
    crate::process::killpg(pid as libc::pid_t, sig);
}

impl ServerHandler for Server {
    #[allow(deprecated)] // the `logging` capability: see `announce`.
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_logging()
                .build(),
        )
        .with_server_info(Implementation::new("baton", env!("CARGO_PKG_VERSION")))
        .with_instructions(instructions(&self.policy))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.listed.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(t) = self.tools.iter().find(|t| t.def.name == request.name) else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{}`", request.name),
                None,
            ));
        };
        let mut args = request.arguments.unwrap_or_default();
        if let Err((message, hint)) = self.policy.allows(&t.fields, &mut args) {
            return Ok(reply::tool_error("access_capped", &message, Some(&hint)).into());
        }
        let flags = match input::argv(&t.fields, t.def.also_required, &args) {
            Ok(a) => a,
            Err(m) => {
                return Ok(
                    reply::tool_error("usage", &m, Some("see the tool's input schema")).into(),
                );
            }
        };
        let mut argv: Vec<std::ffi::OsString> = t.def.path.iter().map(Into::into).collect();
        argv.extend(flags);
        let token = t
            .def
            .progress
            .then(|| context.meta.get_progress_token())
            .flatten();
        let spawn = Spawn {
            program: self.program.clone(),
            argv,
            env: self.env.clone(),
        };
        // job_wait: the job's own log, read here (the child only waits).
        let job_log = (t.def.name == "job_wait" && token.is_some())
            .then(|| {
                args.get("id")
                    .and_then(|v| v.as_str())
                    .and_then(JobLog::open)
            })
            .flatten();
        let ended = self.follow(spawn, token, job_log, &context).await;
        let reply = reply::from_child(&ended);
        if let Some(s) = &reply.structured_content {
            let asynchronous = args.get("async").and_then(|v| v.as_bool()) == Some(true);
            self.announcer
                .started(t.def.name, asynchronous, s, &context.peer);
        }
        Ok(reply.into())
    }

    #[allow(deprecated)] // MCP logging: see `announce`.
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.announcer.set_level(request.level);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_instructions_name_every_agent() {
        let policy = Policy {
            test_cmd: false,
            roots: super::super::roots::Roots::new(&[]).unwrap(),
        };
        let text = instructions(&policy);
        for a in Agent::ALL {
            assert!(text.contains(a.name()), "{} is not in: {text}", a.name());
        }
        assert!(text.contains("refuses `test_cmd`"), "{text}");
        let here = std::env::current_dir().unwrap().canonicalize().unwrap();
        assert!(text.contains(&here.display().to_string()), "{text}");
    }
}
