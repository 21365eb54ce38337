//! One run as a chain of attempts: the plan's agent, tried again on a
//! passing failure (`--retry`), then the agents of `--fallback` in order
//! when it cannot answer at all. Every caller that runs a peer for a task
//! (`run` in the foreground, a job's runner, `continue`, a worktree run,
//! ask's advisers and council members through `ask::consult::answer`, and
//! fan-out candidates) calls `run` here, so retries, fallbacks and budgets
//! behave the same everywhere.
//!
//! The rules, in order, after an attempt that failed with a named kind:
//! - nothing is tried again after the peer changed a file in place (the
//!   next attempt would start from its half-done work); in a fresh place
//!   (`Hooks::fresh`: a new worktree at the same base) a fallback may;
//! - `retries()` kinds (rate limited, provider unavailable) go to the same
//!   agent again, up to `--retry` times, after the wait the provider asked
//!   for (`retry_after_s`) or 1, 2, 4 … 30 s; never past `--timeout`, which
//!   bounds the whole chain;
//! - `falls_back()` kinds (those, and quota, auth, unknown model) go to the
//!   next agent of the chain;
//! - each attempt is one call of the plan's meter, so a budget stops the
//!   chain before an attempt that would cross it.
//!
//! The result is the last attempt's, with `attempts[]`, the usage of all of
//! them summed, the whole wall time, and a `fell_back:` warning.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{Plan, execute};
use crate::agent::{Agent, CommandSpec, Extra};
use crate::error::Result;
use crate::failure::Failure;
use crate::process::{self, Interrupts};
use crate::result::{Attempt, RunResult, Usage, Warning};

/// Moves a fallback attempt's plan to a fresh place (see `Hooks::fresh`).
pub type Fresh<'a> = &'a mut dyn FnMut(&Plan) -> Result<Plan>;

/// What the caller lets the chain do around its attempts.
pub struct Hooks<'a> {
    /// The peer's pid (its process group) when each attempt starts.
    pub on_spawn: &'a mut dyn FnMut(u32),
    /// Before a fallback attempt: its plan moved to a fresh place (a new
    /// worktree at the same base). `None`: the run works in place.
    pub fresh: Option<Fresh<'a>>,
    /// The first attempt's command and program, when the caller resolved
    /// and stored them already (a job's runner runs what was checked at start).
    pub first: Option<(CommandSpec, PathBuf)>,
    /// The CLI-level switches each agent's command needs beyond the plan
    /// (ask and council: tools off, an answer schema), by agent.
    pub extra: Option<&'a dyn Fn(Agent) -> Extra>,
}

impl<'a> Hooks<'a> {
    pub fn new(on_spawn: &'a mut dyn FnMut(u32)) -> Hooks<'a> {
        Hooks {
            on_spawn,
            fresh: None,
            first: None,
            extra: None,
        }
    }
}

/// The longest wait between two tries when the provider did not say.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// What comes after an attempt.
#[derive(Debug, PartialEq)]
enum Next {
    Retry(Duration),
    Fallback,
    /// This attempt's result is the run's; with a note when a rule stopped
    /// a retry or a fallback that would otherwise have come.
    Done(Option<Warning>),
}

/// The wait before retry number `n` (from 0) when the provider named none.
fn backoff(n: u32) -> Duration {
    Duration::from_secs(1u64 << n.min(5)).min(MAX_BACKOFF)
}

/// The rules of the module header, as a pure function of what the attempt
/// gave and what is left.
fn next(r: &RunResult, retries_left: bool, more_agents: bool, fresh: bool, left: Duration) -> Next {
    let Some(failure) = r
        .error
        .as_ref()
        .and_then(|e| Failure::from_kind(&e.kind))
        .filter(|_| r.status == crate::result::Status::Failed)
    else {
        return Next::Done(None);
    };
    let changed = !r.changed_files.is_empty();
    let mut note = None;
    if failure.retries() && retries_left {
        let wait = r
            .error
            .as_ref()
            .and_then(|e| e.retry_after_s)
            .map(Duration::from_secs);
        match wait {
            _ if changed => {
                note = Some(Warning::NotRetried(format!(
                    "{} changed files before it failed ({})",
                    r.agent,
                    r.changed_files.join(", ")
                )));
            }
            Some(w) if w >= left => {
                note = Some(Warning::NotRetried(format!(
                    "the provider asked to wait {}s, more than the {}s --timeout leaves",
                    w.as_secs(),
                    left.as_secs()
                )));
            }
            Some(w) => return Next::Retry(w),
            None => return Next::Retry(Duration::ZERO),
        }
    }
    if failure.falls_back() && more_agents {
        if changed && !fresh {
            return Next::Done(Some(Warning::DidNotFallBack(format!(
                "{} changed files before it failed ({}), and the next agent \
                 would start from its half-done work; run again with --worktree, or look at them",
                r.agent,
                r.changed_files.join(", ")
            ))));
        }
        return Next::Fallback;
    }
    Next::Done(note)
}

fn attempt_of(r: &RunResult) -> Attempt {
    Attempt {
        agent: r.agent.clone(),
        model: r.model.clone(),
        status: r.status,
        kind: r.error.as_ref().map(|e| e.kind.clone()),
        retry_after_s: r.error.as_ref().and_then(|e| e.retry_after_s),
        duration_ms: r.duration_ms,
        usage: r.usage.clone(),
        changed_files: r.changed_files.clone(),
        log_path: r.log_path.clone(),
        then: None,
        waited_ms: None,
    }
}

/// The logs of attempt `n` (from 1) moved aside, so the next attempt's go
/// where watchers look (`stdout.log`); the new path of its stdout log.
fn set_aside(dir: Option<&Path>, n: usize) -> Option<String> {
    let dir = dir?;
    let mut moved = None;
    for name in ["stdout.log", "stderr.log"] {
        let to: PathBuf = dir.join(format!("attempt-{n}.{name}"));
        if std::fs::rename(dir.join(name), &to).is_ok() && name == "stdout.log" {
            moved = Some(to.display().to_string());
        }
    }
    moved
}

/// Run `plan` as a chain of attempts (see the module header), with the
/// logs of the one that serves in `dir`.
pub fn run(
    plan: &Plan,
    dir: Option<&Path>,
    interrupts: &mut Interrupts,
    hooks: Hooks<'_>,
) -> Result<RunResult> {
    let Hooks {
        on_spawn,
        mut fresh,
        mut first,
        extra,
    } = hooks;
    let started = Instant::now();
    let timeout = Duration::from_millis(plan.timeout_ms);
    let mut current = plan.clone();
    current.meter = Some(plan.meter());
    let links = plan.fallback.clone();
    let mut link = 0;
    let mut tries = 0;
    let mut attempts: Vec<Attempt> = Vec::new();
    let mut notes: Vec<Warning> = Vec::new();
    loop {
        // Later attempts get what is left of --timeout, which bounds the
        // whole chain (the first gets all of it).
        if !attempts.is_empty() {
            let left = timeout.saturating_sub(started.elapsed());
            current.timeout_ms = (left.as_millis() as u64).max(1);
        }
        let (spec, program) = match first.take() {
            Some(f) => f,
            None => {
                let spec = match extra {
                    Some(f) => current.command_with(f(current.agent))?,
                    None => current.command()?,
                };
                let program = current.program(&spec)?;
                (spec, program)
            }
        };
        let r = execute(&current, &spec, &program, dir, interrupts, on_spawn)?;
        let mut a = attempt_of(&r);
        let left = timeout.saturating_sub(started.elapsed());
        let step = if interrupts.fired().is_some() {
            Next::Done(None)
        } else {
            next(
                &r,
                tries < plan.retry,
                link < links.len(),
                fresh.is_some(),
                left,
            )
        };
        match step {
            Next::Done(note) => {
                notes.extend(note);
                if !attempts.is_empty() {
                    attempts.push(a);
                }
                return Ok(finish(r, attempts, notes, started));
            }
            Next::Retry(asked) => {
                let wait = if asked.is_zero() {
                    backoff(tries)
                } else {
                    asked
                };
                if wait >= left {
                    notes.push(Warning::NotRetried(format!(
                        "waiting {}s would pass --timeout",
                        wait.as_secs()
                    )));
                    if !attempts.is_empty() {
                        attempts.push(a);
                    }
                    return Ok(finish(r, attempts, notes, started));
                }
                a.then = Some("retry".into());
                a.waited_ms = Some(wait.as_millis() as u64);
                a.log_path = set_aside(dir, attempts.len() + 1).or(a.log_path);
                attempts.push(a);
                tries += 1;
                if let Some(sig) = interrupts.sleep(wait) {
                    // Stopped while waiting: the last attempt's result,
                    // saying so.
                    let mut r = r;
                    r.warnings.push(Warning::Text(format!(
                        "the retry was not started: stopped by {} while waiting",
                        process::signal_name(sig)
                    )));
                    return Ok(finish(r, attempts, notes, started));
                }
            }
            Next::Fallback => {
                a.then = Some("fallback".into());
                a.log_path = set_aside(dir, attempts.len() + 1).or(a.log_path);
                attempts.push(a);
                let mut p = plan.for_link(&links[link]);
                p.meter = current.meter.clone();
                if let Some(f) = fresh.as_mut() {
                    p = f(&p)?;
                }
                current = p;
                link += 1;
                tries = 0;
            }
        }
    }
}

/// The plan of the agent that served `r` (a result of `run` with `plan`):
/// `plan` itself, or the fallback link it went to. What comes after in the
/// same session (a repair round, `continue`) must go to that agent.
pub fn served(plan: &Plan, r: &RunResult) -> Plan {
    if r.agent == plan.agent.name()
        && !r
            .attempts
            .iter()
            .any(|a| a.then.as_deref() == Some("fallback"))
    {
        return plan.clone();
    }
    plan.fallback
        .iter()
        .rev()
        .find(|l| {
            l.agent.name() == r.agent
                && (r.model_requested.is_none() || l.model == r.model_requested)
        })
        .or_else(|| {
            plan.fallback
                .iter()
                .rev()
                .find(|l| l.agent.name() == r.agent)
        })
        .map_or_else(
            || plan.clone(),
            |l| {
                let mut p = plan.for_link(l);
                p.meter = plan.meter.clone();
                p
            },
        )
}

/// The last attempt's result as the run's: every attempt listed, their
/// usage summed, the wall time of the whole chain.
fn finish(
    mut r: RunResult,
    attempts: Vec<Attempt>,
    notes: Vec<Warning>,
    started: Instant,
) -> RunResult {
    r.warnings.extend(notes);
    if attempts.len() < 2 {
        return r;
    }
    let mut usage = Usage::default();
    for a in &attempts {
        usage.add(&a.usage);
    }
    r.usage = usage;
    r.duration_ms = started.elapsed().as_millis() as u64;
    let first = &attempts[0];
    if first.agent != r.agent {
        let why: Vec<String> = attempts
            .iter()
            .filter(|a| a.then.as_deref() == Some("fallback"))
            .map(|a| format!("{} ({})", a.agent, a.kind.as_deref().unwrap_or("?")))
            .collect();
        r.warnings.insert(
            0,
            Warning::FellBack(format!(
                "{} could not answer; {} served the run",
                why.join(", then "),
                r.agent
            )),
        );
    }
    r.attempts = attempts;
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{ErrorInfo, SCHEMA_VERSION, Status};

    fn failed(kind: &str, retry_after_s: Option<u64>, changed: &[&str]) -> RunResult {
        RunResult {
            schema_version: SCHEMA_VERSION,
            status: Status::Failed,
            summary: String::new(),
            message: None,
            agent: "codex".into(),
            model: None,
            model_requested: None,
            effort: None,
            access: "workspace".into(),
            cwd: "/w".into(),
            session: None,
            changed_files: changed.iter().map(|s| s.to_string()).collect(),
            usage: Usage::default(),
            duration_ms: 1,
            exit_code: Some(1),
            log_path: None,
            warnings: vec![],
            denials: vec![],
            error: Some(ErrorInfo {
                kind: kind.into(),
                message: "m".into(),
                hint: None,
                retry_after_s,
            }),
            verification: None,
            job_id: None,
            attempts: vec![],
            spending: None,
            extra: Default::default(),
        }
    }

    const HOUR: Duration = Duration::from_secs(3600);

    #[test]
    fn a_passing_failure_is_retried_as_the_provider_asks() {
        let r = failed("rate_limited", Some(7), &[]);
        assert_eq!(
            next(&r, true, true, false, HOUR),
            Next::Retry(Duration::from_secs(7))
        );
        // No wait named: the caller's backoff.
        let r = failed("provider_unavailable", None, &[]);
        assert_eq!(
            next(&r, true, false, false, HOUR),
            Next::Retry(Duration::ZERO)
        );
        // Retries used up: the next agent.
        assert_eq!(next(&r, false, true, false, HOUR), Next::Fallback);
        assert_eq!(backoff(0), Duration::from_secs(1));
        assert_eq!(backoff(3), Duration::from_secs(8));
        assert_eq!(backoff(9), MAX_BACKOFF);
    }

    #[test]
    fn a_wait_past_the_timeout_falls_back_or_ends_saying_why() {
        let r = failed("rate_limited", Some(120), &[]);
        let left = Duration::from_secs(60);
        assert_eq!(next(&r, true, true, false, left), Next::Fallback);
        match next(&r, true, false, false, left) {
            Next::Done(Some(n)) => assert!(n.contains("asked to wait 120s"), "{n}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn only_failures_before_any_work_fall_back_and_never_after_a_change_in_place() {
        for kind in ["quota_exhausted", "auth_required", "model_not_found"] {
            let r = failed(kind, None, &[]);
            assert_eq!(next(&r, true, true, false, HOUR), Next::Fallback, "{kind}");
            assert_eq!(
                next(&r, true, false, false, HOUR),
                Next::Done(None),
                "{kind}"
            );
        }
        for kind in [
            "context_too_long",
            "sandbox_denied",
            "agent_error",
            "timeout",
            "budget_exceeded",
        ] {
            let r = failed(kind, None, &[]);
            assert_eq!(
                next(&r, true, true, false, HOUR),
                Next::Done(None),
                "{kind}"
            );
        }
        let r = failed("quota_exhausted", None, &["src/a.rs"]);
        match next(&r, true, true, false, HOUR) {
            Next::Done(Some(n)) => {
                assert!(n.contains("did not fall back") && n.contains("src/a.rs"))
            }
            other => panic!("{other:?}"),
        }
        // In a fresh worktree the next agent does not see the change.
        assert_eq!(next(&r, true, true, true, HOUR), Next::Fallback);
        // A change is never retried in place; a fresh place may fall back.
        let r = failed("rate_limited", None, &["src/a.rs"]);
        match next(&r, true, false, true, HOUR) {
            Next::Done(Some(n)) => assert!(n.contains("not retried"), "{n}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(next(&r, true, true, true, HOUR), Next::Fallback);
    }

    #[test]
    fn the_result_sums_the_attempts_and_says_who_served() {
        let mut first = attempt_of(&failed("rate_limited", None, &[]));
        first.usage.input_tokens = Some(100);
        first.then = Some("fallback".into());
        let mut last = failed("x", None, &[]);
        last.status = Status::Success;
        last.error = None;
        last.agent = "claude".into();
        last.usage.input_tokens = Some(20);
        let mut second = attempt_of(&last);
        second.usage.input_tokens = Some(20);
        let r = finish(last, vec![first, second], vec![], Instant::now());
        assert_eq!(r.usage.input_tokens, Some(120));
        assert_eq!(r.attempts.len(), 2);
        assert_eq!(
            r.warnings[0],
            "fell_back: codex (rate_limited) could not answer; claude served the run"
        );
    }
}
