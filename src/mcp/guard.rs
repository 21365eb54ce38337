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

use serde_json::{Map, Value};

use super::input::Field;
use super::roots::Roots;
use crate::agent::Access;
use crate::error::{Error, Result};
use crate::run::{ALLOW_TEST_CMD_VAR, MAX_ACCESS_VAR};

/// How many ancestors are looked at, at most.
#[cfg(target_os = "linux")]
const MAX_ANCESTORS: usize = 64;

/// What `baton mcp` was started with.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Let calls ask for full access.
    pub allow_full_access: bool,
    /// Let calls give a test command (`test_cmd`) under a cap below full.
    pub allow_test_cmd: bool,
    /// `read-only` or `workspace`: the most a call may ask for.
    pub max_access: Option<String>,
    /// `--root DIR`: where calls may work (none given: the server's own
    /// directory).
    pub roots: Vec<std::path::PathBuf>,
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

/// What the server holds every call to, besides the cap its children get.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Calls may give `test_cmd` (`test_cmd_allowed`).
    pub test_cmd: bool,
    pub roots: Roots,
}

impl Policy {
    pub fn new(o: &Options) -> Result<Policy> {
        Ok(Policy {
            test_cmd: test_cmd_allowed(o)?,
            roots: Roots::new(&o.roots)?,
        })
    }

    /// Refuse a call that gives a test command this server does not
    /// allow, or works outside its roots (a `cwd` given is replaced by
    /// the directory it resolves to): the message and the hint.
    pub fn allows(&self, fields: &[Field], args: &mut Map<String, Value>) -> Refused {
        let takes_test_cmd = fields.iter().any(|f| f.name == "test_cmd");
        if !self.test_cmd && takes_test_cmd && args.get("test_cmd").is_some_and(|v| !v.is_null()) {
            return Err((
                "`test_cmd` is a shell command baton would run as you (under its sandbox where \
                 this machine has one, unconfined otherwise: as much as full access): this \
                 server does not accept one"
                    .into(),
                "start the server with `baton mcp --allow-test-cmd` (or --allow-full-access), or \
                 leave `test_cmd` out"
                    .into(),
            ));
        }
        self.roots.confine(fields, args)
    }
}

type Refused = std::result::Result<(), super::roots::Refusal>;

/// Whether calls may give a test command: always under a full cap;
/// below it only with `--allow-test-cmd`, and never past a cap this server
/// inherited that did not allow it (a server started by a capped peer).
pub fn test_cmd_allowed(o: &Options) -> Result<bool> {
    if cap(o)? == Access::Full {
        return Ok(true);
    }
    let inherited = std::env::var(MAX_ACCESS_VAR).ok();
    let inherited_allows = match inherited.as_deref().map(Access::parse) {
        None | Some(Ok(Access::Full)) => true,
        Some(_) => std::env::var_os(ALLOW_TEST_CMD_VAR).is_some_and(|v| v == "1"),
    };
    Ok(o.allow_test_cmd && inherited_allows)
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
    let mut pid = crate::sys::proc::parent();
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
            ..Options::default()
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

    #[test]
    fn a_test_command_needs_full_access_or_its_own_flag() {
        if std::env::var_os(MAX_ACCESS_VAR).is_some() {
            return;
        }
        let o = |full: bool, test_cmd: bool, max: Option<&str>| Options {
            allow_full_access: full,
            allow_test_cmd: test_cmd,
            max_access: max.map(Into::into),
            ..Options::default()
        };
        assert!(!test_cmd_allowed(&o(false, false, None)).unwrap());
        assert!(test_cmd_allowed(&o(true, false, None)).unwrap());
        assert!(test_cmd_allowed(&o(false, true, None)).unwrap());
        // A cap below full asked for: only the flag lets it through.
        assert!(!test_cmd_allowed(&o(true, false, Some("workspace"))).unwrap());
        assert!(test_cmd_allowed(&o(false, true, Some("read-only"))).unwrap());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_parent_is_found_from_proc() {
        let me = std::process::id() as libc::pid_t;
        // SAFETY: getppid has no preconditions.
        assert_eq!(parent_of(me), Some(crate::sys::proc::parent()));
    }
}
