//! Which backend this machine offers, found once per process: bubblewrap
//! is tried for real (a trivial `bwrap … true` with the namespaces baton
//! asks for), since a kernel, AppArmor or a container can refuse user
//! namespaces whatever is installed; then Landlock's ABI; then what
//! already confines baton itself (never nest by accident).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use super::{Backend, Network};
use crate::process::{self, Failed};

/// The oldest Landlock baton uses: ABI 3 (Linux 6.2) governs truncate;
/// before it a confined child could empty any file it can read.
pub const MIN_LANDLOCK_ABI: u8 = 3;

/// What the probe found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Availability {
    /// bubblewrap's path and whether it has `--disable-userns`, or why
    /// it cannot be used here.
    pub bwrap: Result<(PathBuf, bool), String>,
    /// Landlock's ABI (0: none).
    pub landlock_abi: u8,
    /// Why unprivileged user namespaces are refused, when the system says
    /// so (`apparmor`: Ubuntu's `kernel.apparmor_restrict_unprivileged_userns`).
    pub userns_blocked: Option<String>,
    /// What confines baton already (a container, a host's sandbox, baton's).
    pub outer: Vec<String>,
    /// macOS `/usr/bin/sandbox-exec` is there.
    pub seatbelt: bool,
}

impl Availability {
    /// The best backend, or why there is none.
    pub fn best(&self) -> Result<Backend, String> {
        if self.seatbelt {
            return Ok(Backend::Seatbelt);
        }
        let bwrap_err = match &self.bwrap {
            Ok((path, disable_userns)) => {
                return Ok(Backend::Bwrap {
                    path: path.clone(),
                    disable_userns: *disable_userns,
                    landlock_abi: self.landlock_abi,
                });
            }
            Err(e) => e.clone(),
        };
        if self.landlock_abi >= MIN_LANDLOCK_ABI {
            return Ok(Backend::Landlock {
                abi: self.landlock_abi,
            });
        }
        let landlock = match self.landlock_abi {
            0 => "no Landlock in this kernel".to_string(),
            n => format!("Landlock ABI {n} is older than {MIN_LANDLOCK_ABI}"),
        };
        Err(format!("bubblewrap: {bwrap_err}; {landlock}"))
    }
}

/// The availability here, probed on first use.
pub fn probe() -> &'static Availability {
    static FOUND: OnceLock<Availability> = OnceLock::new();
    FOUND.get_or_init(probe_now)
}

fn probe_now() -> Availability {
    if cfg!(target_os = "macos") {
        return Availability {
            bwrap: Err("not on Linux".into()),
            landlock_abi: 0,
            userns_blocked: None,
            outer: outer(),
            seatbelt: Path::new("/usr/bin/sandbox-exec").is_file(),
        };
    }
    #[cfg(target_os = "linux")]
    let landlock_abi = super::sys::landlock_abi();
    #[cfg(not(target_os = "linux"))]
    let landlock_abi = 0;
    let bwrap = find_bwrap().and_then(|path| try_bwrap(&path));
    let userns_blocked = bwrap.as_ref().err().and_then(|_| userns_blocked());
    Availability {
        bwrap,
        landlock_abi,
        userns_blocked,
        outer: outer(),
        seatbelt: false,
    }
}

/// `bwrap` on PATH: absolute directories only, none inside the working
/// directory (a checkout could carry its own `bwrap`).
pub fn find_bwrap() -> Result<PathBuf, String> {
    let cwd = std::env::current_dir().ok();
    find_bwrap_in(
        &std::env::var_os("PATH").unwrap_or_default(),
        cwd.as_deref(),
    )
}

fn find_bwrap_in(path: &std::ffi::OsStr, cwd: Option<&Path>) -> Result<PathBuf, String> {
    let cwd = cwd.and_then(|c| std::fs::canonicalize(c).ok());
    for dir in std::env::split_paths(path) {
        if !dir.is_absolute() {
            continue;
        }
        let candidate = dir.join("bwrap");
        let Ok(real) = std::fs::canonicalize(&candidate) else {
            continue;
        };
        if cwd
            .as_ref()
            .is_some_and(|c| real.starts_with(c) && c != Path::new("/"))
        {
            continue;
        }
        if is_executable(&real) {
            return Ok(real);
        }
    }
    Err("`bwrap` is not installed (apt-get install bubblewrap)".into())
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The namespaces baton asks for, around `true`. `--disable-userns` is
/// tried first and left out on a bubblewrap older than 0.8.
fn try_bwrap(bwrap: &Path) -> Result<(PathBuf, bool), String> {
    let truth = ["/usr/bin/true", "/bin/true"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .ok_or("no `true` to try bubblewrap with")?;
    let attempt = |disable_userns: bool| -> Result<(), String> {
        let mut args: Vec<&str> = super::bwrap::namespaces(Network::All, false, disable_userns);
        args.extend([
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--",
            truth,
        ]);
        run_briefly(process::Command::new(bwrap).args(&args))
    };
    match attempt(true) {
        Ok(()) => Ok((bwrap.to_path_buf(), true)),
        Err(e) if e.contains("disable-userns") => {
            attempt(false).map(|()| (bwrap.to_path_buf(), false))
        }
        Err(e) => Err(e),
    }
}

/// Run with a 5 s deadline (through the one launcher: its own group,
/// stopped whole at the deadline); the first line of stderr on failure.
fn run_briefly(cmd: process::Command) -> Result<(), String> {
    let out = match cmd
        .stdout(Stdio::null())
        .deadline(Duration::from_secs(5))
        .output()
    {
        Ok(o) => o,
        Err(Failed::TimedOut(_)) => return Err("bwrap did not answer within 5 s".into()),
        Err(e) => return Err(format!("cannot start bwrap: {e}")),
    };
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no message");
    Err(format!(
        "bwrap failed here ({}): {}",
        out.status,
        line.trim()
    ))
}

/// What the system says about unprivileged user namespaces.
fn userns_blocked() -> Option<String> {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
    };
    if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").as_deref() == Some("1") {
        return Some("apparmor".into());
    }
    if read("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
        return Some("kernel.unprivileged_userns_clone=0".into());
    }
    if read("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
        return Some("user.max_user_namespaces=0".into());
    }
    None
}

/// What confines this process already, by the traces each leaves.
pub fn outer() -> Vec<String> {
    let mut out = Vec::new();
    if let Some(v) = std::env::var_os(super::MARKER) {
        out.push(format!("baton's sandbox ({})", v.to_string_lossy()));
    }
    if std::env::var_os("SANDBOX_RUNTIME").is_some_and(|v| v == "1") {
        out.push("Claude Code's sandbox".into());
    }
    if let Some(v) = std::env::var_os("CODEX_SANDBOX") {
        out.push(format!("Codex's sandbox ({})", v.to_string_lossy()));
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
    };
    if field("Seccomp:").as_deref() == Some("2") {
        out.push("a seccomp filter".into());
    }
    if std::fs::read_to_string("/proc/1/comm").is_ok_and(|c| c.trim() == "bwrap") {
        out.push("bubblewrap".into());
    }
    if Path::new("/.dockerenv").exists() {
        out.push("a docker container".into());
    } else if Path::new("/run/.containerenv").exists() {
        out.push("a podman container".into());
    } else if let Some(v) = std::env::var_os("container") {
        out.push(format!("a container ({})", v.to_string_lossy()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(bwrap: Result<(PathBuf, bool), String>, abi: u8) -> Availability {
        Availability {
            bwrap,
            landlock_abi: abi,
            userns_blocked: None,
            outer: Vec::new(),
            seatbelt: false,
        }
    }

    #[test]
    fn bwrap_first_then_a_recent_enough_landlock() {
        let b = found(Ok(("/usr/bin/bwrap".into(), true)), 7);
        assert!(matches!(
            b.best(),
            Ok(Backend::Bwrap {
                landlock_abi: 7,
                ..
            })
        ));
        let l = found(Err("no userns".into()), 3);
        assert_eq!(l.best(), Ok(Backend::Landlock { abi: 3 }));
        let old = found(Err("no userns".into()), 2);
        let e = old.best().unwrap_err();
        assert!(e.contains("no userns") && e.contains("ABI 2"), "{e}");
        assert!(
            found(Err("x".into()), 0)
                .best()
                .unwrap_err()
                .contains("no Landlock")
        );
    }

    #[test]
    fn a_bwrap_in_the_working_directory_or_a_relative_dir_is_not_taken() {
        let d = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        for dir in [d.path(), other.path()] {
            let fake = dir.join("bwrap");
            std::fs::write(&fake, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
        }
        let path = std::env::join_paths([Path::new("bin"), d.path(), other.path()]).unwrap();
        let got = find_bwrap_in(&path, Some(d.path())).unwrap();
        assert_eq!(
            got,
            std::fs::canonicalize(other.path().join("bwrap")).unwrap()
        );
        let only_cwd = std::env::join_paths([d.path()]).unwrap();
        assert!(find_bwrap_in(&only_cwd, Some(d.path())).is_err());
    }
}
