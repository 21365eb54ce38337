//! What the candidates' threads share while they run: the limits
//! (`--budget-tokens`, `--max-wall`: a round, or the judges, start only if
//! the projection stays within them) and, for `--pick first-green`, the
//! claim of the first eligible candidate, which stops all the others.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::process::Interrupts;
use crate::result::Usage;

use super::request::Pick;

pub struct Gate {
    started: Instant,
    pick: Pick,
    max_wall: Option<Duration>,
    budget_tokens: Option<u64>,
    /// Each candidate's own interrupts (children of the fan-out's): firing
    /// one stops that candidate's peer or test command alone.
    stoppers: Vec<Interrupts>,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    tokens: u64,
    runs: u64,
    run_ms: u64,
    winner: Option<usize>,
}

fn tokens(u: &Usage) -> u64 {
    u.input_tokens.unwrap_or(0) + u.output_tokens.unwrap_or(0)
}

impl Gate {
    pub fn new(
        pick: Pick,
        max_wall: Option<Duration>,
        budget_tokens: Option<u64>,
        stoppers: Vec<Interrupts>,
    ) -> Gate {
        Gate {
            started: Instant::now(),
            pick,
            max_wall,
            budget_tokens,
            stoppers,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// One peer run ended (a candidate's round, a judge's call): what it cost.
    pub fn spent(&self, usage: &Usage, ms: u64) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.tokens += tokens(usage);
        g.runs += 1;
        g.run_ms += ms;
    }

    /// Tokens used by every run so far.
    pub fn tokens(&self) -> u64 {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).tokens
    }

    /// Whether `runs` more peer runs (`what`, for the message) may start:
    /// `Err(why)` when the tokens used plus the mean per run so far would
    /// cross `--budget-tokens`, or the time spent plus the mean run would
    /// cross `--max-wall`. Before any run ended nothing can be projected,
    /// so only a wall time already spent stops it.
    pub fn may_start(&self, what: &str, runs: u64) -> Result<(), String> {
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(budget) = self.budget_tokens {
            let per = g.tokens.checked_div(g.runs).unwrap_or(0);
            let projected = g.tokens + per * runs;
            if projected > budget {
                return Err(format!(
                    "{what} not started: --budget-tokens {budget}: {} tokens used, {projected} \
                     projected with it",
                    g.tokens
                ));
            }
        }
        if let Some(max) = self.max_wall {
            let spent = self.started.elapsed();
            let per = Duration::from_millis(g.run_ms.checked_div(g.runs).unwrap_or(0));
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

    #[test]
    fn the_budget_is_projected_from_the_mean_run() {
        let g = Gate::new(Pick::Best, None, Some(1000), Vec::new());
        assert!(g.may_start("a round", 5).is_ok(), "nothing to project from");
        g.spent(&usage(300), 10);
        g.spent(&usage(300), 10);
        assert!(g.may_start("a repair round", 1).is_ok(), "600 + 300");
        let e = g.may_start("the judges", 2).unwrap_err();
        assert!(e.contains("600 tokens used, 1200 projected"), "{e}");
        let w = Gate::new(Pick::Best, Some(Duration::ZERO), None, Vec::new());
        std::thread::sleep(Duration::from_millis(2));
        assert!(w.may_start("x", 1).unwrap_err().contains("--max-wall"));
    }

    #[test]
    fn the_first_green_stops_the_others_once() {
        let parent = Interrupts::install().unwrap();
        let kids: Vec<Interrupts> = (0..3).map(|_| parent.child()).collect();
        let g = Gate::new(Pick::FirstGreen, None, None, kids.clone());
        assert!(g.green(1));
        assert!(!g.green(0), "only one winner");
        assert_eq!(g.winner(), Some(1));
        assert_eq!(kids[1].fired(), None);
        assert_eq!(kids[0].fired(), Some(libc::SIGTERM));
        assert_eq!(kids[2].fired(), Some(libc::SIGTERM));
        let best = Gate::new(Pick::Best, None, None, Vec::new());
        assert!(!best.green(0) && best.winner().is_none());
    }
}
