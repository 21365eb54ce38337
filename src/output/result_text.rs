//! The result for people (`--text`): the summary, one labelled line per
//! field that is set, then the peer's final message.

use std::borrow::Cow;

use serde_json::Value;

use super::render::{Render, Shape, clean};
use crate::result::*;

/// `--text`: the summary, one labelled line per field that is set, then the
/// peer's final message. A field is one line whatever it holds (`one`); the
/// message keeps its lines, and `output::text` escapes what is left.
impl Render for RunResult {
    fn exit_code(&self) -> i32 {
        RunResult::exit_code(self)
    }

    fn text(&self) -> String {
        let r = self;
        let mut s = String::new();
        s.push_str(&format!("{}\n", one(&r.summary)));
        s.push_str(&format!("status:   {}\n", r.status.as_str()));
        if let Some(id) = &r.job_id {
            s.push_str(&format!("job:      {}\n", one(id)));
        }
        s.push_str(&format!(
            "agent:    {} (model {}, effort {}, access {})\n",
            one(&r.agent),
            one(r.model.as_deref().unwrap_or("default")),
            one(r.effort.as_deref().unwrap_or("default")),
            r.access
        ));
        if let Some(sess) = &r.session {
            s.push_str(&format!("session:  {}\n", one(sess)));
        }
        if !r.changed_files.is_empty() {
            s.push_str(&format!("changed:  {}\n", one(&r.changed_files.join(", "))));
        }
        let u = &r.usage;
        if !u.is_empty() {
            s.push_str(&format!(
                "usage:    {} in ({} cached), {} out{}\n",
                u.input_tokens.unwrap_or(0),
                u.cached_input_tokens.unwrap_or(0),
                u.output_tokens.unwrap_or(0),
                u.cost_usd.map(|c| format!(", ${c:.4}")).unwrap_or_default()
            ));
        }
        if let Some(w) = r.extra.get("worktree") {
            s.push_str(&worktree_lines(w));
        }
        if let Some(v) = &r.verification {
            s.push_str(&format!(
                "check:    {} ({}): {}\n",
                if v.passed { "passed" } else { "FAILED" },
                v.exit_code
                    .map_or("no exit code".into(), |c| format!("exit {c}")),
                one(&v.command)
            ));
            if !v.passed {
                // What failed, instead of a merge hint.
                for line in crate::output::render::last_lines(&v.output_tail, 20) {
                    s.push_str(&format!("  | {line}\n"));
                }
            }
        }
        if let Some(p) = &r.log_path {
            s.push_str(&format!("log:      {}\n", one(p)));
        }
        for w in &r.warnings {
            s.push_str(&format!("warning:  {}\n", one(&w.to_string())));
        }
        for d in &r.denials {
            s.push_str(&format!("denied:   {} {}\n", one(&d.tool), one(&d.detail)));
        }
        if let Some(e) = &r.error {
            s.push_str(&format!(
                "error:    [{}] {}\n",
                one(&e.kind),
                one(&e.message)
            ));
            if let Some(h) = &e.hint {
                s.push_str(&format!("hint:     {}\n", one(h)));
            }
        }
        if let Some(m) = &r.message {
            s.push('\n');
            s.push_str(&clean(m.trim_end(), Shape::Block));
            s.push('\n');
        }
        s
    }
}

/// A field of a labelled line: one line, whatever a peer put in it.
fn one(s: &str) -> Cow<'_, str> {
    clean(s, Shape::Line)
}

/// Lines for `--text` output of a result's `worktree` object.
fn worktree_lines(w: &Value) -> String {
    let mut s = String::new();
    let get = |k: &str| one(w.get(k).and_then(Value::as_str).unwrap_or("")).into_owned();
    s.push_str(&format!("worktree: {}\n", get("path")));
    let d = &w["diffstat"];
    s.push_str(&format!(
        "branch:   {} ({} file(s), +{} -{})\n",
        get("branch"),
        d["files"].as_u64().unwrap_or(0),
        d["insertions"].as_u64().unwrap_or(0),
        d["deletions"].as_u64().unwrap_or(0)
    ));
    if let Some(r) = w["reverted"].as_array().filter(|r| !r.is_empty()) {
        let names: Vec<&str> = r.iter().filter_map(Value::as_str).collect();
        s.push_str(&format!("reverted: {}\n", one(&names.join(", "))));
    }
    if !get("merge_hint").is_empty() {
        s.push_str(&format!("merge:    {}\n", get("merge_hint")));
    }
    s
}
