//! The orchestration: `drive` walks a council from its recorded stage to the
//! next stop, re-deriving every prompt and reusing every stored call.

use std::time::Instant;

use super::machine::{Event, Stage};
use super::store::Record;
use super::{approve, deliberate, envelope, execute};
use crate::error::{Error, Result};
use crate::process::Interrupts;

/// Run the council until it stops: a terminal stage, or waiting for a
/// person (a plan to approve; without `--yes`, an approval to execute).
/// A tool error on the way marks it `failed` with the reason (and is
/// returned for the exit code only when nothing could be recorded).
///
/// Where it stops, the driver announces it, once: `needs_approval` when a
/// plan waits for the user, the end at a terminal stage (its members never
/// announce; a refusal that leaves it resumable announces nothing). A
/// member silent for longer than `[notify] stall_after` is announced as
/// the council's stall (`group::stalls`).
pub fn drive(rec: &mut Record) -> Result<()> {
    // Its members' stalls, announced as the council's own.
    let stalls = rec.dir().ok().and_then(|dir| {
        crate::group::stalls::watch(crate::group::stalls::Owner {
            work: crate::notify::Work::Council,
            id: rec.council_id.clone(),
            repo: rec.root.clone(),
            dir,
            choice: rec.notify,
            origin: rec.origin.clone(),
        })
    });
    let driven = drive_here(rec);
    drop(stalls);
    announce(rec);
    driven
}

fn drive_here(rec: &mut Record) -> Result<()> {
    // Held until the council stops here: its liveness (`store::lock`).
    let _runner =
        crate::group::background::hold_runner_lock(&rec.dir()?, "council", &rec.council_id)?;
    rec.pid = Some(std::process::id());
    rec.save()?;
    let interrupts = Interrupts::install()?;
    let started = Instant::now();
    let walked = walk(rec, &interrupts, started);
    rec.pid = None;
    match walked {
        Ok(()) => rec.save(),
        Err(Error::Interrupted { signal }) => {
            // `council cancel` may have marked the record already.
            if let Ok(disk) = Record::load(&rec.root, &rec.council_id)
                && disk.stage.is_terminal()
            {
                *rec = disk;
                return Ok(());
            }
            rec.stop(Event::Cancel, format!("interrupted by {signal}"))?;
            Ok(())
        }
        // A refusal (another council holds the writing lock, a plan that
        // authorizes nothing) leaves the council where it is: resumable.
        Err(e @ (Error::Refused { .. } | Error::Usage { .. })) => {
            rec.save()?;
            Err(e)
        }
        Err(e) => {
            if rec.stage.is_terminal() {
                return Err(e);
            }
            rec.stop(Event::Fail, e.to_string())?;
            Ok(())
        }
    }
}

/// The council's stop as one event (nothing while it is still under way).
fn announce(rec: &Record) {
    if let Some(e) = event(rec) {
        crate::notify::announce(&e, rec.notify, &rec.origin, rec.dir().ok().as_deref());
    }
}

/// The event of the council's stop: `needs_approval`, or its end at a
/// terminal stage; `None` while it is under way (or lost mid-way).
pub fn event(rec: &Record) -> Option<crate::notify::Event> {
    use crate::notify::{Event, Trigger, Work};
    let e = match rec.stage {
        Stage::AwaitingApproval => {
            Event::new(Trigger::NeedsApproval, Work::Council, "needs_approval")
        }
        s if s.is_terminal() => {
            let status = match s {
                Stage::Done | Stage::Ready => "success",
                Stage::Cancelled => "cancelled",
                Stage::NeedsHuman => "needs_human",
                _ => "failed",
            };
            Event::ended(Work::Council, status, rec.stop_kind.as_deref())
        }
        _ => return None,
    };
    let summary = envelope::build(rec)
        .ok()
        .and_then(|v| v["summary"].as_str().map(str::to_string))
        .or_else(|| rec.reason.clone())
        .unwrap_or_default();
    let members: Vec<&str> = rec.members.iter().map(|m| m.agent.as_str()).collect();
    Some(
        e.id(rec.council_id.as_str())
            .repo(rec.root.as_path())
            .agent(members.join(","))
            .summary(&summary),
    )
}

fn walk(rec: &mut Record, ints: &Interrupts, started: Instant) -> Result<()> {
    let packet = std::fs::read_to_string(rec.dir()?.join("packet.txt"))
        .map_err(|e| Error::io("reading the council's packet", e))?;
    let d = deliberate::deliberate(rec, &packet, ints, started)?;
    let Some(d) = d else {
        return Ok(());
    };
    if rec.kind == "discuss" {
        return Ok(());
    }
    if rec.stage == Stage::AwaitingApproval {
        if !rec.execute {
            return Ok(());
        }
        let sha = rec.plan_sha256.clone().unwrap_or_default();
        approve::approve(rec, &sha, "auto")?;
    }
    // Reached only by `plan --yes` and by `execute`: both mean start it.
    if rec.stage == Stage::Approved {
        rec.advance(Event::Execute)?;
    }
    if matches!(
        rec.stage,
        Stage::Implementing | Stage::Verifying | Stage::Reviewing | Stage::Repairing
    ) {
        execute::execute(rec, &d, ints)?;
    }
    Ok(())
}

/// The `--async` runner: `baton __council-runner ID` in its own session,
/// its output in the council's folder.
pub fn spawn_runner(rec: &Record) -> Result<u32> {
    crate::group::background::spawn_runner(
        "__council-runner",
        &rec.council_id,
        &rec.root,
        &rec.cwd,
        &rec.dir()?,
    )
}
