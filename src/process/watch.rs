//! The spending watch: what a running peer reported so far, looked at every
//! `WATCH_EVERY` by the supervisor (`Limits::watch`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::agent::{Outcome, Parser, ProcessExit};

/// How often a spending watch looks at the usage reported so far.
pub const WATCH_EVERY: Duration = Duration::from_millis(200);

/// Looks at what a running peer reported so far (its usage, its model) and
/// answers whether the run must stop because it crossed its budget.
#[derive(Clone)]
pub struct Watch(pub Arc<dyn Fn(&Outcome) -> bool + Send + Sync>);

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Watch")
    }
}

/// What the parser understood so far, shown to the watch.
pub(super) fn over_budget(parser: &Mutex<Option<Parser>>, watch: &Watch) -> bool {
    let so_far = match parser.lock().unwrap().as_ref() {
        Some(p) => p.snapshot(&ProcessExit::default()),
        None => return false,
    };
    (watch.0)(&so_far)
}
