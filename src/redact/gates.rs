//! The gates a regex match must pass to count as a secret: entropy,
//! placeholders, filler, and for free-form values, not reading as words.

use super::rules::{Check, Rule};

/// Whether a regex match is a secret by the rule's gates.
pub(super) fn accept<'a>(rule: &Rule, s: &str, ident: impl FnOnce() -> &'a str) -> bool {
    if filler(s) || entropy(s.as_bytes()) < rule.entropy {
        return false;
    }
    match rule.check {
        Check::Plain => true,
        Check::DigitLetter => {
            s.bytes().any(|b| b.is_ascii_digit()) && s.bytes().any(|b| b.is_ascii_alphabetic())
        }
        Check::Placeholder => !placeholder(s),
        Check::Value => {
            !placeholder(s)
                && !word_like(s)
                && entropy(s.as_bytes()) >= value_entropy(s)
                && !denied_name(ident())
        }
    }
}

/// Shannon entropy in bits per byte.
fn entropy(s: &[u8]) -> f32 {
    if s.is_empty() {
        return 0.0;
    }
    let mut freq = [0u32; 256];
    for &b in s {
        freq[b as usize] += 1;
    }
    let n = s.len() as f32;
    freq.iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f32 / n;
            -p * p.log2()
        })
        .sum()
}

/// A free-form value must be about as varied as random text of its length
/// can be: 8 random characters reach about 2.75 bits, 16 about 3.5. Hex
/// has 16 symbols only: 24 random hex digits fall under 3 bits often
/// enough for the property test to find one (`b60d70c656a088cb0b066601`,
/// 2.93 bits), so hex with digits and letters needs less.
fn value_entropy(s: &str) -> f32 {
    let bar = ((s.len() as f32).log2() - 0.6).clamp(2.0, 3.0);
    let hex = s.len() >= 16
        && s.bytes().all(|b| b.is_ascii_hexdigit())
        && s.bytes().any(|b| b.is_ascii_digit())
        && s.bytes().any(|b| b.is_ascii_alphabetic());
    if hex { bar.min(2.5) } else { bar }
}

/// Structural non-secrets in any rule: `xxxx…`, `****`, one repeated byte,
/// already-redacted text.
pub(super) fn filler(s: &str) -> bool {
    let b = s.as_bytes();
    let top = {
        let mut freq = [0u32; 256];
        b.iter().for_each(|&c| freq[c as usize] += 1);
        freq.into_iter().max().unwrap_or(0) as usize
    };
    s.contains("REDACTED")
        || top * 2 > b.len()
        || ["xxxxxx", "XXXXXX", "******", "......", "000000"]
            .iter()
            .any(|p| s.contains(p))
}

/// Placeholders people write where a secret goes.
pub(super) fn placeholder(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    const WORDS: &[&str] = &[
        "example",
        "sample",
        "dummy",
        "placeholder",
        "changeme",
        "change_me",
        "change-me",
        "your_",
        "your-",
        "yourkey",
        "yourtoken",
        "yoursecret",
        "yourpass",
        "replace",
        "insert",
        "redacted",
        "<",
        ">",
        "${",
        "{{",
        "}}",
        "$(",
        "%(",
        "todo",
        "fixme",
    ];
    const WHOLE: &[&str] = &[
        "password",
        "passwd",
        "secret",
        "token",
        "pass",
        "null",
        "none",
        "nil",
        "true",
        "false",
        "undefined",
        "empty",
        "admin",
        "root",
        "guest",
        "test",
        "user",
    ];
    WORDS.iter().any(|w| l.contains(w))
        || WHOLE.contains(&l.as_str())
        || (l.starts_with('$') || l.starts_with('%') || l.starts_with('@'))
            && l[1..]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'{' | b'}' | b'%' | b'@'))
}

/// Identifiers and words (`getToken`, `config.api_key`, `ctrl+shift+p`,
/// `secrets.GITHUB_TOKEN`) rather than random text: no digits, and every
/// piece is lower, UPPER, Capitalised or camelCase. Random mixed-case
/// letters fail the camelCase test (random humps of one letter); a long
/// one-case piece must also have the vowels of words (a quarter or more).
pub(super) fn word_like(s: &str) -> bool {
    // Digits, the symbols of passwords, base64 padding: not a name.
    if s.bytes()
        .any(|b| b.is_ascii_digit() || b"!@#%^*?~".contains(&b))
        || s.get(1..).is_some_and(|t| t.contains('$'))
        || s.ends_with('=')
    {
        return false;
    }
    s.split(|c: char| !c.is_ascii_alphabetic()).all(|piece| {
        let one_case = piece.bytes().all(|b| b.is_ascii_lowercase())
            || piece.bytes().all(|b| b.is_ascii_uppercase());
        let vowels = piece
            .bytes()
            .filter(|b| b"aeiouyAEIOUY".contains(b))
            .count();
        if one_case {
            piece.len() < 12 || vowels * 4 >= piece.len()
        } else {
            camel(piece)
        }
    })
}

fn vowels(hump: &[u8]) -> usize {
    hump.iter().filter(|c| b"aeiouy".contains(c)).count()
}

/// `someWords`, `HTTPServer`, `getURL`: at most one acronym (a run of
/// capitals), every other capital starts a hump of lower case that reads
/// like a word (two or more letters with a vowel). Random mixed case has
/// many capital runs, one-letter humps and humps without vowels.
fn camel(piece: &str) -> bool {
    let b = piece.as_bytes();
    let mut acronyms = 0;
    let mut i = 0;
    while i < b.len() {
        let up = b[i..].iter().take_while(|c| c.is_ascii_uppercase()).count();
        let low = b[i + up..]
            .iter()
            .take_while(|c| c.is_ascii_lowercase())
            .count();
        let hump = &b[i + up..i + up + low];
        let at_end = i + up + low == b.len();
        acronyms += usize::from(up >= 2);
        let vowel = vowels(hump) > 0;
        let wordy = match low {
            0 => true,
            // A long hump needs the vowels of a word, as a one-case piece
            // does: `csjegFVWZN…` is random letters, `getResponse` is not.
            5.. if vowels(hump) * 4 < low => false,
            _ if i == 0 && up == 0 => true,
            // `getIDs`, `URLs`; not `QXMYWl`.
            1 => at_end && (up == 1 || hump == b"s"),
            // After an acronym a word follows (`HTTPServer`), not `BMBuj`.
            2 if up >= 2 => false,
            _ => vowel,
        };
        if !wordy || acronyms > 1 {
            return false;
        }
        i += up + low;
    }
    true
}

/// The identifier a name match sits in (`githubToken`, `AWS_SECRET_ACCESS_KEY`).
pub(super) fn identifier_at(text: &str, at: usize) -> &str {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.');
    let mut s = at;
    while s > 0 && ident(b[s - 1]) {
        s -= 1;
    }
    let mut e = at;
    while e < b.len() && ident(b[e]) {
        e += 1;
    }
    &text[s..e]
}

/// Names that contain a secret word but hold no secret: gitleaks' generic
/// allow-list, in spirit.
fn denied_name(ident: &str) -> bool {
    let l = ident.to_ascii_lowercase();
    const PARTS: &[&str] = &[
        "public",
        "primary",
        "foreign",
        "partition",
        "sort_key",
        "sortkey",
        "cache",
        "keyboard",
        "keyword",
        "keycode",
        "keypress",
        "keystroke",
        "hotkey",
        "monkey",
        "turkey",
        "donkey",
        "author",
        "tokeniz",
        "csrf",
        "idempotency",
        "keyspace",
        "max_token",
        "maxtoken",
    ];
    const ENDS: &[&str] = &[
        "id",
        "ids",
        "name",
        "names",
        "type",
        "url",
        "uri",
        "endpoint",
        "path",
        "file",
        "dir",
        "length",
        "len",
        "size",
        "count",
        "version",
        "format",
        "policy",
        "prefix",
        "header",
        "field",
        "mode",
        "kind",
        "expiry",
        "expires",
        "expires_in",
        "ttl",
        "timeout",
        "hint",
        "label",
        "regex",
        "pattern",
        "env",
        "var",
        "usage",
        "limit",
    ];
    let last = l
        .rsplit(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or("");
    // camelCase tail: `apiKeyId` ends in `Id`.
    let camel_tail = ident
        .rfind(|c: char| c.is_ascii_uppercase())
        .map(|i| ident[i..].to_ascii_lowercase())
        .unwrap_or_default();
    PARTS.iter().any(|p| l.contains(p)) || ENDS.iter().any(|e| last == *e || camel_tail == *e)
}
