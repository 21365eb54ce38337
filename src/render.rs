//! `Render`: how a result type shows itself to people (`--text`).
//! Each result type implements it beside its definition, so `output` prints any of them without knowing features.

/// Text for people; JSON comes from the type's `Serialize`.
pub trait Render {
    /// The full `--text` report, ending in a newline.
    fn text(&self) -> String;
}

/// The last `n` lines of `text` (the end of a failing check's output).
pub fn last_lines(text: &str, n: usize) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

/// Rows as aligned columns, two spaces apart, no trailing blanks.
pub fn table(rows: &[Vec<String>]) -> String {
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
    for r in rows {
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
