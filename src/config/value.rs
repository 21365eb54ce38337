//! One value of a config file checked against what its key holds (`Kind`):
//! its type, its range, and what a project file may not set.

use toml::de::DeValue;

use super::file::{Ctx, Kind, Scope, Val, names};
use crate::agent::{Access, Agent};
use crate::error::Error;
use crate::error::Result;

fn want(kind: Kind) -> &'static str {
    match kind {
        Kind::Count | Kind::PositiveCount => "a whole number",
        Kind::Fallback => "a list of agent names (\"claude\", \"pi:glm-5.2\")",
        Kind::Command => "a list of strings",
        Kind::NetworkHosts => "a list of hosts (\"api.example.com\", \"127.0.0.1:8080\")",
        Kind::Globs => "a list of globs (\"tests/**\", \"**/*_spec.rb\")",
        Kind::Duration => "a duration (\"90s\", \"45m\") or a number of seconds",
        _ => "a string",
    }
}

pub(super) fn check(
    cx: &Ctx,
    key: &str,
    kind: Kind,
    v: &DeValue,
    at: usize,
    agent: Option<Agent>,
) -> Result<Val> {
    let wrong = |want: &str| {
        cx.err(
            at,
            key,
            format!("expected {want}, found {}", v.type_str()),
            "see docs/config.md for the type of each key",
        )
    };
    let bad = |msg: String, hint: &str| cx.err(at, key, msg, hint);
    if let (Kind::Fallback, DeValue::Array(items)) = (kind, v) {
        let mut list = Vec::new();
        for item in items.iter() {
            let Some(s) = item.get_ref().as_str() else {
                return Err(wrong("a list of agent names (\"claude\", \"pi:glm-5.2\")"));
            };
            if cx.scope == Scope::Project && super::secret::looks_like_secret(s) {
                return Err(bad(
                    "this value looks like a credential, and baton.toml is committed with the \
                     repository"
                        .into(),
                    "remove it now (and rotate the credential if it was ever committed)",
                ));
            }
            // The agent and the shape here; the model's characters where
            // every value bound for an argv is checked (`agent::argv`).
            crate::agent::models::parse_item(s)
                .map_err(|e| bad(e.to_string(), &e.hint().unwrap_or_default()))?;
            list.push(s.trim().to_string());
        }
        return Ok(Val::List(list));
    }
    if let Kind::NetworkHosts = kind {
        // A committed file must not widen what a confined peer may reach.
        if cx.scope == Scope::Project {
            return Err(bad(
                "a project file may not add hosts a confined peer may reach".into(),
                "set run.network_hosts in your user file (`baton config path`), or pass \
                 --network-host",
            ));
        }
        let DeValue::Array(items) = v else {
            return Err(wrong(want(kind)));
        };
        let mut list = Vec::new();
        for item in items.iter() {
            let Some(s) = item.get_ref().as_str() else {
                return Err(wrong(want(kind)));
            };
            let rule = crate::sandbox::proxy::Rule::parse(s)
                .map_err(|m| bad(m, "give HOST, HOST:PORT, [IPV6]:PORT or *.DOMAIN"))?;
            list.push(rule.to_string());
        }
        return Ok(Val::List(list));
    }
    if let Kind::Globs = kind {
        let DeValue::Array(items) = v else {
            return Err(wrong(want(kind)));
        };
        let mut list = Vec::new();
        for item in items.iter() {
            let Some(s) = item.get_ref().as_str() else {
                return Err(wrong(want(kind)));
            };
            globset::Glob::new(s).map_err(|e| bad(e.to_string(), "see docs/bench.md"))?;
            list.push(s.to_string());
        }
        return Ok(Val::List(list));
    }
    if let (Kind::Command, DeValue::Array(items)) = (kind, v) {
        if cx.scope == Scope::Project {
            return Err(bad(
                "a project file may not choose the program baton runs".into(),
                "set agents.<name>.command in your user file (`baton config path`)",
            ));
        }
        let mut argv = Vec::new();
        for item in items.iter() {
            match item.get_ref().as_str() {
                Some(s) if !s.is_empty() => argv.push(s.to_string()),
                _ => return Err(wrong("a list of non-empty strings")),
            }
        }
        if argv.is_empty() {
            return Err(bad(
                "the command is empty".into(),
                "give the argv prefix, e.g. [\"node\", \"/opt/cli/bin/cli.js\"]",
            ));
        }
        return Ok(Val::List(argv));
    }
    if let DeValue::Integer(i) = v {
        let n: i64 = i
            .as_str()
            .replace('_', "")
            .parse()
            .map_err(|_| wrong("a small whole number"))?;
        return match kind {
            Kind::Count | Kind::PositiveCount | Kind::Duration if n < 0 => {
                Err(bad(format!("{n} is negative"), "use a positive number"))
            }
            Kind::PositiveCount if n == 0 => Err(bad(
                "must be more than zero".into(),
                "use a positive number",
            )),
            Kind::Count | Kind::PositiveCount => Ok(Val::Int(n as u64)),
            // A bare number of seconds, as `--timeout 90` accepts.
            Kind::Duration => Ok(Val::Str(format!("{n}s"))),
            _ => Err(wrong(want(kind))),
        };
    }
    let Some(s) = v.as_str().filter(|_| {
        !matches!(
            kind,
            Kind::Count
                | Kind::PositiveCount
                | Kind::Command
                | Kind::Fallback
                | Kind::NetworkHosts
                | Kind::Globs
        )
    }) else {
        return Err(wrong(want(kind)));
    };
    if cx.scope == Scope::Project && super::secret::looks_like_secret(s) {
        return Err(bad(
            "this value looks like a credential, and baton.toml is committed with the repository"
                .into(),
            "remove it now (and rotate the credential if it was ever committed)",
        ));
    }
    let usage = |e: Error| bad(e.to_string(), &e.hint().unwrap_or_default());
    Ok(match kind {
        Kind::AgentName => Val::Str(Agent::parse(s).map_err(usage)?.name().to_string()),
        Kind::Adviser => {
            let a = Agent::parse(s).map_err(usage)?;
            if !a.supported_access().contains(&Access::ReadOnly) {
                return Err(bad(
                    format!("`{}` cannot advise: it has no read-only mode", a.name()),
                    "use codex, claude, zai, pi or gemini-cli",
                ));
            }
            Val::Str(a.name().to_string())
        }
        // Whether a value may reach a CLI's argv (no leading `-`, …) is
        // checked where every source meets, `agent::argv`, naming this line.
        Kind::Model | Kind::Effort | Kind::Provider | Kind::Profile if s.trim().is_empty() => {
            return Err(bad(
                "empty value".into(),
                "remove the key to use the default",
            ));
        }
        Kind::Model | Kind::Effort => Val::Str(s.to_string()),
        Kind::Provider => {
            let takes = |a: &Agent| Agent::TAKES_PROVIDER.contains(a);
            match agent {
                Some(a) if !takes(&a) => {
                    return Err(bad(
                        format!("`{}` has no provider setting", a.name()),
                        &format!(
                            "`provider` is a setting of {} only; remove it here",
                            names(&Agent::TAKES_PROVIDER)
                        ),
                    ));
                }
                // qwen's provider is its auth type: a closed list.
                Some(Agent::Qwen) => crate::agent::qwen::check_provider(s).map_err(usage)?,
                _ => {}
            }
            Val::Str(s.to_string())
        }
        Kind::Profile => {
            if agent != Some(Agent::Codex) {
                return Err(bad(
                    "`profile` is a codex setting".into(),
                    "move it under [agents.codex]",
                ));
            }
            Val::Str(s.to_string())
        }
        Kind::Transport => {
            let a = agent.ok_or_else(|| bad("not an agent setting".into(), ""))?;
            let t = crate::agent::Transport::parse(s).map_err(usage)?;
            if !a.transports().contains(&t) {
                let have: Vec<&str> = a.transports().iter().map(|t| t.as_str()).collect();
                return Err(bad(
                    format!("{} has no {} transport", a.name(), t.as_str()),
                    &format!("use {}", have.join(" or ")),
                ));
            }
            Val::Str(t.as_str().to_string())
        }
        Kind::Duration => {
            crate::duration::parse(s).map_err(usage)?;
            Val::Str(s.trim().to_string())
        }
        Kind::Access => {
            let a = Access::parse(s).map_err(usage)?;
            if cx.scope == Scope::Project && a == Access::Full {
                return Err(bad(
                    "a project file may not make full access the default".into(),
                    "use read-only or workspace here; pass --full-access (or set it in your \
                     user file) when you mean it",
                ));
            }
            Val::Str(a.as_str().to_string())
        }
        Kind::Sandbox => {
            let w =
                crate::sandbox::Want::parse(s).map_err(|m| bad(m, "use auto, require or off"))?;
            if cx.scope == Scope::Project && w == crate::sandbox::Want::Off {
                return Err(bad(
                    "a project file may not turn baton's sandbox off".into(),
                    "use auto or require here; pass --sandbox off (or set it in your user file) \
                     when you mean it",
                ));
            }
            Val::Str(w.as_str().to_string())
        }
        Kind::AskScope => match s {
            "packet" | "repo" => Val::Str(s.to_string()),
            _ => return Err(bad(format!("unknown scope `{s}`"), "use packet or repo")),
        },
        Kind::Count
        | Kind::PositiveCount
        | Kind::Command
        | Kind::Fallback
        | Kind::NetworkHosts
        | Kind::Globs => unreachable!("handled above"),
    })
}
