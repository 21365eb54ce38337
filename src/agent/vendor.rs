//! Which company's models answer for an agent (`Agent::vendor`): the one
//! place that knows it, for the council's "a reviewer of another vendor" gates.

use super::Agent;

/// What `vendor` returns when baton cannot know: pi without `--provider`
/// uses whatever its own settings name. An unknown vendor never counts as
/// "another vendor" than anyone's, not even another unknown one.
pub const UNKNOWN: &str = "unknown";

impl Agent {
    /// The vendor of the models behind this agent, given the run's
    /// `--provider` and `--model` (they decide it for pi, opencode and qwen).
    pub fn vendor(self, provider: Option<&str>, model: Option<&str>) -> String {
        let fixed = match self {
            Agent::Codex => Some("openai"),
            Agent::Claude => Some("anthropic"),
            Agent::Agy | Agent::GeminiCli => Some("google"),
            Agent::Zai => Some("zai"),
            // Copilot answers with GitHub's models unless a provider of the
            // user's own is set (COPILOT_PROVIDER_*), which baton cannot see.
            Agent::Copilot => Some("github"),
            // Kilo reaches many providers through its own config.
            Agent::Kilo | Agent::Nanocoder => None,
            // Cline too (its provider settings, or CLINE_PROVIDER).
            Agent::Cline => None,
            // A brought agent's models are whatever its own setup says.
            Agent::Byo(_) => None,
            Agent::Pi | Agent::Opencode | Agent::Qwen => None,
        };
        if let Some(v) = fixed {
            return v.to_string();
        }
        // opencode's model is `provider/model` when no --provider is given.
        let from_model = model.and_then(|m| m.split_once('/')).map(|(p, _)| p);
        match (self, provider.or(from_model)) {
            // qwen's `--auth-type` picks the API style; its own models come
            // from Alibaba unless the auth type is another vendor's service.
            (Agent::Qwen, Some(p)) => match provider_vendor(p) {
                v @ ("anthropic" | "google") => v.to_string(),
                _ => "alibaba".to_string(),
            },
            (Agent::Qwen, None) => "alibaba".to_string(),
            (_, Some(p)) => provider_vendor(p).to_string(),
            (_, None) => UNKNOWN.to_string(),
        }
    }
}

/// A provider name as pi, opencode and qwen spell it, to its vendor.
fn provider_vendor(p: &str) -> &str {
    let l = p.trim();
    match l.to_ascii_lowercase().as_str() {
        "openai" | "openai-responses" | "openai-codex" | "azure-openai" => "openai",
        "anthropic" | "claude" => "anthropic",
        "google" | "gemini" | "vertex" | "vertex-ai" | "google-vertex" | "google-gemini-cli" => {
            "google"
        }
        "zai" | "z.ai" | "zhipu" | "zhipuai" => "zai",
        "qwen" | "qwen-oauth" | "dashscope" | "alibaba" => "alibaba",
        "" => UNKNOWN,
        // Another provider (mistral, xai, a local server…) is its own vendor.
        _ => l,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_vendors() {
        assert_eq!(Agent::Codex.vendor(None, None), "openai");
        assert_eq!(Agent::Claude.vendor(Some("x"), Some("y")), "anthropic");
        assert_eq!(Agent::Agy.vendor(None, None), "google");
        assert_eq!(Agent::GeminiCli.vendor(None, None), "google");
        assert_eq!(Agent::Zai.vendor(None, None), "zai");
    }

    #[test]
    fn pi_and_opencode_follow_the_provider() {
        assert_eq!(Agent::Pi.vendor(None, None), UNKNOWN);
        assert_eq!(Agent::Pi.vendor(Some("zai"), Some("glm-5.2")), "zai");
        assert_eq!(Agent::Pi.vendor(Some("anthropic"), None), "anthropic");
        assert_eq!(Agent::Pi.vendor(Some("mistral"), None), "mistral");
        assert_eq!(
            Agent::Opencode.vendor(None, Some("openai/gpt-5.5")),
            "openai"
        );
        assert_eq!(
            Agent::Opencode.vendor(Some("google"), Some("gemini-3")),
            "google"
        );
        assert_eq!(Agent::Opencode.vendor(None, Some("bare-model")), UNKNOWN);
    }

    #[test]
    fn qwen_is_alibaba_unless_another_vendors_service() {
        assert_eq!(Agent::Qwen.vendor(None, None), "alibaba");
        assert_eq!(Agent::Qwen.vendor(Some("qwen-oauth"), None), "alibaba");
        assert_eq!(Agent::Qwen.vendor(Some("openai"), None), "alibaba");
        assert_eq!(Agent::Qwen.vendor(Some("anthropic"), None), "anthropic");
        assert_eq!(Agent::Qwen.vendor(Some("vertex-ai"), None), "google");
    }
}
