//! Stages 6–9 driven in order (implementing, verifying, reviewing,
//! repairing) with `implement`, the oracle (`worktree::oracle`), `review` and `gate`, each round stored for resume.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::call::{self, Ask, Call, Schema, parallel};
use super::deliberate::Deliberation;
use super::gate::{self, Gate, Repair};
use super::implement::{self, Implemented, WriteRequest};
use super::lock::CouncilLock;
use super::machine::{self, Event, Stage};
use super::result::{Execution, ExecutionUsage, Outcome, ReviewResult, Worktree};
use super::review;
use super::schema::{Plan, Review};
use super::store::{Member, Record, read_json, write_json};
use crate::error::{Error, Result};
use crate::fsutil;
use crate::process::Interrupts;
use crate::redact::Counts;
use crate::result::{Usage, Warning};
use crate::worktree::oracle::{self as verify, TestCmd, Verification};
use crate::worktree::verify::Stop;

/// One reviewer's call in one round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReviewCall {
    pub member: usize,
    pub call: Call,
}

/// The author the chair adopted most: the first label of `adopted_from`.
fn writer(rec: &Record, d: &Deliberation, plan: &Plan) -> Result<Member> {
    if let Some(w) = &rec.writer {
        return Ok(w.clone());
    }
    plan.adopted_from
        .first()
        .and_then(|l| d.synthesis.label_map.iter().find(|(x, _)| x == l))
        .map(|(_, i)| rec.members[*i].clone())
        .or_else(|| rec.members.first().cloned())
        .ok_or_else(|| Error::Internal("a council without members".into()))
}

/// The writer's run plan, with the fallback chain every member has
/// (`run.fallback` of the config, as `ask::adviser` plans a member's call)
/// less the agents that cannot write here, each named in a warning: the
/// writer is planned after the members answered, and an agent it may never
/// need does not stop the council.
fn writer_plan(rec: &Record, w: &Member) -> Result<(crate::run::Plan, Vec<String>)> {
    let mut req = crate::run::RunRequest {
        agent: Some(w.agent.clone()),
        model: w.model.clone(),
        effort: rec.settings.effort.clone(),
        // The writer writes, whatever `run.access` of the config says.
        access: Some("workspace".into()),
        cwd: Some(rec.cwd.clone()),
        timeout: Some(rec.settings.timeout.clone()),
        idle_timeout: Some(rec.settings.idle_timeout.clone()),
        origins: crate::agent::argv::Origins {
            model: Some(crate::agent::argv::Origin::Flag("--members")),
            ..Default::default()
        },
        // Planned without a chain first: `run::plan` refuses one with an
        // agent that cannot enforce the access, where this leaves it out.
        fallback: Some(Vec::new()),
        ..Default::default()
    };
    let mut plan = crate::run::plan(&req, "the council's plan".into())?;
    req.fallback = None;
    let mut notes = Vec::new();
    plan.fallback = crate::run::fallback::links(&req, &mut notes)?;
    notes.extend(plan.keep_usable_links());
    Ok((plan, notes))
}

/// The member whose work the worktree holds: the writer chosen, or the
/// fallback agent that served in its place (`imp.run_plan`).
fn served(w: &Member, imp: &Implemented) -> Member {
    let p = &imp.run_plan;
    if p.agent.name() == w.agent {
        return w.clone();
    }
    Member {
        agent: p.agent.name().to_string(),
        vendor: p.agent.vendor(p.provider.as_deref(), p.model.as_deref()),
        model: p.model.clone(),
    }
}

/// The chain's warnings about the writer (who served, what was not tried
/// again, what an earlier attempt left, what an interrupted one left), for
/// the council's `warnings`; the reviewers are shown none.
fn writer_warnings(imp: &Implemented) -> Vec<String> {
    imp.warnings
        .iter()
        .filter_map(|w| match w {
            Warning::FellBack(rest) => Some(format!("fell_back: the writer {rest}")),
            Warning::InterruptedAttemptLeft(_) => Some(format!("writer: {w}")),
            w if w.from_the_chain() => Some(format!("writer: {w}")),
            _ => None,
        })
        .collect()
}

fn step(rec: &mut Record, from: &[Stage], event: Event) -> Result<()> {
    if from.contains(&rec.stage) && machine::next(rec.stage, event).is_some() {
        rec.advance(event)?;
    }
    Ok(())
}

/// What stages 6–9 add up over their rounds, for `execution.json`.
struct Tally<'a> {
    /// The plan executed and the sha256 of the bytes it was parsed from.
    plan: &'a Plan,
    plan_sha256: &'a str,
    usage_impl: Usage,
    usage_rev: Usage,
    /// Secrets removed from the reviewers' answers and from what the
    /// writer's work shows the others (its diff, the test output).
    redactions: Counts,
    /// The writer the council chose (`worktree.writer` is the one that
    /// served: a fallback agent when it could not answer).
    writer_requested: String,
    /// Every writer call of the rounds that took more than one (`--retry`,
    /// `run.fallback`), as a fan-out candidate's `attempts`.
    attempts: Vec<crate::result::Attempt>,
}

/// Run stages 6–9 from wherever the record stands, reusing stored rounds.
pub fn execute(rec: &mut Record, d: &Deliberation, ints: &Interrupts) -> Result<()> {
    // Only bytes that hash to the approval, read once for every stage of
    // this walk (a resume reads and checks them again).
    let (plan, plan_sha256) = super::approve::approved_plan(rec)?;
    // Run as the user (unconfined where the sandbox is off), so refused under an access cap
    // (`baton mcp`) that does not allow it; a refusal leaves the council
    // where it is, to execute from a shell.
    if let Some(t) = rec.settings.test_cmd.as_ref().or(plan.test_cmd.as_ref()) {
        crate::run::check_test_cmd_cap(&format!("the test command `{t}`"))?;
    }
    let w = writer(rec, d, &plan)?;
    let lock = CouncilLock::acquire(&rec.root, &rec.council_id)?;
    let stop = Stop::install()?;
    let dir = rec.dir()?.join("execution");
    fsutil::ensure_private_dir(&dir)?;
    let base = rec.base_commit.clone().unwrap_or_default();
    let test = rec
        .settings
        .test_cmd
        .as_ref()
        .map(|t| TestCmd {
            text: t.clone(),
            shell: true,
        })
        .or_else(|| {
            plan.test_cmd.as_ref().map(|t| TestCmd {
                text: t.clone(),
                shell: false,
            })
        });
    let timeout =
        crate::duration::parse(&rec.settings.timeout).unwrap_or(Duration::from_secs(1200));
    let mut tally = Tally {
        plan: &plan,
        plan_sha256: &plan_sha256,
        usage_impl: Usage::default(),
        usage_rev: Usage::default(),
        redactions: Counts::new(),
        writer_requested: w.agent.clone(),
        attempts: Vec::new(),
    };
    let mut prev_open = None;
    let mut last: Option<(
        Implemented,
        Verification,
        Vec<ReviewCall>,
        Vec<review::MergedFinding>,
    )> = None;
    let mut round = 0u32;
    loop {
        let rdir = dir.join(format!("round-{round}"));
        fsutil::ensure_private_dir(&rdir)?;
        // Stage 6 / 9: the writer.
        let imp: Implemented = match read_json(&rdir.join("implemented.json"))? {
            Some(i) => i,
            None => {
                let mut one = ints.clone();
                let stage = match round {
                    0 => "implementing".to_string(),
                    n => format!("repairing{n}"),
                };
                let log = rdir.join("stdout.log");
                crate::run::observe::set_stage(Some(format!("council: {stage}")));
                // A repair round goes to the agent that served the round
                // before (after a fallback, not the writer chosen).
                let by = last
                    .as_ref()
                    .map_or_else(|| w.clone(), |l| served(&w, &l.0));
                let started =
                    crate::group::runs::start(&rec.dir()?, &stage, "writer", by.who(), Some(&log));
                let i = match &last {
                    None => {
                        let (writer, notes) = writer_plan(rec, &w)?;
                        for n in notes {
                            rec.warn(format!("writer: {n}"));
                        }
                        implement::implement(
                            &WriteRequest {
                                plan: &plan,
                                council_id: &rec.council_id,
                                task: &rec.task,
                                writer: &writer,
                                base: &base,
                                dir: &rdir,
                            },
                            &lock,
                            &mut one,
                            &stop,
                        )
                    }
                    Some((prev, ver, _, merged)) => {
                        let open: Vec<review::MergedFinding> =
                            gate::open_findings(merged).into_iter().cloned().collect();
                        let tail = (ver.command.is_some() && !ver.passed)
                            .then_some(ver.output_tail.as_str());
                        // Defence in depth, not counted: the findings were
                        // redacted in the reviewers' calls and the test
                        // output in the review prompt, where they came in.
                        let prompt = call::redact_text(
                            &implement::repair_prompt(&open, tail),
                            &mut Counts::new(),
                        );
                        implement::repair(
                            prev,
                            &rec.council_id,
                            &prompt,
                            &rdir,
                            &lock,
                            &mut one,
                            &stop,
                        )
                    }
                };
                let i = match i {
                    Ok(i) => {
                        if let Some(mut s) = started {
                            // The views show who did the work: after a
                            // fallback, the agent that served.
                            s.record.agent = i.agent.clone();
                            s.end(i.status.as_str(), &i.usage, None);
                        }
                        i
                    }
                    Err(e) => {
                        if let Some(s) = started {
                            s.end("error", &Usage::default(), None);
                        }
                        return Err(e);
                    }
                };
                if let Some(sig) = one.fired() {
                    return Err(Error::Interrupted {
                        signal: crate::process::signal_name(sig),
                    });
                }
                write_json(&rdir.join("implemented.json"), &i)?;
                i
            }
        };
        tally.usage_impl.add(&imp.usage);
        tally.attempts.extend(imp.attempts.iter().cloned());
        for x in writer_warnings(&imp) {
            rec.warn(x);
        }
        // The work is the serving agent's: it does not review it, and the
        // gate wants an approval from a vendor other than its.
        let by = served(&w, &imp);
        let reviewers: Vec<usize> = (0..rec.members.len())
            .filter(|i| {
                let m = &rec.members[*i];
                if by == w {
                    *m != w
                } else {
                    m.agent != by.agent
                }
            })
            .collect();
        let ok = imp.commit.is_some() || imp.status == crate::result::Status::Success;
        if !ok {
            rec.reason = Some(format!(
                "the writer failed: {}",
                imp.error
                    .as_ref()
                    .map_or(imp.summary.clone(), |e| e.message.clone())
            ));
        }
        step(
            rec,
            &[Stage::Implementing, Stage::Repairing],
            Event::Implemented { ok },
        )?;
        if rec.stage == Stage::Failed {
            save(rec, &imp, None, &[], &[], round, &tally)?;
            return Ok(());
        }
        // Stage 7: baton's own oracle.
        let ver: Verification = match read_json(&rdir.join("verification.json"))? {
            Some(v) => v,
            None => {
                let v =
                    verify::verify(&imp, test.as_ref(), &rdir.join("test.log"), timeout, &stop)?;
                write_json(&rdir.join("verification.json"), &v)?;
                v
            }
        };
        if ver.log_dropped > 0 {
            rec.warn(format!(
                "round {round}'s test command printed more than {} MiB: its test.log keeps the \
                 end of its output; the first {} bytes were dropped",
                crate::worktree::verify::log_max() >> 20,
                ver.log_dropped
            ));
        }
        step(rec, &[Stage::Verifying], Event::Verified)?;
        // Stage 8: the others review, read-only in the worktree.
        let diff = match &imp.commit {
            Some(head) => verify::diff_text(&imp.worktree.top, &imp.worktree.base, head)?,
            None => String::new(),
        };
        // The writer's work reaches the reviewers through the diff and the
        // test output: a key it read and wrote out is not handed on.
        let prompt = call::redact_text(
            &review::review_prompt(&plan, &diff, &ver),
            &mut tally.redactions,
        );
        let snapshot = rec.clone();
        let wt = imp.worktree_path.clone();
        let calls = parallel(reviewers.len(), ints, |k, ints| {
            let i = reviewers[k];
            let ex = |s: &str| {
                super::check::extract(
                    s,
                    &review::validate,
                    &["verdict", "summary", "files_reviewed", "findings"],
                )
            };
            call::call(
                &Ask {
                    rec: &snapshot,
                    member: &snapshot.members[i],
                    stage: &format!("reviewing{round}"),
                    who: format!("m{i}"),
                    prompt: prompt.clone(),
                    schema: Schema {
                        name: "council-review",
                        id: review::REVIEW_SCHEMA_ID,
                        text: review::REVIEW_SCHEMA,
                    },
                    extract: &ex,
                    repo: Some(wt.as_path()),
                },
                ints,
            )
            .map(Some)
        })?;
        let rcalls: Vec<ReviewCall> = calls
            .into_iter()
            .zip(&reviewers)
            .filter_map(|(c, i)| c.map(|call| ReviewCall { member: *i, call }))
            .collect();
        for c in &rcalls {
            tally.usage_rev.add(&c.call.usage);
            call::add_counts(&mut tally.redactions, &c.call.redactions);
        }
        let reviews: Vec<(String, String, Review)> = rcalls
            .iter()
            .filter(|c| c.call.ok())
            .filter_map(|c| {
                c.call.parsed::<Review>().map(|r| {
                    (
                        rec.members[c.member].agent.clone(),
                        rec.members[c.member].vendor.clone(),
                        r,
                    )
                })
            })
            .collect();
        let merged = gate::merged(&reviews);
        let verdict = gate::terminal(&ver, &reviews, &by.vendor, &imp.changed_files);
        let open = gate::open_set(&ver, &merged);
        save(rec, &imp, Some(&ver), &rcalls, &merged, round, &tally)?;
        let verdict = implement::unless_moved(rec, &imp, verdict);
        match verdict {
            Gate::Ready => {
                step(
                    rec,
                    &[Stage::Reviewing],
                    Event::Reviewed(machine::Gate::Ready),
                )?;
                return Ok(());
            }
            Gate::NeedsHuman {
                reason,
                coverage_gap,
            } => {
                let decision = gate::repair_decision(
                    round,
                    rec.settings.repair_rounds,
                    &open,
                    prev_open.as_ref(),
                );
                if decision == Repair::Go && rec.stage != Stage::NeedsHuman {
                    step(
                        rec,
                        &[Stage::Reviewing],
                        Event::Reviewed(machine::Gate::Repair),
                    )?;
                    prev_open = Some(open);
                    last = Some((imp, ver, rcalls, merged));
                    round += 1;
                    continue;
                }
                if !coverage_gap.is_empty() {
                    rec.warn(format!(
                        "coverage_gap: no reviewer read {}",
                        coverage_gap.join(", ")
                    ));
                }
                let why = match decision {
                    Repair::Stuck => "; the same problems stayed open after a repair round",
                    Repair::OutOfRounds => "; the repair rounds are used up",
                    _ => "",
                };
                rec.reason = Some(format!("{reason}{why}"));
                step(
                    rec,
                    &[Stage::Reviewing],
                    Event::Reviewed(machine::Gate::NeedsHuman),
                )?;
                rec.save()?;
                return Ok(());
            }
        }
    }
}

/// Whether the test command ran and failed (not: was not run, passed).
pub fn check_failed(v: &Verification) -> bool {
    v.command.is_some() && v.not_run.is_none() && !v.passed && v.interrupted.is_none()
}

/// `execution.json`: what the result shows of stages 6–9.
fn save(
    rec: &Record,
    imp: &Implemented,
    ver: Option<&Verification>,
    reviews: &[ReviewCall],
    merged: &[review::MergedFinding],
    round: u32,
    tally: &Tally<'_>,
) -> Result<()> {
    let member = |r: &ReviewCall| &rec.members[r.member];
    let v = Execution {
        worktree: Worktree::of(imp, &tally.writer_requested, &tally.attempts),
        verification: ver,
        reviews: reviews.iter().map(|r| ReviewResult::of(member(r), &r.call)).collect(),
        findings: merged,
        repair_rounds: round,
        // Nothing to merge when baton's check of the writer's work failed.
        // The commit, not the branch: a branch can be moved (`branch_moved`).
        merge_hint: (!ver.is_some_and(check_failed)).then(|| {
            let c = imp.commit.as_deref().unwrap_or(&imp.branch);
            format!(
                "nothing was merged: review with `git diff {}...{c}`, then `git merge {c}` if you agree",
                imp.base
            )
        }),
        usage_by_stage: ExecutionUsage {
            implementing: &tally.usage_impl,
            reviewing: &tally.usage_rev,
        },
        member_outcomes: reviews
            .iter()
            .map(|r| (r.member.to_string(), Outcome::of(&r.call)))
            .collect(),
        plan: tally.plan,
        plan_sha256: tally.plan_sha256,
        redactions: &tally.redactions,
    };
    write_json(&rec.dir()?.join("execution.json"), &v)
}
