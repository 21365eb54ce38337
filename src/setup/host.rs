//! The hosts `baton setup` installs the `peer` skill for, and where each one
//! reads skills from (per scope), as the real CLIs do it.
//!
//! Each location was read from the pinned CLI itself and is proven by
//! `make e2e` (tests/e2e/setup.rs): after `baton setup`, a real session of
//! the host offers the skill to the model.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};

/// A coding-agent CLI that can load baton's skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Host {
    Claude,
    Codex,
    Pi,
    Gemini,
}

impl Host {
    pub const ALL: [Host; 4] = [Host::Claude, Host::Codex, Host::Pi, Host::Gemini];

    pub fn name(self) -> &'static str {
        match self {
            Host::Claude => "claude",
            Host::Codex => "codex",
            Host::Pi => "pi",
            Host::Gemini => "gemini",
        }
    }

    pub fn parse(s: &str) -> Option<Host> {
        match s {
            "claude" | "claude-code" => Some(Host::Claude),
            "codex" => Some(Host::Codex),
            "pi" => Some(Host::Pi),
            "gemini" | "gemini-cli" => Some(Host::Gemini),
            _ => None,
        }
    }

    /// The directory holding one folder per skill, for `scope`.
    pub fn skills_dir(self, scope: Scope, places: &Places) -> Result<PathBuf> {
        let user = |var: &str, default: &[&str]| -> Result<PathBuf> {
            match places.var(var) {
                Some(dir) => Ok(PathBuf::from(dir)),
                None => Ok(default
                    .iter()
                    .fold(places.home()?.to_path_buf(), |p, c| p.join(c))),
            }
        };
        Ok(match (self, scope) {
            // claude reads `<config dir>/skills`; CLAUDE_CONFIG_DIR moves the
            // whole config dir (the e2e suite relies on it).
            (Host::Claude, Scope::User) => user("CLAUDE_CONFIG_DIR", &[".claude"])?.join("skills"),
            (Host::Claude, Scope::Project) => places.project.join(".claude/skills"),
            // codex scans `$CODEX_HOME/skills` (default ~/.codex/skills) for
            // the user and `.codex/skills` in the project.
            (Host::Codex, Scope::User) => user("CODEX_HOME", &[".codex"])?.join("skills"),
            (Host::Codex, Scope::Project) => places.project.join(".codex/skills"),
            // pi: `<agent dir>/skills` (PI_CODING_AGENT_DIR, default
            // ~/.pi/agent) and `.pi/skills` in the project.
            (Host::Pi, Scope::User) => {
                user("PI_CODING_AGENT_DIR", &[".pi", "agent"])?.join("skills")
            }
            (Host::Pi, Scope::Project) => places.project.join(".pi/skills"),
            // gemini: `~/.gemini/skills` (where `gemini skills install`
            // copies to; GEMINI_CLI_HOME replaces ~) and `.gemini/skills`.
            (Host::Gemini, Scope::User) => user("GEMINI_CLI_HOME", &[])?.join(".gemini/skills"),
            (Host::Gemini, Scope::Project) => places.project.join(".gemini/skills"),
        })
    }
}

/// Where the files go: the user's home (every project) or this project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    User,
    Project,
}

impl Scope {
    pub fn parse(s: &str) -> Result<Scope> {
        match s {
            "user" => Ok(Scope::User),
            "project" => Ok(Scope::Project),
            _ => Err(Error::usage_hint(
                format!("unknown scope `{s}`"),
                "use `--scope user` (your home, the default) or `--scope project` (this repository)",
            )),
        }
    }
}

/// The environment setup resolves paths against (a struct, not
/// `std::env`, so tests give each case its own home).
#[derive(Debug, Clone)]
pub struct Places {
    pub home: Option<PathBuf>,
    /// The project root: the enclosing git work tree, else the directory.
    pub project: PathBuf,
    pub vars: Vec<(String, String)>,
}

const VARS: [&str; 7] = [
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "PI_CODING_AGENT_DIR",
    "GEMINI_CLI_HOME",
    "XDG_STATE_HOME",
    "XDG_DATA_HOME",
    "XDG_CONFIG_HOME",
];

impl Places {
    pub fn from_env() -> Result<Places> {
        let cwd =
            std::env::current_dir().map_err(|e| Error::io("reading the current directory", e))?;
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let vars = VARS
            .iter()
            .filter_map(|k| Some((k.to_string(), std::env::var(k).ok()?)))
            .collect();
        Ok(Places {
            home,
            project: crate::fsutil::project_root(&cwd),
            vars,
        })
    }

    /// A variable's value when set, absolute and non-empty (a relative one
    /// would depend on where setup runs, so it is ignored like the hosts do).
    pub fn var(&self, key: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|(k, v)| k == key && Path::new(v).is_absolute())
            .map(|(_, v)| v.as_str())
    }

    pub fn home(&self) -> Result<&Path> {
        self.home.as_deref().ok_or_else(|| {
            Error::usage_hint(
                "HOME is not set, so the user-wide skill directories are unknown",
                "set HOME, or use `--scope project`",
            )
        })
    }

    /// `$XDG_STATE_HOME/baton` (default ~/.local/state/baton): the user-scope manifest's home.
    pub fn state_dir(&self) -> Result<PathBuf> {
        Ok(match self.var("XDG_STATE_HOME") {
            Some(d) => PathBuf::from(d),
            None => self.home()?.join(".local/state"),
        }
        .join("baton"))
    }

    /// `$XDG_DATA_HOME/man/man1` (default ~/.local/share/man/man1), which
    /// man-db searches for a user's pages without any MANPATH setting.
    pub fn man1_dir(&self) -> Result<PathBuf> {
        Ok(match self.var("XDG_DATA_HOME") {
            Some(d) => PathBuf::from(d),
            None => self.home()?.join(".local/share"),
        }
        .join("man/man1"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(vars: &[(&str, &str)]) -> Places {
        Places {
            home: Some("/h".into()),
            project: "/p".into(),
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn user_and_project_dirs() {
        let p = places(&[]);
        let dir = |h: Host, s| h.skills_dir(s, &p).unwrap();
        assert_eq!(
            dir(Host::Claude, Scope::User),
            Path::new("/h/.claude/skills")
        );
        assert_eq!(dir(Host::Codex, Scope::User), Path::new("/h/.codex/skills"));
        assert_eq!(dir(Host::Pi, Scope::User), Path::new("/h/.pi/agent/skills"));
        assert_eq!(
            dir(Host::Gemini, Scope::User),
            Path::new("/h/.gemini/skills")
        );
        assert_eq!(
            dir(Host::Claude, Scope::Project),
            Path::new("/p/.claude/skills")
        );
        assert_eq!(
            dir(Host::Gemini, Scope::Project),
            Path::new("/p/.gemini/skills")
        );
        assert_eq!(p.state_dir().unwrap(), Path::new("/h/.local/state/baton"));
        assert_eq!(p.man1_dir().unwrap(), Path::new("/h/.local/share/man/man1"));
    }

    #[test]
    fn the_hosts_own_variables_move_their_dirs_when_absolute() {
        let p = places(&[
            ("CLAUDE_CONFIG_DIR", "/c"),
            ("CODEX_HOME", "relative/ignored"),
            ("PI_CODING_AGENT_DIR", "/pi"),
            ("GEMINI_CLI_HOME", "/g"),
            ("XDG_DATA_HOME", "/d"),
        ]);
        let dir = |h: Host| h.skills_dir(Scope::User, &p).unwrap();
        assert_eq!(dir(Host::Claude), Path::new("/c/skills"));
        assert_eq!(dir(Host::Codex), Path::new("/h/.codex/skills"));
        assert_eq!(dir(Host::Pi), Path::new("/pi/skills"));
        assert_eq!(dir(Host::Gemini), Path::new("/g/.gemini/skills"));
        assert_eq!(p.man1_dir().unwrap(), Path::new("/d/man/man1"));
    }

    #[test]
    fn no_home_is_a_usage_error_for_user_scope_only() {
        let mut p = places(&[]);
        p.home = None;
        assert_eq!(
            Host::Pi.skills_dir(Scope::User, &p).unwrap_err().kind(),
            "usage"
        );
        assert!(Host::Pi.skills_dir(Scope::Project, &p).is_ok());
    }
}
