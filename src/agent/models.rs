//! The one table of models and efforts per agent.
//!
//! Aliases map to the ids the CLI expects; a model that is not in the table is
//! passed through unchanged with a warning (new models ship every month and
//! baton must not block them). Efforts follow what each CLI's own `--help`
//! accepts; an effort the agent does not accept is a usage error.

use crate::agent::Agent;
use crate::error::{Error, Result};

pub struct ModelTable {
    /// Model used when `--model` is not given. `None`: let the CLI decide.
    pub default_model: Option<&'static str>,
    /// `(alias, model id)`; ids themselves are also accepted as-is.
    pub aliases: &'static [(&'static str, &'static str)],
    /// Model ids known to this table beyond the alias targets.
    pub known: &'static [&'static str],
    /// Efforts the agent accepts (empty: the CLI has no effort switch).
    pub efforts: &'static [&'static str],
    pub default_effort: Option<&'static str>,
    /// The model is fixed (zai): any other `--model` is a usage error.
    pub fixed_model: bool,
}

pub fn table(agent: Agent) -> &'static ModelTable {
    match agent {
        Agent::Codex => &ModelTable {
            default_model: None,
            aliases: &[
                ("luna", "gpt-5.6-luna"),
                ("terra", "gpt-5.6-terra"),
                ("sol", "gpt-5.6-sol"),
                ("astra", "gpt-6-astra"),
            ],
            known: &[],
            efforts: &["low", "medium", "high", "xhigh"],
            default_effort: Some("high"),
            fixed_model: false,
        },
        // The aliases are claude's own (it resolves them to the newest model of
        // the family), so they are passed through as-is.
        Agent::Claude => &ModelTable {
            default_model: None,
            aliases: &[
                ("fable", "fable"),
                ("opus", "opus"),
                ("sonnet", "sonnet"),
                ("haiku", "haiku"),
            ],
            known: &[],
            efforts: &["low", "medium", "high", "xhigh", "max"],
            default_effort: Some("xhigh"),
            fixed_model: false,
        },
        Agent::Agy => &ModelTable {
            default_model: Some("gemini-3.7-flash"),
            aliases: &[("flash", "gemini-3.7-flash"), ("pro", "gemini-3.1-pro")],
            known: &[
                "gemini-3.7-flash",
                "gemini-3.6-flash",
                "gemini-3.5-flash",
                "gemini-3.1-pro",
            ],
            efforts: &["low", "medium", "high"],
            default_effort: Some("high"),
            fixed_model: false,
        },
        Agent::Zai => &ModelTable {
            default_model: Some("glm-5.2"),
            aliases: &[("glm", "glm-5.2"), ("glm-5.2", "glm-5.2")],
            known: &["glm-5.2"],
            efforts: &["medium", "high", "xhigh"],
            default_effort: Some("high"),
            fixed_model: true,
        },
        // pi's `--thinking` levels, per `pi --help`.
        Agent::Pi => &ModelTable {
            default_model: None,
            aliases: &[],
            known: &[],
            efforts: &["off", "minimal", "low", "medium", "high", "xhigh"],
            default_effort: None,
            fixed_model: false,
        },
        // gemini-cli has no effort switch; the model defaults to its router (`auto`).
        Agent::GeminiCli => &ModelTable {
            default_model: None,
            aliases: &[
                ("flash", "gemini-3.8-flash"),
                ("pro", "gemini-3.1-pro-preview"),
            ],
            known: &[],
            efforts: &[],
            default_effort: None,
            fixed_model: false,
        },
        // opencode's models are `provider/model` from its own config; its
        // `--variant` names the provider's reasoning effort.
        Agent::Opencode => &ModelTable {
            default_model: None,
            aliases: &[],
            known: &[],
            efforts: &["none", "minimal", "low", "medium", "high", "xhigh", "max"],
            default_effort: None,
            fixed_model: false,
        },
        // Qwen Code has no effort switch; the model comes from its settings.
        Agent::Qwen => &ModelTable {
            default_model: None,
            aliases: &[],
            known: &[],
            efforts: &[],
            default_effort: None,
            fixed_model: false,
        },
        // Copilot's model comes from its settings or its provider
        // (COPILOT_MODEL); over ACP baton passes none of its efforts.
        Agent::Copilot | Agent::Kilo | Agent::Nanocoder | Agent::Cline | Agent::Byo(_) => {
            &ModelTable {
                default_model: None,
                aliases: &[],
                known: &[],
                efforts: &[],
                default_effort: None,
                fixed_model: false,
            }
        }
    }
}

/// Efforts a specific model accepts, when it narrows the agent's list.
fn model_efforts(agent: Agent, model: &str) -> Option<&'static [&'static str]> {
    match agent {
        Agent::Agy if model.contains("pro") => Some(&["low", "high"]),
        _ => None,
    }
}

/// The model and effort a run will use, after aliases and defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub model: Option<String>,
    pub effort: Option<String>,
    pub warnings: Vec<String>,
}

pub fn resolve(agent: Agent, model: Option<&str>, effort: Option<&str>) -> Result<Resolved> {
    let t = table(agent);
    let mut warnings = Vec::new();
    let model = match model {
        None => t.default_model.map(str::to_string),
        Some(m) => {
            let lower = m.to_ascii_lowercase();
            if let Some((_, id)) = t.aliases.iter().find(|(a, _)| *a == lower) {
                Some((*id).to_string())
            } else if t.known.contains(&m) || t.aliases.iter().any(|(_, id)| *id == m) {
                Some(m.to_string())
            } else if t.fixed_model {
                return Err(Error::usage_hint(
                    format!(
                        "`{}` always uses `glm-5.2`; `--model {m}` is not accepted",
                        agent.name()
                    ),
                    "drop --model, or use `--agent pi --provider zai --model <id>` for another Z.AI model",
                ));
            } else {
                warnings.push(format!(
                    "model `{m}` is not in baton's table for {}; passed to the CLI unchanged",
                    agent.name()
                ));
                Some(m.to_string())
            }
        }
    };
    let allowed = model
        .as_deref()
        .and_then(|m| model_efforts(agent, m))
        .unwrap_or(t.efforts);
    let effort = match effort {
        None => match t.default_effort {
            // A narrower model list may not contain the agent default (none today).
            Some(d) if allowed.contains(&d) => Some(d.to_string()),
            Some(_) => allowed.last().map(|s| s.to_string()),
            None => None,
        },
        Some(e) => {
            let e = e.to_ascii_lowercase();
            if allowed.is_empty() {
                return Err(Error::usage_hint(
                    format!(
                        "`{}` has no effort setting; `--effort {e}` is not accepted",
                        agent.name()
                    ),
                    "drop --effort",
                ));
            }
            if !allowed.contains(&e.as_str()) {
                let what = match &model {
                    Some(m) if model_efforts(agent, m).is_some() => format!("model `{m}`"),
                    _ => format!("`{}`", agent.name()),
                };
                return Err(Error::usage_hint(
                    format!("effort `{e}` is not accepted by {what}"),
                    format!("use one of: {}", allowed.join(", ")),
                ));
            }
            Some(e)
        }
    };
    Ok(Resolved {
        model,
        effort,
        warnings,
    })
}

/// The model to report: the one the CLI says served the run, else the one
/// asked for. When both are known and they are not the same model, a
/// `model_fallback:` warning says so (a CLI may fall back on overload, quota
/// or an unknown id). An alias the CLI expands (`opus` →
/// `claude-opus-5-5`) or a provider prefix (`zai/glm-5.2`) is the same model.
pub fn served(
    requested: Option<&str>,
    reported: Option<String>,
    warnings: &mut Vec<String>,
) -> Option<String> {
    let Some(reported) = reported.filter(|m| !m.trim().is_empty()) else {
        return requested.map(str::to_string);
    };
    if let Some(asked) = requested
        && !same_model(asked, &reported)
    {
        warnings.push(format!(
            "model_fallback: asked for `{asked}`, but the CLI reports that `{reported}` served the run"
        ));
    }
    Some(reported)
}

fn same_model(asked: &str, reported: &str) -> bool {
    let norm = |s: &str| {
        let s = s.trim().to_ascii_lowercase();
        let s = s.rsplit('/').next().unwrap_or(&s).to_string();
        // claude marks context variants as `model[1m]`.
        s.split('[').next().unwrap_or(&s).to_string()
    };
    let (a, r) = (norm(asked), norm(reported));
    !a.is_empty() && (a == r || r.contains(&a) || a.contains(&r))
}

/// `NAME[:MODEL]` (`claude`, `pi:glm-5.2`): an agent and the model asked
/// for it, as `--fallback` and `run.fallback` give them.
pub fn parse_item(item: &str) -> Result<(Agent, Option<String>)> {
    let item = item.trim();
    let (name, model) = match item.split_once(':') {
        Some((n, m)) => (n, Some(m.trim().to_string())),
        None => (item, None),
    };
    if model.as_deref() == Some("") {
        return Err(Error::usage_hint(
            format!("fallback `{item}` names no model after `:`"),
            "write NAME or NAME:MODEL, e.g. --fallback claude,pi:glm-5.2",
        ));
    }
    Ok((Agent::parse(name)?, model))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(agent: Agent, m: Option<&str>, e: Option<&str>) -> Resolved {
        resolve(agent, m, e).unwrap()
    }

    #[test]
    fn codex_aliases_and_default_effort() {
        let x = r(Agent::Codex, Some("luna"), None);
        assert_eq!(x.model.as_deref(), Some("gpt-5.6-luna"));
        assert_eq!(x.effort.as_deref(), Some("high"));
        assert_eq!(
            r(Agent::Codex, Some("TERRA"), None).model.as_deref(),
            Some("gpt-5.6-terra")
        );
        assert_eq!(
            r(Agent::Codex, Some("sol"), None).model.as_deref(),
            Some("gpt-5.6-sol")
        );
        assert_eq!(
            r(Agent::Codex, Some("astra"), None).model.as_deref(),
            Some("gpt-6-astra")
        );
        assert_eq!(r(Agent::Codex, None, None).model, None);
        assert!(resolve(Agent::Codex, None, Some("max")).is_err());
        assert_eq!(
            r(Agent::Codex, None, Some("xhigh")).effort.as_deref(),
            Some("xhigh")
        );
    }

    #[test]
    fn claude_efforts_follow_its_help() {
        for e in ["low", "medium", "high", "xhigh", "max"] {
            assert_eq!(r(Agent::Claude, None, Some(e)).effort.as_deref(), Some(e));
        }
        assert_eq!(
            r(Agent::Claude, None, None).effort.as_deref(),
            Some("xhigh")
        );
        assert_eq!(
            r(Agent::Claude, Some("fable"), None).model.as_deref(),
            Some("fable")
        );
        assert!(resolve(Agent::Claude, None, Some("ultra")).is_err());
    }

    #[test]
    fn gemini_pro_takes_only_low_and_high() {
        let x = r(Agent::Agy, None, None);
        assert_eq!(x.model.as_deref(), Some("gemini-3.7-flash"));
        assert_eq!(x.effort.as_deref(), Some("high"));
        assert_eq!(
            r(Agent::Agy, Some("pro"), None).model.as_deref(),
            Some("gemini-3.1-pro")
        );
        assert!(resolve(Agent::Agy, Some("pro"), Some("medium")).is_err());
        assert!(resolve(Agent::Agy, Some("flash"), Some("medium")).is_ok());
        for m in ["gemini-3.6-flash", "gemini-3.5-flash", "gemini-3.1-pro"] {
            let x = r(Agent::Agy, Some(m), Some("low"));
            assert_eq!(x.model.as_deref(), Some(m));
            assert!(x.warnings.is_empty());
        }
    }

    #[test]
    fn zai_model_is_fixed() {
        let x = r(Agent::Zai, None, None);
        assert_eq!(x.model.as_deref(), Some("glm-5.2"));
        assert_eq!(x.effort.as_deref(), Some("high"));
        assert!(resolve(Agent::Zai, Some("glm-4.7"), None).is_err());
        assert!(resolve(Agent::Zai, None, Some("low")).is_err());
        assert_eq!(
            r(Agent::Zai, None, Some("xhigh")).effort.as_deref(),
            Some("xhigh")
        );
    }

    #[test]
    fn unknown_model_passes_through_with_a_warning() {
        let x = r(Agent::Codex, Some("gpt-7-nova"), None);
        assert_eq!(x.model.as_deref(), Some("gpt-7-nova"));
        assert_eq!(x.warnings.len(), 1);
        assert!(x.warnings[0].contains("gpt-7-nova"));
    }

    #[test]
    fn gemini_cli_has_no_effort() {
        assert!(resolve(Agent::GeminiCli, None, Some("high")).is_err());
        assert_eq!(r(Agent::GeminiCli, None, None).effort, None);
    }

    #[test]
    fn opencode_variants_and_qwen_without_effort() {
        assert_eq!(
            r(Agent::Opencode, None, Some("max")).effort.as_deref(),
            Some("max")
        );
        assert_eq!(r(Agent::Opencode, None, None).effort, None);
        assert!(resolve(Agent::Opencode, None, Some("ultra")).is_err());
        assert!(resolve(Agent::Qwen, None, Some("high")).is_err());
        assert_eq!(r(Agent::Qwen, None, None).model, None);
    }

    #[test]
    fn pi_thinking_levels() {
        assert_eq!(
            r(Agent::Pi, None, Some("minimal")).effort.as_deref(),
            Some("minimal")
        );
        assert_eq!(r(Agent::Pi, None, None).effort, None);
        assert!(resolve(Agent::Pi, None, Some("max")).is_err());
    }

    #[test]
    fn served_model_and_fallback_warning() {
        let mut w = Vec::new();
        // The CLI said nothing: what was asked stands.
        assert_eq!(
            served(Some("gpt-5.6-sol"), None, &mut w).as_deref(),
            Some("gpt-5.6-sol")
        );
        assert_eq!(served(None, None, &mut w), None);
        // Aliases, prefixes and context variants are the same model.
        assert_eq!(
            served(Some("opus"), Some("claude-opus-5-5".into()), &mut w).as_deref(),
            Some("claude-opus-5-5")
        );
        served(Some("glm-5.2"), Some("zai/glm-5.2".into()), &mut w);
        served(
            Some("claude-opus-5-5"),
            Some("claude-opus-5-5[1m]".into()),
            &mut w,
        );
        served(None, Some("gemini-3.8-flash".into()), &mut w);
        assert!(w.is_empty(), "{w:?}");
        // Another model served: reported, with a warning.
        let m = served(
            Some("gemini-3.1-pro-preview"),
            Some("gemini-3.8-flash".into()),
            &mut w,
        );
        assert_eq!(m.as_deref(), Some("gemini-3.8-flash"));
        assert_eq!(w.len(), 1);
        assert!(
            w[0].starts_with("model_fallback: asked for `gemini-3.1-pro-preview`"),
            "{w:?}"
        );
    }
}
