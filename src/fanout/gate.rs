//! What the candidates' threads share while they run: the limits
//! (`--max-usd`, `--budget-tokens`, `--max-wall`: a repair round, or the
//! judges, start only if the projection stays within them) and, for
//! `--pick first-green`, the claim of the first eligible candidate, which
//! stops all the others.
//!
//! The projection is what every run so far spent plus `runs` more of the
//! mean run: tokens over all runs; dollars over the runs with a known cost
//! (reported by the CLI or estimated from the price table), the others
//! counting nothing in dollars, as `--max-usd` counts them for one run
//! (`spend::budget`); wall time as the time spent plus the mean run.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::process::Interrupts;
use crate::result::{Spending, Usage};
use crate::spend::{Budget, Spent};

use super::request::Pick;

pub struct Gate {
    started: Instant,
    pick: Pick,
    max_wall: Option<Duration>,
    budget: Budget,
    /// Each candidate's own interrupts (children of the fan-out's): firing
    /// one stops that candidate's peer or test command alone.
    stoppers: Vec<Interrupts>,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    spent: Spent,
    run_ms: u64,
    winner: Option<usize>,
    /// A spending limit (not `--max-wall`) held something back.
    exceeded: bool,
}

impl Gate {
    pub fn new(
        pick: Pick,
        max_wall: Option<Duration>,
        budget: Budget,
        stoppers: Vec<Interrupts>,
    ) -> Gate {
        Gate {
            started: Instant::now(),
            pick,
            max_wall,
            budget,
            stoppers,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// One peer run ended (a candidate's round, a judge's call): what it
    /// cost (a round that retried or fell back counts as one run).
    pub fn spent(&self, usage: &Usage, ms: u64) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.spent.add(&Spent::of(usage));
        g.run_ms += ms;
    }

    /// Tokens used by every run so far.
    pub fn tokens(&self) -> u64 {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .spent
            .tokens
    }

    /// Whether `runs` more peer runs (`what`, for the message) may start:
    /// `Err(why)` when the projection (module header) would cross
    /// `--budget-tokens`, `--max-usd` or `--max-wall`. Before any run ended
    /// nothing can be projected, so only a wall time already spent stops it.
    pub fn may_start(&self, what: &str, runs: u64) -> Result<(), String> {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let t = g.spent;
        if let Some(budget) = self.budget.max_tokens {
            let per = t.tokens.checked_div(u64::from(t.calls)).unwrap_or(0);
            let projected = t.tokens.saturating_add(per.saturating_mul(runs));
            if projected > budget {
                g.exceeded = true;
                return Err(format!(
                    "{what} not started: --budget-tokens {budget}: {} tokens used by {} peer \
                     run(s) so far, {projected} projected with it",
                    t.tokens, t.calls
                ));
            }
        }
        if let Some(max) = self.budget.max_usd {
            let per = if t.priced > 0 {
                t.usd / f64::from(t.priced)
            } else {
                0.0
            };
            let projected = crate::result::add_usd(t.usd, per * runs as f64);
            if projected > max {
                g.exceeded = true;
                let unpriced = match t.unpriced {
                    0 => String::new(),
                    n => format!("; {n} run(s) with no known price counted in tokens only"),
                };
                return Err(format!(
                    "{what} not started: --max-usd {max}: ${:.4}{} spent by {} peer run(s) so \
                     far (${per:.4} a run on average), ${projected:.4} projected with it{unpriced}",
                    t.usd,
                    if t.estimated { " (estimated)" } else { "" },
                    t.calls
                ));
            }
        }
        if let Some(max) = self.max_wall {
            let spent = self.started.elapsed();
            let per = Duration::from_millis(g.run_ms.checked_div(u64::from(t.calls)).unwrap_or(0));
            if spent + per > max {
                return Err(format!(
                    "{what} not started: --max-wall {}s: {:.1}s spent{}",
                    max.as_secs_f64(),
                    spent.as_secs_f64(),
                    if per.is_zero() {
                        String::new()
                    } else {
                        format!(", a run takes {:.1}s on average", per.as_secs_f64())
                    }
                ));
            }
        }
        Ok(())
    }

    /// Whether `--max-usd` or `--budget-tokens` held something back.
    pub fn exceeded(&self) -> bool {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .exceeded
    }

    /// The result's `spending` (`None` without `--max-usd` or `--budget-tokens`).
    pub fn report(&self) -> Option<Spending> {
        if !self.budget.is_set() {
            return None;
        }
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        Some(g.spent.report(&self.budget, g.exceeded))
    }

    /// Candidate `i` became eligible. With `--pick first-green` the first
    /// one wins and every other candidate is stopped at once (its peer's
    /// or its test command's whole process group); `true` if `i` won.
    pub fn green(&self, i: usize) -> bool {
        if self.pick != Pick::FirstGreen {
            return false;
        }
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if g.winner.is_some() {
            return false;
        }
        g.winner = Some(i);
        drop(g);
        for (j, s) in self.stoppers.iter().enumerate() {
            if j != i {
                s.fire(libc::SIGTERM);
            }
        }
        true
    }

    /// The first-green winner, once there is one.
    pub fn winner(&self) -> Option<usize> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).winner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(n: u64) -> Usage {
        Usage {
            input_tokens: Some(n),
            ..Usage::default()
        }
    }

    fn tokens_budget(n: u64) -> Budget {
        Budget {
            max_usd: None,
            max_tokens: Some(n),
        }
    }

    #[test]
    fn dollars_are_projected_from_the_mean_priced_run_and_unpriced_runs_say_so() {
        let g = Gate::new(
            Pick::Best,
            None,
            Budget {
                max_usd: Some(0.08),
                max_tokens: None,
            },
            Vec::new(),
        );
        let priced = |usd: f64| Usage {
            input_tokens: Some(100),
            cost_usd: Some(usd),
            ..Usage::default()
        };
        g.spent(&priced(0.03), 10);
        g.spent(&usage(500), 10); // no known price: counts in tokens only
        assert!(g.may_start("repair round 1", 1).is_ok(), "0.03 + 0.03");
        assert!(!g.exceeded());
        g.spent(&priced(0.03), 10);
        let e = g.may_start("repair round 1", 1).unwrap_err();
        assert!(
            e.starts_with(
                "repair round 1 not started: --max-usd 0.08: $0.0600 spent by 3 peer run(s)"
            ) && e.contains("$0.0300 a run on average), $0.0900 projected"),
            "{e}"
        );
        assert!(e.contains("1 run(s) with no known price"), "{e}");
        let r = g.report().unwrap();
        assert_eq!(r.spent_usd, Some(0.06));
        assert_eq!((r.calls, r.unpriced_calls, r.spent_tokens), (3, 1, 700));
        assert!(r.exceeded);
    }

    #[test]
    fn the_budget_is_projected_from_the_mean_run() {
        let g = Gate::new(Pick::Best, None, tokens_budget(1000), Vec::new());
        assert!(g.may_start("a round", 5).is_ok(), "nothing to project from");
        g.spent(&usage(300), 10);
        g.spent(&usage(300), 10);
        assert!(g.may_start("a repair round", 1).is_ok(), "600 + 300");
        let e = g.may_start("the judges", 2).unwrap_err();
        assert!(
            e.contains("600 tokens used by 2 peer run(s) so far, 1200 projected"),
            "{e}"
        );
        assert!(g.exceeded() && g.report().unwrap().exceeded);
        let w = Gate::new(
            Pick::Best,
            Some(Duration::ZERO),
            Budget::default(),
            Vec::new(),
        );
        std::thread::sleep(Duration::from_millis(2));
        assert!(w.may_start("x", 1).unwrap_err().contains("--max-wall"));
    }

    #[test]
    fn the_first_green_stops_the_others_once() {
        let parent = Interrupts::install().unwrap();
        let kids: Vec<Interrupts> = (0..3).map(|_| parent.child()).collect();
        let g = Gate::new(Pick::FirstGreen, None, Budget::default(), kids.clone());
        assert!(g.green(1));
        assert!(!g.green(0), "only one winner");
        assert_eq!(g.winner(), Some(1));
        assert_eq!(kids[1].fired(), None);
        assert_eq!(kids[0].fired(), Some(libc::SIGTERM));
        assert_eq!(kids[2].fired(), Some(libc::SIGTERM));
        let best = Gate::new(Pick::Best, None, Budget::default(), Vec::new());
        assert!(!best.green(0) && best.winner().is_none());
    }
}
