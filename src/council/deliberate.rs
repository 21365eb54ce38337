//! Stages 2–4 in order: proposing (byte-identical prompts), critiquing
//! (blind, a seeded order per critic), synthesizing (labels only), stored.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::blind::{self, Rng, Stripper};
use super::budget::over_budget;
use super::call::{Call, ask, parallel};
use super::chair;
use super::critique::{self, CriticCall, Critique};
use super::machine::{Event, Stage};
use super::proposal::{self, Proposal};
use super::revise;
use super::schema::Plan;
use super::store::{Member, Record, sha256_hex};
use crate::error::Result;
use crate::process::Interrupts;

/// The synthesis: the plan, who made it, and the chair's labels.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Synthesis {
    pub plan: Option<Plan>,
    /// `chair`, `fallback_chair` or `mechanical`.
    pub by: String,
    pub chair: Option<Member>,
    pub calls: Vec<Call>,
    /// Chair label → member index (revealed only in the result).
    pub label_map: Vec<(String, usize)>,
    pub ranks: Vec<(String, Option<f64>)>,
    /// Names, self-references, session ids and config paths removed from
    /// what critics and the chair were shown.
    pub strips: usize,
}

pub struct Deliberation {
    pub proposals: Vec<Option<Call>>,
    pub critiques: Vec<CriticCall>,
    pub synthesis: Synthesis,
}

/// Walk stages 2–4 (from stored calls where they exist). `None`: the
/// council stopped on the way (needs_human, cancelled).
pub fn deliberate(
    rec: &mut Record,
    packet: &str,
    ints: &Interrupts,
    started: Instant,
) -> Result<Option<Deliberation>> {
    let n = rec.members.len() as u64;
    // Stage 2: one prompt, the same bytes for every member.
    if rec.stage == Stage::Proposing && over_budget(rec, &[], n, started)? {
        return Ok(None);
    }
    let prompt = proposal::prompt(&rec.kind, packet);
    let snapshot = rec.clone();
    let proposals = parallel(rec.members.len(), ints, |i, ints| {
        let m = &snapshot.members[i];
        let mut c = ask(
            &snapshot,
            m,
            ("proposing", format!("m{i}")),
            prompt.clone(),
            ("council-proposal", proposal::ID, proposal::SCHEMA),
            &proposal::extract,
            ints,
        )?;
        if let Some(why) = c
            .parsed::<Proposal>()
            .as_ref()
            .and_then(proposal::degenerate)
        {
            c.abstain(why);
        }
        Ok(Some(c))
    })?;
    let valid: Vec<(usize, Proposal)> = proposals
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            c.as_ref()
                .filter(|c| c.ok())
                .and_then(|c| c.parsed().map(|p| (i, p)))
        })
        .collect();
    if valid.len() < rec.members.len() && valid.len() >= rec.settings.quorum {
        rec.warn(format!(
            "degraded_quorum: {} of {} members gave a valid proposal",
            valid.len(),
            rec.members.len()
        ));
    }
    rec.put_artifact("proposals.json", &proposals)?;
    let critique_round = rec.settings.depth != "quick";
    if rec.stage == Stage::Proposing {
        let to = rec.advance(Event::Proposed {
            valid: valid.len(),
            quorum: rec.settings.quorum,
            critique: critique_round,
        })?;
        if to == Stage::NeedsHuman {
            rec.warn("degraded_quorum: fewer valid proposals than the quorum");
            rec.reason = Some(format!(
                "only {} valid proposal(s), fewer than the quorum of {}: read them and decide",
                valid.len(),
                rec.settings.quorum
            ));
            rec.save()?;
        }
    }
    if rec.stage.is_terminal() {
        return Ok(None);
    }
    let spent: Vec<Call> = proposals.iter().flatten().cloned().collect();

    // Stage 3: each critic sees the others' proposals, blind, in its own order.
    let names: Vec<String> = rec.members.iter().filter_map(|m| m.model.clone()).collect();
    let stripper = Stripper::new(&names);
    let mut strips = 0;
    let mut critiques = Vec::new();
    if critique_round {
        if rec.stage == Stage::Critiquing && over_budget(rec, &spent, n + 1, started)? {
            return Ok(None);
        }
        let mut shown_all = Vec::new();
        let mut prompts = Vec::new();
        for c in 0..rec.members.len() {
            let mut others: Vec<&(usize, Proposal)> =
                valid.iter().filter(|(i, _)| *i != c).collect();
            Rng::new(rec.seed, 1 + c as u64).shuffle(&mut others);
            let mut shown = Vec::new();
            let mut rendered = Vec::new();
            for (k, (i, p)) in others.iter().enumerate() {
                let l = blind::label(k);
                let (text, s) = stripper.strip(&blind::render(&l, p));
                strips += s;
                rendered.push(text);
                shown.push((l, *i));
            }
            prompts.push(
                (!shown.is_empty()).then(|| critique::prompt(packet, &blind::wrap(&rendered))),
            );
            shown_all.push(shown);
        }
        let snapshot = rec.clone();
        let calls = parallel(rec.members.len(), ints, |c, ints| {
            let Some(prompt) = prompts[c].clone() else {
                return Ok(None);
            };
            let labels: Vec<String> = shown_all[c].iter().map(|s| s.0.clone()).collect();
            let ex = move |s: &str| critique::extract(s, &labels);
            ask(
                &snapshot,
                &snapshot.members[c],
                ("critiquing", format!("m{c}")),
                prompt,
                ("council-critique", critique::ID, critique::SCHEMA),
                &ex,
                ints,
            )
            .map(Some)
        })?;
        for (c, call) in calls.into_iter().enumerate() {
            if let Some(call) = call {
                critiques.push(CriticCall {
                    critic: c,
                    shown: shown_all[c].clone(),
                    call,
                });
            }
        }
        rec.put_artifact("critiques.json", &critiques)?;
        if rec.stage == Stage::Critiquing {
            rec.advance(Event::Critiqued {
                revise: rec.settings.depth == "deep",
            })?;
        }
    }

    // `--depth deep`: each author revises against the critiques of its own
    // proposal; the chair then sees the revised proposals.
    let mut valid = valid;
    if critique_round && rec.settings.depth == "deep" {
        let more = valid.len() as u64;
        if rec.stage == Stage::Revising && over_budget(rec, &spent, more + 1, started)? {
            return Ok(None);
        }
        let round = revise::revise(rec, packet, &valid, &critiques, &stripper, ints)?;
        strips += round.strips;
        valid = round.shown;
        rec.put_artifact("revisions.json", &round.revisions)?;
        if rec.stage == Stage::Revising {
            rec.advance(Event::Revised)?;
        }
    }

    // Stage 4: the chair sees labels only.
    let mut order: Vec<usize> = valid.iter().map(|(i, _)| *i).collect();
    Rng::new(rec.seed, 0).shuffle(&mut order);
    let label_map: Vec<(String, usize)> = order
        .iter()
        .enumerate()
        .map(|(k, i)| (blind::label(k), *i))
        .collect();
    let chair_label = |i: usize| {
        label_map
            .iter()
            .find(|(_, j)| *j == i)
            .map(|(l, _)| l.clone())
    };
    let labelled: Vec<(String, Proposal)> = label_map
        .iter()
        .filter_map(|(l, i)| {
            valid
                .iter()
                .find(|(j, _)| j == i)
                .map(|(_, p)| (l.clone(), p.clone()))
        })
        .collect();
    let mut rendered = Vec::new();
    for (l, p) in &labelled {
        let (t, s) = stripper.strip(&blind::render(l, p));
        strips += s;
        rendered.push(t);
    }
    let mut rankings = Vec::new();
    let mut crit_text = String::new();
    let mut parsed_crits = Vec::new();
    for (k, cc) in critiques.iter().enumerate() {
        let Some(mut c) = cc.call.parsed::<Critique>().filter(|_| cc.call.ok()) else {
            continue;
        };
        let tr = |l: &str| {
            cc.shown
                .iter()
                .find(|s| s.0 == l)
                .and_then(|s| chair_label(s.1))
                .unwrap_or_default()
        };
        c.ranking = c.ranking.iter().map(|l| tr(l)).collect();
        // Its prose names proposals by the critic's own labels: only the
        // structured findings and ranking, relabelled, reach the chair.
        c.summary = String::new();
        for f in &mut c.findings {
            f.proposal = tr(&f.proposal);
        }
        let body = serde_json::to_string_pretty(&c).unwrap_or_default();
        let (t, s) = stripper.strip(&format!("### Critique {}\n{body}\n", k + 1));
        strips += s;
        crit_text.push_str(&t);
        rankings.push(c.ranking.clone());
        parsed_crits.push(c);
    }
    let labels: Vec<String> = label_map.iter().map(|(l, _)| l.clone()).collect();
    let ranks = chair::mean_ranks(&labels, &rankings);
    if rec.stage == Stage::Synthesizing && over_budget(rec, &spent, 1, started)? {
        return Ok(None);
    }
    let prompt = chair::prompt(&rec.kind, packet, &blind::wrap(&rendered), &crit_text);
    let mut synthesis = Synthesis {
        plan: None,
        by: "mechanical".into(),
        chair: None,
        calls: Vec::new(),
        label_map: label_map.clone(),
        ranks: ranks.clone(),
        strips: 0,
    };
    let kind = rec.kind.clone();
    let ex = |s: &str| chair::extract(s, &labels, &kind);
    let mut chairs: Vec<(Member, &str)> = rec.chair.iter().map(|c| (c.clone(), "chair")).collect();
    if let Some(c) = &rec.chair
        && let Some(f) = rec.members.iter().find(|m| m.vendor != c.vendor)
    {
        chairs.push((f.clone(), "fallback_chair"));
    }
    for (m, by) in chairs {
        let mut one = ints.clone();
        let call = ask(
            rec,
            &m,
            ("synthesizing", by.to_string()),
            prompt.clone(),
            ("council-plan", chair::ID, chair::SCHEMA),
            &ex,
            &mut one,
        )?;
        let ok = call.ok();
        let plan = call.parsed::<Plan>();
        synthesis.calls.push(call);
        if ok && plan.is_some() {
            synthesis.plan = plan;
            synthesis.by = by.into();
            synthesis.chair = Some(m);
            break;
        }
    }
    let chair_failed = rec.chair.is_some() && synthesis.plan.is_none();
    if synthesis.by == "fallback_chair" {
        rec.warn(
            "fallback_chair: the chair gave no valid plan; a chair of another vendor stood in",
        );
    }
    if synthesis.plan.is_none() {
        synthesis.plan = chair::mechanical(
            &labelled,
            &ranks,
            &parsed_crits,
            rec.settings.test_cmd.as_deref(),
        );
    }
    if let Some(plan) = &mut synthesis.plan {
        if let Some(t) = &rec.settings.test_cmd {
            plan.test_cmd = Some(t.clone());
        }
        if !rec.settings.allow.is_empty() {
            plan.authorized_files = rec.settings.allow.clone();
        }
        chair::check_evidence(plan, &rec.cwd, rec.base_commit.as_deref());
        let own = synthesis
            .chair
            .as_ref()
            .and_then(|c| rec.members.iter().position(|m| m == c))
            .and_then(chair_label);
        if chair::self_preference(plan, own.as_deref(), &ranks) {
            rec.warn("chair_self_preference_suspected: the chair's own proposal is the plan's main source, though the critics ranked it below the median");
        }
    }
    synthesis.strips = strips;
    rec.put_artifact("synthesis.json", &synthesis)?;
    if rec.stage == Stage::Synthesizing {
        match synthesis.plan.as_ref().filter(|_| !chair_failed) {
            None => {
                rec.stop(Event::ChairFailed, "no chair gave a valid plan: baton's mechanical merge (the top-ranked proposal and its open blocking findings) is in `plan` for a person to judge")?;
            }
            Some(plan) => {
                if kind == "plan" {
                    let bytes = serde_json::to_vec_pretty(plan)
                        .map_err(|e| crate::error::Error::Internal(e.to_string()))?;
                    crate::fsutil::write_atomic(&rec.dir()?.join("plan.json"), &bytes)?;
                    rec.plan_sha256 = Some(sha256_hex(&bytes));
                }
                rec.advance(Event::Synthesized {
                    plan: kind == "plan",
                })?;
            }
        }
    }
    Ok(Some(Deliberation {
        proposals,
        critiques,
        synthesis,
    }))
}
