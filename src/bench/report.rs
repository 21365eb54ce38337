//! `bench report`'s numbers, pure: a bench run's spec and trials (and its
//! task set, while the set's folder is still there) in, a `Report` out.
//! Reading the record is `report_cmd`'s; the text and the HTML page show
//! this value (`report_text`, `html`).
//!
//! Per setting: the solve rate with its 95 % Wilson interval, the cost per
//! solved task (only when every trial is priced: a sum that leaves trials
//! out would flatter the setting), medians of wall time and tokens, failure
//! kinds, tampering. Per pair of settings: the (task, repeat) pairs both
//! ran, split four ways, and the exact McNemar test; "A solved more than
//! B" is said only at p < 0.05. The recommendation is the cheapest setting
//! that the paired test cannot tell apart from the one that solved most.

use std::collections::BTreeMap;

pub use super::report_json::{
    Interval, PairReport, Recommendation, Report, SettingReport, TaskResult, TaskRow,
};
use super::spec::Spec;
use super::stats;
use super::task::{DescribeUsage, Task};
use super::trial::Trial;

/// Below this p, a paired difference is reported as one.
pub const ALPHA: f64 = 0.05;

/// Make the report. `set` is the task set's tasks, or why they could not
/// be read.
pub fn build(spec: &Spec, trials: &[Trial], set: Result<&[Task], String>) -> Report {
    let mut names: Vec<String> = Vec::new();
    for s in &spec.settings {
        if !names.contains(s) {
            names.push(s.clone());
        }
    }
    let mut extra: Vec<String> = trials
        .iter()
        .map(|t| t.setting.clone())
        .filter(|s| !names.contains(s))
        .collect();
    extra.sort();
    extra.dedup();
    names.extend(extra);

    let settings: Vec<SettingReport> = names
        .iter()
        .map(|n| setting(n, trials.iter().filter(|t| &t.setting == n)))
        .collect();
    let repeated = trials.iter().any(|t| t.repeat > 0);
    let mut pairs = Vec::new();
    for (i, a) in names.iter().enumerate() {
        for b in &names[i + 1..] {
            pairs.push(pair(a, b, trials, repeated));
        }
    }
    let recommendation = recommend(&settings, &pairs);

    let describe = set.as_ref().ok().and_then(|tasks| {
        DescribeUsage::sum(tasks.iter().filter_map(|t| t.describe_usage.as_ref()))
    });
    let (titles, set_tasks, set_note) = match set {
        Ok(tasks) => (
            tasks
                .iter()
                .map(|t| (t.id.clone(), title(&t.task)))
                .collect::<BTreeMap<_, _>>(),
            Some(tasks.len() as u64),
            None,
        ),
        Err(why) => (BTreeMap::new(), None, Some(why)),
    };
    let mut ids: Vec<&String> = trials.iter().map(|t| &t.task).collect();
    ids.sort();
    ids.dedup();
    let tasks_run = ids.len() as u64;
    ids.extend(titles.keys());
    ids.sort();
    ids.dedup();
    // (trials, solved) per (task, setting), counted in one pass.
    let mut cells: BTreeMap<(&str, &str), (u64, u64)> = BTreeMap::new();
    for t in trials {
        let c = cells.entry((&t.task, &t.setting)).or_default();
        *c = (c.0 + 1, c.1 + t.solved as u64);
    }
    let tasks = ids
        .into_iter()
        .map(|id| TaskRow {
            id: id.clone(),
            title: titles.get(id).cloned(),
            results: names
                .iter()
                .map(|n| {
                    let (trials, solved) = cells
                        .get(&(id.as_str(), n.as_str()))
                        .copied()
                        .unwrap_or_default();
                    TaskResult {
                        setting: n.clone(),
                        trials,
                        solved,
                    }
                })
                .collect(),
        })
        .collect();

    Report {
        schema_version: 1,
        bench_id: spec.id.clone(),
        set: spec.set.display().to_string(),
        set_tasks,
        set_note,
        repeat: spec.repeat,
        attempts: spec.option_u32("attempts", 1),
        until_green: spec.option_u32("until_green", 0),
        shard: spec.shard,
        trials: trials.len() as u64,
        tasks_run,
        settings,
        pairs,
        recommendation,
        describe,
        tasks,
        html: None,
    }
}

/// The first line of a task's text, at most 100 characters.
fn title(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let line = line.trim();
    match line.char_indices().nth(100) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

fn setting<'a>(name: &str, trials: impl Iterator<Item = &'a Trial>) -> SettingReport {
    let trials: Vec<&Trial> = trials.collect();
    let n = trials.len() as u64;
    let solved = trials.iter().filter(|t| t.solved).count() as u64;
    let first = trials
        .iter()
        .filter(|t| t.solved && t.solved_on.is_none_or(|k| k == 1))
        .count() as u64;
    let unpriced = trials.iter().filter(|t| t.cost_usd.is_none()).count() as u64;
    let cost_usd = (unpriced == 0 && n > 0).then(|| trials.iter().filter_map(|t| t.cost_usd).sum());
    let (cost_per_solved_usd, cost_note) = match cost_usd {
        _ if n == 0 => (None, Some("no trials".to_string())),
        None => (
            None,
            Some(format!(
                "{unpriced} of {n} trials unpriced: the CLI reported no cost and baton has no \
                 price for the model"
            )),
        ),
        Some(_) if solved == 0 => (None, Some("no task solved".to_string())),
        Some(c) => (Some(c / solved as f64), None),
    };
    let f = |xs: Vec<u64>| stats::median(&xs.into_iter().map(|x| x as f64).collect::<Vec<_>>());
    let tokens: Vec<u64> = trials.iter().filter_map(|t| t.tokens).collect();
    let mut failure_kinds = BTreeMap::new();
    for k in trials.iter().filter_map(|t| t.failure_kind.as_ref()) {
        *failure_kinds.entry(k.clone()).or_insert(0) += 1;
    }
    SettingReport {
        setting: name.to_string(),
        trials: n,
        solved,
        solve_rate: (n > 0).then(|| solved as f64 / n as f64),
        solved_first_attempt: first,
        first_attempt_rate: (n > 0).then(|| first as f64 / n as f64),
        attempts_made: trials.iter().map(|t| u64::from(t.attempts)).sum(),
        repair_rounds: trials.iter().map(|t| u64::from(t.repair_rounds)).sum(),
        interval: (n > 0).then(|| {
            let (low, high) = stats::wilson(solved, n);
            Interval { low, high }
        }),
        cost_usd,
        unpriced_trials: unpriced,
        cost_per_solved_usd,
        cost_note,
        median_wall_ms: f(trials.iter().map(|t| t.wall_ms).collect()),
        tokens: tokens.iter().sum(),
        median_tokens: f(tokens.clone()),
        trials_without_tokens: n - tokens.len() as u64,
        median_diff_lines: f(trials.iter().map(|t| t.diff_lines).collect()),
        failure_kinds,
        tests_failed: trials
            .iter()
            .filter(|t| !t.solved && t.failure_kind.is_none())
            .count() as u64,
        tampered_trials: trials
            .iter()
            .filter(|t| !t.tampered_tests.is_empty())
            .count() as u64,
    }
}

fn pair(a: &str, b: &str, trials: &[Trial], repeated: bool) -> PairReport {
    let of = |s: &str| -> BTreeMap<(&str, u32), bool> {
        trials
            .iter()
            .filter(|t| t.setting == s)
            .map(|t| ((t.task.as_str(), t.repeat), t.solved))
            .collect()
    };
    let (ta, tb) = (of(a), of(b));
    let (mut both, mut only_a, mut only_b, mut neither) = (0, 0, 0, 0);
    for (key, sa) in &ta {
        match (sa, tb.get(key)) {
            (_, None) => {}
            (true, Some(true)) => both += 1,
            (true, Some(false)) => only_a += 1,
            (false, Some(true)) => only_b += 1,
            (false, Some(false)) => neither += 1,
        }
    }
    let paired = both + only_a + only_b + neither;
    let p_value = stats::mcnemar_exact(only_a, only_b);
    let better = (p_value < ALPHA).then_some(if only_a > only_b { a } else { b });
    let what = if repeated { "trials" } else { "tasks" };
    let verdict = match better {
        _ if paired == 0 => format!("`{a}` and `{b}` ran none of the same {what}: not compared"),
        Some(w) => {
            let l = if w == a { b } else { a };
            format!("`{w}` solved more than `{l}` ({})", p_text(p_value))
        }
        None => format!("no difference detected with {paired} paired {what}"),
    };
    PairReport {
        a: a.into(),
        b: b.into(),
        paired,
        both_solved: both,
        only_a,
        only_b,
        neither,
        p_value,
        better: better.map(str::to_string),
        verdict,
    }
}

fn find<'a>(pairs: &'a [PairReport], x: &str, y: &str) -> Option<&'a PairReport> {
    pairs
        .iter()
        .find(|p| (p.a == x && p.b == y) || (p.a == y && p.b == x))
}

fn recommend(settings: &[SettingReport], pairs: &[PairReport]) -> Recommendation {
    let ran: Vec<&SettingReport> = settings.iter().filter(|s| s.trials > 0).collect();
    let none = |best: Option<&str>, text: String| Recommendation {
        setting: None,
        best: best.map(str::to_string),
        cost_ratio: None,
        text,
    };
    let best = match ran.as_slice() {
        [] => return none(None, "no trials recorded: nothing to compare yet".into()),
        [only] => {
            return none(
                (only.solved > 0).then_some(only.setting.as_str()),
                format!(
                    "only `{}` ran: {} solved ({}); bench a second setting to compare",
                    only.setting,
                    fraction(only),
                    interval_text(only)
                ),
            );
        }
        _ => ran
            .iter()
            .copied()
            .reduce(|x, y| {
                let key = |s: &SettingReport| (s.solve_rate.unwrap_or(0.0), s.solved);
                if key(y) > key(x) { y } else { x }
            })
            .expect("two or more"),
    };
    if best.solved == 0 {
        return none(
            None,
            format!(
                "no setting solved a task ({} trials in all)",
                ran.iter().map(|s| s.trials).sum::<u64>()
            ),
        );
    }
    // As good as the best: the paired test does not say the best solved
    // more, on at least one shared pair (never compared is not as good).
    // The best first, so that it wins a tie on cost.
    let as_good: Vec<&SettingReport> = std::iter::once(best)
        .chain(ran.iter().copied().filter(|s| {
            s.setting != best.setting
                && find(pairs, &best.setting, &s.setting)
                    .is_some_and(|p| p.paired > 0 && p.better.is_none())
        }))
        .collect();
    // The others as good whose cost is unknown (the best's own is said
    // where it matters).
    let unknown: Vec<String> = as_good[1..]
        .iter()
        .filter(|s| s.cost_per_solved_usd.is_none())
        .map(|s| format!("`{}`", s.setting))
        .collect();
    let unknown_note = || match unknown.as_slice() {
        [] => String::new(),
        [one] => format!(
            "; {one} may be as good, but its cost per solved task is unknown, so it cannot \
                 be called cheaper"
        ),
        many => format!(
            "; {} may be as good, but their cost per solved task is unknown, so they cannot \
                 be called cheaper",
            many.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let cheapest = as_good
        .iter()
        .copied()
        .filter_map(|s| s.cost_per_solved_usd.map(|c| (s, c)))
        .reduce(|x, y| if y.1 < x.1 { y } else { x });
    let Some((pick, cost)) = cheapest else {
        return Recommendation {
            setting: Some(best.setting.clone()),
            best: Some(best.setting.clone()),
            cost_ratio: None,
            text: format!(
                "for this repository: `{}` solves the most ({}); its cost per solved task is \
                 unknown ({}), so no setting can be called cheapest{}",
                best.setting,
                fraction(best),
                best.cost_note.as_deref().unwrap_or("unpriced"),
                unknown_note()
            ),
        };
    };
    if pick.setting == best.setting {
        let others = as_good.len() - 1;
        let tail = if others == 0 {
            "; every other setting solved fewer (p < 0.05)".to_string()
        } else {
            format!(
                ", the lowest cost among the {} settings the paired test cannot tell apart",
                others + 1
            )
        };
        return Recommendation {
            setting: Some(best.setting.clone()),
            best: Some(best.setting.clone()),
            cost_ratio: None,
            text: format!(
                "for this repository: `{}` solves the most ({}) at {} per solved task{tail}{}",
                best.setting,
                fraction(best),
                usd(cost),
                unknown_note()
            ),
        };
    }
    let p = find(pairs, &best.setting, &pick.setting).map_or(1.0, |p| p.p_value);
    let ratio = best.cost_per_solved_usd.map(|b| b / cost);
    let price = match ratio {
        Some(r) => format!("at {}", ratio_text(r)),
        None => format!(
            "at {} per solved task (`{}`'s is unknown: {})",
            usd(cost),
            best.setting,
            best.cost_note.as_deref().unwrap_or("unpriced")
        ),
    };
    Recommendation {
        setting: Some(pick.setting.clone()),
        best: Some(best.setting.clone()),
        cost_ratio: ratio,
        text: format!(
            "for this repository: `{}` solves as many as `{}` ({} vs {}, {}) {price}{}",
            pick.setting,
            best.setting,
            fraction(pick),
            fraction(best),
            p_text(p),
            unknown_note()
        ),
    }
}

/// `14/20`.
pub fn fraction(s: &SettingReport) -> String {
    format!("{}/{}", s.solved, s.trials)
}

/// `95 % interval 48–85 %`.
pub fn interval_text(s: &SettingReport) -> String {
    match s.interval {
        Some(i) => format!("95 % interval {}", percent_range(i)),
        None => "no trials".into(),
    }
}

/// `48–85 %`.
pub fn percent_range(i: Interval) -> String {
    format!("{:.0}–{:.0} %", i.low * 100.0, i.high * 100.0)
}

/// `p = 0.02`, `p = 1.0`, `p = 0.004`, `p < 0.001`; `p < 0.05` for a p
/// just under the threshold that two decimals would show as 0.05.
pub fn p_text(p: f64) -> String {
    if p < 0.001 {
        return "p < 0.001".into();
    }
    let s = if p < 0.01 {
        format!("{p:.3}")
    } else {
        format!("{p:.2}")
    };
    // Rounded up to the threshold, a significant p would read as not.
    if p < ALPHA && s.parse::<f64>().is_ok_and(|shown| shown >= ALPHA) {
        return format!("p < {ALPHA}");
    }
    let s = s.trim_end_matches('0');
    let s = if s.ends_with('.') {
        format!("{s}0")
    } else {
        s.to_string()
    };
    format!("p = {s}")
}

/// `$0.12`, `$0.0042`, `$12.30`.
pub fn usd(x: f64) -> String {
    if x >= 0.1 || x == 0.0 {
        format!("${x:.2}")
    } else {
        format!("${x:.4}")
    }
}

/// How much cheaper, from best / picked: `1/9 the cost`, `62 % of the cost`.
fn ratio_text(r: f64) -> String {
    if r >= 1.95 {
        format!("1/{:.0} the cost", r.round())
    } else {
        format!("{:.0} % of the cost", 100.0 / r)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A trial of `task` by `setting` (repeat 0), `cost` dollars.
    pub fn trial(task: &str, setting: &str, solved: bool, cost: Option<f64>) -> Trial {
        Trial {
            task: task.into(),
            setting: setting.into(),
            repeat: 0,
            solved,
            still_failing: if solved { vec![] } else { vec!["t".into()] },
            broken: vec![],
            tampered_tests: vec![],
            status: "ok".into(),
            failure_kind: None,
            tokens: Some(1000),
            cost_usd: cost,
            wall_ms: 60_000,
            diff_lines: 10,
            started_at_ms: 1,
            ended_at_ms: 2,
            attempts: 1,
            solved_on: solved.then_some(1),
            repair_rounds: 0,
        }
    }

    pub fn spec(settings: &[&str]) -> Spec {
        Spec {
            format: 1,
            id: "b0000000000001".into(),
            set: "/nowhere/set".into(),
            settings: settings.iter().map(|s| s.to_string()).collect(),
            repeat: 1,
            shard: None,
            created_at_ms: 0,
            options: Default::default(),
        }
    }

    /// `n` tasks split four ways between `a` and `b`: both solved, only
    /// a, only b, neither; each trial of `a` costs `ca`, of `b` `cb`.
    pub fn split(
        (a, ca): (&str, Option<f64>),
        (b, cb): (&str, Option<f64>),
        [both, only_a, only_b, neither]: [usize; 4],
    ) -> Vec<Trial> {
        let mut out = Vec::new();
        let groups = [
            (true, true, both),
            (true, false, only_a),
            (false, true, only_b),
            (false, false, neither),
        ];
        let mut n = 0;
        for (sa, sb, count) in groups {
            for _ in 0..count {
                let id = format!("task-{n:02}");
                out.push(trial(&id, a, sa, ca));
                out.push(trial(&id, b, sb, cb));
                n += 1;
            }
        }
        out
    }

    fn no_set() -> Result<&'static [Task], String> {
        Err("gone".into())
    }

    #[test]
    fn the_issues_example_reads_as_the_issue_says() {
        let trials = split(
            ("claude:opus", Some(0.675)),
            ("pi:glm-5.2", Some(0.07)),
            [13, 2, 1, 4],
        );
        let r = build(&spec(&["claude:opus", "pi:glm-5.2"]), &trials, no_set());
        let (opus, pi) = (&r.settings[0], &r.settings[1]);
        assert_eq!((opus.trials, opus.solved, pi.solved), (20, 15, 14));
        assert_eq!(opus.solve_rate, Some(0.75));
        assert_eq!(pi.solve_rate, Some(0.7));
        let i = pi.interval.unwrap();
        assert_eq!(
            ((i.low * 1e4).round(), (i.high * 1e4).round()),
            (4810.0, 8545.0)
        );
        assert!((opus.cost_per_solved_usd.unwrap() - 0.9).abs() < 1e-12);
        assert!((pi.cost_per_solved_usd.unwrap() - 0.1).abs() < 1e-12);
        let p = &r.pairs[0];
        assert_eq!(
            (p.paired, p.both_solved, p.only_a, p.only_b, p.neither),
            (20, 13, 2, 1, 4)
        );
        assert_eq!(p.p_value, 1.0);
        assert_eq!(p.better, None);
        assert_eq!(p.verdict, "no difference detected with 20 paired tasks");
        assert_eq!(
            r.recommendation.text,
            "for this repository: `pi:glm-5.2` solves as many as `claude:opus` (14/20 vs 15/20, \
             p = 1.0) at 1/9 the cost"
        );
        assert_eq!(r.recommendation.setting.as_deref(), Some("pi:glm-5.2"));
        assert_eq!(r.recommendation.best.as_deref(), Some("claude:opus"));
        assert!((r.recommendation.cost_ratio.unwrap() - 9.0).abs() < 1e-9);
        assert_eq!((r.trials, r.tasks_run, r.set_tasks), (40, 20, None));
        assert_eq!(r.set_note.as_deref(), Some("gone"));
    }

    #[test]
    fn a_difference_is_claimed_only_when_the_paired_test_supports_it() {
        // 8 discordant pairs all one way: p = 2/256.
        let trials = split(("a", Some(1.0)), ("b", Some(0.01)), [2, 8, 0, 0]);
        let r = build(&spec(&["a", "b"]), &trials, no_set());
        let p = &r.pairs[0];
        assert_eq!(p.p_value, 0.0078125);
        assert_eq!(p.better.as_deref(), Some("a"));
        assert_eq!(p.verdict, "`a` solved more than `b` (p = 0.008)");
        // b is far cheaper, but not as good: a is recommended.
        assert_eq!(
            r.recommendation.text,
            "for this repository: `a` solves the most (10/10) at $1.00 per solved task; every \
             other setting solved fewer (p < 0.05)"
        );
        // The same the other way round names b.
        let trials = split(("a", Some(1.0)), ("b", Some(1.0)), [0, 0, 6, 1]);
        let p = &build(&spec(&["a", "b"]), &trials, no_set()).pairs[0];
        assert_eq!(p.verdict, "`b` solved more than `a` (p = 0.03)");
        // 5 of 5 one way is not enough (p = 0.0625).
        let trials = split(("a", Some(1.0)), ("b", Some(1.0)), [0, 5, 0, 0]);
        let r = build(&spec(&["a", "b"]), &trials, no_set());
        assert_eq!(r.pairs[0].better, None);
        assert_eq!(
            r.pairs[0].verdict,
            "no difference detected with 5 paired tasks"
        );
        // b solved nothing: no cost per solved task, so it cannot be the pick.
        assert_eq!(r.settings[1].cost_note.as_deref(), Some("no task solved"));
        assert!(
            r.recommendation.text.ends_with(
                "at $1.00 per solved task, the lowest cost among the 2 settings the paired test \
             cannot tell apart; `b` may be as good, but its cost per solved task is unknown, so \
             it cannot be called cheaper"
            ),
            "{}",
            r.recommendation.text
        );
    }

    #[test]
    fn unpriced_settings_are_never_called_cheapest() {
        let trials = split(("a", Some(2.0)), ("b", None), [5, 1, 0, 0]);
        let r = build(&spec(&["a", "b"]), &trials, no_set());
        let b = &r.settings[1];
        assert_eq!(
            (b.cost_usd, b.cost_per_solved_usd, b.unpriced_trials),
            (None, None, 6)
        );
        assert_eq!(
            b.cost_note.as_deref(),
            Some(
                "6 of 6 trials unpriced: the CLI reported no cost and baton has no price for the model"
            )
        );
        assert_eq!(r.recommendation.setting.as_deref(), Some("a"));
        assert_eq!(
            r.recommendation.text,
            "for this repository: `a` solves the most (6/6) at $2.00 per solved task, the lowest \
             cost among the 2 settings the paired test cannot tell apart; `b` may be as good, but \
             its cost per solved task is unknown, so it cannot be called cheaper"
        );
        // One unpriced trial is enough to leave the sum out.
        let mut trials = split(("a", Some(2.0)), ("b", Some(1.0)), [5, 0, 0, 1]);
        trials[0].cost_usd = None;
        let r = build(&spec(&["a", "b"]), &trials, no_set());
        assert_eq!(r.settings[0].cost_usd, None);
        assert_eq!(r.settings[0].unpriced_trials, 1);
        assert_eq!(
            r.recommendation.text,
            "for this repository: `b` solves as many as `a` (5/6 vs 5/6, p = 1.0) at $1.20 per \
             solved task (`a`'s is unknown: 1 of 6 trials unpriced: the CLI reported no cost and \
             baton has no price for the model)"
        );
        // Nobody priced: the best, and no claim about cost.
        let trials = split(("a", None), ("b", None), [3, 1, 0, 0]);
        let r = build(&spec(&["a", "b"]), &trials, no_set());
        assert_eq!(
            r.recommendation.text,
            "for this repository: `a` solves the most (4/4); its cost per solved task is unknown \
             (4 of 4 trials unpriced: the CLI reported no cost and baton has no price for the \
             model), so no setting can be called cheapest; `b` may be as good, but its cost per \
             solved task is unknown, so it cannot be called cheaper"
        );
    }

    #[test]
    fn several_unpriced_settings_are_named_together() {
        let mut trials = split(("a", Some(1.0)), ("b", None), [3, 0, 0, 0]);
        let c: Vec<Trial> = trials
            .iter()
            .filter(|t| t.setting == "b")
            .map(|t| Trial {
                setting: "c".into(),
                ..t.clone()
            })
            .collect();
        trials.extend(c);
        let r = build(&spec(&["a", "b", "c"]), &trials, no_set());
        assert_eq!(
            r.recommendation.text,
            "for this repository: `a` solves the most (3/3) at $1.00 per solved task, the lowest \
             cost among the 3 settings the paired test cannot tell apart; `b`, `c` may be as good, \
             but their cost per solved task is unknown, so they cannot be called cheaper"
        );
    }

    #[test]
    fn with_no_trials_one_setting_or_nothing_solved_it_says_what_it_can() {
        let r = build(&spec(&["a", "b"]), &[], no_set());
        assert_eq!(
            r.recommendation.text,
            "no trials recorded: nothing to compare yet"
        );
        assert_eq!(r.recommendation.setting, None);
        assert_eq!(r.settings.len(), 2);
        assert_eq!(r.settings[0].solve_rate, None);
        assert_eq!(r.settings[0].interval, None);
        assert_eq!(r.settings[0].cost_note.as_deref(), Some("no trials"));
        assert_eq!(
            r.pairs[0].verdict,
            "`a` and `b` ran none of the same tasks: not compared"
        );

        let trials: Vec<Trial> = (0..20)
            .map(|i| trial(&format!("t{i:02}"), "a", i < 14, Some(0.5)))
            .collect();
        let r = build(&spec(&["a"]), &trials, no_set());
        assert_eq!(
            r.recommendation.text,
            "only `a` ran: 14/20 solved (95 % interval 48–85 %); bench a second setting to compare"
        );
        assert!(r.pairs.is_empty());

        let trials = split(("a", Some(1.0)), ("b", Some(1.0)), [0, 0, 0, 3]);
        let r = build(&spec(&["a", "b"]), &trials, no_set());
        assert_eq!(
            r.recommendation.text,
            "no setting solved a task (6 trials in all)"
        );
        assert_eq!(r.recommendation.best, None);
    }

    #[test]
    fn settings_that_never_shared_a_task_are_not_called_as_good() {
        let trials = vec![
            trial("x", "a", true, Some(1.0)),
            trial("y", "b", true, Some(0.1)),
        ];
        let r = build(&spec(&["a", "b"]), &trials, no_set());
        assert_eq!(r.pairs[0].paired, 0);
        assert_eq!(r.recommendation.setting.as_deref(), Some("a"));
        assert!(
            r.recommendation
                .text
                .contains("every other setting solved fewer")
        );
    }

    #[test]
    fn per_setting_sums_medians_kinds_and_tampering() {
        let mut trials = split(("a", Some(0.25)), ("b", Some(0.5)), [1, 1, 1, 1]);
        // a's four trials: wall 10, 20, 30, 40 s; tokens 100, none, 300, 400.
        for (i, t) in trials.iter_mut().filter(|t| t.setting == "a").enumerate() {
            t.wall_ms = 10_000 * (i as u64 + 1);
            t.tokens = (i != 1).then_some(100 * (i as u64 + 1));
            t.diff_lines = i as u64;
        }
        let a_failed: Vec<usize> = trials
            .iter()
            .enumerate()
            .filter(|(_, t)| t.setting == "a" && !t.solved)
            .map(|(i, _)| i)
            .collect();
        trials[a_failed[0]].failure_kind = Some("rate_limited".into());
        trials[a_failed[0]].status = "failed".into();
        trials[0].tampered_tests = vec!["conftest.py".into()];
        // A setting the spec does not name (a merged run): after the spec's.
        trials.push(trial("task-00", "0-extra", false, Some(0.0)));
        let r = build(&spec(&["b", "a"]), &trials, no_set());
        let names: Vec<&str> = r.settings.iter().map(|s| s.setting.as_str()).collect();
        assert_eq!(names, ["b", "a", "0-extra"]);
        let a = &r.settings[1];
        assert_eq!((a.trials, a.solved), (4, 2));
        assert_eq!(a.cost_usd, Some(1.0));
        assert_eq!(a.cost_per_solved_usd, Some(0.5));
        assert_eq!(a.median_wall_ms, Some(25_000.0));
        assert_eq!(
            (a.tokens, a.median_tokens, a.trials_without_tokens),
            (800, Some(300.0), 1)
        );
        assert_eq!(a.median_diff_lines, Some(1.5));
        assert_eq!(
            a.failure_kinds,
            BTreeMap::from([("rate_limited".to_string(), 1)])
        );
        assert_eq!((a.tests_failed, a.tampered_trials), (1, 1));
        assert_eq!(r.settings[2].cost_usd, Some(0.0));
        assert_eq!(r.settings[2].cost_note.as_deref(), Some("no task solved"));
        assert_eq!(r.pairs.len(), 3);
        assert_eq!((r.pairs[0].a.as_str(), r.pairs[0].b.as_str()), ("b", "a"));
    }

    #[test]
    fn tasks_are_named_from_the_set_and_counted_with_it() {
        let task: Task = serde_json::from_value(serde_json::json!({
            "format": 1, "id": "task-00", "base": "a".repeat(40), "commit": "b".repeat(40),
            "task": "\n  Fix the parser  \nmore text", "source_files": [], "test_files": [],
            "test_patch": "", "test_cmd": {"runner": "cargo", "command": "cargo test"},
            "fail_to_pass": [], "pass_to_pass": [], "mined_at_ms": 1, "mined_by": "baton"
        }))
        .unwrap();
        let mut other = task.clone();
        other.id = "zz-unrun".into();
        other.task = "x".repeat(150);
        let set = vec![task, other];
        let trials = vec![
            trial("task-00", "a", true, None),
            trial("gone", "a", false, None),
        ];
        let r = build(&spec(&["a"]), &trials, Ok(&set));
        assert_eq!(
            (r.set_tasks, r.tasks_run, r.set_note.as_deref()),
            (Some(2), 2, None)
        );
        let ids: Vec<&str> = r.tasks.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["gone", "task-00", "zz-unrun"]);
        assert_eq!(r.tasks[0].title, None);
        assert_eq!(r.tasks[1].title.as_deref(), Some("Fix the parser"));
        assert_eq!(
            r.tasks[2].title.as_deref(),
            Some(format!("{}…", "x".repeat(100)).as_str())
        );
        assert_eq!(
            r.tasks[1].results,
            [TaskResult {
                setting: "a".into(),
                trials: 1,
                solved: 1
            }]
        );
        assert_eq!(r.tasks[2].results[0].trials, 0);
    }

    #[test]
    fn repeats_are_paired_by_task_and_repeat() {
        let mut trials = Vec::new();
        for r in 0..3 {
            for (s, solved) in [("a", true), ("b", r == 0)] {
                let mut t = trial("t", s, solved, Some(1.0));
                t.repeat = r;
                trials.push(t);
            }
        }
        let r = build(&spec(&["a", "b"]), &trials, no_set());
        let p = &r.pairs[0];
        assert_eq!((p.paired, p.both_solved, p.only_a), (3, 1, 2));
        assert_eq!(p.verdict, "no difference detected with 3 paired trials");
    }

    #[test]
    fn numbers_are_written_for_people_the_same_way_everywhere() {
        assert_eq!(p_text(1.0), "p = 1.0");
        assert_eq!(p_text(0.999), "p = 1.0");
        assert_eq!(p_text(0.5), "p = 0.5");
        assert_eq!(p_text(0.0386), "p = 0.04");
        assert_eq!(p_text(0.02), "p = 0.02");
        assert_eq!(p_text(0.0078125), "p = 0.008");
        assert_eq!(p_text(0.0004), "p < 0.001");
        assert_eq!(p_text(0.0496), "p < 0.05");
        assert_eq!(p_text(0.05), "p = 0.05");
        assert_eq!(p_text(0.0549), "p = 0.05");
        assert_eq!(usd(0.9), "$0.90");
        assert_eq!(usd(12.3), "$12.30");
        assert_eq!(usd(0.0042), "$0.0042");
        assert_eq!(usd(0.0), "$0.00");
        assert_eq!(ratio_text(9.0), "1/9 the cost");
        assert_eq!(ratio_text(2.0), "1/2 the cost");
        assert_eq!(ratio_text(1.6), "62 % of the cost");
        assert_eq!(ratio_text(1.0), "100 % of the cost");
        assert_eq!(
            percent_range(Interval {
                low: 0.4810,
                high: 0.8545
            }),
            "48–85 %"
        );
    }
}
