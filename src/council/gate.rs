//! Stages 9–10, their decisions: whether the writer gets another repair
//! round, and whether the council ends `ready` or `needs_human`.
//!
//! Pure functions over the structured fields (the oracle's verdict, the
//! reviews' verdicts, findings and `files_reviewed`); no prose is read.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::review::{MergedFinding, dedup, normalize_path};
use super::schema::{Review, Severity, Verdict};
use crate::agent::vendor::UNKNOWN;
use crate::worktree::oracle::Verification;

/// How the council ends, as far as the gates decide (`failed` and
/// `cancelled` come from the run itself, not from here).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "gate", rename_all = "snake_case")]
pub enum Gate {
    /// Tests pass, a reviewer of another vendor than the writer's approves,
    /// none rejects, no blocker or major finding is open, and every changed
    /// file was read by some reviewer.
    Ready,
    /// Any of those failed: `reason` lists every one ("; "-separated),
    /// `coverage_gap` the changed files no reviewer read.
    NeedsHuman {
        reason: String,
        coverage_gap: Vec<String>,
    },
}

/// The findings that keep a change from being ready.
pub const OPEN_SEVERITY: Severity = Severity::Major;

/// Whether two vendors are known and differ. An unknown vendor is never
/// "another" vendor: the gate cannot prove independence it cannot see.
pub fn other_vendor(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim(), b.trim());
    !a.is_empty() && !b.is_empty() && a != UNKNOWN && b != UNKNOWN && !a.eq_ignore_ascii_case(b)
}

/// The terminal gate. `reviews` are `(label, vendor, review)` of the
/// reviewers who answered; `changed_files` is base..branch.
pub fn terminal(
    verification: &Verification,
    reviews: &[(String, String, Review)],
    writer_vendor: &str,
    changed_files: &[String],
) -> Gate {
    let mut reasons = Vec::new();
    if changed_files.is_empty() {
        reasons.push("the writer changed no file".to_string());
    }
    match &verification.command {
        None => reasons.push(
            verification
                .not_run
                .clone()
                .unwrap_or_else(|| "the plan names no test command".into())
                + ": nothing proves the change works",
        ),
        Some(_) if verification.passed => {}
        Some(cmd) => reasons.push(match (&verification.not_run, verification.timed_out) {
            (Some(why), _) => format!("the tests were not run: {why}"),
            (None, true) => format!("the tests timed out (`{cmd}`)"),
            (None, false) => format!(
                "the tests failed (`{cmd}`, {})",
                verification
                    .exit_code
                    .map_or("no exit code".to_string(), |c| format!("exit code {c}"))
            ),
        }),
    }
    if reviews.is_empty() {
        reasons.push("no reviewer returned a valid review".into());
    } else if !reviews
        .iter()
        .any(|(_, v, r)| r.verdict == Verdict::Approve && other_vendor(v, writer_vendor))
    {
        reasons.push(format!(
            "no reviewer of a vendor other than the writer's ({writer_vendor}) approved"
        ));
    }
    let rejected: Vec<&str> = reviews
        .iter()
        .filter(|(_, _, r)| r.verdict == Verdict::Reject)
        .map(|(l, _, _)| l.as_str())
        .collect();
    if !rejected.is_empty() {
        reasons.push(format!("rejected by {}", rejected.join(", ")));
    }
    let all = merged(reviews);
    let open = open_findings(&all);
    if !open.is_empty() {
        let blockers = open
            .iter()
            .filter(|m| m.finding.severity == Severity::Blocker)
            .count();
        reasons.push(format!(
            "{} open finding(s) of major or blocker severity ({blockers} blocker)",
            open.len()
        ));
    }
    let read: BTreeSet<String> = reviews
        .iter()
        .flat_map(|(_, _, r)| r.files_reviewed.iter().map(|f| normalize_path(f)))
        .collect();
    let coverage_gap: Vec<String> = changed_files
        .iter()
        .filter(|f| !read.contains(&normalize_path(f)))
        .cloned()
        .collect();
    if !coverage_gap.is_empty() {
        reasons.push(format!(
            "{} changed file(s) no reviewer read: {}",
            coverage_gap.len(),
            coverage_gap.join(", ")
        ));
    }
    if reasons.is_empty() {
        Gate::Ready
    } else {
        Gate::NeedsHuman {
            reason: reasons.join("; "),
            coverage_gap,
        }
    }
}

/// Every reviewer's findings, deduplicated (`review::dedup`).
pub fn merged(reviews: &[(String, String, Review)]) -> Vec<MergedFinding> {
    dedup(
        reviews
            .iter()
            .flat_map(|(l, _, r)| r.findings.iter().map(|f| (l.clone(), f.clone())))
            .collect(),
    )
}

/// The merged findings of `OPEN_SEVERITY` or worse.
pub fn open_findings(merged: &[MergedFinding]) -> Vec<&MergedFinding> {
    merged
        .iter()
        .filter(|m| m.finding.severity >= OPEN_SEVERITY)
        .collect()
}

/// What is still wrong, as a set that can be compared between rounds:
/// `tests` when the oracle failed, and `category:file ×n` for the open
/// findings. Lines and wording are left out on purpose: they shift from
/// one round to the next while the problem stays.
pub fn open_set(verification: &Verification, merged: &[MergedFinding]) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    if verification.command.is_some() && !verification.passed {
        set.insert("tests".to_string());
    }
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for m in open_findings(merged) {
        let key = format!(
            "{}:{}",
            m.finding.category,
            m.finding.file.as_deref().unwrap_or("-")
        );
        *counts.entry(key).or_default() += 1;
    }
    set.extend(counts.into_iter().map(|(k, n)| format!("{k} ×{n}")));
    set
}

/// The repair decision, with why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Repair {
    /// Something is open and rounds are left: repair.
    Go,
    /// Nothing is open.
    NothingOpen,
    /// `--repair-rounds` are used up.
    OutOfRounds,
    /// The same open set as after the previous round: the writer is not
    /// making progress, another round would cost without changing anything.
    Stuck,
}

/// `round`: repair rounds done so far; `previous_open`: the open set after
/// the round before (`None` before the first repair).
pub fn repair_decision(
    round: u32,
    max_rounds: u32,
    open: &BTreeSet<String>,
    previous_open: Option<&BTreeSet<String>>,
) -> Repair {
    if open.is_empty() {
        Repair::NothingOpen
    } else if previous_open == Some(open) {
        Repair::Stuck
    } else if round >= max_rounds {
        Repair::OutOfRounds
    } else {
        Repair::Go
    }
}

/// Whether the writer gets another round (`repair_decision` is `Go`).
pub fn should_repair(
    round: u32,
    max_rounds: u32,
    open: &BTreeSet<String>,
    previous_open: Option<&BTreeSet<String>>,
) -> bool {
    repair_decision(round, max_rounds, open, previous_open) == Repair::Go
}

#[cfg(test)]
mod tests {
    use super::super::schema::Finding;
    use super::*;

    fn passed() -> Verification {
        Verification {
            command: Some("make test".into()),
            exit_code: Some(0),
            passed: true,
            timed_out: false,
            interrupted: None,
            output_tail: String::new(),
            duration_ms: 10,
            whitespace_errors: vec![],
            not_run: None,
            commit: None,
            log_dropped: 0,
            sandbox: None,
        }
    }

    fn review(verdict: Verdict, files: &[&str], findings: Vec<Finding>) -> Review {
        Review {
            verdict,
            summary: "s".into(),
            files_reviewed: files.iter().map(|s| s.to_string()).collect(),
            findings,
        }
    }

    fn finding(sev: Severity, file: &str) -> Finding {
        Finding {
            severity: sev,
            category: "correctness".into(),
            file: Some(file.into()),
            line: Some(3),
            description: "d".into(),
        }
    }

    fn r(label: &str, vendor: &str, review: Review) -> (String, String, Review) {
        (label.into(), vendor.into(), review)
    }

    fn changed() -> Vec<String> {
        vec!["src/a.rs".into(), "src/b.rs".into()]
    }

    fn reason(g: Gate) -> (String, Vec<String>) {
        match g {
            Gate::NeedsHuman {
                reason,
                coverage_gap,
            } => (reason, coverage_gap),
            Gate::Ready => panic!("expected needs_human"),
        }
    }

    #[test]
    fn ready_when_every_condition_holds() {
        let reviews = [
            r(
                "A",
                "anthropic",
                review(Verdict::Approve, &["src/a.rs"], vec![]),
            ),
            r(
                "B",
                "openai",
                review(
                    Verdict::RequestChanges,
                    &["./src/b.rs"],
                    vec![finding(Severity::Minor, "src/b.rs")],
                ),
            ),
        ];
        assert_eq!(
            terminal(&passed(), &reviews, "openai", &changed()),
            Gate::Ready
        );
    }

    #[test]
    fn tests_must_pass() {
        let reviews = [r(
            "A",
            "anthropic",
            review(Verdict::Approve, &["src/a.rs", "src/b.rs"], vec![]),
        )];
        let mut v = passed();
        v.passed = false;
        v.exit_code = Some(1);
        let (why, gap) = reason(terminal(&v, &reviews, "openai", &changed()));
        assert!(
            why.contains("the tests failed (`make test`, exit code 1)"),
            "{why}"
        );
        assert!(gap.is_empty());
        v.timed_out = true;
        v.exit_code = None;
        assert!(
            reason(terminal(&v, &reviews, "openai", &changed()))
                .0
                .contains("timed out")
        );
        v.not_run = Some("`|` needs a shell".into());
        assert!(
            reason(terminal(&v, &reviews, "openai", &changed()))
                .0
                .contains("not run: `|`")
        );
        let mut none = passed();
        none.command = None;
        none.passed = false;
        let why = reason(terminal(&none, &reviews, "openai", &changed())).0;
        assert!(why.contains("no test command: nothing proves"), "{why}");
    }

    #[test]
    fn an_approval_must_come_from_another_vendor() {
        let files = ["src/a.rs", "src/b.rs"];
        let same = [r("A", "OpenAI", review(Verdict::Approve, &files, vec![]))];
        let why = reason(terminal(&passed(), &same, "openai", &changed())).0;
        assert!(why.contains("no reviewer of a vendor other than the writer's (openai) approved"));
        let unknown = [r("A", UNKNOWN, review(Verdict::Approve, &files, vec![]))];
        assert!(matches!(
            terminal(&passed(), &unknown, "openai", &changed()),
            Gate::NeedsHuman { .. }
        ));
        assert!(matches!(
            terminal(&passed(), &unknown, UNKNOWN, &changed()),
            Gate::NeedsHuman { .. }
        ));
        let why = reason(terminal(&passed(), &[], "openai", &changed())).0;
        assert!(why.contains("no reviewer returned a valid review"));
        assert!(why.contains("2 changed file(s) no reviewer read"));
    }

    #[test]
    fn a_rejection_blocks() {
        let files = ["src/a.rs", "src/b.rs"];
        let reviews = [
            r("A", "anthropic", review(Verdict::Approve, &files, vec![])),
            r("C", "google", review(Verdict::Reject, &files, vec![])),
        ];
        let why = reason(terminal(&passed(), &reviews, "openai", &changed())).0;
        assert_eq!(why, "rejected by C");
    }

    #[test]
    fn open_major_or_blocker_blocks_even_from_an_approver() {
        let files = ["src/a.rs", "src/b.rs"];
        for sev in [Severity::Major, Severity::Blocker] {
            let reviews = [
                r(
                    "A",
                    "anthropic",
                    review(Verdict::Approve, &files, vec![finding(sev, "src/a.rs")]),
                ),
                r(
                    "B",
                    "google",
                    review(
                        Verdict::Approve,
                        &files,
                        vec![finding(Severity::Nit, "src/a.rs")],
                    ),
                ),
            ];
            let why = reason(terminal(&passed(), &reviews, "openai", &changed())).0;
            assert!(
                why.starts_with("1 open finding(s) of major or blocker severity"),
                "{why}"
            );
        }
    }

    #[test]
    fn every_changed_file_must_be_read() {
        let reviews = [r(
            "A",
            "anthropic",
            review(Verdict::Approve, &["src/a.rs"], vec![]),
        )];
        let (why, gap) = reason(terminal(&passed(), &reviews, "openai", &changed()));
        assert_eq!(gap, ["src/b.rs"]);
        assert!(why.contains("1 changed file(s) no reviewer read: src/b.rs"));
        let why = reason(terminal(&passed(), &reviews, "openai", &[])).0;
        assert!(why.contains("the writer changed no file"));
    }

    #[test]
    fn open_set_ignores_lines_and_wording() {
        let mut a = finding(Severity::Major, "src/a.rs");
        let reviews = [r("A", "x", review(Verdict::Approve, &[], vec![a.clone()]))];
        let mut failed = passed();
        failed.passed = false;
        let s1 = open_set(&failed, &merged(&reviews));
        assert_eq!(
            s1.iter().cloned().collect::<Vec<_>>(),
            ["correctness:src/a.rs ×1", "tests"]
        );
        a.line = Some(40);
        a.description = "said otherwise".into();
        let reviews = [r(
            "A",
            "x",
            review(
                Verdict::Approve,
                &[],
                vec![a, finding(Severity::Minor, "b")],
            ),
        )];
        assert_eq!(open_set(&failed, &merged(&reviews)), s1);
        assert!(open_set(&passed(), &[]).is_empty());
    }

    #[test]
    fn repair_decisions() {
        let open: BTreeSet<String> = ["tests".to_string()].into();
        let other: BTreeSet<String> = ["x".to_string()].into();
        let none = BTreeSet::new();
        assert_eq!(repair_decision(0, 2, &open, None), Repair::Go);
        assert_eq!(repair_decision(1, 2, &open, Some(&other)), Repair::Go);
        assert_eq!(
            repair_decision(2, 2, &open, Some(&other)),
            Repair::OutOfRounds
        );
        assert_eq!(repair_decision(0, 0, &open, None), Repair::OutOfRounds);
        assert_eq!(repair_decision(1, 2, &open, Some(&open)), Repair::Stuck);
        assert_eq!(repair_decision(0, 2, &none, None), Repair::NothingOpen);
        assert!(should_repair(0, 2, &open, None));
        assert!(!should_repair(1, 2, &open, Some(&open)));
        assert!(!should_repair(2, 2, &open, None));
        assert!(!should_repair(0, 2, &none, Some(&open)));
    }

    #[test]
    fn vendors_compare_known_and_case_blind() {
        assert!(other_vendor("openai", "anthropic"));
        assert!(!other_vendor("OpenAI", "openai"));
        assert!(!other_vendor(UNKNOWN, "openai"));
        assert!(!other_vendor("", "openai"));
    }
}
