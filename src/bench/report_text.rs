//! `bench report --text`: the report for people. A table per setting, the
//! paired verdicts, the recommendation line. Every cell passes through
//! `render::table` (settings, task ids and failure kinds come from files
//! anyone could have written), the whole through `output::text`.

use super::report::{Report, SettingReport, p_text, percent_range, usd};
use crate::output::render::{Render, table};

impl Render for Report {
    fn text(&self) -> String {
        let mut out = format!(
            "bench {} · set {} ({}) · repeat {} · {} trials\n",
            self.bench_id,
            self.set,
            match (self.set_tasks, self.tasks_run) {
                (Some(n), run) => format!("{n} tasks, {run} run"),
                (None, run) => format!("{run} tasks run"),
            },
            self.repeat,
            self.trials
        );
        if let Some(s) = self.shard {
            out.push_str(&format!("shard {}/{} of the run\n", s.index, s.of));
        }
        if let Some(why) = &self.set_note {
            out.push_str(&format!("the set's tasks are not named: {why}\n"));
        }
        out.push('\n');
        out.push_str(&settings_table(&self.settings));
        let notes: Vec<String> = self
            .settings
            .iter()
            .filter(|s| s.trials > 0)
            .filter_map(|s| {
                let why = s.cost_note.as_ref()?;
                Some(format!(
                    "  `{}`: no cost per solved task: {why}\n",
                    s.setting
                ))
            })
            .collect();
        out.push_str(&notes.concat());
        if self.attempts > 1 || self.until_green > 0 {
            out.push_str(&format!(
                "up to {} attempt(s) a trial, {} repair turn(s) an attempt from the visible tests:\n",
                self.attempts, self.until_green
            ));
            for s in self.settings.iter().filter(|s| s.trials > 0) {
                out.push_str(&format!(
                    "  `{}`: pass@1 {}/{}, pass@{} {}/{} ({} attempts, {} repair turns)\n",
                    s.setting,
                    s.solved_first_attempt,
                    s.trials,
                    self.attempts,
                    s.solved,
                    s.trials,
                    s.attempts_made,
                    s.repair_rounds
                ));
            }
        }
        if !self.pairs.is_empty() {
            out.push_str("\npaired on the same (task, repeat):\n");
            let mut rows = vec![
                [
                    "a", "b", "both", "only a", "only b", "neither", "p", "verdict",
                ]
                .map(String::from)
                .to_vec(),
            ];
            for p in &self.pairs {
                rows.push(vec![
                    p.a.clone(),
                    p.b.clone(),
                    p.both_solved.to_string(),
                    p.only_a.to_string(),
                    p.only_b.to_string(),
                    p.neither.to_string(),
                    p_column(p.p_value),
                    p.verdict.clone(),
                ]);
            }
            out.push_str(&indent(&table(&rows)));
        }
        out.push('\n');
        out.push_str(&self.recommendation.text);
        out.push('\n');
        if let Some(d) = &self.describe {
            out.push_str(&d.line());
            out.push('\n');
        }
        if let Some(h) = &self.html {
            out.push_str(&format!("page: {h}\n"));
        }
        out
    }

    fn exit_code(&self) -> i32 {
        0
    }
}

fn settings_table(settings: &[SettingReport]) -> String {
    let dash = || "-".to_string();
    let mut rows = vec![
        [
            "setting",
            "solved",
            "rate",
            "95 % interval",
            "$/solved",
            "cost",
            "wall (median)",
            "tokens",
            "tokens (median)",
            "tampered",
            "not solved: why",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for s in settings {
        rows.push(vec![
            s.setting.clone(),
            format!("{}/{}", s.solved, s.trials),
            s.solve_rate
                .map_or_else(dash, |r| format!("{:.0} %", r * 100.0)),
            s.interval.map_or_else(dash, percent_range),
            s.cost_per_solved_usd.map_or_else(dash, usd),
            s.cost_usd.map_or_else(dash, usd),
            s.median_wall_ms.map_or_else(dash, duration),
            s.tokens.to_string(),
            s.median_tokens.map_or_else(dash, |t| format!("{t:.0}")),
            s.tampered_trials.to_string(),
            why(s),
        ]);
    }
    table(&rows)
}

/// `tests 3, rate_limited 1`: why the unsolved trials were not solved.
fn why(s: &SettingReport) -> String {
    let mut parts = Vec::new();
    if s.tests_failed > 0 {
        parts.push(format!("tests {}", s.tests_failed));
    }
    parts.extend(s.failure_kinds.iter().map(|(k, n)| format!("{k} {n}")));
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(", ")
    }
}

/// `1.0`, `0.008`, `< 0.001`.
fn p_column(p: f64) -> String {
    let t = p_text(p);
    t.strip_prefix("p = ")
        .or_else(|| t.strip_prefix("p "))
        .unwrap_or(&t)
        .to_string()
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("  {l}\n")).collect()
}

/// `4.2s`, `42s`, `3m 05s`, `1h 02m`.
pub fn duration(ms: f64) -> String {
    let s = ms / 1000.0;
    if s < 10.0 {
        return format!("{s:.1}s");
    }
    let s = s.round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::super::report::build;
    use super::super::report::tests::{spec, split};
    use super::*;

    #[test]
    fn the_text_has_a_row_per_setting_the_verdicts_and_the_recommendation() {
        let mut trials = split(
            ("claude:opus", Some(0.675)),
            ("pi:glm-5.2", None),
            [13, 2, 1, 4],
        );
        trials[27].failure_kind = Some("timeout".into());
        let r = build(
            &spec(&["claude:opus", "pi:glm-5.2"]),
            &trials,
            Err("gone".into()),
        );
        let t = r.text();
        let want = "\
bench b0000000000001 · set /nowhere/set (20 tasks run) · repeat 1 · 40 trials
the set's tasks are not named: gone

setting      solved  rate  95 % interval  $/solved  cost    wall (median)  tokens  tokens (median)  tampered  not solved: why
claude:opus  15/20   75 %  53–89 %        $0.90     $13.50  1m 00s         20000   1000             0         tests 5
pi:glm-5.2   14/20   70 %  48–85 %        -         -       1m 00s         20000   1000             0         tests 5, timeout 1
  `pi:glm-5.2`: no cost per solved task: 20 of 20 trials unpriced: the CLI reported no cost and baton has no price for the model

paired on the same (task, repeat):
  a            b           both  only a  only b  neither  p    verdict
  claude:opus  pi:glm-5.2  13    2       1       4        1.0  no difference detected with 20 paired tasks

for this repository: `claude:opus` solves the most (15/20) at $0.90 per solved task, the lowest cost among the 2 settings the paired test cannot tell apart; `pi:glm-5.2` may be as good, but its cost per solved task is unknown, so it cannot be called cheaper
";
        assert_eq!(t, want, "{t}");
    }

    #[test]
    fn durations_for_people() {
        assert_eq!(duration(4_200.0), "4.2s");
        assert_eq!(duration(42_000.0), "42s");
        assert_eq!(duration(185_000.0), "3m 05s");
        assert_eq!(duration(3_720_000.0), "1h 02m");
    }
}
