//! Configuration: the user file, the project's `baton.toml`, `BATON_*`
//! variables and built-in defaults, merged with the source of every value.
//!
//! Precedence: flags > environment > project file > user file > defaults.
//! Flags are applied by the commands (a flag that is given never asks the
//! config); everything else is answered here by `lookup`/`effective`. Loading
//! reads at most two small files (regular files of at most 1 MiB, see `read`)
//! and spawns nothing, so `baton run` stays fast.

pub mod command;
pub mod file;
mod prices;
mod read;
pub mod secret;
mod template;
mod value;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Serialize;

use crate::agent::argv::Origin;
use crate::agent::{Access, Agent};
use crate::error::{Error, Result};
pub use file::{Layer, Scope, Val};

/// The project file's name, at the repository's top level.
pub const PROJECT_FILE: &str = "baton.toml";
/// Points at another user file (tests, several setups).
pub const CONFIG_VAR: &str = "BATON_CONFIG";

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Default,
    Env(&'static str),
    File {
        scope: Scope,
        path: PathBuf,
        line: usize,
    },
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Default => write!(f, "default"),
            Source::Env(v) => write!(f, "env {v}"),
            Source::File { scope, path, line } => {
                write!(f, "{} {}:{line}", scope.as_str(), path.display())
            }
        }
    }
}

impl Source {
    /// The same, as the origin of a value that reaches a CLI's argv (`key`
    /// is the config key it was read for). Built-in defaults have none.
    pub fn origin(&self, key: &str) -> Option<Origin> {
        match self {
            Source::Default => None,
            Source::Env(v) => Some(Origin::Env(v)),
            Source::File { scope, path, line } => Some(Origin::File {
                key: key.to_string(),
                at: format!("{}:{line}", path.display()),
                scope: scope.as_str(),
            }),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sourced {
    pub value: Val,
    pub source: Source,
}

impl Sourced {
    pub fn str(&self) -> String {
        self.value.to_string()
    }
}

/// A config file baton looks at, found or not.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FileInfo {
    pub scope: &'static str,
    pub path: PathBuf,
    pub exists: bool,
    /// The variable that chose this path (`BATON_CONFIG`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_env: Option<&'static str>,
}

#[derive(Debug, Clone, Default)]
pub struct Config {
    pub files: Vec<FileInfo>,
    /// Highest precedence first: project, then user.
    layers: Vec<Layer>,
    env: BTreeMap<&'static str, String>,
}

/// The `BATON_*` variable that stands for a key (`agents.*` keys share one).
pub fn env_var(key: &str) -> Option<&'static str> {
    let leaf = key.rsplit('.').next().unwrap_or(key);
    Some(match (key, leaf) {
        ("agent", _) => "BATON_AGENT",
        (k, "model") if k.starts_with("agents.") => "BATON_MODEL",
        (k, "effort") if k.starts_with("agents.") => "BATON_EFFORT",
        ("run.timeout", _) => "BATON_TIMEOUT",
        ("run.idle_timeout", _) => "BATON_IDLE_TIMEOUT",
        ("run.access", _) => "BATON_ACCESS",
        ("run.sandbox", _) => "BATON_SANDBOX",
        ("ask.budget", _) => "BATON_ASK_BUDGET",
        _ => return None,
    })
}

const ENV_VARS: &[&str] = &[
    "BATON_AGENT",
    "BATON_MODEL",
    "BATON_EFFORT",
    "BATON_TIMEOUT",
    "BATON_IDLE_TIMEOUT",
    "BATON_ACCESS",
    "BATON_SANDBOX",
    "BATON_ASK_BUDGET",
];

/// `baton ask`'s consultation budget per task id, when nothing sets it. The
/// value lives here (not in `ask`) so that config depends on no feature;
/// a unit test checks that `ask` agrees.
pub const ASK_BUDGET: u32 = 2;
/// `baton ask --max-chars` when nothing sets it (see `ASK_BUDGET`).
pub const ASK_MAX_CHARS: usize = 200_000;

/// What `[notify] on` may name (`notify::Trigger`; a unit test there checks
/// that the two agree): every one by default.
pub const NOTIFY_TRIGGERS: &[&str] = &["ended", "needs_approval", "stopped", "stalled"];
/// `[notify] stall_after` when nothing sets it: a peer silent this long is
/// announced as stalled, 5 minutes before `run.idle_timeout` (15m) stops it.
pub const NOTIFY_STALL_AFTER: &str = "10m";

/// Built-in defaults (model and effort defaults come from `models`).
fn default(key: &str) -> Option<Val> {
    let s = |v: &str| Some(Val::Str(v.into()));
    match key {
        "agent" | "ask.agent" => s("codex"),
        "run.timeout" => s("60m"),
        "run.idle_timeout" => s("15m"),
        "run.access" => s("workspace"),
        "run.sandbox" => s("auto"),
        "ask.budget" => Some(Val::Int(ASK_BUDGET.into())),
        "ask.max_chars" => Some(Val::Int(ASK_MAX_CHARS as u64)),
        "ask.scope" => s("packet"),
        "notify.desktop" | "notify.terminal" => Some(Val::Bool(false)),
        "notify.on" => Some(Val::List(
            NOTIFY_TRIGGERS.iter().map(|t| t.to_string()).collect(),
        )),
        "notify.stall_after" => s(NOTIFY_STALL_AFTER),
        _ => {
            let (agent, leaf) = key.strip_prefix("agents.")?.split_once('.')?;
            let t = crate::agent::models::table(Agent::parse(agent).ok()?);
            match leaf {
                "model" => t.default_model.map(|m| Val::Str(m.into())),
                "effort" => t.default_effort.map(|e| Val::Str(e.into())),
                _ => None,
            }
        }
    }
}

/// Every key `config show` lists, in order.
pub fn all_keys() -> Vec<String> {
    let mut keys: Vec<String> = [
        "agent",
        "run.timeout",
        "run.idle_timeout",
        "run.access",
        "run.sandbox",
        "run.fallback",
        "run.retry",
        "run.network_hosts",
        "ask.agent",
        "ask.budget",
        "ask.max_chars",
        "ask.scope",
        "bench.test_patterns",
        "notify.desktop",
        "notify.terminal",
        "notify.command",
        "notify.url",
        "notify.url_token_env",
        "notify.on",
        "notify.stall_after",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for a in Agent::ALL {
        for leaf in [
            "model",
            "effort",
            "provider",
            "profile",
            "command",
            "transport",
        ] {
            keys.push(format!("agents.{}.{leaf}", a.name()));
        }
    }
    keys
}

impl Config {
    /// Read the user and project files for a command working in `cwd`, and
    /// the `BATON_*` variables. A missing file is no error; a bad one is.
    pub fn load(cwd: Option<&Path>) -> Result<Config> {
        let env = |k: &str| std::env::var(k).ok();
        Config::load_from(user_file(&env), &project_root(cwd)?, &env)
    }

    /// Where the files are, without reading them (`baton config path`).
    pub fn locate(cwd: Option<&Path>) -> Result<Vec<FileInfo>> {
        let env = |k: &str| std::env::var(k).ok();
        let project = project_root(cwd)?.join(PROJECT_FILE);
        let mut files = vec![FileInfo {
            scope: Scope::Project.as_str(),
            exists: project.is_file(),
            path: project,
            from_env: None,
        }];
        if let Some((path, from_env)) = user_file(&env) {
            files.push(FileInfo {
                scope: Scope::User.as_str(),
                exists: path.is_file(),
                path,
                from_env,
            });
        }
        Ok(files)
    }

    /// `load` with the user file, project root and environment given.
    pub fn load_from(
        user: Option<(PathBuf, Option<&'static str>)>,
        root: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config> {
        let mut c = Config::default();
        let project = root.join(PROJECT_FILE);
        // The user file first: the agents it brings are known when the
        // project file names one. Each goes in front, so the project layer
        // ends up first (highest precedence).
        for (scope, path, from_env) in [
            (
                Scope::User,
                user.as_ref().map(|u| u.0.clone()),
                user.as_ref().and_then(|u| u.1),
            ),
            (Scope::Project, Some(project), None),
        ] {
            let Some(path) = path else { continue };
            let text = read::read(&path, scope, root)?;
            c.files.insert(
                0,
                FileInfo {
                    scope: scope.as_str(),
                    path: path.clone(),
                    exists: text.is_some(),
                    from_env,
                },
            );
            if let Some(t) = text {
                let layer = file::parse(&path, &t, scope)?;
                for b in &layer.byo {
                    crate::agent::byo::register(b.clone());
                }
                c.layers.insert(0, layer);
            }
        }
        for var in ENV_VARS {
            if let Some(v) = env(var).filter(|v| !v.trim().is_empty()) {
                check_env(var, &v)?;
                c.env.insert(var, v.trim().to_string());
            }
        }
        Ok(c)
    }

    /// The files that were found and read (shown by `--dry-run`).
    pub fn files_read(&self) -> Vec<String> {
        self.layers
            .iter()
            .map(|l| l.path.display().to_string())
            .collect()
    }

    /// The user's `[prices."MODEL"]` entries (`config show`).
    pub fn prices(&self) -> Vec<&crate::spend::prices::Price> {
        self.layers.iter().flat_map(|l| &l.prices).collect()
    }

    /// The configured value of `key`, if any layer or variable sets it.
    pub fn lookup(&self, key: &str) -> Option<Sourced> {
        if let Some(var) = env_var(key)
            && let Some(v) = self.env.get(var)
        {
            let value = match key {
                "ask.budget" => Val::Int(v.parse().ok()?),
                _ => Val::Str(v.clone()),
            };
            return Some(Sourced {
                value,
                source: Source::Env(var),
            });
        }
        self.layers.iter().find_map(|l| {
            l.values.get(key).map(|(v, line)| Sourced {
                value: v.clone(),
                source: Source::File {
                    scope: l.scope,
                    path: l.path.clone(),
                    line: *line,
                },
            })
        })
    }

    /// `lookup`, else the built-in default.
    pub fn effective(&self, key: &str) -> Option<Sourced> {
        self.lookup(key).or_else(|| {
            default(key).map(|value| Sourced {
                value,
                source: Source::Default,
            })
        })
    }

    pub fn string(&self, key: &str) -> Option<String> {
        self.lookup(key).map(|s| s.str())
    }

    pub fn default_agent(&self) -> Agent {
        self.effective("agent")
            .and_then(|s| Agent::parse(&s.str()).ok())
            .unwrap_or(Agent::Codex)
    }

    /// The argv prefix that starts `agent`'s CLI, when the user file pins one.
    pub fn command(&self, agent: Agent) -> Option<Vec<String>> {
        match self
            .lookup(&format!("agents.{}.command", agent.name()))?
            .value
        {
            Val::List(l) => Some(l),
            _ => None,
        }
    }

    /// A list value (`run.network_hosts`), as its reader checked it.
    pub fn list(&self, key: &str) -> Option<Vec<String>> {
        match self.lookup(key)?.value {
            Val::List(l) => Some(l),
            _ => None,
        }
    }

    /// A `true`/`false` value (`notify.desktop`), default included.
    pub fn flag(&self, key: &str) -> Option<bool> {
        match self.effective(key)?.value {
            Val::Bool(b) => Some(b),
            _ => None,
        }
    }

    pub fn count(&self, key: &str) -> Option<u64> {
        match self.effective(key)?.value {
            Val::Int(n) => Some(n),
            _ => None,
        }
    }
}

/// Register the agents and prices the user file brings, for a command that
/// reads no other config (`continue`, `council`, `agents`, the job runner…):
/// a plan or record that names an agent must find it, and a call is priced
/// alike wherever it runs. A broken or missing user file brings none; the
/// commands that read the config report it.
pub fn bring_user_agents() {
    let env = |k: &str| std::env::var(k).ok();
    let Some((path, _)) = user_file(&env) else {
        return;
    };
    let root = path.parent().unwrap_or(Path::new("/")).to_path_buf();
    if let Ok(Some(text)) = read::read(&path, Scope::User, &root)
        && let Ok(layer) = file::parse(&path, &text, Scope::User)
    {
        for b in layer.byo {
            crate::agent::byo::register(b);
        }
        crate::spend::prices::install_user(layer.prices);
    }
}

/// The project root (where `baton.toml` and `.baton/` live) for `cwd`.
pub fn project_root(cwd: Option<&Path>) -> Result<PathBuf> {
    let here =
        std::env::current_dir().map_err(|e| Error::io("reading the current directory", e))?;
    Ok(crate::fsutil::project_root(&match cwd {
        Some(d) => here.join(d),
        None => here,
    }))
}

fn check_env(var: &'static str, v: &str) -> Result<()> {
    let res = match var {
        "BATON_AGENT" => Agent::parse(v).map(|_| ()),
        "BATON_TIMEOUT" | "BATON_IDLE_TIMEOUT" => crate::duration::parse(v).map(|_| ()),
        "BATON_ACCESS" => Access::parse(v).map(|_| ()),
        "BATON_SANDBOX" => crate::sandbox::Want::parse(v)
            .map(|_| ())
            .map_err(|m| Error::usage_hint(m, "use auto, require or off")),
        "BATON_ASK_BUDGET" => v.trim().parse::<u32>().map(|_| ()).map_err(|_| {
            Error::usage_hint(
                format!("`{v}` is not a number"),
                "set it to the number of consultations allowed per task_id (default 2)",
            )
        }),
        _ => Ok(()),
    };
    res.map_err(|e| Error::Config {
        where_: "environment".into(),
        key: var.into(),
        message: e.to_string(),
        hint: e
            .hint()
            .unwrap_or_else(|| format!("unset {var} or fix its value")),
    })
}

/// The user file: `$BATON_CONFIG`, else `<config dir>/baton/config.toml`
/// (`$XDG_CONFIG_HOME` or `~/.config` on Linux, `~/Library/Application
/// Support` on macOS).
pub fn user_file(env: &dyn Fn(&str) -> Option<String>) -> Option<(PathBuf, Option<&'static str>)> {
    if let Some(p) = env(CONFIG_VAR).filter(|p| !p.trim().is_empty()) {
        return Some((PathBuf::from(p), Some(CONFIG_VAR)));
    }
    let dirs = directories::BaseDirs::new()?;
    Some((dirs.config_dir().join("baton").join("config.toml"), None))
}

static ACTIVE: OnceLock<Config> = OnceLock::new();

/// Make `c` the configuration of this process (once, by the command line).
pub fn install(c: Config) -> &'static Config {
    let _ = ACTIVE.set(c);
    active()
}

/// The configuration `install` made this process's, if it did (a command
/// the user ran; not the job runner or a council driver, which read none).
pub fn installed() -> Option<&'static Config> {
    ACTIVE.get()
}

/// The installed configuration; an empty one (built-in defaults only, no
/// environment) where none was installed, such as in unit tests.
pub fn active() -> &'static Config {
    static EMPTY: OnceLock<Config> = OnceLock::new();
    ACTIVE
        .get()
        .unwrap_or_else(|| EMPTY.get_or_init(Config::default))
}

#[cfg(test)]
mod tests;
