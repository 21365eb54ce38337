//! `Render`: how a result type shows itself to people (`--text`), and
//! `clean`, the one way text from outside baton reaches a terminal.
//!
//! A peer's model name, message, summary or warning, a task, a file name, a
//! log line: any of it may carry `ESC ] 0;…BEL` (the window title), `ESC ]
//! 52;…` (a clipboard write), `ESC [2J` or a bare `\r` that redraws what was
//! printed before it. Every printer for people (`output::text`, errors on
//! stderr, `watch`, `logs`, the live line, the TUI) passes its text through
//! `clean`, which shows each control character escaped (`\u{1b}`) instead
//! of sending it. JSON needs none of this: serde escapes control characters.

use std::borrow::Cow;

/// A command's result: text for people (JSON comes from the type's
/// `Serialize`) and the exit code it ends the command with, so a command
/// returns this value and `output::emit` prints it in the one place.
pub trait Render {
    /// The full `--text` report, ending in a newline.
    fn text(&self) -> String;
    /// The exit code of a command whose result this is (no default: a
    /// result that is a failure must say so).
    fn exit_code(&self) -> i32;
}

/// The last `n` lines of `text` (the end of a failing check's output).
pub fn last_lines(text: &str, n: usize) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

/// What a piece of text may do to the layout it is printed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One line (a table cell, a labelled field, a row of the TUI): a
    /// newline is shown as `\n` so it cannot start a line of its own, and a
    /// tab is a space.
    Line,
    /// Lines of their own (a peer's message, a whole report): newlines and
    /// tabs stay; `\r\n` is a newline.
    Block,
}

/// `s` with every control character shown escaped rather than sent: C0 but
/// for what `shape` keeps, DEL, C1, and the bidirectional overrides and
/// isolates that reorder what a line appears to say. Printable text, the
/// escapes included, passes unchanged, so cleaning twice changes nothing.
pub fn clean(s: &str, shape: Shape) -> Cow<'_, str> {
    if !s.chars().any(|c| needs_care(c, shape)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, shape) {
            ('\r', Shape::Block) if chars.peek() == Some(&'\n') => {}
            ('\n' | '\t', Shape::Block) => out.push(c),
            ('\t', Shape::Line) => out.push(' '),
            _ if needs_care(c, shape) => out.extend(c.escape_debug()),
            _ => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn needs_care(c: char, shape: Shape) -> bool {
    match c {
        '\n' | '\t' => shape == Shape::Line,
        // U+202A–U+202E embeddings and overrides, U+2066–U+2069 isolates.
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => c.is_control(),
    }
}

/// Rows as aligned columns, two spaces apart, no trailing blanks; each cell
/// is one line (`clean` with `Shape::Line`).
pub fn table(rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<Cow<str>>> = rows
        .iter()
        .map(|r| r.iter().map(|c| clean(c, Shape::Line)).collect())
        .collect();
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in &rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            line.push_str(cell);
            if c + 1 < r.len() {
                let pad = widths[c] - cell.chars().count() + 2;
                line.push_str(&" ".repeat(pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str = "a\u{1b}]0;owned\u{7}b\u{1b}]52;c;Y2F0\u{7}\u{1b}[2J\rc\u{9b}31m\u{7f}\0";

    #[test]
    fn every_control_character_is_shown_escaped_never_sent() {
        for shape in [Shape::Line, Shape::Block] {
            let c = clean(HOSTILE, shape);
            assert!(!c.chars().any(char::is_control), "{shape:?}: {c:?}");
            assert_eq!(
                c,
                r"a\u{1b}]0;owned\u{7}b\u{1b}]52;c;Y2F0\u{7}\u{1b}[2J\rc\u{9b}31m\u{7f}\0"
            );
        }
    }

    #[test]
    fn a_block_keeps_its_lines_and_tabs_a_line_does_not() {
        assert_eq!(
            clean("one\r\ntwo\n\tthree\r", Shape::Block),
            "one\ntwo\n\tthree\\r"
        );
        assert_eq!(clean("one\ntwo\tthree", Shape::Line), r"one\ntwo three");
    }

    #[test]
    fn bidirectional_overrides_are_escaped_and_plain_text_is_borrowed() {
        assert_eq!(clean("abc\u{202e}fed", Shape::Block), r"abc\u{202e}fed");
        let plain = "naïve — 日本語 ✓";
        assert!(matches!(clean(plain, Shape::Line), Cow::Borrowed(p) if p == plain));
        let once = clean(HOSTILE, Shape::Line).into_owned();
        assert_eq!(
            clean(&once, Shape::Block),
            once,
            "cleaning twice changes nothing"
        );
    }

    #[test]
    fn a_table_cell_stays_on_its_row() {
        let rows = vec![
            vec!["MODEL".to_string(), "RUNS".to_string()],
            vec!["x\n\u{1b}[2Jy".to_string(), "1".to_string()],
        ];
        assert_eq!(table(&rows), "MODEL          RUNS\nx\\n\\u{1b}[2Jy  1\n");
    }
}
