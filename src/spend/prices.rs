//! The one table of token prices: what a call cost when its CLI does not
//! say (codex, gemini-cli, agy, qwen; pi and opencode when they report 0).
//!
//! Prices change and new models ship every month, so the table is small,
//! dated, and only ever used for an *estimate*: a result priced from it says
//! `cost_estimated: true`. A model that is not here has no price; its calls
//! count in tokens only (`--budget-tokens`), never in dollars.

use serde::Serialize;

use crate::result::Usage;

/// When the prices below were read, and from where. `baton agents` shows both.
pub const AS_OF: &str = "2026-06-01";
pub const SOURCE: &str = "the providers' published API list prices (USD per million tokens, \
standard tier, prompts up to 200k tokens), as listed on that date";

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Price {
    pub provider: &'static str,
    pub model: &'static str,
    pub input: f64,
    /// Input tokens read from the provider's cache.
    pub cached_input: f64,
    pub output: f64,
}

const fn p(provider: &'static str, model: &'static str, i: f64, c: f64, o: f64) -> Price {
    Price {
        provider,
        model,
        input: i,
        cached_input: c,
        output: o,
    }
}

/// Where no cache rate is published, the cached rate is the input rate: an
/// estimate that errs high keeps a budget on the safe side.
pub const TABLE: &[Price] = &[
    p("openai", "gpt-5.5", 5.00, 0.50, 30.00),
    p("openai", "gpt-5.5-pro", 30.00, 30.00, 180.00),
    p("openai", "gpt-5.4", 2.50, 0.25, 15.00),
    p("openai", "gpt-5.4-pro", 30.00, 30.00, 180.00),
    p("openai", "gpt-5.4-mini", 0.75, 0.075, 4.50),
    p("openai", "gpt-5.4-nano", 0.20, 0.02, 1.25),
    p("anthropic", "claude-opus-4-6", 5.00, 0.50, 25.00),
    p("anthropic", "claude-sonnet-4-6", 3.00, 0.30, 15.00),
    p("anthropic", "claude-haiku-4-5", 1.00, 0.10, 5.00),
    p("google", "gemini-3.5-flash", 1.50, 1.50, 9.00),
    p("google", "gemini-3.1-pro", 2.00, 2.00, 12.00),
    p("google", "gemini-3.1-flash-lite", 0.25, 0.25, 1.50),
    p("google", "gemini-3-flash", 0.50, 0.50, 3.00),
    p("google", "gemini-2.5-pro", 1.25, 1.25, 10.00),
    p("google", "gemini-2.5-flash", 0.30, 0.30, 2.50),
];

/// The price of `model`: its exact id, else the longest id it extends
/// with a suffix (`gemini-3.1-pro-preview`, `claude-sonnet-4-6-20260101`),
/// ignoring a `provider/` prefix (opencode's `openai/gpt-5.4`).
pub fn lookup(model: &str) -> Option<&'static Price> {
    let m = model.trim().to_ascii_lowercase();
    let m = m.rsplit('/').next().unwrap_or(&m);
    TABLE
        .iter()
        .filter(|p| {
            m == p.model
                || m.strip_prefix(p.model)
                    .is_some_and(|rest| rest.starts_with('-'))
        })
        .max_by_key(|p| p.model.len())
}

/// What `usage` cost at `model`'s price; `None` without a price or tokens.
pub fn estimate(model: Option<&str>, usage: &Usage) -> Option<f64> {
    let price = lookup(model?)?;
    let input = usage.input_tokens?;
    let cached = usage.cached_input_tokens.unwrap_or(0).min(input);
    let output = usage.output_tokens.unwrap_or(0);
    let per = 1_000_000.0;
    Some(
        (input - cached) as f64 * price.input / per
            + cached as f64 * price.cached_input / per
            + output as f64 * price.output / per,
    )
}

/// Fill in `usage.cost_usd` from the table when the CLI did not report a
/// cost, marking it `cost_estimated`. Returns whether the usage now has a
/// cost (reported or estimated); `false` means it counts in tokens only.
pub fn complete(model: Option<&str>, usage: &mut Usage) -> bool {
    if usage.cost_usd.is_some() {
        return true;
    }
    match estimate(model, usage) {
        Some(c) => {
            usage.cost_usd = Some(c);
            usage.cost_estimated = true;
            true
        }
        None => usage.input_tokens.is_none() && usage.output_tokens.is_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_takes_the_longest_id_a_model_extends() {
        assert_eq!(lookup("gpt-5.4").unwrap().model, "gpt-5.4");
        assert_eq!(lookup("GPT-5.4-mini").unwrap().model, "gpt-5.4-mini");
        assert_eq!(lookup("openai/gpt-5.4-nano").unwrap().model, "gpt-5.4-nano");
        assert_eq!(
            lookup("gemini-3.1-pro-preview").unwrap().model,
            "gemini-3.1-pro"
        );
        assert_eq!(
            lookup("claude-sonnet-4-6-20260101").unwrap().model,
            "claude-sonnet-4-6"
        );
        // Not a suffix with a dash: another model.
        assert!(lookup("gpt-5.45").is_none());
        assert!(lookup("gpt-5.6-luna").is_none());
    }

    #[test]
    fn estimate_prices_cached_input_apart() {
        let u = Usage {
            input_tokens: Some(1_000_000),
            cached_input_tokens: Some(400_000),
            output_tokens: Some(100_000),
            ..Usage::default()
        };
        // 600k × 2.50 + 400k × 0.25 + 100k × 15.00, per million.
        let c = estimate(Some("gpt-5.4"), &u).unwrap();
        assert!((c - (1.5 + 0.1 + 1.5)).abs() < 1e-9, "{c}");
        assert_eq!(estimate(None, &u), None);
        assert_eq!(estimate(Some("unknown-model"), &u), None);
    }

    #[test]
    fn complete_keeps_a_reported_cost_and_marks_an_estimate() {
        let mut reported = Usage {
            input_tokens: Some(10),
            cost_usd: Some(0.5),
            ..Usage::default()
        };
        assert!(complete(Some("gpt-5.4"), &mut reported));
        assert_eq!(reported.cost_usd, Some(0.5));
        assert!(!reported.cost_estimated);
        let mut u = Usage {
            input_tokens: Some(1000),
            output_tokens: Some(10),
            ..Usage::default()
        };
        assert!(complete(Some("gpt-5.4"), &mut u));
        assert!(u.cost_estimated);
        let mut unknown = Usage {
            input_tokens: Some(1000),
            ..Usage::default()
        };
        assert!(!complete(Some("gpt-5.6-luna"), &mut unknown));
        assert_eq!(unknown.cost_usd, None);
        // Nothing spent: nothing unknown either.
        assert!(complete(None, &mut Usage::default()));
    }
}
