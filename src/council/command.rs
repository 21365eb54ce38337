//! The council commands' dispatch: start, approve, execute, status, result,
//! report, cancel, resume, list (the requests are in `request`).

use std::path::PathBuf;

use super::machine::{Event, Stage};
use super::request::{Action, CouncilRequest};
use super::store::{self, Record};
use super::{approve, envelope, flow, preflight, report};
use crate::error::Result;
use crate::output::{self, Mode};
use crate::{fsutil, run};

pub fn command(action: Action, cwd: Option<PathBuf>, mode: Mode) -> Result<i32> {
    let cwd = run::resolve_cwd(cwd.as_deref())?;
    let root = fsutil::project_root(&cwd);
    match action {
        Action::Start(req) => start(*req, &cwd, &root, mode),
        Action::Approve { id, plan_sha256 } => {
            let mut rec = Record::load(&root, &id)?;
            approve::approve(&mut rec, &plan_sha256, "explicit")?;
            finish(&rec, mode)
        }
        Action::Execute { id } => {
            let mut rec = Record::load(&root, &id)?;
            let running = [
                Stage::Approved,
                Stage::Implementing,
                Stage::Verifying,
                Stage::Reviewing,
                Stage::Repairing,
            ];
            if !running.contains(&rec.stage) {
                return Err(store::not_now(
                    &rec,
                    "execute",
                    "approve it first: `baton council approve ID --plan-sha256 HEX`",
                ));
            }
            crate::sandbox::host::check()?;
            flow::drive(&mut rec)?;
            finish(&rec, mode)
        }
        Action::Resume { id } => {
            let mut rec = Record::load(&root, &id)?;
            if let Some(at) = super::machine::reopen(rec.stage, rec.cancelled_in) {
                rec.stage = at;
                rec.cancelled_in = None;
                rec.reason = None;
                rec.save()?;
            }
            // Approving is a person's word, not resume's; an approved plan
            // has it, and resume carries it out as `execute` would.
            if rec.stage.is_terminal() || rec.stage == Stage::AwaitingApproval {
                return finish(&rec, mode);
            }
            crate::sandbox::host::check()?;
            flow::drive(&mut rec)?;
            finish(&rec, mode)
        }
        Action::Runner { id, root } => {
            let mut rec = Record::load(&root, &id)?;
            flow::drive(&mut rec)?;
            Ok(0)
        }
        Action::Status { id } => {
            let rec = Record::load(&root, &id)?;
            let v = envelope::status(&rec);
            match mode {
                Mode::Json => output::json_line(&v)?,
                Mode::Text => output::text(&report::status_text(&rec))?,
            }
            Ok(0)
        }
        Action::Result { id } => finish(&Record::load(&root, &id)?, mode),
        Action::Report { id } => {
            let rec = Record::load(&root, &id)?;
            output::text(&report::markdown(&rec, &envelope::build(&rec)?))?;
            Ok(0)
        }
        Action::Cancel { id } => {
            let mut rec = Record::load(&root, &id)?;
            cancel(&mut rec)?;
            finish(&rec, mode)
        }
        Action::List => {
            let all = store::list(&root)?;
            match mode {
                Mode::Json => output::json_line(&serde_json::json!({
                    "councils": all.iter().map(envelope::status).collect::<Vec<_>>()
                }))?,
                Mode::Text => output::text(&report::list_text(&all))?,
            }
            Ok(0)
        }
    }
}

fn start(
    req: CouncilRequest,
    cwd: &std::path::Path,
    root: &std::path::Path,
    mode: Mode,
) -> Result<i32> {
    crate::run::Depth::from_env().check()?;
    let pre = preflight::preflight(&req, cwd, root)?;
    // Before the council is recorded: its members could not reach their models.
    if let Some(code) = crate::run::gate::pass(req.dry_run, mode, || Ok(preflight::dry_run(&pre)))?
    {
        return Ok(code);
    }
    let mut rec = pre.record;
    rec.save()?;
    fsutil::write_atomic(&rec.dir()?.join("packet.txt"), pre.packet.as_bytes())?;
    rec.advance(Event::Preflighted)?;
    if req.run_async {
        let pid = flow::spawn_runner(&rec)?;
        // Back only once the runner holds the lock (until then the council
        // would read as lost); it may have written more, or ended: keep its
        // record then.
        crate::group::background::await_runner(&rec.dir()?, pid);
        match Record::load(&rec.root, &rec.council_id) {
            Ok(disk) if disk.pid.is_some() || disk.updated_ms != rec.updated_ms => rec = disk,
            _ => {
                rec.pid = Some(pid);
                rec.save()?;
            }
        }
        return finish(&rec, mode);
    }
    flow::drive(&mut rec)?;
    finish(&rec, mode)
}

/// Print the council's result envelope; exit by its stage, or with
/// `CHECK_FAILED` when it needs a human because baton's tests of the
/// writer's work failed.
pub fn finish(rec: &Record, mode: Mode) -> Result<i32> {
    let v = envelope::build(rec)?;
    // A copy for people (the record stored one when the council stopped):
    // a full disk must not keep the envelope from being printed.
    let _ = rec.put_artifact("result.json", &v);
    match mode {
        Mode::Json => output::json_line(&v)?,
        Mode::Text => output::text(&report::text(rec, &v))?,
    }
    let check_failed = || {
        serde_json::from_value::<crate::worktree::oracle::Verification>(v["verification"].clone())
            .is_ok_and(|x| super::execute::check_failed(&x))
    };
    Ok(if rec.stage == Stage::NeedsHuman && check_failed() {
        crate::error::exit::CHECK_FAILED
    } else {
        rec.stage.exit_code()
    })
}

pub fn cancel(rec: &mut Record) -> Result<()> {
    if rec.stage.is_terminal() {
        return Ok(());
    }
    if let Some(pid) = rec.pid.filter(|p| *p != std::process::id())
        && crate::store::runner_alive(&rec.dir()?)
    {
        // Only while its lock shows a runner (the pid may name another
        // process by now). The driving process stops its members as a group on SIGTERM and
        // records nothing more; the record is marked here.
        // A stale pid gets ESRCH.
        crate::sys::proc::kill(pid as i32, libc::SIGTERM);
    }
    rec.pid = None;
    rec.stop(Event::Cancel, "cancelled by `baton council cancel`")?;
    Ok(())
}
