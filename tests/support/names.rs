//! The blinding corpus: agent, model and vendor names written in every shape
//! a council member might use (plain, camelCase, run together, versioned,
//! with invisible characters, in fullwidth or mathematical letters, with
//! Cyrillic or Greek look-alikes), and text that is not a name and must come
//! through byte for byte.
//!
//! Shared by the blinding tests (`tests/blinding.rs`) and the benchmark
//! (`bench/redact.rs`, `make bench-redact`).

#![allow(dead_code)]

/// Names as people write them, one word or joined by `-`, `.`, `/`, space.
pub const NAMES: &[&str] = &[
    "Claude",
    "Claude Code",
    "ClaudeCode",
    "claude-code",
    "codex",
    "Codex CLI",
    "OpenAI",
    "OpenAI codex",
    "gpt-5.1-codex-max",
    "GPT-4o",
    "o3-mini",
    "Gemini",
    "gemini-cli",
    "Gemini 2.5 Pro",
    "Google DeepMind",
    "Antigravity",
    "agy",
    "opencode",
    "Qwen",
    "qwen3-coder",
    "Qwen Code",
    "GLM-4.6",
    "Zhipu",
    "Anthropic",
    "claude-sonnet-4-5",
    "Opus",
    "Haiku",
    "ChatGPT",
    "pi coding agent",
];

/// How a name is written.
pub struct Shape {
    pub name: &'static str,
    pub write: fn(&str) -> String,
}

fn map_letters(s: &str, f: impl Fn(char) -> Option<char>) -> String {
    s.chars().map(|c| f(c).unwrap_or(c)).collect()
}

/// Fullwidth forms of ASCII letters and digits (U+FF01..).
fn fullwidth(s: &str) -> String {
    map_letters(s, |c| {
        c.is_ascii_alphanumeric()
            .then(|| char::from_u32(c as u32 - 0x21 + 0xFF01))
            .flatten()
    })
}

/// Mathematical bold letters (U+1D400..).
fn math_bold(s: &str) -> String {
    map_letters(s, |c| match c {
        'A'..='Z' => char::from_u32(0x1D400 + (c as u32 - 'A' as u32)),
        'a'..='z' => char::from_u32(0x1D41A + (c as u32 - 'a' as u32)),
        _ => None,
    })
}

/// Cyrillic letters drawn like Latin ones, wherever one exists.
fn cyrillic(s: &str) -> String {
    map_letters(s, |c| {
        Some(match c {
            'a' => 'а',
            'c' => 'с',
            'e' => 'е',
            'o' => 'о',
            'p' => 'р',
            'x' => 'х',
            'y' => 'у',
            'i' => 'і',
            'A' => 'А',
            'B' => 'В',
            'C' => 'С',
            'E' => 'Е',
            'H' => 'Н',
            'K' => 'К',
            'M' => 'М',
            'O' => 'О',
            'P' => 'Р',
            'T' => 'Т',
            'X' => 'Х',
            _ => return None,
        })
    })
}

/// Greek letters drawn like Latin ones.
fn greek(s: &str) -> String {
    map_letters(s, |c| {
        Some(match c {
            'o' => 'ο',
            'A' => 'Α',
            'B' => 'Β',
            'E' => 'Ε',
            'H' => 'Η',
            'I' => 'Ι',
            'K' => 'Κ',
            'M' => 'Μ',
            'N' => 'Ν',
            'O' => 'Ο',
            'P' => 'Ρ',
            'T' => 'Τ',
            'X' => 'Χ',
            'Z' => 'Ζ',
            _ => return None,
        })
    })
}

/// `sep` after the second character of every word of the name.
fn inside(s: &str, sep: &str) -> String {
    s.split(' ')
        .map(|w| {
            let mut it = w.chars();
            let head: String = it.by_ref().take(2).collect();
            let tail: String = it.collect();
            if tail.is_empty() {
                head
            } else {
                format!("{head}{sep}{tail}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every character apart (issue 29): characters by `sep`, words by three
/// spaces (`O p e n A I   C o d e x`, `C.l.a.u.d.e`).
fn apart(s: &str, sep: &str) -> String {
    s.split(' ')
        .map(|w| w.chars().map(String::from).collect::<Vec<_>>().join(sep))
        .collect::<Vec<_>>()
        .join("   ")
}

/// Words run together, each capitalised (`ClaudeCode`).
fn camel(s: &str) -> String {
    s.split([' ', '-'])
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

pub const SHAPES: &[Shape] = &[
    Shape {
        name: "plain",
        write: |s| s.to_string(),
    },
    Shape {
        name: "lower-case",
        write: |s| s.to_lowercase(),
    },
    Shape {
        name: "camel-case",
        write: camel,
    },
    Shape {
        name: "run-together",
        write: |s| s.replace([' ', '-'], "").to_lowercase(),
    },
    Shape {
        name: "zero-width-space",
        write: |s| inside(s, "\u{200B}"),
    },
    Shape {
        name: "zero-width-joiner",
        write: |s| inside(s, "\u{200D}"),
    },
    Shape {
        name: "soft-hyphen",
        write: |s| inside(s, "\u{00AD}"),
    },
    Shape {
        name: "fullwidth",
        write: fullwidth,
    },
    Shape {
        name: "math-bold",
        write: math_bold,
    },
    Shape {
        name: "cyrillic",
        write: cyrillic,
    },
    Shape {
        name: "greek",
        write: greek,
    },
    Shape {
        name: "combining-accent",
        write: |s| inside(s, "\u{0301}"),
    },
    Shape {
        name: "spaced",
        write: |s| apart(s, " "),
    },
    Shape {
        name: "dotted",
        write: |s| apart(s, "."),
    },
];

/// Sentences a proposal might hold the name in: `{n}` is the name.
pub const CONTEXTS: &[&str] = &[
    "{n} proposed adding a lock.",
    "As suggested by {n}, add a lock.",
    "I ({n}) would add a lock.",
    "Plan from {n}:\n  1. add a lock",
    "**{n}**: add a lock",
    "\"author\": \"{n}\"",
];

/// One case: the text, and what it must become.
pub struct Case {
    pub shape: &'static str,
    pub text: String,
    pub want: String,
}

/// Every name in every shape and context; `want` is the text with the name
/// (and only the name) replaced.
pub fn corpus() -> Vec<Case> {
    let mut out = Vec::new();
    for shape in SHAPES {
        for (k, name) in NAMES.iter().enumerate() {
            // The multi-word phrase keeps its spaces; it has no one-word form.
            if *name == "pi coding agent" && !matches!(shape.name, "plain" | "lower-case") {
                continue;
            }
            let written = (shape.write)(name);
            let ctx = CONTEXTS[k % CONTEXTS.len()];
            out.push(Case {
                shape: shape.name,
                text: ctx.replace("{n}", &written),
                want: ctx.replace("{n}", "[name removed]"),
            });
        }
    }
    out
}

/// Text that names no agent, model or vendor: it must come through
/// unchanged, invisible and non-Latin characters included.
pub const KEPT: &[&str] = &[
    "Add a lock around the cache insert.",
    "code",
    "Code review of the CLI, agent, mini, max, pro and plus tiers.",
    "claudette",
    "Claudette Colvin refused to give up her seat.",
    "a philanthropic and misanthropic octopus",
    "strategy for the bazaar",
    "the Geminids, googled, sonnets and haikus",
    "Googlebot crawls the docs.",
    "go1.22 and foo1 and O(n) and o11y",
    "pi = 3.14 and the agent",
    "open the code, run the tests",
    "Сlаss",
    "Привет, мир",
    "αβγ and Ωμέγα",
    "ｈｅｌｌｏ ｗｏｒｌｄ",
    "a\u{200B}b and e\u{0301}",
    "café naïve Zürich",
    "日本語のテキスト",
    "emoji 😀 and 👍🏽",
    "see src/cache.rs:42 and commit 4f2a9c1",
    "The agent calls the API; the CLI prints JSON.",
    // Short words in a row, and a name's letters broken once (issue 29).
    "we open AI tools to everyone",
    "the code x is wrong",
    "a b c d e f g",
    "call f(a, b, c) and d.e.f() as in e.g. i.e. a.k.a.",
    "x = a + b * c - d; if (i < n) { j += 1 }",
    "de ad be ef 00 67 70 74 and 0x1f 2c",
];
