//! The command line of `baton setup`, `baton completions`, `baton man` and
//! the hidden `baton __complete-jobs`: clap types turned into plain requests.

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::output::Mode;
use crate::output::render::Render;
use crate::setup::{Places, Scope, SetupRequest};

#[derive(Debug, Clone, Args)]
pub struct SetupArgs {
    /// Hosts to install the `peer` skill for: claude, codex, pi, gemini, or all (all hosts + man pages).
    #[arg(value_name = "HOST")]
    pub hosts: Vec<String>,
    /// user (your home; default) or project (this repository, for everyone who clones it).
    #[arg(long, value_name = "SCOPE", default_value = "user")]
    pub scope: String,
    /// Also install the man pages into $XDG_DATA_HOME/man/man1 (default ~/.local/share/man/man1; user scope).
    #[arg(long)]
    pub man: bool,
    /// Add `baton mcp` to these hosts' MCP configuration: claude, codex, gemini, qwen, opencode, cursor, or all.
    #[arg(long, value_name = "HOST", value_delimiter = ',')]
    pub mcp: Vec<String>,
    /// List every path setup would write or remove, and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Remove what setup wrote (and only that).
    #[arg(long)]
    pub uninstall: bool,
    /// Replace (or with --uninstall remove) files setup did not write or that changed since.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, powershell or elvish.
    #[arg(value_name = "SHELL")]
    pub shell: String,
}

#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// Write baton.1 and one page per subcommand into DIR (default: print baton.1).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

fn command() -> clap::Command {
    crate::cli::full_command()
}

/// `--json`/`--text` where a command has one output form only: refused
/// (exit 2), never accepted and ignored (issue 29 §7). `logs` prints text
/// for people, `completions` a shell script, `man` a page (only `--dir` has
/// a report in both forms), `mcp` speaks JSON-RPC.
pub fn one_output(cmd: Option<&super::Command>, out: super::OutputArgs) -> Result<()> {
    use super::Command as C;
    let (flag, what, hint) = match cmd {
        Some(C::Logs(_)) if out.json => (
            "--json",
            "`logs` prints the peer's progress for people",
            "drop --json: `baton logs ID --raw` prints the CLI's own event stream, \
             `baton result ID` the result as JSON",
        ),
        Some(C::Completions(_)) if out.json => (
            "--json",
            "`completions` prints a shell script",
            "drop --json",
        ),
        Some(C::Man(m)) if out.json && m.dir.is_none() => (
            "--json",
            "`man` prints a man page (only `man --dir DIR` has a JSON report)",
            "drop --json, or give --dir DIR",
        ),
        Some(C::Mcp(_)) if out.text => (
            "--text",
            "`mcp` speaks JSON-RPC on stdin and stdout",
            "drop --text: the server answers each tool call with both structuredContent and \
             the --text form",
        ),
        _ => return Ok(()),
    };
    Err(Error::usage_hint(
        format!("{what}; it has no {flag} form"),
        hint,
    ))
}

pub fn setup(a: SetupArgs, mode: Mode) -> Result<i32> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::io("finding the path of the running baton", e))?;
    let scope = Scope::parse(&a.scope)?;
    let targets = crate::setup::targets(&a.hosts, a.man, &a.mcp, scope)?;
    let man_pages = if targets.contains(&crate::setup::Target::Man) {
        super::manpage::pages(command())?
    } else {
        Vec::new()
    };
    let req = SetupRequest {
        targets: a.hosts,
        man: a.man,
        mcp: a.mcp,
        scope,
        uninstall: a.uninstall,
        dry_run: a.dry_run,
        force: a.force,
        exe,
        man_pages,
        places: Places::from_env()?,
    };
    crate::output::emit(&crate::setup::run(&req)?, mode)
}

pub fn completions(a: CompletionsArgs) -> Result<i32> {
    let shell = super::completions::parse_shell(&a.shell)?;
    // A script for a shell, not text for people: its bytes as they are.
    crate::output::write_stdout(super::completions::script(command(), shell)?.as_bytes())?;
    Ok(0)
}

pub fn man(a: ManArgs, mode: Mode) -> Result<i32> {
    match a.dir {
        None => {
            let pages = super::manpage::pages(command())?;
            let (_, text) = pages
                .into_iter()
                .next()
                .ok_or_else(|| Error::Internal("no man page".into()))?;
            crate::output::write_stdout(&text)?;
        }
        Some(dir) => {
            let written = super::manpage::write_all(command(), &dir)?;
            return crate::output::emit(
                &Written {
                    schema_version: 1,
                    status: "ok",
                    written,
                },
                mode,
            );
        }
    }
    Ok(0)
}

/// `baton man --dir DIR`: the pages written.
#[derive(Serialize)]
struct Written {
    schema_version: u32,
    status: &'static str,
    written: Vec<PathBuf>,
}

impl Render for Written {
    fn exit_code(&self) -> i32 {
        0
    }

    fn text(&self) -> String {
        self.written
            .iter()
            .map(|p| format!("wrote {}\n", p.display()))
            .collect()
    }
}

pub fn complete_jobs() -> Result<i32> {
    for id in super::completions::job_ids() {
        println!("{id}");
    }
    Ok(0)
}
