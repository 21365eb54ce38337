//! Processes: signals to a pid or a group, reaping, whether a process
//! exists, and who baton is (its uid, its parent).

/// A process id as the kernel takes it.
pub type Pid = libc::pid_t;

/// Send `sig` to process `pid`; whether the kernel accepted it (signal 0:
/// whether the process exists and we may signal it).
pub fn kill(pid: Pid, sig: i32) -> bool {
    // SAFETY: kill(2) takes plain integers; no memory is involved.
    unsafe { libc::kill(pid, sig) == 0 }
}

/// Send `sig` to the process group `pgid`; whether the kernel accepted it.
/// Never to group 0 or 1 (ours, init's): a caller's bug must not signal
/// baton itself or the whole machine.
pub fn killpg(pgid: Pid, sig: i32) -> bool {
    if pgid <= 1 {
        return false;
    }
    // SAFETY: killpg(2) takes plain integers; no memory is involved.
    unsafe { libc::killpg(pgid, sig) == 0 }
}

/// Whether the group `pgid` still has a member (a zombie counts).
pub fn group_exists(pgid: Pid) -> bool {
    pgid > 1 && {
        // SAFETY: signal 0 only checks for existence.
        unsafe { libc::killpg(pgid, 0) == 0 }
    }
}

/// The process group of `pid`, if it exists.
pub fn getpgid(pid: Pid) -> Option<Pid> {
    // SAFETY: getpgid(2) takes a plain integer.
    let g = unsafe { libc::getpgid(pid) };
    (g >= 0).then_some(g)
}

/// Reap child `pid` if it has exited, without blocking; whether it is gone
/// (reaped now, or no child of ours to wait for); false: still running.
pub fn reap(pid: Pid) -> bool {
    let mut status = 0;
    // SAFETY: WNOHANG never blocks; `status` is a valid out-parameter.
    unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) != 0 }
}

/// Reap every exited child of ours in group `pgid`, without blocking.
pub fn reap_group(pgid: Pid) {
    if pgid <= 1 {
        return;
    }
    // SAFETY: WNOHANG never blocks; a null status pointer is allowed.
    while unsafe { libc::waitpid(-pgid, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
}

/// Whether this process has any child at all (exited or not), reaping none.
pub fn has_children() -> bool {
    // SAFETY: a zeroed siginfo is a valid out-parameter; WNOWAIT leaves any
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

/// Linux: make this process the reaper of its orphaned descendants
/// (process-wide, idempotent). Elsewhere a no-op.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain prctl on this process, no pointers.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// The effective user id.
pub fn euid() -> u32 {
    // Asked once per process: baton never changes its ids, and the state
    // folder's checks ask for it at every folder they look at.
    static EUID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    *EUID.get_or_init(|| unsafe { libc::geteuid() })
}

/// The parent's pid.
pub fn parent() -> Pid {
    // SAFETY: getppid(2) cannot fail and touches no memory.
    unsafe { libc::getppid() }
}
