//! Printers: one JSON object per line for programs (the default), plain text
//! for people (`--text`). Errors follow the same mode, so a host agent always
//! gets JSON on stdout, even for a usage error.
//!
//! A result that cannot be written to stdout (a full disk behind `>`, a
//! closed pipe) is an error: exit 1 and a message on stderr, never a silent
//! exit 0 with nothing delivered.

pub mod dry_run;
pub mod render;
mod result_text;

use std::io::Write;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::output::render::{Render, Shape, clean};
use crate::result::ErrorReport;

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

/// Print text for people: a control character anywhere in it (a peer's,
/// a task's) is shown escaped, never sent to the terminal (`render::clean`).
pub fn text(s: &str) -> Result<()> {
    write_stdout(clean(s, Shape::Block).as_bytes())
}

/// Write all of `b` to stdout and flush it, or say why not.
pub fn write_stdout(b: &[u8]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(b)
        .and_then(|()| out.flush())
        .map_err(|e| Error::io("writing the result to stdout", e))
}

/// Print a result in the mode asked for: one JSON line, or its text for people.
pub fn print_result<T: Serialize + Render>(r: &T, mode: Mode) -> Result<()> {
    match mode {
        Mode::Json => json_line(r),
        Mode::Text => text(&r.text()),
    }
}

/// Print a command's result (`print_result`) and hand back its exit code:
/// the one place a command that returns a value ends.
pub fn emit<T: Serialize + Render>(r: &T, mode: Mode) -> Result<i32> {
    print_result(r, mode)?;
    Ok(r.exit_code())
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
    // A message can quote a peer or a file: escaped as any text for people.
    let _ = writeln!(e, "baton: error: {}", clean(&err.to_string(), Shape::Block));
    if let Some(h) = err.hint() {
        let _ = writeln!(e, "baton: hint: {}", clean(&h, Shape::Block));
    }
}
