//! The packet: everything an adviser is told, built from a JSON file and/or
//! flags, with files and a diff read by baton (never by the adviser).
//!
//! Order matters and is the safety argument: every path is checked for
//! credentials *before* it is opened; every string is redacted before the
//! packet is serialised; the size limit is applied to exactly the text that
//! would be sent and a packet over it is refused, never cut.

use std::io::Read;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::redact::{Counts, Redactor};

mod credential_guard;
mod credentials;
mod diff;
mod files;

use credentials::{check_credential, check_hardlink};
pub use credentials::{check_stdin_content, credential_reason};
use diff::{check_diff_paths, git_diff};
use files::inline_file;

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
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
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

/// Every string of `v` redacted (also used on council members' answers).
pub fn redact_value(v: &mut Value, r: &Redactor, counts: &mut Counts) {
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
    use crate::git;
    use std::fs;
    use std::process::Stdio;

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
