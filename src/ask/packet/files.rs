//! Files in the packet: `--file PATH[:A-B]` parsed (`parse_spec`) and inlined
//! with their line range, refusing what is not a readable text file.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

use super::credentials::{check_credential, check_hardlink};
use super::{FileRef, InlinedFile};

/// `path`, `path:A`, `path:A-B`, `path:A-` → (path, start, end). A path that
/// exists as written wins over a range reading (a file may contain `:`).
pub(super) fn parse_spec(spec: &str, cwd: &Path) -> Result<(String, Option<usize>, Option<usize>)> {
    if cwd.join(spec).exists() {
        return Ok((spec.to_string(), None, None));
    }
    let Some((path, range)) = spec.rsplit_once(':') else {
        return Ok((spec.to_string(), None, None));
    };
    let bad = || {
        Error::usage_hint(
            format!("bad line range in `{spec}`"),
            "write PATH, PATH:START, PATH:START-END or PATH:START- (lines count from 1)",
        )
    };
    if range.is_empty() || !range.chars().all(|c| c.is_ascii_digit() || c == '-') {
        return Ok((spec.to_string(), None, None));
    }
    let num = |s: &str| s.parse::<usize>().map_err(|_| bad());
    let (start, end) = match range.split_once('-') {
        None => {
            let n = num(range)?;
            (n, Some(n))
        }
        Some((a, "")) => (num(a)?, None),
        Some((a, b)) => (num(a)?, Some(num(b)?)),
    };
    Ok((path.to_string(), Some(start), end))
}

pub(super) fn inline_file(cwd: &Path, f: &FileRef, max_chars: usize) -> Result<InlinedFile> {
    let (path, start, end) = match f {
        FileRef::Spec(s) => parse_spec(s, cwd)?,
        FileRef::Range(r) => (r.path.clone(), r.start_line, r.end_line),
    };
    if path.trim().is_empty() {
        return Err(Error::usage("a `files` entry has an empty path"));
    }
    if start == Some(0) || matches!((start, end), (Some(s), Some(e)) if e < s) {
        return Err(Error::usage_hint(
            format!("bad line range for `{path}`"),
            "lines count from 1 and the end may not come before the start",
        ));
    }
    let given = PathBuf::from(&path);
    // The name as written is checked too: a link called `.env` is refused
    // even if it points at something harmless (and the target is checked next).
    check_credential(&path, &given)?;
    let full = cwd.join(&given);
    let canonical = full.canonicalize().map_err(|e| {
        Error::usage_hint(
            format!("file `{path}`: {e}"),
            "paths are relative to the working directory (--cwd)",
        )
    })?;
    check_credential(&path, &canonical)?;
    check_hardlink(&path, &canonical, &crate::fsutil::project_root(cwd))?;
    let meta =
        std::fs::metadata(&canonical).map_err(|e| Error::usage(format!("file `{path}`: {e}")))?;
    if !meta.is_file() {
        return Err(Error::usage(format!("`{path}` is not a regular file")));
    }
    // UTF-8 needs at most 4 bytes a character: a larger file cannot fit.
    let byte_cap = (max_chars as u64).saturating_mul(4);
    if start.is_none() && meta.len() > byte_cap {
        return Err(Error::Refused {
            kind: "packet_too_large",
            message: format!(
                "file `{path}` is {} bytes, more than the packet limit of {max_chars} characters \
                 allows; it was not read",
                meta.len()
            ),
            hint: "inline a line range (`--file PATH:START-END`) or raise --max-chars".into(),
        });
    }
    let file = File::open(&canonical).map_err(|e| Error::usage(format!("file `{path}`: {e}")))?;
    let mut reader = BufReader::new(file.take(byte_cap + 1));
    let first = start.unwrap_or(1);
    let mut content = Vec::new();
    let mut line = Vec::new();
    let mut n = 0usize;
    // The BEGIN line of a private key that the range starts inside: sent
    // ahead of the range so the redactor sees the body as a key (issue 10).
    let mut key_open: Option<Vec<u8>> = None;
    loop {
        line.clear();
        let got = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::io(format!("reading `{path}`"), e))?;
        if got == 0 {
            break;
        }
        n += 1;
        if line.contains(&0) {
            return Err(Error::usage_hint(
                format!("`{path}` looks binary (it contains NUL bytes)"),
                "inline text files only",
            ));
        }
        if n < first {
            let l = String::from_utf8_lossy(&line);
            if crate::redact::private_key_begins(&l) {
                key_open = Some(line.clone());
            } else if crate::redact::private_key_ends(&l) {
                key_open = None;
            }
        } else {
            if n == first
                && let Some(begin) = key_open.take()
            {
                content.extend_from_slice(&begin);
            }
            content.extend_from_slice(&line);
        }
        if end.is_some_and(|e| n >= e) {
            break;
        }
    }
    if start.is_some() && n < first {
        return Err(Error::usage(format!(
            "`{path}` has {n} lines; line {first} does not exist"
        )));
    }
    let last = match end {
        Some(e) => e.min(n),
        None => n,
    };
    Ok(InlinedFile {
        path,
        start_line: if n == 0 { 0 } else { first },
        end_line: last,
        content: String::from_utf8_lossy(&content).into_owned(),
    })
}
