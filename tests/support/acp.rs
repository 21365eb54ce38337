//! The fake ACP agents' scripts and the command that starts them, shared by
//! every test that drives an ACP agent (`fake_acp.py` replays a recording,
//! `fake_acp_council.py` answers council stages; both import the line
//! protocol from `acp_wire.py`).

use std::fs;
use std::path::Path;

pub const FAKE: &str = include_str!("fake_acp.py");
pub const COUNCIL: &str = include_str!("fake_acp_council.py");
pub const WIRE: &str = include_str!("acp_wire.py");

/// Writes `fake_acp.py` and its helpers into `dir` (again is harmless) and
/// returns the shell words that start it, to which a test appends the
/// recording and switches: `python3 -S '<dir>/fake_acp.py'`. `-S` skips the
/// site import: the fakes need only the stdlib, and it is a third of
/// Python's start-up on the test machine.
pub fn fake_acp(dir: &Path) -> String {
    install(dir, "fake_acp.py", FAKE)
}

/// `fake_acp_council.py` as [`fake_acp`] does it (it also imports
/// `council_fake.py`, which must be in `dir`).
pub fn fake_acp_council(dir: &Path) -> String {
    install(dir, "fake_acp_council.py", COUNCIL)
}

fn install(dir: &Path, name: &str, text: &str) -> String {
    fs::write(dir.join("acp_wire.py"), WIRE).unwrap();
    let script = dir.join(name);
    fs::write(&script, text).unwrap();
    format!("python3 -S '{}'", script.display())
}
