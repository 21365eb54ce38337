//! The checks of one agent CLI: where it is, which version (from its npm
//! package.json when it has one, else `--version` with a short timeout),
//! whether that version is tested, its credentials and sandbox needs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::versions::{self, Verdict, Version};
use super::{Check, Severity, auth};
use crate::agent::{Access, Agent};
use crate::process;

/// How long `<cli> --version` may take (they run in parallel).
pub const VERSION_TIMEOUT: process::timeouts::Knob = process::timeouts::DOCTOR_VERSION;

type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// One row of doctor's agent table.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AgentReport {
    pub name: &'static str,
    pub binary: &'static str,
    /// The argv prefix from the config, when one pins the CLI.
    pub command: Option<Vec<String>>,
    pub path: Option<PathBuf>,
    pub version: Option<String>,
    /// `package.json` (read, no process started) or `--version`.
    pub version_source: Option<&'static str>,
    /// The versions baton was tested with (`e2e/versions.env`).
    pub tested: Option<String>,
    pub ready: bool,
    /// Whether the CLI reports which model served a run (`model` in the
    /// result); where it does not, `model` is only what was asked for.
    pub reports_model: bool,
    /// What each access mode will and will not enforce with this CLI.
    pub access: BTreeMap<&'static str, &'static str>,
    /// A brought agent's answer to ACP `initialize`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acp: Option<super::acp::Handshake>,
    #[serde(skip)]
    pub checks: Vec<Check>,
}

pub fn inspect(agent: Agent, command: Option<Vec<String>>, target: bool, env: Env) -> AgentReport {
    if let Agent::Byo(_) = agent {
        return super::acp::inspect(agent, target);
    }
    let id = |what: &str| format!("agent.{}.{what}", agent.name());
    let mut r = AgentReport {
        name: agent.name(),
        binary: agent.binary(),
        command: command.clone(),
        path: None,
        version: None,
        version_source: None,
        tested: versions::tested_range(agent),
        ready: false,
        reports_model: reports_model(agent),
        access: access_lines(agent),
        acp: None,
        checks: Vec::new(),
    };
    let program = command
        .as_ref()
        .map_or(agent.binary(), |c| c[0].as_str())
        .to_string();
    let Some(path) = process::find_program(&program).filter(|p| p.is_file()) else {
        let (sev, msg) = if target {
            (Severity::Error, "is not installed")
        } else {
            (Severity::Info, "is not installed (optional)")
        };
        let (msg, hint) = match &command {
            Some(c) => (
                format!("`{}` from agents.{}.command {msg}", c[0], agent.name()),
                format!(
                    "fix agents.{}.command in your config (`baton config show` names the file)",
                    agent.name()
                ),
            ),
            None => (
                format!("`{}` (the {} CLI) {msg}", agent.binary(), agent.name()),
                agent.install_hint().to_string(),
            ),
        };
        r.checks.push(Check::problem(id("cli"), sev, msg, &hint));
        return r;
    };
    r.checks.push(Check::ok(
        id("cli"),
        match &command {
            Some(c) => format!("{} (agents.{}.command)", c.join(" "), agent.name()),
            None => path.display().to_string(),
        },
    ));
    r.path = Some(path.clone());
    let script_paths: Vec<PathBuf> = command
        .iter()
        .flatten()
        .skip(1)
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .chain(std::iter::once(path.clone()))
        .collect();
    let from_pkg = versions::package(agent)
        .and_then(|pkg| script_paths.iter().find_map(|p| package_version(p, pkg)));
    let version = match from_pkg {
        Some(v) => {
            r.version_source = Some("package.json");
            Ok(v)
        }
        None => {
            r.version_source = Some("--version");
            let argv: Vec<String> = match &command {
                Some(c) => c[1..].to_vec(),
                None => Vec::new(),
            };
            version_of(&path, &argv)
        }
    };
    match version {
        Ok(v) => {
            r.checks.push(version_check(agent, &v));
            r.version = Some(v);
        }
        Err(why) => r.checks.push(Check::problem(
            id("version"),
            Severity::Error,
            format!("`{} --version` failed: {why}", program),
            "run it by hand to see why; reinstall the CLI if it does not start",
        )),
    }
    r.checks.extend(auth::checks(agent, env));
    r.checks.extend(sandbox_checks(agent, env));
    r.ready = !r
        .checks
        .iter()
        .any(|c| c.severity == Severity::Error && !c.ok);
    r
}

fn version_check(agent: Agent, v: &str) -> Check {
    let id = format!("agent.{}.version", agent.name());
    let parsed = Version::find(v);
    match versions::judge(agent, parsed) {
        Verdict::Tested { note: None } => {
            Check::ok(id, format!("{v}: the version baton is tested with"))
        }
        Verdict::Tested { note: Some(n) } => Check::ok(id, format!("{v}: tested; {n}")),
        Verdict::Newer { tested } => Check::problem(
            id,
            Severity::Warning,
            format!("{v} is newer than the tested {tested}: untested, probably fine"),
            &format!(
                "if a run misbehaves, try the tested one: npm install -g {}@{tested}",
                versions::package(agent).unwrap_or(agent.binary())
            ),
        ),
        Verdict::Between { low, high } => Check::problem(
            id,
            Severity::Warning,
            format!("{v} lies between the tested {low} and {high}: untested"),
            &format!(
                "npm install -g {}@{high}",
                versions::package(agent).unwrap_or(agent.binary())
            ),
        ),
        Verdict::Older {
            tested,
            differences,
        } => Check::problem(
            id,
            Severity::Warning,
            match differences {
                Some(d) => format!("{v} is older than the tested {tested}; known differences: {d}"),
                None => {
                    format!("{v} is older than the tested {tested}: its flags or output may differ")
                }
            },
            &format!(
                "npm install -g {}@{}",
                versions::package(agent).unwrap_or(agent.binary()),
                versions::pinned(agent).map_or(tested, |p| p)
            ),
        ),
        Verdict::Unknown => Check::ok(
            id,
            match parsed {
                Some(_) => format!("{v} (baton has no tested version of this CLI)"),
                None => format!("`{v}` (no version number baton can compare)"),
            },
        ),
    }
}

/// The `version` of the npm package `pkg` that contains `path` (after
/// symlinks), found by walking up to its package.json. Reads no secret and
/// starts no process, so node CLIs that take seconds to start cost nothing.
fn package_version(path: &Path, pkg: &str) -> Option<String> {
    let real = path.canonicalize().ok()?;
    for dir in real.ancestors().skip(1).take(6) {
        let Ok(text) = std::fs::read_to_string(dir.join("package.json")) else {
            continue;
        };
        let j: serde_json::Value = serde_json::from_str(&text).ok()?;
        if j["name"] == pkg {
            return j["version"].as_str().map(str::to_string);
        }
        // Another package's manifest: the CLI is not inside `pkg`.
        return None;
    }
    None
}

/// `<cli> [argv…] --version`: the first non-empty line of stdout, else of
/// stderr (pi prints it there), within `VERSION_TIMEOUT` (its whole group
/// stopped then).
fn version_of(p: &Path, argv: &[String]) -> Result<String, String> {
    let out = process::Command::new(p)
        .args(argv)
        .arg("--version")
        .deadline(VERSION_TIMEOUT.get())
        .output()
        .map_err(|e| e.to_string())?;
    let first = |b: &[u8]| {
        String::from_utf8_lossy(b)
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|l| crate::agent::clip(l, 120))
    };
    if out.status.success() {
        first(&out.stdout)
            .or_else(|| first(&out.stderr))
            .ok_or_else(|| "it printed nothing".into())
    } else {
        Err(first(&out.stderr)
            .or_else(|| first(&out.stdout))
            .unwrap_or_else(|| out.status.to_string()))
    }
}

/// What the CLI's sandbox needs on this machine (Linux).
fn sandbox_checks(agent: Agent, env: Env) -> Vec<Check> {
    let id = format!("agent.{}.sandbox", agent.name());
    if !cfg!(target_os = "linux") {
        return Vec::new();
    }
    match agent {
        Agent::Claude => {
            let missing: Vec<&str> = ["bwrap", "socat"]
                .into_iter()
                .filter(|p| process::find_program(p).is_none())
                .collect();
            if missing.is_empty() {
                vec![Check::ok(
                    id,
                    "bwrap and socat are on PATH: workspace runs commands in claude's sandbox"
                        .to_string(),
                )]
            } else {
                vec![Check::problem(
                    id,
                    Severity::Warning,
                    format!(
                        "{} not on PATH: with workspace access claude can edit files but its commands (tests, builds) are denied",
                        missing.join(" and ")
                    ),
                    "apt-get install bubblewrap socat (or your system's packages for them)",
                )]
            }
        }
        Agent::Codex => {
            let home = env("CODEX_HOME")
                .map(PathBuf::from)
                .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".codex")));
            let tmp = env("TMPDIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("/tmp"));
            // codex refuses to create its helper links under the temporary
            // directory (`TMPDIR`, else /tmp).
            let under_tmp = home.as_ref().is_some_and(|h| h.starts_with(&tmp));
            let fix = codex_home_fix(env("HOME").map(PathBuf::from).as_deref(), &tmp);
            let at = home
                .as_ref()
                .map_or(String::new(), |h| format!(" ({})", h.display()));
            let bwrap = process::find_program("bwrap");
            match (under_tmp, bwrap) {
                (true, Some(b)) => vec![Check::problem(
                    id,
                    Severity::Error,
                    format!(
                        "CODEX_HOME{at} is under the temporary directory ({}) and a system bwrap ({}) \
                         is on PATH: codex cannot create its sandbox helper there, so every sandboxed \
                         command fails (read-only and workspace alike)",
                        tmp.display(),
                        b.display()
                    ),
                    &fix,
                )],
                (true, None) => vec![Check::problem(
                    id,
                    Severity::Warning,
                    format!(
                        "CODEX_HOME{at} is under the temporary directory ({}): harmless while codex \
                         uses its bundled bubblewrap, but every sandboxed command will fail once a \
                         system bwrap is installed",
                        tmp.display()
                    ),
                    &fix,
                )],
                (false, _) => vec![Check::ok(
                    id,
                    "codex's sandbox helper can be set up (CODEX_HOME is outside /tmp)".to_string(),
                )],
            }
        }
        _ => Vec::new(),
    }
}

/// A fix for a `CODEX_HOME` under the temporary directory `tmp` (what codex
/// calls temporary: `TMPDIR`, else /tmp) that changes something: `$HOME/.codex`
/// when HOME is outside it; when HOME itself is under it (CI, containers),
/// `$HOME/.codex` is the same place, so a private `TMPDIR` inside HOME, which
/// leaves HOME's `.codex` outside what codex takes for temporary.
fn codex_home_fix(home: Option<&Path>, tmp: &Path) -> String {
    match home {
        Some(h) if !h.starts_with(tmp) => format!(
            "export CODEX_HOME=\"{}\" (any directory of yours outside {})",
            h.join(".codex").display(),
            tmp.display()
        ),
        Some(h) => {
            let private = h.join(".tmp");
            format!(
                "HOME ({}) is itself under {}, so $HOME/.codex would not help: give codex a private \
                 temporary directory inside HOME, `mkdir -p -m 700 \"{}\" && export TMPDIR=\"{}\"` \
                 (codex takes TMPDIR for the temporary directory), or export CODEX_HOME as a \
                 directory of yours outside {}",
                h.display(),
                tmp.display(),
                private.display(),
                private.display(),
                tmp.display()
            )
        }
        None => format!(
            "export CODEX_HOME as a directory of yours outside {}",
            tmp.display()
        ),
    }
}

/// Whether the CLI reports the model that served the run.
pub fn reports_model(agent: Agent) -> bool {
    // codex's and opencode's JSON lines carry no model; the others name it in
    // their metadata (claude/qwen init, pi per message, gemini-cli init/stats, agy's JSON).
    !matches!(agent, Agent::Codex | Agent::Opencode)
}

/// One line per access mode, consistent with the README's access section.
pub fn access_lines(agent: Agent) -> BTreeMap<&'static str, &'static str> {
    let line = |a: Access| -> &'static str {
        match (agent, a) {
            (Agent::Codex, Access::ReadOnly) => {
                "codex's sandbox (--sandbox read-only): writes fail, commands still run"
            }
            (Agent::Codex, Access::Workspace) => {
                "codex's sandbox: edits and commands in the cwd; writes elsewhere fail"
            }
            (Agent::Claude, Access::ReadOnly) => {
                "only Read, Grep and Glob are offered; other tool calls are denied (listed in denials)"
            }
            (Agent::Claude, Access::Workspace) => {
                "edits in the cwd; commands run in claude's OS sandbox (Linux: needs bwrap and socat), else are denied"
            }
            (Agent::Agy, Access::ReadOnly) => "refused: agy has no read-only mode",
            (Agent::Agy, Access::Workspace) => {
                "agy's --sandbox confines terminal commands only, not its file tools"
            }
            (Agent::Zai | Agent::Pi, Access::ReadOnly) => {
                "baton's sandbox: a read-only file system (pi keeps its shell); a tool allowlist (read, grep, find, ls) with --sandbox off"
            }
            (Agent::Zai | Agent::Pi, Access::Workspace) => {
                "baton's sandbox (pi has none); unconfined with --sandbox off (the result warns)"
            }
            (Agent::GeminiCli, Access::ReadOnly) => {
                "baton's sandbox: yolo on a read-only file system (writes fail by the kernel); with --sandbox off --approval-mode default, the mutating tools not offered"
            }
            (Agent::GeminiCli, Access::Workspace) => {
                "baton's sandbox, --approval-mode yolo (shell commands confined); auto_edit with --sandbox off"
            }
            (Agent::Opencode, Access::ReadOnly) => {
                "baton's sandbox: a read-only file system; with --sandbox off an opencode agent baton defines that allows only read, glob, grep, list and todowrite"
            }
            (Agent::Opencode, Access::Workspace) => {
                "opencode's own rules and baton's sandbox (bash confined too); with --sandbox off bash is not confined (the result warns)"
            }
            (Agent::Qwen, Access::ReadOnly) => {
                "baton's sandbox: yolo on a read-only file system (writes fail by the kernel); with --sandbox off --approval-mode plan, writes and shell commands declined"
            }
            (Agent::Qwen, Access::Workspace) => {
                "baton's sandbox, --approval-mode yolo (shell commands confined); auto-edit with --sandbox off"
            }
            (Agent::Copilot, Access::ReadOnly) => {
                "over ACP under baton's sandbox: edits and commands allowed on a read-only file system (writes fail by the kernel); with --sandbox off baton rejects every edit and command (listed in denials); reads do not ask"
            }
            (Agent::Copilot, Access::Workspace) => {
                "over ACP: edits inside the cwd are allowed, edits outside it rejected; commands run under baton's sandbox (rejected with --sandbox off)"
            }
            (Agent::Kilo, Access::ReadOnly) => {
                "over ACP (its rules set to ask) under baton's sandbox: edits and commands allowed on a read-only file system; with --sandbox off baton rejects every edit and command (listed in denials)"
            }
            (Agent::Kilo, Access::Workspace) => {
                "over ACP: edits inside the cwd are allowed, edits outside it rejected; commands run under baton's sandbox (rejected with --sandbox off)"
            }
            (Agent::Nanocoder, Access::ReadOnly) => {
                "over ACP (its session set to normal mode) under baton's sandbox: edits and commands allowed on a read-only file system; with --sandbox off baton rejects every edit and command (listed in denials); refused while an agents.config.json pre-approves tools (alwaysAllow)"
            }
            (Agent::Nanocoder, Access::Workspace) => {
                "over ACP: edits inside the cwd are allowed, edits outside it rejected; commands run under baton's sandbox (rejected with --sandbox off); refused while an agents.config.json pre-approves tools (alwaysAllow)"
            }
            (Agent::Cline, Access::ReadOnly) => {
                "over ACP (every tool asks) under baton's sandbox: edits and commands allowed on a read-only file system; with --sandbox off baton rejects every edit and command (listed in denials)"
            }
            (Agent::Cline, Access::Workspace) => {
                "over ACP: patches whose every file is inside the cwd are allowed, others rejected; commands run under baton's sandbox (rejected with --sandbox off)"
            }
            (Agent::Byo(_), Access::ReadOnly) => {
                "over ACP under baton's sandbox: a read-only file system holds it, edits and commands allowed; with --sandbox off baton rejects every edit and command (listed in denials), and what it does without asking cannot be policed"
            }
            (Agent::Byo(_), Access::Workspace) => {
                "over ACP: edits inside the cwd are allowed, edits outside it rejected; commands run under baton's sandbox, which also holds what it does without asking (with --sandbox off: commands rejected, the rest cannot be policed)"
            }
            (Agent::Byo(b), Access::Full) if !crate::agent::byo::get(b).full_access => {
                "refused: the entry in your user file does not say full_access = true"
            }
            (_, Access::Full) => "nothing is enforced: the CLI's permission checks are skipped",
        }
    };
    [Access::ReadOnly, Access::Workspace, Access::Full]
        .into_iter()
        .map(|a| (a.as_str(), line(a)))
        .collect()
}
