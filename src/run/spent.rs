//! What one call spent, kept: its usage as the session counts it (codex
//! and qwen report totals per session) and its entry in the usage ledger.

use super::Plan;
use crate::agent::Transport;
use crate::fsutil;
use crate::result::{RunResult, Usage};
use crate::spend::ledger;

/// The call in the usage ledger (`baton usage`); a ledger that cannot be
/// written is a warning of the result, never its end.
pub(super) fn record(plan: &Plan, r: &mut RunResult) {
    let e = ledger::Entry {
        at: crate::ids::now_ms(),
        run: plan.run_id.clone(),
        agent: r.agent.clone(),
        model: r.model.as_ref().map(|m| crate::agent::clip(m, 120)),
        status: r.status.as_str().to_string(),
        kind: r.error.as_ref().map(|e| e.kind.clone()),
        input: 0,
        output: 0,
        cached: 0,
        cost: None,
        est: false,
        fb: plan.fell_back,
        ms: r.duration_ms,
    }
    .of_usage(&r.usage);
    if let Err(e) = ledger::append(&plan.root, &e) {
        r.warnings
            .push(format!("this call is missing from `baton usage`: {e}").into());
    }
}

/// Codex reports usage cumulatively per thread. baton keeps the last total
/// it saw per session so a resumed run reports only its own tokens.
pub(super) fn session_usage(
    plan: &Plan,
    session: Option<&str>,
    usage: &Usage,
    warnings: &mut Vec<String>,
) -> Usage {
    // Over ACP every agent reports per prompt (qwen's headless total is
    // per session; its ACP `_meta.usage` is per model call: measured).
    if !plan.agent.usage_is_cumulative() || plan.transport == Transport::Acp {
        return usage.clone();
    }
    let Some(session) =
        session.filter(|s| s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
    else {
        return usage.clone();
    };
    let Ok(dir) = crate::state_dir::project(&plan.root).map(|d| d.join("sessions")) else {
        return usage.clone();
    };
    let path = dir.join(format!("{}-{session}.json", plan.agent.name()));
    let earlier: Option<Usage> = std::fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let own = match (&plan.resume, earlier) {
        (Some(_), Some(e)) => usage.minus(&e),
        (Some(_), None) => {
            warnings.push(format!(
                "{} reports usage per session and this session was started outside baton's \
                 records: usage is the session's total, not this run's",
                plan.agent.name()
            ));
            usage.clone()
        }
        (None, _) => usage.clone(),
    };
    if !usage.is_empty()
        && fsutil::ensure_private_dir(&dir).is_ok()
        && let Ok(b) = serde_json::to_vec(usage)
    {
        let _ = fsutil::replace_file(&path, &b);
    }
    own
}
