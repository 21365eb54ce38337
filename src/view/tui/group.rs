//! A council as rows of the fleet: a header row (its status, `council
//! <kind>`, stage, elapsed, tokens), then one indented row per member run.
//!
//! The rows are `JobView`s marked with their `Row`, so the table, the
//! selection and the detail pane treat them as they treat jobs; `app`
//! keeps a group together when it sorts.

use crate::view::group::GroupView;
use crate::view::watch::{JobView, Row};

/// What a fan-out's header row shows as its agent (and how it is told from
/// a council's: both are groups of runs).
pub const FANOUT: &str = "fan-out";

/// Whether `v` is a fan-out's header row.
pub fn is_fanout(v: &JobView) -> bool {
    v.row == Row::Council && v.agent == FANOUT
}

/// The row id of a council's run: `<council id>/<run name>` (a job id
/// never holds a `/`).
pub fn run_id(council: &str, name: &str) -> String {
    format!("{council}/{name}")
}

/// The council's rows at `now`: its header, then its runs.
pub fn rows(c: &GroupView, now: u64) -> Vec<JobView> {
    let running = c.status == "running";
    // The header's "last" is its freshest run's; an ended council's is
    // since it stopped (what decides for how long a failure needs attention).
    let last = if running {
        c.runs.iter().filter_map(|r| r.last_activity_age_ms).min()
    } else {
        Some(now.saturating_sub(c.created_ms + c.elapsed_ms))
    };
    let mut out = vec![JobView {
        job_id: c.council_id.clone(),
        status: c.status,
        agent: match c.kind.as_str() {
            "fanout" => FANOUT.to_string(),
            "bench" => "bench run".to_string(),
            k => format!("council {k}"),
        },
        model: None,
        task: c.task.clone(),
        created_ms: c.created_ms,
        elapsed_ms: c.elapsed_ms,
        doing: Some(match &c.progress {
            Some(p) => crate::view::bench::line(p),
            None => format!("stage {}", c.stage),
        }),
        files_changed: Vec::new(),
        usage: c.usage.clone(),
        last_activity_age_ms: last,
        row: Row::Council,
    }];
    let n = c.runs.len();
    for (i, r) in c.runs.iter().enumerate() {
        let what = format!("{} {}", r.stage, r.who);
        out.push(JobView {
            job_id: run_id(&c.council_id, &r.name),
            status: r.status,
            agent: r.agent.clone(),
            model: r.model.clone(),
            task: format!(
                "{what} ({}) of {} {}: {}",
                r.role,
                match c.kind.as_str() {
                    "fanout" => "fan-out",
                    "bench" => "bench run",
                    _ => "council",
                },
                c.council_id,
                c.task
            ),
            created_ms: c.created_ms,
            elapsed_ms: r.elapsed_ms,
            doing: Some(match &r.doing {
                Some(d) => format!("{} · {d}", r.stage),
                None => r.stage.clone(),
            }),
            files_changed: Vec::new(),
            usage: r.usage.clone(),
            last_activity_age_ms: r.last_activity_age_ms,
            row: Row::Run {
                council: c.council_id.clone(),
                who: match r.round {
                    Some(n) => format!("{} r{n}", r.who),
                    None => r.who.clone(),
                },
                log: r.log.clone(),
                last: i + 1 == n,
            },
        });
    }
    out
}

/// What the ID column shows: a run's tree glyph and who ran it.
pub fn label(v: &JobView) -> String {
    match &v.row {
        Row::Run { last, who, .. } => format!("{} {who}", if *last { "└─" } else { "├─" }),
        _ => v.job_id.clone(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::result::Usage;
    use crate::view::group::RunView;

    pub(crate) fn council() -> GroupView {
        let run = |name: &str, who: &str, status: &'static str, doing: Option<&str>| RunView {
            name: name.into(),
            stage: "proposing".into(),
            who: who.into(),
            role: "member".into(),
            agent: "codex".into(),
            model: None,
            status,
            elapsed_ms: 30_000,
            doing: doing.map(str::to_string),
            usage: Usage::default(),
            last_activity_age_ms: Some(1_000),
            log: None,
            round: None,
        };
        GroupView {
            council_id: "1m8q4fhzzzzzz".into(),
            kind: "plan".into(),
            stage: "proposing",
            status: "running",
            task: "add a flag".into(),
            created_ms: 10,
            elapsed_ms: 31_000,
            members: Vec::new(),
            usage: Usage::default(),
            runs: vec![
                run("proposing-m0", "m0", "running", Some("$ make")),
                run("proposing-m1", "m1", "ok", None),
            ],
            progress: None,
        }
    }

    #[test]
    fn a_council_is_a_header_then_its_runs_last_one_closing_the_tree() {
        let rows = rows(&council(), 100_000);
        assert_eq!(rows.len(), 3);
        assert_eq!(
            (rows[0].row.clone(), rows[0].agent.as_str()),
            (Row::Council, "council plan")
        );
        assert_eq!(rows[0].doing.as_deref(), Some("stage proposing"));
        assert_eq!(label(&rows[1]), "├─ m0");
        assert_eq!(label(&rows[2]), "└─ m1");
        assert_eq!(rows[1].doing.as_deref(), Some("proposing · $ make"));
        assert_eq!(rows[1].job_id, "1m8q4fhzzzzzz/proposing-m0");
        assert_eq!(rows[0].last_activity_age_ms, Some(1_000));
    }

    #[test]
    fn a_bench_run_heads_its_trials_in_flight_with_its_progress() {
        let mut b = council();
        b.kind = "bench".into();
        b.stage = "running";
        b.progress = Some(crate::view::group::BenchProgress {
            done: 3,
            total: Some(8),
            solved: 2,
        });
        b.runs.truncate(1);
        b.runs[0].stage = "writing".into();
        b.runs[0].who = "task-add.codex_fix.0".into();
        let rows = rows(&b, 100_000);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].agent, "bench run");
        assert_eq!(rows[0].doing.as_deref(), Some("3/8 trials, 2 solved"));
        assert_eq!(label(&rows[1]), "└─ task-add.codex_fix.0");
        assert!(
            rows[1].task.contains("of bench run 1m8q4fhzzzzzz"),
            "{}",
            rows[1].task
        );
    }
}
