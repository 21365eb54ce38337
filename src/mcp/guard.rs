//! What the server lets a call do: the access cap every child gets
//! (`BATON_MAX_ACCESS`, checked where every run is planned) and the
//! recursion depth it inherited, which a host may have hidden from it.
//!
//! A peer that baton started has `BATON_DEPTH` set; if that peer's own MCP
//! configuration starts `baton mcp`, the host may start it with a scrubbed
//! environment (codex passes MCP servers only a short list of variables).
//! So the depth is also looked up in the environments of this process's
//! ancestors (Linux: `/proc/<pid>/environ`, same user only), and every child
//! gets the deeper of the two: the command line's own recursion check then
//! refuses the call with `recursion_limit`, as it would in a shell.

use crate::agent::Access;
use crate::error::{Error, Result};
use crate::run::MAX_ACCESS_VAR;

/// How many ancestors are looked at, at most.
const MAX_ANCESTORS: usize = 64;

/// What `baton mcp` was started with.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Let calls ask for full access.
    pub allow_full_access: bool,
    /// `read-only` or `workspace`: the most a call may ask for.
    pub max_access: Option<String>,
}

/// The access cap of this server: `--max-access`, else workspace (full with
/// `--allow-full-access`), never above a `BATON_MAX_ACCESS` it inherited.
pub fn cap(o: &Options) -> Result<Access> {
    let asked = match &o.max_access {
        Some(m) => match Access::parse(m)? {
            Access::Full => {
                return Err(Error::usage_hint(
                    "--max-access takes read-only or workspace",
                    "use --allow-full-access to let calls ask for full access",
                ));
            }
            a => a,
        },
        None if o.allow_full_access => Access::Full,
        None => Access::Workspace,
    };
    let inherited = std::env::var(MAX_ACCESS_VAR)
        .ok()
        .and_then(|v| Access::parse(&v).ok());
    Ok(match inherited {
        Some(i) if rank(i) < rank(asked) => i,
        _ => asked,
    })
}

fn rank(a: Access) -> u8 {
    match a {
        Access::ReadOnly => 0,
        Access::Workspace => 1,
        Access::Full => 2,
    }
}

/// `BATON_DEPTH` of this process, or of its nearest ancestor that has it,
/// whichever is deeper.
pub fn inherited_depth() -> u32 {
    let own = std::env::var("BATON_DEPTH")
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .unwrap_or(0);
    own.max(ancestor_depth().unwrap_or(0))
}

#[cfg(target_os = "linux")]
fn ancestor_depth() -> Option<u32> {
    // SAFETY: getppid has no preconditions.
    let mut pid = unsafe { libc::getppid() };
    for _ in 0..MAX_ANCESTORS {
        if pid <= 1 {
            return None;
        }
        if let Some(d) = depth_in(pid) {
            return Some(d);
        }
        pid = parent_of(pid)?;
    }
    None
}

#[cfg(not(target_os = "linux"))]
fn ancestor_depth() -> Option<u32> {
    None
}

/// `BATON_DEPTH` in `pid`'s environment (as it was at its exec).
#[cfg(target_os = "linux")]
fn depth_in(pid: libc::pid_t) -> Option<u32> {
    let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    env.split(|b| *b == 0)
        .find_map(|kv| kv.strip_prefix(b"BATON_DEPTH="))
        .and_then(|v| std::str::from_utf8(v).ok())
        .and_then(|v| v.trim().parse().ok())
}

/// The parent of `pid`, from `/proc/<pid>/stat` (the field after the name,
/// which is in parentheses and may hold spaces or parentheses itself).
#[cfg(target_os = "linux")]
fn parent_of(pid: libc::pid_t) -> Option<libc::pid_t> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_is_workspace_unless_full_access_is_allowed() {
        let o = |allow: bool, max: Option<&str>| Options {
            allow_full_access: allow,
            max_access: max.map(Into::into),
        };
        // The test process has no BATON_MAX_ACCESS of its own.
        if std::env::var_os(MAX_ACCESS_VAR).is_some() {
            return;
        }
        assert_eq!(cap(&o(false, None)).unwrap(), Access::Workspace);
        assert_eq!(cap(&o(true, None)).unwrap(), Access::Full);
        assert_eq!(cap(&o(true, Some("read-only"))).unwrap(), Access::ReadOnly);
        assert_eq!(
            cap(&o(false, Some("workspace"))).unwrap(),
            Access::Workspace
        );
        assert!(cap(&o(false, Some("full"))).is_err());
        assert!(cap(&o(false, Some("everything"))).is_err());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_parent_is_found_from_proc() {
        let me = std::process::id() as libc::pid_t;
        // SAFETY: getppid has no preconditions.
        assert_eq!(parent_of(me), Some(unsafe { libc::getppid() }));
    }
}
