//! Seeing peers at work: the job store turned into job views, and the faces
//! that show them (`logs`, `watch --once`, the live line of a foreground run).
//!
//! Theory of operation:
//! - `activity` is the one pure reducer: each agent's output lines in,
//!   `Activity` values out (`events` holds each agent's mapping). Every face
//!   reads activities; none reads events itself.
//! - `tail` reads a running job's log from a remembered offset, a bounded
//!   amount per wake, and folds the activities into a `Live` summary.
//! - `watch` builds one snapshot of every job: state from the store and the
//!   runner's lock (`Job::refresh`), never guessed; a running job silent for
//!   more than half its idle timeout is `stalled`.
//! - `repos` is the view across repositories: every project's open work
//!   (the store's live index) and its newest records, each with its repository.
//! - `tui` is the interactive `watch`: the same views kept up to date from
//!   file-change notifications, with a tail per running job (see its module).
//! - `progress` draws one status line on a terminal's stderr while a
//!   foreground run works, from a tail of its log (the pump is never touched).

mod acp_events;
pub mod activity;
pub mod bench;
mod events;
pub mod fanout;
pub mod group;
pub mod group_watch;
pub mod logs;
pub mod progress;
pub mod render;
pub mod repos;
pub mod tail;
pub mod tui;
pub mod watch;

pub use activity::{Activity, Change, Reducer, Step, Tally};
pub use tail::{Live, Tail};

#[cfg(test)]
pub(crate) mod fixtures;
