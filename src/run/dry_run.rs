//! What `run --dry-run` prints: the exact argv (and its chain's), the
//! environment changes, the prompt, the ACP messages, and the argv as it
//! would be spawned under baton's sandbox. Nothing is started.

use super::{Plan, confine, transport};
use crate::agent::CommandSpec;
use crate::config;
use crate::process;
use crate::result::SCHEMA_VERSION;

/// What `--dry-run` prints.
pub fn dry_run_json(plan: &Plan, spec: &CommandSpec) -> serde_json::Value {
    let argv = |spec: &CommandSpec| {
        std::iter::once(spec.program.clone())
            .chain(spec.args_lossy())
            .collect::<Vec<_>>()
    };
    // The chain as it would run: each agent's exact argv (checked by `plan`).
    let fallback: Vec<serde_json::Value> = plan
        .chain_commands()
        .unwrap_or_default()
        .iter()
        .map(|(p, spec)| {
            serde_json::json!({
                "agent": p.agent.name(),
                "model": p.model,
                "effort": p.effort,
                "transport": p.transport.as_str(),
                "argv": argv(spec),
                "warnings": p.warnings.iter().chain(spec.warnings.iter()).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({
        "schema_version": SCHEMA_VERSION,
        "dry_run": true,
        "agent": plan.agent.name(),
        "program": spec.program,
        "argv": argv(spec),
        "cwd": plan.cwd,
        "env_set": spec.env_set.iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect::<serde_json::Map<_, _>>(),
        "env_remove": spec.env_remove,
        // Set when the peer starts, to a value unique to the run.
        "env_set_per_run": [process::PEER_TOKEN_VAR],
        "stdin": spec.stdin,
        "prompt": plan.prompt,
        "model": plan.model,
        "effort": plan.effort,
        "access": plan.access.as_str(),
        "timeout_ms": plan.timeout_ms,
        "idle_timeout_ms": if plan.agent.streams_progress() { Some(plan.idle_timeout_ms) } else { None },
        "warnings": plan.warnings.iter().chain(spec.warnings.iter()).collect::<Vec<_>>(),
        // Which config files decided the defaults above.
        "config_files": config::active().files_read(),
        "retry": plan.retry,
        "fallback": fallback,
        "max_usd": plan.budget.max_usd,
        "budget_tokens": plan.budget.max_tokens,
        "transport": plan.transport.as_str(),
        "acp": transport::dry_run_acp(plan),
        // The argv as it would be spawned, under baton's sandbox or not.
        "sandbox": confine::peer(plan, true)
            .map(|c| confine::preview(&c, argv(spec)))
            .unwrap_or_else(|e| serde_json::json!({"error": e.to_string()})),
    })
}
