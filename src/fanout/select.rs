//! Choosing the winner among the eligible candidates (pure).
//!
//! With judges: a Borda count. A judge that ranked k candidates gives the
//! one in place p (0 = best) k−1−p points; since judges see different
//! sets (none sees its own candidates), a candidate's score is the mean of
//! its points over the judges that ranked it, each divided by k−1 (a
//! judge shown one candidate gives it 1). Ties are broken by fewer
//! blocker findings, then the smaller diff (insertions + deletions), then
//! a draw seeded with the fan-out's seed (`--seed` replays it). Without
//! judges (`--judge none`, or every judge failed) the same order with no
//! score: the smaller diff, then the draw. Nothing that differs between
//! two identical runs (how long a candidate took, which finished first)
//! decides: the same candidates and reviews with the same seed pick the
//! same winner. `how` says in words what decided.

use serde::Serialize;

use super::review::Review;
use crate::group::blind::Rng;

/// The draw's stream of the seed (judges' label shuffles use 1, 2, …).
const DRAW_STREAM: u64 = 0x7469_6562_7265_616b;

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

/// Candidate `index`'s ticket in the seeded draw that breaks a full tie.
fn draw(seed: u64, index: usize) -> u64 {
    Rng::new(seed, DRAW_STREAM.wrapping_add(index as u64)).next_u64()
}

/// What separates `a` from `b` (`a` ranked first), in the order `rank`
/// weighs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decided {
    Score,
    Blockers,
    Diff,
    Draw,
}

fn decided(a: &Scored, b: &Scored) -> Decided {
    if a.score != b.score {
        Decided::Score
    } else if a.blockers != b.blockers {
        Decided::Blockers
    } else if a.diff_lines != b.diff_lines {
        Decided::Diff
    } else {
        Decided::Draw
    }
}

/// Best first: the higher score (a scored candidate before an unscored
/// one), fewer blockers, the smaller diff, then the seeded draw (the
/// candidate's number only if two tickets were equal).
pub fn rank(mut v: Vec<Scored>, seed: u64) -> Vec<Scored> {
    v.sort_by(|a, b| {
        let sa = a.score.unwrap_or(-1.0);
        let sb = b.score.unwrap_or(-1.0);
        sb.total_cmp(&sa)
            .then(a.blockers.cmp(&b.blockers))
            .then(a.diff_lines.cmp(&b.diff_lines))
            .then(draw(seed, a.index).cmp(&draw(seed, b.index)))
            .then(a.index.cmp(&b.index))
    });
    v
}

/// Why the first of `ranked` won, for people: the judges' score, or a tie
/// and what broke it (`id` names a candidate by its index). Empty for an
/// empty ranking.
pub fn how(ranked: &[Scored], id: &dyn Fn(usize) -> String, seed: u64) -> String {
    let Some(first) = ranked.first() else {
        return String::new();
    };
    let Some(second) = ranked.get(1) else {
        return "the only eligible candidate".into();
    };
    let by = match decided(first, second) {
        Decided::Score => {
            return match first.score {
                Some(s) => format!(
                    "ranked best by the judges (score {s:.2} from {} judge(s))",
                    first.judges
                ),
                // Unreachable: an unscored candidate never leads a scored one.
                None => "ranked by the judges".into(),
            };
        }
        Decided::Blockers => "fewer blocker findings".to_string(),
        Decided::Diff if first.score.is_none() => return "the smallest diff".into(),
        Decided::Diff => "the smaller diff".to_string(),
        Decided::Draw => format!("a draw seeded with the fan-out's seed ({seed})"),
    };
    // Tied on the score (or, without judges, on diff size) with the winner.
    let tied: Vec<String> = ranked[1..]
        .iter()
        .filter(|x| match first.score {
            Some(_) => x.score == first.score,
            None => x.diff_lines == first.diff_lines && x.blockers == first.blockers,
        })
        .map(|x| id(x.index))
        .collect();
    match first.score {
        Some(s) => format!(
            "tie with {} on the judges' score ({s:.2}), broken by {by}",
            tied.join(", ")
        ),
        None => format!("tie with {} on diff size, broken by {by}", tied.join(", ")),
    }
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
        let s = rank(score(&[0, 1, 2], &judged, &|_| 10, &|_| 5), 7);
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
        let s = rank(score(&[0, 1], &judged, &|_| 10, &|_| 5), 7);
        assert_eq!(s[0].index, 0);
        assert_eq!((s[1].index, s[1].blockers), (1, 1));
        // No judges: diff size first.
        let diff = |i: usize| [30, 10, 20][i];
        let time = |i: usize| [1, 9, 2][i];
        let s = rank(score(&[0, 1, 2], &[], &diff, &time), 7);
        let order: Vec<usize> = s.iter().map(|x| x.index).collect();
        assert_eq!(order, [1, 2, 0]);
        assert!(s.iter().all(|x| x.score.is_none()));
        // A candidate no judge ranked comes after every ranked one.
        let one = labels(&[("A", 1)]);
        let r = review(&["A"], &[]);
        let s = rank(score(&[0, 1], &[(&one, &r)], &|i| [1, 99][i], &|_| 0), 7);
        assert_eq!((s[0].index, s[0].score), (1, Some(1.0)));
    }

    /// Issue 29 §7: two candidates each ranked by one judge, both scoring
    /// 1.0, with the same diff size: the winner was whichever finished
    /// first, and flipped between identical runs. Now a draw seeded with
    /// the fan-out's seed decides (the time never does), and says so.
    #[test]
    fn a_full_tie_is_broken_by_the_seeded_draw_not_by_time() {
        let l = labels(&[("A", 1)]);
        let m = labels(&[("A", 0)]);
        let r = review(&["A"], &[]);
        let judged: Vec<Judged> = vec![(&l, &r), (&m, &r)];
        let id = |i: usize| format!("c{}", i + 1);
        let winner = |seed: u64, time: [u64; 2]| {
            let s = rank(score(&[0, 1], &judged, &|_| 4, &|i| time[i]), seed);
            (s[0].index, how(&s, &id, seed))
        };
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..64 {
            let (w, text) = winner(seed, [10, 20]);
            // Which finished first does not matter.
            assert_eq!(winner(seed, [20, 10]).0, w, "seed {seed}");
            let other = id(1 - w);
            assert_eq!(
                text,
                format!(
                    "tie with {other} on the judges' score (1.00), broken by a draw seeded \
                     with the fan-out's seed ({seed})"
                )
            );
            seen.insert(w);
        }
        // The draw is a draw: either candidate can win it.
        assert_eq!(seen.len(), 2);
    }

    #[test]
    fn how_names_what_decided() {
        let id = |i: usize| format!("c{}", i + 1);
        let l = labels(&[("A", 0), ("B", 1)]);
        // A clear lead on the judges' score.
        let r = review(&["A", "B"], &[]);
        let s = rank(score(&[0, 1], &[(&l, &r)], &|_| 1, &|_| 1), 3);
        assert_eq!(
            how(&s, &id, 3),
            "ranked best by the judges (score 1.00 from 1 judge(s))"
        );
        // Equal scores: blockers, then the diff.
        let m = labels(&[("A", 1), ("B", 0)]);
        let (r0, r1) = (review(&["A", "B"], &["B"]), review(&["A", "B"], &[]));
        let s = rank(score(&[0, 1], &[(&l, &r0), (&m, &r1)], &|_| 1, &|_| 1), 3);
        assert_eq!(
            how(&s, &id, 3),
            "tie with c2 on the judges' score (0.50), broken by fewer blocker findings"
        );
        let (r0, r1) = (review(&["A", "B"], &[]), review(&["A", "B"], &[]));
        let s = rank(
            score(&[0, 1], &[(&l, &r0), (&m, &r1)], &|i| [5, 1][i], &|_| 1),
            3,
        );
        assert_eq!(
            how(&s, &id, 3),
            "tie with c1 on the judges' score (0.50), broken by the smaller diff"
        );
        // No judges.
        let s = rank(score(&[0, 1], &[], &|i| [5, 1][i], &|_| 1), 3);
        assert_eq!(how(&s, &id, 3), "the smallest diff");
        let s = rank(score(&[0, 1, 2], &[], &|_| 1, &|_| 1), 3);
        assert!(
            how(&s, &id, 3).starts_with("tie with c")
                && how(&s, &id, 3).contains("on diff size, broken by a draw"),
            "{}",
            how(&s, &id, 3)
        );
        assert_eq!(how(&s[..1], &id, 3), "the only eligible candidate");
    }
}
