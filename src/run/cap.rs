//! What a parent baton imposes on the runs it starts: the recursion depth
//! (`BATON_DEPTH` under `BATON_MAX_DEPTH`) and the access cap
//! (`BATON_MAX_ACCESS`), both checked where every run is planned.

use crate::agent::Access;
use crate::error::{Error, Result};

/// The recursion depth, read once from the environment.
pub struct Depth {
    pub depth: u32,
    pub max: u32,
}

impl Depth {
    pub fn from_env() -> Depth {
        let get = |k: &str| {
            std::env::var(k)
                .ok()
                .and_then(|v| v.trim().parse::<u32>().ok())
        };
        Depth {
            depth: get("BATON_DEPTH").unwrap_or(0),
            max: get("BATON_MAX_DEPTH").unwrap_or(1),
        }
    }

    pub fn check(&self) -> Result<()> {
        if self.depth >= self.max {
            return Err(Error::RecursionLimit {
                depth: self.depth,
                max: self.max,
            });
        }
        Ok(())
    }
}

/// Caps the access any run of this process may take (`read-only`,
/// `workspace` or `full`). `baton mcp` sets it for every call it makes, so a
/// host cannot ask for more than the server was started with; every path to
/// a peer (run, job, continue, ask, council) plans through here.
pub const MAX_ACCESS_VAR: &str = "BATON_MAX_ACCESS";

fn rank(a: Access) -> u8 {
    match a {
        Access::ReadOnly => 0,
        Access::Workspace => 1,
        Access::Full => 2,
    }
}

/// `access_capped` when `access` is over `BATON_MAX_ACCESS`.
pub fn check_access_cap(access: Access) -> Result<()> {
    let Some(raw) = std::env::var_os(MAX_ACCESS_VAR) else {
        return Ok(());
    };
    // A cap that cannot be read caps everything: refusing is the safe side.
    let cap = raw.to_str().map(Access::parse);
    match cap {
        Some(Ok(cap)) if rank(access) <= rank(cap) => Ok(()),
        Some(Ok(cap)) => Err(Error::Refused {
            kind: "access_capped",
            message: format!(
                "`--access {}` is over the cap {MAX_ACCESS_VAR}={}",
                access.as_str(),
                cap.as_str()
            ),
            hint: match cap {
                Access::ReadOnly => "ask for read-only access".into(),
                _ => format!(
                    "ask for {} access at most (`baton mcp` allows full access only with --allow-full-access)",
                    cap.as_str()
                ),
            },
        }),
        _ => Err(Error::Refused {
            kind: "access_capped",
            message: format!(
                "{MAX_ACCESS_VAR}={} is not an access mode",
                raw.to_string_lossy()
            ),
            hint: "set it to read-only, workspace or full".into(),
        }),
    }
}

/// Set to `1` by `baton mcp --allow-test-cmd` beside a cap below `full`:
/// the one thing that lets a test command through such a cap.
pub const ALLOW_TEST_CMD_VAR: &str = "BATON_ALLOW_TEST_CMD";

/// `access_capped` when `what` (a test command: `--test-cmd`, or a council
/// plan's) would run under a `BATON_MAX_ACCESS` below `full`. baton runs a
/// test command with `sh -c`, as the user: under its sandbox where the
/// machine has one, but unconfined with `--sandbox off` or no backend, so it
/// counts as full access whatever access the peer got: under a
/// cap it runs only when `BATON_ALLOW_TEST_CMD=1` says the cap's owner
/// allowed it (`baton mcp --allow-test-cmd`).
pub fn check_test_cmd_cap(what: &str) -> Result<()> {
    let Some(raw) = std::env::var_os(MAX_ACCESS_VAR) else {
        return Ok(());
    };
    let full = matches!(raw.to_str().map(Access::parse), Some(Ok(Access::Full)));
    let allowed = std::env::var_os(ALLOW_TEST_CMD_VAR).is_some_and(|v| v == "1");
    if full || allowed {
        return Ok(());
    }
    Err(Error::Refused {
        kind: "access_capped",
        message: format!(
            "{what} would run as you (unconfined where baton's sandbox is off or missing), \
             which is over the cap \
             {MAX_ACCESS_VAR}={}",
            raw.to_string_lossy()
        ),
        hint: "start `baton mcp` with --allow-test-cmd (or --allow-full-access) to let its \
               calls give a test command; from a shell, unset BATON_MAX_ACCESS"
            .into(),
    })
}
