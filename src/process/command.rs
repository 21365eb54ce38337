//! The one launcher: every child baton starts is made by `Command`.
//!
//! Theory of operation: a `Command` is an argv array (never a shell), an
//! environment to change, where its three streams go, and how it is held:
//! - its own process group (`Group::Own`, the default), so it and whatever
//!   it forks are signalled and stopped as one; a background runner takes a
//!   session of its own instead (`Group::Session`, `detach`), git stays in
//!   baton's (`Group::Inherit`: a short call waited on at once);
//! - stdin closed unless given (`Stdio::null()` by default: a CLI that reads
//!   its terminal must not hang baton);
//! - a parent-death signal (Linux: SIGKILL by default), so baton killed
//!   outright takes its children with it;
//! - a deadline and a grace: `output` stops the whole group once the
//!   deadline passes (SIGTERM, the grace, SIGKILL; with no grace, SIGKILL
//!   at once), and `run_stoppable` does the same on an interrupt (`Stop`).
//!
//! The peers themselves are spawned here too and then supervised by
//! `process::supervise`, which adds the output pumps, the parser and the
//! peer's own time-outs.
//!
//! The sandbox seam: `wrap` installs a `Wrapper` that sees the final argv and
//! environment change-set just before the spawn and may rewrite both (a
//! sandbox puts its own launcher in front: `bwrap … -- argv`). `run::confine`
//! makes the one for a peer and the one for its test command, from the same
//! policy code, so a test command is confined exactly as a peer is.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::RawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Output, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use crate::sys;

/// Which process group (or session) the child runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// A new group led by the child (the default).
    Own,
    /// A new session (`setsid`), keeping `keep_fd` open across exec: a
    /// background runner that outlives the caller's terminal.
    Session { keep_fd: Option<RawFd> },
    /// baton's own group: short calls waited on at once (git).
    Inherit,
}

/// The environment changes a child gets on top of baton's own: the
/// removals first, then the settings (whatever order they were given in).
#[derive(Debug, Clone, Default)]
pub struct Env {
    pub set: Vec<(OsString, OsString)>,
    pub remove: Vec<OsString>,
    /// Start from an empty environment, not baton's (the sandbox helper's
    /// child gets only what its policy lets through).
    pub clear: bool,
}

/// Rewrites a child's argv and environment just before it is spawned (the
/// sandbox seam; see the module comment). `argv[0]` is the program.
/// Infallible: what a wrapper could refuse is refused when the run is
/// planned, before anything starts.
pub trait Wrapper: Send + Sync {
    fn wrap(&self, argv: Vec<OsString>, env: Env) -> (Vec<OsString>, Env);
}

/// A shared wrapper, for a plan that hands the same one to several
/// children (a peer's retries, its test command).
#[derive(Clone)]
pub struct Shared(pub std::sync::Arc<dyn Wrapper>);

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Shared(wrapper)")
    }
}

impl Wrapper for Shared {
    fn wrap(&self, argv: Vec<OsString>, env: Env) -> (Vec<OsString>, Env) {
        self.0.wrap(argv, env)
    }
}

/// How a child baton runs ended badly for `output`.
#[derive(Debug)]
pub enum Failed {
    /// It could not be started.
    Spawn(io::Error),
    /// Waiting for it failed.
    Wait(io::Error),
    /// It did not end within its deadline; its group was stopped.
    TimedOut(Duration),
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failed::Spawn(e) | Failed::Wait(e) => write!(f, "{e}"),
            Failed::TimedOut(d) => write!(f, "no answer within {}", seconds(*d)),
        }
    }
}

/// `15 s`, `0.5 s`: a duration as the messages say it.
pub fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} s", d.as_secs_f32())
    }
}

/// A child to start (see the module comment).
pub struct Command {
    program: OsString,
    arg0: Option<OsString>,
    args: Vec<OsString>,
    cwd: Option<PathBuf>,
    env: Env,
    stdin: Option<Stdio>,
    stdout: Option<Stdio>,
    stderr: Option<Stdio>,
    group: Group,
    death_signal: Option<i32>,
    deadline: Option<Duration>,
    grace: Duration,
    wrapper: Option<Box<dyn Wrapper>>,
}

impl Command {
    pub fn new(program: impl AsRef<OsStr>) -> Command {
        Command {
            program: program.as_ref().to_owned(),
            arg0: None,
            args: Vec::new(),
            cwd: None,
            env: Env::default(),
            stdin: None,
            stdout: None,
            stderr: None,
            group: Group::Own,
            death_signal: Some(libc::SIGKILL),
            deadline: None,
            grace: Duration::ZERO,
            wrapper: None,
        }
    }

    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Self {
        self.args.push(a.as_ref().to_owned());
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(mut self, args: I) -> Self {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// The name the program sees as its `argv[0]` (its path otherwise).
    pub fn arg0(mut self, a: impl AsRef<OsStr>) -> Self {
        self.arg0 = Some(a.as_ref().to_owned());
        self
    }

    pub fn current_dir(mut self, d: impl AsRef<Path>) -> Self {
        self.cwd = Some(d.as_ref().to_owned());
        self
    }

    pub fn env(mut self, k: impl AsRef<OsStr>, v: impl AsRef<OsStr>) -> Self {
        self.env
            .set
            .push((k.as_ref().to_owned(), v.as_ref().to_owned()));
        self
    }

    pub fn env_remove(mut self, k: impl AsRef<OsStr>) -> Self {
        self.env.remove.push(k.as_ref().to_owned());
        self
    }

    /// Nothing of baton's environment; only what `env` sets.
    pub fn env_clear(mut self) -> Self {
        self.env.clear = true;
        self
    }

    /// Stdin (closed, `Stdio::null()`, unless given).
    pub fn stdin(mut self, s: impl Into<Stdio>) -> Self {
        self.stdin = Some(s.into());
        self
    }

    pub fn stdout(mut self, s: impl Into<Stdio>) -> Self {
        self.stdout = Some(s.into());
        self
    }

    pub fn stderr(mut self, s: impl Into<Stdio>) -> Self {
        self.stderr = Some(s.into());
        self
    }

    pub fn group(mut self, g: Group) -> Self {
        self.group = g;
        self
    }

    /// The signal the child gets when baton dies (Linux); `None`: none, for a
    /// child meant to outlive baton (a notification command).
    pub fn parent_death(mut self, sig: Option<i32>) -> Self {
        self.death_signal = sig;
        self
    }

    /// How long `output` and `run_stoppable` let it run.
    pub fn deadline(mut self, d: Duration) -> Self {
        self.deadline = Some(d);
        self
    }

    /// SIGTERM → SIGKILL grace when its group is stopped (zero: SIGKILL at once).
    pub fn grace(mut self, d: Duration) -> Self {
        self.grace = d;
        self
    }

    /// Install the wrapper that may rewrite argv and environment before the
    /// spawn (the sandbox seam: `run::confine`).
    pub fn wrap(mut self, w: Box<dyn Wrapper>) -> Self {
        self.wrapper = Some(w);
        self
    }

    /// The `std::process::Command` this describes, with its group, its
    /// parent-death signal and the wrapper applied (deadline and grace are
    /// the caller's business then). For callers that need the std type's
    /// own API (git's many call sites).
    pub fn into_std(self) -> std::process::Command {
        let mut argv = Vec::with_capacity(self.args.len() + 1);
        argv.push(self.program);
        argv.extend(self.args);
        let (argv, env) = match &self.wrapper {
            Some(w) => w.wrap(argv, self.env),
            None => (argv, self.env),
        };
        let mut argv = argv.into_iter();
        let mut c = std::process::Command::new(argv.next().unwrap_or_default());
        c.args(argv);
        if let Some(a) = self.arg0 {
            c.arg0(a);
        }
        if let Some(d) = self.cwd {
            c.current_dir(d);
        }
        if env.clear {
            c.env_clear();
        }
        for k in &env.remove {
            c.env_remove(k);
        }
        for (k, v) in &env.set {
            c.env(k, v);
        }
        c.stdin(self.stdin.unwrap_or_else(Stdio::null));
        if let Some(s) = self.stdout {
            c.stdout(s);
        }
        if let Some(s) = self.stderr {
            c.stderr(s);
        }
        match self.group {
            Group::Own => {
                c.process_group(0);
            }
            Group::Session { keep_fd } => sys::exec::new_session(&mut c, keep_fd),
            Group::Inherit => {}
        }
        if let Some(sig) = self.death_signal {
            sys::exec::parent_death_signal(&mut c, sig);
        }
        c
    }

    /// Start it; the caller waits for it (or hands it on).
    pub fn spawn(self) -> io::Result<Child> {
        self.into_std().spawn()
    }

    /// Start a background runner that is none of baton's business once
    /// started: a session of its own, no parent-death signal. Its pid.
    pub fn detach(self) -> io::Result<Child> {
        let keep_fd = match self.group {
            Group::Session { keep_fd } => keep_fd,
            _ => None,
        };
        self.group(Group::Session { keep_fd })
            .parent_death(None)
            .spawn()
    }

    /// Replace baton with it (`attach`: the terminal's, stdin included,
    /// unless given); returns only if the exec failed.
    pub fn exec(mut self) -> io::Error {
        self.stdin.get_or_insert_with(Stdio::inherit);
        self.group(Group::Inherit)
            .parent_death(None)
            .into_std()
            .exec()
    }

    /// Run it to the end with stdout and stderr captured (a short probe:
    /// `--version`, `initialize`). Past the deadline its whole group is
    /// stopped and the answer is `Failed::TimedOut`.
    pub fn output(mut self) -> Result<Output, Failed> {
        let deadline = self.deadline;
        let grace = self.grace;
        self.stdout.get_or_insert_with(Stdio::piped);
        self.stderr.get_or_insert_with(Stdio::piped);
        let own_group = self.group == Group::Own;
        let child = self.spawn().map_err(Failed::Spawn)?;
        let pgid = child.id() as sys::proc::Pid;
        let Some(limit) = deadline else {
            return child.wait_with_output().map_err(Failed::Wait);
        };
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        match rx.recv_timeout(limit) {
            Ok(r) => r.map_err(Failed::Wait),
            Err(_) => {
                if own_group {
                    stop_group(pgid, grace, || rx.try_recv().is_ok());
                }
                Err(Failed::TimedOut(limit))
            }
        }
    }
}

/// SIGTERM the group, wait up to `grace` for `gone`, then SIGKILL it
/// (at once when `grace` is zero).
fn stop_group(pgid: sys::proc::Pid, grace: Duration, mut gone: impl FnMut() -> bool) {
    if !grace.is_zero() {
        sys::proc::killpg(pgid, libc::SIGTERM);
        let until = Instant::now() + grace;
        while Instant::now() < until {
            if gone() && !sys::proc::group_exists(pgid) {
                return;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
    sys::proc::killpg(pgid, libc::SIGKILL);
}

/// How `run_stoppable` ended.
#[derive(Debug)]
pub struct Ended {
    /// The leader's status (after it was stopped, if it was).
    pub status: io::Result<ExitStatus>,
    pub timed_out: bool,
    /// Stopped because `Stop` heard this signal.
    pub interrupted: Option<i32>,
}

impl Command {
    /// Run it to its end, its deadline, or a signal `stop` hears, whichever
    /// comes first; in the last two cases the group is stopped (SIGTERM,
    /// grace, SIGKILL). Whatever the leader left in its group is stopped
    /// too. baton's copies of pipe ends given as stdout/stderr are dropped
    /// with the command once it is spawned, so a reader sees their end when
    /// the group closes its own.
    pub fn run_stoppable(self, stop: &super::Stop) -> io::Result<Ended> {
        let deadline = self.deadline.and_then(|d| Instant::now().checked_add(d));
        let grace = self.grace;
        let mut child = self.spawn()?;
        let pgid = child.id() as sys::proc::Pid;
        let tx = stop.sender();
        thread::spawn(move || {
            let _ = tx.send(super::stop::Ev::Exited(child.wait()));
        });
        let mut timed_out = false;
        let mut interrupted = None;
        let mut status = None;
        while status.is_none() {
            let wait = deadline.map_or(Duration::from_secs(3600), |d| {
                d.saturating_duration_since(Instant::now())
            });
            match stop.recv_timeout(wait) {
                Ok(super::stop::Ev::Exited(s)) => status = Some(s),
                Ok(super::stop::Ev::Signal(s)) => {
                    interrupted = Some(s);
                    break;
                }
                Err(RecvTimeoutError::Timeout) if deadline.is_none() => {}
                Err(RecvTimeoutError::Timeout) => {
                    timed_out = true;
                    break;
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(io::Error::other("the stop channel closed"));
                }
            }
        }
        let status = match status {
            Some(s) => s,
            None => stop.stop_leader(pgid, grace),
        };
        super::stop_group_leftovers(pgid, grace);
        Ok(Ended {
            status,
            timed_out,
            interrupted,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for the sandbox: runs the argv under `sh`, which first
    /// prints a variable the wrapper set.
    struct Shell;

    impl Wrapper for Shell {
        fn wrap(&self, argv: Vec<OsString>, mut env: Env) -> (Vec<OsString>, Env) {
            let mut v: Vec<OsString> = ["sh", "-c", "echo \"$WRAPPED\" \"$@\"", "sh"]
                .into_iter()
                .map(OsString::from)
                .collect();
            v.extend(argv);
            env.set.push(("WRAPPED".into(), "yes".into()));
            (v, env)
        }
    }

    #[test]
    fn a_wrapper_rewrites_argv_and_env_before_the_spawn() {
        let out = Command::new("true")
            .arg("x")
            .wrap(Box::new(Shell))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "yes true x\n");
    }

    #[test]
    fn stdin_is_closed_unless_given() {
        // `cat` on a terminal or an open pipe would wait; on /dev/null it ends.
        let out = Command::new("cat")
            .deadline(Duration::from_secs(20))
            .output()
            .unwrap();
        assert!(out.status.success() && out.stdout.is_empty());
    }

    #[test]
    fn a_probe_past_its_deadline_is_timed_out() {
        let r = Command::new("sleep")
            .arg("30")
            .deadline(Duration::from_millis(100))
            .output();
        assert!(matches!(r, Err(Failed::TimedOut(_))), "{r:?}");
        assert_eq!(
            r.unwrap_err().to_string(),
            "no answer within 0.1 s",
            "the message names the deadline"
        );
    }
}
