//! `--read-only` fan-out: every candidate runs in place at once, an
//! ordinary read-only run each, and the answers come back side by side.
//! Nothing is written, tested or ranked; there is no winner.

use crate::error::Result;
use crate::group::parallel;
use crate::group::runs::{self, Who};
use crate::process::Interrupts;
use crate::result::{ErrorInfo, RunResult, Status, Usage, Warning};
use crate::run::{Hooks, chain, save_result};

use super::preflight::Candidate;
use super::result::{CandidateResult, FanoutResult, RoundResult};
use super::store::Record;

pub fn run(rec: &Record, cands: &[Candidate], ints: &Interrupts) -> Result<FanoutResult> {
    let dir = rec.dir()?;
    let outs = parallel::each(cands.len(), ints, |i, ints| {
        let c = &cands[i];
        let rdir = dir.join(&c.id).join("round-0");
        crate::fsutil::ensure_private_dir(&rdir)?;
        let who = Who {
            agent: c.plan.agent.name(),
            model: c.plan.model.as_deref(),
        };
        let started = runs::start(
            &dir,
            "answering",
            &c.id,
            who,
            Some(&rdir.join("stdout.log")),
        );
        // In place and read-only: nothing is changed, so a fallback agent
        // may take over where the first one could not answer.
        let mut on_spawn = |_| {};
        let r = chain::run(&c.plan, Some(&rdir), ints, Hooks::new(&mut on_spawn));
        if let Some(mut s) = started {
            match &r {
                Ok(r) => {
                    // The views show the agent that served (after a fallback).
                    s.record.agent = r.agent.clone();
                    s.end(r.status.as_str(), &r.usage, r.model.as_deref())
                }
                Err(_) => s.end("error", &Usage::default(), None),
            }
        }
        let mut r = r?;
        save_result(Some(&rdir), &mut r);
        Ok(r)
    });
    let mut out = FanoutResult::new(rec, "read-only");
    let outs = match outs {
        Ok(o) => o,
        Err(e) => vec![Err(e)],
    };
    for (c, r) in cands.iter().zip(outs) {
        // What the chain said about who served, as a writing fan-out says it.
        if let Ok(r) = &r {
            out.warnings.extend(
                r.warnings
                    .iter()
                    .filter(|w| matches!(w, Warning::FellBack(_)))
                    .map(|w| format!("{}: {w}", c.id)),
            );
        }
        let cr = entry(c, r);
        out.usage.add(&cr.usage);
        out.candidates.push(cr);
    }
    let n = cands.len();
    let ok = out
        .candidates
        .iter()
        .filter(|c| c.status == Status::Success)
        .count();
    if let Some(sig) = ints.fired() {
        let signal = crate::process::signal_name(sig);
        out.status = Status::Cancelled;
        out.summary = format!("read-only fan-out of {n} cancelled by {signal}");
        out.error = Some(ErrorInfo {
            kind: "cancelled".into(),
            message: format!("stopped by {signal}"),
            hint: None,
            retry_after_s: None,
        });
    } else if ok == 0 {
        out.status = Status::Failed;
        out.summary = format!("read-only fan-out of {n}: no candidate answered");
        out.error = Some(ErrorInfo {
            kind: "no_answer".into(),
            message: format!("none of the {n} candidates answered"),
            hint: Some("each candidate's `error` says why".into()),
            retry_after_s: None,
        });
    } else {
        out.summary = format!("read-only fan-out of {n}: {ok} answered, side by side below");
        for c in out
            .candidates
            .iter()
            .filter(|c| c.status != Status::Success)
        {
            out.warnings.push(format!(
                "{} ({}) did not answer: {}",
                c.id,
                c.agent,
                c.status.as_str()
            ));
        }
    }
    Ok(out)
}

fn entry(c: &Candidate, r: Result<RunResult>) -> CandidateResult {
    let mut e = CandidateResult {
        id: c.id.clone(),
        agent: c.plan.agent.name().into(),
        agent_requested: c.plan.agent.name().into(),
        model: c.plan.model.clone(),
        vendor: c.vendor.clone(),
        status: Status::Error,
        eligible: false,
        excluded_reason: Some("a read-only fan-out selects nothing".into()),
        branch: None,
        commit: None,
        branch_moved: false,
        worktree: None,
        kept: false,
        changed_files: Vec::new(),
        diff_stat: None,
        tests: None,
        rounds: Vec::new(),
        attempts: Vec::new(),
        usage: Usage::default(),
        duration_ms: 0,
        session: None,
        message: None,
        log_path: None,
        error: None,
    };
    match r {
        Ok(r) => {
            e.rounds.push(RoundResult {
                round: 0,
                status: r.status,
                summary: r.summary.clone(),
                session: r.session.clone(),
                tests: None,
                usage: r.usage.clone(),
                duration_ms: r.duration_ms,
                log_path: r.log_path.clone(),
            });
            e.status = r.status;
            if r.agent != e.agent {
                e.agent = r.agent.clone();
                e.model = None;
            }
            e.model = r.model.or(e.model);
            e.attempts = r.attempts;
            e.changed_files = r.changed_files;
            e.usage = r.usage;
            e.duration_ms = r.duration_ms;
            e.session = r.session;
            e.message = r.message;
            e.log_path = r.log_path;
            e.error = r.error;
        }
        Err(err) => {
            e.error = Some(ErrorInfo {
                kind: err.kind().into(),
                message: err.to_string(),
                hint: err.hint(),
                retry_after_s: None,
            });
        }
    }
    e
}
