//! The statistics of `bench report`, pure: the 95 % Wilson score interval of
//! a solve rate, the exact McNemar test of two settings on the same tasks,
//! and the median.
//!
//! Why these: a bench has tens of tasks, not thousands, and solve rates near
//! 0 or 1 are common. The normal ("Wald") interval is too narrow there and
//! can leave [0, 1]; Wilson's stays inside and keeps close to its nominal
//! coverage from n = 10 (Brown, Cai & DasGupta 2001). Two settings ran on
//! the same tasks, so their outcomes are paired: only the tasks one solved
//! and the other did not (the discordant pairs b and c) say which is better,
//! and with few of them the exact binomial form of McNemar's test is the
//! right one (the χ² approximation is not).

/// z for a two-sided 95 % interval: the 0.975 quantile of the normal.
const Z95: f64 = 1.959_963_984_540_054;

/// The 95 % Wilson score interval of `k` successes in `n` trials, as
/// (low, high), both within [0, 1]. With no trials: (0, 1), nothing known.
pub fn wilson(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (k, n) = (k.min(n) as f64, n as f64);
    let p = k / n;
    let z2 = Z95 * Z95;
    let denom = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denom;
    let half = Z95 / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((center - half).max(0.0), (center + half).min(1.0))
}

/// Up to this many discordant pairs the tail is summed as plain floats
/// (C(1000, 500) ≈ 2.7e299 and 2^1000 still fit an f64); beyond, in logs.
const DIRECT_UP_TO: u64 = 1000;

/// The two-sided exact McNemar test: `b` pairs where the first setting
/// alone solved the task, `c` where the second alone did. Under "no
/// difference" each discordant pair goes either way with probability ½, so
/// min(b, c) is binomial(b + c, ½) at most that low;
/// p = min(1, 2·P(X ≤ min(b, c))). No discordant pair: p = 1.
///
/// Beyond `DIRECT_UP_TO` pairs the binomial terms are summed in log space,
/// exact enough and without overflow for any count a bench can reach
/// (10,000 discordant pairs and far beyond).
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    // b = c, or one apart: P(X ≤ min) is ½ or more, so p is 1 exactly.
    if b.abs_diff(c) <= 1 {
        return 1.0;
    }
    let (n, k) = (b + c, b.min(c));
    let tail = if n <= DIRECT_UP_TO {
        tail_direct(n, k)
    } else {
        tail_in_logs(n, k)
    };
    (2.0 * tail).min(1.0)
}

/// P(X ≤ k) for X ~ binomial(n, ½), binomials as floats: exact while they
/// stay below 2^53 (n up to about 55), so small benches print exact
/// p-values (2/256 = 0.0078125).
fn tail_direct(n: u64, k: u64) -> f64 {
    let (mut term, mut sum) = (1.0_f64, 1.0_f64);
    for i in 0..k {
        term = term * (n - i) as f64 / (i + 1) as f64;
        sum += term;
    }
    sum / 2f64.powi(n as i32)
}

/// The same in logs: ln Σ C(n, i) kept as a running log-sum-exp (the
/// terms grow with i, since k ≤ n/2, so the newest is the largest).
fn tail_in_logs(n: u64, k: u64) -> f64 {
    let (mut ln_c, mut ln_sum) = (0.0_f64, 0.0_f64);
    for i in 0..k {
        ln_c += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
        ln_sum = ln_c + (ln_sum - ln_c).exp().ln_1p();
    }
    (ln_sum - n as f64 * std::f64::consts::LN_2).exp()
}

/// The median of `xs` (the mean of the two middle values when their count
/// is even); `None` for none.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(x: f64, places: i32) -> f64 {
        let f = 10f64.powi(places);
        (x * f).round() / f
    }

    fn interval(k: u64, n: u64) -> (f64, f64) {
        let (lo, hi) = wilson(k, n);
        (round(lo, 4), round(hi, 4))
    }

    #[test]
    fn wilson_intervals_match_the_reference_values() {
        // By hand: p = 0.7, z²/n = 0.19207, centre 0.66777 ± 0.18675.
        assert_eq!(interval(14, 20), (0.4810, 0.8545));
        assert_eq!(interval(15, 20), (0.5313, 0.8881));
        // Agresti & Coull / R's prop.test(correct = FALSE) values.
        assert_eq!(interval(5, 10), (0.2366, 0.7634));
        assert_eq!(interval(1, 10), (0.0179, 0.4042));
        assert_eq!(interval(81, 263), (0.2553, 0.3662));
    }

    #[test]
    fn wilson_stays_inside_zero_and_one_at_the_edges() {
        assert_eq!(interval(0, 20), (0.0, 0.1611));
        assert_eq!(interval(20, 20), (0.8389, 1.0));
        assert_eq!(interval(0, 1), (0.0, 0.7935));
        assert_eq!(interval(1, 1), (0.2065, 1.0));
        assert_eq!(wilson(0, 0), (0.0, 1.0));
        // More successes than trials (a hand-edited record) is read as n of n.
        assert_eq!(wilson(5, 3), wilson(3, 3));
        // Symmetric: k of n and n − k of n mirror each other.
        for n in 1..40 {
            for k in 0..=n {
                let (lo, hi) = wilson(k, n);
                let (lo2, hi2) = wilson(n - k, n);
                assert!((lo - (1.0 - hi2)).abs() < 1e-12 && (hi - (1.0 - lo2)).abs() < 1e-12);
                let p = k as f64 / n as f64;
                assert!(lo <= p + 1e-12 && p <= hi + 1e-12, "{k}/{n}");
            }
        }
    }

    #[test]
    fn mcnemar_matches_exact_binomial_tails() {
        // 2 · (1/2)^6.
        let close = |a: f64, b: f64| (a - b).abs() < 1e-15;
        assert!(close(mcnemar_exact(0, 6), 0.03125));
        assert!(close(mcnemar_exact(6, 0), 0.03125));
        assert_eq!(mcnemar_exact(1, 0), 1.0);
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        for b in 0..30 {
            assert_eq!(mcnemar_exact(b, b), 1.0, "{b}");
        }
        // 2 · (1 + 12 + 66) / 4096 = 0.0385742…
        assert_eq!(round(mcnemar_exact(2, 10), 4), 0.0386);
        assert!(close(mcnemar_exact(10, 2), 158.0 / 4096.0));
        // 2 · (1 + 5) / 32 = 0.375; 2 · (1 + 20 + 190) / 2^20.
        assert!(close(mcnemar_exact(1, 4), 0.375));
        assert!(close(mcnemar_exact(2, 18), 422.0 / 1_048_576.0));
        // 0 of 5 discordant pairs is not enough (2/32 > 0.05), 0 of 6 is.
        assert!(close(mcnemar_exact(0, 5), 0.0625));
        assert_eq!(mcnemar_exact(2, 3), 1.0);
    }

    #[test]
    fn mcnemar_agrees_with_exact_integer_binomials() {
        // u128 binomials are exact up to n = 120.
        fn exact(b: u64, c: u64) -> f64 {
            let n = b + c;
            let k = b.min(c);
            let (mut sum, mut cnk) = (0u128, 1u128);
            for i in 0..=k {
                sum += cnk;
                cnk = cnk * (n - i) as u128 / (i + 1) as u128;
            }
            (2.0 * sum as f64 / 2f64.powi(n as i32)).min(1.0)
        }
        for b in 0..60 {
            for c in 0..60 {
                let (got, want) = (mcnemar_exact(b, c), exact(b, c));
                assert!(
                    (got - want).abs() <= 1e-10 * want,
                    "{b},{c}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn both_ways_of_summing_agree_where_they_meet() {
        for (n, k) in [
            (1000, 470),
            (1000, 500),
            (999, 400),
            (60, 3),
            (1000, 0),
            (200, 70),
        ] {
            let (direct, logs) = (tail_direct(n, k), tail_in_logs(n, k));
            assert!(
                (direct - logs).abs() <= 1e-10 * direct,
                "{n},{k}: {direct} {logs}"
            );
        }
    }

    #[test]
    fn mcnemar_does_not_overflow_on_ten_thousand_pairs() {
        // Balanced: p = 1; lopsided: p underflows to 0, never NaN.
        assert_eq!(mcnemar_exact(5_000, 5_000), 1.0);
        let p = mcnemar_exact(4_900, 5_100);
        // Normal approximation: z = 200/100 = 2 → p ≈ 0.0455 (continuity-
        // corrected 0.0466); the exact value lies between.
        assert!((0.045..0.048).contains(&p), "{p}");
        assert_eq!(mcnemar_exact(0, 10_000), 0.0);
        let p = mcnemar_exact(1_000, 9_000);
        assert!((0.0..1e-300).contains(&p), "{p}");
        let p = mcnemar_exact(3_000_000, 3_000_100);
        assert!(p.is_finite() && p > 0.9, "{p}");
    }

    #[test]
    fn medians_of_odd_even_and_no_values() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[4.0]), Some(4.0));
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[10.0, 10.0]), Some(10.0));
    }
}
