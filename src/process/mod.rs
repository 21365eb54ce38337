//! Supervising one peer process.
//!
//! Theory of operation:
//! - The peer is spawned from an argv array (never a shell) in its own process
//!   group, with the prompt written to its stdin, which is then closed.
//! - Two reader threads copy stdout and stderr, as they arrive, into the run's
//!   log files. The stdout thread also splits lines and feeds them to the
//!   agent's streaming parser, so memory stays flat however much the peer
//!   prints. A line longer than `MAX_LINE` is logged whole but parsed from
//!   its first `MAX_LINE` bytes, closed into JSON (`json_cut`); a line that
//!   is not UTF-8 is parsed with the bad bytes replaced. Both are warnings.
//! - A log that cannot be created or written (a full disk) is a warning
//!   too: the peer goes on, its output is still parsed, the result kept.
//! - A waiter thread reaps the leader and reports its exit; a signal thread
//!   forwards SIGINT/SIGTERM/SIGHUP. The supervising thread blocks on one
//!   channel with a deadline: the overall timeout, the idle timeout (no byte
//!   on stdout or stderr), or a grace period after the CLI's own "turn
//!   finished" event (codex is known to hang after it). A failure the
//!   parser is sure retrying cannot mend (a wrong key) ends the wait at
//!   once: some CLIs retry those for minutes.
//! - With a spending watch (`Limits::watch`), the supervisor also looks at
//!   what the parser has understood so far every `WATCH_EVERY` and stops the
//!   peer (`EndReason::OverBudget`) once the watch says the budget is
//!   crossed. A tick, not every line: the check clones the parser's state,
//!   and a peer that printed its last usage and went quiet is still caught.
//! - Stopping is always of the whole group: SIGTERM, a grace period, SIGKILL,
//!   reap. After the leader exits, anything left in its group (a background
//!   grandchild) is stopped the same way, so no process outlives baton.
//! - An ACP agent (the parser is an `acp::Client`) keeps its stdin: a writer
//!   thread sends what the client queues (its requests and its answers to the
//!   agent's permission requests), logs each line to `sent.log`, and closes
//!   stdin when the client says the turn is over. Until the agent answers
//!   `initialize` a handshake deadline applies. A cancel, timeout or idle
//!   timeout first sends `session/cancel` and gives the agent a moment to end
//!   its turn, then stops the group as for every peer.
//! - On Linux baton is a child subreaper: a descendant that left the group
//!   (`setsid`, a daemon) is reparented to baton when its parent dies. Those
//!   carrying this supervision's `BATON_PEER_TOKEN` are stopped the same way,
//!   and orphaned zombies are reaped at once (an init that does not reap would
//!   otherwise keep a dead group "alive" for the whole grace period).

use std::io::{self, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::agent::{CommandSpec, Failing, Outcome, Parser, ProcessExit};
use crate::error::{Error, Result};

mod acp;
mod command;
mod group;
mod interrupts;
pub mod json_cut;
mod orphans;
mod pinned;
mod pump;
mod stop;
pub mod timeouts;
mod watch;

use crate::sys::proc::become_subreaper;
pub use command::{Command, Ended, Env, Failed, Group, Shared, Wrapper, seconds};
pub use group::{group_alive, killpg, stop_group_leftovers, stop_leader};
pub use interrupts::{Forward, Interrupts, Subscriber, signal_name};
pub use orphans::PEER_TOKEN_VAR;
use orphans::{NEXT_TOKEN, stop_orphans};
pub use pinned::Pinned;
use pump::{Log, Pump, enlarge_pipe, pump_stderr, pump_stdout};
pub use stop::Stop;
use watch::over_budget;
pub use watch::{WATCH_EVERY, Watch};

/// Lines longer than this are logged whole but parsed only up to here
/// (bounded memory).
pub const MAX_LINE: usize = 64 << 20;

/// `MAX_LINE`, unless `BATON_MAX_LINE` lowers it. Internal, undocumented for
/// users (like `BATON_FINAL_GRACE_MS`): the test of a cut line need not push
/// 64 MiB through a debug build.
pub fn max_line() -> usize {
    static LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var("BATON_MAX_LINE")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .filter(|n| (1..MAX_LINE).contains(n))
            .unwrap_or(MAX_LINE)
    })
}
/// How much of stderr is kept in memory for error messages.
const STDERR_TAIL: usize = 16 << 10;

#[derive(Debug, Clone)]
pub struct Limits {
    pub timeout: Duration,
    /// `None`: no idle timeout (CLIs that print nothing until the end).
    pub idle_timeout: Option<Duration>,
    /// How long the peer may linger after its "turn finished" event.
    pub after_final: Duration,
    /// SIGTERM → SIGKILL grace.
    pub kill_grace: Duration,
    /// A spending limit to hold the peer to while it runs.
    pub watch: Option<Watch>,
    /// Which failures, shown while the CLI goes on retrying, end the run
    /// at once (`Failing::stops_by_default`).
    pub stop_on: fn(Failing) -> bool,
    /// ACP: how long the agent may take to answer `initialize`.
    pub handshake: Option<Duration>,
    /// baton's sandbox around the peer (`run::confine`), if any.
    pub wrap: Option<command::Shared>,
}

/// Why supervision ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// The peer exited on its own.
    Exited,
    Timeout,
    IdleTimeout,
    /// The CLI reported the end of its turn but did not exit; baton stopped it.
    HungAfterFinal,
    /// The CLI showed a failure retrying cannot mend while it kept
    /// retrying; baton stopped it (`Finished::stopped_on` says when, and what).
    FailureSeen,
    /// baton received this signal (Ctrl-C, SIGTERM from `baton cancel`, hang-up).
    Interrupted(i32),
    /// The usage the peer reported crossed its budget (`Limits::watch`).
    OverBudget,
    /// An ACP agent did not answer `initialize` in time.
    HandshakeTimeout,
}

#[derive(Debug)]
pub struct Finished {
    pub reason: EndReason,
    pub exit: ProcessExit,
    pub outcome: Outcome,
    pub duration: Duration,
    /// Readers that did not reach EOF (a process outside the group kept a pipe open).
    pub pipes_left_open: bool,
    /// What went wrong reading or logging the output (for the result's warnings).
    pub warnings: Vec<String>,
    /// When (after the start) the parser saw the failure that ended the
    /// run early (`EndReason::FailureSeen`), and what it was.
    pub stopped_on: Option<(Duration, Failing)>,
}

/// Where the raw streams go (`None`: nowhere, there is no run directory).
pub struct LogFiles {
    pub stdout: Option<PathBuf>,
    pub stderr: Option<PathBuf>,
    /// What baton wrote to an ACP agent (the prompt's text left out).
    pub sent: Option<PathBuf>,
}

enum Msg {
    Exited(io::Result<ExitStatus>),
    TurnFinished,
    Failing(Failing),
    Signal(i32),
    Eof,
}

/// Look a program up on PATH the way `execvp` would (no shell involved).
pub fn find_program(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if name.contains('/') {
        return Some(PathBuf::from(name));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| {
            p.metadata()
                .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false)
        })
}

/// Spawn `spec` in `cwd` and supervise it to the end.
///
/// `on_spawn` receives the child's pid (= its process group id) as soon as it
/// exists, so a job runner can record it.
// Each argument is a different concern its callers (run, ask, jobs) decide.
#[allow(clippy::too_many_arguments)]
pub fn supervise(
    spec: &CommandSpec,
    program: &Path,
    cwd: &Path,
    logs: &LogFiles,
    mut parser: Parser,
    limits: &Limits,
    interrupts: &mut Interrupts,
    on_spawn: &mut dyn FnMut(u32),
) -> Result<Finished> {
    let duplex = parser.acp().is_some();
    let notes: Arc<Mutex<Vec<String>>> = Arc::default();
    let open_log = |p: &Option<PathBuf>| {
        let p = p.as_ref()?;
        match crate::fsutil::create_private(p) {
            Ok(f) => Some(f),
            Err(e) => {
                notes
                    .lock()
                    .unwrap()
                    .push(format!("the peer's output is not saved: {e}"));
                None
            }
        }
    };
    let stdout_log = open_log(&logs.stdout).map(|f| Log::new(f, "stdout.log", &notes));
    let stderr_log = open_log(&logs.stderr).map(|f| Log::new(f, "stderr.log", &notes));

    let mut cmd = Command::new(program)
        .args(&spec.args)
        .current_dir(cwd)
        .stdin(if spec.stdin.is_some() || duplex {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for k in &spec.env_remove {
        cmd = cmd.env_remove(k);
    }
    for (k, v) in &spec.env_set {
        cmd = cmd.env(k, v);
    }
    if let Some(w) = &limits.wrap {
        cmd = cmd.wrap(Box::new(w.clone()));
    }

    // Marks the peer and every descendant that keeps its environment, so
    // the ones that escape the group can be told from other children.
    let token = format!(
        "{}.{}",
        std::process::id(),
        NEXT_TOKEN.fetch_add(1, Ordering::Relaxed)
    );
    let cmd = cmd.env(PEER_TOKEN_VAR, &token);
    become_subreaper();
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|e| Error::Spawn {
        binary: spec.program.clone(),
        source: e,
    })?;
    let pid = child.id();
    let pgid = pid as libc::pid_t;
    on_spawn(pid);

    let (tx, rx) = mpsc::channel::<Msg>();
    let last_activity = Arc::new(AtomicU64::new(0));
    if duplex && let Some(stdin) = child.stdin.take() {
        let sent_log = logs
            .sent
            .as_ref()
            .and_then(|p| crate::fsutil::create_private(p).ok());
        let (out, outbox) = mpsc::channel();
        thread::spawn(move || acp::write_outbox(stdin, outbox, sent_log));
        if let Some(c) = parser.acp() {
            c.start(out);
        }
    }
    let parser = Arc::new(Mutex::new(Some(parser)));
    let stderr_tail = Arc::new(Mutex::new(Vec::<u8>::new()));

    if let (Some(mut stdin), Some(prompt)) = (child.stdin.take(), spec.stdin.clone()) {
        // A prompt that fits in the empty pipe is written at once (it cannot
        // block); a longer one by a thread, as the peer reads it. A peer that
        // exits without reading gives EPIPE; that is its business.
        if prompt.len() <= enlarge_pipe(&stdin) {
            let _ = stdin.write_all(prompt.as_bytes());
        } else {
            thread::spawn(move || {
                let _ = stdin.write_all(prompt.as_bytes());
            });
        }
    }

    let stdout = child.stdout.take().expect("piped stdout");
    enlarge_pipe(&stdout);
    let parsing = Arc::new(AtomicBool::new(false));
    {
        let tx = tx.clone();
        let act = last_activity.clone();
        let parser = parser.clone();
        let notes = notes.clone();
        let parsing = parsing.clone();
        thread::spawn(move || {
            let pump = Pump {
                activity: &act,
                parsing: &parsing,
                started,
                tx: &tx,
                notes: &notes,
            };
            pump_stdout(stdout, stdout_log, &parser, &pump);
            let _ = tx.send(Msg::Eof);
        });
    }
    let stderr = child.stderr.take().expect("piped stderr");
    {
        let tx = tx.clone();
        let act = last_activity.clone();
        let tail = stderr_tail.clone();
        let parser = parser.clone();
        thread::spawn(move || {
            pump_stderr(stderr, stderr_log, &tail, &parser, &act, started, &tx);
            let _ = tx.send(Msg::Eof);
        });
    }
    {
        let tx = tx.clone();
        thread::spawn(move || {
            let _ = tx.send(Msg::Exited(child.wait()));
        });
    }
    let _subscription = {
        let tx = tx.clone();
        interrupts.subscribe(Box::new(move |s| {
            let _ = tx.send(Msg::Signal(s));
        }))
    };
    // Subscribing first, then checking, means no signal falls in between.
    if let Some(s) = interrupts.fired() {
        let _ = tx.send(Msg::Signal(s));
    }
    drop(tx);

    let deadline = started + limits.timeout;
    let mut watch_at = limits.watch.as_ref().map(|_| started + WATCH_EVERY);
    let mut handshake = limits.handshake.map(|d| started + d);
    let mut final_at: Option<Instant> = None;
    let mut stopped_on: Option<(Duration, Failing)> = None;
    let mut status: Option<io::Result<ExitStatus>> = None;
    let mut eofs = 0;
    let reason = loop {
        let now = Instant::now();
        let idle_deadline = limits
            .idle_timeout
            .map(|d| started + Duration::from_millis(last_activity.load(Ordering::Relaxed)) + d);
        let hang_deadline = final_at.map(|t| t + limits.after_final);
        let next = [
            Some(deadline),
            idle_deadline,
            hang_deadline,
            watch_at,
            handshake,
        ]
        .into_iter()
        .flatten()
        .min()
        .expect("deadline is always set");
        if let (Some(at), Some(w)) = (watch_at, &limits.watch)
            && now >= at
        {
            if over_budget(&parser, w) {
                break EndReason::OverBudget;
            }
            watch_at = Some(now + WATCH_EVERY);
            continue;
        }
        if now >= next {
            if now >= deadline {
                break EndReason::Timeout;
            }
            if handshake.is_some_and(|d| now >= d) {
                if !acp::initialized(&parser) {
                    break EndReason::HandshakeTimeout;
                }
                handshake = None;
                continue;
            }
            if hang_deadline.is_some_and(|d| now >= d) {
                break EndReason::HungAfterFinal;
            }
            if idle_deadline.is_some_and(|d| now >= d) {
                break EndReason::IdleTimeout;
            }
        }
        match rx.recv_timeout(next.saturating_duration_since(now)) {
            Ok(Msg::Exited(s)) => {
                status = Some(s);
                break EndReason::Exited;
            }
            Ok(Msg::TurnFinished) => {
                final_at.get_or_insert_with(Instant::now);
            }
            Ok(Msg::Failing(f)) if (limits.stop_on)(f) => {
                stopped_on = Some((started.elapsed(), f));
                break EndReason::FailureSeen;
            }
            Ok(Msg::Failing(_)) => {}
            Ok(Msg::Signal(s)) => break EndReason::Interrupted(s),
            Ok(Msg::Eof) => eofs += 1,
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                return Err(Error::Internal("supervisor channel closed".into()));
            }
        }
    };

    // An ACP agent is asked to end its turn first; its answer (or its exit)
    // ends the wait early.
    if status.is_none()
        && reason != EndReason::Exited
        && reason != EndReason::HungAfterFinal
        && acp::cancel(&parser)
    {
        let until = Instant::now() + acp::CANCEL_GRACE;
        while let Ok(m) = rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
            match m {
                Msg::Exited(s) => {
                    status = Some(s);
                    break;
                }
                Msg::Eof => eofs += 1,
                Msg::TurnFinished => break,
                Msg::Signal(_) | Msg::Failing(_) => {}
            }
        }
    }
    if status.is_none() {
        status = Some(stop_leader(pgid, limits.kill_grace, &rx, |m| match m {
            Msg::Exited(s) => Some(s),
            Msg::Eof => {
                eofs += 1;
                None
            }
            _ => None,
        }));
    }
    let duration = started.elapsed();
    // Whatever the leader left behind in its group goes too, and so does
    // anything that left the group (setsid) and was orphaned to baton.
    stop_group_leftovers(pgid, limits.kill_grace);
    stop_orphans(&token, limits.kill_grace);

    // The pipes close once every process holding them is gone. Something that
    // escaped the group (setsid) may keep one open: do not wait for it forever.
    // A pump still parsing what it read (a huge line) is not waiting on the
    // pipe: the two seconds count from when it is idle again.
    let mut pipes_deadline = Instant::now() + Duration::from_secs(2);
    while eofs < 2 {
        match rx.recv_timeout(pipes_deadline.saturating_duration_since(Instant::now())) {
            Ok(Msg::Eof) => eofs += 1,
            Ok(_) => {}
            Err(_) if parsing.load(Ordering::Relaxed) => {
                pipes_deadline = Instant::now() + Duration::from_secs(2);
            }
            Err(_) => break,
        }
    }

    let status = status.expect("status set above");
    let code = match &status {
        Ok(s) => s.code(),
        Err(_) => None,
    };
    let _ = status.as_ref().map(|s| s.signal());
    let stderr_tail = {
        let t = stderr_tail.lock().unwrap();
        String::from_utf8_lossy(&t).into_owned()
    };
    let exit = ProcessExit { code, stderr_tail };
    let outcome = {
        let mut guard = parser.lock().unwrap();
        match guard.take() {
            Some(p) => p.finish(&exit),
            None => return Err(Error::Internal("parser taken twice".into())),
        }
    };
    let warnings = std::mem::take(&mut *notes.lock().unwrap());
    Ok(Finished {
        reason,
        exit,
        outcome,
        duration,
        pipes_left_open: eofs < 2,
        warnings,
        stopped_on,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_program_uses_path() {
        assert!(find_program("sh").is_some());
        assert!(find_program("definitely-not-a-program-xyz").is_none());
    }
}
