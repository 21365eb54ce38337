//! `baton usage`: what peers spent, summed from the usage ledgers
//! (`spend::ledger`) of every project on the machine, or of one.
//!
//! Calls and runs are counted apart: every call's tokens and cost count
//! where the call was made (its agent, model, day); a run (a call with its
//! retries, fallbacks and repair rounds, which share a run id) counts once,
//! where its last call was made, as ok, failed by its `error.kind`, and
//! whether it fell back to another agent.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::output::render::Render;
use crate::output::{self, Mode};
use crate::result::SCHEMA_VERSION;
use crate::spend::ledger::{self, Entry};
use crate::{duration, fsutil, ids, state_dir};

/// What the caller asks (plain values; the command line is in `cli`).
#[derive(Debug, Clone, Default)]
pub struct UsageRequest {
    /// Only calls that ended within this long (`7d`, `24h`); `None`: all.
    pub since: Option<String>,
    /// `agent`, `model`, `day` or `repo`; `None`: totals only.
    pub by: Option<String>,
    /// Only this project (a directory in it).
    pub repo: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    Agent,
    Model,
    Day,
    Repo,
}

impl By {
    pub fn parse(s: &str) -> Result<By> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "agent" => By::Agent,
            "model" => By::Model,
            "day" => By::Day,
            "repo" => By::Repo,
            _ => {
                return Err(Error::usage_hint(
                    format!("cannot group usage by `{s}`"),
                    "use --by agent, model, day or repo",
                ));
            }
        })
    }

    fn as_str(self) -> &'static str {
        match self {
            By::Agent => "agent",
            By::Model => "model",
            By::Day => "day",
            By::Repo => "repo",
        }
    }
}

/// Sums over calls and runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Totals {
    /// Runs that ended (counted where their last call was made).
    pub runs: u64,
    pub ok: u64,
    /// Runs that did not succeed, by their `error.kind`.
    pub failed: BTreeMap<String, u64>,
    /// Runs served by a `--fallback` agent after another failed.
    pub fell_back: u64,
    /// Peer calls (attempts, retries, repair rounds, council members).
    pub calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_input_tokens: u64,
    /// Dollars of the calls with a known cost.
    pub cost_usd: f64,
    /// Some of `cost_usd` was estimated from the price table.
    pub cost_estimated: bool,
    /// Calls that used tokens but have no known cost.
    pub unpriced_calls: u64,
    /// Calls with a known cost: with none, `--text` shows `-`, not `$0`.
    #[serde(skip)]
    pub priced_calls: u64,
}

impl Totals {
    /// Saturating, and dollars kept finite (`add_usd`): ledger lines are
    /// what peers reported, and a total must not wrap or print `null`.
    fn call(&mut self, e: &Entry) {
        self.calls += 1;
        self.input_tokens = self.input_tokens.saturating_add(e.input);
        self.output_tokens = self.output_tokens.saturating_add(e.output);
        self.cached_input_tokens = self.cached_input_tokens.saturating_add(e.cached);
        match e.cost {
            Some(c) => {
                self.cost_usd = crate::result::add_usd(self.cost_usd, c);
                self.cost_estimated |= e.est;
                self.priced_calls += 1;
            }
            None if e.input > 0 || e.output > 0 => self.unpriced_calls += 1,
            None => {}
        }
    }

    fn run(&mut self, last: &Entry, fell_back: bool) {
        self.runs += 1;
        if last.status == "success" {
            self.ok += 1;
        } else {
            let kind = last.kind.clone().unwrap_or_else(|| last.status.clone());
            *self.failed.entry(kind).or_default() += 1;
        }
        self.fell_back += u64::from(fell_back);
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    pub key: String,
    #[serde(flatten)]
    pub totals: Totals,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub schema_version: u32,
    /// Calls that ended at or after this time (ms since the epoch); null: all.
    pub since_ms: Option<u64>,
    /// The projects read (their directories).
    pub repos: Vec<String>,
    pub total: Totals,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<Group>>,
}

/// One project's ledger and the directory it is for.
struct Ledger {
    root: String,
    path: PathBuf,
}

/// Every project's ledger under the state directory, or the one of `repo`.
fn ledgers(repo: Option<&Path>) -> Result<Vec<Ledger>> {
    if let Some(r) = repo {
        let dir = r
            .canonicalize()
            .map_err(|e| Error::usage(format!("--repo {}: {e}", r.display())))?;
        let root = fsutil::project_root(&dir);
        return Ok(vec![Ledger {
            path: state_dir::project(&root)?.join(ledger::FILE),
            root: root.display().to_string(),
        }]);
    }
    let mut out: Vec<Ledger> = state_dir::repos()?
        .into_iter()
        .filter(|r| r.dir.join(ledger::FILE).is_file())
        .map(|r| Ledger {
            root: r
                .root
                .as_ref()
                .map_or_else(|| r.dir.display().to_string(), |p| p.display().to_string()),
            path: r.dir.join(ledger::FILE),
        })
        .collect();
    out.sort_by(|a, b| a.root.cmp(&b.root));
    Ok(out)
}

/// The report for `req`, read from the ledgers as they are now.
pub fn report(req: &UsageRequest) -> Result<Report> {
    let ledgers = ledgers(req.repo.as_deref())?;
    report_from(req, ledgers)
}

/// The report for `req` from one project's ledger: its record folder `dir`
/// in the state directory, named `root` (`serve`'s panel, filtered by
/// repository: a ledger outlives its project's root, which `--repo` needs).
pub fn report_of(req: &UsageRequest, dir: &Path, root: String) -> Result<Report> {
    report_from(
        req,
        vec![Ledger {
            root,
            path: dir.join(ledger::FILE),
        }],
    )
}

fn report_from(req: &UsageRequest, ledgers: Vec<Ledger>) -> Result<Report> {
    let by = req.by.as_deref().map(By::parse).transpose()?;
    let since_ms = match &req.since {
        Some(s) => {
            let d = duration::parse(s)?;
            Some(ids::now_ms().saturating_sub(duration::millis(d)))
        }
        None => None,
    };
    let mut total = Totals::default();
    let mut groups: BTreeMap<String, Totals> = BTreeMap::new();
    for l in &ledgers {
        let entries = ledger::read(&l.path);
        // Per run: its last call (in ledger order) and whether it fell back.
        let mut runs: HashMap<&str, (usize, bool)> = HashMap::new();
        for (i, e) in entries.iter().enumerate() {
            if since_ms.is_some_and(|s| e.at < s) {
                continue;
            }
            total.call(e);
            if let Some(b) = by {
                groups.entry(key(b, e, &l.root)).or_default().call(e);
            }
            let r = runs.entry(e.run.as_str()).or_insert((i, false));
            r.0 = i;
            r.1 |= e.fb;
        }
        for (last, fell_back) in runs.into_values() {
            let e = &entries[last];
            total.run(e, fell_back);
            if let Some(b) = by {
                groups
                    .entry(key(b, e, &l.root))
                    .or_default()
                    .run(e, fell_back);
            }
        }
    }
    Ok(Report {
        schema_version: SCHEMA_VERSION,
        since_ms,
        repos: ledgers.into_iter().map(|l| l.root).collect(),
        total,
        by: by.map(By::as_str),
        groups: by.map(|_| {
            groups
                .into_iter()
                .map(|(key, totals)| Group { key, totals })
                .collect()
        }),
    })
}

fn key(by: By, e: &Entry, root: &str) -> String {
    match by {
        By::Agent => e.agent.clone(),
        By::Model => e
            .model
            .clone()
            .unwrap_or_else(|| format!("{} (default)", e.agent)),
        By::Day => day(e.at),
        By::Repo => root.to_string(),
    }
}

/// `YYYY-MM-DD` (UTC) of a time in ms since the epoch.
pub fn day(ms: u64) -> String {
    // Howard Hinnant's civil_from_days.
    let z = (ms / 86_400_000) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

pub fn command(req: UsageRequest, mode: Mode) -> Result<i32> {
    output::emit(&report(&req)?, mode)
}

impl Render for Report {
    /// A summary is never a failure: an empty ledger is zero calls.
    fn exit_code(&self) -> i32 {
        0
    }

    fn text(&self) -> String {
        let mut s = format!(
            "{} run(s), {} call(s) in {} project(s){}\n",
            self.total.runs,
            self.total.calls,
            self.repos.len(),
            match self.since_ms {
                Some(ms) => format!(" since {}", day(ms)),
                None => String::new(),
            }
        );
        let mut rows = vec![
            [
                self.by.unwrap_or(""),
                "RUNS",
                "OK",
                "FAILED",
                "FELL BACK",
                "CALLS",
                "IN",
                "OUT",
                "COST",
            ]
            .map(|h| h.to_ascii_uppercase())
            .to_vec(),
        ];
        for g in self.groups.iter().flatten() {
            rows.push(row(&g.key, &g.totals));
        }
        rows.push(row("total", &self.total));
        s.push_str(&crate::output::render::table(&rows));
        let failed: Vec<String> = self
            .total
            .failed
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        if !failed.is_empty() {
            s.push_str(&format!("failed:  {}\n", failed.join(", ")));
        }
        if self.total.cost_estimated {
            s.push_str("cost:    * part estimated from the price table (`baton agents`)\n");
        }
        if self.total.unpriced_calls > 0 {
            s.push_str(&format!(
                "cost:    {} call(s) had no known price and count in tokens only\n",
                self.total.unpriced_calls
            ));
        }
        s
    }
}

fn row(key: &str, t: &Totals) -> Vec<String> {
    vec![
        key.to_string(),
        t.runs.to_string(),
        t.ok.to_string(),
        t.failed.values().sum::<u64>().to_string(),
        t.fell_back.to_string(),
        t.calls.to_string(),
        t.input_tokens.to_string(),
        t.output_tokens.to_string(),
        // No call with a known cost: unknown, not free (as the fan-out's table).
        if t.priced_calls == 0 {
            "-".to_string()
        } else {
            format!(
                "${:.4}{}",
                t.cost_usd,
                if t.cost_estimated { "*" } else { "" }
            )
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_utc_calendar_dates() {
        assert_eq!(day(0), "1970-01-01");
        assert_eq!(day(951_782_400_000), "2000-02-29");
        assert_eq!(day(1_767_225_599_999), "2025-12-31");
        assert_eq!(day(1_767_225_600_000), "2026-01-01");
    }

    fn e(run: &str, agent: &str, status: &str, kind: Option<&str>, fb: bool, input: u64) -> Entry {
        Entry {
            at: 1_767_225_600_000,
            run: run.into(),
            agent: agent.into(),
            model: None,
            status: status.into(),
            kind: kind.map(str::to_string),
            input,
            output: 1,
            cached: 0,
            cost: (agent == "claude").then_some(0.5),
            est: false,
            fb,
            ms: 1,
        }
    }

    #[test]
    fn calls_count_where_made_and_runs_where_they_ended() {
        let mut t = Totals::default();
        let calls = [
            e("r1", "codex", "failed", Some("rate_limited"), false, 10),
            e("r1", "claude", "success", None, true, 20),
            e("r2", "codex", "failed", Some("quota_exhausted"), false, 5),
        ];
        for c in &calls {
            t.call(c);
        }
        t.run(&calls[1], true);
        t.run(&calls[2], false);
        assert_eq!((t.runs, t.ok, t.fell_back, t.calls), (2, 1, 1, 3));
        assert_eq!(t.failed.get("quota_exhausted"), Some(&1));
        assert_eq!(t.failed.get("rate_limited"), None, "r1 was served");
        assert_eq!(t.input_tokens, 35);
        assert_eq!(t.cost_usd, 0.5);
        assert_eq!(t.unpriced_calls, 2);
    }

    #[test]
    fn totals_saturate_and_stay_finite() {
        let mut t = Totals::default();
        let mut huge = e("r1", "claude", "success", None, false, u64::MAX);
        huge.cost = Some(1e308);
        t.call(&huge);
        t.call(&huge);
        // 0.3.2: the tokens wrapped and the dollars printed `null`.
        assert_eq!(t.input_tokens, u64::MAX);
        assert_eq!(t.cost_usd, f64::MAX);
        let json = serde_json::to_value(&t).unwrap();
        assert_eq!(json["cost_usd"].as_f64(), Some(f64::MAX), "{json}");
    }
}
