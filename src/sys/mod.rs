//! The platform: every libc call of baton's, and every `unsafe` block of the
//! crate, behind safe functions (tests/layers.rs keeps `unsafe` here).
//!
//! Each wrapper is a thin shell over one or two system calls, with a
//! `// SAFETY:` comment saying why the call is sound; what the call means to
//! baton (which group to stop, which file to watch) stays with the caller.
//! Nothing here imports the rest of the crate: this is the bottom layer.
//!
//! - `proc`: pids, process groups, signals, reaping, who we are.
//! - `exec`: what a child does between fork and exec (its group, a new
//!   session, the parent-death signal, a descriptor kept across exec).
//! - `pidfd`: a process pinned by a pidfd (Linux).
//! - `fd`: descriptors and files: `openat`/`fstatat`/`unlinkat`, descriptor
//!   flags, pipe sizes, `flock`, `access`, the terminal, `memchr`.
//! - `inotify`: the one inotify wrapper (the TUI, `serve` and `logs --follow`).

pub mod exec;
pub mod fd;
#[cfg(target_os = "linux")]
pub mod inotify;
pub mod pidfd;
pub mod proc;
