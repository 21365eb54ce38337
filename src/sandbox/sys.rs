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
