//! The job runner: `baton __job-runner <dir> --lock-fd N`, started by the
//! launcher in its own session. It holds the job's lock for its whole life,
//! runs the peer exactly as `baton run` would (`run::execute`: timeouts, idle
//! timeout, group kill), and records the result. SIGTERM (from `baton
//! cancel`) reaches it through `process::Interrupts`, which stops the peer's
//! whole process group and yields a `cancelled` result.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::store::{Job, Spec, now_ms};
use crate::error::{Error, Result};
use crate::notify::Work;
use crate::result::{ErrorInfo, RunResult, SCHEMA_VERSION, Status};
use crate::{fsutil, ids, process, run, worktree};

pub fn main(dir: &Path, lock_fd: Option<i32>) -> Result<i32> {
    let id = dir
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| ids::is_valid(n))
        .ok_or_else(|| Error::usage(format!("{} is not a job directory", dir.display())))?;
    let job = Job {
        id: id.to_string(),
        dir: dir.to_path_buf(),
    };
    // Kept until the process exits: the kernel releases it however we die.
    let _lock = adopt_lock(&job, lock_fd)?;
    // Room to record the end even if the peer fills the disk.
    job.make_reserve();
    // Before the peer exists, so a cancel can never orphan it.
    let mut interrupts = process::Interrupts::install()?;
    let spec = take_spec(&job)?;
    // The runner owns the job: it announces its stalls and its end, once.
    let notice = run::Notice {
        work: Work::Job,
        choice: spec.notify,
        origin: spec.origin.clone(),
        id: Some(job.id.clone()),
        repo: spec.plan.root.clone(),
        record: Some(job.dir.clone()),
    };
    // Like `interrupts`, before the peer starts: a cancel that lands after it
    // ended still stops a `--test-cmd`.
    let stop = match &spec.worktree {
        Some(_) => Some(worktree::verify::Stop::install()?),
        None => None,
    };
    job.update(&spec, |s| s.runner_pid = Some(std::process::id()))?;
    // The first attempt runs exactly the command stored at start (the
    // program found then); retries and fallbacks build theirs as `run` does.
    let mut on_spawn = |pid| {
        if let Err(e) = job.update(&spec, |s| s.peer_pgid = Some(pid)) {
            eprintln!("baton job runner: recording the peer's process group: {e}");
        }
    };
    // In a worktree, each fallback agent gets a fresh one at the same base.
    let mut places = spec
        .worktree
        .clone()
        .map(|s| worktree::Places::new(spec.checked.as_ref(), Some(&job.id), s, spec.plan.clone()));
    let refresh = places.as_ref().is_some_and(|p| p.can_refresh());
    let stalls = notice.stalls(spec.plan.agent.name(), &job.dir);
    let outcome = {
        let mut hooks = run::Hooks::new(&mut on_spawn);
        hooks.first = Some((spec.command.to_spec(), spec.program.clone()));
        let mut fresh = |p: &run::Plan| match places.as_mut() {
            Some(pl) => pl.fresh(p),
            None => Ok(p.clone()),
        };
        if refresh {
            hooks.fresh = Some(&mut fresh);
        }
        run::chain::run(&spec.plan, Some(&job.dir), &mut interrupts, hooks)
    };
    drop(stalls);
    let outcome = outcome.map(|mut r| {
        if let Some(e) = r.error.as_mut().filter(|e| e.kind == "cancelled") {
            e.hint = Some(super::handoff::ended_hint(&job.id, r.session.is_some()));
        }
        r
    });
    let last = places.as_ref().map(|p| p.last());
    let result = match (outcome, last, &stop) {
        (Ok(mut r), Some((s, plan)), Some(stop)) => {
            // Commit what the peer left, run --test-cmd: as `run --worktree`.
            worktree::finish(s, plan, &mut r, &job.dir, stop);
            r
        }
        (Ok(r), _, _) => r,
        (Err(e), wt, _) => {
            eprintln!("baton job runner: {e}");
            // A worktree made for this job and never worked in goes again.
            if let (Some((s, _)), None) = (wt, &spec.resumed_from) {
                worktree::abandon(s);
            }
            failed(&spec, &job, &e)
        }
    };
    // Announced once the job reads as ended: `baton wait` is not held up
    // by a slow channel, and a failed one never changes the result.
    let ended = result.clone();
    job.finish(result)?;
    notice.ended(&ended);
    Ok(0)
}

/// The spec comes from the launcher on stdin; the runner stores it (so the
/// launcher need not wait for that write). Started by hand, with nothing on
/// stdin, the runner uses the stored one.
fn take_spec(job: &Job) -> Result<Spec> {
    let mut b = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut b);
    match serde_json::from_slice::<Spec>(&b) {
        Ok(spec) if spec.id == job.id => {
            fsutil::write_atomic(&job.spec_path(), &b)?;
            Ok(spec)
        }
        _ => job.read_spec(),
    }
}

/// Take over the locked descriptor the launcher passed, after checking it
/// really is this job's lock file. Without one (started by hand), lock the
/// file ourselves, refusing if another runner holds it.
fn adopt_lock(job: &Job, fd: Option<i32>) -> Result<File> {
    let path = job.lock_path();
    // Taken once, at the runner's start, before anything else could own
    // the number; a descriptor that is not the lock file is left alone.
    let same = |f: &File| match (f.metadata(), std::fs::metadata(&path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    };
    if let Some(f) = fd.and_then(|fd| crate::sys::fd::adopt_inherited(fd, same)) {
        let _ = crate::sys::fd::set_cloexec(f.as_fd(), true);
        return Ok(f);
    }
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
    match f.try_lock() {
        Ok(()) => Ok(f),
        Err(TryLockError::WouldBlock) => {
            Err(Error::usage(format!("job {} already has a runner", job.id)))
        }
        Err(TryLockError::Error(e)) => Err(Error::io(format!("locking {}", path.display()), e)),
    }
}

/// A job baton could not run to the end (the peer could not be started, an
/// I/O error of baton's own): still a well-formed, final result.
fn failed(spec: &Spec, job: &Job, e: &Error) -> RunResult {
    let p = &spec.plan;
    let warnings = (p.warnings.iter())
        .chain(&spec.command.warnings)
        .map(|w| crate::result::Warning::from(w.as_str()))
        .collect();
    RunResult {
        schema_version: SCHEMA_VERSION,
        status: Status::Failed,
        summary: format!("{} job {} failed: {e}", p.agent.name(), job.id),
        message: None,
        agent: p.agent.name().to_string(),
        model: p.model.clone(),
        model_requested: p.model.clone(),
        effort: p.effort.clone(),
        access: p.access.as_str().to_string(),
        cwd: p.cwd.display().to_string(),
        session: p.resume.clone(),
        changed_files: Vec::new(),
        usage: Default::default(),
        duration_ms: now_ms().saturating_sub(spec.created_ms),
        exit_code: None,
        log_path: Some(job.stdout_log().display().to_string()),
        warnings,
        denials: Vec::new(),
        error: Some(ErrorInfo {
            retry_after_s: None,
            kind: e.kind().to_string(),
            message: e.to_string(),
            hint: e.hint(),
        }),
        verification: None,
        job_id: Some(job.id.clone()),
        attempts: Vec::new(),
        spending: None,
        extra: Default::default(),
    }
}
