//! One adviser: who it is (`advisers` from `--agent`/`--agents`) and the
//! read-only, ready-to-run plan `prepare` makes for it (tools off, empty directory).

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use crate::agent::argv::{Origin, Origins};
use crate::agent::{Agent, CommandSpec, Extra};
use crate::error::{Error, Result};
use crate::ids;
use crate::run::{self, Plan};

use super::AskRequest;
use super::advice;
use super::advice::Scope;

/// One adviser, as asked for on the command line.
#[derive(Debug, Clone, PartialEq)]
pub struct AdviserSpec {
    pub agent: Agent,
    pub model: Option<String>,
    /// Where `model` came from when not from `--model` (`--agents a:m`,
    /// a council's `--members`), for a refusal to name.
    pub model_from: Option<Origin>,
}

/// An adviser ready to run.
pub struct Prepared {
    pub plan: Plan,
    pub spec: CommandSpec,
    pub program: PathBuf,
    pub extra: Extra,
    /// What `extra` was made from, so a fallback agent gets its own.
    pub scope: Scope,
    pub schema: (String, PathBuf),
    /// Packet scope: the private empty directory (removed on drop).
    pub workdir: Option<EmptyDir>,
}

/// A private, empty, temporary directory, removed when dropped.
pub struct EmptyDir(pub PathBuf);

impl EmptyDir {
    pub fn new() -> Result<EmptyDir> {
        let p = std::env::temp_dir().join(format!("baton-ask-{}", ids::new_id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&p)
            .map_err(|e| Error::io(format!("creating {}", p.display()), e))?;
        match p.canonicalize() {
            Ok(c) => Ok(EmptyDir(c)),
            Err(e) => {
                let _ = std::fs::remove_dir(&p);
                Err(Error::io(format!("resolving {}", p.display()), e))
            }
        }
    }

    pub fn leftovers(&self) -> Vec<String> {
        std::fs::read_dir(&self.0)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Drop for EmptyDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The advisers asked for, and whether the multi-adviser envelope is wanted.
pub(super) fn advisers(args: &AskRequest) -> Result<(Vec<AdviserSpec>, bool)> {
    let mut out = Vec::new();
    let multi = !args.agents.is_empty();
    let names: Vec<String> = if multi {
        args.agents.clone()
    } else {
        vec![args.agent.clone().unwrap_or_else(|| {
            crate::config::active()
                .string("ask.agent")
                .unwrap_or_else(|| "codex".into())
        })]
    };
    for n in names {
        let n = n.trim();
        if n.is_empty() {
            return Err(Error::usage("--agents has an empty name"));
        }
        let (name, model) = match n.split_once(':') {
            Some((a, m)) if !m.trim().is_empty() => (a, Some(m.trim().to_string())),
            Some((a, _)) => (a, None),
            None => (n, None),
        };
        let agent = Agent::parse(name)?;
        if !agent
            .supported_access()
            .contains(&crate::agent::Access::ReadOnly)
        {
            return Err(Error::Refused {
                kind: "unsupported_access",
                message: format!(
                    "`{}` (agy) cannot be an adviser: it has no enforceable read-only mode (its \
                     sandbox confines terminal commands only, not its file tools)",
                    agent.name()
                ),
                hint: "ask codex, claude, zai, pi, gemini-cli, opencode, qwen, copilot, kilo, cline or nanocoder instead".into(),
            });
        }
        out.push(AdviserSpec {
            agent,
            model_from: model.is_some().then_some(Origin::Flag("--agents")),
            model: model.or_else(|| args.model.clone()),
        });
    }
    for (flag, set, agents) in [
        ("--profile", args.profile.is_some(), &[Agent::Codex][..]),
        (
            "--provider",
            args.provider.is_some(),
            &Agent::TAKES_PROVIDER[..],
        ),
    ] {
        if set && !out.iter().any(|a| agents.contains(&a.agent)) {
            return Err(Error::usage(format!(
                "{flag} applies to {} only, which is not among the advisers",
                agents
                    .iter()
                    .map(|a| a.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok((out, multi))
}

/// The switches that make an adviser safe, beyond read-only access.
#[cfg(test)]
pub(super) fn extra_for(agent: Agent, scope: Scope, schema_path: &Path) -> Extra {
    extra_with(agent, scope, advice::SCHEMA, schema_path)
}

/// The same for any schema (`baton council` asks for proposals, critiques,
/// plans and reviews the way `ask` asks for advice).
pub fn extra_with(agent: Agent, scope: Scope, schema: &str, schema_path: &Path) -> Extra {
    Extra {
        no_tools: scope == Scope::Packet,
        // qwen's `--json-schema` ends the turn on the first valid answer.
        output_schema: matches!(agent, Agent::Claude | Agent::Codex | Agent::Qwen)
            .then(|| (schema.to_string(), schema_path.to_path_buf())),
        ..Extra::default()
    }
}

/// Where codex reads the schema from (a constant file, versioned by name,
/// in the project's state folder).
pub(super) fn schema_path(root: &Path) -> Result<PathBuf> {
    Ok(crate::state_dir::project(root)?
        .join("ask")
        .join("advice-schema-v1.json"))
}

pub(super) fn prepare(
    a: &AdviserSpec,
    args: &AskRequest,
    scope: Scope,
    cwd: &Path,
    root: &Path,
    prompt: &str,
) -> Result<Prepared> {
    let path = schema_path(root)?;
    prepare_with(a, args, scope, cwd, root, prompt, (advice::SCHEMA, &path))
}

/// `prepare` for an answer that must follow `schema` (its text, and the file
/// codex reads it from; the caller writes that file).
pub fn prepare_with(
    a: &AdviserSpec,
    args: &AskRequest,
    scope: Scope,
    cwd: &Path,
    root: &Path,
    prompt: &str,
    schema: (&str, &Path),
) -> Result<Prepared> {
    let workdir = match scope {
        Scope::Packet => Some(EmptyDir::new()?),
        Scope::Repo => None,
    };
    let dir = workdir.as_ref().map_or(cwd, |w| w.0.as_path());
    let run_args = run::RunRequest {
        agent: Some(a.agent.name().to_string()),
        model: a.model.clone(),
        effort: args.effort.clone(),
        read_only: true,
        sandbox: args.sandbox.clone(),
        cwd: Some(dir.to_path_buf()),
        timeout: Some(args.timeout.clone()),
        idle_timeout: Some(args.idle_timeout.clone()),
        profile: args.profile.clone().filter(|_| a.agent == Agent::Codex),
        provider: args
            .provider
            .clone()
            .filter(|_| Agent::TAKES_PROVIDER.contains(&a.agent)),
        raw: true,
        origins: Origins {
            model: a.model_from.clone(),
            ..Origins::default()
        },
        ..run::RunRequest::default()
    };
    let mut plan = run::plan(&run_args, prompt.to_string())?;
    // State (run logs, codex usage records) stays in the caller's project,
    // never in the adviser's empty directory.
    plan.root = root.to_path_buf();
    plan.adviser = true;
    let extra = extra_with(a.agent, scope, schema.0, schema.1);
    let spec = plan.command_with(extra.clone())?;
    let program = plan.program(&spec)?;
    // A fallback agent (`run.fallback`) must be able to advise too.
    for l in &plan.fallback {
        plan.for_link(l)
            .command_with(extra_with(l.agent, scope, schema.0, schema.1))?;
    }
    plan.check_chain_installed()?;
    Ok(Prepared {
        plan,
        spec,
        program,
        extra,
        scope,
        schema: (schema.0.to_string(), schema.1.to_path_buf()),
        workdir,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> AskRequest {
        crate::cli::ask::parse_for_test(args)
    }

    #[test]
    fn advisers_and_models() {
        let (a, multi) = advisers(&parse(&["q"])).unwrap();
        assert_eq!(
            a,
            [AdviserSpec {
                agent: Agent::Codex,
                model: None,
                model_from: None,
            }]
        );
        assert!(!multi);
        let (a, multi) =
            advisers(&parse(&["--agents", "codex,claude:opus", "-m", "sol", "q"])).unwrap();
        assert!(multi);
        assert_eq!(a[0].model.as_deref(), Some("sol"));
        assert_eq!(
            (a[1].agent, a[1].model.as_deref()),
            (Agent::Claude, Some("opus"))
        );
        // Where each model came from, for a refusal to name.
        assert_eq!(a[0].model_from, None, "from --model");
        assert_eq!(a[1].model_from, Some(Origin::Flag("--agents")));
        // agy cannot be made read-only, so it cannot advise.
        for args in [
            &["--agent", "agy", "q"][..],
            &["--agents", "claude,gemini", "q"][..],
        ] {
            let e = advisers(&parse(args)).unwrap_err();
            assert_eq!(e.kind(), "unsupported_access");
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains("no enforceable read-only mode"));
        }
        assert!(advisers(&parse(&["--agent", "claude", "--profile", "p", "q"])).is_err());
        assert!(advisers(&parse(&["--agents", "codex,pi", "--provider", "x", "q"])).is_ok());
    }

    #[test]
    fn packet_scope_switches_tools_off_and_schema_on() {
        let p = Path::new("/r/.baton/ask/advice-schema-v1.json");
        let e = extra_for(Agent::Claude, Scope::Packet, p);
        assert!(e.no_tools);
        assert_eq!(e.output_schema.as_ref().unwrap().0, advice::SCHEMA);
        let e = extra_for(Agent::Pi, Scope::Repo, p);
        assert!(!e.no_tools && e.output_schema.is_none());
        assert_eq!(
            extra_for(Agent::Codex, Scope::Repo, p)
                .output_schema
                .unwrap()
                .1,
            p
        );
    }

    #[test]
    fn empty_dir_is_private_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        let d = EmptyDir::new().unwrap();
        let path = d.0.clone();
        assert!(path.is_dir() && path.is_absolute());
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o700
        );
        assert!(d.leftovers().is_empty());
        std::fs::write(path.join("x"), "y").unwrap();
        assert_eq!(d.leftovers(), ["x"]);
        drop(d);
        assert!(!path.exists());
    }
}
