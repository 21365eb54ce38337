//! `--diff`: `git diff REV` of the working directory, refused when it touches
//! a credential-like path.

use std::path::Path;
use std::process::Stdio;

use crate::error::{Error, Result};
use crate::git;

use super::credentials::credential_reason;

/// Paths a unified diff touches (from its `diff --git`, `---`/`+++` and
/// rename lines).
pub(super) fn diff_paths(diff: &str) -> Vec<String> {
    let strip = |p: &str| {
        let p = p.trim().trim_matches('"');
        p.strip_prefix("a/")
            .or_else(|| p.strip_prefix("b/"))
            .unwrap_or(p)
            .to_string()
    };
    let mut out = Vec::new();
    for l in diff.lines() {
        if let Some(rest) = l.strip_prefix("diff --git ") {
            out.extend(rest.split(" b/").map(strip));
        } else if let Some(p) = l
            .strip_prefix("--- ")
            .or_else(|| l.strip_prefix("+++ "))
            .or_else(|| l.strip_prefix("rename from "))
            .or_else(|| l.strip_prefix("rename to "))
        {
            let p = p.split('\t').next().unwrap_or(p);
            if p != "/dev/null" {
                out.push(strip(p));
            }
        }
    }
    out
}

pub(super) fn check_diff_paths(diff: &str) -> Result<()> {
    for p in diff_paths(diff) {
        if let Some(why) = credential_reason(Path::new(&p)) {
            return Err(Error::Refused {
                kind: "credential_file",
                message: format!(
                    "the diff touches `{p}`: {why}; credential-like files are never sent to an \
                     adviser"
                ),
                hint: "commit or stash that file first, or give the packet a `diff` without it"
                    .into(),
            });
        }
    }
    Ok(())
}

/// `git diff <rev>` of the working directory. External diff drivers and
/// textconv filters are off: they would run programs named by the repository.
pub(super) fn git_diff(cwd: &Path, rev: &str) -> Result<String> {
    if rev.is_empty() || rev.starts_with('-') || rev.contains(char::is_whitespace) {
        return Err(Error::usage(format!("--diff `{rev}` is not a revision")));
    }
    let run = |extra: &[&str]| -> Result<Vec<u8>> {
        let out = git::git(cwd)
            .args(["diff", "--no-color", "--no-ext-diff", "--no-textconv"])
            .args(extra)
            .args([rev, "--"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| Error::io("running `git diff`", e))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(Error::usage_hint(
                format!(
                    "`git diff {rev}` failed: {}",
                    crate::agent::last_line(&err).unwrap_or_else(|| "no message".into())
                ),
                "--diff needs a git repository (with a commit to compare against)",
            ));
        }
        Ok(out.stdout)
    };
    // Names first: a credential file is refused before its content is read.
    for name in run(&["--name-only", "-z", "--no-renames"])?.split(|b| *b == 0) {
        if !name.is_empty() {
            let name = String::from_utf8_lossy(name);
            check_diff_paths(&format!("+++ b/{name}\n"))?;
        }
    }
    let text = String::from_utf8_lossy(&run(&[])?).into_owned();
    if text.trim().is_empty() {
        return Err(Error::usage_hint(
            format!("`git diff {rev}` is empty: there is nothing to review"),
            "drop --diff, or compare against another revision (`--diff=main`)",
        ));
    }
    Ok(text)
}
