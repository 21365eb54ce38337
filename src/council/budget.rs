//! `--budget-tokens`, `--max-usd` and `--max-wall`: a council stops with `needs_human`
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
    let why = over_tokens(rec.settings.budget_tokens, spent, remaining)
        .or_else(|| over_usd(rec.settings.max_usd, spent, remaining));
    let Some(why) = why else {
        return Ok(false);
    };
    rec.stop(Event::OverBudget, why)?;
    rec.stop_kind = Some(crate::failure::Failure::BudgetExceeded.kind().into());
    rec.save()?;
    Ok(true)
}

/// `--budget-tokens`: the calls so far and `remaining` more of their
/// average size would cross it.
fn over_tokens(budget: Option<u64>, spent: &[Call], remaining: u64) -> Option<String> {
    let budget = budget?;
    let used = call::tokens(spent);
    let per_call = used.checked_div(spent.len() as u64).unwrap_or(0);
    let projected = used.saturating_add(per_call.saturating_mul(remaining));
    (projected > budget).then(|| {
        format!(
            "--budget-tokens {budget}: {used} tokens used, {projected} projected with the {remaining} call(s) ahead"
        )
    })
}

/// `--max-usd`, the same way over the calls with a known cost (reported by
/// the CLI or estimated from the price table); the others count nothing.
fn over_usd(budget: Option<f64>, spent: &[Call], remaining: u64) -> Option<String> {
    let budget = budget?;
    let costs: Vec<f64> = spent
        .iter()
        .filter_map(|c| c.usage.cost_usd.and_then(crate::result::usable_cost))
        .collect();
    let used = costs.iter().fold(0.0, |a, b| crate::result::add_usd(a, *b));
    let per_call = if costs.is_empty() {
        0.0
    } else {
        used / costs.len() as f64
    };
    let projected = used + per_call * remaining as f64;
    (projected > budget).then(|| {
        format!(
            "--max-usd {budget}: ${used:.4} used, ${projected:.4} projected with the {remaining} call(s) ahead"
        )
    })
}
