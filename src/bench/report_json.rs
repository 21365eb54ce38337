//! The report's JSON: every type `baton bench report` prints and `baton
//! schema bench-report` publishes, apart from the arithmetic that fills
//! them (`report`), so the contract reads on one screen.

use std::collections::BTreeMap;

use serde::Serialize;

use super::spec::Shard;

/// What `baton bench report` prints (`baton schema bench-report`).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Report {
    /// Always 1.
    pub schema_version: u32,
    /// The bench run's id.
    pub bench_id: String,
    /// The task set's folder, as the run was given it.
    pub set: String,
    /// How many tasks the set holds now; null when its folder could not
    /// be read (`set_note` says why): the report is made from the trials.
    pub set_tasks: Option<u64>,
    /// Why the set's tasks are not counted or named, when they are not.
    pub set_note: Option<String>,
    /// How many times each task went to each setting.
    pub repeat: u32,
    /// `--attempts`: the most independent attempts a trial had (1 without
    /// the flag). With more than one, `solved` counts a trial solved on any
    /// attempt (pass@k) and `solved_first_attempt` those solved on the
    /// first (pass@1).
    pub attempts: u32,
    /// `--until-green`: the most repair turns an attempt had, each after the
    /// visible tests of the trial's checkout failed (never the hidden ones).
    pub until_green: u32,
    /// The slice this run held, when it was one shard of several.
    pub shard: Option<Shard>,
    /// Trials recorded.
    pub trials: u64,
    /// Tasks with at least one trial.
    pub tasks_run: u64,
    /// One entry per setting: those the run was given, in its order, then
    /// any other setting a trial names.
    pub settings: Vec<SettingReport>,
    /// Each pair of settings, compared on the tasks both ran.
    pub pairs: Vec<PairReport>,
    pub recommendation: Recommendation,
    /// What `bench mine --describe` spent writing the set's task texts
    /// (summed over its tasks' `describe_usage`): a cost of the set, not of
    /// any setting, so never in the settings' cost. Null when no task was
    /// described or the set could not be read.
    pub describe: Option<super::task::DescribeUsage>,
    /// Every task with a trial or in the set, sorted by id.
    pub tasks: Vec<TaskRow>,
    /// The HTML page written (`--html FILE`), when one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub html: Option<String>,
}

/// One setting's trials, summed.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SettingReport {
    /// `AGENT` or `AGENT:MODEL`, as given to `--agents`.
    pub setting: String,
    pub trials: u64,
    /// Trials solved on any of their attempts (pass@k; k = `attempts`).
    pub solved: u64,
    /// solved / trials; null with no trials.
    pub solve_rate: Option<f64>,
    /// Trials solved on their first attempt (pass@1): `solved` when each
    /// trial had one attempt.
    pub solved_first_attempt: u64,
    /// solved_first_attempt / trials; null with no trials.
    pub first_attempt_rate: Option<f64>,
    /// Attempts made over the trials.
    pub attempts_made: u64,
    /// Repair turns over the trials (`--until-green`).
    pub repair_rounds: u64,
    /// The 95 % Wilson score interval of the solve rate; null with no trials.
    pub interval: Option<Interval>,
    /// Dollars over every trial; null when any trial is unpriced.
    pub cost_usd: Option<f64>,
    /// Trials without a cost (the CLI reported none and baton could not
    /// price the model).
    pub unpriced_trials: u64,
    /// cost_usd / solved; null when a trial is unpriced or none solved
    /// (`cost_note` says which).
    pub cost_per_solved_usd: Option<f64>,
    /// Why `cost_per_solved_usd` is null, when it is.
    pub cost_note: Option<String>,
    /// The peer's median wall time over the trials, in milliseconds.
    pub median_wall_ms: Option<f64>,
    /// Tokens over the trials that reported them.
    pub tokens: u64,
    /// The median over the trials that reported tokens.
    pub median_tokens: Option<f64>,
    /// Trials whose peer reported no tokens.
    pub trials_without_tokens: u64,
    /// The median of lines the peer added and removed (tests excluded).
    pub median_diff_lines: Option<f64>,
    /// How many trials ended in each failure kind of a peer that did not
    /// finish (`rate_limited`, `timeout`, …).
    pub failure_kinds: BTreeMap<String, u64>,
    /// Trials whose peer finished but whose tests said not solved.
    pub tests_failed: u64,
    /// Trials in which the peer changed tests or test infrastructure
    /// (reverted before the tests ran).
    pub tampered_trials: u64,
}

/// A 95 % interval of a rate, both ends within [0, 1].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

/// Two settings on the (task, repeat) pairs both ran.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PairReport {
    pub a: String,
    pub b: String,
    /// (task, repeat) pairs both settings ran.
    pub paired: u64,
    pub both_solved: u64,
    pub only_a: u64,
    pub only_b: u64,
    pub neither: u64,
    /// The two-sided exact McNemar test on only_a and only_b.
    pub p_value: f64,
    /// The setting that solved more, only when p < 0.05.
    pub better: Option<String>,
    /// `A solved more than B (p = 0.02)`, or `no difference detected with
    /// N paired tasks`.
    pub verdict: String,
}

/// The line a user can act on.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Recommendation {
    /// The setting recommended: the cheapest per solved task among those
    /// the paired test cannot tell from the best; null when no such thing
    /// can be said (no trials, one setting, nothing solved).
    pub setting: Option<String>,
    /// The setting with the highest solve rate, when any trial solved.
    pub best: Option<String>,
    /// The best's cost per solved task divided by the recommended one's
    /// (9 = a ninth of the cost), when both are known.
    pub cost_ratio: Option<f64>,
    /// The recommendation in words, e.g. "for this repository: `pi:glm-5.2`
    /// solves as many as `claude:opus` (14/20 vs 15/20, p = 1.0) at 1/9
    /// the cost".
    pub text: String,
}

/// One task: its title (from the set) and how each setting did.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TaskRow {
    pub id: String,
    /// The first line of the task's text; null when the set is not there
    /// or no longer holds the task.
    pub title: Option<String>,
    /// Per setting, in the order of `settings`.
    pub results: Vec<TaskResult>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TaskResult {
    pub setting: String,
    pub trials: u64,
    pub solved: u64,
}
