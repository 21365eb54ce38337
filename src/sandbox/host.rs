//! Whether baton runs inside a host agent's sandbox that keeps its peers
//! from their models: found before any peer starts, in microseconds.
//!
//! A host agent runs baton through its shell tool, and baton's peers run
//! under whatever that tool imposes. Measured (docs/host-sandbox.md):
//! - Codex 0.171 on Linux, `--sandbox workspace-write` (its default):
//!   `socket(AF_INET, …)` fails with EPERM (seccomp) for every command it
//!   runs and their children, so a peer cannot reach its model, not even
//!   one on 127.0.0.1; it retries for minutes while the host's tool call
//!   says "still running". With `sandbox_workspace_write.network_access`
//!   the same socket opens and a delegation works.
//! - Claude Code 2.1.332 with its sandbox on: a command gets a network
//!   namespace of its own; it reaches the network only through Claude
//!   Code's proxy and only the domains its settings allow, its 127.0.0.1
//!   is not the host's (a model server there is unreachable), and unix
//!   sockets, which a peer's own sandbox needs, are refused.
//!
//! What decides (`detect`): one `socket(AF_INET, SOCK_STREAM)` closed at
//! once, nothing connected — EPERM or EACCES means a filter blocks the
//! network for this process and all it starts. The markers the hosts put
//! in their commands' environment only name the sandbox, except where the
//! socket cannot tell: Claude Code's `SANDBOX_RUNTIME=1` (set only on the
//! commands its sandbox wraps) and, on macOS, Codex's
//! `CODEX_SANDBOX=seatbelt` with `CODEX_SANDBOX_NETWORK_DISABLED` (Seatbelt
//! lets the socket open and refuses the connection). Codex's
//! `CODEX_SANDBOX_NETWORK_DISABLED` alone is not trusted: it follows the
//! turn's policy, and a command the user let run outside the sandbox may
//! carry it with a working network.

use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::failure::{Failure, SandboxHost};

/// What one `socket(AF_INET, SOCK_STREAM)` said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Socket {
    Opens,
    /// EPERM or EACCES: a seccomp filter or a security module blocks it.
    Refused(i32),
    /// Another error (no descriptors left, no IPv4 in the kernel): says
    /// nothing about a sandbox.
    Failed(i32),
}

/// The socket probe: opened and closed again, never bound or connected.
pub fn probe_socket() -> Socket {
    let Err(errno) = crate::sys::fd::probe_socket() else {
        return Socket::Opens;
    };
    if errno == libc::EPERM || errno == libc::EACCES {
        Socket::Refused(errno)
    } else {
        Socket::Failed(errno)
    }
}

/// A sandbox that blocks what a peer needs, with the message that says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocked {
    pub host: SandboxHost,
    pub message: String,
}

impl Blocked {
    pub fn error(&self) -> Error {
        Error::HostSandbox {
            message: self.message.clone(),
            hint: Failure::host_sandbox_hint(self.host),
        }
    }
}

/// The host agent whose tool ran this process, by the markers it puts in
/// its commands' environment (sandboxed or not); `None` outside any.
pub fn host_with(var: &dyn Fn(&str) -> Option<String>) -> Option<SandboxHost> {
    let set = |k: &str| var(k).is_some_and(|v| !v.is_empty());
    if var("SANDBOX_RUNTIME").as_deref() == Some("1") {
        // Claude Code's sandbox is sandbox-runtime's; run alone (`srt`)
        // it is not Claude Code's, and Claude Code's advice would not fit.
        return Some(if set("CLAUDECODE") {
            SandboxHost::ClaudeCode
        } else {
            SandboxHost::Unknown
        });
    }
    if [
        "CODEX_SANDBOX",
        "CODEX_SANDBOX_NETWORK_DISABLED",
        "CODEX_THREAD_ID",
    ]
    .into_iter()
    .any(set)
    {
        return Some(SandboxHost::Codex);
    }
    set("CLAUDECODE").then_some(SandboxHost::ClaudeCode)
}

/// The markers set, as `NAME=value`, for messages.
fn markers(var: &dyn Fn(&str) -> Option<String>) -> String {
    [
        "CODEX_SANDBOX",
        "CODEX_SANDBOX_NETWORK_DISABLED",
        "SANDBOX_RUNTIME",
    ]
    .into_iter()
    .filter_map(|k| var(k).filter(|v| !v.is_empty()).map(|v| format!("{k}={v}")))
    .collect::<Vec<_>>()
    .join(", ")
}

/// The decision, from the environment (`var`) and the socket probe.
pub fn detect(var: &dyn Fn(&str) -> Option<String>, socket: Socket) -> Option<Blocked> {
    let host = host_with(var).unwrap_or(SandboxHost::Unknown);
    let seen = markers(var);
    let seen = if seen.is_empty() {
        String::new()
    } else {
        format!("{seen}; ")
    };
    let none_started = "so no peer was started";
    if let Socket::Refused(errno) = socket {
        let why = std::io::Error::from_raw_os_error(errno);
        return Some(Blocked {
            host,
            message: format!(
                "baton is running inside {}, which blocks the network of the commands it runs \
                 ({seen}socket() fails: {why}): a peer could not reach its model, not even one \
                 on 127.0.0.1, {none_started}",
                host.sandbox_name()
            ),
        });
    }
    let on = |k: &str| var(k).is_some_and(|v| !v.is_empty());
    if var("CODEX_SANDBOX").as_deref() == Some("seatbelt") && on("CODEX_SANDBOX_NETWORK_DISABLED") {
        return Some(Blocked {
            host: SandboxHost::Codex,
            message: format!(
                "baton is running inside Codex's sandbox (Seatbelt), which blocks the network of \
                 the commands it runs ({seen}): a peer could not reach its model, {none_started}"
            ),
        });
    }
    if var("SANDBOX_RUNTIME").as_deref() == Some("1") {
        return Some(Blocked {
            host,
            message: format!(
                "baton is running inside {} ({seen}its commands reach the network only through \
                 the host's proxy, to the domains its settings allow; 127.0.0.1 there is the \
                 sandbox's own, and unix sockets, which a peer's own sandbox needs, are refused): \
                 a peer would fail or wait on its model, {none_started}",
                host.sandbox_name()
            ),
        });
    }
    None
}

fn env_var(k: &str) -> Option<String> {
    std::env::var_os(k).map(|v| v.to_string_lossy().into_owned())
}

/// `host_sandbox` if baton cannot reach the network a peer needs. Checked
/// once per process (every caller gets the same answer), before anything
/// is created for a peer: `run` (and `--async`, `--worktree`), `ask`,
/// `council`, `continue`, and `run::execute` itself, which every peer
/// passes through.
pub fn check() -> Result<()> {
    static FOUND: OnceLock<Option<Blocked>> = OnceLock::new();
    match FOUND.get_or_init(|| detect(&env_var, probe_socket())) {
        None => Ok(()),
        Some(b) => Err(b.error()),
    }
}

/// The host agent whose tool ran baton, if any (markers only).
pub fn host() -> Option<SandboxHost> {
    host_with(&env_var)
}

/// The warning of a background job started inside Codex's sandbox, which
/// does not let a process outlive the command that started it (measured
/// with Codex 0.171: the job's runner is gone 0.4 s later and `wait`, in
/// the next command, reports it `lost`). Told apart from a command Codex
/// ran outside its sandbox by the seccomp filter the sandbox installs.
pub fn job_note() -> Option<String> {
    if host()? != SandboxHost::Codex || !seccomp_filtered(&proc_status()?) {
        return None;
    }
    Some(
        "this job runs inside Codex's sandbox, which ends every process a command started \
         when that command ends: its runner will be stopped and the job reported `lost`. Run \
         baton in the foreground instead (Codex keeps a long command running across tool \
         calls), or outside the sandbox"
            .to_string(),
    )
}

fn proc_status() -> Option<String> {
    std::fs::read_to_string("/proc/self/status").ok()
}

/// `Seccomp: 2` in /proc/self/status: a seccomp filter confines this
/// process (0 is none, 1 strict mode).
fn seccomp_filtered(status: &str) -> bool {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Seccomp:"))
        .is_some_and(|v| v.trim() == "2")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    const EPERM: Socket = Socket::Refused(libc::EPERM);

    #[test]
    fn a_refused_socket_blocks_whoever_the_host_is() {
        // Codex's workspace-write, as measured: marker and EPERM.
        let codex = [
            ("CODEX_SANDBOX_NETWORK_DISABLED", "1"),
            ("CODEX_THREAD_ID", "t"),
        ];
        let b = detect(&env(&codex), EPERM).expect("blocked");
        assert_eq!(b.host, SandboxHost::Codex);
        for want in [
            "Codex's sandbox",
            "CODEX_SANDBOX_NETWORK_DISABLED=1",
            "socket() fails: Operation not permitted",
            "not even one on 127.0.0.1",
            "no peer was started",
        ] {
            assert!(b.message.contains(want), "{want}: {}", b.message);
        }
        let e = b.error();
        assert_eq!((e.kind(), e.exit_code()), ("host_sandbox", 1));
        assert!(e.hint().unwrap().contains("network_access = true"));
        // No marker: still blocked, named as an unknown sandbox.
        let b = detect(&env(&[]), Socket::Refused(libc::EACCES)).expect("blocked");
        assert_eq!(b.host, SandboxHost::Unknown);
        assert!(b.message.starts_with("baton is running inside a sandbox"));
        assert!(b.message.contains("Permission denied"), "{}", b.message);
    }

    #[test]
    fn codexs_marker_alone_does_not_block() {
        // A command Codex ran outside its sandbox with the user's approval
        // may carry the marker of the turn's policy with a working network.
        let codex = [("CODEX_SANDBOX_NETWORK_DISABLED", "1")];
        assert_eq!(detect(&env(&codex), Socket::Opens), None);
        // Other socket errors say nothing about a sandbox.
        assert_eq!(detect(&env(&codex), Socket::Failed(libc::EMFILE)), None);
        assert_eq!(detect(&env(&[]), Socket::Opens), None);
    }

    #[test]
    fn seatbelt_and_sandbox_runtime_block_by_their_markers() {
        let seatbelt = [
            ("CODEX_SANDBOX", "seatbelt"),
            ("CODEX_SANDBOX_NETWORK_DISABLED", "1"),
        ];
        let b = detect(&env(&seatbelt), Socket::Opens).expect("blocked");
        assert_eq!(b.host, SandboxHost::Codex);
        assert!(b.message.contains("Seatbelt"), "{}", b.message);
        // Seatbelt with network access: no marker of a disabled network.
        assert_eq!(
            detect(&env(&[("CODEX_SANDBOX", "seatbelt")]), Socket::Opens),
            None
        );

        let claude = [("SANDBOX_RUNTIME", "1"), ("CLAUDECODE", "1")];
        let b = detect(&env(&claude), Socket::Opens).expect("blocked");
        assert_eq!(b.host, SandboxHost::ClaudeCode);
        for want in [
            "Claude Code's sandbox",
            "SANDBOX_RUNTIME=1",
            "proxy",
            "127.0.0.1",
        ] {
            assert!(b.message.contains(want), "{want}: {}", b.message);
        }
        assert!(
            b.error()
                .hint()
                .unwrap()
                .contains("dangerouslyDisableSandbox")
        );
        // sandbox-runtime on its own: blocked, not Claude Code's advice.
        let b = detect(&env(&[("SANDBOX_RUNTIME", "1")]), Socket::Opens).unwrap();
        assert_eq!(b.host, SandboxHost::Unknown);
        // Claude Code without its sandbox (CLAUDECODE only): nothing blocks.
        assert_eq!(detect(&env(&[("CLAUDECODE", "1")]), Socket::Opens), None);
    }

    #[test]
    fn hosts_are_named_by_their_markers() {
        assert_eq!(host_with(&env(&[])), None);
        assert_eq!(
            host_with(&env(&[("CODEX_THREAD_ID", "x")])),
            Some(SandboxHost::Codex)
        );
        assert_eq!(
            host_with(&env(&[("CLAUDECODE", "1")])),
            Some(SandboxHost::ClaudeCode)
        );
        assert_eq!(
            host_with(&env(&[("CODEX_SANDBOX", "")])),
            None,
            "an empty marker is no marker"
        );
    }

    #[test]
    fn a_seccomp_filter_is_read_from_the_status() {
        let status = "Name:\tbaton\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\n";
        assert!(seccomp_filtered(status));
        assert!(!seccomp_filtered("Seccomp:\t0\nSeccomp_filters:\t0\n"));
        assert!(!seccomp_filtered("Name:\tbaton\n"));
    }

    /// The cost a run pays: the environment read and one socket opened and
    /// closed. Measured 34 µs a check (debug build, 2 cores at a load of
    /// 30); the bound is far above that so load cannot make it flaky.
    #[test]
    fn the_check_costs_microseconds() {
        let n = 2000;
        let t = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(detect(&env_var, probe_socket()));
        }
        let each = t.elapsed() / n;
        eprintln!("host sandbox check: {each:?} each");
        assert!(
            each < std::time::Duration::from_micros(200),
            "{each:?} per check"
        );
    }
}
