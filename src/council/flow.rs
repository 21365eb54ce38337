//! The orchestration: `drive` walks a council from its recorded stage to the
//! next stop, re-deriving every prompt and reusing every stored call.

use std::time::Instant;

use super::call::{self, Ask, Call, Schema};
use super::machine::{Event, Stage};
use super::store::{Member, Record};
use super::{approve, deliberate, execute};
use crate::error::{Error, Result};
use crate::process::Interrupts;

/// Run the council until it stops: a terminal stage, or awaiting approval.
/// A tool error on the way marks it `failed` with the reason (and is
/// returned for the exit code only when nothing could be recorded).
pub fn drive(rec: &mut Record) -> Result<()> {
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
    if matches!(
        rec.stage,
        Stage::Implementing | Stage::Verifying | Stage::Reviewing | Stage::Repairing
    ) {
        execute::execute(rec, &d, ints)?;
    }
    Ok(())
}

/// Stop with `needs_human` when the projected token use would cross the
/// budget, or the wall-time limit has passed. `remaining`: calls still to
/// come in the stages ahead.
pub fn over_budget(
    rec: &mut Record,
    spent: &[Call],
    remaining: u64,
    started: Instant,
) -> Result<bool> {
    if rec.stage.is_terminal() {
        return Ok(true);
    }
    if let Some(max) = rec.settings.max_wall_ms {
        let wall = started.elapsed().as_millis() as u64;
        if wall > max {
            rec.stop(
                Event::OverBudget,
                format!("--max-wall: {wall} ms spent, the limit is {max} ms"),
            )?;
            return Ok(true);
        }
    }
    let why = over_tokens(rec.settings.budget_tokens, spent, remaining)
        .or_else(|| over_usd(rec.settings.max_usd, spent, remaining));
    let Some(why) = why else {
        return Ok(false);
    };
    rec.stop(Event::OverBudget, why)?;
    rec.stop_kind = Some(crate::failure::Failure::BudgetExceeded.kind().into());
    rec.save()?;
    Ok(true)
}

/// `--budget-tokens`: the calls so far and `remaining` more of their
/// average size would cross it.
fn over_tokens(budget: Option<u64>, spent: &[Call], remaining: u64) -> Option<String> {
    let budget = budget?;
    let used = call::tokens(spent);
    let per_call = used.checked_div(spent.len() as u64).unwrap_or(0);
    let projected = used + per_call * remaining;
    (projected > budget).then(|| {
        format!(
            "--budget-tokens {budget}: {used} tokens used, {projected} projected with the {remaining} call(s) ahead"
        )
    })
}

/// `--max-usd`, the same way over the calls with a known cost (reported by
/// the CLI or estimated from the price table); the others count nothing.
fn over_usd(budget: Option<f64>, spent: &[Call], remaining: u64) -> Option<String> {
    let budget = budget?;
    let costs: Vec<f64> = spent.iter().filter_map(|c| c.usage.cost_usd).collect();
    let used: f64 = costs.iter().sum();
    let per_call = if costs.is_empty() {
        0.0
    } else {
        used / costs.len() as f64
    };
    let projected = used + per_call * remaining as f64;
    (projected > budget).then(|| {
        format!(
            "--max-usd {budget}: ${used:.4} used, ${projected:.4} projected with the {remaining} call(s) ahead"
        )
    })
}

/// Run `f` for each index on its own thread; a member's tool error becomes
/// its `error` outcome, an interrupt stops everything.
pub fn parallel<F>(n: usize, ints: &Interrupts, f: F) -> Result<Vec<Option<Call>>>
where
    F: Fn(usize, &mut Interrupts) -> Result<Option<Call>> + Sync,
{
    let out: Vec<Result<Option<Call>>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..n)
            .map(|i| {
                let mut ints = ints.clone();
                let f = &f;
                s.spawn(move || f(i, &mut ints))
            })
            .collect();
        hs.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Internal("a member's thread panicked".into())))
            })
            .collect()
    });
    let mut calls = Vec::new();
    for r in out {
        match r {
            Ok(c) => calls.push(c),
            Err(e @ Error::Interrupted { .. }) => return Err(e),
            Err(e) => calls.push(Some(Call {
                outcome: "error".into(),
                reason: Some(format!("{}: {e}", e.kind())),
                answer: None,
                usage: Default::default(),
                duration_ms: 0,
                model: None,
                log_path: None,
                retried: false,
                redactions: Default::default(),
            })),
        }
    }
    Ok(calls)
}

/// One member's call for a stage.
pub fn ask<T: serde::Serialize>(
    rec: &Record,
    m: &Member,
    (stage, who): (&str, String),
    prompt: String,
    schema: (&str, &str, &str),
    extract: &(dyn Fn(&str) -> std::result::Result<T, Vec<String>> + Sync),
    ints: &mut Interrupts,
) -> Result<Call> {
    call::call(
        &Ask {
            rec,
            member: m,
            stage,
            who,
            prompt,
            schema: Schema {
                name: schema.0,
                id: schema.1,
                text: schema.2,
            },
            extract,
            repo: None,
        },
        ints,
    )
}

/// A member's argv for `--dry-run` (the proposing call).
pub fn member_argv(rec: &Record, m: &Member, prompt: &str) -> Result<Vec<String>> {
    let agent = crate::agent::Agent::parse(&m.agent)?;
    let req = crate::ask::AskRequest {
        effort: rec.settings.effort.clone(),
        timeout: rec.settings.timeout.clone(),
        idle_timeout: rec.settings.idle_timeout.clone(),
        ..Default::default()
    };
    let path = std::env::temp_dir().join("baton-council-proposal-schema.json");
    let p = crate::ask::adviser::prepare_with(
        &crate::ask::adviser::AdviserSpec {
            agent,
            model: m.model.clone(),
            model_from: Some(crate::agent::argv::Origin::Flag("--members")),
        },
        &req,
        crate::ask::advice::Scope::Packet,
        &rec.cwd,
        &rec.root,
        prompt,
        (super::proposal::SCHEMA, &path),
    )?;
    let mut argv = vec![p.program.display().to_string()];
    argv.extend(p.spec.args_lossy());
    Ok(argv)
}

/// The `--async` runner: `baton __council-runner ID` in its own session,
/// its output in the council's folder.
pub fn spawn_runner(rec: &Record) -> Result<u32> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().map_err(|e| Error::io("finding baton's own path", e))?;
    let d = rec.dir()?;
    let log = crate::fsutil::create_private(&d.join("runner.log"))?;
    let err = log
        .try_clone()
        .map_err(|e| Error::io("opening the runner's log", e))?;
    let mut c = std::process::Command::new(exe);
    c.args(["__council-runner", &rec.council_id, "--root"])
        .arg(&rec.root)
        .current_dir(&rec.cwd)
        .stdin(std::process::Stdio::null())
        .stdout(log)
        .stderr(err)
        .process_group(0);
    let child = c.spawn().map_err(|e| Error::Spawn {
        binary: "baton".into(),
        source: e,
    })?;
    Ok(child.id())
}
