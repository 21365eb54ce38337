//! Agents a user brings: `[agents.NAME] transport = "acp"` with `command =
//! [...]` in the user file (never the project file). Each is an ACP agent
//! driven by baton's own permission policy, with no session modes baton
//! knows of (`baton doctor` asks it what it offers).
//!
//! Why a registry: `Agent` is a small `Copy` value passed everywhere (plans,
//! council members, records). A brought agent is `Agent::Byo(id)`, an index
//! into this process's list, filled from the user file before any command
//! looks an agent up (`config`). Entries are leaked: there are a handful,
//! they live for the process, and `Agent::name` stays `&'static str`.

use std::sync::RwLock;

use super::{Access, Agent, argv};
use crate::error::{Error, Result};

/// One brought agent, as its user-file entry defines it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Byo {
    pub name: String,
    /// The program and its switches (checked by `argv::check_command`).
    pub command: Vec<String>,
    /// `full_access = true`: the user allows `--access full` for it.
    pub full_access: bool,
    /// Where the entry is (`path:line`), for messages.
    pub defined_at: String,
}

/// The index of a brought agent in this process's registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ByoId(u16);

static REGISTRY: RwLock<Vec<&'static Byo>> = RwLock::new(Vec::new());

/// Add (or, for a name already there, replace) an entry; its agent.
pub fn register(b: Byo) -> Agent {
    let mut reg = REGISTRY.write().unwrap_or_else(|e| e.into_inner());
    let leaked: &'static Byo = Box::leak(Box::new(b));
    if let Some(i) = reg.iter().position(|e| e.name == leaked.name) {
        reg[i] = leaked;
        return Agent::Byo(ByoId(i as u16));
    }
    reg.push(leaked);
    Agent::Byo(ByoId((reg.len() - 1) as u16))
}

/// The brought agent of that name (case-insensitive), if any.
pub fn lookup(name: &str) -> Option<Agent> {
    let reg = REGISTRY.read().unwrap_or_else(|e| e.into_inner());
    reg.iter()
        .position(|e| e.name.eq_ignore_ascii_case(name))
        .map(|i| Agent::Byo(ByoId(i as u16)))
}

/// Every brought agent, in the order they were registered.
pub fn all() -> Vec<Agent> {
    let n = REGISTRY.read().unwrap_or_else(|e| e.into_inner()).len();
    (0..n).map(|i| Agent::Byo(ByoId(i as u16))).collect()
}

/// The entry behind an id (ids come only from `register`/`lookup`, and
/// entries are never removed, so it is always there).
pub fn get(id: ByoId) -> &'static Byo {
    REGISTRY.read().unwrap_or_else(|e| e.into_inner())[id.0 as usize]
}

impl Byo {
    /// Before a command is built: the entry's command (checked when the
    /// file was read; again here, where every path meets) and the access.
    pub fn check(&self, access: Access) -> Result<()> {
        argv::check_command(&self.command).map_err(|why| Error::Config {
            where_: self.defined_at.clone(),
            key: format!("agents.{}.command", self.name),
            message: why,
            hint: "fix the command in your user file".into(),
        })?;
        if !self.access().contains(&access) {
            return Err(Error::UnsupportedAccess {
                agent: lookup(&self.name).map_or("", Agent::name),
                access: access.as_str(),
                reason: "baton cannot police an agent it does not know, so full access for a \
                         brought agent is the user's own choice",
                hint: format!(
                    "add `full_access = true` to [agents.{}] in {} if you mean it, or use \
                     read-only or workspace",
                    self.name, self.defined_at
                ),
            });
        }
        Ok(())
    }

    /// Access modes baton can answer for over ACP: read-only and workspace
    /// by its policy; full only where the user's entry says so.
    pub fn access(&self) -> &'static [Access] {
        if self.full_access {
            &[Access::ReadOnly, Access::Workspace, Access::Full]
        } else {
            &[Access::ReadOnly, Access::Workspace]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_lookup_and_replace() {
        let b = |cmd: &str| Byo {
            name: "unit-byo-reg".into(),
            command: vec![cmd.into()],
            full_access: false,
            defined_at: "/u/config.toml:1".into(),
        };
        let a = register(b("one"));
        assert_eq!(lookup("UNIT-BYO-REG"), Some(a));
        assert_eq!(a.name(), "unit-byo-reg");
        assert_eq!(register(b("two")), a, "same name, same id");
        let Agent::Byo(id) = a else { panic!() };
        assert_eq!(get(id).command, ["two"]);
        assert!(all().contains(&a));
        assert_eq!(lookup("nope-not-here"), None);
    }
}
