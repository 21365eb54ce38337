//! Orphans: descendants that left the peer's group but carry its
//! `BATON_PEER_TOKEN`, found in /proc and stopped after the group is gone.

use std::sync::atomic::AtomicU64;
use std::time::Duration;

use super::group::wait_until;

/// Set in every peer's environment to a value unique to its supervision
/// (`<baton pid>.<n>`), inherited by its descendants.
pub const PEER_TOKEN_VAR: &str = "BATON_PEER_TOKEN";

pub(super) static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

/// Stop the processes orphaned to baton after the peer's group is gone:
/// those that carry this supervision's token (several peers may be
/// supervised at once, and baton's other children are none of its business).
/// SIGTERM (to each one's own group when it leads one), the grace, SIGKILL.
/// Stopping one may orphan its children to baton in turn, so the list is read
/// again on every round.
pub(super) fn stop_orphans(token: &str, grace: Duration) {
    if !has_children() {
        return;
    }
    let marker = format!("{PEER_TOKEN_VAR}={token}");
    let term = |pids: &[libc::pid_t], sig: i32| {
        for &pid in pids {
            if crate::sys::proc::getpgid(pid) == Some(pid) {
                crate::sys::proc::killpg(pid, sig);
            }
            crate::sys::proc::kill(pid, sig);
        }
    };
    // Ours and still running; ours that exited are reaped (only those: a
    // zombie child of another thread is that thread's to wait for). A child
    // in the middle of `execve` shows an empty environment for a moment: it
    // is neither ours nor another's yet, and is looked at again.
    let mut seen: Vec<libc::pid_t> = Vec::new();
    let ours = |seen: &mut Vec<libc::pid_t>| {
        let mut live = Vec::new();
        let mut unsure = false;
        for (pid, state) in children() {
            if state == 'Z' {
                if seen.contains(&pid) {
                    crate::sys::proc::reap(pid);
                }
                continue;
            }
            let mark = if seen.contains(&pid) {
                Mark::Ours
            } else {
                mark(pid, &marker)
            };
            match mark {
                Mark::Ours => {
                    live.push(pid);
                    if !seen.contains(&pid) {
                        seen.push(pid);
                    }
                }
                Mark::Unknown => unsure = true,
                Mark::Other => {}
            }
        }
        (live, unsure)
    };
    let unsure_until = std::time::Instant::now() + UNSURE_LIMIT;
    let mut first = Vec::new();
    wait_until(UNSURE_LIMIT, || {
        let (live, unsure) = ours(&mut seen);
        first = live;
        !first.is_empty() || !unsure
    });
    if first.is_empty() {
        return;
    }
    term(&first, libc::SIGTERM);
    let mut signalled = first;
    if wait_until(grace, || {
        let (now, unsure) = ours(&mut seen);
        let new: Vec<_> = now
            .iter()
            .filter(|p| !signalled.contains(p))
            .copied()
            .collect();
        term(&new, libc::SIGTERM);
        signalled.extend(new);
        // A child that stays unreadable past the limit is not ours.
        now.is_empty() && (!unsure || std::time::Instant::now() >= unsure_until)
    }) {
        return;
    }
    wait_until(Duration::from_secs(2), || {
        let (now, _) = ours(&mut seen);
        term(&now, libc::SIGKILL);
        now.is_empty()
    });
}

/// How long a child whose environment cannot be read yet (mid-`execve`) is
/// looked at again before it is taken for not ours. A process that really
/// has an empty environment costs this once; an escaped descendant caught
/// mid-exec would otherwise outlive the run (seen in CI; 1 run in 40 to 80
/// of the escaped-grandchild test here with both cores busy).
const UNSURE_LIMIT: Duration = Duration::from_millis(500);

/// Whether a child belongs to this supervision, from its environment.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Mark {
    /// Its environment holds the run's token.
    Ours,
    /// Its environment does not, or it is gone or not readable.
    Other,
    /// Its environment reads empty: between `execve`'s point of no return
    /// and the new image's stack set-up the kernel shows nothing.
    Unknown,
}

/// Whether `pid`'s environment holds `marker` (`NAME=value`).
pub(super) fn mark(pid: libc::pid_t, marker: &str) -> Mark {
    match std::fs::read(format!("/proc/{pid}/environ")) {
        Ok(env) if env.is_empty() => Mark::Unknown,
        Ok(env) if env.split(|b| *b == 0).any(|kv| kv == marker.as_bytes()) => Mark::Ours,
        _ => Mark::Other,
    }
}

/// Whether this process has any child at all (exited or not), without reaping.
pub(super) fn has_children() -> bool {
    crate::sys::proc::has_children()
}

/// Children of this process, with their state (`Z`: exited, not reaped).
pub(super) fn children() -> Vec<(libc::pid_t, char)> {
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
pub(super) fn proc_stat(pid: libc::pid_t) -> Option<(libc::pid_t, char)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces and parentheses: split after the last ')'.
    let mut rest = s.rsplit_once(')')?.1.split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    Some((ppid, state))
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
        assert!(wait_until(Duration::from_secs(5), || mark(
            ours_pid,
            &format!("{PEER_TOKEN_VAR}={token}")
        ) == Mark::Ours));
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
    fn an_empty_environment_is_unknown_not_someone_elses() {
        use std::process::Command;
        // The kernel shows an empty environment for a moment during
        // `execve`; a process started with none shows the same.
        let mut bare = Command::new("sleep").arg("30").env_clear().spawn().unwrap();
        let pid = bare.id() as libc::pid_t;
        assert!(wait_until(Duration::from_secs(5), || mark(pid, "X=1") == Mark::Unknown));
        bare.kill().unwrap();
        bare.wait().unwrap();
        assert_eq!(mark(pid, "X=1"), Mark::Other, "a process that is gone");
    }

    #[test]
    fn a_child_caught_before_its_environment_shows_is_still_stopped() {
        use std::process::Command;
        // Empty environment first (what a scan sees mid-`execve`), the
        // run's token 50 ms later: a single scan would let it go.
        let token = "test-token-unsure";
        let mut child = Command::new("/bin/sh")
            .env_clear()
            .arg("-c")
            .arg(format!(
                "/bin/sleep 0.05; {PEER_TOKEN_VAR}={token} exec /bin/sleep 30"
            ))
            .spawn()
            .unwrap();
        let pid = child.id() as libc::pid_t;
        assert!(wait_until(Duration::from_secs(5), || mark(pid, "X=1") == Mark::Unknown));
        stop_orphans(token, Duration::from_secs(5));
        assert!(
            proc_stat(pid).is_none(),
            "stopped and reaped once its token showed"
        );
        let _ = child.kill();
        let _ = child.wait();
    }
}
