//! The transport of a run: which one (`--transport`, the config, the
//! agent's default) and, for ACP, the client that drives the agent.

use std::time::Duration;

use super::Plan;
use crate::agent::{Agent, Parser, Transport, acp};
use crate::error::{Error, Result};

/// How long an ACP agent may linger once its prompt was answered and its
/// stdin closed (qwen 0.24.4 does not always exit: measured).
pub const ACP_AFTER_FINAL: Duration = Duration::from_secs(3);
/// How long an ACP agent may take to answer `initialize`: 180 s, unless
/// `BATON_ACP_INIT_TIMEOUT_MS` shortens it (`process::timeouts::ACP_INIT`).
pub(super) fn acp_init_timeout() -> Duration {
    crate::process::timeouts::ACP_INIT.get()
}

/// The transport asked for (flag or config), checked against what the agent
/// has; the agent's default when none is asked for.
pub fn resolve_transport(agent: Agent, asked: Option<String>) -> Result<Transport> {
    let have = agent.transports();
    let Some(asked) = asked else {
        return Ok(have[0]);
    };
    let t = Transport::parse(&asked)?;
    if !have.contains(&t) {
        let names: Vec<&str> = have.iter().map(|t| t.as_str()).collect();
        return Err(Error::usage_hint(
            format!("{} has no {} transport", agent.name(), t.as_str()),
            format!("use --transport {}", names.join(" or ")),
        ));
    }
    Ok(t)
}

impl Plan {
    /// The parser of this run's output: for ACP the client that drives it.
    pub fn parser(&self) -> Parser {
        if self.transport != Transport::Acp {
            return self.agent.parser();
        }
        Parser::Acp(Box::new(acp::Client::new(self.acp_setup(), None)))
    }

    /// What the ACP client of this run needs: the agent's profile, the
    /// permission policy for the access, the prompt and the session to load.
    pub fn acp_setup(&self) -> acp::Setup {
        let profile = self
            .agent
            .acp_profile()
            .unwrap_or_else(|_| acp::Profile::custom(self.agent.name(), &[]));
        acp::Setup {
            profile,
            policy: acp::Policy::new(
                self.access,
                &self.cwd,
                &self.writable_dirs,
                &self.protected_paths,
            )
            // An adviser's policy stays the tool-level one (`Plan::adviser`).
            .confined(
                !self.adviser
                    && super::confine::will_confine(
                        self.agent,
                        self.transport,
                        self.access,
                        self.sandbox,
                    ),
            ),
            prompt: self.prompt.clone(),
            resume: self.resume.clone(),
        }
    }
}

/// What `--dry-run` shows of an ACP run: the messages baton would send
/// before any answer (`initialize`, the session, the prompt) and how it
/// would answer permission requests. `null` for a headless run.
pub(super) fn dry_run_acp(plan: &Plan) -> serde_json::Value {
    if plan.transport != Transport::Acp {
        return serde_json::Value::Null;
    }
    let setup = plan.acp_setup();
    serde_json::json!({
        "messages": acp::Client::planned(&setup),
        "policy": acp::Policy::describe(
            plan.access,
            super::confine::will_confine(plan.agent, plan.transport, plan.access, plan.sandbox),
        ),
        "session_mode": setup.profile.mode_for(plan.access),
    })
}
