//! One integration-test binary: every module runs the built `baton` against
//! fake agent CLIs (see `support`).

mod support;

mod acp;
mod agents;
mod argv;
mod ask;
mod attach;
mod blinding;
mod byo;
mod cli_snapshots;
mod completions;
mod config;
mod council;
mod council_fake;
mod council_more;
mod council_trust;
mod council_view;
mod docs;
mod doctor;
mod dry_run;
mod edges;
mod identity;
mod jobs;
mod json;
mod json_cases;
mod layers;
mod mcp;
mod opencode_qwen;
mod parsers;
mod plugin;
mod progress;
mod redact;
mod run;
mod serve;
mod setup;
mod setup_mcp;
mod shim;
mod state;
mod supervise;
mod tui;
mod watch;
mod worktree;
