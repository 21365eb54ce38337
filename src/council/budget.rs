//! `--budget-tokens` and `--max-wall`: a council stops with `needs_human`
//! before a stage whose calls would cross a limit.

use std::time::Instant;

use super::call::{self, Call};
use super::machine::Event;
use super::store::Record;
use crate::error::Result;

/// Stop with `needs_human` when the projected token use would cross the
/// budget, or the wall-time limit has passed. `remaining`: calls still to
/// come in the stages ahead.
pub fn over_budget(
    rec: &mut Record,
    spent: &[Call],
    remaining: u64,
    started: Instant,
) -> Result<bool> {
    if rec.stage.is_terminal() {
        return Ok(true);
    }
    if let Some(max) = rec.settings.max_wall_ms {
        let wall = started.elapsed().as_millis() as u64;
        if wall > max {
            rec.stop(
                Event::OverBudget,
                format!("--max-wall: {wall} ms spent, the limit is {max} ms"),
            )?;
            return Ok(true);
        }
    }
    let Some(budget) = rec.settings.budget_tokens else {
        return Ok(false);
    };
    let used = call::tokens(spent);
    let per_call = if spent.is_empty() {
        0
    } else {
        used / spent.len() as u64
    };
    let projected = used + per_call * remaining;
    if projected > budget {
        rec.stop(
            Event::OverBudget,
            format!(
                "--budget-tokens {budget}: {used} tokens used, {projected} projected with the {remaining} call(s) ahead"
            ),
        )?;
        return Ok(true);
    }
    Ok(false)
}
