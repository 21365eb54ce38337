//! `sandbox` in a result: who confined the child, its network, and every
//! way the confinement is weaker than the mode promises (docs/sandbox.md).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Backend;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SandboxReport {
    pub by: By,
    pub network: NetworkKind,
    /// Each way this confinement is weaker than its mode says; empty when
    /// none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub degraded: Vec<Degraded>,
}

/// A peer's `sandbox` in a run result: the report, and under `--network
/// provider` what the proxy refused. A type of its own: a test command
/// (no network) never carries the refusals, so the schemas that show only
/// test commands (a fan-out's) do not describe them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunSandbox {
    pub by: By,
    pub network: NetworkKind,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub degraded: Vec<Degraded>,
    /// The hosts (`host:port`) the proxy refused, the first 16 distinct
    /// ones; absent when none was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused_hosts: Vec<String>,
    /// Every request the proxy refused (403); absent when none was.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub refused_count: u64,
}

impl RunSandbox {
    pub fn new(r: SandboxReport, refused: Option<super::proxy::Refused>) -> RunSandbox {
        let refused = refused.unwrap_or_default();
        RunSandbox {
            by: r.by,
            network: r.network,
            degraded: r.degraded,
            refused_hosts: refused.hosts,
            refused_count: refused.count,
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl SandboxReport {
    pub fn new(by: By, network: NetworkKind, mut degraded: Vec<Degraded>) -> SandboxReport {
        degraded.sort();
        degraded.dedup();
        SandboxReport {
            by,
            network,
            degraded,
        }
    }

    /// A CLI that keeps its own sandbox (codex, claude): baton does not nest.
    pub fn cli(network: NetworkKind) -> SandboxReport {
        SandboxReport::new(By::Cli, network, Vec::new())
    }
}

/// Who confines the child.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum By {
    /// bubblewrap's namespaces, with baton's seccomp filter inside.
    #[serde(rename = "baton-bwrap")]
    BatonBwrap,
    /// Landlock and baton's seccomp filter, applied by baton's helper.
    #[serde(rename = "baton-landlock")]
    BatonLandlock,
    /// macOS `sandbox-exec` with baton's profile.
    #[serde(rename = "seatbelt")]
    Seatbelt,
    /// The CLI's own sandbox (codex, claude), which baton does not nest.
    #[serde(rename = "cli")]
    Cli,
    /// Nothing: `--sandbox off`, `full` access, or no backend here.
    #[serde(rename = "none")]
    None,
}

impl By {
    pub fn of(backend: &Backend) -> By {
        match backend {
            Backend::Bwrap { .. } => By::BatonBwrap,
            Backend::Landlock { .. } => By::BatonLandlock,
            Backend::Seatbelt => By::Seatbelt,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            By::BatonBwrap => "baton-bwrap",
            By::BatonLandlock => "baton-landlock",
            By::Seatbelt => "seatbelt",
            By::Cli => "cli",
            By::None => "none",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NetworkKind {
    All,
    None,
    Provider,
}

/// A weakness of the confinement, by a stable name.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Degraded {
    /// No backend works here (`--sandbox auto`): the child runs unconfined.
    Unavailable,
    /// baton itself runs inside a sandbox or container; baton's is stacked
    /// on it (Landlock stacks; bubblewrap needs user namespaces it may lack).
    InsideOuterSandbox,
    /// Landlock: no PID namespace, so a descendant that leaves the process
    /// group (`setsid` and a double fork) can outlive the run.
    NoPidNamespace,
    /// Landlock before ABI 6: the child may signal processes outside.
    NoSignalScope,
    /// Landlock cannot keep a sub-path of a writable root read-only: the
    /// checkout's `.git/config` and `.git/hooks` are writable.
    GitMetadataWritable,
    /// Landlock does not govern connecting to a named unix socket: one whose
    /// path the child knows (a docker socket) is reachable.
    UnixSocketsReachable,
    /// Landlock: the private temporary directory is on disk, unbounded.
    NoTmpSizeLimit,
    /// Landlock's TCP rules name a port, not an address: the proxy's port
    /// is reachable on every host.
    ProviderPortAnyHost,
    /// `provider` asked for where the kernel has no TCP rules (Landlock
    /// before ABI 4): the network is `all`.
    NetworkProviderNotEnforced,
    /// RLIMIT_NPROC does not bind root: the process count is not bounded.
    NoProcessLimit,
    /// bubblewrap before 0.8 has no `--disable-userns`: the seccomp filter
    /// alone refuses new user namespaces.
    NoDisableUserns,
}

impl Degraded {
    /// One line for people (`--text`, `baton doctor`).
    pub fn describe(self) -> &'static str {
        match self {
            Degraded::Unavailable => "no sandbox works here; the child runs unconfined",
            Degraded::InsideOuterSandbox => "baton already runs inside a sandbox or container",
            Degraded::NoPidNamespace => {
                "no PID namespace: a detached descendant can outlive the run"
            }
            Degraded::NoSignalScope => "the child can signal other processes of the user",
            Degraded::GitMetadataWritable => {
                "the checkout's .git/config and .git/hooks are writable"
            }
            Degraded::UnixSocketsReachable => {
                "named unix sockets (docker, agents) are reachable by path"
            }
            Degraded::NoTmpSizeLimit => "the private temporary directory has no size limit",
            Degraded::ProviderPortAnyHost => "the proxy's port is reachable on any host",
            Degraded::NetworkProviderNotEnforced => {
                "provider-only network cannot be enforced: network is all"
            }
            Degraded::NoProcessLimit => "the number of processes is not bounded (root)",
            Degraded::NoDisableUserns => {
                "bubblewrap < 0.8: new user namespaces refused by seccomp only"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_reads_as_the_issue_names_it() {
        let r = SandboxReport::new(
            By::BatonLandlock,
            NetworkKind::Provider,
            vec![Degraded::NoPidNamespace, Degraded::NoPidNamespace],
        );
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::json!({"by": "baton-landlock", "network": "provider", "degraded": ["no_pid_namespace"]})
        );
        let cli = serde_json::to_value(SandboxReport::cli(NetworkKind::All)).unwrap();
        assert_eq!(cli, serde_json::json!({"by": "cli", "network": "all"}));
        for by in [
            By::BatonBwrap,
            By::BatonLandlock,
            By::Seatbelt,
            By::Cli,
            By::None,
        ] {
            assert_eq!(serde_json::to_value(by).unwrap(), by.as_str());
        }
    }

    #[test]
    fn the_schema_lists_every_backend() {
        let schema = serde_json::to_string(&schemars::schema_for!(SandboxReport)).unwrap();
        for name in [
            "baton-bwrap",
            "baton-landlock",
            "seatbelt",
            "cli",
            "none",
            "no_pid_namespace",
        ] {
            assert!(schema.contains(name), "{name}");
        }
    }
}
