//! Stages 6–9 driven in order (implementing, verifying, reviewing,
//! repairing) with council-exec's functions, each round stored for resume.

use super::deliberate::Deliberation;
use super::store::Record;
use crate::error::{Error, Result};
use crate::process::Interrupts;

pub fn execute(_rec: &mut Record, _d: &Deliberation, _ints: &Interrupts) -> Result<()> {
    Err(Error::Internal("stages 6–9 are not wired yet".into()))
}
