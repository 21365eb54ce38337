//! Whether a config value looks like a credential. `baton.toml` is committed
//! with the repository, so such a value is refused rather than stored.

/// Prefixes of the API keys and tokens the supported CLIs (and git hosts) use.
const PREFIXES: &[&str] = &[
    "sk-",
    "sk_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "AIza",
    "ya29.",
    "AKIA",
    "hf_",
];

/// True for a value that has a known key prefix (with a long tail), a
/// `Bearer` header, a private-key block, or a long run of mixed letters and
/// digits with no separators (an opaque token). Names, paths, durations and
/// model ids do not match.
pub fn looks_like_secret(s: &str) -> bool {
    let t = s.trim();
    if t.contains("PRIVATE KEY") || t.to_ascii_lowercase().starts_with("bearer ") {
        return true;
    }
    if PREFIXES
        .iter()
        .any(|p| t.starts_with(p) && t.len() >= p.len() + 16)
    {
        return true;
    }
    // An opaque token: long, and nothing but mixed-case letters and digits.
    t.len() >= 32
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && t.chars().any(|c| c.is_ascii_digit())
        && t.chars().any(|c| c.is_ascii_uppercase())
        && t.chars().any(|c| c.is_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::looks_like_secret;

    #[test]
    fn credentials_match_and_ordinary_values_do_not() {
        for s in [
            "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv",
            "sk-proj-1234567890abcdefghij",
            "ghp_0123456789abcdefABCDEF0123",
            "AIzaSyA1234567890abcdefghijkLMNOP",
            "Bearer abc.def",
            "Zx81Qp0LmN4kT7vB2cR9sW3yH6jD5fGa1",
        ] {
            assert!(looks_like_secret(s), "{s}");
        }
        for s in [
            "gpt-5.6-sol",
            "claude-opus-5-5",
            "90s",
            "workspace",
            "gemini-3.1-pro-preview",
            "my-team-profile",
            "sk-short",
            "/usr/local/bin/codex",
        ] {
            assert!(!looks_like_secret(s), "{s}");
        }
    }
}
