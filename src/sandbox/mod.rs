//! The sandbox baton owns: a `Policy` (what a child may read, write and
//! reach) turned into the argv that confines it, on Linux and macOS.
//!
//! Theory of operation (docs/sandbox.md has the whole design):
//! - The caller builds a [`Policy`] (mode, writable roots, secrets to hide,
//!   variables to drop, network, limits), asks [`Sandbox::choose`] once per
//!   process which backend this machine offers ([`probe`] tries it, cached),
//!   and calls [`Sandbox::wrap`] with the child's argv and environment. The
//!   [`Wrapped`] argv and environment are spawned as they are (env cleared
//!   first), with the launcher's usual process group and deadlines; its
//!   [`SandboxReport`] goes into the result as it is.
//! - Linux, bubblewrap: `bwrap` (found on PATH, never inside a writable root)
//!   with new user, PID, IPC, UTS (and for `--network none` network)
//!   namespaces, the root read-only, secrets covered, the writable roots
//!   bound back; inside it baton's own helper (`baton __sandbox-exec`,
//!   [`exec`]) sets the limits, the Landlock scopes and network rules the
//!   kernel has, the seccomp filter ([`seccomp`]), and execs the child.
//! - Linux, Landlock: where user namespaces are blocked, the same helper runs
//!   outside any namespace and restricts itself with Landlock (files, TCP
//!   ports, signals) and the same seccomp filter. No PID namespace: the
//!   report says so.
//! - macOS: `sandbox-exec` with a generated `(deny default)` profile
//!   ([`seatbelt`]); paths travel as `-D` parameters, never inside the text.
//!
//! `wrap` is pure apart from reading the file system (canonical paths,
//! which secrets exist): nothing is started, so `--dry-run` can show it.
//!
//! `host.rs` is the other side: the sandbox a host agent may have put baton
//! itself in (no network for any peer), checked before work exists.

pub mod bwrap;
#[cfg(target_os = "linux")]
pub mod exec;
pub mod host;
#[cfg(target_os = "linux")]
mod landlock;
pub mod policy;
pub mod probe;
pub mod report;
pub mod seatbelt;
#[cfg(target_os = "linux")]
pub mod seccomp;
pub mod secrets;
#[cfg(target_os = "linux")]
mod sys;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use policy::{Limits, Mode, Network, Policy};
pub use probe::{Availability, probe};
pub use report::{By, Degraded, NetworkKind, SandboxReport};

/// The environment variable a sandboxed child finds set to the backend's
/// name: how a baton started inside one knows it (never nest by accident).
pub const MARKER: &str = "BATON_SANDBOXED";

/// The hidden subcommand of the helper. It is handled before clap parses
/// anything (`crate::run`): it must start fast, read no configuration and
/// leave stdin, which carries the peer's prompt, alone.
pub const HELPER: &str = "__sandbox-exec";

/// What the user asked for (`--sandbox`, config `sandbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Want {
    /// The best backend here; none (reported, with the reason) when none works.
    #[default]
    Auto,
    /// A backend or an error: fails closed.
    Require,
    /// No wrapping.
    Off,
}

impl Want {
    pub fn parse(s: &str) -> Result<Want, String> {
        match s.trim() {
            "auto" => Ok(Want::Auto),
            "require" => Ok(Want::Require),
            "off" => Ok(Want::Off),
            other => Err(format!(
                "unknown sandbox setting `{other}`: use auto, require or off"
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Want::Auto => "auto",
            Want::Require => "require",
            Want::Off => "off",
        }
    }
}

/// A way of confining a child that this machine offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Backend {
    Bwrap {
        path: PathBuf,
        /// bubblewrap ≥ 0.8: `--disable-userns` keeps the child from making
        /// a user namespace of its own (and so an inner sandbox).
        disable_userns: bool,
        /// The Landlock ABI the helper finds inside (0: none): TCP rules
        /// for `provider` from 4, signal and socket scopes from 6.
        landlock_abi: u8,
    },
    Landlock {
        abi: u8,
    },
    Seatbelt,
}

/// Why no backend could be had (`--sandbox require` turns this into the
/// `sandbox_unavailable` error; `auto` reports `by: "none"` with it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    pub reason: String,
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

/// A backend chosen for this process, with what it needs to wrap a child.
#[derive(Debug, Clone)]
pub struct Sandbox {
    /// `None`: `--sandbox off`, or `auto` where nothing works.
    pub backend: Option<Backend>,
    /// baton's own executable: the helper the wrapped argv runs.
    pub helper: PathBuf,
    /// What the probe found confining baton itself (docker, a host agent's
    /// sandbox, baton's own): reported as degraded, never silently nested.
    pub outer: Vec<String>,
    /// The reason no backend was chosen under `auto`.
    pub unavailable: Option<String>,
}

/// The child's argv and environment, confined, and what the result says.
#[derive(Debug, Clone, PartialEq)]
pub struct Wrapped {
    pub argv: Vec<OsString>,
    /// The complete environment: spawn with `env_clear()` and these.
    pub env: Vec<(OsString, OsString)>,
    pub report: SandboxReport,
}

impl Sandbox {
    /// The backend for `want` on this machine (the probe runs once per
    /// process). `Require` with nothing usable is an error; `Auto` gives a
    /// sandbox that wraps nothing and says why.
    pub fn choose(want: Want) -> Result<Sandbox, Unavailable> {
        let helper = std::env::current_exe().map_err(|e| Unavailable {
            reason: format!("baton cannot find its own executable: {e}"),
        })?;
        Self::choose_from(want, probe(), helper)
    }

    /// `choose` with the probe's answer given (tests, doctor).
    pub fn choose_from(
        want: Want,
        found: &Availability,
        helper: PathBuf,
    ) -> Result<Sandbox, Unavailable> {
        let mut sandbox = Sandbox {
            backend: None,
            helper,
            outer: found.outer.clone(),
            unavailable: None,
        };
        if want == Want::Off {
            return Ok(sandbox);
        }
        match found.best() {
            Ok(backend) => sandbox.backend = Some(backend),
            Err(reason) if want == Want::Require => return Err(Unavailable { reason }),
            Err(reason) => sandbox.unavailable = Some(reason),
        }
        Ok(sandbox)
    }

    /// A sandbox with this backend, no probe: tests and the benchmark.
    pub fn with_backend(backend: Backend, helper: PathBuf) -> Sandbox {
        Sandbox {
            backend: Some(backend),
            helper,
            outer: Vec::new(),
            unavailable: None,
        }
    }

    /// Confine `argv` (its program resolved or on PATH) under `policy`.
    /// `env` is the environment the child would have had. Errors are
    /// policies that cannot be kept (a writable root that does not exist,
    /// the helper or bwrap inside a writable root).
    pub fn wrap(
        &self,
        policy: &Policy,
        argv: Vec<OsString>,
        env: Vec<(OsString, OsString)>,
    ) -> Result<Wrapped, Unavailable> {
        let network = policy.network.kind();
        let mut degraded: Vec<Degraded> = self
            .outer
            .iter()
            .map(|_| Degraded::InsideOuterSandbox)
            .collect();
        degraded.dedup();
        let (backend, by) = match (&self.backend, policy.mode) {
            (_, Mode::Full) | (None, _) => {
                if self.unavailable.is_some() {
                    degraded.push(Degraded::Unavailable);
                }
                let report = SandboxReport::new(By::None, NetworkKind::All, degraded);
                return Ok(Wrapped { argv, env, report });
            }
            (Some(b), _) => (b, By::of(b)),
        };
        let policy = policy.resolved().map_err(|reason| Unavailable { reason })?;
        self.refuse_writable_programs(&policy, backend)?;
        let env = policy.child_env(env, by);
        let (argv, more) = match backend {
            Backend::Bwrap {
                path,
                disable_userns,
                landlock_abi,
            } => bwrap::wrap(
                &policy,
                path,
                *disable_userns,
                *landlock_abi,
                &self.helper,
                argv,
            ),
            Backend::Landlock { abi } => landlock_argv(&policy, *abi, &self.helper, argv),
            Backend::Seatbelt => seatbelt::wrap(&policy, argv),
        };
        degraded.extend(more);
        let network = if degraded.contains(&Degraded::NetworkProviderNotEnforced) {
            NetworkKind::All
        } else {
            network
        };
        Ok(Wrapped {
            argv,
            env,
            report: SandboxReport::new(by, network, degraded),
        })
    }

    /// A program that a confined child could replace would run the next
    /// child unconfined (the Landlock helper restricts itself only after it
    /// starts): neither bwrap nor baton may live in a writable root.
    fn refuse_writable_programs(
        &self,
        policy: &Policy,
        backend: &Backend,
    ) -> Result<(), Unavailable> {
        let mut programs = vec![self.helper.as_path()];
        if let Backend::Bwrap { path, .. } = backend {
            programs.push(path.as_path());
        }
        for program in programs {
            let real = std::fs::canonicalize(program).unwrap_or_else(|_| program.to_path_buf());
            if let Some(root) = policy.writable().find(|r| real.starts_with(r)) {
                return Err(Unavailable {
                    reason: format!(
                        "`{}` lies inside the writable root `{}`: a confined child could replace it",
                        real.display(),
                        root.display()
                    ),
                });
            }
        }
        Ok(())
    }
}

/// The Landlock backend: the helper itself is the sandbox.
fn landlock_argv(
    policy: &Policy,
    abi: u8,
    helper: &Path,
    argv: Vec<OsString>,
) -> (Vec<OsString>, Vec<Degraded>) {
    let mut degraded = vec![
        Degraded::NoPidNamespace,
        Degraded::GitMetadataWritable,
        Degraded::UnixSocketsReachable,
        Degraded::NoTmpSizeLimit,
    ];
    if abi < 6 {
        degraded.push(Degraded::NoSignalScope);
    }
    if matches!(policy.network, Network::Provider { .. }) {
        if abi < 4 {
            degraded.push(Degraded::NetworkProviderNotEnforced);
        } else {
            degraded.push(Degraded::ProviderPortAnyHost);
        }
    }
    if policy.limits.max_procs.is_some() && running_as_root() {
        degraded.push(Degraded::NoProcessLimit);
    }
    let stage = exec_stage(Stage::Landlock, policy);
    (helper_argv(helper, stage, argv), degraded)
}

/// What the helper is asked to do, as it reads it (JSON on its argv).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HelperArgs {
    pub stage: Stage,
    pub policy: Policy,
}

/// Where the helper runs.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Inside bubblewrap's namespaces: limits, Landlock scopes, seccomp.
    Bwrap,
    /// Outside any namespace: Landlock on files too.
    Landlock,
    /// A tool for people, tests and `bench/sandbox.sh`: choose a backend
    /// here (or take `backend`), wrap the rest and exec it.
    Wrap {
        #[serde(default)]
        backend: Option<WrapWith>,
        /// Print the wrapped argv, environment and report as one JSON line
        /// on stdout instead of running it (what a launcher would spawn:
        /// `bench/sandbox.sh` times that argv, people read it).
        #[serde(default)]
        print: bool,
    },
}

/// The backend `Stage::Wrap` is told to use instead of probing.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum WrapWith {
    Bwrap,
    Landlock,
}

fn exec_stage(stage: Stage, policy: &Policy) -> String {
    serde_json::to_string(&HelperArgs {
        stage,
        policy: policy.clone(),
    })
    .expect("a policy serialises")
}

fn helper_argv(helper: &Path, stage: String, argv: Vec<OsString>) -> Vec<OsString> {
    let mut out: Vec<OsString> = vec![helper.into(), HELPER.into(), stage.into(), "--".into()];
    out.extend(argv);
    out
}

fn running_as_root() -> bool {
    #[cfg(target_os = "linux")]
    {
        sys::euid() == 0
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

#[cfg(test)]
mod tests;
