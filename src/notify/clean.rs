//! A peer's text made safe to show in a notification: the terminal
//! sequences and control characters that could drive a terminal or hide
//! text gone, whitespace collapsed, the length capped, secrets redacted.
//!
//! Order matters: sequences are stripped first (so a secret split by an
//! escape is whole again), redaction runs over the whole text (so the cap
//! can never cut a secret in half and leave its head behind), and the cap
//! comes last, at a character boundary.

use std::sync::OnceLock;

use crate::redact::{Counts, Redactor};

/// The most characters a summary keeps, `…` included.
pub const MAX_CHARS: usize = 300;

/// See the module comment.
pub fn clean(text: &str) -> String {
    static REDACTOR: OnceLock<Redactor> = OnceLock::new();
    let stripped = strip(text);
    let redacted = REDACTOR
        .get_or_init(Redactor::from_env)
        .redact(&stripped, &mut Counts::default());
    cap(&collapse(&redacted), MAX_CHARS)
}

/// Invisible characters that reorder or hide text (bidi controls,
/// zero-width characters, the byte-order mark).
fn invisible(c: char) -> bool {
    matches!(c,
        '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

/// Escape sequences removed, whitespace controls made spaces, every other
/// control or invisible character removed.
fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut it = text.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\u{1b}' => match it.next() {
                // CSI: parameters and intermediates, then one final byte.
                Some('[') => {
                    for d in it.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&d) {
                            break;
                        }
                    }
                }
                // OSC, DCS, SOS, PM, APC: a string up to BEL or ST.
                Some(']' | 'P' | 'X' | '^' | '_') => skip_string(&mut it),
                // Two- or three-byte sequences (ESC ( B, ESC 7, ESC =…).
                Some(d) if ('\u{20}'..='\u{2f}').contains(&d) => {
                    it.next();
                }
                _ => {}
            },
            '\u{9b}' => {
                for d in it.by_ref() {
                    if ('\u{40}'..='\u{7e}').contains(&d) {
                        break;
                    }
                }
            }
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(&mut it),
            c if c.is_whitespace() => out.push(' '),
            c if c.is_control() || invisible(c) => {}
            c => out.push(c),
        }
    }
    out
}

/// Past a control string's terminator: BEL, ESC \ or the C1 ST (or the end:
/// an unterminated string is swallowed, as a terminal would).
fn skip_string(it: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(d) = it.next() {
        match d {
            '\u{7}' | '\u{9c}' => return,
            '\u{1b}' => {
                if it.peek() == Some(&'\\') {
                    it.next();
                }
                return;
            }
            _ => {}
        }
    }
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn cap(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.truncate(out.trim_end().len());
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_and_controls_are_removed_and_whitespace_collapsed() {
        let cases = [
            ("plain text", "plain text"),
            ("a\u{1b}[2Jb\u{1b}[1;31mred\u{1b}[0m", "abred"),
            ("t\u{1b}]0;title\u{7}x", "tx"),
            ("t\u{1b}]8;;http://e\u{1b}\\link\u{1b}]8;;\u{1b}\\", "tlink"),
            ("bell\u{7} del\u{7f} nul\0", "bell del nul"),
            ("c1\u{85}\u{9b}31mx\u{9d}0;t\u{9c}y", "c1 xy"),
            ("  a \r\n\t b\u{b}\u{c}c  ", "a b c"),
            ("evil\u{202e}txt.exe\u{2066}\u{200b}", "eviltxt.exe"),
            ("esc\u{1b}(Bcharset \u{1b}7saved", "esccharset saved"),
            ("open osc \u{1b}]0;never ends", "open osc"),
        ];
        for (input, want) in cases {
            assert_eq!(clean(input), want, "{input:?}");
        }
    }

    #[test]
    fn long_text_is_capped_at_a_character_boundary() {
        let long = "é".repeat(1000);
        let c = clean(&long);
        assert_eq!(c.chars().count(), MAX_CHARS);
        assert!(c.ends_with('…'));
        let exact = "x".repeat(MAX_CHARS);
        assert_eq!(clean(&exact), exact);
    }

    #[test]
    fn secrets_are_redacted_even_when_the_cap_would_cut_them() {
        let key = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefGHIJ";
        let c = clean(&format!("done; key={key}"));
        assert!(!c.contains("AbCdEfGhIjKl"), "{c}");
        assert!(c.contains("REDACTED"), "{c}");
        // A secret that starts just before the cap is not half shown.
        let pad = "x ".repeat((MAX_CHARS - 10) / 2);
        let c = clean(&format!("{pad}{key}"));
        assert!(!c.contains("sk-ant-api03-Ab"), "{c}");
        // An escape sequence inside it does not hide it from redaction.
        let split = format!("{}\u{1b}[0m{}", &key[..20], &key[20..]);
        assert!(!clean(&split).contains("AbCdEfGhIjKl"));
    }
}
