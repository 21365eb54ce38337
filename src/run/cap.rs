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
