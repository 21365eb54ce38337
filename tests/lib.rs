//! One integration-test binary: every module runs the built `baton` against
//! fake agent CLIs (see `support`).

mod support;

mod agents;
mod ask;
mod jobs;
mod identity;
mod json;
mod plugin;
mod run;
mod shim;
mod supervise;
mod worktree;
