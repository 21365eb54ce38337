//! `--network all|none|provider` for a peer under baton's sandbox: what the
//! request asks (checked here, with `--network-host` and config
//! `run.network_hosts`), which hosts an agent's provider lives on, and the
//! proxy that `provider` runs for the length of the run.
//!
//! The allowlist of a run is: the agent's provider hosts ([`provider_hosts`],
//! port 443/80), the host of every `*_BASE_URL` variable baton passes on
//! (a mock or a self-hosted provider, with its port), and the user's hosts.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::RunRequest;
use crate::agent::{Access, Agent, Transport};
use crate::error::{Error, Result};
use crate::sandbox::proxy::{Allowlist, Proxy, Rule, Target};
use crate::sandbox::{Network, Want};

/// What a confined peer may reach, as planned.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum PeerNetwork {
    #[default]
    All,
    /// No IP at all: an agent with a model of its own.
    None,
    /// Only its provider and `hosts` (the user's, checked), through the proxy.
    Provider { hosts: Vec<String> },
}

impl PeerNetwork {
    pub fn as_str(&self) -> &'static str {
        match self {
            PeerNetwork::All => "all",
            PeerNetwork::None => "none",
            PeerNetwork::Provider { .. } => "provider",
        }
    }

    /// The user's extra hosts (`continue` passes them on).
    pub fn hosts(&self) -> Vec<String> {
        match self {
            PeerNetwork::Provider { hosts } => hosts.clone(),
            _ => Vec::new(),
        }
    }
}

/// `--network` (and `--network-host`, `run.network_hosts`): `none` and
/// `provider` only baton's sandbox can hold, so they are refused for a peer
/// it does not confine.
pub fn resolve(
    args: &RunRequest,
    agent: Agent,
    transport: Transport,
    access: Access,
    want: Want,
) -> Result<PeerNetwork> {
    let mode = args.network.as_deref().map(str::trim).unwrap_or("all");
    let net = match mode {
        "all" => PeerNetwork::All,
        "none" => PeerNetwork::None,
        "provider" => {
            let mut hosts = crate::config::active()
                .list("run.network_hosts")
                .unwrap_or_default();
            for h in &args.network_hosts {
                let rule = Rule::parse(h).map_err(|m| {
                    Error::usage_hint(
                        format!("--network-host: {m}"),
                        "give HOST, HOST:PORT, [IPV6]:PORT or *.DOMAIN",
                    )
                })?;
                hosts.push(rule.to_string());
            }
            PeerNetwork::Provider { hosts }
        }
        other => {
            return Err(Error::usage_hint(
                format!("--network {other}: unknown"),
                "use all (the default), none or provider",
            ));
        }
    };
    if !args.network_hosts.is_empty() && !matches!(net, PeerNetwork::Provider { .. }) {
        return Err(Error::usage_hint(
            "--network-host is for --network provider",
            "add --network provider, or drop --network-host",
        ));
    }
    held(&net, agent, transport, access, want)?;
    Ok(net)
}

/// `none` and `provider` hold only where baton's sandbox confines `agent`:
/// checked for the first agent and for every agent of its fallback chain
/// (a chain that ends at codex would otherwise run it with every address).
pub fn held(
    net: &PeerNetwork,
    agent: Agent,
    transport: Transport,
    access: Access,
    want: Want,
) -> Result<()> {
    if *net != PeerNetwork::All
        && (!super::confine::needs_ours(agent, transport)
            || access == Access::Full
            || want == Want::Off)
    {
        let mode = net.as_str();
        return Err(Error::usage_hint(
            format!(
                "--network {mode} needs baton's sandbox, which does not confine {} here",
                agent.name()
            ),
            format!(
                "codex, claude and agy keep their own sandbox (and network rules); full \
                 access and --sandbox off wrap nothing: drop --network {mode}"
            ),
        ));
    }
    Ok(())
}

/// The hosts an agent's provider answers on (port 443, or 80), as far as
/// baton knows them; another provider is the user's `--network-host`.
pub fn provider_hosts(agent: Agent, transport: Transport) -> &'static [&'static str] {
    const OPENAI: &str = "api.openai.com";
    const ANTHROPIC: &str = "api.anthropic.com";
    const GEMINI: &str = "generativelanguage.googleapis.com";
    match agent {
        Agent::Zai => &["api.z.ai", "open.bigmodel.cn"],
        Agent::Pi => &[
            ANTHROPIC,
            OPENAI,
            GEMINI,
            "api.z.ai",
            "openrouter.ai",
            "api.x.ai",
            "api.groq.com",
            "api.mistral.ai",
        ],
        Agent::GeminiCli | Agent::Agy => &[
            GEMINI,
            "cloudcode-pa.googleapis.com",
            "oauth2.googleapis.com",
            "aiplatform.googleapis.com",
        ],
        Agent::Qwen => &[
            "dashscope.aliyuncs.com",
            "dashscope-intl.aliyuncs.com",
            "chat.qwen.ai",
            "portal.qwen.ai",
        ],
        Agent::Copilot => &[
            "api.github.com",
            "api.githubcopilot.com",
            "*.githubcopilot.com",
        ],
        Agent::Opencode => &[
            ANTHROPIC,
            OPENAI,
            GEMINI,
            "opencode.ai",
            "models.dev",
            "openrouter.ai",
        ],
        Agent::Kilo => &["api.kilocode.ai", "kilocode.ai", "openrouter.ai"],
        Agent::Cline => &["api.cline.bot", "openrouter.ai", ANTHROPIC],
        Agent::Codex if transport == Transport::Acp => &[OPENAI, "chatgpt.com"],
        Agent::Claude if transport == Transport::Acp => &[ANTHROPIC],
        _ => &[],
    }
}

/// `scheme://host[:port]/…` → the host and port it names.
fn url_target(url: &str) -> Option<Target> {
    let (scheme, rest) = url.trim().split_once("://")?;
    let default = match scheme.to_ascii_lowercase().as_str() {
        "http" | "ws" => 80,
        "https" | "wss" => 443,
        _ => return None,
    };
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    Target::parse(authority, Some(default)).ok()
}

/// Every rule of the run: the agent's, the base URLs in `env`, the user's.
pub fn allowlist(
    agent: Agent,
    transport: Transport,
    user: &[String],
    env: &[(String, String)],
) -> Allowlist {
    let mut rules: Vec<Rule> = provider_hosts(agent, transport)
        .iter()
        .copied()
        .chain(user.iter().map(String::as_str))
        .filter_map(|h| Rule::parse(h).ok())
        .collect();
    for (k, v) in env {
        let base_url = k.ends_with("_BASE_URL") || k.ends_with("_API_BASE");
        if let Some(t) = url_target(v).filter(|_| base_url) {
            rules.push(Rule {
                host: t.host,
                port: Some(t.port),
            });
        }
    }
    Allowlist::new(rules)
}

/// The proxy of one run, and its private directory (removed after it).
pub struct Running {
    proxy: Option<Proxy>,
    dir: PathBuf,
}

impl Running {
    pub fn proxy(&self) -> &Proxy {
        self.proxy.as_ref().expect("present until dropped")
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        drop(self.proxy.take());
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What `provider` adds to a peer's confinement.
pub struct Setup {
    pub network: Network,
    pub socket: PathBuf,
    pub allowed: Vec<String>,
    /// `None` for a dry run: nothing listens.
    pub running: Option<Running>,
}

/// Start the proxy (a dry run only says where it would listen).
pub fn setup(allow: Allowlist, dry_run: bool) -> Result<Setup> {
    let allowed = allow.rules.iter().map(ToString::to_string).collect();
    let dir = std::env::temp_dir().join(format!("baton-net-{}", crate::ids::new_id()));
    let socket = dir.join("proxy.sock");
    if dry_run {
        return Ok(Setup {
            network: Network::Provider { port: 0 },
            socket,
            allowed,
            running: None,
        });
    }
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    let proxy = Proxy::start(allow, &socket).map_err(|e| {
        let _ = std::fs::remove_dir_all(&dir);
        Error::io("starting the network proxy".to_string(), e)
    })?;
    Ok(Setup {
        network: Network::Provider { port: proxy.port() },
        socket,
        allowed,
        running: Some(Running {
            proxy: Some(proxy),
            dir,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_in_the_environment_are_allowed_with_their_port() {
        let env = |k: &str, v: &str| (k.to_string(), v.to_string());
        let a = allowlist(
            Agent::Qwen,
            Transport::Headless,
            &["extra.example:8443".into()],
            &[
                env("OPENAI_BASE_URL", "http://127.0.0.1:4010/v1"),
                env("GOOGLE_GEMINI_BASE_URL", "https://user:pw@Gem.Example./x"),
                env("HOME", "http://not.a.provider/"),
                env("BROKEN_BASE_URL", "no scheme"),
            ],
        );
        let t = |s: &str| Target::parse(s, None).unwrap();
        assert!(a.allows(&t("127.0.0.1:4010")));
        assert!(!a.allows(&t("127.0.0.1:4011")));
        assert!(a.allows(&t("gem.example:443")));
        assert!(!a.allows(&t("gem.example:80")));
        assert!(a.allows(&t("dashscope.aliyuncs.com:443")));
        assert!(a.allows(&t("extra.example:8443")));
        assert!(!a.allows(&t("not.a.provider:80")));
    }

    #[test]
    fn every_built_in_host_parses() {
        for a in Agent::ALL {
            for tr in [Transport::Headless, Transport::Acp] {
                for h in provider_hosts(a, tr) {
                    assert!(Rule::parse(h).is_ok(), "{a:?} {h}");
                }
            }
        }
    }
}
