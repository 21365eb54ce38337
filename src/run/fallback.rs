//! `--fallback claude,pi:glm-5.2` (or `run.fallback` in the config): the
//! agents a run may hand its task to when the first cannot answer, resolved
//! when the run is planned, so that an agent that cannot enforce the access
//! asked for, or a value its argv would refuse, stops the run before any
//! peer starts. `chain` runs them.

use serde::{Deserialize, Serialize};

use super::{Plan, RunRequest, check_access_cap, resolve_transport};
use crate::agent::argv::{Origin, Origins};
use crate::agent::models;
use crate::agent::{Agent, CommandSpec, Transport};
use crate::config::{self, Val};
use crate::error::{Error, Result};

/// One agent of a fallback chain, with its own options (from the config,
/// as `--agent` would take them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Link {
    pub agent: Agent,
    pub model: Option<String>,
    pub effort: Option<String>,
    #[serde(default)]
    pub profile: Option<String>,
    #[serde(default)]
    pub provider: Option<String>,
    /// The config's `agents.<name>.command`.
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// How baton drives it: its default, or `agents.<name>.transport` (an
    /// ACP-only agent such as copilot is driven over ACP).
    #[serde(default)]
    pub transport: Transport,
    /// What resolving its model said (an unknown model passed through).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Where its values came from, for a refusal. Not stored.
    #[serde(skip)]
    pub origins: Origins,
}

/// The chain the request asks for: `--fallback`, else `run.fallback` of
/// the config. A resumed session cannot move to another agent: the flag is
/// refused with `--resume`, the config's chain is left out (with a warning).
pub fn links(args: &RunRequest, warnings: &mut Vec<String>) -> Result<Vec<Link>> {
    let cfg = config::active();
    let (items, origin) = match &args.fallback {
        Some(items) => (items.clone(), Origin::Flag("--fallback")),
        None => match cfg.lookup("run.fallback") {
            Some(s) => {
                let items = match s.value {
                    Val::List(l) => l,
                    other => vec![other.to_string()],
                };
                let origin = s
                    .source
                    .origin("run.fallback")
                    .unwrap_or(Origin::Flag("--fallback"));
                (items, origin)
            }
            None => return Ok(Vec::new()),
        },
    };
    // `--fallback ""` asks for no chain, whatever the config says.
    let items: Vec<String> = items.into_iter().filter(|i| !i.trim().is_empty()).collect();
    if items.is_empty() {
        return Ok(Vec::new());
    }
    if args.resume.is_some() {
        if args.fallback.is_some() {
            return Err(Error::usage_hint(
                "--fallback cannot go with --resume: another agent cannot continue this session",
                "drop --fallback, or start a new run without --resume",
            ));
        }
        warnings.push(format!(
            "the fallback chain of {} was left out: another agent cannot continue a resumed session",
            origin.describe()
        ));
        return Ok(Vec::new());
    }
    items
        .iter()
        .map(|item| {
            let (agent, model) = models::parse_item(item).map_err(|e| named(e, &origin))?;
            link(agent, model, &origin)
        })
        .collect()
}

/// A usage error about an item from a config file says which line.
fn named(e: Error, origin: &Origin) -> Error {
    match (e, origin) {
        (Error::Usage { message, hint }, o @ Origin::File { .. }) => Error::Usage {
            message: format!("{message} (from {})", o.describe()),
            hint,
        },
        (e, _) => e,
    }
}

/// One agent with its options: the item's model, else the config's; the
/// config's effort, profile, provider and command, as `--agent` would.
fn link(agent: Agent, model: Option<String>, origin: &Origin) -> Result<Link> {
    let cfg = config::active();
    let from_cfg = |leaf: &str| {
        let key = format!("agents.{}.{leaf}", agent.name());
        cfg.lookup(&key).map(|s| (s.str(), s.source.origin(&key)))
    };
    let (model, model_from) = match model {
        Some(m) => (Some(m), Some(origin.clone())),
        None => from_cfg("model").map_or((None, None), |(v, o)| (Some(v), o)),
    };
    let (effort, effort_from) = from_cfg("effort").map_or((None, None), |(v, o)| (Some(v), o));
    let takes_provider = Agent::TAKES_PROVIDER.contains(&agent);
    let (provider, provider_from) = from_cfg("provider")
        .filter(|_| takes_provider)
        .map_or((None, None), |(v, o)| (Some(v), o));
    let (profile, profile_from) = from_cfg("profile")
        .filter(|_| agent == Agent::Codex)
        .map_or((None, None), |(v, o)| (Some(v), o));
    let resolved = models::resolve(agent, model.as_deref(), effort.as_deref())
        .map_err(|e| named(e, model_from.as_ref().unwrap_or(origin)))?;
    // As `--agent` would pick it; `--transport` is the first agent's alone.
    let key = format!("agents.{}.transport", agent.name());
    let transport = resolve_transport(agent, cfg.string(&key)).map_err(|e| {
        let o = cfg.lookup(&key).and_then(|s| s.source.origin(&key));
        named(e, o.as_ref().unwrap_or(origin))
    })?;
    Ok(Link {
        agent,
        model: resolved.model,
        effort: resolved.effort,
        profile,
        provider,
        command: cfg.command(agent),
        transport,
        warnings: resolved.warnings,
        origins: Origins {
            model: model_from,
            effort: effort_from,
            profile: profile_from,
            provider: provider_from,
            resume: None,
        },
    })
}

impl Plan {
    /// The same run handed to `l`'s agent: the same task, prompt, place,
    /// access and limits, its own agent and options, a fresh session.
    pub fn for_link(&self, l: &Link) -> Plan {
        let mut p = self.clone();
        p.agent = l.agent;
        p.model = l.model.clone();
        p.effort = l.effort.clone();
        p.profile = l.profile.clone();
        p.provider = l.provider.clone();
        p.command = l.command.clone();
        p.transport = l.transport;
        p.resume = None;
        p.warnings = l.warnings.clone();
        p.origins = l.origins.clone();
        p.fallback = Vec::new();
        p.fell_back = true;
        p
    }

    /// `--network none|provider` holds for this plan's agent.
    fn network_held(&self) -> Result<()> {
        super::network::held(
            &self.network,
            self.agent,
            self.transport,
            self.access,
            self.sandbox,
        )
    }

    /// Each fallback agent's plan and exact command: an agent that cannot
    /// enforce the access asked for, access over the cap a parent set
    /// (`BATON_MAX_ACCESS`), or a value the argv check refuses, is an error
    /// now, before anything runs.
    pub fn chain_commands(&self) -> Result<Vec<(Plan, CommandSpec)>> {
        self.fallback
            .iter()
            .map(|l| {
                let p = self.for_link(l);
                check_access_cap(p.access).map_err(|e| fallback_refusal(l, e))?;
                p.network_held().map_err(|e| fallback_refusal(l, e))?;
                let spec = p.command().map_err(|e| fallback_refusal(l, e))?;
                Ok((p, spec))
            })
            .collect()
    }

    /// The chain without the agents that could not take this plan's task
    /// (the checks of `chain_commands`, and an installed CLI), each left
    /// out named in a warning. For a caller whose chain comes from the
    /// config and whose run must not fail for an agent that might never be
    /// needed (a council's writer, planned after its members answered).
    pub fn keep_usable_links(&mut self) -> Vec<String> {
        let mut notes = Vec::new();
        let links = std::mem::take(&mut self.fallback);
        for l in links {
            let p = self.for_link(&l);
            let checked = check_access_cap(p.access)
                .and_then(|_| p.network_held())
                .and_then(|_| p.command())
                .and_then(|spec| p.program(&spec).map(|_| ()));
            match checked {
                Ok(()) => self.fallback.push(l),
                Err(e) => notes.push(format!(
                    "`{}` was left out of the fallback chain: {e}",
                    l.agent.name()
                )),
            }
        }
        notes
    }

    /// Every fallback agent's CLI is installed (127 otherwise, as for `--agent`).
    pub fn check_chain_installed(&self) -> Result<()> {
        for (p, spec) in self.chain_commands()? {
            p.program(&spec)?;
        }
        Ok(())
    }
}

/// An access refusal of a fallback agent says it is one.
fn fallback_refusal(l: &Link, e: Error) -> Error {
    let why = format!(
        "`{}` is in the fallback chain (--fallback or run.fallback): drop it from there",
        l.agent.name()
    );
    match e {
        Error::Refused {
            kind: "access_capped",
            message,
            hint,
        } => Error::Refused {
            kind: "access_capped",
            message,
            hint: format!("{hint}; {why}"),
        },
        Error::UnsupportedAccess {
            agent,
            access,
            reason,
            hint,
        } => Error::UnsupportedAccess {
            agent,
            access,
            reason,
            hint: format!("{hint}; {why}"),
        },
        Error::Usage { message, hint } => Error::Usage {
            message,
            hint: Some(hint.map_or(why.clone(), |h| format!("{h}; {why}"))),
        },
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Access;

    fn link(agent: Agent, command: Option<Vec<String>>) -> Link {
        Link {
            agent,
            model: None,
            effort: None,
            profile: None,
            provider: None,
            command,
            transport: Transport::default(),
            warnings: vec![],
            origins: Origins::default(),
        }
    }

    #[test]
    fn the_chain_keeps_only_agents_that_can_take_the_task_and_names_the_others() {
        let d = tempfile::tempdir().unwrap();
        let sh = vec!["/bin/sh".to_string()];
        let mut p = Plan::test(Agent::Pi, Access::ReadOnly, d.path());
        p.fallback = vec![
            link(Agent::Claude, Some(sh.clone())),
            // Not installed: its command is nowhere.
            link(
                Agent::Codex,
                Some(vec!["/nonexistent/baton-test/codex".into()]),
            ),
            // Cannot enforce read-only.
            link(Agent::Agy, Some(sh.clone())),
            link(Agent::Pi, Some(sh)),
        ];
        let notes = p.keep_usable_links();
        let kept: Vec<Agent> = p.fallback.iter().map(|l| l.agent).collect();
        assert_eq!(kept, [Agent::Claude, Agent::Pi]);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(
            notes[0].starts_with("`codex` was left out of the fallback chain: "),
            "{notes:?}"
        );
        assert!(
            notes[1].starts_with("`gemini` was left out of the fallback chain: ")
                && notes[1].contains("read-only"),
            "{notes:?}"
        );
    }
}
