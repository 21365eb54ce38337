//! What `baton setup` did (or, with `--dry-run`, would do), per host: the
//! JSON report and its text form for people.

use std::path::PathBuf;

use serde::Serialize;

use super::host::Scope;

#[derive(Debug, Serialize)]
pub struct Report {
    pub schema_version: u32,
    /// `ok`, or `conflict` when a file was skipped because setup did not
    /// write it (exit 2; `--force` replaces or removes it).
    pub status: &'static str,
    /// `install` or `uninstall`.
    pub action: &'static str,
    pub scope: Scope,
    /// Nothing was written or removed; the lists say what would be.
    pub dry_run: bool,
    /// The baton binary the written skill calls.
    pub baton: PathBuf,
    /// Where setup records what it wrote.
    pub manifest: PathBuf,
    pub hosts: Vec<HostReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct HostReport {
    /// `claude`, `codex`, `pi`, `gemini`, or `man` for the man pages.
    pub host: &'static str,
    /// The directory the host reads (its skills dir, or man1).
    pub dir: PathBuf,
    pub written: Vec<PathBuf>,
    pub skipped: Vec<Skipped>,
    pub removed: Vec<PathBuf>,
}

#[derive(Debug, Serialize)]
pub struct Skipped {
    pub path: PathBuf,
    /// `unchanged`, `not_ours` (conflict), `changed` (conflict on
    /// uninstall: edited since setup wrote it), `link` (conflict on
    /// uninstall: the path leads through a symlink setup did not make, so
    /// nothing is removed through it, not even with `--force`), `unreadable`
    /// (conflict: a host's config file that is not valid JSON or TOML) or `gone`.
    pub reason: &'static str,
    /// Why, where the reason alone does not say (which link, what is there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl HostReport {
    pub fn new(host: &'static str, dir: PathBuf) -> HostReport {
        HostReport {
            host,
            dir,
            written: Vec::new(),
            skipped: Vec::new(),
            removed: Vec::new(),
        }
    }

    pub fn skip(&mut self, path: PathBuf, reason: &'static str) {
        self.skipped.push(Skipped {
            path,
            reason,
            detail: None,
        });
    }

    pub fn skip_because(&mut self, path: PathBuf, reason: &'static str, detail: String) {
        self.skipped.push(Skipped {
            path,
            reason,
            detail: Some(detail),
        });
    }

    pub fn has_conflict(&self) -> bool {
        self.skipped.iter().any(|s| is_conflict(s.reason))
    }
}

fn is_conflict(reason: &str) -> bool {
    matches!(reason, "not_ours" | "changed" | "link" | "unreadable")
}

impl Report {
    pub fn exit_code(&self) -> i32 {
        if self.status == "ok" {
            crate::error::exit::SUCCESS
        } else {
            crate::error::exit::USAGE
        }
    }
}

impl crate::output::render::Render for Report {
    fn exit_code(&self) -> i32 {
        Report::exit_code(self)
    }

    fn text(&self) -> String {
        let would = if self.dry_run { "would " } else { "" };
        let (write, remove) = if self.dry_run {
            ("write", "remove")
        } else {
            ("wrote", "removed")
        };
        let mut out = String::new();
        for h in &self.hosts {
            out.push_str(&format!("{} ({}):\n", h.host, h.dir.display()));
            for p in &h.written {
                out.push_str(&format!("  {would}{write} {}\n", p.display()));
            }
            for p in &h.removed {
                out.push_str(&format!("  {would}{remove} {}\n", p.display()));
            }
            for s in &h.skipped {
                let why = match s.reason {
                    "unchanged" => "already up to date",
                    "not_ours" => "CONFLICT: not written by baton setup",
                    "changed" => "CONFLICT: changed since baton setup wrote it",
                    "link" => "CONFLICT: reached through a symlink baton setup did not make",
                    "unreadable" => "CONFLICT: not valid JSON or TOML, left alone",
                    _ => "already gone",
                };
                out.push_str(&format!("  skipped {} ({why})\n", s.path.display()));
                if let Some(d) = &s.detail {
                    out.push_str(&format!("    {d}\n"));
                }
            }
            if h.written.is_empty() && h.removed.is_empty() && h.skipped.is_empty() {
                out.push_str("  nothing to do\n");
            }
        }
        if let Some(hint) = &self.hint {
            out.push_str(&format!("hint: {hint}\n"));
        }
        out
    }
}
