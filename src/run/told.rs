//! How a run's failure is told: the `error` object (named when the
//! adapter was sure of the kind) and the warning of a run baton stopped
//! while its CLI went on retrying.

use std::time::Duration;

use super::Plan;
use super::execute::info;
use crate::agent::Agent;
use crate::failure::{Failure, Named};
use crate::result::ErrorInfo;

/// The warning of a run baton stopped while its CLI retried: what it saw,
/// when, and why it did not wait.
pub(super) fn stopped_early(
    agent: Agent,
    at: Duration,
    f: crate::agent::Failing,
    seen: &str,
) -> String {
    let why = if f.endless {
        "it set its retries no end"
    } else {
        "no retry can mend that"
    };
    format!(
        "baton stopped {} {:.1}s into the run, as soon as it showed `{}` ({}) and went on \
         retrying on its own: {why}, so baton did not wait",
        agent.name(),
        at.as_secs_f64(),
        f.failure.kind(),
        crate::agent::clip(seen, 160)
    )
}

/// The peer's own failure: named when its adapter was sure of the kind,
/// else `agent_error`, with the CLI's message.
pub(super) fn named_error(plan: &Plan, o: &crate::agent::Outcome, message: &str) -> ErrorInfo {
    let named = o.failure.unwrap_or(Named::new(Failure::AgentError));
    let mut i = info(
        named.failure.kind(),
        message.to_string(),
        &named.failure.hint(plan.agent.name()),
    );
    i.retry_after_s = named.retry_after_s;
    i
}
