//! End-to-end suite: the built `baton` drives the REAL agent CLIs (pinned in
//! e2e/versions.env, installed by scripts/e2e-install.sh) against a scripted
//! mock model server on 127.0.0.1 (`mock`). Run it with `make e2e`, which
//! installs the CLIs and runs this binary inside a loopback-only network
//! namespace. Every test is `#[ignore]`d so `make test` (and plain
//! `cargo test`) never needs the CLIs; `make e2e` passes `--ignored`.
//!
//! Adding a module: `mod <area>;` below, then in it build a `Peer` per test
//! (`support::Peer::new(Agent::Codex, "<unique name>")`), get a prompt with
//! `peer.prompt("E2E-<MARKER>")` (add the scenario to scenarios.json), run
//! `peer.baton()…run(&prompt)` (`peer.ask()` for `baton ask`) and assert on
//! the result and on `support::mock().requests_for(id)`; `mock::scenario_step`
//! gives what a scenario told the mock to answer.

/// `per_agent!([codex => Codex, …] scenario_a, scenario_b)` makes a module
/// per scenario with one ignored test per agent, each calling
/// `scenario(Agent::…)`.
macro_rules! per_agent {
    ($agents:tt $($scenario:ident),* $(,)?) => {
        $( per_agent!(@one $scenario $agents); )*
    };
    (@one $scenario:ident [$($test:ident => $agent:ident),* $(,)?]) => {
        mod $scenario {
            use crate::support::Agent;
            $(
                #[test]
                #[ignore = "e2e: needs the real CLIs (make e2e)"]
                fn $test() {
                    super::$scenario(Agent::$agent)
                }
            )*
        }
    };
}

mod faults;
mod mock;
mod support;

mod ask;
mod attach;
mod bench;
mod claude_sandbox;
mod council;
mod doctor;
mod failures;
mod fanout;
mod host_sandbox;
mod jobs;
mod mcp;
mod mcp_hosts;
mod mcp_notify;
mod plugin;
mod run;
mod sandboxed;
mod setup;
mod worktree;
