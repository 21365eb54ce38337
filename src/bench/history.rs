//! The first-parent history mining walks: one `git log --name-status -z`
//! call for the whole range (not a git process per commit), parsed here,
//! and the task text of a commit (a merged PR's title and body).
//!
//! Rust unit tests live inside the file they test (`#[cfg(test)] mod
//! tests`), so no path says they are tests. The rule, kept simple: in a
//! commit that changes no conventional test file, a changed `.rs` file
//! whose every diff hunk lies in its test module (from its first
//! `#[cfg(test)]` line, or the blank lines right above it, to the end of the
//! file; in the old and the new version) is a test file. It costs two more git processes
//! for the whole scan (`git log --no-walk --stdin -U0` over those commits,
//! `git cat-file --batch` for the versions), never one per commit.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::Stdio;

use crate::error::{Error, Result};

/// One first-parent commit and what it changed against its first parent.
#[derive(Debug, Clone, PartialEq)]
pub struct Commit {
    pub sha: String,
    /// Its first parent; `None` for a root commit.
    pub parent: Option<String>,
    pub merge: bool,
    pub message: String,
    /// Changed paths (a rename is a deletion and an addition).
    pub files: Vec<String>,
}

/// Which part of the history to walk.
#[derive(Debug, Clone, Default)]
pub struct Range {
    /// A date git understands (`2 weeks ago`, `2025-01-31`) or a revision:
    /// a revision walks `REV..HEAD`, else `--since=DATE`.
    pub since: Option<String>,
    /// At most this many commits looked at.
    pub max: usize,
    /// Only commits touching these paths.
    pub paths: Vec<String>,
}

/// The commits of `range`, newest first.
pub fn scan(top: &Path, range: &Range) -> Result<Vec<Commit>> {
    let mut g = crate::git::git(top);
    g.args([
        "log",
        "--first-parent",
        "--diff-merges=first-parent",
        "--name-status",
        "--no-renames",
        "-z",
        "--no-color",
        "--format=%x01%H %P%x00%B%x00",
    ])
    .arg(format!("--max-count={}", range.max));
    match &range.since {
        Some(s) if s.starts_with('-') => {
            return Err(Error::usage_hint(
                format!("--since {s:?}"),
                "give a date (2025-01-31, \"2 weeks ago\") or a revision",
            ));
        }
        Some(s) => match revision(top, s) {
            Some(sha) => {
                g.arg(format!("{sha}..HEAD"));
            }
            None => {
                g.arg(format!("--since={s}")).arg("HEAD");
            }
        },
        None => {
            g.arg("HEAD");
        }
    }
    if !range.paths.is_empty() {
        // The whole diff of each commit that touches them, not just theirs.
        g.arg("--full-diff").arg("--").args(&range.paths);
    }
    let out = g
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| Error::io("running git log", e))?;
    if !out.status.success() {
        return Err(Error::usage_hint(
            format!(
                "git log failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            "run `baton bench mine` inside a git repository with at least one commit",
        ));
    }
    Ok(parse(&out.stdout))
}

/// `rev^{commit}` as 40 hex, when `s` names a commit.
fn revision(top: &Path, s: &str) -> Option<String> {
    let out = crate::git::git(top)
        .args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
        .arg(format!("{s}^{{commit}}"))
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let sha = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && super::task::valid_sha(&sha)).then_some(sha)
}

/// `git log` output as `scan` asks for it: per commit `\x01H P…\0BODY\0`,
/// then `STATUS\0PATH\0` pairs. A body holds no NUL; a path may hold
/// anything, so it is read by position, never searched for markers.
pub fn parse(out: &[u8]) -> Vec<Commit> {
    let mut commits = Vec::new();
    let mut toks = out.split(|b| *b == 0).peekable();
    while let Some(t) = toks.next() {
        let t = trim_newlines(t);
        let Some(head) = t.strip_prefix(b"\x01") else {
            continue;
        };
        let head = String::from_utf8_lossy(head);
        let mut shas = head.split(' ');
        let sha = shas.next().unwrap_or("").to_string();
        let parents: Vec<&str> = shas.filter(|s| !s.is_empty()).collect();
        let message = String::from_utf8_lossy(toks.next().unwrap_or(b"")).into_owned();
        let mut files = Vec::new();
        while let Some(next) = toks.peek() {
            let status = trim_newlines(next);
            if status.starts_with(b"\x01") {
                break;
            }
            toks.next();
            if status.is_empty() {
                continue;
            }
            if let Some(p) = toks.next() {
                files.push(String::from_utf8_lossy(p).into_owned());
            }
        }
        commits.push(Commit {
            sha,
            parent: parents.first().map(|p| p.to_string()),
            merge: parents.len() > 1,
            message,
            files,
        });
    }
    commits
}

fn trim_newlines(t: &[u8]) -> &[u8] {
    let start = t.iter().position(|b| *b != b'\n').unwrap_or(t.len());
    &t[start..]
}

/// What the peer is told: the commit message, or for a merge commit that
/// names a pull request (`Merge pull request #N from …`) the PR's title
/// and body that follow that line.
pub fn task_text(c: &Commit) -> String {
    let m = c.message.trim();
    if c.merge
        && let Some((first, rest)) = m.split_once('\n')
        && first.starts_with("Merge pull request #")
        && !rest.trim().is_empty()
    {
        return rest.trim().to_string();
    }
    m.to_string()
}

/// One hunk of a `-U0` diff: old start and length, new start and length.
type Hunk = (u64, u64, u64, u64);

/// Of `wanted` (commit → its `.rs` files that no convention called tests),
/// the files whose changes all lie in their `#[cfg(test)]` module.
pub fn unit_test_files(
    top: &Path,
    wanted: &BTreeMap<String, (String, Vec<String>)>,
) -> Result<BTreeMap<String, Vec<String>>> {
    if wanted.is_empty() {
        return Ok(BTreeMap::new());
    }
    let mut g = crate::git::git(top);
    g.args([
        "log",
        "--no-walk=unsorted",
        "--stdin",
        "--diff-merges=first-parent",
        "--no-renames",
        "-U0",
        "--no-color",
        // Whatever `diff.noprefix` or `diff.mnemonicPrefix` say.
        "--src-prefix=a/",
        "--dst-prefix=b/",
        "--format=%x01%H",
    ])
    .args(crate::git::DIFF)
    .args(["--", "*.rs"]);
    let input: String = wanted.keys().map(|s| format!("{s}\n")).collect();
    let diff = piped(g, input, "reading the Rust diffs")?;
    let hunks = parse_hunks(&String::from_utf8_lossy(&diff));
    // Where the test module starts in each file's old and new version.
    let mut names = Vec::new();
    for (sha, (parent, files)) in wanted {
        for f in files {
            if hunks.contains_key(&(sha.clone(), f.clone())) && !f.contains('\n') {
                names.push(format!("{parent}:{f}"));
                names.push(format!("{sha}:{f}"));
            }
        }
    }
    let mut g = crate::git::git(top);
    g.args(["cat-file", "--batch"]);
    let answers = piped(g, names.join("\n") + "\n", "reading Rust files")?;
    let lines = cfg_test_lines(&answers, &names);
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (sha, (parent, files)) in wanted {
        for f in files {
            let Some(hs) = hunks.get(&(sha.clone(), f.clone())) else {
                continue;
            };
            let Some(&Some(new)) = lines.get(&format!("{sha}:{f}")) else {
                continue;
            };
            let old = lines.get(&format!("{parent}:{f}")).copied().flatten();
            if hs.iter().all(|h| in_tests(*h, old, new)) {
                out.entry(sha.clone()).or_default().push(f.clone());
            }
        }
    }
    Ok(out)
}

/// Whether a hunk lies in the test module: at or after its first line
/// (`#[cfg(test)]`, or the blank lines just above it) in the old version
/// (`old`; `None` when it had none: then only an addition counts, the module
/// being added) and in the new one (`new`).
fn in_tests((a, b, c, d): Hunk, old: Option<u64>, new: u64) -> bool {
    // A hunk without lines on one side (`-a,0`, `+c,0`) sits after line
    // `a` (`c`) of that side.
    let after = |start: u64, len: u64, region: u64| {
        if len == 0 {
            start + 1 >= region
        } else {
            start >= region
        }
    };
    match old {
        None => b == 0 && after(c, d, new),
        Some(o) => after(a, b, o) && after(c, d, new),
    }
}

/// `(commit, path) → hunks` of a `git log -U0 --format=%x01%H` output.
fn parse_hunks(diff: &str) -> BTreeMap<(String, String), Vec<Hunk>> {
    let mut out: BTreeMap<(String, String), Vec<Hunk>> = BTreeMap::new();
    let (mut sha, mut path) = (String::new(), None::<String>);
    for line in diff.lines() {
        if let Some(s) = line.strip_prefix('\x01') {
            sha = s.trim().to_string();
            path = None;
        } else if line.starts_with("diff --git ") {
            path = None;
        } else if let Some(p) = line.strip_prefix("+++ b/") {
            path = Some(p.to_string());
        } else if line.starts_with("+++ /dev/null") {
            path = None;
        } else if let (Some(p), Some(h)) = (&path, line.strip_prefix("@@ -")) {
            let mut parts = h.split(' ');
            let range = |s: Option<&str>| -> Option<(u64, u64)> {
                let s = s?.trim_start_matches(['-', '+']);
                let (start, len) = s.split_once(',').unwrap_or((s, "1"));
                Some((start.parse().ok()?, len.parse().ok()?))
            };
            if let (Some((a, b)), Some((c, d))) = (range(parts.next()), range(parts.next())) {
                out.entry((sha.clone(), p.clone()))
                    .or_default()
                    .push((a, b, c, d));
            }
        }
    }
    out
}

/// `name → first line of its test module` from the `git cat-file
/// --batch` answers to `names` (a missing object: `None`). The answers come
/// in the order asked, each `<oid> blob <size>\n…\n` or `<name> missing\n`.
fn cfg_test_lines(out: &[u8], names: &[String]) -> BTreeMap<String, Option<u64>> {
    let mut found = BTreeMap::new();
    let mut r = BufReader::new(out);
    let mut i = 0u64;
    let mut header = String::new();
    loop {
        header.clear();
        if r.read_line(&mut header).unwrap_or(0) == 0 {
            break;
        }
        let h = header.trim_end();
        let size = match h.rsplit_once(' ') {
            Some((_, n)) if !h.ends_with(" missing") && !h.ends_with(" ambiguous") => {
                n.parse::<usize>().unwrap_or(0)
            }
            _ => {
                found.insert(i, None);
                i += 1;
                continue;
            }
        };
        let mut body = vec![0u8; size + 1];
        if r.read_exact(&mut body).is_err() {
            break;
        }
        let text = String::from_utf8_lossy(&body[..size]);
        let lines: Vec<&str> = text.lines().collect();
        // The module's first line: `#[cfg(test)]`, or the blank lines
        // right above it (1-based).
        let at = lines
            .iter()
            .position(|l| l.trim() == "#[cfg(test)]")
            .map(|n| {
                let blank = lines[..n]
                    .iter()
                    .rev()
                    .take_while(|l| l.trim().is_empty())
                    .count();
                (n - blank) as u64 + 1
            });
        found.insert(i, at);
        i += 1;
    }
    names
        .iter()
        .enumerate()
        .map(|(k, name)| (name.clone(), found.get(&(k as u64)).copied().flatten()))
        .collect()
}

/// Run `g` with `input` on stdin (written by a thread, so a full pipe
/// either way cannot stall both), its stdout.
fn piped(mut g: std::process::Command, input: String, purpose: &str) -> Result<Vec<u8>> {
    let mut child = g
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| Error::io(purpose, e))?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let mut out = Vec::new();
    let _ = child
        .stdout
        .take()
        .expect("stdout is piped")
        .read_to_end(&mut out);
    let _ = writer.join();
    let status = child.wait().map_err(|e| Error::io(purpose, e))?;
    if !status.success() {
        return Err(Error::io(
            purpose,
            std::io::Error::other(format!("git: {status}")),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(message: &str, merge: bool) -> Commit {
        Commit {
            sha: "a".repeat(40),
            parent: Some("b".repeat(40)),
            merge,
            message: message.into(),
            files: vec![],
        }
    }

    #[test]
    fn a_merged_pull_request_is_told_by_its_title_and_body() {
        let m = "Merge pull request #42 from ann/fix-empty\n\nParse the empty input\n\nIt panicked on \"\".\n";
        assert_eq!(
            task_text(&commit(m, true)),
            "Parse the empty input\n\nIt panicked on \"\"."
        );
        // Not a merge: the message as written.
        assert_eq!(task_text(&commit(m, false)), m.trim());
        // A merge that names no PR, or has nothing after the line.
        assert_eq!(
            task_text(&commit("Merge branch 'x'\n\nbody", true)),
            "Merge branch 'x'\n\nbody"
        );
        assert_eq!(
            task_text(&commit("Merge pull request #1 from a/b", true)),
            "Merge pull request #1 from a/b"
        );
    }

    #[test]
    fn the_log_is_read_by_position() {
        let out = b"\x01aaa bbb\0fix: x\n\nbody\n\0\0\nM\0src/a.rs\0A\0tests/\x01odd.rs\0\x01ccc\0root\n\0\0\nA\0README\0\x01ddd bbb eee\0Merge pull request #1 from x/y\n\nT\n\0\0";
        let c = parse(out);
        assert_eq!(c.len(), 3);
        assert_eq!(c[0].sha, "aaa");
        assert_eq!(c[0].parent.as_deref(), Some("bbb"));
        assert_eq!(c[0].files, ["src/a.rs", "tests/\x01odd.rs"]);
        assert_eq!(c[0].message, "fix: x\n\nbody\n");
        assert_eq!(c[1].parent, None);
        assert_eq!(c[1].files, ["README"]);
        assert!(c[2].merge && c[2].files.is_empty());
        assert_eq!(task_text(&c[2]), "T");
    }

    #[test]
    fn a_hunk_counts_as_a_test_only_after_the_cfg_test_line() {
        // The module from line 10 in both versions.
        assert!(in_tests((12, 1, 12, 2), Some(10), 10));
        assert!(in_tests((10, 1, 10, 1), Some(10), 10));
        assert!(!in_tests((9, 1, 9, 1), Some(10), 10));
        assert!(!in_tests((5, 1, 5, 1), Some(10), 10));
        assert!(!in_tests((12, 1, 5, 1), Some(10), 10));
        // Lines deleted after line 9 of the new version: at the module's start.
        assert!(in_tests((10, 2, 9, 0), Some(10), 10));
        assert!(!in_tests((9, 2, 8, 0), Some(10), 10));
        // A test module added at the end of a file that had none.
        assert!(in_tests((20, 0, 21, 8), None, 21));
        assert!(!in_tests((3, 1, 3, 1), None, 21));
        let h = parse_hunks(
            "\x01abc\ndiff --git a/src/x.rs b/src/x.rs\n--- a/src/x.rs\n+++ b/src/x.rs\n@@ -12 +12,2 @@ mod tests {\n-a\n+b\n+c\n",
        );
        assert_eq!(h[&("abc".into(), "src/x.rs".into())], [(12, 1, 12, 2)]);
    }

    use crate::git::test_git as git;

    fn commit_file(dir: &Path, path: &str, text: &str) -> String {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-qm", path]);
        git(dir, &["rev-parse", "HEAD"])
    }

    #[test]
    fn a_rust_file_changed_only_in_its_test_module_is_a_test_file() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        git(r, &["init", "-q"]);
        let lib = |f: u32, t: u32| {
            format!(
                "pub fn f() -> u32 {{\n    {f}\n}}\n\n#[cfg(test)]\nmod tests {{\n    #[test]\n    fn t() {{\n        assert_eq!(super::f(), {t});\n    }}\n}}\n"
            )
        };
        let c0 = commit_file(r, "src/a.rs", &lib(1, 1));
        let test_only = commit_file(r, "src/a.rs", &lib(1, 2));
        let code_only = commit_file(r, "src/a.rs", &lib(3, 2));
        let both = commit_file(r, "src/a.rs", &lib(4, 4));
        // A test module added to a file that had none.
        let plain = commit_file(r, "src/b.rs", "pub fn g() {}\n");
        let added = commit_file(
            r,
            "src/b.rs",
            "pub fn g() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n",
        );
        let scanned = scan(
            r,
            &Range {
                max: 10,
                ..Range::default()
            },
        )
        .unwrap();
        assert_eq!(scanned.len(), 6);
        let wanted: BTreeMap<String, (String, Vec<String>)> = scanned
            .iter()
            .filter_map(|c| Some((c.sha.clone(), (c.parent.clone()?, c.files.clone()))))
            .collect();
        let found = unit_test_files(r, &wanted).unwrap();
        let tests: Vec<&String> = found.keys().collect();
        let mut want = vec![&test_only, &added];
        want.sort();
        assert_eq!(
            tests, want,
            "code_only {code_only}, both {both}, plain {plain}, root {c0}"
        );
        assert_eq!(found[&test_only], ["src/a.rs"]);
    }
}
