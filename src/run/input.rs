//! What a run is asked, read and checked before planning: access, cwd,
//! the task text (words, a file or stdin), the budget.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use super::RunRequest;
use crate::agent::Access;
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
