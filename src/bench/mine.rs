//! `baton bench mine`: commits of the first-parent history → tasks.
//!
//! Theory of operation: one `git log` reads the range (`history::scan`);
//! each commit's files are classified (`classify`, and the `#[cfg(test)]`
//! rule for Rust in `history`); a commit that changes code and tests is a
//! candidate. Unless `--no-validate`, `--jobs` threads each take the next
//! candidate, cut its hidden test patch (`git diff --binary --full-index`)
//! and run its tests at the parent and at the commit (`validate`). The
//! tasks that pass are written to the set (`sets`), one file each, with
//! `set.json`; nothing else is written (with `--no-validate`, nothing).

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::output::render::{self, Render};

use super::classify::{Kind, Patterns};
use super::history::{self, Commit, Range};
use super::sets;
use super::task::{self, FORMAT, Runner, SetInfo, Task, TestCmd};
use super::validate::{self, Reason, Setup, Verdict};
use super::{describe, detect};

/// What `bench mine` was asked.
#[derive(Debug, Clone)]
pub struct MineRequest {
    pub cwd: PathBuf,
    pub range: Range,
    pub test_cmd: Option<String>,
    pub runner: Option<Runner>,
    /// `--tests GLOB`…: replace the conventions (and `bench.test_patterns`).
    pub tests: Vec<String>,
    pub jobs: usize,
    pub set: Option<String>,
    pub dir: Option<PathBuf>,
    pub validate: bool,
    pub test_timeout: Duration,
    /// `--describe AGENT`: a peer writes each task's text.
    pub describe: Option<String>,
}

/// What `bench mine` prints.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct MineReport {
    /// The set's name.
    pub set: String,
    /// Its folder (where the task files are, or would be with validation).
    pub dir: String,
    /// Commits looked at.
    pub scanned: usize,
    /// Commits that change both code and tests.
    pub candidates: usize,
    /// The ids of the tasks written (12 hex of their commits), newest first.
    pub tasks: Vec<String>,
    /// Candidates not validated (`--no-validate`): their commits.
    pub unvalidated: Vec<String>,
    /// Every commit looked at that is not a task, and why.
    pub rejected: Vec<Rejected>,
    pub test_cmd: TestCmd,
    /// What people should know: a description refused or not written
    /// (`--describe`), the commit message kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// What `--describe` spent on this mining's tasks (absent without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub describe_usage: Option<super::task::DescribeUsage>,
    /// For `--text`: a line per task.
    #[serde(skip)]
    rows: Vec<Vec<String>>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Rejected {
    /// The commit (40 hex).
    pub commit: String,
    pub reason: Reason,
    /// What validation saw, when it says more than the reason.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// A commit that changes code and tests.
struct Candidate {
    /// Its place in the scan (newest first).
    at: usize,
    commit: Commit,
    parent: String,
    code: Vec<String>,
    tests: Vec<String>,
}

pub fn mine(req: &MineRequest) -> Result<MineReport> {
    let top = toplevel(&req.cwd)?;
    let test_cmd = detect::test_cmd(&top, req.test_cmd.as_deref(), req.runner)?;
    // `--tests`, else the config's `bench.test_patterns`, else conventions.
    let globs = if req.tests.is_empty() {
        crate::config::active()
            .list("bench.test_patterns")
            .unwrap_or_default()
    } else {
        req.tests.clone()
    };
    let patterns = Patterns::new(&globs)?;
    let (name, dir) = sets::place(&top, req.set.as_deref(), req.dir.as_deref())?;
    let commits = history::scan(&top, &req.range)?;
    let scanned = commits.len();
    let (candidates, mut rejected) = split(&top, commits, &patterns)?;
    let mut report = MineReport {
        set: name.clone(),
        dir: dir.display().to_string(),
        scanned,
        candidates: candidates.len(),
        tasks: Vec::new(),
        unvalidated: Vec::new(),
        rejected: Vec::new(),
        test_cmd: test_cmd.clone(),
        warnings: Vec::new(),
        describe_usage: None,
        rows: Vec::new(),
    };
    if !req.validate {
        report.unvalidated = candidates.iter().map(|c| c.commit.sha.clone()).collect();
        rejected.sort_by_key(|r| r.0);
        report.rejected = rejected.into_iter().map(|(_, r)| r).collect();
        return Ok(report);
    }
    let sandbox = sandbox()?;
    let setup = Setup::new(&top, test_cmd.clone(), req.test_timeout, sandbox)?;
    let judged = judge_all(&top, &setup, &candidates, req.jobs.max(1))?;
    crate::fsutil::ensure_private_dir(&dir)?;
    let now = crate::ids::now_ms();
    let mut written = Vec::new();
    let mut described = Vec::new();
    for (i, c) in candidates.iter().enumerate() {
        let at = c.commit.sha.clone();
        match &judged[i] {
            (_, Verdict::Rejected(reason, detail)) => rejected.push((
                c.at,
                Rejected {
                    commit: at,
                    reason: *reason,
                    detail: detail.clone(),
                },
            )),
            (
                patch,
                Verdict::Task {
                    fail_to_pass,
                    pass_to_pass,
                },
            ) => {
                let mut t = Task {
                    format: FORMAT,
                    id: at[..12].to_string(),
                    base: c.parent.clone(),
                    commit: at.clone(),
                    task: history::task_text(&c.commit),
                    source_files: c.code.clone(),
                    test_files: c.tests.clone(),
                    test_patch: patch.clone(),
                    test_cmd: test_cmd.clone(),
                    fail_to_pass: fail_to_pass.clone(),
                    pass_to_pass: pass_to_pass.clone(),
                    mined_at_ms: now,
                    mined_by: mined_by(),
                    described_by: None,
                    describe_usage: None,
                };
                if let Err(e) = t.check() {
                    rejected.push((
                        c.at,
                        Rejected {
                            commit: at,
                            reason: Reason::BadTask,
                            detail: e.to_string(),
                        },
                    ));
                    continue;
                }
                if let Some(agent) = &req.describe {
                    describe::apply(&top, agent, &mut t, &mut report.warnings)?;
                }
                task::write(&dir, &t)?;
                if let Some(u) = t.describe_usage.clone() {
                    described.push(u);
                }
                report.rows.push(vec![
                    t.id.clone(),
                    t.fail_to_pass.len().to_string(),
                    t.pass_to_pass.len().to_string(),
                    t.task.lines().next().unwrap_or("").to_string(),
                ]);
                written.push(t.id);
            }
        }
    }
    report.tasks = written;
    report.describe_usage = super::task::DescribeUsage::sum(described.iter());
    let info = SetInfo {
        format: FORMAT,
        name,
        repo: top.display().to_string(),
        mined_at_ms: now,
        mined_by: mined_by(),
        options: options(req, &globs, &test_cmd),
    };
    sets::write_info(&dir, &info)?;
    rejected.sort_by_key(|r| r.0);
    report.rejected = rejected.into_iter().map(|(_, r)| r).collect();
    Ok(report)
}

/// Whether the test command runs under baton's sandbox: `run.sandbox`
/// (`BATON_SANDBOX`), as for a run's `--test-cmd`; auto by default.
fn sandbox() -> Result<crate::sandbox::Want> {
    match crate::config::active().string("run.sandbox") {
        Some(s) => crate::sandbox::Want::parse(&s).map_err(|m| {
            Error::usage_hint(format!("run.sandbox: {m}"), "use auto, require or off")
        }),
        None => Ok(crate::sandbox::Want::Auto),
    }
}

fn mined_by() -> String {
    format!("baton {}", env!("CARGO_PKG_VERSION"))
}

/// The candidates, and the commits that are not (with their place).
type Split = (Vec<Candidate>, Vec<(usize, Rejected)>);

/// Sort `commits` into `Split`.
fn split(top: &Path, commits: Vec<Commit>, patterns: &Patterns) -> Result<Split> {
    let mut kinds: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    let mut unit_wanted = BTreeMap::new();
    for c in &commits {
        let (mut tests, mut code) = (Vec::new(), Vec::new());
        for f in &c.files {
            match patterns.kind(f) {
                Kind::Test => tests.push(f.clone()),
                Kind::Code => code.push(f.clone()),
                Kind::Other => {}
            }
        }
        let rs: Vec<String> = code
            .iter()
            .filter(|f| f.ends_with(".rs"))
            .cloned()
            .collect();
        if patterns.conventional()
            && tests.is_empty()
            && !rs.is_empty()
            && let Some(p) = &c.parent
        {
            unit_wanted.insert(c.sha.clone(), (p.clone(), rs));
        }
        kinds.push((tests, code));
    }
    let unit = history::unit_test_files(top, &unit_wanted)?;
    let (mut candidates, mut rejected) = (Vec::new(), Vec::new());
    for (i, (c, (mut tests, mut code))) in commits.into_iter().zip(kinds).enumerate() {
        if let Some(moved) = unit.get(&c.sha) {
            code.retain(|f| !moved.contains(f));
            tests.extend(moved.iter().cloned());
        }
        let reason = if c.parent.is_none() {
            Some(Reason::RootCommit)
        } else if tests.is_empty() {
            Some(Reason::NoTests)
        } else if code.is_empty() {
            Some(Reason::NoSourceChange)
        } else if !c.files.iter().all(|f| task::valid_path(f)) {
            Some(Reason::BadPath)
        } else {
            None
        };
        match (reason, c.parent.clone()) {
            (None, Some(parent)) => candidates.push(Candidate {
                at: i,
                commit: c,
                parent,
                code,
                tests,
            }),
            (r, _) => rejected.push((
                i,
                Rejected {
                    commit: c.sha,
                    reason: r.unwrap_or(Reason::RootCommit),
                    detail: String::new(),
                },
            )),
        }
    }
    Ok((candidates, rejected))
}

/// Validate every candidate, `jobs` at a time: (test patch, verdict) each,
/// in the candidates' order.
fn judge_all(
    top: &Path,
    setup: &Setup,
    candidates: &[Candidate],
    jobs: usize,
) -> Result<Vec<(String, Verdict)>> {
    let queue = Mutex::new((0..candidates.len()).collect::<VecDeque<usize>>());
    let done = Mutex::new(BTreeMap::new());
    let stopped = AtomicBool::new(false);
    let failed: Mutex<Option<Error>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..jobs.min(candidates.len().max(1)) {
            s.spawn(|| {
                let stop = match crate::worktree::verify::Stop::install() {
                    Ok(st) => st,
                    Err(e) => {
                        *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                        return;
                    }
                };
                loop {
                    let next = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
                    let Some(i) = next else { break };
                    let c = &candidates[i];
                    let got = if stopped.load(Ordering::SeqCst) {
                        Ok((
                            String::new(),
                            Verdict::Rejected(Reason::Interrupted, String::new()),
                        ))
                    } else {
                        one(top, setup, c, &stop)
                    };
                    match got {
                        Ok(v) => {
                            if matches!(v.1, Verdict::Rejected(Reason::Interrupted, _)) {
                                stopped.store(true, Ordering::SeqCst);
                            }
                            done.lock().unwrap_or_else(|p| p.into_inner()).insert(i, v);
                        }
                        Err(e) => {
                            stopped.store(true, Ordering::SeqCst);
                            *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                        }
                    }
                }
            });
        }
    });
    if let Some(e) = failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let done = done.into_inner().unwrap_or_else(|p| p.into_inner());
    Ok(done.into_values().collect())
}

/// One candidate: its test patch, then its verdict.
fn one(
    top: &Path,
    setup: &Setup,
    c: &Candidate,
    stop: &crate::worktree::verify::Stop,
) -> Result<(String, Verdict)> {
    let mut g = crate::git::git(top);
    g.arg("diff")
        .args(crate::git::DIFF)
        // A patch `git apply` reads, whatever the user's diff settings
        // (colour, prefixes) are.
        .args([
            "--binary",
            "--full-index",
            "--no-renames",
            "--no-color",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            &c.parent,
            &c.commit.sha,
            "--",
        ])
        .args(&c.tests);
    let out = g
        .output()
        .map_err(|e| Error::io("cutting the test patch", e))?;
    if !out.status.success() {
        return Err(Error::io(
            "cutting the test patch",
            std::io::Error::other(String::from_utf8_lossy(&out.stderr).trim().to_string()),
        ));
    }
    let patch = String::from_utf8_lossy(&out.stdout).into_owned();
    let v = validate::validate(setup, &c.parent, &c.commit.sha, &patch, stop)?;
    Ok((patch, v))
}

/// The repository's top directory.
pub fn toplevel(cwd: &Path) -> Result<PathBuf> {
    let out = crate::git::git(cwd)
        .args(["rev-parse", "--show-toplevel"])
        .output()
        .map_err(|e| Error::io("running git", e))?;
    let top = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || top.is_empty() {
        return Err(Error::usage_hint(
            format!("{} is not in a git repository", cwd.display()),
            "run `baton bench mine` inside the repository whose history to mine",
        ));
    }
    Ok(PathBuf::from(top))
}

/// The options recorded in `set.json`.
fn options(
    req: &MineRequest,
    globs: &[String],
    t: &TestCmd,
) -> serde_json::Map<String, serde_json::Value> {
    let mut m = serde_json::Map::new();
    m.insert("since".into(), serde_json::json!(req.range.since));
    m.insert("max".into(), serde_json::json!(req.range.max));
    m.insert("paths".into(), serde_json::json!(req.range.paths));
    m.insert("tests".into(), serde_json::json!(globs));
    m.insert("test_cmd".into(), serde_json::json!(t));
    m
}

impl Render for MineReport {
    fn exit_code(&self) -> i32 {
        if self
            .rejected
            .iter()
            .any(|r| r.reason == Reason::Interrupted)
        {
            crate::error::Error::Interrupted { signal: "SIGINT" }.exit_code()
        } else {
            0
        }
    }

    fn text(&self) -> String {
        let mut s = format!(
            "set {} ({}): {} task(s) from {} candidate(s), {} commit(s) looked at\n",
            self.set,
            render::clean(&self.dir, render::Shape::Line),
            self.tasks.len(),
            self.candidates,
            self.scanned
        );
        if !self.rows.is_empty() {
            let mut rows = vec![
                ["TASK", "FAIL→PASS", "PASS→PASS", "TEXT"]
                    .map(String::from)
                    .to_vec(),
            ];
            rows.extend(self.rows.iter().cloned());
            s.push_str(&render::table(&rows));
        }
        if let Some(u) = &self.describe_usage {
            s.push_str(&u.line());
            s.push('\n');
        }
        if !self.unvalidated.is_empty() {
            s.push_str(&format!(
                "{} candidate(s) not validated (--no-validate): nothing written\n",
                self.unvalidated.len()
            ));
        }
        let mut by: BTreeMap<Reason, usize> = BTreeMap::new();
        for r in &self.rejected {
            *by.entry(r.reason).or_default() += 1;
        }
        if !by.is_empty() {
            let parts: Vec<String> = by
                .iter()
                .map(|(r, n)| {
                    let name = serde_json::to_value(r)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default();
                    format!("{name} {n}")
                })
                .collect();
            s.push_str(&format!("rejected: {}\n", parts.join(", ")));
        }
        s
    }
}
