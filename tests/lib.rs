//! One integration-test binary: every module runs the built `baton` against
//! fake agent CLIs (see `support`).

mod support;

mod agents;
mod ask;
mod cli_snapshots;
mod completions;
mod edges;
mod jobs;
mod json;
mod layers;
mod parsers;
mod plugin;
mod run;
mod setup;
mod shim;
mod state;
mod supervise;
mod watch;
mod worktree;
