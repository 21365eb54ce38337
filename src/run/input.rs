//! What a run is asked, read and checked before planning: access, cwd,
//! the task text (words, a file or stdin), the budget.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use super::RunRequest;
use crate::agent::{Access, Agent};
use crate::config;
use crate::error::{Error, Result};
use crate::spend::Budget;

pub fn resolve_access(args: &RunRequest) -> Result<Access> {
    if args.read_only {
        return Ok(Access::ReadOnly);
    }
    if args.full_access {
        return Ok(Access::Full);
    }
    match &args.access {
        Some(a) => Access::parse(a),
        None => match config::active().string("run.access") {
            Some(a) => Access::parse(&a),
            None => Ok(Access::Workspace),
        },
    }
}

/// `--sandbox`, else `run.sandbox` of the config (whose reader already
/// refused a bad value and `off` in a project file), else auto.
pub fn resolve_sandbox(args: &RunRequest) -> Result<crate::sandbox::Want> {
    let given = args
        .sandbox
        .clone()
        .or_else(|| config::active().string("run.sandbox"));
    match given {
        Some(s) => crate::sandbox::Want::parse(&s).map_err(|m| {
            Error::usage_hint(
                format!("--sandbox: {m}"),
                "auto runs peers without a sandbox of their own under baton's where this \
                 machine has one; require fails where it has none; off never wraps",
            )
        }),
        None => Ok(crate::sandbox::Want::Auto),
    }
}

pub fn resolve_cwd(cwd: Option<&Path>) -> Result<PathBuf> {
    let base =
        std::env::current_dir().map_err(|e| Error::io("reading the current directory", e))?;
    let dir = match cwd {
        Some(d) => base.join(d),
        None => base,
    };
    let dir = dir.canonicalize().map_err(|e| {
        Error::usage_hint(
            format!("--cwd {}: {e}", dir.display()),
            "give an existing directory",
        )
    })?;
    if !dir.is_dir() {
        return Err(Error::usage(format!(
            "--cwd {} is not a directory",
            dir.display()
        )));
    }
    Ok(dir)
}

/// The task text: words, `--prompt-file`, or piped stdin, in that order.
pub fn read_task(args: &RunRequest) -> Result<String> {
    if !args.task.is_empty() && args.prompt_file.is_some() {
        return Err(Error::usage(
            "give the task as words or with --prompt-file, not both",
        ));
    }
    let text = if let Some(p) = &args.prompt_file {
        if p.as_os_str() == "-" {
            read_stdin()?
        } else {
            std::fs::read_to_string(p).map_err(|e| {
                Error::usage_hint(
                    format!("--prompt-file {}: {e}", p.display()),
                    "give a readable text file",
                )
            })?
        }
    } else if !args.task.is_empty() {
        args.task.join(" ")
    } else if !std::io::stdin().is_terminal() {
        read_stdin()?
    } else {
        String::new()
    };
    if text.trim().is_empty() {
        return Err(Error::usage_hint(
            "no task given",
            "pass the task as words (`baton \"fix the failing test\"`), with --prompt-file, or on stdin",
        ));
    }
    Ok(text)
}

fn read_stdin() -> Result<String> {
    let mut s = String::new();
    std::io::stdin()
        .read_to_string(&mut s)
        .map_err(|e| Error::io("reading the task from stdin", e))?;
    Ok(s)
}

/// `--max-usd` and `--budget-tokens`, checked: a limit of nothing, or one
/// that is not a number, is a usage error.
pub fn budget(max_usd: Option<f64>, tokens: Option<u64>) -> Result<Budget> {
    if let Some(u) = max_usd
        && !(u.is_finite() && u > 0.0)
    {
        return Err(Error::usage_hint(
            format!("--max-usd {u} is not a positive amount"),
            "give dollars, e.g. --max-usd 0.50",
        ));
    }
    if tokens == Some(0) {
        return Err(Error::usage("--budget-tokens must be more than zero"));
    }
    Ok(Budget {
        max_usd,
        max_tokens: tokens,
    })
}

/// `check_priced` for an agent as a run would plan it: the model given, else
/// the config's `agents.<name>.model`, else the agent's default, resolved
/// through its aliases (a council's members, chair and writer).
pub fn check_agent_priced(agent: Agent, model: Option<&str>, max_usd: Option<f64>) -> Result<()> {
    if max_usd.is_none() {
        return Ok(());
    }
    let configured = config::active().string(&format!("agents.{}.model", agent.name()));
    let resolved = crate::agent::models::resolve(agent, model.or(configured.as_deref()), None)?;
    check_priced(agent, resolved.model.as_deref(), max_usd)
}

/// `check_priced` for a plan and every agent of its fallback chain.
pub fn check_plan_priced(p: &super::Plan, max_usd: Option<f64>) -> Result<()> {
    check_priced(p.agent, p.model.as_deref(), max_usd)?;
    for l in &p.fallback {
        check_priced(l.agent, l.model.as_deref(), max_usd)?;
    }
    Ok(())
}

/// `--max-usd` counts dollars only where it can price a call: an agent whose
/// CLI reports no cost (`Agent::reports_cost`) must run a model with a price
/// (`spend::prices`, the user's `[prices]` included). Otherwise the limit
/// would count nothing, so the run is refused before anything starts.
pub fn check_priced(agent: Agent, model: Option<&str>, max_usd: Option<f64>) -> Result<()> {
    let Some(max) = max_usd else { return Ok(()) };
    if agent.reports_cost() || model.is_some_and(|m| crate::spend::prices::lookup(m).is_some()) {
        return Ok(());
    }
    let name = agent.name();
    let aliases: Vec<&str> = crate::agent::models::table(agent)
        .aliases
        .iter()
        .map(|(a, _)| *a)
        .collect();
    let pick = match aliases.as_slice() {
        [] => format!("--model MODEL (or agents.{name}.model in your config)"),
        a => format!(
            "--model {} (or agents.{name}.model in your config)",
            a.join("|")
        ),
    };
    let (message, hint) = match model {
        Some(m) => (
            format!(
                "--max-usd {max} cannot count {name}'s calls: model `{m}` has no price, and {name} \
                 does not report what a call cost"
            ),
            format!(
                "add its price to your user file ([prices.\"{m}\"] input/cached_input/output, USD \
                 per million tokens; docs/config.md#prices), pick a priced model (`baton agents`), \
                 or limit tokens with --budget-tokens"
            ),
        ),
        None => (
            format!(
                "--max-usd {max} cannot count {name}'s calls: no model is named, so baton cannot \
                 price the one {name} picks by default, and {name} does not report what a call cost"
            ),
            format!("name a priced model with {pick}, or limit tokens with --budget-tokens"),
        ),
    };
    Err(Error::Refused {
        kind: "unpriced_model",
        message,
        hint,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_usd_needs_a_price_where_the_cli_reports_no_cost() {
        // No limit in dollars: nothing to price.
        assert!(check_priced(Agent::Codex, None, None).is_ok());
        // Priced models, and CLIs that report their cost.
        assert!(check_priced(Agent::Codex, Some("gpt-5.6-luna"), Some(1.0)).is_ok());
        assert!(check_priced(Agent::Claude, None, Some(1.0)).is_ok());
        assert!(check_priced(Agent::Pi, Some("anything"), Some(1.0)).is_ok());
        // codex's default model is codex's own choice: baton cannot price it.
        let e = check_priced(Agent::Codex, None, Some(0.5)).unwrap_err();
        assert_eq!((e.kind(), e.exit_code()), ("unpriced_model", 2));
        let hint = e.hint().unwrap();
        assert!(hint.contains("--model luna|terra|sol|astra"), "{hint}");
        assert!(hint.contains("--budget-tokens"), "{hint}");
        let e = check_priced(Agent::GeminiCli, Some("gemini-9-ultra"), Some(0.5)).unwrap_err();
        assert!(
            e.to_string()
                .contains("model `gemini-9-ultra` has no price"),
            "{e}"
        );
        assert!(e.hint().unwrap().contains("[prices.\"gemini-9-ultra\"]"));
        // An alias resolves to a priced id.
        assert!(check_agent_priced(Agent::Codex, Some("sol"), Some(1.0)).is_ok());
        assert!(check_agent_priced(Agent::Agy, None, Some(1.0)).is_ok());
        assert!(check_agent_priced(Agent::Qwen, None, Some(1.0)).is_err());
    }
}
