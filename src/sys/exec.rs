//! What a child does between fork and exec. Each hook is registered with
//! `CommandExt::pre_exec`, whose closure runs in the forked child where only
//! async-signal-safe calls are allowed: every hook here is one or two plain
//! system calls, no allocation, no lock.

use std::os::fd::RawFd;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Linux: the child receives `sig` when the thread that spawned it dies
/// (baton killed outright takes its children with it). Elsewhere a no-op.
pub fn parent_death_signal(cmd: &mut Command, sig: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: one async-signal-safe syscall between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, sig);
            Ok(())
        });
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (cmd, sig);
}

/// The child starts a session of its own (`setsid`): it outlives the
/// caller's terminal, shell and process group. `keep`: a descriptor the
/// child inherits across exec (its close-on-exec flag cleared in the child only).
pub fn new_session(cmd: &mut Command, keep: Option<RawFd>) {
    // SAFETY: only async-signal-safe calls (setsid, fcntl) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(fd) = keep {
                super::fd::set_cloexec_raw(fd, false)?;
            }
            Ok(())
        });
    }
}
