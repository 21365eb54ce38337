//! Spending limits (`--max-usd`, `--budget-tokens`) and the `Meter` that
//! the calls of one command share: a run's attempts, an ask's advisers, a
//! council's members.
//!
//! Two checks, both against everything the command spent so far:
//! - before a new call (`refuse_next`): the calls so far, plus one more of
//!   their average size, must stay within the limit, so baton stops rather
//!   than start a call that would cross it;
//! - during a call (`crossed`): what the running calls have reported so far
//!   (`Live`, updated from the parser while the peer streams) is added in,
//!   and the supervisor stops a call that crosses the limit.
//!
//! Dollars count only what has a cost (reported by the CLI, or estimated
//! from `prices`); a call without one counts in tokens only, and the report
//! says how many such calls there were.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::result::{Spending, Usage, add_usd, usable_cost};

/// Drop a cost a peer reported that cannot be a price (negative: it would
/// give budget back; not finite): the call then counts as one without a
/// known cost. Returns what was dropped.
pub fn refuse_bad_cost(u: &mut Usage) -> Option<f64> {
    let bad = u.cost_usd.filter(|c| usable_cost(*c).is_none())?;
    u.cost_usd = None;
    u.cost_estimated = false;
    Some(bad)
}

/// The limits asked for. Stored in a job's plan, so its runner keeps them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
}

impl Budget {
    pub fn is_set(&self) -> bool {
        self.max_usd.is_some() || self.max_tokens.is_some()
    }
}

/// What calls spent: tokens (input + output), dollars where known.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spent {
    pub tokens: u64,
    pub usd: f64,
    /// Some of `usd` was estimated from the price table.
    pub estimated: bool,
    /// Calls that used tokens but have no cost (no price known).
    pub unpriced: u32,
    /// Calls with a cost (for the average one).
    pub priced: u32,
    pub calls: u32,
}

impl Spent {
    /// The result's `spending` object: what `budget` allowed and this spent.
    pub fn report(&self, budget: &Budget, exceeded: bool) -> Spending {
        Spending {
            max_usd: budget.max_usd,
            max_tokens: budget.max_tokens,
            spent_usd: (self.priced > 0).then_some(self.usd),
            spent_tokens: self.tokens,
            cost_estimated: self.estimated,
            unpriced_calls: self.unpriced,
            calls: self.calls,
            exceeded,
        }
    }

    /// One call's spending (its usage with the cost filled in if known). A
    /// cost that cannot be a price (negative: it would give budget back)
    /// counts as none.
    pub fn of(u: &Usage) -> Spent {
        let tokens = u.total_tokens().unwrap_or(0);
        let cost = u.cost_usd.and_then(usable_cost);
        Spent {
            tokens,
            usd: cost.unwrap_or(0.0),
            estimated: u.cost_estimated && cost.is_some(),
            unpriced: u32::from(cost.is_none() && tokens > 0),
            priced: u32::from(cost.is_some()),
            calls: 1,
        }
    }

    /// Saturating: a peer reporting `u64::MAX` tokens must stay over the
    /// budget, not wrap under it.
    pub fn add(&mut self, o: &Spent) {
        self.tokens = self.tokens.saturating_add(o.tokens);
        self.usd = add_usd(self.usd, o.usd);
        self.estimated |= o.estimated;
        self.unpriced = self.unpriced.saturating_add(o.unpriced);
        self.priced = self.priced.saturating_add(o.priced);
        self.calls = self.calls.saturating_add(o.calls);
    }
}

#[derive(Debug, Default)]
struct Inner {
    done: Spent,
    /// Running calls, by slot (`None`: a free slot).
    live: Vec<Option<Spent>>,
    /// The limit was hit (before a call or during one).
    exceeded: bool,
}

/// The spending of one command, shared by its calls (cheap to clone).
#[derive(Debug, Clone, Default)]
pub struct Meter {
    budget: Budget,
    inner: Arc<Mutex<Inner>>,
}

impl Meter {
    pub fn new(budget: Budget) -> Meter {
        Meter {
            budget,
            inner: Arc::default(),
        }
    }

    /// A meter that starts from what earlier calls spent (a council resumed).
    pub fn with_spent(budget: Budget, spent: Spent) -> Meter {
        let m = Meter::new(budget);
        m.inner.lock().unwrap().done = spent;
        m
    }

    pub fn budget(&self) -> Budget {
        self.budget
    }

    /// Finished calls and running ones.
    pub fn total(&self) -> Spent {
        let i = self.inner.lock().unwrap();
        let mut t = i.done;
        for s in i.live.iter().flatten() {
            t.add(s);
        }
        t
    }

    /// A call that ended (never started through `live`).
    pub fn record(&self, u: &Usage) {
        self.inner.lock().unwrap().done.add(&Spent::of(u));
    }

    /// A call starting: its spending so far goes in its slot.
    pub fn live(&self) -> Live {
        let mut i = self.inner.lock().unwrap();
        let idx = match i.live.iter().position(Option::is_none) {
            Some(n) => n,
            None => {
                i.live.push(None);
                i.live.len() - 1
            }
        };
        i.live[idx] = Some(Spent::default());
        Live {
            meter: self.clone(),
            idx,
        }
    }

    /// Before a new call: why it must not start (it would cross the limit,
    /// counting one more call of the average size so far), if so.
    pub fn refuse_next(&self) -> Option<String> {
        let t = self.total();
        let mut why = None;
        if let Some(max) = self.budget.max_tokens {
            let next = t.tokens.checked_div(u64::from(t.calls)).unwrap_or(0);
            if t.tokens >= max || t.tokens.saturating_add(next) > max {
                why = Some(format!(
                    "--budget-tokens {max}: {} tokens spent over {} call(s); another call \
                     (about {next} tokens) would cross it",
                    t.tokens, t.calls
                ));
            }
        }
        if let (None, Some(max)) = (&why, self.budget.max_usd) {
            let next = if t.priced > 0 {
                t.usd / f64::from(t.priced)
            } else {
                0.0
            };
            if t.usd >= max || add_usd(t.usd, next) > max {
                why = Some(format!(
                    "--max-usd {max}: ${:.4} spent{} over {} call(s); another call (about ${next:.4}) \
                     would cross it",
                    t.usd,
                    if t.estimated { " (estimated)" } else { "" },
                    t.calls
                ));
            }
        }
        if why.is_some() {
            self.inner.lock().unwrap().exceeded = true;
        }
        why
    }

    /// During calls: why the limit is crossed now, if it is.
    pub fn crossed(&self) -> Option<String> {
        self.over().map(|w| format!("{w}, the call was stopped"))
    }

    /// After a call the watch did not stop: why the limit is crossed, if it
    /// is (the CLI reported its usage only as it ended, or crossed it
    /// between two looks). It counts as exceeded all the same.
    pub fn crossed_after(&self) -> Option<String> {
        self.over().map(|w| {
            format!(
                "budget_exceeded: {w}; the call reported that only as it ended, too late to \
                 stop it"
            )
        })
    }

    /// What is over the limit now, if anything (and the meter marked so).
    fn over(&self) -> Option<String> {
        let t = self.total();
        let why = match (self.budget.max_tokens, self.budget.max_usd) {
            (Some(max), _) if t.tokens > max => {
                Some(format!("--budget-tokens {max}: {} tokens spent", t.tokens))
            }
            (_, Some(max)) if t.usd > max => Some(format!(
                "--max-usd {max}: ${:.4} spent{}",
                t.usd,
                if t.estimated { " (estimated)" } else { "" }
            )),
            _ => None,
        };
        if why.is_some() {
            self.inner.lock().unwrap().exceeded = true;
        }
        why
    }

    /// The result's `budget` object (`None` when no limit was asked for).
    pub fn report(&self) -> Option<Spending> {
        if !self.budget.is_set() {
            return None;
        }
        let exceeded = self.inner.lock().unwrap().exceeded;
        Some(self.total().report(&self.budget, exceeded))
    }

    /// The warning a result carries when `--max-usd` could not count every
    /// call (no price known for their model).
    pub fn unpriced_warning(&self) -> Option<String> {
        let t = self.total();
        (self.budget.max_usd.is_some() && t.unpriced > 0).then(|| {
            format!(
                "--max-usd counted only calls with a known cost: {} call(s) had no price \
                 (their model is not in baton's price table, see `baton agents`), so for them \
                 the budget counted tokens only",
                t.unpriced
            )
        })
    }
}

/// A running call's slot in a `Meter`.
#[derive(Debug)]
pub struct Live {
    meter: Meter,
    idx: usize,
}

impl Live {
    /// What the call has spent so far (its usage as reported up to now).
    pub fn set(&self, s: Spent) {
        let mut i = self.meter.inner.lock().unwrap();
        if let Some(slot) = i.live.get_mut(self.idx) {
            *slot = Some(s);
        }
    }

    /// The call ended with `u`: moved from running to done in one step, so
    /// no other call ever sees it counted twice or not at all. Once only.
    pub fn finish(&self, u: &Usage) {
        let mut i = self.meter.inner.lock().unwrap();
        if let Some(slot) = i.live.get_mut(self.idx)
            && slot.take().is_some()
        {
            i.done.add(&Spent::of(u));
        }
    }
}

impl Drop for Live {
    /// A call abandoned without `finish` (an error of baton's own): its
    /// partial spending stays counted as done.
    fn drop(&mut self) {
        let mut i = self.meter.inner.lock().unwrap();
        if let Some(s) = i.live.get_mut(self.idx).and_then(Option::take) {
            i.done.add(&s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(tokens: u64, usd: Option<f64>) -> Usage {
        Usage {
            input_tokens: Some(tokens),
            output_tokens: Some(0),
            cost_usd: usd,
            ..Usage::default()
        }
    }

    #[test]
    fn the_next_call_is_refused_when_the_average_one_would_cross() {
        let m = Meter::new(Budget {
            max_usd: None,
            max_tokens: Some(1000),
        });
        assert!(m.refuse_next().is_none(), "nothing spent yet");
        m.record(&usage(400, None));
        assert!(m.refuse_next().is_none(), "400 + 400 ≤ 1000");
        m.record(&usage(400, None));
        let why = m.refuse_next().expect("800 + 400 > 1000");
        assert!(why.contains("800 tokens spent over 2 call(s)"), "{why}");
        assert!(m.report().unwrap().exceeded);
    }

    #[test]
    fn dollars_count_only_priced_calls_and_say_so() {
        let m = Meter::new(Budget {
            max_usd: Some(1.0),
            max_tokens: None,
        });
        m.record(&usage(100, Some(0.6)));
        m.record(&usage(5000, None));
        let why = m.refuse_next().expect("0.6 + 0.6 > 1.0");
        assert!(why.contains("$0.6000 spent"), "{why}");
        let r = m.report().unwrap();
        assert_eq!(r.spent_usd, Some(0.6));
        assert_eq!(r.spent_tokens, 5100);
        assert_eq!(r.unpriced_calls, 1);
        assert!(
            m.unpriced_warning()
                .unwrap()
                .contains("1 call(s) had no price")
        );
    }

    #[test]
    fn huge_counts_saturate_and_stay_over_the_budget() {
        let m = Meter::new(Budget {
            max_usd: Some(1.0),
            max_tokens: Some(1000),
        });
        // 0.3.2: u64::MAX + 2 wrapped to 1 token, under any budget.
        m.record(&usage(u64::MAX, None));
        m.record(&usage(2, None));
        assert_eq!(m.total().tokens, u64::MAX);
        assert!(m.crossed().is_some());
        assert!(m.refuse_next().is_some());
        // Dollars stay finite: two costs of 1e308 are f64::MAX, not
        // infinity (which JSON would print as null).
        let m = Meter::new(Budget {
            max_usd: Some(1.0),
            max_tokens: None,
        });
        m.record(&usage(1, Some(1e308)));
        m.record(&usage(1, Some(1e308)));
        let r = m.report().unwrap();
        assert_eq!(r.spent_usd, Some(f64::MAX));
        let json = serde_json::to_string(&r).unwrap();
        assert!(
            json.contains("\"spent_usd\":1.7976931348623157e+308"),
            "{json}"
        );
        assert!(m.crossed().is_some());
    }

    #[test]
    fn a_negative_cost_counts_as_no_known_cost() {
        let m = Meter::new(Budget {
            max_usd: Some(1.0),
            max_tokens: None,
        });
        m.record(&usage(100, Some(0.9)));
        // It would have given back $5 of budget.
        m.record(&usage(100, Some(-5.0)));
        m.record(&usage(100, Some(f64::NAN)));
        let t = m.total();
        assert_eq!((t.usd, t.priced, t.unpriced), (0.9, 1, 2));
        assert!(m.refuse_next().is_some(), "0.9 + 0.9 > 1.0");
    }

    #[test]
    fn crossed_after_the_fact_is_said_and_counted() {
        let m = Meter::new(Budget {
            max_usd: None,
            max_tokens: Some(100),
        });
        assert!(m.crossed_after().is_none());
        assert!(!m.report().unwrap().exceeded);
        m.record(&usage(2600, None));
        let why = m.crossed_after().unwrap();
        assert!(
            why.starts_with("budget_exceeded: --budget-tokens 100: 2600 tokens spent")
                && why.contains("only as it ended"),
            "{why}"
        );
        assert!(m.report().unwrap().exceeded);
    }

    #[test]
    fn live_calls_count_until_they_finish_once() {
        let m = Meter::new(Budget {
            max_usd: None,
            max_tokens: Some(100),
        });
        let a = m.live();
        let b = m.live();
        a.set(Spent::of(&usage(60, None)));
        assert!(m.crossed().is_none());
        b.set(Spent::of(&usage(50, None)));
        assert!(m.crossed().unwrap().contains("110 tokens"));
        a.finish(&usage(60, None));
        assert_eq!(m.total().tokens, 110);
        drop(b);
        assert_eq!(m.total().tokens, 110, "an abandoned call stays counted");
        assert_eq!(m.total().calls, 2);
        // Slots are reused.
        let c = m.live();
        assert_eq!(c.idx, 0);
    }
}
