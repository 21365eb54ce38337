//! One run of a peer: `plan` turns a `RunRequest` into a `Plan`, `execute`
//! starts the peer under supervision and builds the one result.
//!
//! Split in two so the background job runner shares it: `plan` does every
//! check that can fail fast (usage, access, recursion, CLI installed) and
//! `execute` runs the peer and writes its logs into a given directory.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::agent::argv::{Origin, Origins};
use crate::agent::models;
use crate::agent::{Access, Agent, CommandSpec, Extra, Request, Transport};
use crate::error::{Error, Result};
use crate::process::{self, Limits};
use crate::spend::{Budget, Meter};
use crate::{config, duration, fsutil, ids, prompt};

mod cap;
pub mod chain;
mod execute;
pub mod fallback;
pub mod gate;
mod input;
pub mod notice;
pub mod observe;
mod records;
mod told;
mod transport;

pub use cap::{ALLOW_TEST_CMD_VAR, Depth, MAX_ACCESS_VAR, check_access_cap, check_test_cmd_cap};
pub use chain::Hooks;
pub use execute::{execute, save_result, summarize};
pub use fallback::Link;
pub use notice::Notice;
pub mod confine;
mod dry_run;
pub mod network;
mod spent;
pub use dry_run::dry_run_json;
pub use input::{budget, check_agent_priced, check_plan_priced, read_task};
pub use input::{check_priced, resolve_access, resolve_cwd};
pub use records::{RUN_LOCK, new_run_dir, run_dir_or_warning};
pub use transport::resolve_transport;
use transport::{ACP_AFTER_FINAL, acp_init_timeout};

/// How long a peer may linger after its own "turn finished" event.
pub const AFTER_FINAL_GRACE: Duration = crate::process::timeouts::AFTER_FINAL.default;
/// SIGTERM → SIGKILL grace when stopping a peer.
pub const KILL_GRACE: Duration = Duration::from_secs(5);
/// The most `--retry` allows.
pub const MAX_RETRY: u32 = 10;

/// `AFTER_FINAL_GRACE`, unless `BATON_FINAL_GRACE_MS` overrides it. Internal,
/// undocumented for users: it exists so the test of a peer that hangs after
/// its final event does not have to wait 10 s.
fn after_final_grace() -> Duration {
    crate::process::timeouts::AFTER_FINAL.get()
}

/// Everything decided before the peer starts. Serialisable: a background
/// job stores it and its runner executes it later.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    pub agent: Agent,
    pub access: Access,
    pub model: Option<String>,
    pub effort: Option<String>,
    pub resume: Option<String>,
    pub cwd: PathBuf,
    /// The project (git top-level of cwd, else cwd): its records are kept
    /// under this key (`state_dir`), its worktrees in `<root>/.baton/`.
    pub root: PathBuf,
    /// The task as the user gave it.
    pub task: String,
    /// What the peer receives (brief + task, or the raw task).
    pub prompt: String,
    pub raw: bool,
    pub profile: Option<String>,
    pub provider: Option<String>,
    /// How baton talks to the agent (its CLI's headless mode, or ACP).
    #[serde(default)]
    pub transport: Transport,
    /// The argv prefix that starts the CLI (config `agents.<name>.command`),
    /// in place of its binary on PATH.
    #[serde(default)]
    pub command: Option<Vec<String>>,
    pub timeout_ms: u64,
    pub idle_timeout_ms: u64,
    pub warnings: Vec<String>,
    /// The recursion depth the peer gets (`BATON_DEPTH`).
    pub child_depth: u32,
    /// Directories outside `cwd` the peer must be able to write (a linked
    /// worktree's git metadata, so the peer can commit).
    #[serde(default)]
    pub writable_dirs: Vec<PathBuf>,
    /// Paths the peer must not write although its CLI might open them up
    /// (the user's git state, beside a linked worktree).
    #[serde(default)]
    pub protected_paths: Vec<PathBuf>,
    /// In a baton worktree: its repository, so that the changed-files
    /// snapshot looks at exactly that one (and not at all once the peer
    /// rewired it; the run's end reports that as tampering).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_pin: Option<crate::git::pin::Pin>,
    /// `--max-usd`, `--budget-tokens`: what the whole run may spend.
    #[serde(default)]
    pub budget: Budget,
    /// The spending this call counts into and is checked against (set by
    /// whoever runs it: a run's attempts, an ask's advisers and a council's
    /// members share one). Not stored: a job's runner makes it again from
    /// `budget`.
    #[serde(skip)]
    pub meter: Option<Meter>,
    /// The run this call belongs to in the usage ledger: its retries,
    /// fallbacks and repair rounds are calls of the same run.
    #[serde(default = "ids::new_id")]
    pub run_id: String,
    /// This call stands in for an agent of the run that failed before it
    /// (`--fallback`).
    #[serde(default)]
    pub fell_back: bool,
    /// `--fallback`: the agents the task goes to, in order, when this one
    /// fails before it could work (`Failure::falls_back`).
    #[serde(default)]
    pub fallback: Vec<Link>,
    /// `--retry`: how often a rate-limited or unavailable provider is tried
    /// again on the same agent.
    #[serde(default)]
    pub retry: u32,
    /// Where model, effort, profile, provider and resume came from, for
    /// refusals. Not stored: a plan read back from disk has none.
    #[serde(skip)]
    pub origins: Origins,
    /// `--sandbox`: whether a peer without a sandbox of its own (and the
    /// test command) runs under baton's (`run::confine`).
    #[serde(default)]
    pub sandbox: crate::sandbox::Want,
    /// `--network`: what the peer under baton's sandbox may reach.
    #[serde(default)]
    pub network: network::PeerNetwork,
    /// An adviser (`ask`, a council member's read-only stages): its CLI's
    /// read-only tool switches and ACP policy are kept even under baton's
    /// sandbox, which holds the file system as well. It needs no shell or
    /// edit tool to advise, and every tool declared costs tokens on each
    /// request. A plain `run --read-only` under the sandbox drops them
    /// instead (its shell runs; a write fails by the kernel).
    #[serde(default)]
    pub adviser: bool,
}

/// What the caller asks of one run, as given (the command line, `ask`, or
/// `continue`). Durations stay text: `plan` checks them in its fixed order,
/// so the first error reported for a bad request never changes.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    pub agent: Option<String>,
    pub model: Option<String>,
    pub effort: Option<String>,
    pub access: Option<String>,
    pub read_only: bool,
    pub full_access: bool,
    /// `--sandbox`. `None`: `run.sandbox` of the config, else auto.
    pub sandbox: Option<String>,
    /// `--network`: `all` (`None`), `none` or `provider`.
    pub network: Option<String>,
    /// `--network-host`: more hosts for `provider` (checked in `network`).
    pub network_hosts: Vec<String>,
    pub cwd: Option<PathBuf>,
    /// Read the task from this file (`-` for stdin).
    pub prompt_file: Option<PathBuf>,
    pub resume: Option<String>,
    /// `None`: `run.timeout` of the config, else 60m.
    pub timeout: Option<String>,
    /// `None`: `run.idle_timeout` of the config, else 15m.
    pub idle_timeout: Option<String>,
    pub profile: Option<String>,
    pub provider: Option<String>,
    /// `--transport`: headless or acp (`None`: the config's
    /// `agents.<name>.transport`, else the agent's default).
    pub transport: Option<String>,
    pub raw: bool,
    /// The task as words (joined by spaces).
    pub task: Vec<String>,
    /// `--max-usd`: dollars the run may spend (reported or estimated cost).
    pub max_usd: Option<f64>,
    /// `--budget-tokens`: input + output tokens the run may spend.
    pub budget_tokens: Option<u64>,
    /// `--fallback`: `NAME[:MODEL]` items. `None`: `run.fallback` of the config.
    pub fallback: Option<Vec<String>>,
    /// `--retry`. `None`: `run.retry` of the config, else 0.
    pub retry: Option<u32>,
    /// Where model, effort, profile, provider and resume came from when not
    /// from the flag of that name (`ask --agents`, `continue`'s job record).
    pub origins: Origins,
}

/// Validate the command line into a plan. Fails fast on every usage problem.
pub fn plan(args: &RunRequest, task: String) -> Result<Plan> {
    let depth = Depth::from_env();
    depth.check()?;
    // What the request leaves open comes from the config (BATON_* variables,
    // then the project file, then the user file).
    let cfg = config::active();
    let agent = match &args.agent {
        Some(a) => Agent::parse(a)?,
        None => cfg.default_agent(),
    };
    // A value the request gives wins; else the config's, with its source.
    let pick = |key: &str, given: &Option<String>, from: &Option<Origin>, flag: &'static str| {
        let key = format!("agents.{}.{key}", agent.name());
        match given {
            Some(v) => (
                Some(v.clone()),
                Some(from.clone().unwrap_or(Origin::Flag(flag))),
            ),
            None => cfg.lookup(&key).map_or((None, None), |s| {
                let origin = s.source.origin(&key);
                (Some(s.str()), origin)
            }),
        }
    };
    let o = &args.origins;
    let (model, model_from) = pick("model", &args.model, &o.model, "--model");
    let (effort, effort_from) = pick("effort", &args.effort, &o.effort, "--effort");
    let access = resolve_access(args)?;
    check_access_cap(access)?;
    let sandbox = input::resolve_sandbox(args)?;
    let cwd = resolve_cwd(args.cwd.as_deref())?;
    // The model alone first, so that an error names the source of the
    // value it is about.
    models::resolve(agent, model.as_deref(), None).map_err(|e| from(e, &model_from))?;
    let resolved = models::resolve(agent, model.as_deref(), effort.as_deref())
        .map_err(|e| from(e, &effort_from))?;
    let limit = |given: &Option<String>, key: &str, default: &str| {
        duration::parse(
            &given
                .clone()
                .or_else(|| cfg.string(key))
                .unwrap_or_else(|| default.to_string()),
        )
    };
    let timeout = limit(&args.timeout, "run.timeout", "60m")?;
    let idle = limit(&args.idle_timeout, "run.idle_timeout", "15m")?;
    if timeout.is_zero() {
        return Err(Error::usage("--timeout must be more than zero"));
    }
    let budget = budget(args.max_usd, args.budget_tokens)?;
    let mut warnings = resolved.warnings;
    let chain = fallback::links(args, &mut warnings)?;
    let retry = match args.retry {
        Some(n) => n,
        None => cfg
            .count("run.retry")
            .map_or(0, |n| n.min(u64::from(MAX_RETRY)) as u32),
    };
    if retry > MAX_RETRY {
        return Err(Error::usage_hint(
            format!("--retry {retry} is more than {MAX_RETRY}"),
            "a provider that is still unavailable after a few tries will not answer soon: \
             use --fallback for another agent",
        ));
    }
    if args.profile.is_some() && agent != Agent::Codex {
        return Err(Error::usage_hint(
            "--profile is a codex option",
            "drop --profile or use --agent codex",
        ));
    }
    if args.provider.is_some() && !Agent::TAKES_PROVIDER.contains(&agent) {
        return Err(Error::usage_hint(
            "--provider is a pi, opencode or qwen option",
            "drop --provider, or use --agent pi, opencode or qwen (zai always uses the zai provider)",
        ));
    }
    // Only an agent that has the option takes it from the config.
    let none = || (None, None);
    let (profile, profile_from) = if agent == Agent::Codex {
        pick("profile", &args.profile, &o.profile, "--profile")
    } else {
        none()
    };
    let (provider, provider_from) = if Agent::TAKES_PROVIDER.contains(&agent) {
        pick("provider", &args.provider, &o.provider, "--provider")
    } else {
        none()
    };
    // Every value that reaches the CLI's argv is checked in one place,
    // `agent::argv` (through `p.command()` below), whatever its source.
    let origins = Origins {
        model: model_from,
        effort: effort_from,
        profile: profile_from,
        provider: provider_from,
        resume: args
            .resume
            .as_ref()
            .map(|_| o.resume.clone().unwrap_or(Origin::Flag("--resume"))),
    };
    let transport = resolve_transport(
        agent,
        args.transport
            .clone()
            .or_else(|| cfg.string(&format!("agents.{}.transport", agent.name()))),
    )?;
    confine::check(agent, transport, access, sandbox)?;
    let network = network::resolve(args, agent, transport, access, sandbox)?;
    let cwd_str = cwd.display().to_string();
    let prompt = if args.raw {
        task.clone()
    } else {
        prompt::brief(&task, access, &cwd_str)
    };
    let p = Plan {
        agent,
        access,
        model: resolved.model,
        effort: resolved.effort,
        resume: args.resume.clone(),
        root: fsutil::project_root(&cwd),
        cwd,
        task,
        prompt,
        raw: args.raw,
        profile,
        provider,
        transport,
        command: cfg.command(agent),
        timeout_ms: duration::millis(timeout),
        idle_timeout_ms: duration::millis(idle),
        warnings,
        child_depth: depth.depth + 1,
        writable_dirs: Vec::new(),
        protected_paths: Vec::new(),
        git_pin: None,
        budget,
        meter: None,
        run_id: ids::new_id(),
        fell_back: false,
        fallback: chain,
        retry,
        origins,
        sandbox,
        network,
        adviser: false,
    };
    // Refuse `--max-usd` that counts nothing, unenforceable access and unsafe
    // values now, not after the job started: for every agent of the chain.
    check_plan_priced(&p, p.budget.max_usd)?;
    p.command()?;
    p.chain_commands()?;
    Ok(p)
}

impl Plan {
    pub fn request(&self) -> Request {
        Request {
            prompt: self.prompt.clone(),
            access: self.access,
            model: self.model.clone(),
            effort: self.effort.clone(),
            resume: self.resume.clone(),
            cwd: self.cwd.clone(),
            profile: self.profile.clone(),
            provider: self.provider.clone(),
            timeout_secs: self.timeout_ms.div_ceil(1000),
            // SAFETY: geteuid has no preconditions.
            is_root: crate::sys::proc::euid() == 0,
            confined: confine::will_confine(self.agent, self.transport, self.access, self.sandbox),
            missing_sandbox_deps: missing_sandbox_deps(self.agent, self.access),
            transport: self.transport,
            extra: Extra {
                writable_dirs: self.writable_dirs.clone(),
                protected_paths: self.protected_paths.clone(),
                ..Extra::default()
            },
            origins: self.origins.clone(),
        }
    }

    pub fn command(&self) -> Result<CommandSpec> {
        self.command_with(Extra::default())
    }

    pub fn command_with(&self, extra: Extra) -> Result<CommandSpec> {
        let mut req = self.request();
        let dirs = std::mem::take(&mut req.extra.writable_dirs);
        let protected = std::mem::take(&mut req.extra.protected_paths);
        req.extra = extra;
        // An adviser keeps its CLI's read-only tool switches (the sandbox
        // still wraps the process: `confined` here only picks the argv).
        if self.adviser {
            req.confined = false;
        }
        req.extra.writable_dirs.extend(dirs);
        req.extra.protected_paths.extend(protected);
        let mut spec = self.agent.command(&req)?;
        if let Some(prefix) = &self.command {
            spec.program = prefix[0].clone();
            let mut args: Vec<std::ffi::OsString> = prefix[1..].iter().map(Into::into).collect();
            args.append(&mut spec.args);
            spec.args = args;
        }
        spec.env_set
            .push(("BATON_DEPTH".into(), self.child_depth.to_string()));
        Ok(spec)
    }

    pub fn limits(&self) -> Limits {
        Limits {
            timeout: Duration::from_millis(self.timeout_ms),
            idle_timeout: (self.agent.streams_progress() && self.idle_timeout_ms > 0)
                .then(|| Duration::from_millis(self.idle_timeout_ms)),
            // An ACP agent's turn is over when its prompt is answered; one
            // that lingers after its stdin closed is stopped sooner.
            after_final: match self.transport {
                Transport::Acp => after_final_grace().min(ACP_AFTER_FINAL),
                Transport::Headless => after_final_grace(),
            },
            kill_grace: KILL_GRACE,
            stop_on: crate::agent::Failing::stops_by_default,
            handshake: (self.transport == Transport::Acp).then(acp_init_timeout),
            watch: None,
            wrap: None,
        }
    }

    /// The peer CLI on PATH, or the 127 error that says how to install it.
    pub fn program(&self, spec: &CommandSpec) -> Result<PathBuf> {
        process::find_program(&spec.program)
            .filter(|p| self.command.is_none() || p.is_file())
            .ok_or_else(|| Error::NotInstalled {
                agent: self.agent.name(),
                binary: spec.program.clone(),
                hint: match &self.command {
                    Some(_) => format!(
                        "fix agents.{}.command in your config (`baton config show` names the file)",
                        self.agent.name()
                    ),
                    None => format!("install it: {}", self.agent.install_hint()),
                },
            })
    }
}

impl Plan {
    /// The meter this plan's calls count into: the one a caller set, else
    /// a new one for the plan's own budget.
    pub fn meter(&self) -> Meter {
        self.meter
            .clone()
            .unwrap_or_else(|| Meter::new(self.budget))
    }
}

/// A usage error about a value from a config file or variable says which:
/// its message names the value but was written for the flag.
fn from(e: Error, origin: &Option<Origin>) -> Error {
    match (e, origin) {
        (Error::Usage { message, hint }, Some(o @ (Origin::Env(_) | Origin::File { .. }))) => {
            Error::Usage {
                message: format!("{message} (from {})", o.describe()),
                hint,
            }
        }
        (e, _) => e,
    }
}

/// claude's workspace mode relies on its OS sandbox; on Linux that needs
/// bubblewrap and socat.
fn missing_sandbox_deps(agent: Agent, access: Access) -> Vec<&'static str> {
    if agent != Agent::Claude || access != Access::Workspace || !cfg!(target_os = "linux") {
        return Vec::new();
    }
    ["bwrap", "socat"]
        .into_iter()
        .filter(|p| process::find_program(p).is_none())
        .collect()
}

#[cfg(test)]
impl Plan {
    /// The plan unit tests start from: `agent` with `access` in `dir` (its
    /// cwd and root), no task, a minute's limits, no budget, no fallback.
    pub(crate) fn test(agent: Agent, access: Access, dir: &std::path::Path) -> Plan {
        Plan {
            agent,
            access,
            model: None,
            effort: None,
            resume: None,
            cwd: dir.to_path_buf(),
            root: dir.to_path_buf(),
            task: String::new(),
            prompt: String::new(),
            raw: false,
            profile: None,
            provider: None,
            transport: Default::default(),
            command: None,
            timeout_ms: 60_000,
            idle_timeout_ms: 60_000,
            warnings: vec![],
            child_depth: 1,
            writable_dirs: vec![],
            protected_paths: vec![],
            git_pin: None,
            budget: Default::default(),
            meter: None,
            run_id: "r".into(),
            fell_back: false,
            fallback: vec![],
            retry: 0,
            origins: Default::default(),
            sandbox: crate::sandbox::Want::Off,
            network: network::PeerNetwork::All,
            adviser: false,
        }
    }
}
