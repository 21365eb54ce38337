//! The packet: everything an adviser is told, built from a JSON file and/or
//! flags, with files and a diff read by baton (never by the adviser).
//!
//! Order matters and is the safety argument: every path is checked for
//! credentials *before* it is opened; every string is redacted before the
//! packet is serialised; the size limit is applied to exactly the text that
//! would be sent and a packet over it is refused, never cut.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Component, Path, PathBuf};
use std::process::Stdio;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::redact::{Counts, Redactor};
use crate::error::{Error, Result};
use crate::git;

pub const DEFAULT_MAX_CHARS: usize = 200_000;

/// What kind of help is wanted; it steers the adviser's reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HelpType {
    Diagnosis,
    DesignCritique,
    CodeReview,
    ExperimentReview,
    #[default]
    Other,
}

impl HelpType {
    pub fn parse(s: &str) -> Result<HelpType> {
        serde_json::from_value(Value::String(s.trim().replace('-', "_"))).map_err(|_| {
            Error::usage_hint(
                format!("unknown help type `{s}`"),
                "use diagnosis, design_critique, code_review, experiment_review or other",
            )
        })
    }
}

/// A list field given as one string or several.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Snippet {
    Text(String),
    Labelled(LabelledSnippet),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelledSnippet {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    pub content: String,
}

/// A file to inline: `"path"`, `"path:10-20"`, `"path:10"`, `"path:10-"`,
/// or `{"path": …, "start_line": …, "end_line": …}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum FileRef {
    Spec(String),
    Range(FileRange),
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileRange {
    pub path: String,
    pub start_line: Option<usize>,
    pub end_line: Option<usize>,
}

/// The packet as a caller gives it (`--packet FILE`); flags fill it in.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacketInput {
    pub question: Option<String>,
    pub help_type: Option<HelpType>,
    pub goal: Option<String>,
    pub constraints: Option<OneOrMany>,
    pub tried: Option<OneOrMany>,
    pub observations: Option<OneOrMany>,
    pub hypothesis: Option<String>,
    #[serde(default)]
    pub snippets: Vec<Snippet>,
    #[serde(default)]
    pub files: Vec<FileRef>,
    pub diff: Option<String>,
    pub previous_advice: Option<Value>,
    pub follow_up: Option<String>,
    pub task_id: Option<String>,
}

impl PacketInput {
    pub fn parse(text: &str, source: &str) -> Result<PacketInput> {
        serde_json::from_str(text).map_err(|e| {
            Error::usage_hint(
                format!("packet {source} is not a valid packet: {e}"),
                "see `baton ask --help` and the README section on `baton ask` for the fields",
            )
        })
    }

    pub fn extend_list(field: &mut Option<OneOrMany>, more: &[String]) {
        if more.is_empty() {
            return;
        }
        let mut v = field.take().map(OneOrMany::into_vec).unwrap_or_default();
        v.extend(more.iter().cloned());
        *field = Some(OneOrMany::Many(v));
    }
}

/// A file as inlined into the packet.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InlinedFile {
    pub path: String,
    pub start_line: usize,
    pub end_line: usize,
    pub content: String,
}

/// What is sent (before redaction), in the order an adviser should read it.
#[derive(Debug, Clone, Serialize)]
struct Packet {
    question: String,
    help_type: HelpType,
    #[serde(skip_serializing_if = "Option::is_none")]
    goal: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    constraints: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tried: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    observations: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hypothesis: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    snippets: Vec<Snippet>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    files: Vec<InlinedFile>,
    #[serde(skip_serializing_if = "Option::is_none")]
    diff: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    previous_advice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    follow_up: Option<String>,
}

/// One inlined file, as reported in the result's `context`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileInfo {
    pub path: String,
    pub start_line: usize,
    pub end_line: usize,
    pub chars: usize,
}

/// The packet ready to send, with what the result reports about it.
#[derive(Debug, Clone)]
pub struct Built {
    /// The packet as sent (redacted), pretty JSON.
    pub text: String,
    pub sha256: String,
    pub files: Vec<FileInfo>,
    pub diff_chars: Option<usize>,
    pub redactions: Counts,
    pub task_id: Option<String>,
}

/// Where the diff comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffSource {
    None,
    /// `git diff <rev>` in the working directory (`--diff`, `--diff=REV`).
    Git(String),
}

/// Build the packet: validate, read files and diff, redact, hash, size-check.
pub fn build(
    input: PacketInput,
    diff: &DiffSource,
    cwd: &Path,
    redactor: &Redactor,
    max_chars: usize,
) -> Result<Built> {
    let question = input
        .question
        .filter(|q| !q.trim().is_empty())
        .ok_or_else(|| {
            Error::usage_hint(
                "no question given",
                "pass it as words (`baton ask \"is this migration safe?\"`), as `question` in \
                 --packet, or on stdin",
            )
        })?;
    if input.follow_up.is_some() != input.previous_advice.is_some() {
        return Err(Error::usage_hint(
            "`follow_up` and `previous_advice` go together",
            "for a second round give both: the earlier advice (--previous-advice FILE) and the \
             follow-up question (--follow-up TEXT)",
        ));
    }
    let mut files = Vec::new();
    for f in &input.files {
        files.push(inline_file(cwd, f, max_chars)?);
    }
    let mut diff_text = input.diff.filter(|d| !d.trim().is_empty());
    if let DiffSource::Git(rev) = diff {
        if diff_text.is_some() {
            return Err(Error::usage(
                "the packet already has a `diff`; drop --diff or the packet's diff",
            ));
        }
        diff_text = Some(git_diff(cwd, rev)?);
    }
    if let Some(d) = &diff_text {
        check_diff_paths(d)?;
    }
    let packet = Packet {
        question,
        help_type: input.help_type.unwrap_or_default(),
        goal: input.goal.filter(|s| !s.trim().is_empty()),
        constraints: input
            .constraints
            .map(OneOrMany::into_vec)
            .unwrap_or_default(),
        tried: input.tried.map(OneOrMany::into_vec).unwrap_or_default(),
        observations: input
            .observations
            .map(OneOrMany::into_vec)
            .unwrap_or_default(),
        hypothesis: input.hypothesis.filter(|s| !s.trim().is_empty()),
        snippets: input.snippets,
        files,
        diff: diff_text,
        previous_advice: input.previous_advice,
        follow_up: input.follow_up,
    };

    let mut value = serde_json::to_value(&packet).map_err(|e| Error::Internal(e.to_string()))?;
    let mut redactions = Counts::new();
    redact_value(&mut value, redactor, &mut redactions);
    let text = serde_json::to_string_pretty(&value).map_err(|e| Error::Internal(e.to_string()))?;

    // Reported sizes are of what is sent (after redaction).
    let sent_files: Vec<FileInfo> = value["files"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|f| FileInfo {
                    path: f["path"].as_str().unwrap_or_default().to_string(),
                    start_line: f["start_line"].as_u64().unwrap_or(0) as usize,
                    end_line: f["end_line"].as_u64().unwrap_or(0) as usize,
                    chars: f["content"].as_str().map_or(0, |c| c.chars().count()),
                })
                .collect()
        })
        .unwrap_or_default();
    let diff_chars = value["diff"].as_str().map(|d| d.chars().count());

    let chars = text.chars().count();
    if chars > max_chars {
        let mut parts: Vec<(String, usize)> = sent_files
            .iter()
            .map(|f| (format!("file `{}`", f.path), f.chars))
            .collect();
        if let Some(d) = diff_chars {
            parts.push(("diff".into(), d));
        }
        for k in ["snippets", "previous_advice"] {
            if !value[k].is_null() {
                parts.push((k.to_string(), value[k].to_string().chars().count()));
            }
        }
        parts.sort_by_key(|p| std::cmp::Reverse(p.1));
        let largest: Vec<String> = parts
            .iter()
            .take(3)
            .map(|(n, c)| format!("{n} {c}"))
            .collect();
        return Err(Error::Refused {
            kind: "packet_too_large",
            message: format!(
                "the packet is {chars} characters, over the limit of {max_chars}{}; it was not sent \
                 (baton never truncates a packet)",
                if largest.is_empty() {
                    String::new()
                } else {
                    format!(" (largest parts: {})", largest.join(", "))
                }
            ),
            hint: "send less: line ranges (`--file src/x.rs:120-180`), a narrower --diff, fewer \
                   files; or raise --max-chars"
                .into(),
        });
    }

    let sha256 = hex(&Sha256::digest(text.as_bytes()));
    Ok(Built {
        text,
        sha256,
        files: sent_files,
        diff_chars,
        redactions,
        task_id: input.task_id,
    })
}

fn redact_value(v: &mut Value, r: &Redactor, counts: &mut Counts) {
    match v {
        Value::String(s) => {
            let red = r.redact(s, counts);
            if red != *s {
                *s = red;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| redact_value(x, r, counts)),
        Value::Object(m) => m.values_mut().for_each(|x| redact_value(x, r, counts)),
        _ => {}
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `path`, `path:A`, `path:A-B`, `path:A-` → (path, start, end). A path that
/// exists as written wins over a range reading (a file may contain `:`).
fn parse_spec(spec: &str, cwd: &Path) -> Result<(String, Option<usize>, Option<usize>)> {
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

fn inline_file(cwd: &Path, f: &FileRef, max_chars: usize) -> Result<InlinedFile> {
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
        if n >= first {
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

/// Why a path looks like it holds credentials, if it does. Every component
/// is looked at, so `a/../.ssh/x` (checked after canonicalisation) and a
/// symlink into `~/.aws` are caught like the plain paths.
pub fn credential_reason(path: &Path) -> Option<String> {
    let names: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().to_lowercase()),
            _ => None,
        })
        .collect();
    for (i, n) in names.iter().enumerate() {
        if let Some(d) = [".ssh", ".aws", ".gnupg", ".codex", ".claude"]
            .iter()
            .find(|d| **d == n.as_str())
        {
            return Some(format!("it is under `{d}`, where credentials are kept"));
        }
        if n == ".config" && names.get(i + 1).is_some_and(|g| g == "gcloud") {
            return Some("it is under `.config/gcloud`, where credentials are kept".into());
        }
    }
    let name = names.last()?;
    let why = if name.starts_with(".env") {
        "`.env` files hold secrets"
    } else if name.ends_with(".pem") || name.ends_with(".key") {
        "`.pem`/`.key` files hold keys and certificates"
    } else if ["id_rsa", "id_ed25519", "id_ecdsa", "id_dsa"]
        .iter()
        .any(|p| name.starts_with(p))
    {
        "it is an SSH key"
    } else if matches!(
        name.as_str(),
        ".netrc" | ".npmrc" | ".pypirc" | ".git-credentials" | "auth.json"
    ) {
        "it holds login tokens"
    } else if name.starts_with("credentials") {
        "it holds credentials"
    } else {
        return None;
    };
    Some(why.to_string())
}

/// A file that is a credential file under another name (a hard link).
fn check_hardlink(given: &str, path: &Path, project: &Path) -> Result<()> {
    match super::credential_guard::hardlinked_credential(path, project) {
        None => Ok(()),
        Some((other, why)) => Err(Error::Refused {
            kind: "credential_file",
            message: format!(
                "refusing to read `{given}`: it is a hard link to `{}`, and {why}; \
                 credential-like files are never sent to an adviser",
                other.display()
            ),
            hint: "leave the file out; describe what matters about it in words instead".into(),
        }),
    }
}

/// Text piped on stdin that has the shape of a credential file.
pub fn check_stdin_content(text: &str, what: &str) -> Result<()> {
    match super::credential_guard::credential_content(text) {
        None => Ok(()),
        Some(why) => Err(Error::Refused {
            kind: "credential_file",
            message: format!(
                "refusing to send {what} read from stdin: {why}; credential-like content is \
                 never sent to an adviser"
            ),
            hint: "pipe something else; describe what matters about the settings in words \
                   instead"
                .into(),
        }),
    }
}

fn check_credential(given: &str, path: &Path) -> Result<()> {
    match credential_reason(path) {
        None => Ok(()),
        Some(why) => {
            let resolved = if path == Path::new(given) {
                String::new()
            } else {
                format!(" (resolves to {})", path.display())
            };
            Err(Error::Refused {
                kind: "credential_file",
                message: format!(
                    "refusing to read `{given}`{resolved}: {why}; credential-like files are never \
                     sent to an adviser"
                ),
                hint: "leave the file out; describe what matters about it in words instead".into(),
            })
        }
    }
}

/// Paths a unified diff touches (from its `diff --git`, `---`/`+++` and
/// rename lines).
fn diff_paths(diff: &str) -> Vec<String> {
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

fn check_diff_paths(diff: &str) -> Result<()> {
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
fn git_diff(cwd: &Path, rev: &str) -> Result<String> {
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

/// Read a `--packet`/`--previous-advice` source (`-` is stdin).
pub fn read_source(p: &Path, what: &str) -> Result<String> {
    if p.as_os_str() == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| Error::io(format!("reading {what} from stdin"), e))?;
        check_stdin_content(&s, what)?;
        return Ok(s);
    }
    // The same rule as for inlined files: a credential file is not opened.
    check_credential(&p.display().to_string(), p)?;
    if let Ok(c) = p.canonicalize() {
        check_credential(&p.display().to_string(), &c)?;
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        check_hardlink(
            &p.display().to_string(),
            &c,
            &crate::fsutil::project_root(&cwd),
        )?;
    }
    std::fs::read_to_string(p).map_err(|e| Error::usage(format!("{what} {}: {e}", p.display())))
}

/// Earlier advice from a file: a whole `baton ask` result (its `advice`), a
/// multi-adviser result (each adviser's `advice`), bare advice, or text.
pub fn previous_advice(text: &str) -> Value {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) if m.get("advice").is_some_and(|a| !a.is_null()) => {
            m["advice"].clone()
        }
        Ok(Value::Object(m)) if m.get("results").is_some_and(Value::is_array) => Value::Array(
            m["results"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|r| !r["advice"].is_null())
                .map(|r| serde_json::json!({"agent": r["agent"], "advice": r["advice"]}))
                .collect(),
        ),
        Ok(v) => v,
        Err(_) => Value::String(text.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn no_env() -> Redactor {
        Redactor::with_env(Vec::<(String, String)>::new())
    }

    fn input(q: &str) -> PacketInput {
        PacketInput {
            question: Some(q.into()),
            ..Default::default()
        }
    }

    fn build_in(dir: &Path, i: PacketInput) -> Result<Built> {
        build(i, &DiffSource::None, dir, &no_env(), DEFAULT_MAX_CHARS)
    }

    fn sent(b: &Built) -> Value {
        serde_json::from_str(&b.text).unwrap()
    }

    #[test]
    fn fields_from_json_and_defaults() {
        let d = tempfile::tempdir().unwrap();
        let i = PacketInput::parse(
            r#"{"question":"why flaky?","help_type":"diagnosis","goal":"green CI",
                "constraints":"no new deps","tried":["rerun","bisect"],
                "snippets":["x = 1",{"label":"log","content":"E1"}],"task_id":"t-1"}"#,
            "test",
        )
        .unwrap();
        let b = build_in(d.path(), i).unwrap();
        let v = sent(&b);
        assert_eq!(v["question"], "why flaky?");
        assert_eq!(v["help_type"], "diagnosis");
        assert_eq!(v["constraints"], serde_json::json!(["no new deps"]));
        assert_eq!(v["tried"], serde_json::json!(["rerun", "bisect"]));
        assert_eq!(v["snippets"][1]["label"], "log");
        // Bookkeeping stays with baton.
        assert!(v.get("task_id").is_none());
        assert_eq!(b.task_id.as_deref(), Some("t-1"));
        assert_eq!(b.sha256, hex(&Sha256::digest(b.text.as_bytes())));
        assert_eq!(b.sha256.len(), 64);

        let v = sent(&build_in(d.path(), input("q")).unwrap());
        assert_eq!(v["help_type"], "other");
        assert!(v.get("files").is_none() && v.get("diff").is_none());
    }

    #[test]
    fn packet_json_is_strict() {
        assert!(PacketInput::parse(r#"{"question":"q","questoin":"typo"}"#, "x").is_err());
        assert!(PacketInput::parse(r#"{"question":"q","help_type":"chat"}"#, "x").is_err());
        assert!(HelpType::parse("design-critique").is_ok());
        assert!(HelpType::parse("gossip").is_err());
    }

    #[test]
    fn question_required_and_follow_up_pairs() {
        let d = tempfile::tempdir().unwrap();
        assert!(build_in(d.path(), input("  ")).is_err());
        let mut i = input("q");
        i.follow_up = Some("and now?".into());
        assert!(build_in(d.path(), i.clone()).is_err());
        i.previous_advice = Some(serde_json::json!({"recommendation": "x"}));
        let v = sent(&build_in(d.path(), i).unwrap());
        assert_eq!(v["previous_advice"]["recommendation"], "x");
        assert_eq!(v["follow_up"], "and now?");
    }

    #[test]
    fn files_with_line_ranges_are_inlined() {
        let d = tempfile::tempdir().unwrap();
        let text: String = (1..=10).map(|n| format!("line {n}\n")).collect();
        fs::create_dir(d.path().join("src")).unwrap();
        fs::write(d.path().join("src/a.rs"), &text).unwrap();
        let mut i = input("q");
        i.files = vec![
            FileRef::Spec("src/a.rs:3-4".into()),
            FileRef::Spec("src/a.rs:9-".into()),
            FileRef::Spec("src/a.rs:7".into()),
            FileRef::Range(FileRange {
                path: "src/a.rs".into(),
                start_line: Some(2),
                end_line: Some(99),
            }),
            FileRef::Spec("src/a.rs".into()),
        ];
        let b = build_in(d.path(), i).unwrap();
        let v = sent(&b);
        assert_eq!(v["files"][0]["content"], "line 3\nline 4\n");
        assert_eq!(v["files"][0]["start_line"], 3);
        assert_eq!(v["files"][0]["end_line"], 4);
        assert_eq!(v["files"][1]["content"], "line 9\nline 10\n");
        assert_eq!(v["files"][2]["content"], "line 7\n");
        assert_eq!(v["files"][3]["end_line"], 10);
        assert_eq!(v["files"][4]["content"], text.as_str());
        assert_eq!(
            b.files[0],
            FileInfo {
                path: "src/a.rs".into(),
                start_line: 3,
                end_line: 4,
                chars: 14
            }
        );
    }

    #[test]
    fn bad_files_are_usage_errors() {
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join("a.txt"), "one\ntwo\n").unwrap();
        fs::write(d.path().join("bin"), b"\x7fELF\0\0").unwrap();
        for spec in ["missing.txt", "a.txt:5", "a.txt:0", "a.txt:2-1", "bin", "."] {
            let mut i = input("q");
            i.files = vec![FileRef::Spec(spec.into())];
            let e = build_in(d.path(), i).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{spec}: {e}");
        }
        // A name with a colon that exists is a name, not a range.
        fs::write(d.path().join("odd:1"), "x\n").unwrap();
        let mut i = input("q");
        i.files = vec![FileRef::Spec("odd:1".into())];
        assert_eq!(
            sent(&build_in(d.path(), i).unwrap())["files"][0]["content"],
            "x\n"
        );
    }

    #[test]
    fn credential_paths_are_recognised() {
        let refused = [
            ".env",
            "app/.env.local",
            "certs/server.pem",
            "tls/private.KEY",
            "home/u/.ssh/config",
            "id_rsa",
            "id_ed25519.pub",
            ".netrc",
            "web/.npmrc",
            "auth.json",
            "credentials",
            "gcp/credentials.json",
            "u/.aws/config",
            "u/.gnupg/pubring.kbx",
            "u/.codex/config.toml",
            "u/.claude/settings.json",
            "u/.config/gcloud/application_default_credentials.json",
        ];
        for p in refused {
            assert!(credential_reason(Path::new(p)).is_some(), "{p}");
        }
        let allowed = [
            "src/env.rs",
            "environment.md",
            "keys.rs",
            "src/key_value.rs",
            "docs/ssh.md",
            "u/.config/nvim/init.lua",
            "my_credentials_doc.md",
            "package.json",
            "README",
        ];
        for p in allowed {
            assert_eq!(credential_reason(Path::new(p)), None, "{p}");
        }
    }

    #[test]
    fn credential_files_are_refused_before_reading() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        fs::create_dir_all(r.join("proj/sub")).unwrap();
        fs::create_dir_all(r.join(".ssh")).unwrap();
        fs::write(r.join(".ssh/id"), "KEY").unwrap();
        fs::write(r.join("proj/.env"), "A=1").unwrap();
        fs::write(r.join("proj/ok.txt"), "ok").unwrap();
        std::os::unix::fs::symlink(r.join(".ssh/id"), r.join("proj/notes.txt")).unwrap();
        std::os::unix::fs::symlink(r.join("proj/ok.txt"), r.join("proj/.env.link")).unwrap();
        let cwd = r.join("proj");
        for (spec, needle) in [
            (".env", "`.env` files"),
            ("sub/../../.ssh/id", "under `.ssh`"),
            ("notes.txt", "under `.ssh`"),
            (".env.link", "`.env` files"),
        ] {
            let mut i = input("q");
            i.files = vec![FileRef::Spec(spec.into())];
            let e = build_in(&cwd, i).unwrap_err();
            assert_eq!(e.kind(), "credential_file", "{spec}");
            assert_eq!(e.exit_code(), 2);
            let m = e.to_string();
            assert!(m.contains(spec) && m.contains(needle), "{m}");
        }
    }

    #[test]
    fn diffs_touching_credentials_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let mut i = input("q");
        i.diff = Some(
            "diff --git a/src/a.rs b/src/a.rs\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1 @@\n-a\n+b\n"
                .into(),
        );
        assert!(build_in(d.path(), i.clone()).is_ok());
        i.diff = Some(
            "diff --git a/.env b/.env\nnew file mode 100644\n--- /dev/null\n+++ b/.env\n@@ -0,0 +1 @@\n+X=1\n"
                .into(),
        );
        let e = build_in(d.path(), i).unwrap_err();
        assert_eq!(e.kind(), "credential_file");
        assert!(e.to_string().contains("`.env`"));
    }

    #[test]
    fn secrets_are_redacted_everywhere_and_counted() {
        let d = tempfile::tempdir().unwrap();
        fs::write(
            d.path().join("cfg.toml"),
            "token = \"ghp_1234567890abcdefghijABCDEFGHIJ123456\"\n",
        )
        .unwrap();
        let mut i = input("why does sk-proj-Abc123Def456Ghi789Jkl012Mno345 fail?");
        i.files = vec![FileRef::Spec("cfg.toml".into())];
        i.previous_advice = Some(serde_json::json!({"risks": ["leaks hunter2hunter2"]}));
        i.follow_up = Some("ok?".into());
        let r = Redactor::with_env([("DB_PASSWORD".to_string(), "hunter2hunter2".to_string())]);
        let b = build(i, &DiffSource::None, d.path(), &r, DEFAULT_MAX_CHARS).unwrap();
        assert!(!b.text.contains("ghp_1234") && !b.text.contains("sk-proj"));
        assert!(!b.text.contains("hunter2"));
        assert_eq!(b.redactions["api_key"], 1);
        assert_eq!(b.redactions["github_token"], 1);
        assert_eq!(b.redactions["env:DB_PASSWORD"], 1);
    }

    #[test]
    fn over_the_limit_is_refused_not_truncated() {
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join("big.txt"), "x".repeat(5000)).unwrap();
        let mut i = input("q");
        i.files = vec![FileRef::Spec("big.txt".into())];
        let ok = build(i.clone(), &DiffSource::None, d.path(), &no_env(), 6000).unwrap();
        assert!(ok.text.contains(&"x".repeat(5000)));
        let e = build(i.clone(), &DiffSource::None, d.path(), &no_env(), 4000).unwrap_err();
        assert_eq!(e.kind(), "packet_too_large");
        assert_eq!(e.exit_code(), 2);
        let m = e.to_string();
        assert!(
            m.contains("4000") && m.contains("file `big.txt` 5000"),
            "{m}"
        );
        // A file that cannot possibly fit is refused before it is read.
        let e = build(i, &DiffSource::None, d.path(), &no_env(), 1000).unwrap_err();
        assert!(e.to_string().contains("was not read"), "{e}");
    }

    #[test]
    fn git_diff_of_the_work_tree() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        let sh = |args: &[&str]| {
            assert!(
                git::git(r)
                    .args(args)
                    .env("GIT_AUTHOR_NAME", "t")
                    .env("GIT_AUTHOR_EMAIL", "t@t")
                    .env("GIT_COMMITTER_NAME", "t")
                    .env("GIT_COMMITTER_EMAIL", "t@t")
                    .stdout(Stdio::null())
                    .status()
                    .unwrap()
                    .success()
            )
        };
        sh(&["init", "-q"]);
        fs::write(r.join("a.txt"), "one\n").unwrap();
        sh(&["add", "."]);
        sh(&["commit", "-qm", "init"]);
        let head = DiffSource::Git("HEAD".into());
        // Nothing changed: refused rather than sending an empty review.
        assert!(build(input("q"), &head, r, &no_env(), DEFAULT_MAX_CHARS).is_err());
        fs::write(r.join("a.txt"), "two\n").unwrap();
        let b = build(input("q"), &head, r, &no_env(), DEFAULT_MAX_CHARS).unwrap();
        let diff = sent(&b)["diff"].as_str().unwrap().to_string();
        assert!(diff.contains("-one") && diff.contains("+two"), "{diff}");
        assert_eq!(b.diff_chars, Some(diff.chars().count()));
        let bad = DiffSource::Git("--output=/tmp/x".into());
        assert!(build(input("q"), &bad, r, &no_env(), DEFAULT_MAX_CHARS).is_err());
        // A staged credential file is refused by name.
        fs::write(r.join(".env"), "SECRET=1\n").unwrap();
        sh(&["add", ".env"]);
        let e = build(input("q"), &head, r, &no_env(), DEFAULT_MAX_CHARS).unwrap_err();
        assert_eq!(e.kind(), "credential_file");
    }

    #[test]
    fn previous_advice_sources() {
        let adv = previous_advice(r#"{"status":"success","advice":{"recommendation":"a"}}"#);
        assert_eq!(adv, serde_json::json!({"recommendation": "a"}));
        let multi = previous_advice(
            r#"{"results":[{"agent":"codex","advice":{"recommendation":"a"}},{"agent":"claude","advice":null}]}"#,
        );
        assert_eq!(
            multi,
            serde_json::json!([{"agent": "codex", "advice": {"recommendation": "a"}}])
        );
        assert_eq!(
            previous_advice("just text"),
            Value::String("just text".into())
        );
    }
}
