//! The judges: each reviewing agent ranks the eligible candidates it did not
//! write (`--judge peers`), or one named agent ranks them all (`--judge
//! AGENT`), blind.
//!
//! A judge is shown each candidate's diff under a label drawn by a seeded
//! shuffle of its own (`--seed` replays it), with every agent, model and
//! vendor name stripped (`blind`, the council's blinding); it answers
//! `baton.fanout.review/1`, read-only with tools off, through `ask`'s
//! consultation (the same one repair round a council member gets). The
//! labels each judge saw are revealed only in the result (`label_map`).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::agent::{Access, Agent};
use crate::ask::AskRequest;
use crate::ask::advice::Scope;
use crate::ask::adviser::AdviserSpec;
use crate::ask::consult::Verdict;
use crate::error::{Error, Result};
use crate::fsutil;
use crate::group::blind::{Rng, Stripper, label};
use crate::group::call::Structured;
use crate::group::runs::Who;
use crate::group::{self, parallel};
use crate::process::Interrupts;
use crate::result::Usage;

use super::preflight::{Candidate, peer_judges};
use super::request::{Judge, Settings};
use super::review::{self, Review, Shown};

/// What a judge is shown of one eligible candidate (before blinding).
pub struct Work {
    pub index: usize,
    pub diff: String,
    pub stat: String,
    pub whitespace: usize,
}

/// One judge's call and what became of it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JudgeCall {
    /// `j1`, `j2`, … in the order the judges are listed.
    pub who: String,
    pub agent: String,
    pub model: Option<String>,
    pub vendor: String,
    /// Label → candidate index, in the order it was shown them.
    pub shown: Vec<(String, usize)>,
    /// `ok`, `abstained` (no valid review after the repair round),
    /// `timeout` or `error`.
    pub outcome: String,
    pub reason: Option<String>,
    pub review: Option<Review>,
    pub usage: Usage,
    pub duration_ms: u64,
    pub log_path: Option<String>,
}

/// Who judges which candidates: (agent, model, indexes it ranks).
pub fn plan(
    judge: &Judge,
    candidates: &[Candidate],
    eligible: &[usize],
) -> Vec<(String, Option<String>, Vec<usize>)> {
    match judge {
        Judge::None => Vec::new(),
        Judge::Agent { agent, model } => vec![(agent.clone(), model.clone(), eligible.to_vec())],
        Judge::Peers => peer_judges(candidates)
            .into_iter()
            .filter(|(a, _, _)| {
                Agent::parse(a).is_ok_and(|a| a.supported_access().contains(&Access::ReadOnly))
            })
            .map(|(a, m, own)| {
                let sees: Vec<usize> = eligible
                    .iter()
                    .copied()
                    .filter(|i| !own.contains(i))
                    .collect();
                (a, m, sees)
            })
            .filter(|(_, _, sees)| !sees.is_empty())
            .collect(),
    }
}

/// Everything the judges need.
pub struct JudgeCtx<'a> {
    pub dir: &'a Path,
    pub root: &'a Path,
    pub cwd: &'a Path,
    pub task: &'a str,
    pub test_cmd: &'a str,
    pub settings: &'a Settings,
    pub candidates: &'a [Candidate],
    pub work: &'a [Work],
}

/// Ask every judge at once. An interrupt stops them all (the error); a
/// judge's own failure is its outcome.
pub fn judge(
    ctx: &JudgeCtx,
    who: &[(String, Option<String>, Vec<usize>)],
    ints: &Interrupts,
) -> Result<Vec<JudgeCall>> {
    let schemas = ctx.dir.join("schemas");
    fsutil::ensure_private_dir(&schemas)?;
    let schema_path = schemas.join("fanout-review.json");
    fsutil::write_atomic(&schema_path, review::SCHEMA.as_bytes())?;
    // Every model name in play is stripped, with the fixed list of
    // agents, vendors and CLIs.
    let names: Vec<String> = ctx
        .candidates
        .iter()
        .filter_map(|c| c.plan.model.clone())
        .chain(who.iter().filter_map(|w| w.1.clone()))
        .collect();
    let stripper = Stripper::new(&names);
    let out = parallel::each(who.len(), ints, |j, ints| {
        let (agent, model, sees) = &who[j];
        let mut order = sees.clone();
        Rng::new(ctx.settings.seed, 1 + j as u64).shuffle(&mut order);
        let shown: Vec<(String, usize)> = order
            .iter()
            .enumerate()
            .map(|(k, i)| (label(k), *i))
            .collect();
        let blind: Vec<Shown> = shown
            .iter()
            .filter_map(|(l, i)| {
                let w = ctx.work.iter().find(|w| w.index == *i)?;
                Some(Shown {
                    label: l.clone(),
                    // Already cut to `review::MAX_DIFF_BYTES` when read.
                    diff: stripper.strip(&w.diff).0,
                    stat: w.stat.clone(),
                    whitespace: w.whitespace,
                })
            })
            .collect();
        let prompt = review::prompt(ctx.task, ctx.test_cmd, &blind);
        call(
            ctx,
            (format!("j{}", j + 1), agent, model.as_deref()),
            shown,
            &prompt,
            &schema_path,
            ints,
        )
    })?;
    Ok(out
        .into_iter()
        .enumerate()
        .map(|(j, r)| {
            r.unwrap_or_else(|e| {
                let (agent, model, _) = &who[j];
                JudgeCall {
                    who: format!("j{}", j + 1),
                    agent: agent.clone(),
                    model: model.clone(),
                    vendor: vendor(agent, model.as_deref()),
                    shown: Vec::new(),
                    outcome: "error".into(),
                    reason: Some(format!("{}: {e}", e.kind())),
                    review: None,
                    usage: Usage::default(),
                    duration_ms: 0,
                    log_path: None,
                }
            })
        })
        .collect())
}

fn vendor(agent: &str, model: Option<&str>) -> String {
    Agent::parse(agent).map_or_else(
        |_| crate::agent::vendor::UNKNOWN.to_string(),
        |a| a.vendor(None, model),
    )
}

/// One judge's read-only call with the review schema and one repair round.
fn call(
    ctx: &JudgeCtx,
    (who, agent, model): (String, &str, Option<&str>),
    shown: Vec<(String, usize)>,
    prompt: &str,
    schema_path: &Path,
    ints: &mut Interrupts,
) -> Result<JudgeCall> {
    let a = Agent::parse(agent)?;
    let s = ctx.settings;
    let req = AskRequest {
        effort: s.effort.clone(),
        timeout: format!("{}ms", s.timeout_ms),
        idle_timeout: format!("{}ms", s.idle_timeout_ms.max(1)),
        ..AskRequest::default()
    };
    let spec = AdviserSpec {
        agent: a,
        model: model.map(str::to_string),
        model_from: model.map(|_| {
            crate::agent::argv::Origin::Flag(match &s.judge {
                Judge::Agent { .. } => "--judge",
                _ => "--agents",
            })
        }),
    };
    let labels: Vec<String> = shown.iter().map(|s| s.0.clone()).collect();
    let extract = |t: &str| review::extract(t, &labels);
    let mut done = group::call::call(
        &Structured {
            spec,
            req,
            scope: Scope::Packet,
            cwd: ctx.cwd,
            root: ctx.root,
            prompt,
            schema: group::call::Schema {
                id: review::ID,
                text: review::SCHEMA,
                path: schema_path,
            },
            extract: &extract,
            record: group::call::Record {
                dir: ctx.dir,
                stage: "judging",
                who: &who,
                peer: Who { agent, model },
            },
        },
        ints,
    )?;
    let r = &done.run;
    let mut c = JudgeCall {
        who,
        agent: agent.to_string(),
        model: model.map(str::to_string).or_else(|| r.model.clone()),
        vendor: a.vendor(None, model),
        shown,
        outcome: "ok".into(),
        reason: None,
        review: None,
        usage: r.usage.clone(),
        duration_ms: r.duration_ms,
        log_path: r.log_path.clone(),
    };
    match &done.verdict {
        Verdict::Valid(review) => c.review = Some(review.clone()),
        Verdict::Invalid(errs) => {
            c.outcome = "abstained".into();
            c.reason = Some(format!(
                "its answer did not follow {}, even after one repair round: {}",
                review::ID,
                errs.join("; ")
            ));
        }
        Verdict::RunFailed => {
            let (outcome, reason) = group::call::failed(r);
            c.outcome = outcome.into();
            c.reason = Some(reason);
        }
    }
    done.end(&c.outcome, &c.usage, c.model.as_deref(), ints);
    if let Some(sig) = ints.fired() {
        return Err(Error::Interrupted {
            signal: crate::process::signal_name(sig),
        });
    }
    Ok(c)
}
