//! `baton bench`: which peer, model and setting work best on *this*
//! repository, measured on its own history (docs/bench.md).
//!
//! - [`task`]: the task set on disk (one JSON file per task), its checks;
//! - [`trial`]: one trial's record, what `bench run` writes and `bench
//!   report` reads;
//! - [`mine`]: `bench mine`, commits → tasks: [`history`] walks the
//!   first-parent history, [`classify`] tells tests from code, [`detect`]
//!   finds the test command, [`validate`]
//!   runs the tests at the parent and at the commit; [`sets`] keeps the
//!   sets and answers `bench list` and `bench show`; [`describe`] has a
//!   peer write a task's text (`--describe`).
//! - [`run`]: `bench run` (the driver, from [`start`]) over [`isolate`] (the trial's
//!   repository without history) and [`score`] (the hidden tests after the
//!   peer); [`merge`]: shards joined into one record.
//! - [`report`] (with [`stats`]): what `bench report` makes of the trials,
//!   shown by [`report_text`] and [`html`]; [`report_cmd`] reads a record.
//! - [`export`]: `bench export`, the set in Harbor's task layout
//!   ([`harbor`] makes each task's files).
//!
//! A task's hidden tests and reference commit are never shown to a peer:
//! the trial's repository holds the base tree alone (one root commit, no
//! other refs, no reflog, no remotes), and the hidden test files are
//! written only after the peer is gone.

pub mod attempt;
pub mod classify;
pub mod describe;
pub mod detect;
pub mod export;
pub mod harbor;
pub mod history;
pub mod html;
pub mod isolate;
pub mod merge;
pub mod mine;
pub mod outcomes;
pub mod prune;
pub mod report;
pub mod report_cmd;
pub mod report_json;
pub mod report_text;
pub mod run;
pub mod score;
pub mod sets;
pub mod spec;
pub mod start;
pub mod state;
pub mod stats;
pub mod status;
pub mod task;
pub mod trial;
pub mod validate;
