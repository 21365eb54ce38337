//! Printers: one JSON object per line for programs (the default), plain text
//! for people (`--text`). Errors follow the same mode, so a host agent always
//! gets JSON on stdout, even for a usage error.
//!
//! A result that cannot be written to stdout (a full disk behind `>`, a
//! closed pipe) is an error: exit 1 and a message on stderr, never a silent
//! exit 0 with nothing delivered.

use std::io::Write;

use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::result::{ErrorReport, RunResult};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Json,
    Text,
}

/// Print any serialisable value as one JSON line (one write).
pub fn json_line<T: Serialize>(value: &T) -> Result<()> {
    let mut b = serde_json::to_vec(value).map_err(|e| Error::Internal(e.to_string()))?;
    b.push(b'\n');
    write_stdout(&b)
}

/// Print text for people.
pub fn text(s: &str) -> Result<()> {
    write_stdout(s.as_bytes())
}

/// Write all of `b` to stdout and flush it, or say why not.
pub fn write_stdout(b: &[u8]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(b)
        .and_then(|()| out.flush())
        .map_err(|e| Error::io("writing the result to stdout", e))
}

pub fn print_result(r: &RunResult, mode: Mode) -> Result<()> {
    match mode {
        Mode::Json => json_line(r),
        Mode::Text => {
            let mut s = String::new();
            s.push_str(&format!("{}\n", r.summary));
            s.push_str(&format!("status:   {}\n", r.status.as_str()));
            if let Some(id) = &r.job_id {
                s.push_str(&format!("job:      {id}\n"));
            }
            s.push_str(&format!(
                "agent:    {} (model {}, effort {}, access {})\n",
                r.agent,
                r.model.as_deref().unwrap_or("default"),
                r.effort.as_deref().unwrap_or("default"),
                r.access
            ));
            if let Some(sess) = &r.session {
                s.push_str(&format!("session:  {sess}\n"));
            }
            if !r.changed_files.is_empty() {
                s.push_str(&format!("changed:  {}\n", r.changed_files.join(", ")));
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
                    v.command
                ));
            }
            if let Some(p) = &r.log_path {
                s.push_str(&format!("log:      {p}\n"));
            }
            for w in &r.warnings {
                s.push_str(&format!("warning:  {w}\n"));
            }
            for d in &r.denials {
                s.push_str(&format!("denied:   {} {}\n", d.tool, d.detail));
            }
            if let Some(e) = &r.error {
                s.push_str(&format!("error:    [{}] {}\n", e.kind, e.message));
                if let Some(h) = &e.hint {
                    s.push_str(&format!("hint:     {h}\n"));
                }
            }
            if let Some(m) = &r.message {
                s.push('\n');
                s.push_str(m.trim_end());
                s.push('\n');
            }
            text(&s)
        }
    }
}

/// Lines for `--text` output of a result's `worktree` object.
fn worktree_lines(w: &Value) -> String {
    let mut s = String::new();
    let get = |k: &str| w.get(k).and_then(Value::as_str).unwrap_or("");
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
        s.push_str(&format!("reverted: {}\n", names.join(", ")));
    }
    if !get("merge_hint").is_empty() {
        s.push_str(&format!("merge:    {}\n", get("merge_hint")));
    }
    s
}

pub fn print_error(err: &Error, mode: Mode) {
    match mode {
        Mode::Json => {
            let mut report = ErrorReport::from_error(err);
            report.exit_code = Some(err.exit_code());
            // Where stdout itself failed, stderr below is all there is.
            let _ = json_line(&report);
        }
        Mode::Text => {}
    }
    // People (and logs) get the message on stderr in both modes.
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "baton: error: {err}");
    if let Some(h) = err.hint() {
        let _ = writeln!(e, "baton: hint: {h}");
    }
}
