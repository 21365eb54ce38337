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
//!
//! A task's hidden tests and reference commit are never shown to a peer:
//! the trial's repository holds the base tree alone (one root commit, no
//! other refs, no reflog, no remotes), and the hidden test files are
//! written only after the peer is gone.

pub mod classify;
pub mod describe;
pub mod detect;
pub mod history;
pub mod mine;
pub mod outcomes;
pub mod sets;
pub mod spec;
pub mod task;
pub mod trial;
pub mod validate;
