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
mod keywords;
mod lines;
mod pem;
mod rules;
mod tfstate;

use std::collections::BTreeMap;
use std::sync::{LazyLock, OnceLock};

use aho_corasick::{AhoCorasick, MatchKind};
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
    /// (variable name, value), longest value first.
    env: Vec<(String, String)>,
    /// Every value in one automaton (pattern id = index in `env`),
    /// leftmost-longest so that a value which contains another is replaced
    /// whole: one pass over the text however many secrets the environment
    /// holds.
    env_values: Option<AhoCorasick>,
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
        let env_values = (!env.is_empty()).then(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(env.iter().map(|(_, v)| v))
                .expect("environment values build")
        });
        Redactor { env, env_values }
    }

    /// `text` with every secret replaced; `counts` gains one per replacement.
    pub fn redact(&self, text: &str, counts: &mut Counts) -> String {
        let Some(values) = &self.env_values else {
            return scan(text, counts);
        };
        let mut out = String::new();
        let mut copied = 0;
        for m in values.find_iter(text) {
            let kind = format!("env:{}", self.env[m.pattern().as_usize()].0);
            out.push_str(&text[copied..m.start()]);
            out.push_str(&format!("[REDACTED:{kind}]"));
            *counts.entry(kind).or_default() += 1;
            copied = m.end();
        }
        if copied == 0 {
            return scan(text, counts);
        }
        out.push_str(&text[copied..]);
        scan(&out, counts)
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
    keywords: aho_corasick::dfa::DFA,
    /// For each keyword (by Aho-Corasick pattern id), the rules it enables,
    /// each with the keyword's exact spelling when the rule's regex is
    /// case-sensitive there (`SK` of `SK[0-9a-f]{32}`): a hit in another
    /// case (`ask`, `task`) cannot match, so it opens no window.
    rules_of: Vec<Vec<(usize, Option<&'static str>)>>,
    /// For the keywords after the rules', the scanner each one feeds.
    scanner_of: Vec<Option<Scanner>>,
    regexes: Vec<OnceLock<Regex>>,
}

/// The scanners that look at the text around a keyword themselves, fed by
/// the same keyword pass as the rules, so the text is read once.
#[derive(Clone, Copy, PartialEq)]
enum Scanner {
    /// `random_password` (`tfstate.rs`).
    Tfstate,
    /// A colon before a port or `*` (`:5432`, `:*`): a `.pgpass` entry may
    /// be on that line (`lines.rs`).
    Pgpass,
    /// `-----BEGIN ` and `-----END ` (`pem.rs`).
    PemBegin,
    PemEnd,
}

/// The keywords of the scanners; `pem.rs` wants its lines in upper case.
const SCANNER_KEYWORDS: &[(&str, Scanner)] = &[
    ("random_password", Scanner::Tfstate),
    (":0", Scanner::Pgpass),
    (":1", Scanner::Pgpass),
    (":2", Scanner::Pgpass),
    (":3", Scanner::Pgpass),
    (":4", Scanner::Pgpass),
    (":5", Scanner::Pgpass),
    (":6", Scanner::Pgpass),
    (":7", Scanner::Pgpass),
    (":8", Scanner::Pgpass),
    (":9", Scanner::Pgpass),
    (":*", Scanner::Pgpass),
    ("-----begin ", Scanner::PemBegin),
    ("-----end ", Scanner::PemEnd),
];

static COMPILED: LazyLock<Compiled> = LazyLock::new(compile);

fn compile() -> Compiled {
    let mut words: Vec<&str> = Vec::new();
    let mut rules_of: Vec<Vec<(usize, Option<&'static str>)>> = Vec::new();
    for (i, r) in RULES.iter().enumerate() {
        for k in r.keywords {
            let enabled = (i, exact_case(r, k));
            match words.iter().position(|w| w == k) {
                Some(p) => rules_of[p].push(enabled),
                None => {
                    words.push(k);
                    rules_of.push(vec![enabled]);
                }
            }
        }
    }
    let mut scanner_of = vec![None; words.len()];
    for &(k, scanner) in SCANNER_KEYWORDS {
        assert!(!words.contains(&k), "`{k}` is a rule's keyword too");
        words.push(k);
        rules_of.push(Vec::new());
        scanner_of.push(Some(scanner));
    }
    // A DFA: the overlapping search over the whole text is the cost clean
    // text pays, and ~200 short keywords build in about a millisecond.
    let keywords = keywords::build(&words);
    Compiled {
        keywords,
        rules_of,
        scanner_of,
        regexes: RULES.iter().map(|_| OnceLock::new()).collect(),
    }
}

/// How `rule`'s regex spells `keyword`, if it spells it one way only: the
/// keyword occurs once in the pattern, as plain literal text, and neither
/// the pattern nor a name around it ignores case.
fn exact_case(rule: &Rule, keyword: &str) -> Option<&'static str> {
    let p = rule.pattern;
    if !rule.names.is_empty() || p.contains("(?i") {
        return None;
    }
    let lower = p.to_ascii_lowercase();
    let mut found = lower.match_indices(keyword).map(|(at, _)| at);
    let at = found.next()?;
    let literal = &p[at..at + keyword.len()];
    let plain = literal
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"_-~:/".contains(&b));
    let escaped = p[..at].ends_with('\\');
    (found.next().is_none() && plain && !escaped).then_some(literal)
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
    let (mut tf_hits, mut colons, mut begins, mut ends) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut last: Option<((usize, usize), (usize, usize))> = None;
    for m in keywords::hits(&c.keywords, bytes) {
        if let Some(scanner) = c.scanner_of[m.pattern] {
            let upper = || {
                bytes[m.start..m.end]
                    .iter()
                    .all(|b| !b.is_ascii_lowercase())
            };
            match scanner {
                Scanner::Tfstate => tf_hits.push(m.start),
                Scanner::Pgpass => colons.push(m.start),
                Scanner::PemBegin if upper() => begins.push(m.start),
                Scanner::PemEnd if upper() => ends.push(m.start),
                Scanner::PemBegin | Scanner::PemEnd => {}
            }
            continue;
        }
        let hit = &bytes[m.start..m.end];
        let mut rules = c.rules_of[m.pattern]
            .iter()
            .filter(|(_, exact)| exact.is_none_or(|e| e.as_bytes() == hit))
            .map(|&(r, _)| r)
            .peekable();
        if rules.peek().is_none() {
            continue;
        }
        // Hits on one line share its window.
        let w = match last {
            Some((line, w)) if m.start >= line.0 && m.end <= line.1 => w,
            _ => {
                let line = line_of(bytes, m.start, m.end);
                let w = window(bytes, line);
                last = Some((line, w));
                w
            }
        };
        for r in rules {
            let ws = &mut windows[r];
            match ws.last_mut() {
                Some(last) if w.0 <= last.1 => *last = (last.0.min(w.0), last.1.max(w.1)),
                _ => ws.push(w),
            }
        }
    }
    let mut found: Vec<Found> = pem::find_at(text, &begins, &ends)
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
    let structural = lines::pgpass_at(text, &colons)
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

/// The line a keyword at `start..end` sits on, without its line break: at
/// most `WINDOW_REACH` bytes on each side of the keyword before it settles
/// for whitespace (a minified file is one long line).
fn line_of(b: &[u8], start: usize, end: usize) -> (usize, usize) {
    (line_start(b, start), line_end(b, end))
}

/// Where the line holding `at` begins (after its `\n`), within reach.
fn line_start(b: &[u8], at: usize) -> usize {
    let floor = at.saturating_sub(WINDOW_REACH);
    match memchr::memrchr(b'\n', &b[floor..at]) {
        Some(p) => floor + p + 1,
        None if floor == 0 => 0,
        None => b[..floor]
            .iter()
            .rposition(u8::is_ascii_whitespace)
            .map_or(0, |p| p + 1),
    }
}

/// Where the line holding `at` ends (at its `\n`), within reach.
fn line_end(b: &[u8], at: usize) -> usize {
    let ceil = (at + WINDOW_REACH).min(b.len());
    match memchr::memchr(b'\n', &b[at..ceil]) {
        Some(p) => at + p,
        None if ceil == b.len() => ceil,
        None => b[ceil..]
            .iter()
            .position(u8::is_ascii_whitespace)
            .map_or(b.len(), |p| ceil + p),
    }
}

/// The text a rule needs to see around a keyword's line: the line before,
/// that line and the line after (a named value may sit on the line after
/// its name, and a keyword may end a line), each reaching at most
/// `WINDOW_REACH` bytes before it settles for whitespace. Windows start and
/// end at line breaks or whitespace, so `\b` and the token ends of the rules
/// see what they would see in the whole text.
fn window(b: &[u8], (s, e): (usize, usize)) -> (usize, usize) {
    // The line before, from the break that ends the one before it; the line
    // after, up to and over its break.
    let s = match s {
        0 => 0,
        s => match line_start(b, s - 1) {
            p if p > 0 && b[p - 1] == b'\n' => p - 1,
            p => p,
        },
    };
    let e = match e {
        e if e >= b.len() => e,
        e => match line_end(b, e + 1) {
            q if q < b.len() && b[q] == b'\n' => q + 1,
            q => q,
        },
    };
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
        let (s, e) = window(text.as_bytes(), line_of(text.as_bytes(), at, at + 3));
        assert_eq!(&text[s..e], "\nb\nkey\nc\n");
        // At the edges of the text.
        let (s, e) = window(b"key", line_of(b"key", 0, 3));
        assert_eq!((s, e), (0, 3));
    }

    #[test]
    fn keywords_keep_the_case_their_rule_needs() {
        let rule = |id: &str| RULES.iter().find(|r| r.id == id).unwrap();
        assert_eq!(exact_case(rule("twilio-api-key"), "sk"), Some("SK"));
        assert_eq!(exact_case(rule("telegram-bot-token"), ":a"), Some(":A"));
        assert_eq!(
            exact_case(rule("openai-api-key"), "t3blbkfj"),
            Some("T3BlbkFJ")
        );
        // Case-blind regexes and names, escaped or alternated literals: any case.
        assert_eq!(exact_case(rule("bearer-token"), "bearer"), None);
        assert_eq!(exact_case(rule("generic-secret"), "token"), None);
        assert_eq!(exact_case(rule("doppler-token"), "dp."), None);
        assert_eq!(exact_case(rule("stripe-access-token"), "sk_live"), None);
        // `ask` and `task` open no window for the Twilio rule; `SK…` does.
        let key = format!("SK{}", "0123456789abcdef".repeat(2));
        let (out, _) = redact(&format!("ask the task runner\n{key}\n"));
        assert_eq!(out, "ask the task runner\n[REDACTED:twilio_key]\n");
    }

    #[test]
    fn a_long_line_is_cut_at_whitespace_and_its_secret_still_found() {
        // Each side reaches over the keyword's line and one neighbour, no more.
        let pad = "word ".repeat(4000);
        let text = format!("{pad}token: {GHP} {pad}");
        let at = text.find("ghp_").unwrap();
        let (s, e) = window(text.as_bytes(), line_of(text.as_bytes(), at, at + 4));
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
    fn environment_values_are_replaced_whole_in_one_pass() {
        let r = Redactor::with_env([
            ("SHORT_TOKEN".to_string(), "abcdefgh12".to_string()),
            ("LONG_TOKEN".to_string(), "abcdefgh1234567".to_string()),
            ("OTHER_SECRET".to_string(), "zz-other-zz".to_string()),
        ]);
        let mut c = Counts::new();
        let out = r.redact("a abcdefgh1234567 b abcdefgh12 c zz-other-zz", &mut c);
        assert_eq!(
            out,
            "a [REDACTED:env:LONG_TOKEN] b [REDACTED:env:SHORT_TOKEN] c [REDACTED:env:OTHER_SECRET]"
        );
        assert_eq!(c.values().sum::<usize>(), 3, "{c:?}");
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
