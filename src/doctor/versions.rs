//! Which CLI versions baton was tested with: the versions the end-to-end
//! suite pins (`e2e/versions.env`, embedded at build time) and the older ones
//! measured by hand, with what is known to differ in them.

use std::cmp::Ordering;

use crate::agent::Agent;

const PINNED: &str = include_str!("../../e2e/versions.env");

/// A version as three numbers (`2.1.332`); the first such run in a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u64, pub u64, pub u64);

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

impl Version {
    /// The first `N.N.N` in `s` (`codex-cli 0.171.0`, `2.1.332 (Claude Code)`).
    pub fn find(s: &str) -> Option<Version> {
        let bytes = s.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i].is_ascii_digit()
                && (i == 0 || bytes[i - 1] == b'v' || !bytes[i - 1].is_ascii_alphanumeric())
            {
                let rest = &s[i..];
                let end = rest
                    .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                    .unwrap_or(rest.len());
                let parts: Vec<&str> = rest[..end].trim_end_matches('.').split('.').collect();
                if parts.len() >= 3
                    && let (Ok(a), Ok(b), Ok(c)) =
                        (parts[0].parse(), parts[1].parse(), parts[2].parse())
                {
                    return Some(Version(a, b, c));
                }
                i += end.max(1);
            } else {
                i += 1;
            }
        }
        None
    }
}

/// The npm package whose version the end-to-end suite pins for `agent`.
pub fn package(agent: Agent) -> Option<&'static str> {
    Some(match agent {
        Agent::Codex => "@openai/codex",
        Agent::Claude => "@anthropic-ai/claude-code",
        Agent::Zai | Agent::Pi => "@mariozechner/pi-coding-agent",
        Agent::GeminiCli => "@google/gemini-cli",
        Agent::Opencode => "opencode-ai",
        Agent::Qwen => "@qwen-code/qwen-code",
        Agent::Copilot => "@github/copilot",
        Agent::Kilo => "@kilocode/cli",
        Agent::Nanocoder => "@nanocollective/nanocoder",
        Agent::Cline => "cline",
        Agent::Agy | Agent::Byo(_) => return None,
    })
}

/// The pinned version of `agent`'s package, from `e2e/versions.env`.
pub fn pinned(agent: Agent) -> Option<Version> {
    let pkg = package(agent)?;
    PINNED
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('=').map(|(_, v)| v.trim()))
        .find_map(|spec| {
            let (name, ver) = spec.rsplit_once('@')?;
            (name == pkg).then(|| Version::find(ver)).flatten()
        })
}

/// An older version measured against the real CLI, and what differs in it.
struct Older {
    version: Version,
    differences: &'static str,
}

fn older(agent: Agent) -> Option<Older> {
    match agent {
        // shared/realcli/claude-gemini.md: all 26 claude scenarios pass with 2.1.197.
        Agent::Claude => Some(Older {
            version: Version(2, 1, 197),
            differences: "runs baton's scenarios, but a prompt swallowed by a variadic flag \
                          gives a vaguer error, `claude plugin validate` has no --json, and a \
                          plugin without plugin.json fails validation; it is what a plain npm \
                          install gives on node 20 (ask for @latest, which needs no node 22)",
        }),
        _ => None,
    }
}

/// How an installed version relates to the tested ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The pinned version, or an older one measured to work.
    Tested { note: Option<&'static str> },
    /// Newer than anything tested: probably fine, untested.
    Newer { tested: Version },
    /// Older than anything tested: known or unknown differences.
    Older {
        tested: Version,
        differences: Option<&'static str>,
    },
    /// Between the measured older version and the pin: untested.
    Between { low: Version, high: Version },
    /// No pin (agy) or the version could not be read.
    Unknown,
}

pub fn judge(agent: Agent, v: Option<Version>) -> Verdict {
    let (Some(v), Some(pin)) = (v, pinned(agent)) else {
        return Verdict::Unknown;
    };
    let old = older(agent);
    match v.cmp(&pin) {
        Ordering::Equal => Verdict::Tested { note: None },
        Ordering::Greater => Verdict::Newer { tested: pin },
        Ordering::Less => match old {
            Some(o) if o.version == v => Verdict::Tested {
                note: Some(o.differences),
            },
            Some(o) if v > o.version => Verdict::Between {
                low: o.version,
                high: pin,
            },
            Some(o) => Verdict::Older {
                tested: o.version,
                differences: Some(o.differences),
            },
            None => Verdict::Older {
                tested: pin,
                differences: None,
            },
        },
    }
}

/// The tested range as text: `2.1.197–2.1.332` or `0.171.0`.
pub fn tested_range(agent: Agent) -> Option<String> {
    let pin = pinned(agent)?;
    Some(match older(agent) {
        Some(o) => format!("{}–{pin}", o.version),
        None => pin.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_with_an_npm_package_has_a_pinned_version() {
        // agy has no registry package; every other agent is pinned in
        // e2e/versions.env, so doctor can say tested/newer/older for it.
        for agent in Agent::ALL {
            match package(agent) {
                Some(pkg) => assert!(pinned(agent).is_some(), "{pkg} is not pinned"),
                None => assert_eq!(agent, Agent::Agy),
            }
        }
    }

    #[test]
    fn versions_are_found_in_what_clis_print() {
        assert_eq!(Version::find("codex-cli 0.171.0"), Some(Version(0, 171, 0)));
        assert_eq!(
            Version::find("2.1.332 (Claude Code)"),
            Some(Version(2, 1, 332))
        );
        assert_eq!(Version::find("v0.61.0"), Some(Version(0, 61, 0)));
        assert_eq!(Version::find("x86_64 1.2"), None);
        assert_eq!(Version::find("pi 0.73.1-beta"), Some(Version(0, 73, 1)));
    }

    #[test]
    fn the_pins_come_from_versions_env() {
        assert_eq!(pinned(Agent::Codex), Some(Version(0, 171, 0)));
        assert_eq!(pinned(Agent::Claude), Some(Version(2, 1, 332)));
        assert_eq!(pinned(Agent::Pi), pinned(Agent::Zai));
        assert_eq!(pinned(Agent::GeminiCli), Some(Version(0, 61, 0)));
        assert_eq!(pinned(Agent::Agy), None);
    }

    #[test]
    fn verdicts() {
        let c = Agent::Claude;
        assert_eq!(
            judge(c, Some(Version(2, 1, 332))),
            Verdict::Tested { note: None }
        );
        assert!(matches!(
            judge(c, Some(Version(2, 1, 197))),
            Verdict::Tested { note: Some(_) }
        ));
        assert!(matches!(
            judge(c, Some(Version(2, 1, 250))),
            Verdict::Between { .. }
        ));
        assert!(matches!(
            judge(c, Some(Version(2, 1, 100))),
            Verdict::Older {
                differences: Some(_),
                ..
            }
        ));
        assert!(matches!(
            judge(c, Some(Version(2, 2, 0))),
            Verdict::Newer { .. }
        ));
        assert!(matches!(
            judge(Agent::Codex, Some(Version(0, 160, 0))),
            Verdict::Older {
                differences: None,
                ..
            }
        ));
        assert_eq!(judge(Agent::Agy, Some(Version(1, 0, 0))), Verdict::Unknown);
        assert_eq!(tested_range(c).as_deref(), Some("2.1.197–2.1.332"));
    }
}
