//! `baton bench run`: every (task, setting, repeat) of a set handed to its
//! peer in a repository without history, scored by the hidden tests.
//!
//! Theory of operation. The record is `benches/<id>/` in the project's
//! state folder: `bench.json` (the spec, written once), `trials/` (one file
//! per trial, written as it ends), `logs/<trial>/` (the peer's and the
//! tests' output), and the runner's `lock` (`store::ending::Runner`) while
//! a baton drives it. `--resume ID` reads the spec back and runs only the
//! trials whose file is missing: a crash or Ctrl-C loses at most the
//! trials in flight (a trial stopped by a signal is not recorded).
//!
//! The trials are the sorted list of (task id, setting, repeat); `--shard
//! I/N` keeps those whose place in it `Shard::holds`. `--jobs J` threads
//! take them in order. Each trial: `isolate::make` (the base tree alone),
//! `score::Hidden::prepare` (the hidden tests, before any peer call), the
//! peer through `run::chain::run` as any run of baton's (its result, its
//! failure kinds, the usage ledger, the sandbox), then with the peer gone
//! `score` restores the tests, reverts the infrastructure and runs them.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::Serialize;

use super::attempt;
use super::isolate;
use super::spec::{self, Shard, Spec, TRIALS_DIR};
pub use super::start::{BenchRequest, MAX_JOBS};
use super::start::{plans, spec_and_record};
use super::state::{self, Stage};
use super::task::{self, Task};
use super::trial::{self, Trial};
use crate::error::{Error, Result};
use crate::process::Interrupts;
use crate::result::Status;
use crate::run::Plan;
use crate::store;

/// One setting's trials in the record.
#[derive(Debug, Clone, Serialize)]
pub struct Count {
    pub setting: String,
    pub trials: usize,
    pub solved: usize,
}

/// A trial baton could not run (a tool error, not the peer's failure).
#[derive(Debug, Clone, Serialize)]
pub struct TrialError {
    pub trial: String,
    pub kind: String,
    pub message: String,
}

/// What `bench run` prints.
#[derive(Debug, Clone, Serialize)]
pub struct BenchRun {
    pub bench_id: String,
    pub record: PathBuf,
    pub set: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// This run's share of the trials (its shard's).
    pub trials: usize,
    /// Run now.
    pub run: usize,
    /// Recorded already (`--resume`).
    pub skipped: usize,
    /// Every trial of the record, per setting.
    pub settings: Vec<Count>,
    pub errors: Vec<TrialError>,
}

impl crate::output::render::Render for BenchRun {
    fn text(&self) -> String {
        use crate::output::render::{Shape, clean};
        let mut s = format!(
            "bench {}: {} trials run, {} recorded before ({})\n",
            self.bench_id,
            self.run,
            self.skipped,
            self.record.display()
        );
        for c in &self.settings {
            s.push_str(&format!(
                "  {:<24} solved {}/{}\n",
                clean(&c.setting, Shape::Line),
                c.solved,
                c.trials
            ));
        }
        for e in &self.errors {
            s.push_str(&format!(
                "  error in {}: {}\n",
                e.trial,
                clean(&e.message, Shape::Line)
            ));
        }
        s
    }

    fn exit_code(&self) -> i32 {
        i32::from(!self.errors.is_empty())
    }
}

/// One trial to run: indexes into the tasks and settings.
#[derive(Debug, Clone, Copy)]
struct Slot {
    task: usize,
    setting: usize,
    repeat: u32,
}

struct Ctx<'a> {
    root: &'a Path,
    record: &'a Path,
    tasks: &'a [Task],
    spec: &'a Spec,
    plans: &'a [Plan],
    timeout: Duration,
    packs: &'a isolate::Packs,
    attempts: u32,
    until_green: u32,
}

pub fn command(req: BenchRequest, mode: crate::output::Mode) -> Result<i32> {
    let cwd = std::env::current_dir().map_err(|e| Error::io("reading the current folder", e))?;
    let root = crate::fsutil::project_root(&cwd);
    if !root.join(".git").exists() {
        return Err(Error::usage_hint(
            "baton bench runs in the git repository its tasks come from",
            "cd into the repository",
        ));
    }
    crate::run::gate::pass(false, mode, || Ok(serde_json::Value::Null))?;
    let origin = crate::notify::Origin::here();
    let r =
        run_bench(&root, &req, &origin).inspect_err(|e| announce(&root, &req, &origin, Err(e)))?;
    let code = crate::output::emit(&r, mode);
    announce(&root, &req, &origin, Ok(&r));
    code
}

/// The bench run ended: one event from the process that ran it (its
/// trials announce nothing). A request refused before anything ran is
/// only printed.
fn announce(
    root: &Path,
    req: &BenchRequest,
    origin: &crate::notify::Origin,
    end: Result<&BenchRun, &Error>,
) {
    use crate::notify::{self, Event, Work};
    let e = match end {
        Ok(r) => {
            let solved: Vec<String> = (r.settings.iter())
                .map(|c| format!("{} solved {}/{}", c.setting, c.solved, c.trials))
                .collect();
            let status = if r.errors.is_empty() {
                "success"
            } else {
                "failed"
            };
            Event::ended(Work::Bench, status, None)
                .id(r.bench_id.as_str())
                .agent(
                    r.settings
                        .iter()
                        .map(|c| c.setting.as_str())
                        .collect::<Vec<_>>()
                        .join(","),
                )
                .summary(&format!(
                    "bench {}: {} trials run; {}",
                    r.bench_id,
                    r.run,
                    solved.join(", ")
                ))
        }
        Err(Error::Usage { .. }) => return,
        Err(e) => {
            let status = if matches!(e, Error::Interrupted { .. }) {
                "cancelled"
            } else {
                "failed"
            };
            let e2 = Event::ended(Work::Bench, status, Some(e.kind())).summary(&e.to_string());
            match &req.resume {
                Some(id) => e2.id(id.as_str()),
                None => e2,
            }
        }
    };
    let e = e.repo(root);
    let record =
        (e.id.as_deref()).and_then(|id| store::record_dir(root, store::Kind::Bench, id).ok());
    notify::announce(&e, req.notify, origin, record.as_deref());
}

/// The whole run (see the module comment).
pub fn run_bench(
    root: &Path,
    req: &BenchRequest,
    origin: &crate::notify::Origin,
) -> Result<BenchRun> {
    let (spec, record) = spec_and_record(root, req)?;
    let tasks = task::read_set(&spec.set)?;
    let plans = plans(root, &spec)?;
    crate::fsutil::ensure_private_dir(&record.join(TRIALS_DIR))?;
    if req.resume.is_none() {
        spec::write(&record, &spec)?;
    }
    let Some(_runner) = store::ending::Runner::hold(&record)? else {
        return Err(Error::usage_hint(
            format!("bench run {} is being run by another baton", spec.id),
            "wait for it to end, or stop it",
        ));
    };
    // Peer calls a runner killed outright left listed are not in flight.
    let _ = std::fs::remove_dir_all(record.join("runs"));
    state::write(&record, &spec.id, Stage::Running, None)?;
    // Its trials' peers that fall silent, announced as the bench run's
    // stalls (stopped, and joined, when this returns: before its end).
    let _stalls = crate::group::stalls::watch(crate::group::stalls::Owner {
        work: crate::notify::Work::Bench,
        id: spec.id.clone(),
        repo: root.to_path_buf(),
        dir: record.clone(),
        choice: req.notify,
        origin: origin.clone(),
    });
    let timeout = spec
        .options
        .get("timeout")
        .and_then(|v| v.as_str())
        .map(crate::duration::parse)
        .transpose()?
        .unwrap_or(Duration::from_millis(plans[0].timeout_ms));
    let packs_marker = record.join("packs.tmp");
    isolate::sweep(&packs_marker);
    let packs = isolate::Packs::new()?;
    isolate::mark(&packs_marker, packs.dir());
    let ctx = Ctx {
        root,
        record: &record,
        tasks: &tasks,
        spec: &spec,
        plans: &plans,
        timeout,
        packs: &packs,
        attempts: spec.option_u32("attempts", 1).max(1),
        until_green: spec.option_u32("until_green", 0),
    };
    let mut all = Vec::new();
    for (t, task) in tasks.iter().enumerate() {
        for (s, _) in spec.settings.iter().enumerate() {
            for repeat in 0..spec.repeat {
                all.push((
                    task.id.as_str(),
                    s,
                    repeat,
                    Slot {
                        task: t,
                        setting: s,
                        repeat,
                    },
                ));
            }
        }
    }
    all.sort_by(|a, b| (a.0, &spec.settings[a.1], a.2).cmp(&(b.0, &spec.settings[b.1], b.2)));
    let mine: Vec<Slot> = all
        .iter()
        .enumerate()
        .filter(|(n, _)| spec.shard.is_none_or(|sh| sh.holds(*n)))
        .map(|(_, x)| x.3)
        .collect();
    let trials_dir = record.join(TRIALS_DIR);
    let pending: Vec<Slot> = mine
        .iter()
        .copied()
        .filter(|s| !trials_dir.join(ctx.file(*s)).exists())
        .collect();
    let ints = Interrupts::install()?;
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let errors = Mutex::new(Vec::new());
    let jobs = req.jobs.clamp(1, MAX_JOBS) as usize;
    let terminal = std::io::stderr().is_terminal();
    std::thread::scope(|sc| {
        for _ in 0..jobs.min(pending.len()) {
            let mut ints = ints.clone();
            let (ctx, pending, next, done, errors) = (&ctx, &pending, &next, &done, &errors);
            sc.spawn(move || {
                loop {
                    if ints.fired().is_some() {
                        return;
                    }
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(slot) = pending.get(i).copied() else {
                        return;
                    };
                    let name = ctx.file(slot);
                    match ctx.trial(slot, &mut ints) {
                        Ok(Some(t)) => {
                            if let Err(e) = trial::write(&ctx.record.join(TRIALS_DIR), &t) {
                                push(errors, &name, &e);
                            }
                            let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                            if terminal {
                                eprintln!(
                                    "bench {}: {n}/{} {} {} #{}: {} ({:.1}s)",
                                    ctx.spec.id,
                                    pending.len(),
                                    t.task,
                                    t.setting,
                                    t.repeat,
                                    if t.solved { "solved" } else { "not solved" },
                                    t.wall_ms as f64 / 1000.0
                                );
                            }
                        }
                        Ok(None) => {}
                        Err(e) => push(errors, &name, &e),
                    }
                }
            });
        }
    });
    isolate::sweep(&packs_marker);
    if let Some(sig) = ints.fired() {
        let _ = state::write(&record, &spec.id, Stage::Interrupted, None);
        return Err(Error::Interrupted {
            signal: crate::process::signal_name(sig),
        });
    }
    let mut counts: BTreeMap<&str, Count> = BTreeMap::new();
    for s in &spec.settings {
        counts.insert(
            s,
            Count {
                setting: s.clone(),
                trials: 0,
                solved: 0,
            },
        );
    }
    for t in trial::read_dir(&trials_dir)? {
        if let Some(c) = counts.get_mut(t.setting.as_str()) {
            c.trials += 1;
            c.solved += usize::from(t.solved);
        }
    }
    state::write(&record, &spec.id, Stage::Done, None)?;
    Ok(BenchRun {
        bench_id: spec.id.clone(),
        record: record.clone(),
        set: spec.set.clone(),
        shard: spec.shard,
        trials: mine.len(),
        run: done.load(Ordering::SeqCst),
        skipped: mine.len() - pending.len(),
        settings: counts.into_values().collect(),
        errors: errors.into_inner().unwrap_or_default(),
    })
}

fn push(errors: &Mutex<Vec<TrialError>>, name: &str, e: &Error) {
    if let Ok(mut v) = errors.lock() {
        v.push(TrialError {
            trial: name.trim_end_matches(".json").to_string(),
            kind: e.kind().to_string(),
            message: e.to_string(),
        });
    }
}

impl Ctx<'_> {
    fn file(&self, s: Slot) -> String {
        trial::file_name(
            &self.tasks[s.task].id,
            &self.spec.settings[s.setting],
            s.repeat,
        )
    }

    /// One trial; `None` when a signal stopped it (it is not recorded, so
    /// `--resume` runs it again).
    fn trial(&self, s: Slot, ints: &mut Interrupts) -> Result<Option<Trial>> {
        let logs = self
            .record
            .join("logs")
            .join(self.file(s).trim_end_matches(".json"));
        crate::fsutil::ensure_private_dir(&logs)?;
        // The folder of this trial's earlier run, if a killed runner left it.
        let marker = logs.join("folder.tmp");
        isolate::sweep(&marker);
        let r = self.trial_in(s, ints, &logs, &marker);
        isolate::sweep(&marker);
        r
    }

    fn trial_in(
        &self,
        s: Slot,
        ints: &mut Interrupts,
        logs: &Path,
        marker: &Path,
    ) -> Result<Option<Trial>> {
        let task = &self.tasks[s.task];
        let started_at_ms = store::now_ms();
        let name = self.file(s);
        let mut setup = attempt::Setup {
            root: self.root,
            task,
            plan: &self.plans[s.setting],
            packs: self.packs,
            timeout: self.timeout,
            until_green: self.until_green,
            marker,
            record: self.record,
            trial: name.trim_end_matches(".json"),
            attempt: 1,
        };
        let mut spent = attempt::Spent::default();
        let (mut repairs, mut tampered) = (0, Vec::new());
        let mut n = 0;
        loop {
            n += 1;
            // The first attempt's logs stay where a one-attempt run puts them.
            let dir = match n {
                1 => logs.to_path_buf(),
                _ => logs.join(format!("attempt-{n}")),
            };
            crate::fsutil::ensure_private_dir(&dir)?;
            setup.attempt = n;
            let Some(f) = attempt::run(&setup, &dir, ints)? else {
                return Ok(None);
            };
            isolate::sweep(marker);
            spent.join(&f.spent);
            repairs += f.repairs;
            for t in f.tampered {
                if !tampered.contains(&t) {
                    tampered.push(t);
                }
            }
            if f.tests.solved || n >= self.attempts {
                let failed = f.status != Status::Success;
                return Ok(Some(Trial {
                    task: task.id.clone(),
                    setting: self.spec.settings[s.setting].clone(),
                    repeat: s.repeat,
                    solved: f.tests.solved,
                    still_failing: f.tests.still_failing,
                    broken: f.tests.broken,
                    tampered_tests: tampered,
                    status: f.status.as_str().to_string(),
                    failure_kind: f.failure_kind.filter(|_| failed),
                    tokens: spent.tokens,
                    cost_usd: spent.cost_usd,
                    wall_ms: spent.wall_ms,
                    diff_lines: f.diff_lines,
                    started_at_ms,
                    ended_at_ms: store::now_ms(),
                    attempts: n,
                    solved_on: f.tests.solved.then_some(n),
                    repair_rounds: repairs,
                }));
            }
        }
    }
}
