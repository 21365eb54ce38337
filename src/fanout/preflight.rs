//! Everything a fan-out can refuse before anything exists: the candidates
//! (each an ordinary `run::plan`, so the same argv, access and limits as
//! `baton run`), the worktree flags (`worktree::check`, once for all), who
//! judges, the seed; and what `--dry-run` prints.

use serde_json::{Value, json};

use crate::agent::{Access, Agent};
use crate::error::{Error, Result};
use crate::group::now_ms;
use crate::run::{self, Plan};
use crate::worktree::{self, Checked, WorktreeOptions};

use super::request::{FanoutRequest, Judge, Pick, Settings, split_spec};

/// The most candidates one fan-out runs (each is a peer at work at once).
pub const MAX_CANDIDATES: usize = 16;
/// The most repair rounds `--until-green` allows each candidate (each one
/// a full peer call and a test run; as `--retry` is capped by
/// `run::MAX_RETRY`).
pub const MAX_UNTIL_GREEN: u32 = 10;

/// One candidate: an agent (and model) with its run's plan.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// `c1`, `c2`, … (its worktree is `<fan-out id>-<n>`).
    pub id: String,
    pub n: usize,
    pub plan: Plan,
    pub vendor: String,
}

impl Candidate {
    /// The worktree id (and branch `baton/<it>`) of this candidate.
    pub fn worktree_id(&self, fanout_id: &str) -> String {
        format!("{fanout_id}-{}", self.n)
    }

    /// What a candidate was asked for, for people: `codex` or `claude:opus`.
    pub fn who(&self) -> String {
        match &self.plan.model {
            Some(m) => format!("{}:{m}", self.plan.agent.name()),
            None => self.plan.agent.name().to_string(),
        }
    }
}

/// A fan-out ready to start.
pub struct Preflight {
    pub fanout_id: String,
    pub task: String,
    pub candidates: Vec<Candidate>,
    /// `None`: a read-only fan-out (in place, no selection).
    pub checked: Option<Checked>,
    pub settings: Settings,
    pub warnings: Vec<String>,
}

fn writes_only(flag: &str) -> Error {
    Error::usage_hint(
        format!("{flag} is for a fan-out that writes; a read-only fan-out only compares answers"),
        format!("drop {flag}, or drop --read-only"),
    )
}

/// Check the request and resolve every candidate; creates nothing.
pub fn preflight(req: &FanoutRequest, task: String) -> Result<Preflight> {
    let specs: Vec<String> = if req.agents.is_empty() {
        vec![
            req.run
                .agent
                .clone()
                .unwrap_or_else(|| crate::config::active().default_agent().name().to_string()),
        ]
    } else {
        req.agents.clone()
    };
    if specs.iter().any(|s| split_spec(s).0.is_empty()) {
        return Err(Error::usage_hint(
            "--agents has an empty name",
            "give agents as `codex,claude,pi` (`NAME:MODEL` picks a model)",
        ));
    }
    let attempts = req.attempts.max(1) as usize;
    let n = specs.len() * attempts;
    if n > MAX_CANDIDATES {
        return Err(Error::usage_hint(
            format!("{n} candidates: a fan-out runs at most {MAX_CANDIDATES} at once"),
            "name fewer agents or lower --attempts",
        ));
    }
    if req.until_green > MAX_UNTIL_GREEN {
        return Err(Error::usage_hint(
            format!(
                "--until-green {} is more than {MAX_UNTIL_GREEN}",
                req.until_green
            ),
            "a candidate still failing after a few repair rounds will not turn green soon: \
             give the task more detail, or try other agents",
        ));
    }
    let mut candidates = Vec::with_capacity(n);
    for spec in &specs {
        let (name, model) = split_spec(spec);
        let mut rr = run::RunRequest {
            agent: Some(name.to_string()),
            model: model.map(str::to_string).or_else(|| req.run.model.clone()),
            ..req.run.clone()
        };
        if model.is_some() {
            rr.origins.model = Some(crate::agent::argv::Origin::Flag("--agents"));
        }
        let plan = run::plan(&rr, task.clone())?;
        // A CLI that is missing is exit 127 now, not one failed candidate later.
        plan.program(&plan.command()?)?;
        // So is a fallback agent's (`--fallback`, `run.fallback`), or one
        // that cannot enforce the access asked for.
        plan.check_chain_installed()?;
        for _ in 0..attempts {
            let k = candidates.len() + 1;
            candidates.push(Candidate {
                id: format!("c{k}"),
                n: k,
                vendor: plan
                    .agent
                    .vendor(plan.provider.as_deref(), plan.model.as_deref()),
                plan: plan.clone(),
            });
        }
    }
    let first = &candidates[0].plan;
    let read_only = first.access == Access::ReadOnly;
    let w = &req.worktree;
    let pick = Pick::parse(req.pick.as_deref())?;
    let mut warnings = Vec::new();
    let checked = if read_only {
        for (given, flag) in [
            (w.enabled, "--worktree"),
            (w.base.is_some(), "--base"),
            (w.include_dirty, "--include-dirty"),
            (!w.allow.is_empty(), "--allow"),
            (w.test_cmd.is_some(), "--test-cmd"),
            (req.until_green > 0, "--until-green"),
            (req.pick.is_some(), "--pick"),
            (req.judge.is_some(), "--judge"),
            (req.keep_all, "--keep-all"),
        ] {
            if given {
                return Err(writes_only(flag));
            }
        }
        None
    } else {
        if w.test_cmd.is_none() {
            return Err(Error::usage_hint(
                "a fan-out that writes needs --test-cmd: baton's own run of it decides which \
                 candidates are eligible",
                "add --test-cmd 'make test' (run with `sh -c` in each candidate's worktree), or \
                 --read-only to compare answers",
            ));
        }
        let opts = WorktreeOptions {
            enabled: true,
            // `finish` must not run the tests: baton's oracle does, per round.
            test_cmd: None,
            ..w.clone()
        };
        if opts.base.as_deref().is_some_and(|b| b.trim().is_empty()) {
            return Err(Error::usage("--base is empty"));
        }
        if w.test_cmd.as_deref().is_some_and(|t| t.trim().is_empty()) {
            return Err(Error::usage("--test-cmd is empty"));
        }
        Some(
            worktree::check(&opts, first)?
                .ok_or_else(|| Error::Internal("worktree check returned nothing".into()))?,
        )
    };
    let judge = judge(req, &candidates, pick)?;
    if let Judge::Peers = judge {
        let vendors: std::collections::BTreeSet<&str> =
            candidates.iter().map(|c| c.vendor.as_str()).collect();
        if vendors.len() < 2 {
            warnings.push(format!(
                "single_vendor: every candidate's models come from {}; the peers who judge \
                 share their authors' blind spots",
                vendors.iter().next().unwrap_or(&"")
            ));
        }
    }
    let max_wall_ms = req
        .max_wall
        .as_deref()
        .map(crate::duration::parse)
        .transpose()?
        .map(crate::duration::millis);
    let seed = req.seed.unwrap_or_else(|| {
        crate::ids::random_suffix(12)
            .bytes()
            .fold(now_ms(), |h, b| h.rotate_left(5) ^ u64::from(b))
    });
    let settings = Settings {
        pick,
        judge,
        seed,
        until_green: req.until_green,
        keep_all: req.keep_all,
        budget_tokens: req.budget_tokens,
        max_usd: req.run.max_usd,
        max_wall_ms,
        worktree: checked.as_ref().map(|c| WorktreeOptions {
            enabled: true,
            // The commit `check` resolved, so a background runner starts
            // every candidate from the same one.
            base: Some(c.base.clone()),
            include_dirty: w.include_dirty,
            allow: w.allow.clone(),
            test_cmd: w.test_cmd.clone(),
        }),
        timeout_ms: first.timeout_ms,
        idle_timeout_ms: first.idle_timeout_ms,
        effort: req.run.effort.clone(),
    };
    Ok(Preflight {
        fanout_id: crate::ids::new_id(),
        task,
        candidates,
        checked,
        settings,
        warnings,
    })
}

/// `--judge` resolved: `peers` by default when the candidates come from two
/// vendors or more (each then has a judge of another vendor), else `none`.
fn judge(req: &FanoutRequest, candidates: &[Candidate], pick: Pick) -> Result<Judge> {
    if pick == Pick::FirstGreen {
        if req.judge.is_some() {
            return Err(Error::usage_hint(
                "--judge has no say with --pick first-green: the first eligible candidate wins",
                "drop --judge, or use --pick best",
            ));
        }
        return Ok(Judge::None);
    }
    Ok(match req.judge.as_deref().map(str::trim) {
        Some("peers") => Judge::Peers,
        Some("none") => Judge::None,
        Some(spec) => {
            let (name, model) = split_spec(spec);
            let agent = Agent::parse(name).map_err(|_| {
                Error::usage_hint(
                    format!("--judge `{spec}` is not peers, none or an agent"),
                    "use --judge peers, --judge none, or an agent such as --judge claude",
                )
            })?;
            if !agent.supported_access().contains(&Access::ReadOnly) {
                return Err(Error::usage_hint(
                    format!(
                        "--judge {}: it has no enforceable read-only mode",
                        agent.name()
                    ),
                    "a judge only reads; pick codex, claude, zai, pi, gemini-cli, opencode, qwen, copilot, kilo, cline or nanocoder",
                ));
            }
            // Its calls count into `--max-usd` like the candidates'.
            crate::run::check_agent_priced(agent, model, req.run.max_usd)?;
            Judge::Agent {
                agent: agent.name().to_string(),
                model: model.map(str::to_string),
            }
        }
        None => {
            let vendors: std::collections::BTreeSet<&str> =
                candidates.iter().map(|c| c.vendor.as_str()).collect();
            if vendors.len() >= 2 {
                Judge::Peers
            } else {
                Judge::None
            }
        }
    })
}

/// The judges `--judge peers` asks: each distinct agent and model among
/// the candidates, with the candidates it wrote (which it never ranks).
pub fn peer_judges(candidates: &[Candidate]) -> Vec<(String, Option<String>, Vec<usize>)> {
    let mut out: Vec<(String, Option<String>, Vec<usize>)> = Vec::new();
    for (i, c) in candidates.iter().enumerate() {
        let (a, m) = (c.plan.agent.name().to_string(), c.plan.model.clone());
        match out.iter_mut().find(|(x, y, _)| *x == a && *y == m) {
            Some(j) => j.2.push(i),
            None => out.push((a, m, vec![i])),
        }
    }
    out
}

/// What `--dry-run` prints: each candidate's argv in the worktree it would
/// get, and the judge's plan of calls. Nothing is created.
pub fn dry_run(p: &Preflight) -> Result<Value> {
    let mut cands = Vec::new();
    for c in &p.candidates {
        let wid = c.worktree_id(&p.fanout_id);
        let mut j = match &p.checked {
            Some(ch) => worktree::dry_run_json_as(ch, &c.plan, &wid)?,
            None => run::dry_run_json(&c.plan, &c.plan.command()?),
        };
        if let Some(o) = j.as_object_mut() {
            o.remove("schema_version");
            o.remove("dry_run");
            o.insert("id".into(), json!(c.id));
        }
        cands.push(j);
    }
    let s = &p.settings;
    let calls: Vec<Value> = match &s.judge {
        Judge::Peers => peer_judges(&p.candidates)
            .into_iter()
            .map(|(a, m, own)| {
                let ranks: Vec<&str> = p
                    .candidates
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !own.contains(i))
                    .map(|(_, c)| c.id.as_str())
                    .collect();
                json!({"agent": a, "model": m, "ranks": ranks})
            })
            .collect(),
        Judge::Agent { agent, model } => {
            let all: Vec<&str> = p.candidates.iter().map(|c| c.id.as_str()).collect();
            vec![json!({"agent": agent, "model": model, "ranks": all})]
        }
        Judge::None => Vec::new(),
    };
    Ok(json!({
        "schema_version": crate::result::SCHEMA_VERSION,
        "dry_run": true,
        "kind": "fanout",
        "fanout_id": p.fanout_id,
        "mode": if p.checked.is_some() { "worktree" } else { "read-only" },
        "candidates": cands,
        "test_cmd": s.worktree.as_ref().and_then(|w| w.test_cmd.clone()),
        "until_green": s.until_green,
        "pick": p.checked.as_ref().map(|_| s.pick.as_str()),
        "judge": {
            "mode": s.judge.as_str(),
            "calls": calls,
            "note": "each judge ranks only the eligible candidates among those listed (the ones \
                     that passed the tests), blind: labelled by a seeded shuffle, names stripped; \
                     at most one repair round per call; with fewer than two eligible candidates \
                     nobody is asked",
        },
        "seed": s.seed,
        "budget_tokens": s.budget_tokens,
        "max_usd": s.max_usd,
        "max_wall_ms": s.max_wall_ms,
        "warnings": p.warnings,
        "note": "--dry-run creates nothing; the fan-out id is a placeholder",
    }))
}
