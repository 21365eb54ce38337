//! Choosing the winner among the eligible candidates (pure).
//!
//! With judges: a Borda count. A judge that ranked k candidates gives the
//! one in place p (0 = best) k−1−p points; since judges see different
//! sets (none sees its own candidates), a candidate's score is the mean of
//! its points over the judges that ranked it, each divided by k−1 (a
//! judge shown one candidate gives it 1). Ties are broken by fewer
//! blocker findings, then the smaller diff (insertions + deletions), then
//! the shorter time, then the candidate's number. Without judges
//! (`--judge none`, or every judge failed) the same order with no score:
//! the smaller diff, then the shorter time.

use serde::Serialize;

use super::review::Review;

/// One eligible candidate as the ranking weighs it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scored {
    /// The candidate's index among all candidates.
    #[serde(skip)]
    pub index: usize,
    /// Mean normalized Borda points in [0, 1]; `None`: no judge ranked it.
    pub score: Option<f64>,
    /// How many judges ranked it.
    pub judges: usize,
    /// Blocker findings against it, over every judge.
    pub blockers: usize,
    pub diff_lines: u64,
    pub duration_ms: u64,
}

/// One judge's labels (label → candidate index) and its valid review.
pub type Judged<'a> = (&'a [(String, usize)], &'a Review);

/// Score every eligible candidate from the judges' reviews.
pub fn score(
    eligible: &[usize],
    reviews: &[Judged<'_>],
    diff_lines: &dyn Fn(usize) -> u64,
    duration_ms: &dyn Fn(usize) -> u64,
) -> Vec<Scored> {
    eligible
        .iter()
        .map(|&i| {
            let mut points = Vec::new();
            let mut blockers = 0;
            for (labels, review) in reviews {
                let Some((label, _)) = labels.iter().find(|(_, j)| *j == i) else {
                    continue;
                };
                blockers += review.blockers(label);
                let k = review.ranking.len();
                if let Some(p) = review.ranking.iter().position(|l| l == label) {
                    points.push(if k <= 1 {
                        1.0
                    } else {
                        (k - 1 - p) as f64 / (k - 1) as f64
                    });
                }
            }
            Scored {
                index: i,
                score: (!points.is_empty())
                    .then(|| points.iter().sum::<f64>() / points.len() as f64),
                judges: points.len(),
                blockers,
                diff_lines: diff_lines(i),
                duration_ms: duration_ms(i),
            }
        })
        .collect()
}

/// Best first: the higher score (a scored candidate before an unscored
/// one), fewer blockers, the smaller diff, the shorter time, the lower number.
pub fn rank(mut v: Vec<Scored>) -> Vec<Scored> {
    v.sort_by(|a, b| {
        let sa = a.score.unwrap_or(-1.0);
        let sb = b.score.unwrap_or(-1.0);
        sb.total_cmp(&sa)
            .then(a.blockers.cmp(&b.blockers))
            .then(a.diff_lines.cmp(&b.diff_lines))
            .then(a.duration_ms.cmp(&b.duration_ms))
            .then(a.index.cmp(&b.index))
    });
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fanout::review::{CandidateReview, Finding, Severity, Verdict};

    fn review(order: &[&str], blockers_on: &[&str]) -> Review {
        Review {
            candidates: order
                .iter()
                .map(|l| CandidateReview {
                    label: l.to_string(),
                    verdict: Verdict::Accept,
                    summary: String::new(),
                    findings: blockers_on
                        .iter()
                        .filter(|b| *b == l)
                        .map(|_| Finding {
                            severity: Severity::Blocker,
                            file: None,
                            line: None,
                            description: "x".into(),
                        })
                        .collect(),
                })
                .collect(),
            ranking: order.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn labels(pairs: &[(&str, usize)]) -> Vec<(String, usize)> {
        pairs.iter().map(|(l, i)| (l.to_string(), *i)).collect()
    }

    #[test]
    fn borda_over_the_judges_that_saw_each_candidate() {
        // Three candidates 0, 1, 2 by three agents; each judge sees the other two.
        let l0 = labels(&[("A", 1), ("B", 2)]);
        let l1 = labels(&[("A", 2), ("B", 0)]);
        let l2 = labels(&[("A", 0), ("B", 1)]);
        let (r0, r1, r2) = (
            review(&["A", "B"], &[]),
            review(&["B", "A"], &[]),
            review(&["A", "B"], &[]),
        );
        let judged: Vec<Judged> = vec![(&l0, &r0), (&l1, &r1), (&l2, &r2)];
        let s = rank(score(&[0, 1, 2], &judged, &|_| 10, &|_| 5));
        // 0: first for judges 1 and 2 → 1.0; 1: first for 0, last for 2 → 0.5; 2: last twice → 0.
        let got: Vec<(usize, Option<f64>)> = s.iter().map(|x| (x.index, x.score)).collect();
        assert_eq!(got, [(0, Some(1.0)), (1, Some(0.5)), (2, Some(0.0))]);
    }

    #[test]
    fn ties_go_to_fewer_blockers_then_the_smaller_diff_then_time() {
        let l = labels(&[("A", 0), ("B", 1)]);
        let m = labels(&[("A", 1), ("B", 0)]);
        // Each candidate first once: equal scores; 1 has a blocker.
        let (r0, r1) = (review(&["A", "B"], &["B"]), review(&["A", "B"], &[]));
        let judged: Vec<Judged> = vec![(&l, &r0), (&m, &r1)];
        let s = rank(score(&[0, 1], &judged, &|_| 10, &|_| 5));
        assert_eq!(s[0].index, 0);
        assert_eq!((s[1].index, s[1].blockers), (1, 1));
        // No judges: diff size, then time, then number.
        let diff = |i: usize| [30, 10, 10][i];
        let time = |i: usize| [1, 9, 2][i];
        let s = rank(score(&[0, 1, 2], &[], &diff, &time));
        let order: Vec<usize> = s.iter().map(|x| x.index).collect();
        assert_eq!(order, [2, 1, 0]);
        assert!(s.iter().all(|x| x.score.is_none()));
        // A candidate no judge ranked comes after every ranked one.
        let one = labels(&[("A", 1)]);
        let r = review(&["A"], &[]);
        let s = rank(score(&[0, 1], &[(&one, &r)], &|i| [1, 99][i], &|_| 0));
        assert_eq!((s[0].index, s[0].score), (1, Some(1.0)));
    }
}
