//! What a bench run starts from: the request as given, the task set it
//! names (a folder, or a set `bench mine` kept), the spec of a new run or
//! the one `--resume` reads back, and each setting's plan, every check done
//! before a trial starts.

use std::path::{Path, PathBuf};

use super::spec::{self, SPEC_FILE, Shard, Spec};
use super::task;
use crate::error::{Error, IdOf, Result};
use crate::run::{self, Plan};
use crate::store::{self, Kind};

/// The most `--repeat` and `--jobs` allow.
pub const MAX_REPEAT: u32 = 100;
pub const MAX_JOBS: u32 = 64;
/// The most `--attempts` and `--until-green` allow (as a fan-out's).
pub const MAX_ATTEMPTS: u32 = 16;
pub const MAX_UNTIL_GREEN: u32 = 10;

/// What `bench run` was asked, as given.
#[derive(Debug, Clone, Default)]
pub struct BenchRequest {
    /// A set's folder, or its name under `bench-sets/`.
    pub set: Option<String>,
    pub agents: Vec<String>,
    pub repeat: u32,
    /// `workspace` (default) or `read-only`.
    pub access: Option<String>,
    pub timeout: Option<String>,
    /// What each trial's peer may spend.
    pub max_usd: Option<f64>,
    pub jobs: u32,
    /// Independent attempts per trial at most (0 or 1: one).
    pub attempts: u32,
    /// Repair turns per attempt from the visible tests.
    pub until_green: u32,
    pub shard: Option<String>,
    pub resume: Option<String>,
    /// `--notify` / `--no-notify`: whether this run announces its end
    /// (its trials never do).
    pub notify: crate::notify::Choice,
}

/// Where the set named `name` lives when `bench mine` kept it in baton's
/// state (`bench-sets/<name>/`).
pub fn named_set(root: &Path, name: &str) -> Option<PathBuf> {
    if !task::valid_id(name) {
        return None;
    }
    let d = crate::state_dir::project(root)
        .ok()?
        .join("bench-sets")
        .join(name);
    d.is_dir().then_some(d)
}

fn resolve_set(root: &Path, given: &str) -> Result<PathBuf> {
    let p = Path::new(given);
    if p.is_dir() {
        return std::fs::canonicalize(p).map_err(|e| Error::io(format!("reading {given}"), e));
    }
    named_set(root, given).ok_or_else(|| {
        Error::usage_hint(
            format!("no task set {given:?}: neither a folder nor a set of this repository"),
            "give the set's folder, or a name `baton bench mine` made",
        )
    })
}

/// The spec of a new run, or the one `--resume` names, and its record.
pub fn spec_and_record(root: &Path, req: &BenchRequest) -> Result<(Spec, PathBuf)> {
    if let Some(id) = &req.resume {
        let dir = store::record_dir(root, Kind::Bench, id)?;
        if !dir.join(SPEC_FILE).is_file() {
            return Err(Error::NotFound {
                what: IdOf::Bench,
                id: id.clone(),
                store: dir.parent().map(Path::to_path_buf).unwrap_or_default(),
            });
        }
        return Ok((spec::read(&dir)?, dir));
    }
    let set = req.set.as_deref().ok_or_else(|| {
        Error::usage_hint(
            "no task set given",
            "baton bench run SET --agents codex,claude",
        )
    })?;
    let set = resolve_set(root, set)?;
    if req.agents.is_empty() {
        return Err(Error::usage_hint(
            "no settings: --agents is empty",
            "name them as --agents codex,claude:opus,pi",
        ));
    }
    if req.repeat == 0 || req.repeat > MAX_REPEAT {
        return Err(Error::usage(format!("--repeat must be 1 to {MAX_REPEAT}")));
    }
    if req.attempts == 0 || req.attempts > MAX_ATTEMPTS {
        return Err(Error::usage_hint(
            format!("--attempts {}", req.attempts),
            format!("a trial has 1 to {MAX_ATTEMPTS} attempts"),
        ));
    }
    if req.until_green > MAX_UNTIL_GREEN {
        return Err(Error::usage_hint(
            format!("--until-green {}", req.until_green),
            format!(
                "at most {MAX_UNTIL_GREEN} repair turns: an attempt still red after a few will \
                 not turn green soon"
            ),
        ));
    }
    let access = req.access.clone().unwrap_or_else(|| "workspace".into());
    if !["workspace", "read-only"].contains(&access.as_str()) {
        return Err(Error::usage_hint(
            format!("--access {access}"),
            "a trial's peer works in workspace (the default) or read-only access",
        ));
    }
    let mut settings: Vec<String> = req.agents.iter().map(|s| s.trim().to_string()).collect();
    settings.sort();
    settings.dedup();
    let mut options = serde_json::Map::new();
    options.insert("access".into(), access.into());
    if let Some(t) = &req.timeout {
        crate::duration::parse(t)?;
        options.insert("timeout".into(), t.clone().into());
    }
    options.insert("attempts".into(), req.attempts.max(1).into());
    options.insert("until_green".into(), req.until_green.into());
    if let Some(m) = req.max_usd {
        options.insert("max_usd".into(), m.into());
    }
    let id = crate::ids::new_id();
    let dir = crate::state_dir::ensure_sub(root, Kind::Bench.folder())?.join(&id);
    let s = Spec {
        format: 1,
        id,
        set,
        settings,
        repeat: req.repeat,
        shard: req.shard.as_deref().map(Shard::parse).transpose()?,
        created_at_ms: store::now_ms(),
        options,
    };
    Ok((s, dir))
}

/// Each setting's plan, checked (installed, its values valid) before
/// anything starts. No fallback: a trial is its setting's alone.
pub fn plans(root: &Path, s: &Spec) -> Result<Vec<Plan>> {
    let opt = |k: &str| {
        s.options
            .get(k)
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    s.settings
        .iter()
        .map(|setting| {
            let (agent, model) = crate::agent::models::parse_item(setting)?;
            let mut rr = run::RunRequest {
                agent: Some(agent.name().to_string()),
                model: model.clone(),
                access: opt("access"),
                timeout: opt("timeout"),
                max_usd: s.options.get("max_usd").and_then(|v| v.as_f64()),
                cwd: Some(root.to_path_buf()),
                fallback: Some(Vec::new()),
                ..Default::default()
            };
            if model.is_some() {
                rr.origins.model = Some(crate::agent::argv::Origin::Flag("--agents"));
            }
            let plan = run::plan(&rr, "bench".into())?;
            plan.program(&plan.command()?)?;
            Ok(plan)
        })
        .collect()
}
