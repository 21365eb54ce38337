//! Credential lines that carry no keyword: `.pgpass` entries
//! (`host:port:database:user:password`), and `.htpasswd` entries
//! (`user:<hash>`) for the stdin check.
//!
//! A `.pgpass` line has no word the keyword pre-filter could look for, so it
//! is found by its structure: the keyword pass reports each colon followed
//! by a port or a wildcard (`:5`, `:*`; in source code most colons are `::`
//! or `: `), and the whole line around it must then be exactly five
//! colon-separated fields of the right shapes.

use memchr::{memchr, memrchr};

use super::gates::{filler, placeholder, word_like};

/// Longest line looked at: a `.pgpass` line is short, and a long line
/// (minified code) should not be split into fields at every candidate.
const MAX_LINE: usize = 1024;

/// Byte ranges of the passwords of `.pgpass` lines in `text`.
#[cfg(test)]
pub fn pgpass(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let colons: Vec<usize> = memchr::memchr_iter(b':', b)
        .filter(|&i| {
            b.get(i + 1)
                .is_some_and(|c| c.is_ascii_digit() || *c == b'*')
        })
        .collect();
    pgpass_at(text, &colons)
}

/// Byte ranges of the passwords of `.pgpass` lines in `text`, given the
/// colons that a port or `*` follows (the keyword pass finds them: `:5`,
/// `:*`), in order.
pub fn pgpass_at(text: &str, colons: &[usize]) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    // A line is examined once, whichever of its colons comes first.
    let mut examined_to = 0;
    for &i in colons {
        if i < examined_to {
            continue;
        }
        let start = memrchr(b'\n', &b[..i]).map_or(0, |p| p + 1);
        let end = memchr(b'\n', &b[i..]).map_or(b.len(), |p| i + p);
        examined_to = end;
        if end - start > MAX_LINE {
            continue;
        }
        let found = pgpass_password(&text[start..end])
            .map(|(s, e)| (start + s, start + e))
            .or_else(|| quoted_entry(text, start, i, end));
        out.extend(found);
    }
    out
}

/// An entry quoted inside a longer line (`echo 'h:5432:db:u:pw' >>
/// ~/.pgpass`, a YAML list item): the quoted word around the colon at `at`.
fn quoted_entry(
    text: &str,
    line_start: usize,
    at: usize,
    line_end: usize,
) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let open = (line_start..at)
        .rev()
        .find(|&p| matches!(b[p], b'\'' | b'"' | b'`'))?;
    let quote = b[open];
    let close = (at..line_end).find(|&p| b[p] == quote)?;
    let inner = &text[open + 1..close];
    let (s, e) = pgpass_password(inner)?;
    Some((open + 1 + s, open + 1 + e))
}

/// Whether `line` is a `.pgpass` entry with a real password.
pub fn pgpass_line(line: &str) -> bool {
    pgpass_password(line).is_some()
}

/// The password of a `.pgpass` line (`host:port:database:user:password`,
/// `\:` and `\\` escaped), as a byte range of `line`. A diff marker or
/// indentation in front is allowed; whitespace inside a field is not, so a
/// compiler's `src/main.rs:12:5: error: …` is not an entry.
fn pgpass_password(line: &str) -> Option<(usize, usize)> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let lead = usize::from(line.starts_with(['+', '-']))
        + line
            .bytes()
            .skip(usize::from(line.starts_with(['+', '-'])))
            .take_while(|c| matches!(c, b' ' | b'\t'))
            .count();
    let b = line.as_bytes();
    // Field boundaries: unescaped colons.
    let mut cuts = Vec::with_capacity(4);
    let mut i = lead;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b':' => cuts.push(i),
            c if c.is_ascii_whitespace() || c.is_ascii_control() => return None,
            _ => {}
        }
        if cuts.len() > 4 {
            return None;
        }
        i += 1;
    }
    let [c1, c2, c3, c4] = cuts[..] else {
        return None;
    };
    let host = &line[lead..c1];
    let port = &line[c1 + 1..c2];
    let (db, user, password) = (&line[c2 + 1..c3], &line[c3 + 1..c4], &line[c4 + 1..]);
    let host_ok = !host.is_empty()
        && host
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"._-*/[]%\\:".contains(&c));
    let port_ok =
        port == "*" || (1..=5).contains(&port.len()) && port.bytes().all(|c| c.is_ascii_digit());
    let ok = host_ok
        && port_ok
        && !db.is_empty()
        && !user.is_empty()
        && !password.is_empty()
        && password.len() <= 256
        && !filler(password)
        && !placeholder(password)
        && !(word_like(password) && one_case(password));
    ok.then_some((c4 + 1, line.len()))
}

/// Lower- or upper-case letters only, besides other characters: the words
/// of a compiler's or a cache's colon line (`main.c:10:5:warning:unused`).
/// Mixed case is not a word there: random base64 without a digit can read
/// as camelCase (`f/URzyoctBrufjKt`, found by the property test), and the
/// line's own shape already says it is an entry.
fn one_case(s: &str) -> bool {
    !(s.bytes().any(|c| c.is_ascii_lowercase()) && s.bytes().any(|c| c.is_ascii_uppercase()))
}

/// Whether `line` is an `.htpasswd` entry: `user:` and a password hash of a
/// shape the `password-hash` rule knows (`$apr1$`, bcrypt, `{SHA}`, …).
pub fn htpasswd_line(line: &str) -> bool {
    let line = line.trim_end_matches('\r');
    let Some((user, hash)) = line.split_once(':') else {
        return false;
    };
    !user.is_empty()
        && !user.bytes().any(|c| c.is_ascii_whitespace())
        && super::whole_match("password-hash", hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passwords(text: &str) -> Vec<&str> {
        pgpass(text).into_iter().map(|(s, e)| &text[s..e]).collect()
    }

    #[test]
    fn pgpass_entries_give_their_password() {
        let text = "# ~/.pgpass\nhostname:port:database:username:password\n\
                    db.example.com:5432:appdb:app:Xk29vLq0pR\n\
                    *:*:*:postgres:s3cr3t!x\n\
                    /var/run/postgresql:5433:*:me:p\\:w0rd9\r\n\
                    +10.0.3.7:6432:orders:orders_rw:Zq8#mT2v\n";
        assert_eq!(
            passwords(text),
            ["Xk29vLq0pR", "s3cr3t!x", "p\\:w0rd9", "Zq8#mT2v"]
        );
        assert!(pgpass_line("localhost:5432:mydb:me:Tr0ub4dor"));
        // Quoted in a longer line.
        let text = "RUN echo '127.0.0.1:5432:test:tester:Hq7vT2xL' > ~/.pgpass\n  - \"h:5432:*:u:Wp4nZ8rQ\"";
        assert_eq!(passwords(text), ["Hq7vT2xL", "Wp4nZ8rQ"]);
    }

    #[test]
    fn other_colon_lines_are_not_entries() {
        for t in [
            "src/main.rs:12:5: error[E0425]: cannot find value `x`",
            "main.c:10:5:warning:unused",
            "fe80::1ff:fe23:4567:890a",
            "00:1a:2b:3c:4d:5e",
            "2026-05-01 10:00:00:123",
            "*:*:*:*:*",
            "localhost:5432:db:user:password",
            "localhost:5432:db:user:${PGPASSWORD}",
            "cache:1:users:profile:name",
            "let x = a::b::c::d::e;",
            "a:1:b:c:d:e",
            "echo 'not an entry' a:1:b:c:Xk29vLq0pR",
        ] {
            assert!(passwords(t).is_empty(), "{t}");
        }
    }
}
