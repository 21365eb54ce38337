//! Which children run under baton's own sandbox, and with what policy: a
//! peer whose CLI has no sandbox of its own, and every test command.
//!
//! codex and claude confine themselves (and agy's `--sandbox` its terminal
//! commands): baton does not nest a sandbox around theirs and reports
//! `by: "cli"`. Every other agent, and any agent spoken to over ACP, runs
//! under `sandbox::Sandbox` in read-only and workspace access: the file
//! system read-only but for the checkout (workspace), the agent's own state
//! directories and a private temporary directory; secrets, other agents'
//! logins and baton's state directory hidden. A test command gets the same
//! with no network at all. `full` access wraps nothing.
//!
//! The backend is chosen once per process (`--sandbox`, config
//! `run.sandbox`): `auto` takes the best one here and reports `by: "none"`
//! with `degraded: ["unavailable"]` where there is none; `require` refuses
//! to start (`sandbox_unavailable`, exit 2); `off` wraps nothing.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::agent::{Access, Agent, Transport, homes};
use crate::error::{Error, Result};
use crate::process::{Env, Shared, Wrapper};
use crate::sandbox::{Mode, Network, Policy, Sandbox, SandboxReport, Want};

/// What a child gets: the wrapper to spawn it through (none: unwrapped),
/// and what its result says.
pub struct Confined {
    pub wrap: Option<Shared>,
    pub report: SandboxReport,
    /// The private temporary directory, removed with this value.
    tmp: Option<PathBuf>,
    /// `--network provider`: the proxy, stopped with this value.
    pub net: Option<super::network::Setup>,
}

impl Confined {
    /// The report as the run ends: what the proxy refused added.
    pub fn report_now(&self) -> crate::sandbox::RunSandbox {
        let running = self.net.as_ref().and_then(|n| n.running.as_ref());
        let refused = running.map(|r| r.proxy().refused());
        crate::sandbox::RunSandbox::new(self.report.clone(), refused)
    }
}

impl Drop for Confined {
    fn drop(&mut self) {
        if let Some(t) = &self.tmp {
            // remove_dir_all does not follow links: what the child left
            // there goes, nothing it points at.
            let _ = std::fs::remove_dir_all(t);
        }
    }
}

/// Whether `agent` (over `transport`) runs under baton's sandbox rather
/// than its CLI's own.
pub fn needs_ours(agent: Agent, transport: Transport) -> bool {
    transport == Transport::Acp || !matches!(agent, Agent::Codex | Agent::Claude | Agent::Agy)
}

/// Whether a peer of this plan will run confined by baton: what its argv
/// may rely on (ACP `execute` allowed, qwen's shell) — the plan asked for
/// it, the access is not full, and this machine has a backend.
pub fn will_confine(agent: Agent, transport: Transport, access: Access, want: Want) -> bool {
    needs_ours(agent, transport)
        && access != Access::Full
        && want != Want::Off
        && crate::sandbox::probe().best().is_ok()
}

/// The confinement of `plan`'s peer: its cwd is writable in workspace
/// access (with the plan's `writable_dirs` besides); its run id names the
/// private tmp. A dry run creates no state directory.
pub fn peer(plan: &super::Plan, dry_run: bool) -> Result<Confined> {
    let (agent, transport, access, want) = (plan.agent, plan.transport, plan.access, plan.sandbox);
    let (cwd, writable, id) = (&plan.cwd, &plan.writable_dirs, &plan.run_id);
    if !needs_ours(agent, transport) {
        let report = if access == Access::Full {
            SandboxReport::new(
                crate::sandbox::By::None,
                crate::sandbox::NetworkKind::All,
                vec![],
            )
        } else {
            SandboxReport::cli(crate::sandbox::NetworkKind::All)
        };
        return Ok(Confined {
            wrap: None,
            report,
            tmp: None,
            net: None,
        });
    }
    let env = lookup();
    let mut state: Vec<PathBuf> = homes::state_dirs(agent, &env);
    // The CLI creates them on first use; under a read-only home it could not
    // (a dry run makes nothing and shows those that exist).
    state.retain(|d| d.is_dir() || (!dry_run && ensure_dir(d)));
    // The directories a worktree run must write (the writer's own `.git`):
    // those inside the cwd are writable already; one outside it (a cwd in
    // a subdirectory of the checkout) keeps its config and hooks read-only,
    // as the checkout's own do.
    let mut keep_read_only = Vec::new();
    for w in writable.iter().filter(|w| !w.starts_with(cwd)) {
        state.push(w.clone());
        if w.file_name().is_some_and(|n| n == ".git") {
            keep_read_only.extend([w.join("config"), w.join("hooks")]);
        }
    }
    let mut hidden = homes::others_logins(agent, &env);
    if let Ok(s) = crate::state_dir::base() {
        hidden.push(s);
    }
    let net = match &plan.network {
        super::network::PeerNetwork::Provider { hosts }
            if will_confine(agent, transport, access, want) =>
        {
            let env: Vec<(String, String)> = std::env::vars().collect();
            let allow = super::network::allowlist(agent, transport, hosts, &env);
            Some(super::network::setup(allow, dry_run)?)
        }
        _ => None,
    };
    let make = |mode: Mode, tmp: PathBuf| {
        let mut p = Policy::new(mode, tmp, home().as_deref(), &vars());
        if mode == Mode::Workspace {
            p = p.with_workspace(cwd.clone());
        }
        p.state_dirs = state.clone();
        match (&plan.network, &net) {
            (super::network::PeerNetwork::None, _) => p.network = Network::None,
            (_, Some(n)) => {
                p.network = n.network;
                p.proxy_socket = Some(n.socket.clone());
            }
            _ => {}
        }
        p.read_only_inside.extend(keep_read_only.iter().cloned());
        p.hidden.extend(hidden.iter().cloned());
        p
    };
    let mut confined = confine(access, want, id, make)?;
    confined.net = net;
    Ok(confined)
}

/// Whether `require` can be kept for this peer: refused when the run is
/// planned, before anything is made.
pub fn check(agent: Agent, transport: Transport, access: Access, want: Want) -> Result<()> {
    check_with(agent, transport, access, want, || {
        crate::sandbox::probe().best().map(|_| ())
    })
}

fn check_with(
    agent: Agent,
    transport: Transport,
    access: Access,
    want: Want,
    best: impl FnOnce() -> Result<(), String>,
) -> Result<()> {
    if want == Want::Require && needs_ours(agent, transport) && access != Access::Full {
        best().map_err(|reason| unavailable(&reason))?;
    }
    Ok(())
}

/// What `--dry-run` shows: the report, and the argv as it would be spawned.
pub fn preview(c: &Confined, argv: Vec<String>) -> serde_json::Value {
    let argv: Vec<OsString> = argv.into_iter().map(Into::into).collect();
    let wrapped = match &c.wrap {
        Some(w) => w.wrap(argv, Env::default()).0,
        None => argv,
    };
    let mut v = serde_json::to_value(&c.report).unwrap_or_default();
    if let (Some(o), Some(n)) = (v.as_object_mut(), &c.net) {
        o.insert(
            "proxy".into(),
            serde_json::json!({"socket": n.socket, "allowed_hosts": n.allowed}),
        );
    }
    if let Some(o) = v.as_object_mut() {
        o.insert(
            "argv".into(),
            wrapped
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
        );
    }
    v
}

/// A test command's confinement: `checkout` writable (workspace), no
/// network, whatever the peer's access was.
pub fn test(want: Want, checkout: &Path, id: &str) -> Result<Confined> {
    let env = lookup();
    let mut hidden: Vec<PathBuf> = Agent::ALL
        .iter()
        .filter_map(|a| homes::login_file(*a, &env))
        .collect();
    if let Ok(s) = crate::state_dir::base() {
        hidden.push(s);
    }
    let make = |mode: Mode, tmp: PathBuf| {
        let mut p = Policy::new(mode, tmp, home().as_deref(), &vars())
            .with_workspace(checkout.to_path_buf());
        p.hidden.extend(hidden.iter().cloned());
        p.network = Network::None;
        p
    };
    confine(Access::Workspace, want, id, make)
}

fn confine(
    access: Access,
    want: Want,
    id: &str,
    make: impl Fn(Mode, PathBuf) -> Policy,
) -> Result<Confined> {
    let sandbox = Sandbox::choose(want).map_err(|u| unavailable(&u.reason))?;
    let mode = match access {
        Access::ReadOnly => Mode::ReadOnly,
        Access::Workspace => Mode::Workspace,
        Access::Full => Mode::Full,
    };
    if mode == Mode::Full || sandbox.backend.is_none() {
        // Nothing to wrap: the report says why (off, full, or none here).
        let probe = make(mode, std::env::temp_dir());
        let w = sandbox
            .wrap(&probe, Vec::new(), Vec::new())
            .map_err(|u| unavailable(&u.reason))?;
        return Ok(Confined {
            wrap: None,
            report: w.report,
            tmp: None,
            net: None,
        });
    }
    let tmp = private_tmp(id)?;
    let policy = make(mode, tmp.clone());
    // Refused now, before anything starts (a writable root that does not
    // exist, baton or bwrap inside one): the wrapper itself cannot fail.
    let first = sandbox
        .wrap(&policy, vec!["true".into()], Vec::new())
        .map_err(|u| {
            let _ = std::fs::remove_dir_all(&tmp);
            unavailable(&u.reason)
        })?;
    Ok(Confined {
        wrap: Some(Shared(Arc::new(Wrap { sandbox, policy }))),
        report: first.report,
        tmp: Some(tmp),
        net: None,
    })
}

fn unavailable(reason: &str) -> Error {
    Error::Refused {
        kind: "sandbox_unavailable",
        message: format!("baton's sandbox cannot be set up here: {reason}"),
        hint: "run `baton doctor` (it says what this machine lacks and how to fix it); \
               --sandbox auto runs without it and says so in the result, --sandbox off \
               never wraps"
            .into(),
    }
}

struct Wrap {
    sandbox: Sandbox,
    policy: Policy,
}

impl Wrapper for Wrap {
    fn wrap(&self, argv: Vec<OsString>, env: Env) -> (Vec<OsString>, Env) {
        // The child's whole environment as the launcher would have made it:
        // the wrapped one is given complete (and cleared first).
        let mut full: Vec<(OsString, OsString)> = if env.clear {
            Vec::new()
        } else {
            std::env::vars_os().collect()
        };
        full.retain(|(k, _)| !env.remove.contains(k) && !env.set.iter().any(|(s, _)| s == k));
        full.extend(env.set);
        match self.sandbox.wrap(&self.policy, argv, full) {
            Ok(w) => (
                w.argv,
                Env {
                    set: w.env,
                    remove: Vec::new(),
                    clear: true,
                },
            ),
            // Checked when the plan was made; the world changed since. The
            // helper refuses a policy it cannot read and runs nothing (126).
            Err(u) => (
                vec![
                    self.sandbox.helper.clone().into(),
                    crate::sandbox::HELPER.into(),
                    format!("refused: {}", u.reason).into(),
                    "--".into(),
                    "false".into(),
                ],
                Env {
                    set: Vec::new(),
                    remove: Vec::new(),
                    clear: true,
                },
            ),
        }
    }
}

/// A 0700 directory of the run's own under the system's temporary one.
fn private_tmp(id: &str) -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("baton-{id}-{}", crate::ids::new_id()));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    Ok(dir)
}

fn ensure_dir(d: &Path) -> bool {
    d.is_dir()
        || std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(d)
            .is_ok()
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}

fn vars() -> Vec<(OsString, OsString)> {
    std::env::vars_os().collect()
}

fn lookup() -> impl Fn(&str) -> Option<String> {
    |k: &str| std::env::var(k).ok()
}

use std::os::unix::fs::DirBuilderExt;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_claude_and_agy_keep_their_own_sandbox_the_rest_get_batons() {
        for a in [Agent::Codex, Agent::Claude, Agent::Agy] {
            assert!(!needs_ours(a, Transport::Headless), "{a:?}");
            assert!(needs_ours(a, Transport::Acp), "{a:?} over ACP");
        }
        for a in [
            Agent::Pi,
            Agent::Zai,
            Agent::Opencode,
            Agent::Qwen,
            Agent::GeminiCli,
            Agent::Copilot,
        ] {
            assert!(needs_ours(a, Transport::Headless), "{a:?}");
        }
    }

    #[test]
    fn require_with_no_backend_is_refused_before_anything_starts() {
        let none = || Err("bubblewrap: not installed; no Landlock in this kernel".to_string());
        let e = check_with(
            Agent::Pi,
            Transport::Headless,
            Access::Workspace,
            Want::Require,
            none,
        )
        .unwrap_err();
        assert_eq!((e.kind(), e.exit_code()), ("sandbox_unavailable", 2));
        assert!(e.to_string().contains("no Landlock"), "{e}");
        assert!(e.hint().unwrap().contains("baton doctor"));
        // Nothing to keep: auto, a CLI with its own sandbox, full access.
        assert!(
            check_with(
                Agent::Pi,
                Transport::Headless,
                Access::Workspace,
                Want::Auto,
                none
            )
            .is_ok()
        );
        assert!(
            check_with(
                Agent::Codex,
                Transport::Headless,
                Access::Workspace,
                Want::Require,
                none
            )
            .is_ok()
        );
        assert!(
            check_with(
                Agent::Pi,
                Transport::Headless,
                Access::Full,
                Want::Require,
                none
            )
            .is_ok()
        );
        assert!(
            check_with(
                Agent::Codex,
                Transport::Acp,
                Access::ReadOnly,
                Want::Require,
                none
            )
            .is_err()
        );
    }

    #[test]
    fn full_access_and_off_wrap_nothing_and_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let plan = |agent, access, want| {
            let mut p = super::super::Plan::test(agent, access, dir.path());
            p.sandbox = want;
            p
        };
        let c = peer(&plan(Agent::Pi, Access::Full, Want::Auto), false).unwrap();
        assert!(c.wrap.is_none());
        assert_eq!(c.report.by, crate::sandbox::By::None);
        let c = peer(&plan(Agent::Pi, Access::Workspace, Want::Off), false).unwrap();
        assert!(c.wrap.is_none());
        assert_eq!(c.report.by, crate::sandbox::By::None);
        let c = peer(&plan(Agent::Codex, Access::Workspace, Want::Require), false).unwrap();
        assert_eq!(c.report.by, crate::sandbox::By::Cli);
    }
}
