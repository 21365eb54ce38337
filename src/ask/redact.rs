//! Secret-looking strings are replaced by `[REDACTED:<kind>]` before a
//! packet leaves baton, and counted per kind so the result can say what was
//! removed.
//!
//! Two sources of truth: the shapes of well-known credentials (API keys,
//! tokens, private-key blocks), matched by small hand-written scanners, and
//! the values of this process's environment variables whose names say they
//! hold one (KEY, TOKEN, SECRET, PASSWORD). The scanners insist on a word
//! boundary before a prefix and on the digit/letter mix of random tokens, so
//! prose such as `task-force-management` or `the bearer of bad news` passes
//! untouched (see the table test of look-alikes).

use std::collections::BTreeMap;

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

/// A matcher: given the text and a position that is a word start, the end of
/// the secret found there and the byte range to replace.
type Rule = fn(&str, usize) -> Option<Found>;

struct Found {
    kind: &'static str,
    /// Replaced range (may start after `at`, e.g. the token after `Bearer `).
    start: usize,
    end: usize,
}

/// Tried in order at every word start; the first match wins.
const RULES: &[Rule] = &[
    private_key,
    bearer,
    aws_secret,
    jwt,
    anthropic_key,
    sk_key,
    github_token,
    github_pat,
    slack_token,
    aws_access_key,
    google_api_key,
];

fn scan(text: &str, counts: &mut Counts) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let word_start = i == 0 || !is_word(bytes[i - 1]);
        if word_start
            && (bytes[i].is_ascii_alphabetic() || bytes[i] == b'-')
            && let Some(f) = RULES.iter().find_map(|r| r(text, i))
        {
            out.push_str(&text[copied..f.start]);
            out.push_str("[REDACTED:");
            out.push_str(f.kind);
            out.push(']');
            *counts.entry(f.kind.to_string()).or_default() += 1;
            copied = f.end;
            i = f.end;
            continue;
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    out
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn starts_with_ci(text: &str, at: usize, prefix: &str) -> bool {
    text.as_bytes()
        .get(at..at + prefix.len())
        .is_some_and(|s| s.eq_ignore_ascii_case(prefix.as_bytes()))
}

/// Length of the run of bytes from `at` that satisfy `ok`.
fn run(text: &str, at: usize, ok: impl Fn(u8) -> bool) -> usize {
    text.as_bytes()[at.min(text.len())..]
        .iter()
        .take_while(|b| ok(**b))
        .count()
}

/// Random tokens mix letters and digits; words and kebab-case names do not.
fn looks_random(s: &[u8]) -> bool {
    s.iter().any(u8::is_ascii_digit) && s.iter().any(u8::is_ascii_alphabetic)
}

/// The secret is `prefix` + a body of `min..` bytes from `charset`, ending at
/// a word boundary.
fn prefixed(
    text: &str,
    at: usize,
    prefixes: &[&str],
    charset: fn(u8) -> bool,
    min: usize,
    random: bool,
    kind: &'static str,
) -> Option<Found> {
    let p = prefixes.iter().find(|p| text[at..].starts_with(**p))?;
    let body_at = at + p.len();
    let n = run(text, body_at, charset);
    let body = &text.as_bytes()[body_at..body_at + n];
    if n < min || (random && !looks_random(body)) {
        return None;
    }
    Some(Found {
        kind,
        start: at,
        end: body_at + n,
    })
}

fn key_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

fn alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

fn anthropic_key(t: &str, at: usize) -> Option<Found> {
    prefixed(t, at, &["sk-ant-"], key_char, 20, true, "anthropic_api_key")
}

/// OpenAI and the many providers that copied its `sk-` shape.
fn sk_key(t: &str, at: usize) -> Option<Found> {
    prefixed(t, at, &["sk-"], key_char, 20, true, "api_key")
}

fn github_token(t: &str, at: usize) -> Option<Found> {
    prefixed(
        t,
        at,
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        alnum,
        30,
        true,
        "github_token",
    )
}

fn github_pat(t: &str, at: usize) -> Option<Found> {
    prefixed(
        t,
        at,
        &["github_pat_"],
        |b| alnum(b) || b == b'_',
        30,
        true,
        "github_token",
    )
}

fn slack_token(t: &str, at: usize) -> Option<Found> {
    prefixed(
        t,
        at,
        &["xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-"],
        |b| alnum(b) || b == b'-',
        10,
        true,
        "slack_token",
    )
}

fn google_api_key(t: &str, at: usize) -> Option<Found> {
    prefixed(t, at, &["AIza"], key_char, 35, false, "google_api_key")
}

/// AWS access key ids: a fixed prefix and exactly 16 upper-case characters.
fn aws_access_key(t: &str, at: usize) -> Option<Found> {
    const PREFIXES: [&str; 8] = [
        "AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA",
    ];
    let p = PREFIXES.iter().find(|p| t[at..].starts_with(**p))?;
    let body_at = at + p.len();
    let n = run(t, body_at, |b| b.is_ascii_uppercase() || b.is_ascii_digit());
    let next_is_word = t.as_bytes().get(body_at + n).is_some_and(|b| is_word(*b));
    (n == 16 && !next_is_word).then_some(Found {
        kind: "aws_access_key_id",
        start: at,
        end: body_at + n,
    })
}

/// `aws_secret_access_key = <40 base64 chars>` in config files, env files and
/// code: the 40-character value alone is too common a shape to match bare.
fn aws_secret(t: &str, at: usize) -> Option<Found> {
    const NAME: &str = "aws_secret_access_key";
    if !starts_with_ci(t, at, NAME) {
        return None;
    }
    let b = t.as_bytes();
    let mut i = at + NAME.len();
    i += run(t, i, |c| c == b'"' || c == b'\'' || c == b' ' || c == b'\t');
    if !matches!(b.get(i), Some(b'=' | b':')) {
        return None;
    }
    i += 1;
    i += run(t, i, |c| c == b'"' || c == b'\'' || c == b' ' || c == b'\t');
    let n = run(t, i, |c| {
        c.is_ascii_alphanumeric() || c == b'/' || c == b'+'
    });
    (n == 40).then_some(Found {
        kind: "aws_secret_key",
        start: i,
        end: i + n,
    })
}

/// `Bearer <token>`: the token goes, the word stays so the text still reads.
fn bearer(t: &str, at: usize) -> Option<Found> {
    if !starts_with_ci(t, at, "bearer") {
        return None;
    }
    let sp = run(t, at + 6, |c| c == b' ' || c == b'\t');
    if sp == 0 {
        return None;
    }
    let start = at + 6 + sp;
    let n = run(t, start, |c| {
        c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'~' | b'+' | b'/' | b'-' | b'=')
    });
    let token = &t.as_bytes()[start..start + n];
    (n >= 16 && looks_random(token)).then_some(Found {
        kind: "bearer_token",
        start,
        end: start + n,
    })
}

/// `eyJ…` header `.` `eyJ…` payload `.` signature (possibly empty).
fn jwt(t: &str, at: usize) -> Option<Found> {
    let b64 = |c: u8| c.is_ascii_alphanumeric() || c == b'-' || c == b'_';
    let b = t.as_bytes();
    if !t[at..].starts_with("eyJ") {
        return None;
    }
    let h = run(t, at, b64);
    if h < 10 || b.get(at + h) != Some(&b'.') {
        return None;
    }
    let p_at = at + h + 1;
    if !t[p_at..].starts_with("eyJ") {
        return None;
    }
    let p = run(t, p_at, b64);
    if p < 10 || b.get(p_at + p) != Some(&b'.') {
        return None;
    }
    let s_at = p_at + p + 1;
    let s = run(t, s_at, b64);
    Some(Found {
        kind: "jwt",
        start: at,
        end: s_at + s,
    })
}

/// A PEM private-key block, whatever its algorithm. Without an END line the
/// rest of the text goes too: a cut-off key is still a key.
fn private_key(t: &str, at: usize) -> Option<Found> {
    const BEGIN: &str = "-----BEGIN ";
    if !t[at..].starts_with(BEGIN) {
        return None;
    }
    let head_end =
        at + BEGIN.len() + run(t, at + BEGIN.len(), |c| c.is_ascii_uppercase() || c == b' ');
    if !t[at..head_end].ends_with("PRIVATE KEY") || !t[head_end..].starts_with("-----") {
        return None;
    }
    let body = head_end + 5;
    let end = match t[body..].find("-----END ") {
        Some(rel) => {
            let e = body + rel + "-----END ".len();
            match t[e..].find("-----") {
                Some(r) => e + r + 5,
                None => t.len(),
            }
        }
        None => t.len(),
    };
    Some(Found {
        kind: "private_key",
        start: at,
        end,
    })
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
