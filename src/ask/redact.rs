//! Secret-looking strings are replaced by `[REDACTED:<kind>]` before a
//! packet leaves baton, and counted per kind so the result can say what was
//! removed.
//!
//! Two sources of truth: the values of this process's environment variables
//! whose names say they hold one (KEY, TOKEN, SECRET, PASSWORD), replaced
//! first, then a table of credential shapes in the manner of gitleaks
//! (`rules.rs`, private keys in `pem.rs`; see docs/redaction.md).
//!
//! Theory of operation: one case-insensitive Aho-Corasick pass finds where
//! rule keywords occur, so clean text costs one scan; a rule's regex is
//! compiled the first time one of its keywords occurs, and runs only on the
//! lines around each occurrence. A match must then pass its rule's gates
//! (entropy, placeholder allow-list, the shape of a free-form value). Matches
//! that overlap are merged into one redaction named by the first-listed rule,
//! so no part of a secret found by any rule survives.

mod gates;
mod lines;
mod pem;
mod rules;
mod tfstate;

use std::collections::BTreeMap;
use std::sync::{LazyLock, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickKind};
use regex::bytes::Regex;

use self::gates::{accept, identifier_at};
use self::rules::{Check, End, RULES, Rule};

pub use self::lines::{htpasswd_line, pgpass_line};
pub use self::pem::{begins as private_key_begins, ends as private_key_ends};

/// Redaction counts, per kind (`api_key`, `env:GITHUB_TOKEN`, …).
pub type Counts = BTreeMap<String, usize>;

/// Environment values shorter than this are not treated as secrets: `1`,
/// `true` or `us` would otherwise be removed from every sentence.
const MIN_ENV_SECRET: usize = 8;

pub struct Redactor {
    /// (variable name, value), longest value first so that a value which
    /// contains another is replaced whole.
    env: Vec<(String, String)>,
}

impl Redactor {
    /// Secrets from the patterns and from this process's environment.
    pub fn from_env() -> Redactor {
        Redactor::with_env(
            std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        )
    }

    pub fn with_env(vars: impl IntoIterator<Item = (String, String)>) -> Redactor {
        let mut env: Vec<(String, String)> = vars
            .into_iter()
            .filter(|(k, v)| secret_name(k) && v.trim().chars().count() >= MIN_ENV_SECRET)
            .map(|(k, v)| (k, v.trim().to_string()))
            .collect();
        env.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
        env.dedup_by(|a, b| a.1 == b.1);
        Redactor { env }
    }

    /// `text` with every secret replaced; `counts` gains one per replacement.
    pub fn redact(&self, text: &str, counts: &mut Counts) -> String {
        let mut text = std::borrow::Cow::Borrowed(text);
        for (name, value) in &self.env {
            let n = text.matches(value.as_str()).count();
            if n > 0 {
                let kind = format!("env:{name}");
                text = text
                    .replace(value.as_str(), &format!("[REDACTED:{kind}]"))
                    .into();
                *counts.entry(kind).or_default() += n;
            }
        }
        scan(&text, counts)
    }
}

/// Whether an environment variable's name says it holds a secret.
fn secret_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD"]
        .iter()
        .any(|w| n.contains(w))
}

/// The keyword pre-filter, built once per process; each rule's regex is
/// compiled only the first time one of its keywords occurs, so a process
/// that redacts clean text compiles none of them.
struct Compiled {
    keywords: AhoCorasick,
    /// For each keyword (by Aho-Corasick pattern id), the rules it enables.
    rules_of: Vec<Vec<usize>>,
    /// The pattern id of `random_password`, which starts `tfstate.rs`.
    tfstate: usize,
    regexes: Vec<OnceLock<Regex>>,
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(compile);

fn compile() -> Compiled {
    let mut words: Vec<&str> = Vec::new();
    let mut rules_of: Vec<Vec<usize>> = Vec::new();
    for (i, r) in RULES.iter().enumerate() {
        for k in r.keywords {
            match words.iter().position(|w| w == k) {
                Some(p) => rules_of[p].push(i),
                None => {
                    words.push(k);
                    rules_of.push(vec![i]);
                }
            }
        }
    }
    let tfstate = words.len();
    words.push("random_password");
    rules_of.push(Vec::new());
    // A DFA: the overlapping search over the whole text is the cost clean
    // text pays, and ~200 short keywords build in about a millisecond.
    let keywords = AhoCorasick::builder()
        .kind(Some(AhoCorasickKind::DFA))
        .ascii_case_insensitive(true)
        .build(&words)
        .expect("redaction keywords build");
    Compiled {
        keywords,
        rules_of,
        tfstate,
        regexes: RULES.iter().map(|_| OnceLock::new()).collect(),
    }
}

impl Compiled {
    fn regex(&self, i: usize) -> &Regex {
        self.regexes[i].get_or_init(|| {
            let r = &RULES[i];
            Regex::new(&full_pattern(r))
                .unwrap_or_else(|e| panic!("redaction rule `{}` does not compile: {e}", r.id))
        })
    }
}

/// The rule's regex with its boundaries and, for a named value, the
/// assignment around it. ASCII only (`(?-u)`): no Unicode tables needed.
fn full_pattern(r: &Rule) -> String {
    let secret = if r.pattern.contains("(?P<s>") {
        r.pattern.to_string()
    } else {
        format!("(?P<s>{})", r.pattern)
    };
    let start = if r.word_start { r"\b" } else { "" };
    let end = match r.end {
        End::Word => r"\b",
        End::Token => r"(?:[^A-Za-z0-9_-]|\z)",
        End::Free => "",
    };
    if r.names.is_empty() {
        return format!("(?-u){start}{secret}{end}");
    }
    // name, up to 20 more identifier characters or a type (`var x string`),
    // an optional closing quote, an operator of ini, yaml, json, code,
    // Makefile (`::=`, `?=`), logstash (`=>`), PHP (`.=`) or XML (`>`), then
    // an optional opening quote or line break.
    format!(
        "(?-u)(?i:{names})[A-Za-z0-9_. \\t-]{{0,20}}?[\"'`]?[ \\t]{{0,3}}\
         (?:=>|:{{1,3}}=|\\?=|\\.=|\\|\\||[=>:,])[ \\t\\r\\n\"'`=]{{0,8}}{secret}{end}",
        names = r.names
    )
}

/// One secret found: bytes `start..end`, named by the rule of rank `rank`.
#[derive(Debug, Clone, Copy)]
struct Found {
    start: usize,
    end: usize,
    rank: usize,
    kind: &'static str,
}

/// How far a window reaches from a keyword before it stops at the first
/// whitespace rather than the end of the line: a minified file is one long
/// line, and no rule's secret holds whitespace (private keys, which do, are
/// found by `pem.rs` over the whole text).
const WINDOW_REACH: usize = 4096;

/// Every secret in `text`, merged where they overlap, in order.
fn find_all(text: &str) -> Vec<Found> {
    let c = &*COMPILED;
    let bytes = text.as_bytes();
    // Per rule, the windows around its keywords' hits, in text order.
    let mut windows: Vec<Vec<(usize, usize)>> = vec![Vec::new(); RULES.len()];
    let mut tf_hits = Vec::new();
    for m in c.keywords.find_overlapping_iter(bytes) {
        if m.pattern().as_usize() == c.tfstate {
            tf_hits.push(m.start());
            continue;
        }
        let rules = &c.rules_of[m.pattern().as_usize()];
        let w = window(bytes, m.start(), m.end());
        for &r in rules {
            let ws = &mut windows[r];
            match ws.last_mut() {
                Some(last) if w.0 <= last.1 => *last = (last.0.min(w.0), last.1.max(w.1)),
                _ => ws.push(w),
            }
        }
    }
    let mut found: Vec<Found> = pem::find(text)
        .into_iter()
        .map(|(start, end)| Found {
            start,
            end,
            rank: 0,
            kind: "private_key",
        })
        .collect();
    for (i, rule) in RULES.iter().enumerate() {
        for &(ws, we) in &windows[i] {
            found.extend(rule_matches(i, &text[ws..we]).map(|(start, end)| Found {
                start: ws + start,
                end: ws + end,
                rank: i + 1,
                kind: rule.kind,
            }));
        }
    }
    // Structural finds, ranked after every rule: a rule that claims the
    // same text names it.
    let structural = lines::pgpass(text)
        .into_iter()
        .chain(tfstate::find(text, &tf_hits));
    found.extend(structural.map(|(start, end)| Found {
        start,
        end,
        rank: RULES.len() + 1,
        kind: "password",
    }));
    merge(found)
}

/// Whether rule `id` finds exactly the whole of `text` (the `.htpasswd`
/// check of stdin).
fn whole_match(id: &str, text: &str) -> bool {
    RULES
        .iter()
        .position(|r| r.id == id)
        .is_some_and(|i| rule_matches(i, text).any(|(s, e)| s == 0 && e == text.len()))
}

/// The text a rule needs to see around a keyword at `start..end`: the line
/// before, the keyword's line and the line after (a named value may sit on
/// the line after its name, and a keyword may end a line), each reaching at
/// most `WINDOW_REACH` bytes before it settles for whitespace. Windows start
/// and end at line breaks or whitespace, so `\b` and the token ends of the
/// rules see what they would see in the whole text.
fn window(b: &[u8], start: usize, end: usize) -> (usize, usize) {
    let back = |from: usize| -> usize {
        let floor = from.saturating_sub(WINDOW_REACH);
        match b[floor..from].iter().rposition(|&c| c == b'\n') {
            Some(p) => floor + p,
            None if floor == 0 => 0,
            None => b[..floor]
                .iter()
                .rposition(u8::is_ascii_whitespace)
                .map_or(0, |p| p + 1),
        }
    };
    let fwd = |from: usize| -> usize {
        let ceil = (from + WINDOW_REACH).min(b.len());
        match b[from..ceil].iter().position(|&c| c == b'\n') {
            Some(p) => from + p + 1,
            None if ceil == b.len() => ceil,
            None => b[ceil..]
                .iter()
                .position(u8::is_ascii_whitespace)
                .map_or(b.len(), |p| ceil + p),
        }
    };
    // `back` stops on the break that ends the previous line; one more step
    // takes that line in too.
    let s = back(start);
    let s = if s > 0 { back(s) } else { 0 };
    let e = fwd(end);
    let e = if e < b.len() { fwd(e) } else { e };
    (s, e)
}

/// The secrets rule `i` alone finds in `text` (regex, then gates).
fn rule_matches(i: usize, text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let rule = &RULES[i];
    COMPILED
        .regex(i)
        .captures_iter(text.as_bytes())
        .filter_map(move |caps| {
            let m = caps.name("s")?;
            let (start, mut end) = char_bounds(text, m.start(), m.end());
            // A free-form value does not take the full stop after it.
            if rule.check == Check::Value {
                end = start + text[start..end].trim_end_matches(['.', ',']).len();
                // `password = getPassword()`: a call, not a value.
                if text[end..].starts_with('(') {
                    return None;
                }
            }
            let whole = caps.get(0).map_or(start, |w| w.start());
            accept(rule, &text[start..end], || identifier_at(text, whole)).then_some((start, end))
        })
}

/// Overlapping finds become one, named by the best-ranked rule.
fn merge(mut found: Vec<Found>) -> Vec<Found> {
    found.sort_unstable_by_key(|f| (f.start, f.rank));
    let mut out: Vec<Found> = Vec::with_capacity(found.len());
    for f in found {
        match out.last_mut() {
            Some(last) if f.start < last.end => {
                last.end = last.end.max(f.end);
                if f.rank < last.rank {
                    last.rank = f.rank;
                    last.kind = f.kind;
                }
            }
            _ => out.push(f),
        }
    }
    out
}

/// A byte range widened to character boundaries (patterns are ASCII, but a
/// negated class may stop inside a multi-byte character).
fn char_bounds(text: &str, mut start: usize, mut end: usize) -> (usize, usize) {
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    while !text.is_char_boundary(end) {
        end += 1;
    }
    (start, end)
}

fn scan(text: &str, counts: &mut Counts) -> String {
    let found = find_all(text);
    if found.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for f in found {
        out.push_str(&text[copied..f.start]);
        out.push_str("[REDACTED:");
        out.push_str(f.kind);
        out.push(']');
        *counts.entry(f.kind.to_string()).or_default() += 1;
        copied = f.end;
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redact(text: &str) -> (String, Counts) {
        let r = Redactor::with_env([
            ("MY_API_TOKEN".to_string(), "tok-value-0000-zz".to_string()),
            ("DB_PASSWORD".to_string(), "hunter2hunter2".to_string()),
            ("KEYBOARD".to_string(), "us".to_string()),
            ("HOME".to_string(), "/home/someone-long".to_string()),
        ]);
        let mut c = Counts::new();
        let out = r.redact(text, &mut c);
        (out, c)
    }

    const SK: &str = "sk-proj-Abc123Def456Ghi789Jkl012Mno345";
    const GHP: &str = "ghp_1234567890abcdefghijABCDEFGHIJ123456";
    const JWT: &str = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";

    #[test]
    fn secrets_are_redacted_by_kind() {
        let pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----";
        let table: &[(&str, &str, &str)] = &[
            (
                &format!("key = {SK}\n"),
                "key = [REDACTED:api_key]\n",
                "api_key",
            ),
            (
                "ANTHROPIC=sk-ant-api03-aBcD1234eFgH5678iJkL9012mNoP",
                "ANTHROPIC=[REDACTED:anthropic_api_key]",
                "anthropic_api_key",
            ),
            (
                &format!("token: {GHP}."),
                "token: [REDACTED:github_token].",
                "github_token",
            ),
            (
                "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123",
                "[REDACTED:github_token]",
                "github_token",
            ),
            (
                "SLACK=xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp",
                "SLACK=[REDACTED:slack_token]",
                "slack_token",
            ),
            (
                "id AKIAIOSFODNN7EXAMPLE here",
                "id [REDACTED:aws_access_key_id] here",
                "aws_access_key_id",
            ),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "aws_secret_access_key = [REDACTED:aws_secret_key]",
                "aws_secret_key",
            ),
            (
                "AWS_SECRET_ACCESS_KEY: \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\"",
                "AWS_SECRET_ACCESS_KEY: \"[REDACTED:aws_secret_key]\"",
                "aws_secret_key",
            ),
            (
                "Authorization: Bearer abc123DEF456ghi789JKL",
                "Authorization: Bearer [REDACTED:bearer_token]",
                "bearer_token",
            ),
            (&format!("cookie={JWT};"), "cookie=[REDACTED:jwt];", "jwt"),
            (
                &format!("a\n{pem}\nb"),
                "a\n[REDACTED:private_key]\nb",
                "private_key",
            ),
            (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA (cut off",
                "[REDACTED:private_key]",
                "private_key",
            ),
            (
                "AIzaSyA1234567890abcdefghijklmnopqrstuv",
                "[REDACTED:google_api_key]",
                "google_api_key",
            ),
            (
                "conn postgres://app:hunter2hunter2@db/x",
                "conn postgres://app:[REDACTED:env:DB_PASSWORD]@db/x",
                "env:DB_PASSWORD",
            ),
            (
                "header X-Token: tok-value-0000-zz",
                "header X-Token: [REDACTED:env:MY_API_TOKEN]",
                "env:MY_API_TOKEN",
            ),
        ];
        for (input, want, kind) in table {
            let (out, counts) = redact(input);
            assert_eq!(&out, want, "input: {input}");
            assert_eq!(counts.get(*kind), Some(&1), "{input}: {counts:?}");
            assert_eq!(counts.values().sum::<usize>(), 1, "{input}: {counts:?}");
        }
    }

    #[test]
    fn look_alikes_are_left_alone() {
        let table = [
            "task-force-management-system-design-review",
            "use sklearn and sk-learn for the model",
            "risk-assessment-of-the-whole-migration-plan",
            "sk-this-is-not-a-key-at-all-just-words",
            "the bearer of bad news arrived",
            "Bearer <token>",
            "Bearer authentication-scheme-description",
            "ghp_token_prefix",
            "xoxo-hugs-and-kisses-forever",
            "AKIAEXAMPLE",
            "AKIAIOSFODNN7EXAMPLE123 is too long",
            "eyJ.eyJ.x",
            "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----",
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
            "aws_secret_access_key = <your secret here>",
            "my layout is us; home is /home/someone-long",
            "a skeleton key-value store",
            "AIzaShort",
        ];
        for input in table {
            let (out, counts) = redact(input);
            assert_eq!(out, input, "look-alike changed");
            assert!(counts.is_empty(), "{input}: {counts:?}");
        }
    }

    #[test]
    fn counts_add_up_and_utf8_survives() {
        let text = format!("é {SK} ü {SK} — {GHP} ✓");
        let (out, counts) = redact(&text);
        assert_eq!(
            out,
            "é [REDACTED:api_key] ü [REDACTED:api_key] — [REDACTED:github_token] ✓"
        );
        assert_eq!(counts["api_key"], 2);
        assert_eq!(counts["github_token"], 1);
    }

    #[test]
    fn a_window_is_the_keyword_line_and_its_neighbours() {
        let text = "a\nb\nkey\nc\nd\n";
        let at = text.find("key").unwrap();
        let (s, e) = window(text.as_bytes(), at, at + 3);
        assert_eq!(&text[s..e], "\nb\nkey\nc\n");
        // At the edges of the text.
        let (s, e) = window(b"key", 0, 3);
        assert_eq!((s, e), (0, 3));
    }

    #[test]
    fn a_long_line_is_cut_at_whitespace_and_its_secret_still_found() {
        // Each side reaches over the keyword's line and one neighbour, no more.
        let pad = "word ".repeat(4000);
        let text = format!("{pad}token: {GHP} {pad}");
        let at = text.find("ghp_").unwrap();
        let (s, e) = window(text.as_bytes(), at, at + 4);
        assert!(
            e - s < 5 * WINDOW_REACH,
            "window {s}..{e} of {}",
            text.len()
        );
        assert!(s > 0 && e < text.len());
        assert!(text.as_bytes()[s - 1].is_ascii_whitespace());
        assert!(text.as_bytes()[e].is_ascii_whitespace());
        let (out, counts) = redact(&text);
        assert!(!out.contains(GHP));
        assert_eq!(counts["github_token"], 1);
    }

    #[test]
    fn a_value_on_the_line_after_its_name_is_found() {
        // The keyword (`secret`) is a line above the value it names.
        let text = "x\nclient_secret:\n  Qm9vZ2xlUmFuZG9tVjd4cQ\ny\n";
        let (out, counts) = redact(text);
        assert!(!out.contains("Qm9vZ2xlUmFuZG9tVjd4cQ"), "{out}");
        assert_eq!(counts.values().sum::<usize>(), 1, "{counts:?}");
    }

    #[test]
    fn an_aws_key_id_of_few_distinct_letters_is_redacted() {
        // Missed by the bench (seed 10) at gitleaks' entropy of 3.0.
        let (out, counts) = redact("aws_access_key_idToken=\"ABIAZASIJBNZJZSIIESZ\"");
        assert_eq!(
            out,
            "aws_access_key_idToken=\"[REDACTED:aws_access_key_id]\""
        );
        assert_eq!(counts["aws_access_key_id"], 1);
    }

    #[test]
    fn env_names_that_hold_secrets() {
        for n in [
            "OPENAI_API_KEY",
            "GH_TOKEN",
            "client_secret",
            "PGPASSWORD",
            "AWS_SECRET_ACCESS_KEY",
        ] {
            assert!(secret_name(n), "{n}");
        }
        for n in ["HOME", "PATH", "USER", "LANG", "EDITOR"] {
            assert!(!secret_name(n), "{n}");
        }
    }
}
