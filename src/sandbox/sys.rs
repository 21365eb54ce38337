//! The sandbox's calls into libc: every `unsafe` of `src/sandbox/` is here
//! (house II moves this file under `sys/`).

/// The effective user id.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The highest Landlock ABI the kernel offers; 0 when it has none (not
/// built in, or not enabled at boot).
pub fn landlock_abi() -> u8 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag the
    // kernel reads nothing and returns the ABI version or an error.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u8::try_from(v).unwrap_or(0)
}

/// A resource limit the helper sets.
#[derive(Debug, Clone, Copy)]
pub enum Limit {
    /// RLIMIT_NPROC: processes and threads of the real user.
    Procs,
    /// RLIMIT_FSIZE: the size a written file may reach.
    FileSize,
}

/// Lower both the soft and the hard limit to `value` (never raise them: a
/// limit baton was started under stays). The resource constants differ in
/// type between glibc and musl, hence the macro.
pub fn lower_rlimit(which: Limit, value: u64) -> std::io::Result<()> {
    macro_rules! lower {
        ($resource:expr) => {{
            let mut now = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: `now` is a valid, writable rlimit for the kernel to fill.
            if unsafe { libc::getrlimit($resource, &mut now) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let value = value as libc::rlim_t;
            let new = libc::rlimit {
                rlim_cur: now.rlim_cur.min(value),
                rlim_max: now.rlim_max.min(value),
            };
            // SAFETY: `new` is a valid rlimit that the kernel only reads.
            if unsafe { libc::setrlimit($resource, &new) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        }};
    }
    match which {
        Limit::Procs => lower!(libc::RLIMIT_NPROC),
        Limit::FileSize => lower!(libc::RLIMIT_FSIZE),
    }
}

/// Give up every capability, for now and for what this process execs: the
/// bounding set emptied (so an exec as root regains nothing), the ambient
/// and the current sets cleared. Root keeps CAP_SYS_PTRACE otherwise, which
/// lets a Landlock-confined child read another process's memory through
/// `/proc/PID/environ` and `mem` (the ptrace check passes on the capability).
pub fn drop_capabilities() -> std::io::Result<()> {
    for cap in 0..64 {
        // SAFETY: PR_CAPBSET_READ takes a capability number and no pointer.
        match unsafe { libc::prctl(libc::PR_CAPBSET_READ, cap, 0, 0, 0) } {
            // Past the kernel's last capability: done.
            r if r < 0 => break,
            // Not in the set (inside bubblewrap, all are gone already).
            0 => continue,
            _ => {}
        }
        // SAFETY: PR_CAPBSET_DROP takes a capability number and no pointer.
        if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } != 0 {
            // Without CAP_SETPCAP the set cannot change; a process that is
            // not root gains nothing from it at exec under no_new_privs.
            if euid() != 0 {
                break;
            }
            return Err(std::io::Error::last_os_error());
        }
    }
    // SAFETY: PR_CAP_AMBIENT_CLEAR_ALL takes no pointer; EINVAL on a kernel
    // before 4.3, which has no ambient set to clear.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    let mut header = Header {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: version 3 takes a header and two data structs, laid out as
    // the kernel's; dropping capabilities needs no privilege.
    if unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// fork(2): `Some(pid)` in the parent, `None` in the child. The caller is
/// single-threaded (the helper, before it starts anything), so the child
/// may allocate and start threads of its own.
pub fn fork() -> std::io::Result<Option<i32>> {
    // SAFETY: called from the helper's only thread; the child continues
    // with a copy of a consistent address space.
    match unsafe { libc::fork() } {
        -1 => Err(std::io::Error::last_os_error()),
        0 => Ok(None),
        pid => Ok(Some(pid)),
    }
}

/// Point stdin, stdout and stderr at /dev/null: a background helper must
/// not hold the peer's pipes open (baton reads them to their end).
pub fn stdio_to_null() -> std::io::Result<()> {
    use std::os::fd::AsRawFd as _;
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    for fd in 0..3 {
        // SAFETY: both descriptors are open; dup2 only replaces `fd`.
        if unsafe { libc::dup2(null.as_raw_fd(), fd) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
