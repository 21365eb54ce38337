//! `baton mcp`: its flags, and each MCP tool's input described from the
//! clap definition of the command it runs (`mcp::input::Field`), so the
//! tools' schemas and argv come from the same place as `--help`.

use std::any::TypeId;

use clap::{ArgAction, Args};

use crate::error::Result;
use crate::mcp::input::{Field, Kind};
use crate::mcp::tools::{Described, TOOLS, ToolDef};

#[derive(Debug, Clone, Args, Default)]
pub struct McpArgs {
    /// Let calls ask for `access: full` (refused otherwise).
    #[arg(long)]
    pub allow_full_access: bool,

    /// Let calls give `test_cmd`, a shell command baton runs as you (under its sandbox, with no
    /// network, where this machine has one; unconfined otherwise). Refused unless given (or
    /// full access is allowed).
    #[arg(long)]
    pub allow_test_cmd: bool,

    /// The most access any call may ask for: read-only or workspace [default: workspace].
    #[arg(long, value_name = "MODE", value_parser = ["read-only", "workspace"])]
    pub max_access: Option<String>,

    /// A directory calls may work in, `cwd` and the files they name (repeatable)
    /// [default: the directory the server starts in].
    #[arg(long = "root", value_name = "DIR")]
    pub roots: Vec<std::path::PathBuf>,
}

fn options(a: &McpArgs) -> crate::mcp::Options {
    crate::mcp::Options {
        allow_full_access: a.allow_full_access,
        allow_test_cmd: a.allow_test_cmd,
        max_access: a.max_access.clone(),
        roots: a.roots.clone(),
    }
}

pub fn command(a: McpArgs) -> Result<i32> {
    crate::mcp::serve(&options(&a), described())
}

/// Every tool, described from the command line.
pub fn described() -> Vec<Described> {
    let cli = crate::cli::full_command();
    TOOLS.iter().map(|d| describe(&cli, d)).collect()
}

/// Arguments no tool takes: the output mode (a call's output is always
/// JSON) and clap's own.
const NEVER: &[&str] = &["json", "text", "help", "version"];

fn subcommand<'a>(cli: &'a clap::Command, path: &[&str]) -> &'a clap::Command {
    let mut c = cli;
    for p in path {
        c = c
            .find_subcommand(p)
            .unwrap_or_else(|| panic!("`baton {}` is not a command", path.join(" ")));
    }
    c
}

/// A field's name: its long flag in snake case (`--include-dirty` is
/// `include_dirty`), so the tool's input reads like the command line; a
/// positional's id (`task`, `id`).
fn name(a: &clap::Arg) -> String {
    match a.get_long() {
        Some(l) if !a.is_positional() => l.replace('-', "_"),
        _ => a.get_id().to_string(),
    }
}

fn describe(cli: &clap::Command, def: &'static ToolDef) -> Described {
    let c = subcommand(cli, def.path);
    let fields = c
        .get_arguments()
        .filter(|a| {
            let n = name(a);
            !NEVER.contains(&n.as_str()) && !def.cli_only.iter().any(|(c, _)| *c == n)
        })
        .map(field)
        .collect();
    Described { def, fields }
}

fn field(a: &clap::Arg) -> Field {
    let positional = a.is_positional();
    let integer = [
        TypeId::of::<u64>(),
        TypeId::of::<u32>(),
        TypeId::of::<usize>(),
    ]
    .iter()
    .any(|t| a.get_value_parser().type_id() == *t);
    let number = a.get_value_parser().type_id() == TypeId::of::<f64>();
    // A path the command opens: typed as one, or named so (`--file
    // PATH[:A-B]` is a string because of its line range).
    let path = a.get_value_parser().type_id() == TypeId::of::<std::path::PathBuf>()
        || a.get_value_names()
            .into_iter()
            .flatten()
            .any(|n| n.as_str().starts_with("PATH"));
    let kind = match a.get_action() {
        ArgAction::SetTrue => Kind::Switch,
        // The words of a task or question: one string here.
        ArgAction::Append if positional => Kind::Text,
        ArgAction::Append => Kind::List,
        _ if integer => Kind::Integer,
        _ if number => Kind::Number,
        _ => Kind::Text,
    };
    let takes_value = matches!(kind, Kind::Text | Kind::Integer | Kind::Number);
    Field {
        name: name(a),
        flag: (!positional).then(|| format!("--{}", a.get_long().unwrap_or(a.get_id().as_str()))),
        kind,
        help: a.get_help().map(|h| h.to_string()).unwrap_or_default(),
        required: a.is_required_set(),
        choices: if takes_value {
            a.get_possible_values()
                .iter()
                .map(|p| p.get_name().to_string())
                .collect()
        } else {
            Vec::new()
        },
        default: a
            .get_default_values()
            .first()
            .filter(|_| takes_value)
            .map(|v| v.to_string_lossy().into_owned()),
        path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(tool: &str) -> Vec<String> {
        described()
            .into_iter()
            .find(|t| t.def.name == tool)
            .unwrap()
            .fields
            .into_iter()
            .map(|f| f.name)
            .collect()
    }

    /// A flag added to `run` fails this test until it is listed here (the
    /// MCP input then has it) or in the tool's `cli_only` with a reason; a
    /// flag removed or renamed fails it too.
    #[test]
    fn the_run_tool_knows_every_flag_of_run() {
        let want = [
            "agent",
            "model",
            "effort",
            "access",
            "cwd",
            "resume",
            "timeout",
            "idle_timeout",
            "provider",
            "raw",
            "max_usd",
            "budget_tokens",
            "fallback",
            "retry",
            // `run --async`: the result is the job's start line.
            "async",
            "worktree",
            "base",
            "include_dirty",
            "allow",
            "test_cmd",
            // The fan-out's (issue 21): a call naming `agents` or
            // `attempts` is best of N.
            "agents",
            "attempts",
            "until_green",
            "pick",
            "judge",
            "keep_all",
            "max_wall",
            "task",
        ];
        assert_eq!(names("run"), want);
        let run = subcommand(&crate::cli::full_command(), &["run"]).clone();
        let every: Vec<String> = run
            .get_arguments()
            .map(name)
            .filter(|id| !NEVER.contains(&id.as_str()))
            .collect();
        let cli_only: Vec<&str> = crate::mcp::tools::find("run")
            .unwrap()
            .cli_only
            .iter()
            .map(|(n, _)| *n)
            .collect();
        for id in &every {
            assert!(
                want.contains(&id.as_str()) || cli_only.contains(&id.as_str()),
                "`run --{id}`: add it to the run tool or to its cli_only list"
            );
        }
    }

    /// The spending and fallback flags reach MCP hosts typed as JSON would
    /// give them: an amount is a number, the chain a list.
    #[test]
    fn the_spending_and_fallback_inputs_are_typed() {
        for tool in ["run", "ask", "council_discuss"] {
            let t = described()
                .into_iter()
                .find(|t| t.def.name == tool)
                .unwrap();
            let kind = |n: &str| t.fields.iter().find(|f| f.name == n).map(|f| f.kind);
            assert_eq!(kind("max_usd"), Some(Kind::Number), "{tool}");
            if tool != "council_discuss" {
                assert_eq!(kind("budget_tokens"), Some(Kind::Integer), "{tool}");
            }
            if tool == "run" {
                assert_eq!(kind("fallback"), Some(Kind::List), "{tool}");
                assert_eq!(kind("retry"), Some(Kind::Integer), "{tool}");
            }
        }
    }

    #[test]
    fn every_left_out_flag_exists_and_says_why() {
        let cli = crate::cli::full_command();
        for d in TOOLS {
            let c = subcommand(&cli, d.path);
            for (id, why) in d.cli_only {
                assert!(
                    c.get_arguments().any(|a| name(a) == *id),
                    "{}: `{id}` is no argument of `baton {}`",
                    d.name,
                    d.path.join(" ")
                );
                assert!(!why.is_empty());
            }
            for id in d.also_required {
                assert!(
                    c.get_arguments().any(|a| name(a) == *id),
                    "{}: {id}",
                    d.name
                );
            }
        }
    }

    #[test]
    fn fields_carry_the_clis_types_help_and_defaults() {
        let t = described();
        let get = |tool: &str, name: &str| {
            t.iter()
                .find(|d| d.def.name == tool)
                .unwrap()
                .fields
                .iter()
                .find(|f| f.name == name)
                .unwrap_or_else(|| panic!("{tool}.{name}"))
                .clone()
        };
        let task = get("run", "task");
        assert_eq!((task.kind, task.flag.as_deref()), (Kind::Text, None));
        assert_eq!(get("run", "raw").kind, Kind::Switch);
        assert_eq!(get("run", "allow").kind, Kind::List);
        assert_eq!(
            get("run", "idle_timeout").flag.as_deref(),
            Some("--idle-timeout")
        );
        assert!(get("run", "model").help.contains("Model or alias"));
        let q = get("council_plan", "quorum");
        assert_eq!((q.kind, q.default.as_deref()), (Kind::Integer, Some("2")));
        assert_eq!(
            get("ask", "constraint").flag.as_deref(),
            Some("--constraint")
        );
        assert_eq!(
            get("council_discuss", "async").flag.as_deref(),
            Some("--async")
        );
        assert!(get("job_wait", "id").flag.is_none());
    }
}
