//! The one table of token prices: what a call cost when its CLI does not
//! say (codex, gemini-cli, agy, qwen, the ACP agents; pi and opencode when
//! they report 0), and which models `--max-usd` can count at all.
//!
//! The built-in table is generated, not kept by hand: `scripts/prices.py`
//! reads LiteLLM's price list (the one the ecosystem maintains) and writes
//! `prices.json` beside this file, dated, with the providers baton's agents
//! use. The user file may add or override prices (`[prices."MODEL"]`,
//! `config::prices`); those are looked at first. A price is only ever used
//! for an *estimate*: a result priced from it says `cost_estimated: true`.
//! A model with no price counts in tokens only (`--budget-tokens`), and a
//! run that asks `--max-usd` of one is refused before it starts
//! (`run::check_priced`).

use std::sync::{LazyLock, OnceLock};

use serde::{Deserialize, Serialize};

use crate::result::Usage;

/// USD per million tokens.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Price {
    /// Whose list price it is (`openai`, `anthropic`, `google`, …), or
    /// `user` for an entry of the user's config file.
    pub provider: String,
    pub model: String,
    pub input: f64,
    /// Input tokens read from the provider's cache.
    pub cached_input: f64,
    pub output: f64,
    /// Where a user's entry is (`<file>:<line>`); none for the built-in table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// The generated table as `scripts/prices.py` writes it.
#[derive(Deserialize)]
struct Generated {
    as_of: String,
    source: String,
    models: Vec<(String, String, f64, f64, f64)>,
}

struct Table {
    as_of: String,
    source: String,
    models: Vec<Price>,
}

static BUILTIN: LazyLock<Table> = LazyLock::new(|| {
    let g: Generated = serde_json::from_str(include_str!("prices.json"))
        .expect("src/spend/prices.json is valid (a unit test parses it)");
    Table {
        as_of: g.as_of,
        source: g.source,
        models: g
            .models
            .into_iter()
            .map(|(provider, model, input, cached_input, output)| Price {
                provider,
                model,
                input,
                cached_input,
                output,
                source: None,
            })
            .collect(),
    }
});

/// The user's own prices, installed once per process by the config.
static USER: OnceLock<Vec<Price>> = OnceLock::new();

/// When the built-in prices were read. `baton agents` shows it.
pub fn as_of() -> &'static str {
    &BUILTIN.as_of
}

/// Where the built-in prices come from.
pub fn source() -> &'static str {
    &BUILTIN.source
}

/// The generated table.
pub fn builtin() -> &'static [Price] {
    &BUILTIN.models
}

/// The user file's `[prices."MODEL"]` entries (none until installed).
pub fn user() -> &'static [Price] {
    USER.get().map_or(&[], Vec::as_slice)
}

/// Make `prices` the user's prices for this process (the first call wins:
/// the command line installs them once, from the user file).
pub fn install_user(prices: Vec<Price>) {
    let _ = USER.set(prices);
}

/// The price of `model`: its exact id, else the longest id it extends
/// with a suffix (`gemini-3.1-pro-preview-05`, `claude-sonnet-4-6-20260101`),
/// ignoring a `provider/` prefix (opencode's `openai/gpt-5.4`). The most
/// specific id wins whichever table it is in; at the same id the user's
/// entry overrides the built-in one.
pub fn lookup(model: &str) -> Option<&'static Price> {
    best(&[user(), builtin()], model)
}

/// `lookup` over `tables`, the first table winning a tie.
fn best<'t>(tables: &[&'t [Price]], model: &str) -> Option<&'t Price> {
    let m = model.trim().to_ascii_lowercase();
    let m = m.rsplit('/').next().unwrap_or(&m);
    let mut found: Option<&Price> = None;
    for p in tables.iter().flat_map(|t| t.iter()) {
        let fits = m == p.model
            || m.strip_prefix(p.model.as_str())
                .is_some_and(|rest| rest.starts_with('-'));
        if fits && found.is_none_or(|f| p.model.len() > f.model.len()) {
            found = Some(p);
        }
    }
    found
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
            lookup("gemini-3.1-pro-preview-0612").unwrap().model,
            "gemini-3.1-pro-preview"
        );
        assert_eq!(
            lookup("claude-sonnet-4-6-20260101").unwrap().model,
            "claude-sonnet-4-6"
        );
        // Not a suffix with a dash: another model.
        assert!(lookup("gpt-5.45").is_none());
        assert!(lookup("gpt-7-nova").is_none());
    }

    /// `--max-usd` with baton's own aliases must count dollars: every model
    /// the alias table resolves to (and each default and known id) has a
    /// price. A new alias needs LiteLLM's entry or one in the SAME_AS list
    /// of scripts/prices.py.
    #[test]
    fn every_model_of_the_alias_table_has_a_price() {
        let mut missing = Vec::new();
        for a in crate::agent::Agent::ALL {
            let t = crate::agent::models::table(a);
            let ids = t
                .aliases
                .iter()
                .map(|(_, id)| *id)
                .chain(t.known.iter().copied())
                .chain(t.default_model);
            for id in ids {
                if lookup(id).is_none_or(|p| p.model != id) {
                    missing.push(format!("{}: {id}", a.name()));
                }
            }
        }
        assert!(missing.is_empty(), "no exact price for {missing:?}");
        // The figures the issue named, as LiteLLM lists them.
        let luna = lookup("gpt-5.6-luna").unwrap();
        assert_eq!(
            (luna.provider.as_str(), luna.input, luna.output),
            ("openai", 0.2, 1.2)
        );
        assert_eq!(
            lookup("opus").unwrap().input,
            lookup("claude-opus-5-5").unwrap().input
        );
    }

    #[test]
    fn the_generated_table_is_dated_sane_and_has_one_entry_per_model() {
        let date = as_of();
        assert!(
            date.len() == 10 && date.as_bytes()[4] == b'-' && date.as_bytes()[7] == b'-',
            "{date}"
        );
        assert!(source().contains("LiteLLM"), "{}", source());
        let mut seen = std::collections::HashSet::new();
        assert!(builtin().len() > 50);
        for p in builtin() {
            assert!(seen.insert(p.model.as_str()), "twice: {}", p.model);
            assert_eq!(p.model, p.model.to_ascii_lowercase());
            for x in [p.input, p.cached_input, p.output] {
                assert!(x.is_finite() && x > 0.0 && x < 10_000.0, "{p:?}");
            }
            assert!(p.cached_input <= p.input, "{p:?}");
            assert!(p.source.is_none());
        }
    }

    #[test]
    fn a_users_entry_is_looked_at_before_the_built_in_table() {
        let mine = vec![Price {
            provider: "user".into(),
            model: "gpt-5.4".into(),
            input: 1.0,
            cached_input: 1.0,
            output: 1.0,
            source: Some("config.toml:3".into()),
        }];
        let both = |m: &str| best(&[&mine, builtin()], m).map(|p| p.input);
        assert_eq!(both("gpt-5.4"), Some(1.0));
        assert_eq!(both("gpt-5.4-2026-03-05"), Some(1.0));
        // A more specific built-in id is not overridden by a shorter one.
        assert_eq!(both("gpt-5.4-mini"), Some(0.75));
        assert_eq!(best(&[builtin()], "gpt-5.4").unwrap().input, 2.5);
        assert_eq!(both("gpt-5.45"), None);
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
        assert!(!complete(Some("gpt-7-nova"), &mut unknown));
        assert_eq!(unknown.cost_usd, None);
        // Nothing spent: nothing unknown either.
        assert!(complete(None, &mut Usage::default()));
    }
}
