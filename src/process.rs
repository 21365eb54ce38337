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
//!   finished" event (codex is known to hang after it).
//! - Stopping is always of the whole group: SIGTERM, a grace period, SIGKILL,
//!   reap. After the leader exits, anything left in its group (a background
//!   grandchild) is stopped the same way, so no process outlives baton.
//! - On Linux baton is a child subreaper: a descendant that left the group
//!   (`setsid`, a daemon) is reparented to baton when its parent dies. Those
//!   carrying this supervision's `BATON_PEER_TOKEN` are stopped the same way,
//!   and orphaned zombies are reaped at once (an init that does not reap would
//!   otherwise keep a dead group "alive" for the whole grace period).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::agent::{CommandSpec, Outcome, Parser, ProcessExit, Signal};
use crate::error::{Error, Result};

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
    /// baton received this signal (Ctrl-C, SIGTERM from `baton cancel`, hang-up).
    Interrupted(i32),
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
}

/// Where the raw streams go (`None`: nowhere, there is no run directory).
pub struct LogFiles {
    pub stdout: Option<PathBuf>,
    pub stderr: Option<PathBuf>,
}

enum Msg {
    Exited(io::Result<ExitStatus>),
    TurnFinished,
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

/// Handle to the signals baton reacts to while peers run. Installed before
/// any child is spawned so a Ctrl-C can never leave an unsupervised peer.
///
/// Several supervisors may run at once (`baton ask --agents a,b`): each
/// `supervise` call subscribes for its own lifetime and every subscriber gets
/// every signal. A signal that arrives while nobody is subscribed is
/// remembered (`fired`), so a supervisor that starts afterwards stops its
/// peer at once instead of missing the Ctrl-C. Clones share the handlers,
/// which are removed when the last clone is dropped.
#[derive(Clone)]
pub struct Interrupts {
    hub: Arc<Hub>,
    _close: Arc<CloseOnDrop>,
}

type Subscriber = Box<dyn Fn(i32) + Send>;

#[derive(Default)]
struct Hub {
    subscribers: Mutex<Vec<(u64, Subscriber)>>,
    next_id: AtomicU64,
    /// The last signal received, 0 for none.
    fired: AtomicI32,
}

struct CloseOnDrop(signal_hook::iterator::Handle);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close();
    }
}

impl Interrupts {
    pub fn install() -> Result<Self> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
            .map_err(|e| Error::io("installing signal handlers", e))?;
        let handle = signals.handle();
        let hub = Arc::new(Hub::default());
        {
            let hub = hub.clone();
            thread::spawn(move || {
                for s in signals.forever() {
                    hub.fired.store(s, Ordering::SeqCst);
                    for (_, notify) in hub.subscribers.lock().unwrap().iter() {
                        notify(s);
                    }
                }
            });
        }
        Ok(Interrupts {
            hub,
            _close: Arc::new(CloseOnDrop(handle)),
        })
    }

    /// The last signal received since `install`, if any.
    pub fn fired(&self) -> Option<i32> {
        match self.hub.fired.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s),
        }
    }

    /// Call `notify` for every signal until the returned guard is dropped.
    fn subscribe(&self, notify: Subscriber) -> Subscription<'_> {
        let id = self.hub.next_id.fetch_add(1, Ordering::Relaxed);
        self.hub.subscribers.lock().unwrap().push((id, notify));
        Subscription { hub: &self.hub, id }
    }
}

struct Subscription<'a> {
    hub: &'a Hub,
    id: u64,
}

impl Drop for Subscription<'_> {
    fn drop(&mut self) {
        self.hub
            .subscribers
            .lock()
            .unwrap()
            .retain(|(id, _)| *id != self.id);
    }
}

pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        libc::SIGKILL => "SIGKILL",
        _ => "a signal",
    }
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
    parser: Parser,
    limits: &Limits,
    interrupts: &mut Interrupts,
    on_spawn: &mut dyn FnMut(u32),
) -> Result<Finished> {
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

    let mut cmd = Command::new(program);
    cmd.args(&spec.args)
        .current_dir(cwd)
        .stdin(if spec.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for k in &spec.env_remove {
        cmd.env_remove(k);
    }
    for (k, v) in &spec.env_set {
        cmd.env(k, v);
    }
    #[cfg(target_os = "linux")]
    unsafe {
        // If baton itself is killed outright, take the peer with it rather
        // than leave it running unsupervised. (Async-signal-safe: one syscall.)
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }

    // Marks the peer and every descendant that keeps its environment, so
    // the ones that escape the group can be told from other children.
    let token = format!(
        "{}.{}",
        std::process::id(),
        NEXT_TOKEN.fetch_add(1, Ordering::Relaxed)
    );
    cmd.env(PEER_TOKEN_VAR, &token);
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
        thread::spawn(move || {
            pump_stderr(stderr, stderr_log, &tail, &act, started);
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
    let mut final_at: Option<Instant> = None;
    let mut status: Option<io::Result<ExitStatus>> = None;
    let mut eofs = 0;
    let reason = loop {
        let now = Instant::now();
        let idle_deadline = limits
            .idle_timeout
            .map(|d| started + Duration::from_millis(last_activity.load(Ordering::Relaxed)) + d);
        let hang_deadline = final_at.map(|t| t + limits.after_final);
        let next = [Some(deadline), idle_deadline, hang_deadline]
            .into_iter()
            .flatten()
            .min()
            .expect("deadline is always set");
        if now >= next {
            if now >= deadline {
                break EndReason::Timeout;
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
            Ok(Msg::Signal(s)) => break EndReason::Interrupted(s),
            Ok(Msg::Eof) => eofs += 1,
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                return Err(Error::Internal("supervisor channel closed".into()));
            }
        }
    };

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
    })
}

/// A log file that stops being written at its first failure (a full disk),
/// leaving a note that it is incomplete: the output is still parsed.
struct Log {
    file: Option<File>,
    name: &'static str,
    notes: Arc<Mutex<Vec<String>>>,
}

impl Log {
    fn new(file: File, name: &'static str, notes: &Arc<Mutex<Vec<String>>>) -> Log {
        Log {
            file: Some(file),
            name,
            notes: notes.clone(),
        }
    }

    fn write(&mut self, b: &[u8]) {
        if let Some(f) = &mut self.file
            && let Err(e) = f.write_all(b)
        {
            self.file = None;
            self.notes.lock().unwrap().push(format!(
                "{} is incomplete: writing it failed ({e}); the result was read from the \
                 output itself",
                self.name
            ));
        }
    }
}

/// What the stdout pump tells the result about lines it had to mend.
#[derive(Default)]
struct Mended {
    not_utf8: u64,
    cut: u64,
}

impl Mended {
    fn notes(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.not_utf8 > 0 {
            v.push(format!(
                "{} line(s) of the peer's output were not valid UTF-8; they were read with the \
                 invalid bytes replaced by U+FFFD (the raw bytes are in log_path)",
                self.not_utf8
            ));
        }
        if self.cut > 0 {
            v.push(format!(
                "{} line(s) of the peer's output were longer than {} MiB; only their first {} \
                 MiB were read, so the message may be truncated (the whole line is in log_path)",
                self.cut,
                max_line() as f64 / 1048576.0,
                max_line() as f64 / 1048576.0
            ));
        }
        v
    }
}

/// What the stdout pump shares with the supervisor.
struct Pump<'a> {
    activity: &'a AtomicU64,
    /// Set while it parses what it read (not waiting on the pipe).
    parsing: &'a AtomicBool,
    started: Instant,
    tx: &'a mpsc::Sender<Msg>,
    notes: &'a Mutex<Vec<String>>,
}

fn pump_stdout(
    mut out: impl Read,
    mut log: Option<Log>,
    parser: &Mutex<Option<Parser>>,
    pump: &Pump,
) {
    let Pump {
        activity,
        parsing,
        started,
        tx,
        notes,
    } = *pump;
    let mut reader = BufReader::with_capacity(256 << 10, &mut out);
    let mut line: Vec<u8> = Vec::new();
    // The current line passed MAX_LINE: `line` holds its first MAX_LINE
    // bytes and the rest is skipped up to its end.
    let mut overlong = false;
    let mut mended = Mended::default();
    let limit = max_line();
    loop {
        let buf = match reader.fill_buf() {
            Ok([]) => break,
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        activity.store(started.elapsed().as_millis() as u64, Ordering::Relaxed);
        parsing.store(true, Ordering::Relaxed);
        // Log before parsing: the raw stream is the source of truth.
        if let Some(l) = &mut log {
            l.write(buf);
        }
        let n = buf.len();
        let mut rest = buf;
        let mut guard = parser.lock().unwrap();
        while let Some(i) = memchr(b'\n', rest) {
            let (head, tail) = rest.split_at(i);
            let signal = if overlong {
                overlong = false;
                let kept = std::mem::take(&mut line);
                feed_cut(&mut guard, &kept, &mut mended)
            } else if line.is_empty() {
                feed(&mut guard, head, &mut mended)
            } else {
                line.extend_from_slice(head);
                let s = feed(&mut guard, &line, &mut mended);
                line.clear();
                s
            };
            if signal == Signal::TurnFinished {
                let _ = tx.send(Msg::TurnFinished);
            }
            rest = &tail[1..];
        }
        if !overlong {
            if line.len() + rest.len() > limit {
                overlong = true;
                let room = limit - line.len();
                line.extend_from_slice(&rest[..room]);
            } else {
                line.extend_from_slice(rest);
            }
        }
        drop(guard);
        reader.consume(n);
        parsing.store(false, Ordering::Relaxed);
    }
    parsing.store(true, Ordering::Relaxed);
    if !line.is_empty() {
        let mut guard = parser.lock().unwrap();
        let s = if overlong {
            feed_cut(&mut guard, &line, &mut mended)
        } else {
            feed(&mut guard, &line, &mut mended)
        };
        if s == Signal::TurnFinished {
            let _ = tx.send(Msg::TurnFinished);
        }
    }
    notes.lock().unwrap().extend(mended.notes());
}

/// Linux: a 1 MiB pipe instead of the default 64 KiB lets a fast peer
/// write in bigger bursts, so baton wakes up and copies less often, and
/// takes most prompts in one write. Best effort: the limit
/// (`/proc/sys/fs/pipe-max-size`) may be lower. Returns the pipe's capacity
/// (the POSIX minimum, 4096, where it cannot be known).
fn enlarge_pipe(fd: &impl std::os::fd::AsRawFd) -> usize {
    #[cfg(target_os = "linux")]
    // SAFETY: fcntl on a pipe descriptor we own; failure leaves it unchanged.
    unsafe {
        libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, 1 << 20);
        let n = libc::fcntl(fd.as_raw_fd(), libc::F_GETPIPE_SZ);
        if n > 0 {
            return n as usize;
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
    4096
}

/// Feed one line; one that is not UTF-8 is fed with its bad bytes replaced
/// (a JSON parser refuses it whole, and with it the peer's final message).
fn feed(p: &mut Option<Parser>, line: &[u8], mended: &mut Mended) -> Signal {
    let Some(p) = p else {
        return Signal::Nothing;
    };
    if std::str::from_utf8(line).is_ok() {
        return p.feed(line);
    }
    mended.not_utf8 += 1;
    p.feed(String::from_utf8_lossy(line).as_bytes())
}

/// Feed the first `MAX_LINE` bytes of a longer line, closed into JSON.
fn feed_cut(p: &mut Option<Parser>, kept: &[u8], mended: &mut Mended) -> Signal {
    mended.cut += 1;
    match crate::json_cut::close(kept) {
        Some(closed) => feed(p, &closed, &mut Mended::default()),
        None => Signal::Nothing,
    }
}

/// The C library's `memchr` (vectorised): finding line ends is a large part
/// of the pump's work when a peer prints hundreds of megabytes.
fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    // SAFETY: the pointer and length describe a live slice; memchr reads
    // at most `len` bytes and returns null or a pointer inside it.
    let p = unsafe { libc::memchr(hay.as_ptr().cast(), i32::from(needle), hay.len()) };
    (!p.is_null()).then(|| p as usize - hay.as_ptr() as usize)
}

fn pump_stderr(
    mut err: impl Read,
    mut log: Option<Log>,
    tail: &Mutex<Vec<u8>>,
    activity: &AtomicU64,
    started: Instant,
) {
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match err.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        activity.store(started.elapsed().as_millis() as u64, Ordering::Relaxed);
        if let Some(l) = &mut log {
            l.write(&buf[..n]);
        }
        let mut t = tail.lock().unwrap();
        t.extend_from_slice(&buf[..n]);
        if t.len() > STDERR_TAIL {
            let cut = t.len() - STDERR_TAIL;
            t.drain(..cut);
        }
    }
}

/// SIGTERM the group, wait up to `grace` for the leader to exit, then
/// SIGKILL, and return the leader's status. `exited` picks the leader's exit
/// out of the supervisor's own channel messages (and may note others).
pub fn stop_leader<M>(
    pgid: libc::pid_t,
    grace: Duration,
    rx: &mpsc::Receiver<M>,
    mut exited: impl FnMut(M) -> Option<io::Result<ExitStatus>>,
) -> io::Result<ExitStatus> {
    killpg(pgid, libc::SIGTERM);
    let until = Instant::now() + grace;
    let mut killed = false;
    loop {
        let wait = if killed {
            Duration::from_secs(30)
        } else {
            until.saturating_duration_since(Instant::now())
        };
        match rx.recv_timeout(wait) {
            Ok(m) => {
                if let Some(s) = exited(m) {
                    return s;
                }
            }
            Err(RecvTimeoutError::Timeout) if !killed => {
                killpg(pgid, libc::SIGKILL);
                killed = true;
            }
            Err(_) => return Err(io::Error::other("process did not die after SIGKILL")),
        }
    }
}

/// Stop whatever is left in the group after its leader exited.
///
/// The leader's orphaned children are reparented to baton (see
/// `become_subreaper`), so their zombies are reaped here: a group of zombies
/// still "exists" for `kill`, and in a container whose init does not reap,
/// it would look alive until the grace ran out.
pub fn stop_group_leftovers(pgid: libc::pid_t, grace: Duration) {
    reap_group(pgid);
    if !group_alive(pgid) {
        return;
    }
    killpg(pgid, libc::SIGTERM);
    if wait_until(grace, || {
        reap_group(pgid);
        !group_alive(pgid)
    }) {
        return;
    }
    killpg(pgid, libc::SIGKILL);
    wait_until(Duration::from_secs(2), || {
        reap_group(pgid);
        !group_alive(pgid)
    });
}

/// Poll `done` often (every 10 ms) until it holds or `limit` passes. Used
/// only while stopping leftovers: orphans give nothing to block on.
fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// Reap the exited members of a group that were orphaned to baton.
fn reap_group(pgid: libc::pid_t) {
    if pgid <= 1 {
        return;
    }
    // SAFETY: plain syscall; WNOHANG never blocks, a null status is allowed.
    while unsafe { libc::waitpid(-pgid, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
}

/// Linux: make baton the reaper of its orphaned descendants, so a grandchild
/// that left the peer's process group (`setsid`, daemons) is reparented to
/// baton when its parent dies, and can be found and stopped. Process-wide
/// and idempotent. Elsewhere a no-op: the group is all baton can reach.
fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain prctl on this process, no pointers.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// Set in every peer's environment to a value unique to its supervision
/// (`<baton pid>.<n>`), inherited by its descendants.
pub const PEER_TOKEN_VAR: &str = "BATON_PEER_TOKEN";

static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

/// Stop the processes orphaned to baton after the peer's group is gone:
/// those that carry this supervision's token (several peers may be
/// supervised at once, and baton's other children are none of its business).
/// SIGTERM (to each one's own group when it leads one), the grace, SIGKILL.
/// Stopping one may orphan its children to baton in turn, so the list is read
/// again on every round.
fn stop_orphans(token: &str, grace: Duration) {
    if !has_children() {
        return;
    }
    let marker = format!("{PEER_TOKEN_VAR}={token}");
    let term = |pids: &[libc::pid_t], sig: i32| {
        for &pid in pids {
            // SAFETY: plain syscalls on our own children.
            unsafe {
                if libc::getpgid(pid) == pid {
                    libc::killpg(pid, sig);
                }
                libc::kill(pid, sig);
            }
        }
    };
    // Ours and still running; ours that exited are reaped (only those: a
    // zombie child of another thread is that thread's to wait for).
    let mut seen: Vec<libc::pid_t> = Vec::new();
    let ours = |seen: &mut Vec<libc::pid_t>| {
        let mut live = Vec::new();
        for (pid, state) in children() {
            if state == 'Z' {
                if seen.contains(&pid) {
                    // SAFETY: WNOHANG on our own exited child.
                    unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) };
                }
            } else if seen.contains(&pid) || carries(pid, &marker) {
                live.push(pid);
                if !seen.contains(&pid) {
                    seen.push(pid);
                }
            }
        }
        live
    };
    let first = ours(&mut seen);
    if first.is_empty() {
        return;
    }
    term(&first, libc::SIGTERM);
    let mut signalled = first;
    if wait_until(grace, || {
        let now = ours(&mut seen);
        let new: Vec<_> = now
            .iter()
            .filter(|p| !signalled.contains(p))
            .copied()
            .collect();
        term(&new, libc::SIGTERM);
        signalled.extend(new);
        now.is_empty()
    }) {
        return;
    }
    wait_until(Duration::from_secs(2), || {
        let now = ours(&mut seen);
        term(&now, libc::SIGKILL);
        now.is_empty()
    });
}

/// Whether `pid`'s environment holds `marker` (`NAME=value`).
fn carries(pid: libc::pid_t, marker: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == marker.as_bytes()))
}

/// Whether this process has any child at all (exited or not), without reaping.
fn has_children() -> bool {
    // SAFETY: zeroed siginfo is a valid out-parameter; WNOWAIT leaves any
    // child waitable, so nothing is reaped here.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::waitid(
            libc::P_ALL,
            0,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        ) == 0
    }
}

/// Children of this process, with their state (`Z`: exited, not reaped).
fn children() -> Vec<(libc::pid_t, char)> {
    let me = std::process::id() as libc::pid_t;
    let mut pids: Vec<libc::pid_t> = Vec::new();
    let per_thread = format!("/proc/{me}/task/{me}/children");
    if std::path::Path::new(&per_thread).exists() {
        // CONFIG_PROC_CHILDREN: a child is listed under the thread that
        // spawned or received it.
        for t in std::fs::read_dir(format!("/proc/{me}/task"))
            .into_iter()
            .flatten()
            .flatten()
        {
            if let Ok(s) = std::fs::read_to_string(t.path().join("children")) {
                pids.extend(
                    s.split_whitespace()
                        .filter_map(|p| p.parse::<libc::pid_t>().ok()),
                );
            }
        }
    } else {
        // Otherwise scan every process for its parent.
        for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            if let Some(pid) = e.file_name().to_str().and_then(|n| n.parse().ok())
                && proc_stat(pid).is_some_and(|(ppid, _)| ppid == me)
            {
                pids.push(pid);
            }
        }
    }
    pids.sort_unstable();
    pids.dedup();
    pids.into_iter()
        .filter_map(|p| proc_stat(p).map(|(_, state)| (p, state)))
        .collect()
}

/// `(ppid, state)` from `/proc/<pid>/stat`.
fn proc_stat(pid: libc::pid_t) -> Option<(libc::pid_t, char)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces and parentheses: split after the last ')'.
    let mut rest = s.rsplit_once(')')?.1.split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    Some((ppid, state))
}

pub fn group_alive(pgid: libc::pid_t) -> bool {
    // SAFETY: plain syscall; signal 0 only checks for existence.
    unsafe { libc::killpg(pgid, 0) == 0 }
}

pub fn killpg(pgid: libc::pid_t, sig: i32) {
    if pgid > 1 {
        // SAFETY: plain syscall on a group id we created.
        unsafe {
            libc::killpg(pgid, sig);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_orphans_stops_only_children_with_the_runs_token() {
        use std::process::Command;
        let token = "test-token-4242";
        let ours = Command::new("sleep")
            .arg("30")
            .env(PEER_TOKEN_VAR, token)
            .spawn()
            .unwrap();
        let other = Command::new("sleep")
            .arg("30")
            .env(PEER_TOKEN_VAR, "another-run")
            .spawn()
            .unwrap();
        let (ours_pid, mut other) = (ours.id() as libc::pid_t, other);
        // Wait until exec has happened (the environ is the new program's).
        assert!(wait_until(Duration::from_secs(5), || carries(
            ours_pid,
            &format!("{PEER_TOKEN_VAR}={token}")
        )));
        stop_orphans(token, Duration::from_secs(5));
        assert!(
            proc_stat(ours_pid).is_none(),
            "the marked child is stopped and reaped"
        );
        assert!(
            other.try_wait().unwrap().is_none(),
            "the other one is left alone"
        );
        other.kill().unwrap();
        other.wait().unwrap();
        drop(ours);
    }

    #[test]
    fn memchr_finds_the_first_match() {
        assert_eq!(memchr(b'\n', b"ab\ncd\n"), Some(2));
        assert_eq!(memchr(b'\n', b"abcd"), None);
        assert_eq!(memchr(b'\n', b""), None);
        assert_eq!(memchr(b'\n', &b"x\n"[1..]), Some(0));
    }

    #[test]
    fn find_program_uses_path() {
        assert!(find_program("sh").is_some());
        assert!(find_program("definitely-not-a-program-xyz").is_none());
    }
}
