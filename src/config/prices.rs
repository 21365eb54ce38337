//! `[prices."MODEL"]` in the user file: a price for a model the built-in
//! table lacks, or one the user pays differently (docs/config.md#prices).
//!
//! The user file only: a price decides how much `--max-usd` lets a run
//! spend, and `baton.toml` is committed with the repository, so a project
//! must not be able to make every model free. Each entry is checked here
//! and handed to `spend::prices`, which looks at it before its own table.

use toml::de::DeValue;

use super::file::{Ctx, Scope, table, unknown};
use crate::error::Result;
use crate::spend::prices::Price;

/// More than any list price by far (USD per million tokens): a figure above
/// it is a mistake in units, not a price.
const MAX_PER_MILLION: f64 = 100_000.0;

/// The `[prices]` table of one file.
pub fn section(cx: &Ctx, v: &toml::Spanned<DeValue>) -> Result<Vec<Price>> {
    if cx.scope == Scope::Project {
        return Err(cx.err(
            v.span().start,
            "prices",
            "a project file may not set prices: a price decides what --max-usd lets a run \
             spend, and baton.toml is committed with the repository",
            "move [prices.\"MODEL\"] to your user file (`baton config path`)",
        ));
    }
    let mut out: Vec<Price> = Vec::new();
    for (name, entry) in table(cx, "prices", v)? {
        let raw = name.get_ref().as_ref();
        let model = raw.trim().to_ascii_lowercase();
        let key = format!("prices.{raw:?}");
        let at = name.span().start;
        if model.is_empty() || model.contains(char::is_whitespace) {
            return Err(cx.err(
                at,
                &key,
                "a model id may not be empty or hold spaces",
                "write the id the CLI reports, e.g. [prices.\"gpt-5.6-sol\"]",
            ));
        }
        if model.contains('/') {
            return Err(cx.err(
                at,
                &key,
                "a price is for a model id without its provider",
                &format!(
                    "write [prices.{:?}]: baton drops a `provider/` prefix before it looks a \
                     model up",
                    model.rsplit('/').next().unwrap_or_default()
                ),
            ));
        }
        if out.iter().any(|p| p.model == model) {
            return Err(cx.err(
                at,
                &key,
                "this model is priced twice (ids are compared in lowercase)",
                "keep one entry",
            ));
        }
        let (mut input, mut cached, mut output) = (None, None, None);
        for (k, val) in table(cx, &key, entry)? {
            let leaf = k.get_ref().as_ref();
            let full = format!("{key}.{leaf}");
            let slot = match leaf {
                "input" => &mut input,
                "cached_input" => &mut cached,
                "output" => &mut output,
                _ => {
                    return Err(unknown(
                        cx,
                        k.span().start,
                        &full,
                        &["input", "cached_input", "output"],
                    ));
                }
            };
            *slot = Some(amount(cx, &full, val)?);
        }
        let need = |x: Option<f64>, leaf: &str| {
            x.ok_or_else(|| {
                cx.err(
                    at,
                    &key,
                    format!("`{leaf}` is missing"),
                    "give input and output (and cached_input if the provider has a cache \
                     rate), in USD per million tokens",
                )
            })
        };
        let input = need(input, "input")?;
        let output = need(output, "output")?;
        out.push(Price {
            provider: "user".into(),
            model,
            input,
            // No cache rate given: the input rate, an estimate that errs high.
            cached_input: cached.unwrap_or(input),
            output,
            source: Some(format!("{}:{}", cx.path.display(), cx.line(at))),
        });
    }
    Ok(out)
}

/// A price: a number (integer or float) of dollars per million tokens.
fn amount(cx: &Ctx, key: &str, v: &toml::Spanned<DeValue>) -> Result<f64> {
    let at = v.span().start;
    let n = match v.get_ref() {
        DeValue::Float(f) => f.as_str().replace('_', "").parse::<f64>().ok(),
        DeValue::Integer(i) => i64::from_str_radix(&i.as_str().replace('_', ""), i.radix())
            .ok()
            .map(|n| n as f64),
        other => {
            return Err(cx.err(
                at,
                key,
                format!("expected a number, found {}", other.type_str()),
                "USD per million tokens, e.g. 1.25",
            ));
        }
    };
    match n {
        Some(x) if x.is_finite() && (0.0..=MAX_PER_MILLION).contains(&x) => Ok(x),
        _ => Err(cx.err(
            at,
            key,
            format!(
                "`{}` is not a price: USD per million tokens, from 0 to {MAX_PER_MILLION}",
                cx.text.get(v.span()).unwrap_or("?")
            ),
            "USD per million tokens, e.g. 1.25 (the providers list prices per million)",
        )),
    }
}
