//! The policy: what a confined child may write, must not see, may reach,
//! and how many processes and bytes it may make.
//!
//! The same value travels to the helper as JSON, so every field has a
//! default and unknown fields are refused (a newer baton's helper call
//! must not be half understood by an older one).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::By;
use super::secrets;

/// What the child may write (the access modes of docs/run.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Everything readable but secrets; writable only the peer's own state
    /// directories and the private temporary directory.
    ReadOnly,
    /// As read-only, plus the writer's checkout.
    Workspace,
    /// No wrapping at all.
    Full,
}

/// What the child may reach over the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Network {
    #[default]
    All,
    /// No IP socket at all (a new network namespace under bubblewrap; the
    /// seccomp filter refuses every socket family but AF_UNIX everywhere).
    None,
    /// TCP to the local CONNECT proxy baton runs on `port` only, named to
    /// the child in `HTTPS_PROXY` and friends.
    Provider { port: u16 },
}

impl Network {
    pub fn kind(&self) -> super::NetworkKind {
        match self {
            Network::All => super::NetworkKind::All,
            Network::None => super::NetworkKind::None,
            Network::Provider { .. } => super::NetworkKind::Provider,
        }
    }
}

/// Bounds on what a child can consume. `None` leaves a bound off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// RLIMIT_NPROC, set by the helper. Inside bubblewrap's user namespace
    /// the kernel (≥ 5.14) counts only that namespace's processes and
    /// threads, so this bounds the sandbox; under Landlock it counts all of
    /// the user's, so the helper adds what already runs. Root is exempt
    /// from RLIMIT_NPROC: the report says `no_process_limit`.
    pub max_procs: Option<u64>,
    /// RLIMIT_FSIZE: no file the child writes grows past this (EFBIG).
    pub max_file_bytes: Option<u64>,
    /// The private temporary directory becomes a tmpfs of this size
    /// (bubblewrap only; its content then never reaches the disk).
    pub tmp_bytes: Option<u64>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            // Threads count too: a build with a few hundred of them and a
            // test runner's workers stay far below.
            max_procs: Some(4096),
            max_file_bytes: Some(8 << 30),
            tmp_bytes: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    pub mode: Mode,
    /// The writer's checkout: writable in `workspace` mode, readable always.
    #[serde(default)]
    pub workspace: Option<PathBuf>,
    /// The peer's own state (its session files): writable in every mode.
    #[serde(default)]
    pub state_dirs: Vec<PathBuf>,
    /// The private temporary directory (TMPDIR): writable in every mode.
    pub tmp: PathBuf,
    /// Covered: a directory by an empty one, a file (or socket) by an
    /// empty file. Secrets, other agents' credentials, baton's state.
    #[serde(default)]
    pub hidden: Vec<PathBuf>,
    /// Readable again inside a hidden directory (the run's own folder in
    /// baton's state directory).
    #[serde(default)]
    pub reveal: Vec<PathBuf>,
    /// Kept read-only inside a writable root (the checkout's `.git/config`
    /// and `.git/hooks`, which baton's own git calls would otherwise obey).
    #[serde(default)]
    pub read_only_inside: Vec<PathBuf>,
    /// Removed from the child's environment.
    #[serde(default)]
    pub drop_env: Vec<String>,
    #[serde(default)]
    pub network: Network,
    /// `provider` under bubblewrap: the proxy's unix socket. The child gets
    /// a network namespace of its own, and the helper relays its
    /// `127.0.0.1:PORT` there (`sandbox::forward`). Without it the child
    /// keeps the host's network and Landlock narrows it to the port.
    #[serde(default)]
    pub proxy_socket: Option<PathBuf>,
    #[serde(default)]
    pub limits: Limits,
}

impl Policy {
    /// A policy with the standard secrets of `home` hidden, the standard
    /// variables dropped and the sockets named in `env` hidden.
    pub fn new(
        mode: Mode,
        tmp: PathBuf,
        home: Option<&Path>,
        env: &[(OsString, OsString)],
    ) -> Policy {
        Policy {
            mode,
            workspace: None,
            state_dirs: Vec::new(),
            tmp,
            hidden: secrets::hidden(home, env),
            reveal: Vec::new(),
            read_only_inside: Vec::new(),
            drop_env: secrets::DROP_ENV.iter().map(|s| s.to_string()).collect(),
            network: Network::All,
            proxy_socket: None,
            limits: Limits::default(),
        }
    }

    /// The writer's checkout, with its git metadata that baton's own git
    /// calls read (config, hooks) kept read-only.
    pub fn with_workspace(mut self, checkout: PathBuf) -> Policy {
        self.read_only_inside
            .extend(secrets::git_protected(&checkout));
        self.workspace = Some(checkout);
        self
    }

    /// Every path the child may write.
    pub fn writable(&self) -> impl Iterator<Item = &Path> {
        let workspace = match self.mode {
            Mode::Workspace => self.workspace.as_deref(),
            _ => None,
        };
        workspace
            .into_iter()
            .chain(self.state_dirs.iter().map(PathBuf::as_path))
            .chain(std::iter::once(self.tmp.as_path()))
    }

    /// The same policy with every path made absolute and canonical (a
    /// mount or a Landlock rule on a symlink would follow it anyway; the
    /// policy should say where it lands), hidden and revealed paths that do
    /// not exist left out. A writable root that does not exist is an error.
    pub fn resolved(&self) -> Result<Policy, String> {
        let must = |p: &Path| {
            std::fs::canonicalize(p)
                .map_err(|e| format!("the writable root `{}` cannot be used: {e}", p.display()))
        };
        let may = |ps: &[PathBuf]| -> Vec<PathBuf> {
            let mut out: Vec<PathBuf> = ps
                .iter()
                .filter_map(|p| std::fs::canonicalize(p).ok())
                .collect();
            out.sort();
            out.dedup();
            out
        };
        let workspace = match &self.workspace {
            Some(w) => Some(must(w)?),
            None => None,
        };
        let state_dirs = self
            .state_dirs
            .iter()
            .map(|p| must(p))
            .collect::<Result<_, _>>()?;
        // The protected paths keep their last component: `.git/hooks` may be
        // a symlink the child could swap, and bwrap covers the link itself.
        let read_only_inside = self
            .read_only_inside
            .iter()
            .filter_map(|p| {
                let parent = std::fs::canonicalize(p.parent()?).ok()?;
                let at = parent.join(p.file_name()?);
                at.symlink_metadata().ok().map(|_| at)
            })
            .collect();
        Ok(Policy {
            mode: self.mode,
            workspace,
            state_dirs,
            tmp: must(&self.tmp)?,
            hidden: may(&self.hidden),
            reveal: may(&self.reveal),
            read_only_inside,
            drop_env: self.drop_env.clone(),
            network: self.network,
            proxy_socket: self.proxy_socket.clone(),
            limits: self.limits,
        })
    }

    /// The child's environment: the dropped variables gone, TMPDIR on the
    /// private directory, the marker, and the proxy for `provider`.
    pub fn child_env(&self, env: Vec<(OsString, OsString)>, by: By) -> Vec<(OsString, OsString)> {
        let set: Vec<(&str, String)> = {
            let tmp = self.tmp.to_string_lossy().into_owned();
            let mut set = vec![
                ("TMPDIR", tmp.clone()),
                ("TMP", tmp.clone()),
                ("TEMP", tmp),
                (super::MARKER, by.as_str().to_string()),
            ];
            if let Network::Provider { port } = self.network {
                let url = format!("http://127.0.0.1:{port}");
                for name in [
                    "HTTPS_PROXY",
                    "https_proxy",
                    "HTTP_PROXY",
                    "http_proxy",
                    "ALL_PROXY",
                    "all_proxy",
                ] {
                    set.push((name, url.clone()));
                }
                // Node ≥ 22.21 / 24.5 honours the variables only when told to.
                set.push(("NODE_USE_ENV_PROXY", "1".into()));
                set.push(("NO_PROXY", String::new()));
                set.push(("no_proxy", String::new()));
            }
            set
        };
        let mut out: Vec<(OsString, OsString)> = env
            .into_iter()
            .filter(|(k, _)| {
                let k = k.to_string_lossy();
                !self.drop_env.iter().any(|d| *d == k) && !set.iter().any(|(s, _)| *s == k)
            })
            .collect();
        out.extend(set.into_iter().map(|(k, v)| (k.into(), v.into())));
        out
    }
}
