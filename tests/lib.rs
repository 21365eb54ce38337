//! One integration-test binary: every module runs the built `baton` against
//! fake agent CLIs (see `support`).

mod support;

mod agents;
mod ask;
mod cli_snapshots;
mod completions;
mod jobs;
mod json;
mod layers;
mod plugin;
mod run;
mod setup;
mod shim;
mod supervise;
mod watch;
mod worktree;
