//! Blindness, for whoever reads several peers' work without knowing whose
//! it is (a council's critics and chair, a fan-out's judges): identities
//! stripped (and counted); the labels and the seeded shuffle they are drawn
//! by are `shuffle`'s (re-exported here).

// Bytes regexes: the crate is built without Unicode tables, and every
// pattern here is ASCII; they run over the folded text, whose matches are
// mapped back to whole characters of the original.
use regex::bytes::Regex;

pub use super::shuffle::{Rng, label};

/// Removes what could identify an author: agent, model, vendor and CLI
/// names, self-introductions, session ids and config paths.
///
/// Everything is matched in a folded copy of the text (see `Folded`), so a
/// name written in fullwidth letters, with a zero-width space inside or with
/// Cyrillic look-alikes is still the name; a replacement covers exactly the
/// original characters of what matched, and the rest is kept as written.
pub struct Stripper {
    /// Over the folded text: self-introductions, config paths, session ids,
    /// names of more than one word, and this group's own model ids.
    rules: Vec<Regex>,
    /// What `spaced` looks for besides `NAMES` in a name written apart:
    /// the names of more than one word and this group's model ids, as
    /// their letters and digits, lower case.
    literals: Vec<String>,
}

impl Stripper {
    /// `extra`: names only this group knows (its members' or candidates' model ids).
    pub fn new(extra: &[String]) -> Stripper {
        let mut rules = vec![
            // Self-introductions first, whole, so "As Claude, I" loses the clause.
            Regex::new(r"(?i-u)\b(?:i am|i'm|as) (?:an? )?(?:ai|assistant|language model|model)\b[a-z0-9 '\-]*")
                .expect("rule"),
            // Config and state paths: ~/.codex/…, /home/u/.claude/…, .pi/agent/…
            Regex::new(r"(?-u)(?:~|/[A-Za-z0-9_.\-/]*)?/?\.(?:codex|claude|pi|gemini|qwen|config/opencode)(?:/[A-Za-z0-9_.\-/]*)?")
                .expect("rule"),
            // Session and thread ids (uuids).
            Regex::new(r"(?i-u)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
                .expect("rule"),
            // Names whose parts are ordinary words alone (`pi`, `ai`).
            Regex::new(r"(?i-u)\b(?:z\.ai|pi[- ]?coding[- ]?agent)\b").expect("rule"),
        ];
        // The letters and digits of each model id, for `spaced`.
        let extra_letters: Vec<String> = ["picodingagent"]
            .into_iter()
            .map(str::to_string)
            .chain(extra.iter().map(|m| {
                m.chars()
                    .filter(char::is_ascii_alphanumeric)
                    .collect::<String>()
                    .to_ascii_lowercase()
            }))
            .filter(|m| m.len() > 2)
            .collect();
        // A member's model id, with or without its separators
        // (`my-model-x`, `MyModelX`).
        let extra: Vec<String> = extra
            .iter()
            .filter(|m| m.len() > 2)
            .map(|m| {
                m.split(|c: char| !c.is_ascii_alphanumeric())
                    .filter(|p| !p.is_empty())
                    .map(regex::escape)
                    .collect::<Vec<_>>()
                    .join(r"[-_. /:]?")
            })
            .filter(|p| !p.is_empty())
            .collect();
        if !extra.is_empty() {
            rules.push(
                Regex::new(&format!(r"(?i-u)\b(?:{})\b", extra.join("|"))).expect("the model rule"),
            );
        }
        Stripper {
            rules,
            literals: extra_letters,
        }
    }

    /// The text with every match replaced by `[name removed]`, and how many.
    pub fn strip(&self, text: &str) -> (String, usize) {
        let folded = Folded::of(text);
        let t = folded.text.as_bytes();
        let mut spans: Vec<(usize, usize)> = names(t);
        for r in &self.rules {
            spans.extend(r.find_iter(t).map(|m| (m.start(), m.end())));
        }
        spans.extend(spaced(t, &self.literals));
        // Back to the original's bytes, merged where they overlap.
        let mut orig: Vec<(usize, usize)> = spans
            .into_iter()
            .filter(|(s, e)| e > s)
            .map(|(s, e)| (folded.src[s].0, folded.src[e - 1].1))
            .collect();
        orig.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(orig.len());
        for (s, e) in orig {
            match merged.last_mut() {
                Some(last) if s < last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        for &(s, e) in &merged {
            out.push_str(&text[copied..s]);
            out.push_str("[name removed]");
            copied = e;
        }
        out.push_str(&text[copied..]);
        (out, merged.len())
    }
}

/// A copy of a text for matching names: compatibility forms folded (NFKD:
/// fullwidth `Ｃ`, mathematical `𝐂`, circled `Ⓒ` are `C`), combining marks
/// dropped (`Cláude`), invisible characters dropped (zero-width space and
/// joiners, soft hyphen, bidi controls, variation selectors), and Cyrillic
/// and Greek letters that look Latin mapped to the letter they imitate.
/// `src[i]` is the byte range of the original character that byte `i` of
/// `text` came from.
struct Folded {
    text: String,
    src: Vec<(usize, usize)>,
}

impl Folded {
    fn of(text: &str) -> Folded {
        let mut out = String::with_capacity(text.len());
        let mut src = Vec::with_capacity(text.len());
        for (i, c) in text.char_indices() {
            let from = (i, i + c.len_utf8());
            if c.is_ascii() {
                out.push(c);
                src.push(from);
                continue;
            }
            if invisible(c) {
                continue;
            }
            unicode_normalization::char::decompose_compatible(c, |d| {
                if unicode_normalization::char::is_combining_mark(d) {
                    return;
                }
                let before = out.len();
                out.push(look_alike(d).unwrap_or(d));
                src.extend(std::iter::repeat_n(from, out.len() - before));
            });
        }
        Folded { text: out, src }
    }
}

/// Unicode's default-ignorable code points: drawn as nothing, so a name
/// with one inside reads as the name.
fn invisible(c: char) -> bool {
    matches!(c as u32,
        0x00AD | 0x034F | 0x061C | 0x115F..=0x1160 | 0x17B4..=0x17B5 | 0x180B..=0x180F
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0x3164 | 0xFE00..=0xFE0F
        | 0xFEFF | 0xFFA0 | 0xFFF0..=0xFFF8 | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A
        | 0xE0000..=0xE0FFF)
}

/// The Latin letter a Cyrillic, Greek or other letter is drawn like, for
/// the letters that are drawn the same (Unicode's confusables, the part that
/// spells names): `LOOK_ALIKES[i]` looks like `LATIN[i]`.
fn look_alike(c: char) -> Option<char> {
    // Cyrillic lower and upper case, Greek lower and upper case, then
    // dotless i and j, Latin alpha, iota and script g, Armenian o and u.
    const LOOK_ALIKES: &str = "аеѕіјкорсухһԁԛԝӏ\
                               АВЕКМНОРСТХУЅІЈԚԜӀҺ\
                               αορικνυεχγϲϳ\
                               ΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹ\
                               ıȷɑɩɡօս";
    const LATIN: &[u8] = b"aesijkopcyxhdqwlABEKMHOPCTXYSIJQWIHaopikvuexycjABEZHIKMNOPTYXCijaigou";
    LOOK_ALIKES
        .chars()
        .position(|l| l == c)
        .map(|i| char::from(LATIN[i]))
}

/// Names that identify an agent, its model or its vendor. A word made only
/// of these, version numbers and `AFFIXES` is a name however it is cased or
/// joined (`ClaudeCode`, `claudecode`, `OpenAIcodex`, `qwen3`), and so is
/// one that is a hump of a camelCase word (`useClaudeApi`).
const NAMES: &[&str] = &[
    "openai",
    "anthropic",
    "google",
    "deepmind",
    "alibaba",
    "zhipu",
    "zai",
    "codex",
    "claude",
    "gemini",
    "antigravity",
    "agy",
    "opencode",
    "qwen",
    "glm",
    "gpt",
    "chatgpt",
    "opus",
    "sonnet",
    "haiku",
    "o1",
    "o3",
    "o4",
];

/// Words that complete a name (`Claude Code`, `gemini-cli`, `qwen3-coder`,
/// `gpt-4o-mini`) but are not one alone.
const AFFIXES: &[&str] = &[
    "code", "coder", "cli", "agent", "mini", "nano", "max", "pro", "plus", "turbo", "flash",
    "lite", "preview", "latest", "instruct", "oss",
];

/// What a piece of a word is.
#[derive(Clone, Copy, PartialEq)]
enum Piece {
    Name,
    /// An affix or a version number (`3`, `4o`, `120b`).
    Tail,
    Other,
}

/// Longest word segmented: longer runs of letters are not names.
const MAX_WORD: usize = 64;

/// Byte ranges of names in `t` (folded, so ASCII wherever a name is).
fn names(t: &[u8]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    // A run that ended at the end of its word, which a following word of
    // tails (`-cli`, ` 3.5`, `/claude`) extends.
    let mut open: Option<usize> = None;
    while i < t.len() {
        if !t[i].is_ascii_alphanumeric() {
            i += 1;
            continue;
        }
        let start = i;
        while i < t.len() && t[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let word = &t[start..i];
        let pieces = segment(word, &|_| false, MAX_WORD);
        let joined = open
            .is_some_and(|o| o + 1 == start && matches!(t[o], b'-' | b'_' | b'.' | b' ' | b'/'))
            && pieces.iter().all(|p| p.2 != Piece::Other);
        if joined {
            out.last_mut().expect("an open run").1 = i;
            open = Some(i);
            continue;
        }
        open = None;
        for (s, e) in named(&pieces) {
            out.push((start + s, start + e));
            if start + e == i {
                open = Some(i);
            }
        }
    }
    out
}

/// The runs of name and tail pieces that hold a name, as byte ranges of
/// the word the pieces split.
fn named(pieces: &[(usize, usize, Piece)]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < pieces.len() {
        if pieces[k].2 == Piece::Other {
            k += 1;
            continue;
        }
        let mut j = k;
        let mut has_name = false;
        while j < pieces.len() && pieces[j].2 != Piece::Other {
            has_name |= pieces[j].2 == Piece::Name;
            j += 1;
        }
        if has_name {
            out.push((pieces[k].0, pieces[j - 1].1));
        }
        k = j;
    }
    out
}

/// The most bytes between two pieces of a name written apart (a separator
/// of a few characters, some of them not ASCII: `C · l · a`).
const MAX_GAP: usize = 8;

/// Pieces of a run looked at together; runs longer than this are looked at
/// in overlapping windows (no name is longer than `OVERLAP` pieces).
const WINDOW: usize = 256;
const OVERLAP: usize = 64;

/// Names written apart (`C.l.a.u.d.e`, `O p e n A I   C o d e x`,
/// `c-l-a-u-d-e`): in a run of three or more short pieces (one or two
/// letters or digits) kept apart only by separators of at most `MAX_GAP`
/// bytes on one line, the pieces are joined into one word whose every
/// piece boundary is a boundary of its segments, and that word is
/// segmented as any other (`NAMES`, with their tails), besides `literals`
/// starting at a piece boundary. A name found there spans two pieces or
/// more: one piece is a word of its own, which `names` judges. Prose is
/// rarely three words of one or two letters in a row, so what reads as
/// words (`open AI`, `a b c`) is left as written.
fn spaced(t: &[u8], literals: &[String]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for run in runs(t) {
        let mut from = 0;
        loop {
            let to = (from + WINDOW).min(run.len());
            out.extend(spaced_in(t, &run[from..to], literals));
            if to == run.len() {
                break;
            }
            from = to - OVERLAP;
        }
    }
    out
}

/// `spaced` for the pieces `run` (byte ranges of `t`).
fn spaced_in(t: &[u8], run: &[(usize, usize)], literals: &[String]) -> Vec<(usize, usize)> {
    let mut joined = Vec::new();
    let mut src = Vec::new();
    let mut bounds = vec![0];
    for &(s, e) in run {
        joined.extend_from_slice(&t[s..e]);
        src.extend(s..e);
        bounds.push(joined.len());
    }
    let edge = |i: usize| bounds.binary_search(&i).is_ok();
    let mut found = named(&segment(&joined, &edge, usize::MAX));
    let lower = joined.to_ascii_lowercase();
    for &p in &bounds {
        for l in literals {
            if lower[p..].starts_with(l.as_bytes()) && edge(p + l.len()) {
                found.push((p, p + l.len()));
            }
        }
    }
    found
        .into_iter()
        .filter(|&(s, e)| bounds.iter().filter(|b| (s + 1..e).contains(*b)).count() >= 1)
        .map(|(s, e)| (src[s], src[e - 1] + 1))
        .collect()
}

/// Runs of three or more pieces of one or two letters or digits, each
/// from the next only separators apart (at most `MAX_GAP` bytes, no line
/// break): the byte range of each piece.
fn runs(t: &[u8]) -> Vec<Vec<(usize, usize)>> {
    let mut out = Vec::new();
    let mut cur: Vec<(usize, usize)> = Vec::new();
    let flush = |cur: &mut Vec<(usize, usize)>, out: &mut Vec<Vec<(usize, usize)>>| {
        if cur.len() >= 3 {
            out.push(std::mem::take(cur));
        } else {
            cur.clear();
        }
    };
    let mut i = 0;
    while i < t.len() {
        if !t[i].is_ascii_alphanumeric() {
            i += 1;
            continue;
        }
        let start = i;
        while i < t.len() && t[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let near = cur.last().is_some_and(|&(_, end)| {
            let gap = &t[end..start];
            gap.len() <= MAX_GAP && !gap.iter().any(|b| matches!(b, b'\n' | b'\r'))
        });
        if !near {
            flush(&mut cur, &mut out);
        }
        if i - start <= 2 {
            cur.push((start, i));
        } else {
            flush(&mut cur, &mut out);
        }
    }
    flush(&mut cur, &mut out);
    out
}

/// The word split into name, tail and other pieces with as few bytes of
/// other as can be: `(start, end, piece)`. Other pieces start and end only
/// where a camelCase hump or a digit run does, so `claudette` and
/// `philanthropic` stay whole words while `myClaudeHelper` holds `Claude`.
/// `bound` marks more boundaries (the pieces of a name written apart); a
/// word over `max` bytes is one other piece.
fn segment(w: &[u8], bound: &dyn Fn(usize) -> bool, max: usize) -> Vec<(usize, usize, Piece)> {
    let n = w.len();
    if n > max {
        return vec![(0, n, Piece::Other)];
    }
    let lower: Vec<u8> = w.to_ascii_lowercase();
    let edge = |i: usize| {
        i == 0
            || i == n
            || bound(i)
            || (w[i - 1].is_ascii_lowercase() && w[i].is_ascii_uppercase())
            || (w[i - 1].is_ascii_digit() != w[i].is_ascii_digit())
    };
    // best[i]: (bytes of other, previous position, piece) for w[..i].
    let mut best: Vec<Option<(usize, usize, Piece)>> = vec![None; n + 1];
    best[0] = Some((0, 0, Piece::Other));
    for i in 0..n {
        let Some((cost, _, _)) = best[i] else {
            continue;
        };
        let mut step = |j: usize, extra: usize, piece: Piece| {
            let c = cost + extra;
            if best[j].is_none_or(|b| c < b.0) {
                best[j] = Some((c, i, piece));
            }
        };
        for (list, piece) in [(NAMES, Piece::Name), (AFFIXES, Piece::Tail)] {
            for p in list {
                if !lower[i..].starts_with(p.as_bytes()) {
                    continue;
                }
                let j = i + p.len();
                // `o1` ends a digit run: not the start of `o11y`.
                if j == n || !(w[j - 1].is_ascii_digit() && w[j].is_ascii_digit()) {
                    step(j, 0, piece);
                }
            }
        }
        if w[i].is_ascii_digit() {
            let d = i + w[i..].iter().take_while(|c| c.is_ascii_digit()).count();
            step(d, 0, Piece::Tail);
            // `4o`, `120b`, `3x`: a version with its letter.
            if d < n && w[d].is_ascii_alphabetic() && (d + 1 == n || edge(d + 1)) {
                step(d + 1, 0, Piece::Tail);
            }
        }
        if edge(i) {
            let j = (i + 1..=n).find(|&j| edge(j)).unwrap_or(n);
            step(j, j - i, Piece::Other);
        }
    }
    let mut pieces = Vec::new();
    let mut j = n;
    while j > 0 {
        let (_, i, piece) = best[j].expect("every word splits into other pieces");
        pieces.push((i, j, piece));
        j = i;
    }
    pieces.reverse();
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_paths_and_sessions_are_stripped_and_counted() {
        let s = Stripper::new(&["my-model-x".into()]);
        let (out, n) = s.strip(
            "As Claude, I think GPT-5 and Gemini CLI agree; OpenAI's codex config in \
~/.codex/config.toml, session 0199a213-81c0-7800-8aa1-bbab2a035a53, model my-model-x.",
        );
        for bad in [
            "Claude",
            "GPT",
            "Gemini",
            "OpenAI",
            "codex",
            ".codex",
            "0199a213",
            "my-model-x",
        ] {
            assert!(!out.contains(bad), "{bad} left in {out}");
        }
        assert!(n >= 7, "{n}: {out}");
        let (same, zero) = s.strip("Add a lock around the cache insert.");
        assert_eq!(
            (same.as_str(), zero),
            ("Add a lock around the cache insert.", 0)
        );
    }

    #[test]
    fn every_look_alike_has_its_letter() {
        assert_eq!(look_alike('\u{0430}'), Some('a'));
        assert_eq!(look_alike('\u{03A1}'), Some('P'));
        assert_eq!(look_alike('\u{0585}'), Some('o'));
        assert_eq!(look_alike('b'), None);
        // The two tables line up: the last look-alike maps to the last letter.
        assert_eq!(look_alike('\u{057D}'), Some('u'));
    }

    /// Issue 20: the shapes that came through 0.2.0's stripper.
    #[test]
    fn names_joined_cased_or_disguised_are_stripped() {
        let s = Stripper::new(&["my-model-x".into()]);
        for written in [
            "ClaudeCode",
            "claudecode",
            "OpenAIcodex",
            "qwen3-coder",
            "Qwen3-Coder-Plus",
            "gpt-5.1-codex-max",
            "GPT4o",
            "CodexCLI",
            "Claude 3.5 Sonnet",
            "anthropic/claude-sonnet-4",
            // A zero-width space, joiner, soft hyphen and BOM inside.
            "Cl\u{200B}aude",
            "co\u{200D}dex",
            "Gem\u{00AD}ini",
            "Open\u{FEFF}AI",
            // Fullwidth and mathematical letters.
            "\u{FF23}\u{FF4C}\u{FF41}\u{FF55}\u{FF44}\u{FF45}",
            "\u{FF2F}\u{FF50}\u{FF45}\u{FF4E}\u{FF21}\u{FF29}",
            "\u{1D402}\u{1D425}\u{1D41A}\u{1D42E}\u{1D41D}\u{1D41E}",
            // Cyrillic С, а, е; Greek Α, ο; an accent.
            "\u{0421}l\u{0430}ud\u{0435}",
            "G\u{0435}mini",
            "\u{0391}nthr\u{03BF}pic",
            "Cla\u{0301}ude",
            // This council's model id, however it is joined.
            "MyModelX",
            "my_model_x",
        ] {
            let text = format!("Proposal by {written}: add a lock.");
            let (out, n) = s.strip(&text);
            assert_eq!(
                out, "Proposal by [name removed]: add a lock.",
                "{written:?}"
            );
            assert_eq!(n, 1, "{written:?}");
        }
        // A name inside a camelCase identifier; the rest stays.
        assert_eq!(
            s.strip("call useClaudeApi()").0,
            "call use[name removed]Api()"
        );
    }

    /// Issue 29: names broken up by spaces or dots reached the judges.
    #[test]
    fn names_written_apart_are_stripped() {
        let s = Stripper::new(&["my-model-x".into()]);
        for written in [
            "O p e n A I   C o d e x",
            "C.l.a.u.d.e",
            "c-l-a-u-d-e",
            "C l a u d e",
            "G . e . m . i . n . i",
            "Op en AI",
            "Q_w_e_n",
            "C \u{00B7} l \u{00B7} a \u{00B7} u \u{00B7} d \u{00B7} e",
            "C\u{200B} l a u d e",
            "m y m o d e l x",
        ] {
            let (out, n) = s.strip(&format!("Proposal by {written}. Add a lock."));
            assert!(n >= 1, "{written:?}: {out}");
            assert!(
                out.starts_with("Proposal by [name removed]") && out.ends_with(". Add a lock."),
                "{written:?}: {out}"
            );
            for piece in ["laud", "pen", "ode", "emin", "wen", "model"] {
                let letters: String = out.chars().filter(char::is_ascii_alphanumeric).collect();
                assert!(
                    !letters.to_lowercase().contains(piece),
                    "{written:?}: {out}"
                );
            }
        }
        // Broken once, or not at a word's edges: prose and code stay.
        for text in [
            "we open AI tools to everyone",
            "the code x is wrong",
            "a b c d e f g",
            "for (i, j) in x.iter().zip(y)",
            "call f(a, b, c) and d.e.f()",
            "see e.g. the c.l.a.u.s.e list",
        ] {
            assert_eq!(s.strip(text), (text.to_string(), 0), "{text:?}");
        }
    }

    #[test]
    fn text_around_a_disguised_name_is_kept_as_written() {
        let s = Stripper::new(&[]);
        let text = "\u{FF48}\u{FF49}\u{200B} there, \u{FF23}\u{FF4C}\u{FF41}\u{FF55}\u{FF44}\u{FF45} said \
                    \u{041F}\u{0440}\u{0438}\u{0432}\u{0435}\u{0442} \u{1F600} caf\u{00E9}";
        let (out, n) = s.strip(text);
        assert_eq!(
            out,
            "\u{FF48}\u{FF49}\u{200B} there, [name removed] said \
             \u{041F}\u{0440}\u{0438}\u{0432}\u{0435}\u{0442} \u{1F600} caf\u{00E9}"
        );
        assert_eq!(n, 1);
    }

    #[test]
    fn words_that_are_not_names_stay() {
        let s = Stripper::new(&[]);
        for text in [
            "code",
            "Code review of the CLI, agent, mini, max, pro and plus tiers",
            "claudette",
            "Claudette Colvin",
            "a philanthropic and misanthropic octopus",
            "strategy for the bazaar",
            "the Geminids, googled, sonnets and haikus",
            "Googlebot",
            "go1.22 and foo1 and O(n) and o11y",
            "pi = 3.14 and the agent",
            "open the code",
            // Cyrillic and Greek text that folds to no name: kept as written.
            "\u{0421}l\u{0430}ss",
            "\u{041F}\u{0440}\u{0438}\u{0432}\u{0435}\u{0442}, \u{043C}\u{0438}\u{0440}",
            "\u{03B1}\u{03B2}\u{03B3}",
            "\u{FF48}\u{FF45}\u{FF4C}\u{FF4C}\u{FF4F}",
            "a\u{200B}b",
        ] {
            assert_eq!(s.strip(text), (text.to_string(), 0), "{text:?}");
        }
    }
}
