//! Whether each CLI has credentials, as the CLI itself keeps them: API key
//! variables and login files. Only presence and permissions are looked at;
//! no secret is ever read, printed or logged.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::{Check, Severity};
use crate::agent::Agent;

type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// API key (or credential-selecting) variables each CLI reads.
pub fn key_vars(agent: Agent) -> &'static [&'static str] {
    match agent {
        Agent::Codex => &["OPENAI_API_KEY", "CODEX_API_KEY"],
        Agent::Claude => &[
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "CLAUDE_CODE_USE_BEDROCK",
            "CLAUDE_CODE_USE_VERTEX",
        ],
        Agent::Agy => &["GEMINI_API_KEY"],
        Agent::Zai => &["ZAI_API_KEY"],
        Agent::Pi => &[
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_OAUTH_TOKEN",
            "OPENAI_API_KEY",
            "GEMINI_API_KEY",
            "ZAI_API_KEY",
            "OPENROUTER_API_KEY",
            "GROQ_API_KEY",
            "XAI_API_KEY",
            "MISTRAL_API_KEY",
            "DEEPSEEK_API_KEY",
            "CEREBRAS_API_KEY",
            "AZURE_OPENAI_API_KEY",
            "AWS_BEARER_TOKEN_BEDROCK",
        ],
        Agent::GeminiCli => &[
            "GEMINI_API_KEY",
            "GOOGLE_API_KEY",
            "GOOGLE_GENAI_USE_VERTEXAI",
            "GOOGLE_APPLICATION_CREDENTIALS",
        ],
        // opencode reaches many providers; these are the common ones.
        Agent::Opencode => &[
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "GEMINI_API_KEY",
            "OPENROUTER_API_KEY",
            "GROQ_API_KEY",
            "XAI_API_KEY",
            "DEEPSEEK_API_KEY",
            "ZAI_API_KEY",
        ],
        // Qwen Code: an OpenAI-compatible key (its --auth-type openai),
        // DashScope, or the other auth types it accepts.
        Agent::Qwen => &[
            "OPENAI_API_KEY",
            "DASHSCOPE_API_KEY",
            "ANTHROPIC_API_KEY",
            "GEMINI_API_KEY",
        ],
        // A model provider of the user's own (BYOK), or a GitHub token.
        Agent::Copilot => &[
            "COPILOT_PROVIDER_API_KEY",
            "COPILOT_GITHUB_TOKEN",
            "GH_TOKEN",
            "GITHUB_TOKEN",
        ],
        // kilo reaches many providers; these are the common ones.
        Agent::Kilo => &[
            "KILO_API_KEY",
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "OPENROUTER_API_KEY",
        ],
        // Nanocoder's providers come from its agents.config.json or these.
        Agent::Nanocoder => &["NANOCODER_PROVIDERS", "NANOCODER_PROVIDERS_FILE"],
        // baton cannot know what a brought agent reads; `doctor` lists the
        // auth methods it announces in `initialize`.
        // Cline's ACP mode starts a session only with CLINE_API_KEY set or a
        // provider configured (`cline auth`).
        Agent::Cline => &["CLINE_API_KEY"],
        Agent::Byo(_) => &[],
    }
}

pub use crate::agent::homes::login_file;

fn login_hint(agent: Agent) -> &'static str {
    match agent {
        Agent::Codex => "run `codex login`, or export OPENAI_API_KEY",
        Agent::Claude => "run `claude` once and log in (/login), or export ANTHROPIC_API_KEY",
        Agent::Agy => {
            "sign in to agy, or export GEMINI_API_KEY with modelProvider \"gemini\" in ~/.gemini/antigravity-cli/settings.json"
        }
        Agent::Zai => "export ZAI_API_KEY (a Z.AI API key)",
        Agent::Pi => {
            "run `pi` once and /login, or export the provider's key (e.g. ANTHROPIC_API_KEY)"
        }
        Agent::GeminiCli => "run `gemini` once and sign in, or export GEMINI_API_KEY",
        Agent::Opencode => {
            "run `opencode auth login`, or export the provider's key (e.g. OPENAI_API_KEY)"
        }
        Agent::Qwen => {
            "run `qwen` once and sign in, or export OPENAI_API_KEY (with OPENAI_BASE_URL)"
        }
        Agent::Copilot => {
            "run `copilot login`, or set COPILOT_PROVIDER_BASE_URL and COPILOT_PROVIDER_API_KEY"
        }
        Agent::Kilo => "run `kilo auth login`, or add a provider to kilo's config",
        Agent::Nanocoder => {
            "add a provider to nanocoder's agents.config.json, or export NANOCODER_PROVIDERS"
        }
        Agent::Cline => {
            "run `cline auth -p PROVIDER -k KEY` (with -b for a base URL), or export CLINE_API_KEY"
        }
        Agent::Byo(_) => {
            "see the agent's own documentation (`baton doctor` lists its auth methods)"
        }
    }
}

/// One `auth` check, plus a `login_file` warning when the file is readable
/// by others or not readable by this user.
pub fn checks(agent: Agent, env: Env) -> Vec<Check> {
    let id = |what: &str| format!("agent.{}.{what}", agent.name());
    let mut out = Vec::new();
    let vars: Vec<&str> = key_vars(agent)
        .iter()
        .copied()
        .filter(|v| env(v).is_some_and(|x| !x.trim().is_empty()))
        .collect();
    let file = login_file(agent, env).filter(|p| p.symlink_metadata().is_ok());
    if let Some(f) = &file {
        out.extend(file_permissions(&id("login_file"), f));
    }
    let auth = if !vars.is_empty() {
        Check::ok(
            id("auth"),
            format!(
                "credentials from the environment: {} {} set",
                vars.join(", "),
                if vars.len() == 1 { "is" } else { "are" }
            ),
        )
    } else if let Some(f) = &file {
        let note = if agent == Agent::Zai {
            " (baton does not open it, so cannot tell whether it holds a Z.AI key)"
        } else {
            ""
        };
        Check::ok(id("auth"), format!("login file {}{note}", f.display()))
    } else if let Some(custom) = custom_provider(agent, env) {
        Check::problem(
            id("auth"),
            Severity::Warning,
            format!(
                "no API key variable and no login file, but {} defines its own model providers,                  whose keys baton does not check",
                custom.display()
            ),
            "make sure the provider's key variable is set (a run's error says so if not)",
        )
    } else if key_vars(agent).is_empty() {
        Check::problem(
            id("auth"),
            Severity::Warning,
            format!(
                "baton does not know where {} keeps its credentials",
                agent.name()
            ),
            login_hint(agent),
        )
    } else if agent == Agent::Agy
        || (cfg!(target_os = "macos") && matches!(agent, Agent::Claude | Agent::GeminiCli))
    {
        Check::problem(
            id("auth"),
            Severity::Warning,
            format!(
                "no API key variable set; {} may keep its login in the OS keychain, which baton \
                 does not read",
                agent.name()
            ),
            login_hint(agent),
        )
    } else {
        let where_ = login_file(agent, env)
            .map(|p| format!(" and no login file at {}", p.display()))
            .unwrap_or_default();
        Check::problem(
            id("auth"),
            Severity::Error,
            format!(
                "no credentials: none of {} is set{where_}",
                key_vars(agent).join(", ")
            ),
            login_hint(agent),
        )
    };
    out.insert(0, auth);
    out
}

/// The CLI's own provider configuration, when it defines custom providers
/// whose key variables baton cannot know: codex's `config.toml` with a
/// `model_provider`, pi's `models.json`. Neither holds secrets by design
/// (they name the variable); only codex's is opened, to find the key name.
fn custom_provider(agent: Agent, env: Env) -> Option<PathBuf> {
    let home = env("HOME").map(PathBuf::from)?;
    match agent {
        Agent::Codex => {
            let p = env("CODEX_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".codex"))
                .join("config.toml");
            let text = std::fs::read_to_string(&p).ok()?;
            text.lines()
                .any(|l| l.trim_start().starts_with("model_provider"))
                .then_some(p)
        }
        Agent::Pi => Some(
            env("PI_CODING_AGENT_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".pi/agent"))
                .join("models.json"),
        )
        .filter(|p| p.is_file()),
        _ => None,
    }
}

/// A login file must be readable by its owner and by no one else.
fn file_permissions(id: &str, path: &Path) -> Option<Check> {
    let meta = std::fs::metadata(path).ok()?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Some(Check::problem(
            id.to_string(),
            Severity::Warning,
            format!(
                "{} is readable by other users (mode {mode:04o})",
                path.display()
            ),
            &format!("chmod 600 {}", path.display()),
        ));
    }
    if !readable(path) {
        return Some(Check::problem(
            id.to_string(),
            Severity::Warning,
            format!(
                "{} cannot be read by this user (mode {mode:04o}), so the CLI cannot log in",
                path.display()
            ),
            &format!(
                "make it yours and private: chown \"$(id -u)\" {0} && chmod 600 {0}",
                path.display()
            ),
        ));
    }
    None
}

/// `access(R_OK)`: asks the kernel, opens nothing.
fn readable(path: &Path) -> bool {
    crate::sys::fd::access(path, libc::R_OK)
}
