//! Descriptors and files: `openat`/`fstatat`/`unlinkat` relative to a
//! directory descriptor, descriptor flags, pipe sizes, `poll`, `access`,
//! the terminal, a socket probe, and the C library's `memchr`.

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

/// `p` as a C string (a NUL inside it is an invalid input).
pub fn c_path(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
}

/// `openat(dir or the cwd, p, flags | O_CLOEXEC)`.
pub fn open_at(dir: Option<BorrowedFd<'_>>, p: &CStr, flags: libc::c_int) -> io::Result<OwnedFd> {
    let at = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: a valid descriptor (or AT_FDCWD) and a NUL-terminated path.
    let fd = unsafe { libc::openat(at, p.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: just returned by openat, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// What `lstat_at` tells of an entry: its type bits (`S_IFMT` of the mode),
/// device and inode.
#[derive(Debug, Clone, Copy)]
pub struct Stat {
    pub format: u32,
    pub dev: u64,
    pub ino: u64,
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)`: a link is reported as a link.
pub fn lstat_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<Stat> {
    // SAFETY: a zeroed `stat` is plain data, filled by fstatat on success.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid directory descriptor, a NUL-terminated name and a
    // struct to fill.
    let rc = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // The widths differ between platforms (macOS: a 32-bit st_dev).
    #[allow(clippy::unnecessary_cast)]
    Ok(Stat {
        format: st.st_mode as u32 & libc::S_IFMT as u32,
        dev: st.st_dev as u64,
        ino: st.st_ino as u64,
    })
}

/// `unlinkat(dir, name)` (`rmdir`: an empty directory).
pub fn unlink_at(dir: BorrowedFd<'_>, name: &CStr, rmdir: bool) -> io::Result<()> {
    let flags = if rmdir { libc::AT_REMOVEDIR } else { 0 };
    // SAFETY: a valid directory descriptor and a NUL-terminated name.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Take ownership of a descriptor this process inherited across exec
/// (`--lock-fd`), if it is open and `is_it` accepts the file. Refused, the
/// descriptor is left as it was. Call it once, before anything else could
/// have taken the number: that is what makes the ownership ours.
pub fn adopt_inherited(fd: RawFd, is_it: impl FnOnce(&File) -> bool) -> Option<File> {
    // SAFETY: F_GETFD only asks whether the descriptor is open.
    if fd <= 2 || unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
        return None;
    }
    // SAFETY: the descriptor is open and, per this function's contract,
    // nothing else in this process owns it.
    let f = unsafe { File::from_raw_fd(fd) };
    if is_it(&f) {
        Some(f)
    } else {
        // Not ours to close.
        std::mem::forget(f);
        None
    }
}

/// Set or clear close-on-exec on `fd`.
pub fn set_cloexec(fd: BorrowedFd<'_>, on: bool) -> io::Result<()> {
    set_cloexec_raw(fd.as_raw_fd(), on)
}

/// `set_cloexec` on a raw descriptor: for the child between fork and exec
/// (async-signal-safe: two fcntl calls).
pub(super) fn set_cloexec_raw(fd: RawFd, on: bool) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor number; a closed one only fails.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    if flags == -1 {
        return Err(io::Error::last_os_error());
    }
    let flags = if on {
        flags | libc::FD_CLOEXEC
    } else {
        flags & !libc::FD_CLOEXEC
    };
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, flags) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Linux: ask for a pipe of `size` bytes (best effort: the limit
/// `/proc/sys/fs/pipe-max-size` may be lower). Returns the pipe's capacity
/// (the POSIX minimum, 4096, where it cannot be known).
pub fn enlarge_pipe(fd: BorrowedFd<'_>, size: usize) -> usize {
    #[cfg(target_os = "linux")]
    // SAFETY: fcntl on a pipe descriptor the caller owns; failure leaves it unchanged.
    unsafe {
        libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, size as libc::c_int);
        let n = libc::fcntl(fd.as_raw_fd(), libc::F_GETPIPE_SZ);
        if n > 0 {
            return n as usize;
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (fd, size);
    4096
}

/// Block until `fd` is readable, at most `limit`; whether it is.
pub fn poll_readable(fd: BorrowedFd<'_>, limit: Duration) -> bool {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = limit.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: one valid pollfd, for the duration of the call.
    unsafe { libc::poll(&mut p, 1, ms) > 0 }
}

/// One `read(2)` into `buf` (no retry on EINTR: the caller decides).
pub fn read(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: the pointer and length describe a buffer we own.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// `access(2)`: whether this process may read (`libc::R_OK`) or write
/// (`libc::W_OK`) `path`. Asks the kernel, opens nothing.
pub fn access(path: &Path, mode: libc::c_int) -> bool {
    let Ok(c) = c_path(path) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    unsafe { libc::access(c.as_ptr(), mode) == 0 }
}

/// Whether stderr is a terminal.
pub fn stderr_is_tty() -> bool {
    // SAFETY: isatty only inspects the descriptor.
    unsafe { libc::isatty(libc::STDERR_FILENO) == 1 }
}

/// The path of the terminal open on `fd` (`/dev/pts/3`), if it is one.
pub fn ttyname(fd: BorrowedFd<'_>) -> Option<std::path::PathBuf> {
    let mut buf = [0 as libc::c_char; 512];
    // SAFETY: ttyname_r writes at most `buf.len()` bytes, NUL included, into
    // our buffer and returns non-zero (leaving it unspecified) on failure.
    let r = unsafe { libc::ttyname_r(fd.as_raw_fd(), buf.as_mut_ptr(), buf.len()) };
    if r != 0 {
        return None;
    }
    // SAFETY: on success the buffer holds a NUL-terminated string.
    let name = unsafe { CStr::from_ptr(buf.as_ptr()) };
    let bytes = name.to_bytes();
    (!bytes.is_empty()).then(|| std::ffi::OsStr::from_bytes(bytes).into())
}

/// The width of the terminal on stderr, if it is one and says.
pub fn stderr_columns() -> Option<usize> {
    // SAFETY: a zeroed winsize is plain data.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ fills the struct we pass; failure leaves it zeroed.
    let ok = unsafe { libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
    (ok && ws.ws_col > 0).then_some(ws.ws_col as usize)
}

/// Open and close an IPv4 stream socket (never bound or connected): `Ok`,
/// or the errno that refused it.
pub fn probe_socket() -> Result<(), i32> {
    #[cfg(target_os = "linux")]
    let ty = libc::SOCK_STREAM | libc::SOCK_CLOEXEC;
    #[cfg(not(target_os = "linux"))]
    let ty = libc::SOCK_STREAM;
    // SAFETY: socket(2) takes plain integers.
    let fd = unsafe { libc::socket(libc::AF_INET, ty, 0) };
    if fd >= 0 {
        // SAFETY: the descriptor socket(2) just returned, seen by nothing else.
        drop(unsafe { OwnedFd::from_raw_fd(fd) });
        return Ok(());
    }
    Err(io::Error::last_os_error().raw_os_error().unwrap_or(0))
}

/// Make a FIFO at `path` (tests of readers that must not hang on one).
pub fn mkfifo(path: &Path, mode: u32) -> io::Result<()> {
    let c = c_path(path)?;
    // SAFETY: a valid NUL-terminated path for the duration of the call.
    if unsafe { libc::mkfifo(c.as_ptr(), mode as libc::mode_t) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The C library's `memchr` (vectorised): the position of `needle` in `hay`.
pub fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    // SAFETY: the pointer and length describe a live slice; memchr reads
    // at most `len` bytes and returns null or a pointer inside it.
    let p = unsafe { libc::memchr(hay.as_ptr().cast(), i32::from(needle), hay.len()) };
    (!p.is_null()).then(|| p as usize - hay.as_ptr() as usize)
}

/// A new pseudo-terminal: (master, slave). baton itself opens none; the
/// tests that need a real terminal (unit and integration) share this one.
pub fn openpty() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty fills the two descriptors; null name/termios/winsize
    // are allowed. `null_mut`: macOS declares the last two `*mut`, Linux
    // `*const` (which a `*mut` coerces to).
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both were just opened and are owned here.
    Ok(unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn ttyname_names_a_terminal_and_nothing_else() {
        let (_master, slave) = openpty().unwrap();
        let name = ttyname(slave.as_fd()).expect("a pty has a name");
        assert!(name.starts_with("/dev/"), "{name:?}");
        let f = File::open("/dev/null").unwrap();
        assert_eq!(ttyname(f.as_fd()), None);
    }
}
