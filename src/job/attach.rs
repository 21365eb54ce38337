//! `baton attach ID`: hand an ended job's peer session to a person, in the
//! peer CLI's own interactive interface, where the job worked, with its access.
//!
//! baton *replaces itself* with the CLI (`execve`) instead of supervising it
//! as a child. This is the one exception to "every child in its own process
//! group": an interactive CLI must own the terminal — be in the terminal's
//! foreground process group, get Ctrl-C / Ctrl-Z / window-size signals from
//! it, read keys from it. Becoming the CLI keeps the shell's job control
//! exactly as if the person had typed the command, needs no `tcsetpgrp`
//! dance, and makes the CLI's exit status baton's without a waiting parent.

use std::ffi::OsStr;
use std::path::PathBuf;

use crate::agent::{Agent, CommandSpec};
use crate::error::{Error, Result};
use crate::output::Mode;
use crate::process;
use crate::result::SCHEMA_VERSION;

use super::continue_job::{check_worktree, recorded};
use super::store::Store;

/// What `attach` would start: the CLI, its argv and where.
#[derive(Debug)]
pub struct Attach {
    pub job_id: String,
    pub agent: Agent,
    pub session: String,
    pub access: &'static str,
    pub cwd: PathBuf,
    pub spec: CommandSpec,
}

/// Everything is checked here, before anything is started: the job exists
/// and has ended, it has a session, the CLI can resume interactively, its
/// worktree is still there and trusted.
pub fn prepare(id: &OsStr) -> Result<Attach> {
    let job = Store::here()?.open(id)?;
    let s = job.refresh()?;
    if !s.status.is_terminal() {
        return Err(running(&job.id));
    }
    // A runner that died (`lost`) can leave its peer behind, still on the session.
    if let Some(pg) = s.peer_pgid
        && process::group_alive(pg as libc::pid_t)
    {
        return Err(running(&job.id));
    }
    let session = job.result(&s)?.session.or(s.session.clone());
    let Some(session) = session else {
        return Err(Error::Refused {
            kind: "no_session",
            message: format!("job `{}` has no peer session to attach to", job.id),
            hint: format!(
                "its peer ended before starting a session (see `baton logs {}`); start a new \
                 one with `baton run --async`",
                job.id
            ),
        });
    };
    let spec = job.read_spec()?;
    check_worktree(&job.id, &spec)?;
    let plan = spec.plan;
    let mut req = plan.request();
    // The session id comes from the peer's own transcript: it is checked
    // (`agent::argv`) like every value that reaches an argv.
    req.origins = recorded(&job.id);
    let mut cmd = plan.agent.interactive_resume(&req, &session)?;
    // The CLI the job ran (config `agents.<name>.command`), as `run` does.
    if let Some(prefix) = &plan.command {
        cmd.program = prefix[0].clone();
        let mut args: Vec<std::ffi::OsString> = prefix[1..].iter().map(Into::into).collect();
        args.append(&mut cmd.args);
        cmd.args = args;
    }
    // The session may delegate again only as deep as the job could.
    cmd.env_set
        .push(("BATON_DEPTH".into(), plan.child_depth.to_string()));
    Ok(Attach {
        job_id: job.id,
        agent: plan.agent,
        session,
        access: plan.access.as_str(),
        cwd: plan.cwd,
        spec: cmd,
    })
}

fn running(id: &str) -> Error {
    Error::Refused {
        kind: "job_running",
        message: format!("job `{id}` is still running; its peer holds the session"),
        hint: format!(
            "wait for it to end (`baton wait {id}`) or stop it (`baton cancel {id}`), then attach"
        ),
    }
}

/// `--dry-run`: what would be started, as JSON.
pub fn dry_run_json(a: &Attach) -> serde_json::Value {
    serde_json::json!({
        "schema_version": SCHEMA_VERSION,
        "dry_run": true,
        "job_id": a.job_id,
        "agent": a.agent.name(),
        "session": a.session,
        "access": a.access,
        "program": a.spec.program,
        "argv": std::iter::once(a.spec.program.clone())
            .chain(a.spec.args_lossy())
            .collect::<Vec<_>>(),
        "cwd": a.cwd,
        "env_set": a.spec.env_set.iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
            .collect::<serde_json::Map<_, _>>(),
        "env_remove": a.spec.env_remove,
        "warnings": a.spec.warnings,
    })
}

/// `baton attach ID [--dry-run]`. Without `--dry-run` this returns only on
/// failure: on success the process *is* the peer CLI from then on.
pub fn attach(id: &OsStr, dry_run: bool, mode: Mode) -> Result<i32> {
    let a = prepare(id)?;
    if dry_run {
        crate::output::dry_run::print(&dry_run_json(&a), mode)?;
        return Ok(0);
    }
    if !a.cwd.is_dir() {
        return Err(Error::usage_hint(
            format!("the job's working directory is gone ({})", a.cwd.display()),
            "recreate it, or send the next turn with `baton continue ID \"…\"` from elsewhere",
        ));
    }
    let program = process::find_program(&a.spec.program).ok_or_else(|| Error::NotInstalled {
        agent: a.agent.name(),
        binary: a.spec.program.clone(),
        hint: format!("install it: {}", a.agent.install_hint()),
    })?;
    for w in &a.spec.warnings {
        eprintln!(
            "baton: warning: {}",
            crate::output::render::clean(w, crate::output::render::Shape::Line)
        );
    }
    let mut c = process::Command::new(&program)
        .arg0(&a.spec.program)
        .args(&a.spec.args)
        .current_dir(&a.cwd);
    for k in &a.spec.env_remove {
        c = c.env_remove(k);
    }
    for (k, v) in &a.spec.env_set {
        c = c.env(k, v);
    }
    // Only returns if the exec failed.
    let e = c.exec();
    Err(Error::Spawn {
        binary: program.display().to_string(),
        source: e,
    })
}
