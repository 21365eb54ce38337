//! Fan-out, or best of N (`baton run --agents a,b,c [--attempts N]
//! --test-cmd CMD …`): several writers attempt the same task at once, each
//! in a worktree of its own; baton tests each, lets a failing one repair,
//! and hands back the best verified change (docs/fanout.md).
//!
//! Theory of operation (a record per fan-out, `fanouts/<id>/`, `store`):
//! 1. `preflight`: every candidate is an ordinary `run::plan` (the same
//!    argv, access, limits and brief as `baton run`), the worktree flags
//!    are checked once (`worktree::check`), the judge and seed decided.
//!    Nothing exists yet; `--dry-run` stops here.
//! 2. `drive`: every candidate on its own thread (`group::parallel`):
//!    `candidate::run` makes its worktree and branch `baton/<id>-<n>` from
//!    the same base and runs the peer there (`worktree::attempt`), then
//!    baton runs `--test-cmd` and `git diff --check` (`worktree::oracle`);
//!    with `--until-green R` a failing candidate gets the end of the output
//!    as the next turn of its session, at most R times. `gate` holds the
//!    limits and, for `--pick first-green`, stops the others at the first
//!    eligible candidate.
//! 3. `judge` (with `--pick best` and two or more eligible): each reviewing
//!    agent ranks the candidates it did not write, blind, answering
//!    `review`'s schema; `select` aggregates (Borda, then fewer blockers,
//!    the smaller diff, a draw seeded with the fan-out's seed).
//! 4. The winner's branch is kept, the others removed unless `--keep-all`;
//!    nothing is merged (`merge_hint`). `outcome` and `result` build what
//!    is printed; `read_only` is the in-place variant with no selection.
//!
//! `--async` runs the same in a background runner (`as_job`: the job
//! commands accept its id); `watch` and `serve` show it as a group of its
//! candidates' runs (`group::runs`).

// Read top-down: a group imports only from itself and the groups below.
//
// The commands: start (foreground, --async, --dry-run), the job commands.
pub mod as_job;

// The walk.
pub mod drive;

// Its stages, and what their outcomes show.
pub mod candidate;
pub mod judge;
pub mod outcome;
pub mod read_only;

// What they share.
pub mod gate;
pub mod preflight;
pub mod prune;
pub mod request;
pub mod result;
pub mod review;
pub mod select;
pub mod store;

use crate::error::Result;
use crate::output::{self, Mode};
use crate::run;

pub use request::FanoutRequest;

/// The hidden command an `--async` fan-out's runner is started with.
pub const RUNNER_COMMAND: &str = "__fanout-runner";

/// `baton run --agents …`: check, then print the plan (`--dry-run`), start
/// it in the background (`--async`), or run it here and print its result.
pub fn command(req: FanoutRequest, mode: Mode) -> Result<i32> {
    let task = run::read_task(&req.run)?;
    let p = preflight::preflight(&req, task)?;
    // Before the record and the worktrees exist.
    if let Some(code) = run::gate::pass(req.dry_run, mode, || preflight::dry_run(&p))? {
        return Ok(code);
    }
    let mut rec = store::Record::new(&p, req.run_async);
    rec.notify = req.notify;
    rec.save()?;
    if req.run_async {
        return as_job::start(rec, mode);
    }
    let stalls = stalls(&rec);
    let driven = drive::drive(&mut rec, p.checked.as_ref());
    drop(stalls);
    let r = match driven {
        Ok(r) => r,
        Err(e) => {
            rec.fail(&e);
            announce(&rec, Err(&e));
            return Err(e);
        }
    };
    output::print_result(&r, mode)?;
    announce(&rec, Ok(&r));
    Ok(r.exit_code())
}

/// `baton __fanout-runner ID --root R`: drive a background fan-out.
pub fn runner(id: &str, root: &std::path::Path) -> Result<i32> {
    let mut rec = store::Record::load(root, id)?;
    // Held for the runner's life: another driver is refused before the
    // record could be marked failed.
    let _runner = crate::group::background::hold_runner_lock(&rec.dir()?, "fan-out", id)?;
    crate::run::Depth::from_env().check()?;
    let checked = match (&rec.settings.worktree, rec.plans.first()) {
        (Some(opts), Some(plan)) => {
            let opts = crate::worktree::WorktreeOptions {
                test_cmd: None,
                ..opts.clone()
            };
            crate::worktree::check(&opts, plan)?
        }
        _ => None,
    };
    let stalls = stalls(&rec);
    let driven = drive::drive_locked(&mut rec, checked.as_ref());
    drop(stalls);
    match driven {
        Ok(r) => {
            announce(&rec, Ok(&r));
            Ok(0)
        }
        Err(e) => {
            rec.fail(&e);
            announce(&rec, Err(&e));
            Err(e)
        }
    }
}

/// Its candidates' and judges' stalls, announced as the fan-out's own
/// until the guard is dropped (before its end is announced).
fn stalls(rec: &store::Record) -> Option<crate::notify::stalls::Stalls> {
    crate::group::stalls::watch(crate::group::stalls::Owner {
        work: crate::notify::Work::Fanout,
        id: rec.fanout_id.clone(),
        repo: rec.root.clone(),
        dir: rec.dir().ok()?,
        choice: rec.notify,
        origin: rec.origin.clone(),
    })
}

/// The fan-out ended: one event, from its driver (the foreground command
/// or the `--async` runner). Its candidates and judges are runs inside it
/// and announce nothing of their own.
fn announce(
    rec: &store::Record,
    end: std::result::Result<&result::FanoutResult, &crate::error::Error>,
) {
    let e = event(rec, end);
    crate::notify::announce(&e, rec.notify, &rec.origin, rec.dir().ok().as_deref());
}

/// The event of a fan-out's end, as its driver announces it.
fn event(
    rec: &store::Record,
    end: std::result::Result<&result::FanoutResult, &crate::error::Error>,
) -> crate::notify::Event {
    use crate::notify::{Event, Work};
    let agents = || {
        let names: Vec<&str> = rec.candidates.iter().map(|c| c.agent.as_str()).collect();
        names.join(",")
    };
    let e = match end {
        Ok(r) => Event::ended(
            Work::Fanout,
            r.status.as_str(),
            r.error.as_ref().map(|e| e.kind.as_str()),
        )
        .agent(r.winner.as_ref().map_or_else(agents, |w| w.agent.clone()))
        .summary(&r.summary),
        Err(e) => Event::ended(Work::Fanout, "failed", Some(e.kind()))
            .agent(agents())
            .summary(&e.to_string()),
    };
    e.id(rec.fanout_id.as_str()).repo(rec.root.as_path())
}

/// The event of a fan-out that has stopped, read from its record (for
/// whoever announces it from outside its driver: `baton mcp`); `None`
/// while it runs. One whose runner died mid-way is `lost`.
pub fn ended_event(rec: &store::Record) -> Option<crate::notify::Event> {
    use crate::result::Status;
    let stored = (rec.stage.is_terminal())
        .then(|| rec.result().ok().flatten())
        .flatten()
        .and_then(|v| serde_json::from_value::<result::FanoutResult>(v).ok());
    match (as_job::status_of(rec), stored) {
        (Status::Running, _) => None,
        (_, Some(r)) => Some(event(rec, Ok(&r))),
        (status, None) => Some(
            crate::notify::Event::ended(crate::notify::Work::Fanout, status.as_str(), None)
                .id(rec.fanout_id.as_str())
                .repo(rec.root.as_path())
                .summary(rec.reason.as_deref().unwrap_or_default()),
        ),
    }
}
