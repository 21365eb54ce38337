//! Where each agent's CLI keeps its state and its login, as the CLI itself
//! finds them (its own directory variables first, then the home directory).
//!
//! `doctor` reads the login files' permissions; `run::confine` makes an
//! agent's state directories writable under baton's sandbox (session files,
//! caches, plugins) and hides every other agent's login from it. Pure: the
//! environment comes in as a lookup.

use std::path::PathBuf;

use super::Agent;

pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The file the CLI keeps its login in (respecting its own dir variable).
pub fn login_file(agent: Agent, env: Env) -> Option<PathBuf> {
    login_file_of(agent, env)
}

fn login_file_of(agent: Agent, env: Env) -> Option<PathBuf> {
    let home = env("HOME").map(PathBuf::from)?;
    let dir = |var: &str, default: PathBuf| env(var).map(PathBuf::from).unwrap_or(default);
    Some(match agent {
        Agent::Codex => dir("CODEX_HOME", home.join(".codex")).join("auth.json"),
        Agent::Claude => dir("CLAUDE_CONFIG_DIR", home.join(".claude")).join(".credentials.json"),
        Agent::Zai | Agent::Pi => {
            dir("PI_CODING_AGENT_DIR", home.join(".pi/agent")).join("auth.json")
        }
        Agent::GeminiCli => dir("GEMINI_CLI_HOME", home)
            .join(".gemini")
            .join("oauth_creds.json"),
        // opencode keeps `opencode auth login` credentials in its data dir.
        Agent::Opencode => dir("XDG_DATA_HOME", home.join(".local/share"))
            .join("opencode")
            .join("auth.json"),
        // Qwen Code's qwen-oauth login.
        Agent::Qwen => home.join(".qwen").join("oauth_creds.json"),
        // `copilot login` keeps its token in the OS keyring, or in
        // ~/.copilot/config.json where there is none.
        Agent::Copilot => dir("COPILOT_HOME", home.join(".copilot")).join("config.json"),
        Agent::Kilo => dir("XDG_DATA_HOME", home.join(".local/share"))
            .join("kilo")
            .join("auth.json"),
        // Nanocoder has no login of its own: its providers (with their keys)
        // are in agents.config.json in its config directory.
        Agent::Nanocoder => env("NANOCODER_CONFIG_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| dir("XDG_CONFIG_HOME", home.join(".config")).join("nanocoder"))
            .join("agents.config.json"),
        // `cline auth` keeps providers (keys included) in its settings.
        Agent::Cline => dir("CLINE_DIR", home.join(".cline")).join("data/settings/providers.json"),
        // agy keeps its login in the OS keyring.
        Agent::Agy | Agent::Byo(_) => return None,
    })
}

/// The directories the CLI writes as it works (sessions, logs, caches,
/// settings it updates): writable under baton's sandbox. A user-brought ACP
/// agent's are unknown: it gets none (docs/sandbox.md says how that shows).
pub fn state_dirs(agent: Agent, env: Env) -> Vec<PathBuf> {
    let Some(home) = env("HOME").map(PathBuf::from) else {
        return Vec::new();
    };
    let dir = |var: &str, default: PathBuf| env(var).map(PathBuf::from).unwrap_or(default);
    let data = dir("XDG_DATA_HOME", home.join(".local/share"));
    let config = dir("XDG_CONFIG_HOME", home.join(".config"));
    let cache = dir("XDG_CACHE_HOME", home.join(".cache"));
    let state = dir("XDG_STATE_HOME", home.join(".local/state"));
    let xdg = |name: &str| {
        vec![
            data.join(name),
            config.join(name),
            cache.join(name),
            state.join(name),
        ]
    };
    match agent {
        Agent::Codex => vec![dir("CODEX_HOME", home.join(".codex"))],
        Agent::Claude => vec![dir("CLAUDE_CONFIG_DIR", home.join(".claude"))],
        Agent::Pi | Agent::Zai => vec![dir("PI_CODING_AGENT_DIR", home.join(".pi/agent"))],
        Agent::GeminiCli | Agent::Agy => vec![dir("GEMINI_CLI_HOME", home).join(".gemini")],
        Agent::Opencode => xdg("opencode"),
        // Kilo keeps a sandbox policy of its own beside its state directory
        // (`$XDG_STATE_HOME/kilo-sandbox-policy`) and fails a prompt when it
        // cannot make it (measured with the e2e version).
        Agent::Kilo => {
            let mut v = xdg("kilo");
            v.push(state.join("kilo-sandbox-policy"));
            v
        }
        Agent::Nanocoder => {
            let mut v = xdg("nanocoder");
            if let Some(d) = env("NANOCODER_CONFIG_DIR") {
                v.push(PathBuf::from(d));
            }
            v
        }
        Agent::Qwen => vec![home.join(".qwen")],
        // Copilot CLI also unpacks its bundled package into its cache
        // (`COPILOT_CACHE_HOME`, else `$XDG_CACHE_HOME/copilot`) at every
        // start, and exits when it cannot (measured with 1.0.102).
        Agent::Copilot => {
            let mut v = vec![
                dir("COPILOT_HOME", home.join(".copilot")),
                dir("COPILOT_CACHE_HOME", cache.join("copilot")),
            ];
            v.extend(env("COPILOT_PKG_CACHE_HOME").map(PathBuf::from));
            v
        }
        Agent::Cline => vec![dir("CLINE_DIR", home.join(".cline"))],
        Agent::Byo(_) => Vec::new(),
    }
}

/// Every other agent's login file, for `agent` not to see.
pub fn others_logins(agent: Agent, env: Env) -> Vec<PathBuf> {
    let own = login_file(agent, env);
    Agent::ALL
        .iter()
        .filter(|a| **a != agent)
        .filter_map(|a| login_file(*a, env))
        .filter(|p| Some(p) != own.as_ref())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn state_follows_the_clis_own_variables() {
        let e = env(&[("HOME", "/h"), ("PI_CODING_AGENT_DIR", "/p")]);
        assert_eq!(state_dirs(Agent::Pi, &e), [PathBuf::from("/p")]);
        assert_eq!(state_dirs(Agent::Qwen, &e), [PathBuf::from("/h/.qwen")]);
        assert!(
            state_dirs(Agent::Opencode, &e).contains(&PathBuf::from("/h/.local/share/opencode"))
        );
        let none = env(&[]);
        assert!(state_dirs(Agent::Pi, &none).is_empty());
    }

    #[test]
    fn an_agent_sees_no_other_agents_login_but_keeps_its_own() {
        let e = env(&[("HOME", "/h")]);
        let hidden = others_logins(Agent::Pi, &e);
        assert!(hidden.contains(&PathBuf::from("/h/.codex/auth.json")));
        assert!(hidden.contains(&PathBuf::from("/h/.claude/.credentials.json")));
        assert!(!hidden.contains(&PathBuf::from("/h/.pi/agent/auth.json")));
        // zai is pi with another provider: the same login, kept.
        assert!(!others_logins(Agent::Zai, &e).contains(&PathBuf::from("/h/.pi/agent/auth.json")));
    }
}
