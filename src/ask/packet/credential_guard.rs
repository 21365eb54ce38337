//! Credentials that a name check cannot see: a hard link to a credential
//! file under a harmless name, and credential content piped on stdin.
//!
//! A hard link has no target to resolve, so a file with more than one link
//! is compared (device and inode) with the credential files baton refuses by
//! name: those in the project and in the well-known places in the home
//! directory. Text read from stdin has no name at all; it is refused when it
//! has the shape of a credential file (a private key, an AWS credentials
//! file, a `.env` file of secret-named settings, a `.pgpass` or `.htpasswd`
//! file, a Terraform state).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::credentials::credential_reason;

/// Directories never worth walking into while looking for a hard link.
const SKIP_DIRS: [&str; 4] = [".git", "node_modules", "target", ".baton"];
/// A bound on the walk, so a huge tree cannot stall `ask`.
const MAX_ENTRIES: usize = 200_000;

/// If `path` (a regular file) is also a credential file under another name,
/// that name and why it is refused.
pub fn hardlinked_credential(path: &Path, project: &Path) -> Option<(PathBuf, String)> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.nlink() < 2 {
        return None;
    }
    let id = (meta.dev(), meta.ino());
    let same = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| (m.dev(), m.ino()) == id)
            .unwrap_or(false)
    };
    let mut budget = MAX_ENTRIES;
    let mut roots = vec![project.to_path_buf()];
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from) {
        for d in [
            ".ssh",
            ".aws",
            ".gnupg",
            ".codex",
            ".claude",
            ".config/gcloud",
        ] {
            roots.push(home.join(d));
        }
        for f in [
            ".netrc",
            ".npmrc",
            ".pypirc",
            ".git-credentials",
            ".env",
            ".pgpass",
        ] {
            let p = home.join(f);
            if same(&p) {
                let why = credential_reason(&p)?;
                return Some((p, why));
            }
        }
    }
    for root in roots {
        if let Some(found) = walk(&root, &same, &mut budget) {
            let why = credential_reason(&found)?;
            return Some((found, why));
        }
    }
    None
}

/// The first credential-named file under `dir` for which `same` holds.
fn walk(dir: &Path, same: &dyn Fn(&Path) -> bool, budget: &mut usize) -> Option<PathBuf> {
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            if *budget == 0 {
                return None;
            }
            *budget -= 1;
            let p = e.path();
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                let name = e.file_name();
                if !SKIP_DIRS.iter().any(|s| name == *s) {
                    todo.push(p);
                }
            } else if t.is_file() && credential_reason(&p).is_some() && same(&p) {
                return Some(p);
            }
        }
    }
    None
}

/// Why `text` looks like the content of a credential file, if it does.
pub fn credential_content(text: &str) -> Option<&'static str> {
    if private_key(text) {
        return Some("it holds a private key");
    }
    let lower = text.to_ascii_lowercase();
    if lower.lines().any(|l| {
        let l = l.trim_start();
        ["aws_secret_access_key", "aws_session_token"]
            .iter()
            .any(|k| l.starts_with(k) && l[k.len()..].trim_start().starts_with('='))
    }) {
        return Some("it is an AWS credentials file");
    }
    if dotenv_with_secrets(text) {
        return Some("it is a `.env`-style list of secret settings");
    }
    if every_line(text, crate::redact::pgpass_line) {
        return Some("it is a `.pgpass` file of PostgreSQL passwords");
    }
    if every_line(text, crate::redact::htpasswd_line) {
        return Some("it is an `.htpasswd` file of password hashes");
    }
    if terraform_state(text) {
        return Some("it is a Terraform state, which holds its resources' secrets in clear");
    }
    None
}

/// Every line that is not blank or a comment passes `shape`, and there is one.
fn every_line(text: &str, shape: fn(&str) -> bool) -> bool {
    let mut lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .peekable();
    lines.peek().is_some() && lines.all(shape)
}

/// The top-level keys every Terraform state (format 3 and 4) starts with.
fn terraform_state(text: &str) -> bool {
    let mut n = text.len().min(4096);
    while !text.is_char_boundary(n) {
        n -= 1;
    }
    let head = &text[..n];
    head.trim_start().starts_with('{')
        && head.contains("\"terraform_version\"")
        && (head.contains("\"lineage\"") || head.contains("\"serial\""))
}

fn private_key(text: &str) -> bool {
    text.match_indices("-----BEGIN ").any(|(i, _)| {
        let rest = &text[i + "-----BEGIN ".len()..];
        rest.find("-----").is_some_and(|end| {
            let label = &rest[..end];
            label.len() < 40 && label.ends_with("PRIVATE KEY")
        })
    })
}

/// Most lines `KEY=value` (comments and blank lines aside), at least two of
/// them, and at least one key named like a secret.
fn dotenv_with_secrets(text: &str) -> bool {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let keys: Vec<&str> = lines.iter().filter_map(|l| setting_key(l)).collect();
    if keys.len() < 2 || keys.len() * 10 < lines.len() * 6 {
        return false;
    }
    keys.iter().any(|k| {
        let k = k.to_ascii_uppercase();
        [
            "SECRET",
            "TOKEN",
            "PASSWORD",
            "PASSWD",
            "API_KEY",
            "APIKEY",
            "PRIVATE",
            "CREDENTIAL",
            "ACCESS_KEY",
            "AUTH",
            "DATABASE_URL",
        ]
        .iter()
        .any(|s| k.contains(s))
    })
}

/// `KEY` of a `KEY=value` (or `export KEY=value`) line.
fn setting_key(line: &str) -> Option<&str> {
    let line = line.strip_prefix("export ").unwrap_or(line);
    let (key, value) = line.split_once('=')?;
    let ok = !key.is_empty()
        && key
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !value.starts_with(' ');
    ok.then_some(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_shapes_are_recognised() {
        assert!(credential_content("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n").is_some());
        assert!(credential_content("x\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3B\n").is_some());
        assert!(
            credential_content("[default]\naws_access_key_id = AKIA\naws_secret_access_key=x\n")
                .is_some()
        );
        assert!(credential_content("# env\nDB_PASSWORD=x\nPORT=80\n\nexport HOST=h\n").is_some());
        let pgpass =
            "# ~/.pgpass\ndb.example.com:5432:app:app:Xk29vLq0pR\n*:*:*:postgres:s3cr3t!\n";
        assert!(credential_content(pgpass).unwrap().contains(".pgpass"));
        let htpasswd =
            "admin:$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/\nbob:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n";
        assert!(credential_content(htpasswd).unwrap().contains(".htpasswd"));
        let state = "{\n  \"version\": 4,\n  \"terraform_version\": \"1.9.5\",\n  \"serial\": 3,\n  \"lineage\": \"x\",\n  \"outputs\": {},\n  \"resources\": []\n}\n";
        assert!(credential_content(state).unwrap().contains("Terraform"));
        // Ordinary questions, public keys and plain settings pass.
        for ok in [
            "Why does DEBUG=1 make the login test flaky?",
            "PORT=80\nHOST=localhost\n",
            "-----BEGIN PUBLIC KEY-----\nMIIB\n",
            "set API_KEY=… in CI, then:\nrun the tests\nand see\nwhat fails\n",
            "error at src/main.rs:12:5: cannot find value\n",
            "{\"terraform_version_constraint\": \">= 1.5\"}",
            "",
        ] {
            assert_eq!(credential_content(ok), None, "{ok}");
        }
    }

    #[test]
    fn hard_links_to_credential_files_are_found() {
        let d = tempfile::tempdir().unwrap();
        let proj = d.path().join("p");
        std::fs::create_dir_all(proj.join("conf")).unwrap();
        std::fs::write(proj.join("conf/.env.local"), "A=1\n").unwrap();
        std::fs::hard_link(proj.join("conf/.env.local"), proj.join("notes.txt")).unwrap();
        std::fs::write(proj.join("plain.txt"), "x").unwrap();
        std::fs::hard_link(proj.join("plain.txt"), proj.join("plain2.txt")).unwrap();
        let (p, why) = hardlinked_credential(&proj.join("notes.txt"), &proj).unwrap();
        assert!(p.ends_with("conf/.env.local"), "{}", p.display());
        assert!(why.contains(".env"), "{why}");
        assert_eq!(hardlinked_credential(&proj.join("plain.txt"), &proj), None);
    }
}
