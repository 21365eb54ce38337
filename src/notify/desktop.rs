//! The desktop channel. Linux: the freedesktop notification service,
//! reached through the system's `notify-send` (libnotify) started with an
//! argv array; macOS: `osascript` with the text passed as arguments of an
//! `on run argv` handler, never spliced into the script.
//!
//! Why `notify-send` rather than a D-Bus client of our own: it costs the
//! binary nothing, it follows the session bus address, activation and the
//! server's capabilities exactly as every other program on the desktop
//! does, and a desktop that shows notifications has it (libnotify-bin on
//! Debian, libnotify on Fedora and Arch). Where it is missing, the failed
//! delivery and `baton doctor` say which package brings it.

use std::ffi::OsString;
use std::time::Duration;

use crate::process::Failed;

/// How long the helper may take (a bus that does not answer).
pub const DEADLINE: Duration = Duration::from_secs(10);

/// The helper's argv for one notification on this platform.
pub fn argv(title: &str, body: &str) -> Vec<OsString> {
    argv_for(cfg!(target_os = "macos"), title, body)
}

fn argv_for(macos: bool, title: &str, body: &str) -> Vec<OsString> {
    let v: Vec<&str> = if macos {
        vec![
            "osascript",
            "-e",
            "on run argv",
            "-e",
            "display notification (item 2 of argv) with title (item 1 of argv)",
            "-e",
            "end run",
            "--",
            title,
            body,
        ]
    } else {
        vec!["notify-send", "--app-name=baton", "--", title, body]
    };
    v.into_iter().map(OsString::from).collect()
}

/// The package that brings the helper (for messages).
pub fn helper_hint() -> &'static str {
    if cfg!(target_os = "macos") {
        "osascript is part of macOS"
    } else {
        "install libnotify's notify-send (Debian/Ubuntu: libnotify-bin; Fedora, Arch: libnotify)"
    }
}

pub fn deliver(title: &str, body: &str) -> Result<(), String> {
    let argv = argv(title, body);
    let program = argv[0].to_string_lossy().into_owned();
    let out = crate::process::Command::new(&argv[0])
        .args(&argv[1..])
        .deadline(DEADLINE)
        .grace(Duration::from_secs(1))
        .output()
        .map_err(|e| match e {
            Failed::Spawn(e) if e.kind() == std::io::ErrorKind::NotFound => {
                format!("`{program}` is not installed: {}", helper_hint())
            }
            Failed::Spawn(e) => format!("could not start `{program}`: {e}"),
            other => format!("`{program}`: {other}"),
        })?;
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let last = said
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    Err(format!(
        "`{program}` failed ({}): {}",
        out.status,
        super::clean(last)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(a: Vec<OsString>) -> Vec<String> {
        a.iter().map(|x| x.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn the_text_is_passed_as_arguments_never_as_script() {
        let title = "t\" & do shell script \"touch /tmp/pwned";
        let s = strings(argv_for(false, title, "-b"));
        assert_eq!(s, ["notify-send", "--app-name=baton", "--", title, "-b"]);
        let s = strings(argv_for(true, title, "-b"));
        assert_eq!(
            s,
            [
                "osascript",
                "-e",
                "on run argv",
                "-e",
                "display notification (item 2 of argv) with title (item 1 of argv)",
                "-e",
                "end run",
                "--",
                title,
                "-b"
            ]
        );
        assert_eq!(
            strings(argv("T", "B")).len(),
            if cfg!(target_os = "macos") { 10 } else { 5 }
        );
    }
}
