//! One integration-test binary: every module runs the built `baton` against
//! fake agent CLIs (see `support`).

mod support;

mod ask;
mod plugin;
mod run;
mod shim;
mod worktree;
