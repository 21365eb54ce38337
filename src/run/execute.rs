//! `execute`: run a plan's peer under `process::supervise` and turn what it
//! did into the one `RunResult` (status, error, summary, usage).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::told::{named_error, stopped_early};
use crate::agent::models;
use crate::agent::{Agent, CommandSpec, Outcome, Transport};
use crate::error::{Error, Result};
use crate::failure::Failure;
use crate::process::{self, EndReason, Interrupts, LogFiles, Watch};
use crate::result::{ErrorInfo, RunResult, SCHEMA_VERSION, Status, Usage, Warning};
use crate::spend::{Live, Meter, Spent, prices};
use crate::{fsutil, git};

use super::Plan;

/// Run the plan's peer to the end, with its logs in `dir` (`None`: the
/// run's records could not be made; it runs all the same). Records that
/// cannot be written are warnings: they never cost the peer's result.
///
/// The call counts into the plan's meter (`Plan::meter`): it does not start
/// when another call of its size would cross the budget, and it is stopped
/// when what it reports while running crosses it.
pub fn execute(
    plan: &Plan,
    spec: &CommandSpec,
    program: &Path,
    dir: Option<&Path>,
    interrupts: &mut Interrupts,
    on_spawn: &mut dyn FnMut(u32),
) -> Result<RunResult> {
    // Every peer passes here (run, jobs, ask, council): none starts where it
    // could not reach its model. The front doors checked already, before
    // making anything; this one costs nothing more (the answer is cached).
    crate::sandbox::host::check()?;
    let meter = plan.meter();
    if let Some(why) = meter.refuse_next() {
        return Ok(not_started(plan, &meter, why));
    }
    let slot = Arc::new(meter.live());
    let mut not_saved = Vec::new();
    if let Some(d) = dir
        && let Err(e) = fsutil::replace_file(&d.join("prompt.txt"), plan.prompt.as_bytes())
    {
        not_saved.push(format!("could not save the prompt: {e}"));
    }
    let logs = LogFiles {
        stdout: dir.map(|d| d.join("stdout.log")),
        stderr: dir.map(|d| d.join("stderr.log")),
        sent: dir
            .filter(|_| plan.transport == Transport::Acp)
            .map(|d| d.join("sent.log")),
    };
    // The snapshot behind `changed_files` costs a `git status` or more. When
    // the prompt goes on stdin it is taken while the CLI starts: the peer is
    // spawned first and gets its prompt only after the snapshot, so it
    // cannot act before it. A prompt in argv (agy) starts the work at once:
    // then the snapshot comes first. An ACP agent gets nothing (not even
    // `initialize`) before the snapshot is taken.
    let snapshot = || match &plan.git_pin {
        Some(p) => git::snapshot_pinned(&p.work_tree, p.env()),
        None => git::snapshot(&plan.cwd),
    };
    let mut before = None;
    let early = spec.stdin.is_none() && plan.transport != Transport::Acp;
    if early {
        before = snapshot();
    }
    // Live progress for a person, if the command line asked for it; ended
    // (dropped) when the peer is.
    let live = logs
        .stdout
        .as_deref()
        .and_then(|l| super::observe::started(l, plan.agent));
    let mut limits = plan.limits();
    limits.watch = watch(plan, &meter, &slot);
    // baton's sandbox around a peer without one of its own (`confine`);
    // refused before anything starts when `require` cannot be kept.
    let confined = super::confine::peer(plan, false)?;
    limits.wrap = confined.wrap.clone();
    let finished = process::supervise(
        spec,
        program,
        &plan.cwd,
        &logs,
        plan.parser(),
        &limits,
        interrupts,
        &mut |pid| {
            on_spawn(pid);
            if !early {
                before = snapshot();
            }
        },
    )?;
    drop(live);
    let changed_files = match &before {
        Some(_) if plan.git_pin.as_ref().is_some_and(|p| p.verify().is_err()) => Vec::new(),
        Some(b) => git::changed_since(b),
        None => Vec::new(),
    };

    let o = finished.outcome;
    let mut warnings: Vec<String> = plan.warnings.clone();
    warnings.extend(spec.warnings.iter().cloned());
    warnings.extend(o.warnings.iter().cloned());
    warnings.extend(not_saved);
    warnings.extend(crate::state_dir::fallback_note());
    warnings.extend(finished.warnings);
    // Where `Warning::NotInGit` goes among them (the others are text).
    let not_in_git = before.is_none().then_some(warnings.len());
    if finished.pipes_left_open {
        warnings.push(
            "a process outside the peer's process group kept its output open; baton stopped reading"
                .into(),
        );
    }
    let mut usage =
        super::spent::session_usage(plan, o.session.as_deref(), &o.usage, &mut warnings);
    let refused = crate::spend::budget::refuse_bad_cost(&mut usage);
    // Priced from the table when the CLI did not say what it cost.
    prices::complete(o.model.as_deref().or(plan.model.as_deref()), &mut usage);
    if let Some(c) = refused {
        let instead = if usage.cost_usd.is_some() {
            "estimated from the price table instead"
        } else {
            "counted as unknown"
        };
        warnings.push(format!(
            "{} reported a cost of {c} USD, which is no price: {instead}",
            plan.agent.name()
        ));
    }
    drop(limits);
    slot.finish(&usage);
    if finished.reason != EndReason::OverBudget {
        warnings.extend(meter.crossed_after());
    }

    let secs = |ms: u64| ms as f64 / 1000.0;
    // A background job's runner replaces this with `baton continue ID`.
    let resume_hint = match o.session.as_ref().or(plan.resume.as_ref()) {
        Some(s) => format!("run it again, or continue its session with `--resume {s}`"),
        None => "run it again (the peer reported no session to continue)".to_string(),
    };
    let (status, error) = match finished.reason {
        EndReason::Timeout => (
            Status::Timeout,
            Some(info(
                "timeout",
                format!("the peer did not finish within {}s", secs(plan.timeout_ms)),
                "raise --timeout, or split the task",
            )),
        ),
        EndReason::IdleTimeout => (
            Status::Timeout,
            Some(info(
                "idle_timeout",
                format!(
                    "the peer printed nothing for {}s",
                    secs(plan.idle_timeout_ms)
                ),
                "raise --idle-timeout if the peer legitimately works silently; see the log",
            )),
        ),
        EndReason::OverBudget => (
            Status::Failed,
            Some(info(
                "budget_exceeded",
                meter
                    .crossed()
                    .unwrap_or_else(|| "the budget was crossed; the call was stopped".into()),
                &Failure::BudgetExceeded.hint(plan.agent.name()),
            )),
        ),
        EndReason::HandshakeTimeout => (
            Status::Timeout,
            Some(info(
                "acp_handshake_timeout",
                format!(
                    "`{}` did not answer the ACP `initialize` request within {}s{}",
                    spec.program,
                    secs(plan.limits().handshake.unwrap_or_default().as_millis() as u64),
                    crate::agent::last_line(&finished.exit.stderr_tail)
                        .map(|l| format!(" (its stderr: {})", crate::agent::clip(&l, 200)))
                        .unwrap_or_default()
                ),
                "check that the command speaks ACP on stdio (`baton doctor` sends it                  `initialize`), or that it is not waiting for a login",
            )),
        ),
        EndReason::Interrupted(sig) => (
            Status::Cancelled,
            Some(info(
                "cancelled",
                format!("stopped by {}", process::signal_name(sig)),
                &resume_hint,
            )),
        ),
        EndReason::FailureSeen => {
            let e = o
                .error
                .clone()
                .unwrap_or_else(|| format!("{} reported a failure", plan.agent.name()));
            if let Some((at, f)) = finished.stopped_on {
                warnings.push(stopped_early(plan.agent, at, f, &e));
            }
            (Status::Failed, Some(named_error(plan, &o, &e)))
        }
        EndReason::Exited | EndReason::HungAfterFinal => {
            let exited_ok =
                finished.reason == EndReason::HungAfterFinal || finished.exit.code == Some(0);
            if finished.reason == EndReason::HungAfterFinal && plan.transport != Transport::Acp {
                warnings.push(format!(
                    "the peer did not exit within {}s of its final event; baton stopped it",
                    secs(plan.limits().after_final.as_millis() as u64)
                ));
            }
            if exited_ok && o.success {
                (Status::Success, None)
            } else if let Some(e) = &o.error {
                (Status::Failed, Some(named_error(plan, &o, e)))
            } else if o.unparsable {
                (
                    Status::Failed,
                    Some(info(
                        "unparsable_output",
                        format!(
                            "{} printed output baton could not understand",
                            plan.agent.name()
                        ),
                        "the raw output is in log_path; check the CLI version (`baton agents`)",
                    )),
                )
            } else {
                (
                    Status::Failed,
                    Some(info(
                        "nonzero_exit",
                        format!(
                            "{} exited with {} without reporting success",
                            spec.program,
                            finished
                                .exit
                                .code
                                .map_or("a signal".to_string(), |c| format!("code {c}"))
                        ),
                        "see stderr.log beside log_path",
                    )),
                )
            }
        }
    };

    let model = models::served(plan.model.as_deref(), o.model, &mut warnings);
    warnings.extend(
        meter
            .unpriced_warning()
            .filter(|_| usage.cost_usd.is_none() && !usage.is_empty()),
    );
    let summary = summarize(
        plan.agent,
        status,
        finished.duration,
        o.message.as_deref(),
        error.as_ref(),
        changed_files.len(),
    );
    let result = RunResult {
        schema_version: SCHEMA_VERSION,
        status,
        summary,
        message: o.message,
        agent: plan.agent.name().to_string(),
        model,
        model_requested: plan.model.clone(),
        effort: plan.effort.clone(),
        access: plan.access.as_str().to_string(),
        cwd: plan.cwd.display().to_string(),
        session: o.session.or_else(|| plan.resume.clone()),
        changed_files,
        usage,
        duration_ms: finished.duration.as_millis() as u64,
        exit_code: finished.exit.code,
        log_path: logs
            .stdout
            .filter(|p| p.exists())
            .map(|p| p.display().to_string()),
        warnings: typed(warnings, not_in_git),
        denials: o.denials,
        error,
        verification: None,
        job_id: None,
        attempts: Vec::new(),
        spending: meter.report(),
        extra: Default::default(),
    };
    let mut result = result;
    if let Ok(v) = serde_json::to_value(confined.report_now()) {
        result.extra.insert("sandbox".into(), v);
    }
    drop(confined);
    super::spent::record(plan, &mut result);
    Ok(result)
}

/// The watch that stops the peer once the meter is crossed, fed with what
/// the peer reported so far. None without a budget, and for a resumed
/// session of a CLI whose counters run over the whole session (codex,
/// qwen): its live numbers would count earlier runs too.
fn watch(plan: &Plan, meter: &Meter, live: &Arc<Live>) -> Option<Watch> {
    if !meter.budget().is_set() || (plan.agent.usage_is_cumulative() && plan.resume.is_some()) {
        return None;
    }
    let (meter, live, model) = (meter.clone(), live.clone(), plan.model.clone());
    Some(Watch(Arc::new(move |o: &Outcome| {
        let mut u = o.usage.clone();
        prices::complete(o.model.as_deref().or(model.as_deref()), &mut u);
        live.set(Spent::of(&u));
        meter.crossed().is_some()
    })))
}

/// The result of a call the budget did not let start: nothing ran.
fn not_started(plan: &Plan, meter: &Meter, why: String) -> RunResult {
    let error = info(
        "budget_exceeded",
        why,
        &Failure::BudgetExceeded.hint(plan.agent.name()),
    );
    let warnings = (plan.warnings.iter().cloned())
        .chain(meter.unpriced_warning())
        .map(Warning::from)
        .collect();
    let mut r = RunResult {
        schema_version: SCHEMA_VERSION,
        status: Status::Failed,
        summary: summarize(
            plan.agent,
            Status::Failed,
            Duration::ZERO,
            None,
            Some(&error),
            0,
        ),
        message: None,
        agent: plan.agent.name().to_string(),
        model: plan.model.clone(),
        model_requested: plan.model.clone(),
        effort: plan.effort.clone(),
        access: plan.access.as_str().to_string(),
        cwd: plan.cwd.display().to_string(),
        session: plan.resume.clone(),
        changed_files: Vec::new(),
        usage: Usage::default(),
        duration_ms: 0,
        exit_code: None,
        log_path: None,
        warnings,
        denials: Vec::new(),
        error: Some(error),
        verification: None,
        job_id: None,
        attempts: Vec::new(),
        spending: meter.report(),
        extra: Default::default(),
    };
    // Recorded too: a run that ends here ended `budget_exceeded`.
    super::spent::record(plan, &mut r);
    r
}

/// Save the run's copy of its result (`result.json` in `dir`). A failure
/// becomes a warning of the result itself: the result is printed anyway.
pub fn save_result(dir: Option<&Path>, r: &mut RunResult) {
    let Some(dir) = dir else {
        return;
    };
    let saved = serde_json::to_vec(&*r)
        .map_err(|e| Error::Internal(e.to_string()))
        .and_then(|json| fsutil::replace_file(&dir.join("result.json"), &json));
    if let Err(e) = saved {
        r.warnings
            .push(format!("could not save the result's copy: {e}").into());
    }
}

pub(super) fn info(kind: &str, message: String, hint: &str) -> ErrorInfo {
    ErrorInfo {
        kind: kind.into(),
        message,
        hint: Some(hint.into()),
        retry_after_s: None,
    }
}

/// The result's one line for people. `changed` is the length of the
/// `changed_files` it goes with (a worktree run counts again after its
/// `--allow` revert).
pub fn summarize(
    agent: Agent,
    status: Status,
    d: Duration,
    message: Option<&str>,
    error: Option<&ErrorInfo>,
    changed: usize,
) -> String {
    let took = format!("{:.1}s", d.as_secs_f64());
    let first =
        |s: &str| crate::agent::clip(s.lines().find(|l| !l.trim().is_empty()).unwrap_or(""), 120);
    match (status, error) {
        (Status::Success, _) => {
            let files = match changed {
                0 => String::new(),
                1 => ", 1 file changed".into(),
                n => format!(", {n} files changed"),
            };
            format!(
                "{} succeeded in {took}{files}: {}",
                agent.name(),
                first(message.unwrap_or(""))
            )
        }
        (s, Some(e)) => format!(
            "{} {} after {took}: {}",
            agent.name(),
            s.as_str(),
            first(&e.message)
        ),
        (s, None) => format!("{} {} after {took}", agent.name(), s.as_str()),
    }
}
/// The run's warnings: text, with `NotInGit` at `not_in_git`.
fn typed(text: Vec<String>, not_in_git: Option<usize>) -> Vec<Warning> {
    let mut out: Vec<Warning> = text.into_iter().map(Warning::from).collect();
    if let Some(at) = not_in_git {
        out.insert(at, Warning::NotInGit("changed_files is not tracked".into()));
    }
    out
}
