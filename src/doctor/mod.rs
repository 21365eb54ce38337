//! `baton doctor`: is everything in place to delegate? Every agent CLI (path,
//! version against the tested ones, credentials, sandbox needs, what each
//! access mode enforces) and baton itself, each problem with its fix.
//!
//! Agents are inspected in parallel (a node CLI takes seconds to print its
//! version, so versions are read from package.json where there is one).
//! Exit 0 when the default agent (or `--agent`) is ready, 1 otherwise.
//! `baton agents`, the plain list of the same CLIs, is `agents.rs`.

pub mod acp;
pub mod agent;
pub mod agents;
pub mod auth;
mod own;
mod probe;
mod sandbox;
pub mod versions;

use std::path::PathBuf;
use std::sync::mpsc;

use serde::Serialize;

use crate::agent::Agent;
use crate::config::Config;
use crate::error::Result;
use crate::output::{self, Mode};
use crate::result::SCHEMA_VERSION;

/// What `baton doctor` was asked (built by the command line).
#[derive(Debug, Clone, Default)]
pub struct DoctorRequest {
    /// Check this agent only; it decides the exit code.
    pub agent: Option<String>,
    /// Also send each ready agent a tiny prompt (costs tokens).
    pub probe: bool,
    /// The directory whose project is checked (default: the current one).
    pub cwd: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

/// One finding. A problem (`ok: false`) always carries the command or
/// change that fixes it in `hint`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Check {
    pub id: String,
    pub ok: bool,
    pub severity: Severity,
    pub message: String,
    pub hint: Option<String>,
}

impl Check {
    pub fn ok(id: String, message: String) -> Check {
        Check {
            id,
            ok: true,
            severity: Severity::Info,
            message,
            hint: None,
        }
    }

    pub fn problem(id: String, severity: Severity, message: String, hint: &str) -> Check {
        Check {
            id,
            // An absent optional CLI is information, not a failure.
            ok: severity == Severity::Info,
            severity,
            message,
            hint: Some(hint.to_string()),
        }
    }
}

/// `baton doctor --json` (`baton schema doctor`).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Report<'a> {
    pub schema_version: u32,
    /// `success` when the default (or named) agent is ready and baton has
    /// no error, else `failed`.
    pub status: &'static str,
    pub summary: String,
    pub default_agent: &'static str,
    /// The agents that are ready.
    pub ready: Vec<&'a str>,
    /// Every finding: baton's own, then each agent's.
    pub checks: Vec<Check>,
    pub agents: Vec<agent::AgentReport>,
    pub baton: own::BatonInfo,
}

pub fn command(req: &DoctorRequest, mode: Mode) -> Result<i32> {
    let root = crate::config::project_root(req.cwd.as_deref())?;
    // A broken config file is one of doctor's findings, not a reason to stop.
    let config = Config::load(req.cwd.as_deref());
    let empty = Config::default();
    let cfg = config.as_ref().unwrap_or(&empty);
    let target = match &req.agent {
        Some(a) => Agent::parse(a)?,
        None => cfg.default_agent(),
    };
    let agents: Vec<Agent> = match &req.agent {
        Some(_) => vec![target],
        None => Agent::everyone(),
    };
    let env = |k: &str| std::env::var(k).ok();
    let (mut checks, baton) = own::checks(&root, &config, &env);

    let (tx, rx) = mpsc::channel();
    for (i, a) in agents.iter().copied().enumerate() {
        let tx = tx.clone();
        let command = cfg.command(a);
        std::thread::spawn(move || {
            let env = |k: &str| std::env::var(k).ok();
            let _ = tx.send((i, agent::inspect(a, command, a == target, &env)));
        });
    }
    drop(tx);
    let mut reports: Vec<(usize, agent::AgentReport)> = rx.iter().collect();
    reports.sort_by_key(|(i, _)| *i);
    let mut reports: Vec<agent::AgentReport> = reports.into_iter().map(|(_, r)| r).collect();

    if req.probe {
        let (tx, rx) = mpsc::channel();
        for (i, r) in reports.iter().enumerate().filter(|(_, r)| r.ready) {
            let tx = tx.clone();
            let a = Agent::parse(r.name)?;
            std::thread::spawn(move || {
                let _ = tx.send((i, probe::probe(a)));
            });
        }
        drop(tx);
        for (i, c) in rx.iter() {
            if !c.ok {
                reports[i].ready = false;
            }
            reports[i].checks.push(c);
        }
    }

    let baton_ok = !checks
        .iter()
        .any(|c| !c.ok && c.severity == Severity::Error);
    let target_ready = reports.iter().any(|r| r.name == target.name() && r.ready);
    let ready: Vec<&str> = reports.iter().filter(|r| r.ready).map(|r| r.name).collect();
    let success = target_ready && baton_ok;
    let summary = if success {
        format!(
            "{} is ready{}",
            target.name(),
            match ready.len() {
                1 => String::new(),
                n => format!(" ({n} agents ready: {})", ready.join(", ")),
            }
        )
    } else if !target_ready {
        let own = reports
            .iter()
            .filter(|r| r.name == target.name())
            .flat_map(|r| r.checks.iter());
        format!("{} is not ready: {}", target.name(), first_errors(own))
    } else {
        format!(
            "baton itself has a problem: {}",
            first_errors(checks.iter())
        )
    };
    for r in &reports {
        checks.extend(r.checks.iter().cloned());
    }
    match mode {
        Mode::Json => output::json_line(&Report {
            schema_version: SCHEMA_VERSION,
            status: if success { "success" } else { "failed" },
            summary,
            default_agent: target.name(),
            ready,
            checks,
            agents: reports,
            baton,
        })?,
        Mode::Text => print_text(&summary, &checks, &reports)?,
    }
    Ok(if success { 0 } else { 1 })
}

/// The summary's reason: the first error's message, and how many more
/// there are. Said in the summary itself, not "see below": the text report
/// prints the summary last and the JSON puts `checks` after it.
fn first_errors<'a>(checks: impl Iterator<Item = &'a Check>) -> String {
    let errors: Vec<&Check> = checks
        .filter(|c| !c.ok && c.severity == Severity::Error)
        .collect();
    match errors.as_slice() {
        [] => "see its checks".into(),
        [one] => one.message.clone(),
        [first, rest @ ..] => format!(
            "{} (and {} more error{})",
            first.message,
            rest.len(),
            if rest.len() == 1 { "" } else { "s" }
        ),
    }
}

fn print_text(summary: &str, checks: &[Check], reports: &[agent::AgentReport]) -> Result<()> {
    let mark = |c: &Check| match (c.ok, c.severity) {
        (true, _) if c.hint.is_some() => " -- ",
        (true, _) => "ok  ",
        (false, Severity::Error) => "FAIL",
        (false, _) => "warn",
    };
    let mut s = String::new();
    let line = |s: &mut String, c: &Check| {
        s.push_str(&format!("  [{}] {}\n", mark(c), c.message));
        if let Some(h) = &c.hint {
            s.push_str(&format!("         fix: {h}\n"));
        }
    };
    s.push_str("baton\n");
    for c in checks.iter().filter(|c| c.id.starts_with("baton.")) {
        line(&mut s, c);
    }
    for r in reports {
        s.push_str(&format!(
            "\n{} ({}){}\n",
            r.name,
            r.version.as_deref().unwrap_or("-"),
            r.tested
                .as_ref()
                .map(|t| format!(", tested: {t}"))
                .unwrap_or_default()
        ));
        for c in &r.checks {
            line(&mut s, c);
        }
        if r.path.is_none() {
            continue;
        }
        for mode in ["read-only", "workspace", "full"] {
            if let Some(what) = r.access.get(mode) {
                s.push_str(&format!("  access {mode:<9} {what}\n"));
            }
        }
        if !r.reports_model {
            s.push_str(
                "  model     cannot confirm which model served: `model` is what baton asked for\n",
            );
        }
    }
    s.push_str(&format!("\n{summary}\n"));
    output::text(&s)
}
