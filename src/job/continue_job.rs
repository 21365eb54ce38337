//! `baton continue`: a new job that resumes an ended job's peer session with
//! the same agent, model, access and cwd.

use std::ffi::OsStr;

use crate::agent::argv::{Origin, Origins};
use crate::error::{Error, Result};
use crate::notify::Choice;
use crate::output::Mode;
use crate::result::RunResult;
use crate::run;

use super::Place;
use super::print_started;
use super::store::{Spec, Store};

/// `baton continue ID [TASK…]`: a new job resuming job ID's peer session
/// with the same agent, model, effort, access, cwd and CLI options.
pub fn continue_job(id: &OsStr, task: Vec<String>, notify: Choice, mode: Mode) -> Result<i32> {
    let r = continue_start(id, task, notify)?;
    print_started(&r, mode)?;
    Ok(0)
}

/// Start the continuing job without printing (the interactive `watch` calls
/// this too); its `running` result, with the new job's id.
/// `notify`: whether the new job's runner announces it.
pub fn continue_start(id: &OsStr, task: Vec<String>, notify: Choice) -> Result<RunResult> {
    continue_start_in(Store::here()?, id, task, notify)
}

/// `continue_start` of a job in `store` (any repository's: `watch --all`);
/// the new job is recorded beside it.
pub fn continue_start_in(
    store: Store,
    id: &OsStr,
    task: Vec<String>,
    notify: Choice,
) -> Result<RunResult> {
    let job = store.open(id)?;
    let s = job.refresh()?;
    if !s.status.is_terminal() {
        return Err(Error::usage_hint(
            format!("job `{}` is still running", job.id),
            format!("wait for it first: `baton wait {}`", job.id),
        ));
    }
    let ended = job.result(&s)?;
    let served = ended.agent.clone();
    let session = ended.session.or(s.session.clone());
    let Some(session) = session else {
        return Err(Error::usage_hint(
            format!("job `{}` has no peer session to continue", job.id),
            format!(
                "its peer ended before starting a session (see `baton logs {}`); \
                 start a new job with `baton run --async`",
                job.id
            ),
        ));
    };
    let old = job.read_spec()?;
    check_worktree(&job.id, &old)?;
    let p = old.plan;
    // The session is the agent's that served the job: after a fallback,
    // that is a link of the chain, with its own options.
    let link = (served != p.agent.name())
        .then(|| p.fallback.iter().find(|l| l.agent.name() == served))
        .flatten();
    let (agent, model, effort, profile, provider, transport) = match link {
        Some(l) => (
            l.agent,
            l.model.clone(),
            l.effort.clone(),
            l.profile.clone(),
            l.provider.clone(),
            l.transport,
        ),
        None => (
            p.agent,
            p.model.clone(),
            p.effort.clone(),
            p.profile.clone(),
            p.provider.clone(),
            p.transport,
        ),
    };
    let args = run::RunRequest {
        agent: Some(agent.name().to_string()),
        model,
        effort,
        access: Some(p.access.as_str().to_string()),
        // The same confinement as the job it continues.
        sandbox: Some(p.sandbox.as_str().to_string()),
        network: Some(p.network.as_str().to_string()),
        network_hosts: p.network.hosts(),
        cwd: Some(p.cwd.clone()),
        resume: Some(session),
        timeout: Some(format!("{}ms", p.timeout_ms)),
        idle_timeout: Some(format!("{}ms", p.idle_timeout_ms)),
        profile,
        provider,
        // The session lives in the transport that started it.
        transport: Some(transport.as_str().to_string()),
        raw: p.raw,
        task,
        // A resumed session stays with its agent; retries still apply.
        fallback: Some(Vec::new()),
        retry: Some(p.retry),
        max_usd: p.budget.max_usd,
        budget_tokens: p.budget.max_tokens,
        origins: recorded(&job.id),
        ..run::RunRequest::default()
    };
    // Same checks as `run --async`, so a follow-up cannot bypass them.
    let task = run::read_task(&args)?;
    let mut plan = run::plan(&args, task)?;
    // The same CLI as the job it continues, whatever the config says now.
    plan.command = match link {
        Some(l) => l.command.clone(),
        None => p.command.clone(),
    };
    let place = match old.worktree {
        Some(w) => {
            // Still the user's project (its records and worktrees), and the
            // same git metadata to commit to.
            plan.root = p.root.clone();
            plan.writable_dirs = p.writable_dirs.clone();
            plan.protected_paths = p.protected_paths.clone();
            plan.git_pin = w.pin.clone();
            // Its changed_files are its own, not the first run's too.
            Place::Worktree(Box::new(w.again()))
        }
        None => Place::Cwd,
    };
    super::launch::start_in(store, &plan, place, Some(job.id.clone()), notify)
}

/// Where the values a job's record hands back to a CLI came from, for
/// `agent::argv` to name in a refusal (`continue`, `attach`): the session id
/// is what the job's peer reported, the rest is the job's stored plan.
pub(super) fn recorded(id: &str) -> Origins {
    Origins {
        resume: Some(Origin::Recorded {
            what: format!("the session recorded for job `{id}` (reported by its peer)"),
            hint: format!(
                "baton does not pass it to a CLI; see what the peer did with `baton logs {id}`, \
                 and start a new job with `baton run --async`"
            ),
        }),
        ..Origins::all(Origin::Recorded {
            what: format!("the record of job `{id}`"),
            hint: "the job's record was changed after it started; start a new job with \
                   `baton run --async`"
                .into(),
        })
    }
}

/// A worktree job's worktree must still be there and still be the one
/// baton made before a peer works in it again (`continue`, `attach`).
pub(super) fn check_worktree(id: &str, spec: &Spec) -> Result<()> {
    let Some(w) = &spec.worktree else {
        return Ok(());
    };
    if !w.path.is_dir() {
        return Err(Error::usage_hint(
            format!("the worktree of job `{id}` is gone ({})", w.path.display()),
            "its branch still holds the work; start a new job with `baton run --async --worktree`",
        ));
    }
    if let Ok(pin) = w.pin()
        && let Err(what) = pin.verify()
    {
        // The peer would work on in a worktree baton no longer trusts.
        return Err(pin.tampered(&w.id, what));
    }
    Ok(())
}
