//! doctor's checks of baton itself: version and commit, which binary runs
//! (and the plugin shim's `BATON_BIN`), the state directory, the config files.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{Check, Severity};
use crate::config::Config;

/// doctor's `baton` object: which baton runs, with what state and config.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct BatonInfo {
    pub version: &'static str,
    pub commit: &'static str,
    pub target: &'static str,
    /// The running binary, if known.
    pub exe: Option<PathBuf>,
    /// `BATON_BIN` (the plugin shim's choice), if set.
    pub baton_bin: Option<String>,
    /// The project's folder in the state directory, if usable.
    pub state_dir: Option<PathBuf>,
    /// The config files looked at; null when the config did not load.
    pub config_files: Option<Vec<crate::config::FileInfo>>,
}

type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

pub fn checks(
    root: &Path,
    config: &Result<Config, crate::error::Error>,
    env: Env,
) -> (Vec<Check>, BatonInfo) {
    let mut out = Vec::new();
    let exe = std::env::current_exe().ok();
    out.push(Check::ok(
        "baton.version".into(),
        format!(
            "baton {} ({}, commit {})",
            env!("CARGO_PKG_VERSION"),
            env!("BATON_TARGET"),
            env!("BATON_COMMIT")
        ),
    ));
    let bin = env("BATON_BIN").filter(|b| !b.trim().is_empty());
    out.push(match (&bin, &exe) {
        (Some(b), _) if !is_executable(Path::new(b)) => Check::problem(
            "baton.binary".into(),
            Severity::Warning,
            format!("BATON_BIN={b} is not an executable file: the plugin shim ignores it"),
            "point BATON_BIN at a baton binary, or unset it",
        ),
        (Some(b), Some(e)) => Check::ok(
            "baton.binary".into(),
            format!("running {} (BATON_BIN={b})", e.display()),
        ),
        (None, Some(e)) => Check::ok("baton.binary".into(), format!("running {}", e.display())),
        (_, None) => Check::ok("baton.binary".into(), "running (path unknown)".into()),
    });
    let (check, state) = state_dir_check(root);
    out.push(check);
    if let Some(c) = git_ignore_check(root, &root.join(".baton")) {
        out.push(c);
    }
    out.push(super::sandbox::check(crate::sandbox::probe()));
    out.push(desktop_check(config, env));
    let files = match config {
        Ok(c) => {
            let read = c.files_read();
            out.push(Check::ok(
                "baton.config".into(),
                if read.is_empty() {
                    "no config file: built-in defaults (see `baton config path`)".into()
                } else {
                    format!("config files in effect: {}", read.join(", "))
                },
            ));
            Some(c.files.clone())
        }
        Err(e) => {
            out.push(Check::problem(
                "baton.config".into(),
                Severity::Error,
                e.to_string(),
                &e.hint().unwrap_or_default(),
            ));
            None
        }
    };
    let info = BatonInfo {
        version: env!("CARGO_PKG_VERSION"),
        commit: env!("BATON_COMMIT"),
        target: env!("BATON_TARGET"),
        exe,
        baton_bin: bin,
        state_dir: state,
        config_files: files,
    };
    (out, info)
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The project's folder in the state directory (where runs, jobs and logs
/// go; docs/state.md) must be usable: safe (`state_dir` refuses one others
/// could change) and writable, or creatable. Returns the folder, if known.
fn state_dir_check(root: &Path) -> (Check, Option<std::path::PathBuf>) {
    let id = || "baton.state_dir".to_string();
    let dir = match crate::state_dir::project(root) {
        Ok(d) => d,
        Err(e) => {
            let hint = e.hint().unwrap_or_default();
            return (
                Check::problem(id(), Severity::Error, e.to_string(), &hint),
                crate::state_dir::base().ok(),
            );
        }
    };
    // The deepest part that exists decides whether the rest can be made.
    let probe = dir.ancestors().find(|a| a.exists()).unwrap_or(&dir);
    let check = if !writable(probe) {
        Check::problem(
            id(),
            Severity::Error,
            format!(
                "{} is not writable: runs cannot keep their logs and results",
                probe.display()
            ),
            &format!("check its owner and mode: ls -ld {}", probe.display()),
        )
    } else if probe == dir {
        Check::ok(id(), format!("records go to {} (writable)", dir.display()))
    } else {
        Check::ok(
            id(),
            format!("records go to {} (made on the first run)", dir.display()),
        )
    };
    (check, Some(dir))
}

/// baton writes `.baton/.gitignore` (`*`) itself; an existing `.baton/`
/// without it would show up in `git status`.
fn git_ignore_check(root: &Path, state: &Path) -> Option<Check> {
    if !root.join(".git").exists() {
        return None;
    }
    let own = std::fs::read_to_string(state.join(".gitignore"))
        .is_ok_and(|t| t.lines().any(|l| l.trim() == "*"));
    if own || !state.exists() {
        return Some(Check::ok(
            "baton.gitignore".into(),
            ".baton/ is git-ignored (its own .gitignore)".into(),
        ));
    }
    let ignored = crate::git::git(root)
        .args(["check-ignore", "-q", ".baton/x"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    Some(if ignored {
        Check::ok("baton.gitignore".into(), ".baton/ is git-ignored".into())
    } else {
        Check::problem(
            "baton.gitignore".into(),
            Severity::Warning,
            ".baton/ is not git-ignored: run logs would show in `git status`".into(),
            &format!("printf '*\\n' > {}", state.join(".gitignore").display()),
        )
    })
}

fn writable(p: &Path) -> bool {
    crate::sys::fd::access(p, libc::W_OK)
}
/// Whether the desktop notification channel can be reached; a problem is
/// a warning when `[notify] desktop = true`, information otherwise.
fn desktop_check(config: &Result<Config, crate::error::Error>, env: Env) -> Check {
    let wanted = config
        .as_ref()
        .ok()
        .and_then(|c| c.flag("notify.desktop"))
        .unwrap_or(false);
    match crate::notify::desktop::reach(env) {
        Ok(m) => Check::ok("notify.desktop".into(), m),
        Err((m, hint)) => Check::problem(
            "notify.desktop".into(),
            if wanted {
                Severity::Warning
            } else {
                Severity::Info
            },
            m,
            &hint,
        ),
    }
}
