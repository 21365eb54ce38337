//! What every `--dry-run` prints (`run`, `run --worktree`, `attach`, `ask`,
//! `council`): its JSON line, or with `--text` the same fields for people.
//!
//! One printer for all of them, driven by the JSON itself, so a field added
//! to a dry run shows in both modes without a second place to update: scalar
//! fields aligned one per line, `argv` quoted as a shell would need it (to
//! read or to paste), environment changes as `NAME=value`, nested objects
//! indented, and multi-line text (the prompt) last, as an indented block.

use serde_json::{Map, Value};

use crate::error::Result;
use crate::output::{self, Mode};

/// Fields shown first, in this order; the rest follow alphabetically.
const FIRST: &[&str] = &[
    "job_id",
    "request_id",
    "agent",
    "session",
    "access",
    "model",
    "effort",
    "program",
    "argv",
    "cwd",
    "env_set",
    "env_remove",
    "env_set_per_run",
    "timeout_ms",
    "idle_timeout_ms",
];

/// Print a dry run in the mode asked for.
pub fn print(v: &Value, mode: Mode) -> Result<()> {
    match mode {
        Mode::Json => output::json_line(v),
        Mode::Text => output::text(&text(v)),
    }
}

/// The `--text` form of a dry run's JSON.
pub fn text(v: &Value) -> String {
    let mut out = String::from("dry run: nothing was started\n");
    object(&mut out, v, 0, None);
    out
}

fn object(out: &mut String, v: &Value, indent: usize, prompt: Option<&str>) {
    let pad = " ".repeat(indent);
    let Value::Object(m) = v else {
        out.push_str(&format!("{pad}{}\n", inline("", v)));
        return;
    };
    let prompt = m.get("prompt").and_then(Value::as_str).or(prompt);
    let (mut lines, mut nested, mut blocks) = (Vec::new(), Vec::new(), Vec::new());
    for k in ordered(m) {
        let val = &m[k];
        match val {
            // The prompt is shown once; stdin is usually the same text.
            Value::String(s) if k == "stdin" && Some(s.as_str()) == prompt => {
                lines.push((k, "(the prompt)".to_string()))
            }
            Value::String(s) if s.contains('\n') => blocks.push((k, s)),
            // Only a map of strings (an environment) fits on one line.
            Value::Object(o) if !o.values().all(Value::is_string) => nested.push(k),
            Value::Array(a) if !a.iter().all(leaf) => nested.push(k),
            _ => lines.push((k, inline(k, val))),
        }
    }
    let width = lines.iter().map(|(k, _)| k.len() + 1).max().unwrap_or(0);
    for (k, v) in lines {
        out.push_str(&format!("{pad}{:<width$} {v}\n", format!("{k}:")));
    }
    for k in nested {
        match &m[k] {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    out.push_str(&format!("{pad}{k} {}:\n", i + 1));
                    object(out, item, indent + 2, prompt);
                }
            }
            other => {
                out.push_str(&format!("{pad}{k}:\n"));
                object(out, other, indent + 2, prompt);
            }
        }
    }
    for (k, s) in blocks {
        out.push_str(&format!("{pad}{k}:\n"));
        for l in s.lines() {
            match l {
                "" => out.push('\n'),
                l => out.push_str(&format!("{pad}  {l}\n")),
            }
        }
    }
}

fn ordered(m: &Map<String, Value>) -> Vec<&str> {
    let skip = ["schema_version", "dry_run"];
    let mut keys: Vec<&str> = FIRST
        .iter()
        .copied()
        .filter(|k| m.contains_key(*k))
        .collect();
    keys.extend(
        m.keys()
            .map(String::as_str)
            .filter(|k| !FIRST.contains(k) && !skip.contains(k)),
    );
    keys
}

fn leaf(v: &Value) -> bool {
    !matches!(v, Value::Object(_) | Value::Array(_))
}

fn inline(key: &str, v: &Value) -> String {
    let s = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    };
    match v {
        Value::Array(a) if a.is_empty() => "-".into(),
        Value::Array(a) if key == "argv" => a
            .iter()
            .map(|x| shell_word(&s(x)))
            .collect::<Vec<_>>()
            .join(" "),
        Value::Array(a) => a.iter().map(s).collect::<Vec<_>>().join(", "),
        Value::Object(o) if o.is_empty() => "-".into(),
        Value::Object(o) => o
            .iter()
            .map(|(k, v)| format!("{k}={}", shell_word(&s(v))))
            .collect::<Vec<_>>()
            .join(" "),
        other => s(other),
    }
}

/// `s` as one shell word: as-is when it needs no quoting, else in single quotes.
fn shell_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_align_argv_is_quoted_and_the_prompt_comes_last() {
        let v = json!({
            "schema_version": 1, "dry_run": true,
            "agent": "codex", "program": "codex",
            "argv": ["codex", "-c", "model_reasoning_effort=\"high\"", "--add-dir", "/a b", "it's", ""],
            "cwd": "/w", "env_set": {"BATON_DEPTH": "1", "X": "a b"}, "env_remove": [],
            "model": null, "warnings": ["w1", "w2"],
            "prompt": "line one\nline two\n", "stdin": "line one\nline two\n",
            "worktree": {"branch": "baton/x", "allow": ["src/**"], "base": "abc"},
        });
        let t = text(&v);
        let want = "\
dry run: nothing was started
agent:      codex
model:      -
program:    codex
argv:       codex -c 'model_reasoning_effort=\"high\"' --add-dir '/a b' 'it'\\''s' ''
cwd:        /w
env_set:    BATON_DEPTH=1 X='a b'
env_remove: -
warnings:   w1, w2
stdin:      (the prompt)
worktree:
  branch: baton/x
  allow:  src/**
  base:   abc
prompt:
  line one
  line two
";
        assert_eq!(t, want);
    }

    #[test]
    fn lists_of_objects_are_numbered_sections() {
        let v = json!({"request_id": "r", "prompt": "p\nq",
            "advisers": [{"agent": "codex", "stdin": "p\nq"}, {"agent": "claude", "stdin": "other"}]});
        let t = text(&v);
        assert!(
            t.contains("advisers 1:\n  agent: codex\n  stdin: (the prompt)\n"),
            "{t}"
        );
        assert!(
            t.contains("advisers 2:\n  agent: claude\n  stdin: other\n"),
            "{t}"
        );
        assert!(t.ends_with("prompt:\n  p\n  q\n"), "{t}");
    }
}
