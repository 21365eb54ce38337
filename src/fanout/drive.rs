//! The driver: every candidate at once, each on its own thread (its
//! worktree made there, so they are made in parallel), then the judges,
//! the winner, and what stays.
//!
//! Signals: the fan-out's `Interrupts` reach every candidate through a
//! child of its own (`Interrupts::child`), which baton fires itself to stop
//! one candidate (`--pick first-green`); a candidate's test command follows
//! the same child (`Stop::following`). So a Ctrl-C or `baton cancel` stops
//! every peer and test command as a group, and first-green stops the
//! others' alone.

use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::group::parallel;
use crate::process::Interrupts;
use crate::result::{ErrorInfo, Status};
use crate::worktree::oracle::TestCmd;
use crate::worktree::verify::Stop;
use crate::worktree::{self, Checked};

use super::candidate::{self, Ctx, Outcome};
use super::gate::Gate;
use super::judge::{self, JudgeCtx, Work};
use super::outcome::{self, StoppedBy};
use super::preflight::Candidate;
use super::read_only;
use super::request::{Judge, Pick};
use super::result::{FanoutResult, JudgeResult, JudgeReview, Ranked, Winner};
use super::select;
use super::store::{Record, Stage};

/// The candidates the record holds.
pub fn candidates(rec: &Record) -> Vec<Candidate> {
    rec.candidates
        .iter()
        .zip(&rec.plans)
        .enumerate()
        .map(|(k, (e, p))| Candidate {
            id: e.id.clone(),
            n: k + 1,
            plan: p.clone(),
            vendor: e.vendor.clone(),
        })
        .collect()
}

/// Run the fan-out to its end and record its result. `checked`: the
/// worktree check (`None`: read-only, in place).
pub fn drive(rec: &mut Record, checked: Option<&Checked>) -> Result<FanoutResult> {
    let _runner =
        crate::group::background::hold_runner_lock(&rec.dir()?, "fan-out", &rec.fanout_id)?;
    drive_locked(rec, checked)
}

/// `drive`, by a process that holds the fan-out's runner lock already (the
/// `--async` runner takes it before anything can mark the record).
pub fn drive_locked(rec: &mut Record, checked: Option<&Checked>) -> Result<FanoutResult> {
    let started = Instant::now();
    rec.pid = Some(std::process::id());
    rec.stage = Stage::Writing;
    rec.save()?;
    let ints = Interrupts::install()?;
    let cands = candidates(rec);
    let mut r = match checked {
        None => read_only::run(rec, &cands, &ints)?,
        Some(c) => write(rec, c, &cands, &ints)?,
    };
    r.duration_ms = started.elapsed().as_millis() as u64;
    if rec.background {
        r.job_id = Some(rec.fanout_id.clone());
    }
    super::result::end(rec, r)
}

fn write(
    rec: &mut Record,
    checked: &Checked,
    cands: &[Candidate],
    ints: &Interrupts,
) -> Result<FanoutResult> {
    let s = rec.settings.clone();
    let test_cmd = s
        .worktree
        .as_ref()
        .and_then(|w| w.test_cmd.clone())
        .ok_or_else(|| Error::Internal("a writing fan-out without --test-cmd".into()))?;
    let test = TestCmd {
        text: test_cmd.clone(),
        shell: true,
    };
    let kids: Vec<Interrupts> = cands.iter().map(|_| ints.child()).collect();
    let gate = Gate::new(
        s.pick,
        s.max_wall_ms.map(Duration::from_millis),
        crate::spend::Budget {
            max_usd: s.max_usd,
            max_tokens: s.budget_tokens,
        },
        kids.clone(),
    );
    let dir = rec.dir()?;
    let job_id = rec.background.then(|| rec.fanout_id.clone());
    let ctx = Ctx {
        fanout_id: &rec.fanout_id,
        dir: &dir,
        checked,
        test: &test,
        test_timeout: Duration::from_millis(s.timeout_ms),
        until_green: s.until_green,
        job_id: job_id.as_deref(),
        gate: &gate,
    };
    let outs: Vec<Outcome> = parallel::each(cands.len(), ints, |i, _| {
        let mut mine = kids[i].clone();
        let stop = Stop::following(&mine);
        Ok(candidate::run(&cands[i], i, &ctx, &mut mine, &stop))
    })?
    .into_iter()
    .map(|r| {
        r.unwrap_or_else(|e| Outcome {
            error: Some(e),
            ..Outcome::default()
        })
    })
    .collect();
    let mut cancelled = ints.fired();
    let first_green = gate.winner();
    let mut r = FanoutResult::new(rec, "worktree");
    for (i, (c, o)) in cands.iter().zip(&outs).enumerate() {
        let stopped = match (cancelled, first_green) {
            (Some(_), _) if o.last().is_none_or(|x| !candidate::green(x)) => StoppedBy::Cancel,
            (None, Some(w)) if w != i && kids[i].fired().is_some() => {
                StoppedBy::Winner(cands[w].id.clone())
            }
            _ => StoppedBy::Nobody,
        };
        let mut cr = outcome::result(c, o, &stopped);
        // As baton's commit described the branch (the candidate's thread
        // read it there): not asked of git again here, after every
        // candidate has ended.
        if let Some(a) = o.last().map(|x| &x.attempt)
            && a.commit.is_some()
        {
            cr.diff_stat = a.diffstat.map(Into::into);
        }
        r.usage.add(&cr.usage);
        r.candidates.push(cr);
        r.warnings.extend(outcome::warnings(c, o));
    }
    if let Some(h) = outs.iter().find_map(|o| o.held_back.as_ref()) {
        r.warnings.push(h.clone());
    }
    outcome::branches_hold(&rec.root, &mut r, None);
    let eligible: Vec<usize> = (0..cands.len())
        .filter(|i| r.candidates[*i].eligible)
        .collect();
    let mut winner = None;
    if cancelled.is_none() {
        match s.pick {
            Pick::FirstGreen => winner = first_green.filter(|w| eligible.contains(w)),
            Pick::Best => {
                if eligible.len() >= 2 && s.judge != Judge::None {
                    rec.stage = Stage::Judging;
                    // Only what the views show: the judges run either way.
                    let _ = rec.save();
                }
                let served = served(cands, &outs);
                let jctx = JudgeCtx {
                    dir: &dir,
                    root: &rec.root,
                    cwd: &rec.cwd,
                    task: &rec.task,
                    test_cmd: &test_cmd,
                    settings: &s,
                    candidates: &served,
                    work: &work(&outs, &eligible, &r),
                };
                match rank(&jctx, &gate, &eligible, &r, ints) {
                    Ok((j, w)) => {
                        for rv in &j.reviews {
                            r.usage.add(&rv.usage);
                            gate.spent(&rv.usage, rv.duration_ms);
                        }
                        if let Some(n) = &j.note {
                            r.warnings.push(n.clone());
                        }
                        r.judge = Some(j);
                        winner = w;
                    }
                    Err(Error::Interrupted { signal }) => {
                        cancelled = ints.fired();
                        r.warnings
                            .push(format!("the judges were stopped by {signal}"));
                    }
                    Err(e) => return Err(e),
                }
            }
        }
    }
    r.spending = gate.report();
    let places: Vec<Vec<String>> = cands
        .iter()
        .zip(&outs)
        .map(|(c, o)| worktrees(c, &rec.fanout_id, o))
        .collect();
    let spend_stop = gate
        .exceeded()
        .then(|| outs.iter().find_map(|o| o.held_back.clone()))
        .flatten();
    let winner = winner.filter(|w| outcome::branches_hold(&rec.root, &mut r, Some(*w)));
    settle(rec, &mut r, cands, &places, winner, cancelled, spend_stop);
    Ok(r)
}

/// The worktrees a candidate made: the one its last round ran in first
/// (the serving agent's), then those of earlier attempts that stayed.
fn worktrees(c: &Candidate, fanout_id: &str, o: &Outcome) -> Vec<String> {
    let Some(r) = o.rounds.first() else {
        return vec![c.worktree_id(fanout_id)];
    };
    let mut ids = vec![
        o.last()
            .map_or(&r.attempt, |x| &x.attempt)
            .worktree
            .id
            .clone(),
    ];
    ids.extend(r.attempt.left_behind.iter().map(|s| s.id.clone()));
    ids
}

/// The candidates as their work was written: one whose agent fell back is
/// the fallback agent's work, so that agent (not the one asked for) is the
/// judge that never ranks it, and its model is among the names stripped.
fn served(cands: &[Candidate], outs: &[Outcome]) -> Vec<Candidate> {
    cands
        .iter()
        .zip(outs)
        .map(|(c, o)| match o.last() {
            Some(x) if x.attempt.run_plan.agent != c.plan.agent => {
                let p = &x.attempt.run_plan;
                Candidate {
                    vendor: p.agent.vendor(p.provider.as_deref(), p.model.as_deref()),
                    plan: p.clone(),
                    ..c.clone()
                }
            }
            _ => c.clone(),
        })
        .collect()
}

/// What each eligible candidate shows a judge: its diff, its size, its
/// whitespace problems.
fn work(outs: &[Outcome], eligible: &[usize], r: &FanoutResult) -> Vec<Work> {
    eligible
        .iter()
        .filter_map(|&i| {
            let last = outs[i].last()?;
            last.attempt.commit.as_ref()?;
            let d = r.candidates[i].diff_stat.unwrap_or_default();
            Some(Work {
                index: i,
                // Read on the candidate's thread while its tests ran.
                diff: last
                    .diff
                    .as_ref()
                    .map(|d| d.text.clone())
                    .unwrap_or_default(),
                stat: format!("+{} -{} in {} file(s)", d.insertions, d.deletions, d.files),
                whitespace: r.candidates[i]
                    .tests
                    .as_ref()
                    .map_or(0, |t| t.whitespace_errors.len()),
            })
        })
        .collect()
}

/// `--pick best`: the judges (when two or more are eligible and a judge
/// mode asks for them), then the ranking; the winner is its first.
fn rank(
    ctx: &JudgeCtx,
    gate: &Gate,
    eligible: &[usize],
    r: &FanoutResult,
    ints: &Interrupts,
) -> Result<(JudgeResult, Option<usize>)> {
    let judges = judge::plan(&ctx.settings.judge, ctx.candidates, eligible);
    let mut note = None;
    let mut calls = Vec::new();
    if eligible.len() < 2 {
        note = (eligible.len() == 1).then(|| "one eligible candidate: nothing to judge".into());
    } else if ctx.settings.judge != Judge::None {
        if judges.is_empty() {
            note = Some("no judge could rank the eligible candidates (each judge's own are all it could have seen, or none can read only): ranked by diff size".into());
        } else {
            match gate.may_start("the judges", judges.len() as u64) {
                Ok(()) => calls = judge::judge(ctx, &judges, ints)?,
                Err(why) => note = Some(format!("{why}: ranked by diff size")),
            }
        }
    }
    let valid: Vec<select::Judged> = calls
        .iter()
        .filter_map(|c| c.review.as_ref().map(|rv| (c.shown.as_slice(), rv)))
        .collect();
    if !calls.is_empty() && valid.is_empty() {
        note = Some("no judge gave a valid review: ranked by diff size".into());
    }
    let (c, seed) = (&r.candidates, ctx.settings.seed);
    let diff = |i: usize| c[i].diff_stat.map_or(0, |d| d.insertions + d.deletions);
    let time = |i: usize| c[i].duration_ms;
    let ranked = select::rank(select::score(eligible, &valid, &diff, &time), seed);
    let winner = ranked.first().map(|x| x.index);
    let how = select::how(&ranked, &|i| c[i].id.clone(), seed);
    note = note.or_else(|| how.starts_with("tie").then(|| how.clone()));
    let j = JudgeResult {
        mode: ctx.settings.judge.as_str().into(),
        label_map: calls
            .iter()
            .map(|k| {
                let m = k
                    .shown
                    .iter()
                    .map(|(l, i)| (l.clone(), c[*i].id.clone()))
                    .collect();
                (k.who.clone(), m)
            })
            .collect(),
        reviews: calls
            .into_iter()
            .map(|k| JudgeReview {
                who: k.who,
                agent: k.agent,
                model: k.model,
                vendor: k.vendor,
                outcome: k.outcome,
                reason: k.reason,
                review: k.review,
                usage: k.usage,
                duration_ms: k.duration_ms,
                log_path: k.log_path,
            })
            .collect(),
        ranking: ranked
            .iter()
            .map(|x| Ranked {
                candidate: c[x.index].id.clone(),
                score: x.score,
                judges: x.judges as u64,
                blockers: x.blockers as u64,
                diff_lines: x.diff_lines,
                duration_ms: x.duration_ms,
            })
            .collect(),
        note,
        how: Some(how),
    };
    Ok((j, winner))
}

/// The winner named, the others' worktrees removed (unless `--keep-all`,
/// or the fan-out was cancelled: nothing is thrown away then), the status
/// and summary.
#[allow(clippy::too_many_arguments)]
fn settle(
    rec: &Record,
    r: &mut FanoutResult,
    cands: &[Candidate],
    places: &[Vec<String>],
    winner: Option<usize>,
    cancelled: Option<i32>,
    spend_stop: Option<String>,
) {
    let keep_all = rec.settings.keep_all || cancelled.is_some();
    for (i, c) in cands.iter().enumerate() {
        if keep_all {
            break;
        }
        // An earlier attempt's worktree (its agent changed files, then could
        // not answer) is nobody's work to keep.
        let (serving, earlier) = places[i].split_first().expect("one worktree id at least");
        for id in earlier {
            if let Err(e) = worktree::store::remove(&rec.root, id, true, true) {
                r.warnings.push(format!(
                    "{}: an earlier attempt's worktree {id} could not be removed: {e}",
                    c.id
                ));
            }
        }
        let cr = &mut r.candidates[i];
        if !cr.kept || Some(i) == winner {
            continue;
        }
        match worktree::store::remove(&rec.root, serving, true, true) {
            Ok(_) => cr.kept = false,
            Err(e) => r
                .warnings
                .push(format!("{}: its worktree could not be removed: {e}", c.id)),
        }
    }
    let n = cands.len();
    let eligible = r.candidates.iter().filter(|c| c.eligible).count();
    if let Some(sig) = cancelled {
        let signal = crate::process::signal_name(sig);
        r.status = Status::Cancelled;
        r.summary =
            format!("fan-out of {n} cancelled by {signal}; every candidate's worktree is kept");
        r.error = Some(ErrorInfo {
            kind: "cancelled".into(),
            message: format!("stopped by {signal}"),
            hint: Some("`baton worktree list` shows the candidates' worktrees; `baton worktree remove ID --branch` removes one".into()),
            retry_after_s: None,
        });
        return;
    }
    let Some(w) = winner else {
        r.status = Status::Failed;
        let reasons: Vec<String> = r
            .candidates
            .iter()
            .filter_map(|c| {
                c.excluded_reason
                    .as_ref()
                    .map(|why| format!("{}: {why}", c.id))
            })
            .collect();
        r.summary = format!(
            "fan-out of {n}: no eligible candidate ({})",
            reasons.join("; ")
        );
        if let Some(why) = spend_stop {
            r.error = Some(ErrorInfo {
                kind: crate::failure::Failure::BudgetExceeded.kind().into(),
                message: format!("none of the {n} candidates is eligible, and {why}"),
                hint: Some(
                    "`spending` says what was spent; raise --max-usd / --budget-tokens, or keep \
                     the candidates' branches with --keep-all and repair one by hand"
                        .into(),
                ),
                retry_after_s: None,
            });
            return;
        }
        r.error = Some(ErrorInfo {
            kind: "no_eligible_candidate".into(),
            message: format!("none of the {n} candidates is eligible"),
            hint: Some(
                "each candidate's `excluded_reason` says why; --until-green R lets a failing one \
                 repair, --keep-all keeps their branches"
                    .into(),
            ),
            retry_after_s: None,
        });
        return;
    };
    let wc = &r.candidates[w];
    let branch = wc.branch.clone().unwrap_or_default();
    let d = wc.diff_stat.unwrap_or_default();
    let how = match (&r.judge, rec.settings.pick) {
        (_, Pick::FirstGreen) => "eligible first".to_string(),
        (Some(JudgeResult { how: Some(h), .. }), _) if !h.is_empty() => h.clone(),
        (_, _) if eligible == 1 => "the only eligible candidate".to_string(),
        _ => "the smallest diff".to_string(),
    };
    r.summary = format!(
        "fan-out of {n}: {} ({}) wins, {how}; {eligible} of {n} eligible; branch {branch}: {} \
         file(s), +{} -{}",
        wc.id, wc.agent, d.files, d.insertions, d.deletions
    );
    let c = wc.commit.clone().unwrap_or_else(|| branch.clone());
    r.merge_hint = Some(format!(
        "nothing was merged: review with `git diff {}...{c}`, then `git merge {c}` if you agree",
        r.base.clone().unwrap_or_default()
    ));
    r.winner = Some(Winner {
        id: wc.id.clone(),
        agent: wc.agent.clone(),
        model: wc.model.clone(),
        branch: wc.branch.clone(),
        commit: wc.commit.clone(),
    });
}
