//! A result's warnings, typed: the ones other code acts on (a fan-out or a
//! council relays what a writer's chain said about who served, what it did
//! not try again and what it left) are variants, so no code matches their
//! text; every other warning is `Text`. Each prints, and is published by
//! `baton schema`, as the string it always was: a kind's prefix
//! (`fell_back: `, `not retried: `, …) then what happened.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    /// The agent asked for could not answer and a fallback agent served:
    /// `fell_back: codex (rate_limited) could not answer; claude served the run`.
    FellBack(String),
    /// A retryable failure that was not retried, and why.
    NotRetried(String),
    /// A failure that would fall back did not, and why.
    DidNotFallBack(String),
    /// A worktree of an earlier call of the round stays (its peer changed
    /// files there before it failed): where.
    EarlierAttemptStays(String),
    /// A council stage found the worktree of an interrupted earlier attempt
    /// and discarded it: where, and how to recover its tip.
    InterruptedAttemptLeft(String),
    /// Not in a git repository: `changed_files` is not tracked (what
    /// follows the prefix says so). `ask` drops it for a packet adviser,
    /// which runs in an empty folder on purpose.
    NotInGit(String),
    /// Any other warning, for people only.
    Text(String),
}

/// Makes a kind's variant from the text after its prefix.
type Make = fn(String) -> Warning;

/// Each kind's prefix; the text after it is the variant's.
const PREFIXES: [(&str, Make); 6] = [
    ("fell_back: ", Warning::FellBack),
    ("not retried: ", Warning::NotRetried),
    ("did not fall back: ", Warning::DidNotFallBack),
    (
        "an earlier attempt's worktree ",
        Warning::EarlierAttemptStays,
    ),
    (
        "an interrupted earlier attempt of this stage left ",
        Warning::InterruptedAttemptLeft,
    ),
    ("cwd is not in a git repository: ", Warning::NotInGit),
];

impl Warning {
    /// The kind's prefix and the text after it (`""` for `Text`).
    fn parts(&self) -> (&'static str, &str) {
        match self {
            Warning::FellBack(t) => (PREFIXES[0].0, t),
            Warning::NotRetried(t) => (PREFIXES[1].0, t),
            Warning::DidNotFallBack(t) => (PREFIXES[2].0, t),
            Warning::EarlierAttemptStays(t) => (PREFIXES[3].0, t),
            Warning::InterruptedAttemptLeft(t) => (PREFIXES[4].0, t),
            Warning::NotInGit(t) => (PREFIXES[5].0, t),
            Warning::Text(t) => ("", t),
        }
    }

    /// What follows the kind's prefix (all of it for `Text`).
    pub fn detail(&self) -> &str {
        self.parts().1
    }

    /// What a writer's chain said about who served, what it did not retry
    /// and what an earlier call left: what a fan-out and a council relay.
    pub fn from_the_chain(&self) -> bool {
        matches!(
            self,
            Warning::FellBack(_)
                | Warning::NotRetried(_)
                | Warning::DidNotFallBack(_)
                | Warning::EarlierAttemptStays(_)
        )
    }

    /// Whether its text, as printed, contains `pat` (for tests and people;
    /// code acts on the variant).
    pub fn contains(&self, pat: &str) -> bool {
        self.to_string().contains(pat)
    }

    /// A warning read back from a stored result (a job's, an attempt's):
    /// the only place a warning's text is looked at, since a stored result
    /// holds strings.
    pub fn parse(text: String) -> Warning {
        for (prefix, make) in PREFIXES {
            if let Some(rest) = text.strip_prefix(prefix) {
                return make(rest.to_string());
            }
        }
        Warning::Text(text)
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (prefix, text) = self.parts();
        write!(f, "{prefix}{text}")
    }
}

impl From<String> for Warning {
    fn from(text: String) -> Warning {
        Warning::Text(text)
    }
}

impl From<&str> for Warning {
    fn from(text: &str) -> Warning {
        Warning::Text(text.to_string())
    }
}

impl PartialEq<&str> for Warning {
    fn eq(&self, other: &&str) -> bool {
        let (prefix, text) = self.parts();
        other.strip_prefix(prefix) == Some(text)
    }
}

impl Serialize for Warning {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Warning {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Warning, D::Error> {
        String::deserialize(d).map(Warning::parse)
    }
}

impl JsonSchema for Warning {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        String::schema_name()
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(g)
    }

    fn inline_schema() -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_prints_and_reads_back_as_the_string_it_always_was() {
        for (text, kind) in [
            (
                "fell_back: codex (rate_limited) could not answer; claude served the run",
                Warning::FellBack(
                    "codex (rate_limited) could not answer; claude served the run".into(),
                ),
            ),
            (
                "not retried: waiting 9s would pass --timeout",
                Warning::NotRetried("waiting 9s would pass --timeout".into()),
            ),
            (
                "did not fall back: codex changed files before it failed (a)",
                Warning::DidNotFallBack("codex changed files before it failed (a)".into()),
            ),
            (
                "an earlier attempt's worktree /w (branch b) stays",
                Warning::EarlierAttemptStays("/w (branch b) stays".into()),
            ),
            (
                "an interrupted earlier attempt of this stage left worktree /w on b",
                Warning::InterruptedAttemptLeft("worktree /w on b".into()),
            ),
            (
                "cwd is not in a git repository: changed_files is not tracked",
                Warning::NotInGit("changed_files is not tracked".into()),
            ),
            (
                "codex printed no session id",
                Warning::Text("codex printed no session id".into()),
            ),
        ] {
            assert_eq!(kind.to_string(), text);
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("{text:?}"));
            let back: Warning = serde_json::from_str(&format!("{text:?}")).unwrap();
            assert_eq!(back, kind);
            assert!(kind == text);
        }
    }

    #[test]
    fn the_schema_is_a_string() {
        let s = schemars::schema_for!(Vec<Warning>).to_value();
        assert_eq!(s["items"], serde_json::json!({"type": "string"}));
    }

    /// No code outside this file decides what a warning is by its text:
    /// no prefix of a kind appears as a string literal of its own (a list
    /// to match against) or after `starts_with(`/`strip_prefix(`, outside
    /// tests.
    #[test]
    fn no_code_matches_warning_text() {
        let mut dirs = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
        let mut bad = Vec::new();
        while let Some(dir) = dirs.pop() {
            for p in std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()) {
                if p.is_dir() {
                    dirs.push(p);
                    continue;
                }
                if p.extension().is_none_or(|e| e != "rs") || p.ends_with("result/warning.rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&p).unwrap();
                let code = text.split("#[cfg(test)]").next().unwrap_or("");
                for (prefix, _) in PREFIXES {
                    // The kind's first words ("fell_back:", "an earlier
                    // attempt's", …), as a literal of their own or the
                    // start of what a string is matched against.
                    let words: Vec<&str> =
                        prefix.trim_end().trim_end_matches(':').split(' ').collect();
                    for n in words.len().min(2)..=words.len() {
                        let head = words[..n].join(" ");
                        for needle in [
                            format!("\"{head}\""),
                            format!("\"{head}:\""),
                            format!("\"{head}: \""),
                            format!("starts_with(\"{head}"),
                            format!("strip_prefix(\"{head}"),
                        ] {
                            if code.contains(&needle) {
                                bad.push(format!("{}: {needle}", p.display()));
                            }
                        }
                    }
                }
            }
        }
        assert!(
            bad.is_empty(),
            "warning text matched outside result/warning.rs: {bad:?}"
        );
    }
}
