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

use super::dbus::{NOTIFICATIONS, Server};
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
    super::command::ended(&program, &out)
}

/// How long `reach` waits for each answer of the session bus.
const BUS_WAIT: Duration = Duration::from_secs(3);

/// Whether the desktop channel can be reached from here (`baton doctor`):
/// `Ok(what was found)` or `Err((the problem, its fix))`. Linux: the helper
/// on PATH, a session bus (the address from `DBUS_SESSION_BUS_ADDRESS`,
/// else `$XDG_RUNTIME_DIR/bus`), and on it a notification server that owns
/// `org.freedesktop.Notifications` or that the bus can start (`dbus`).
pub fn reach(env: &dyn Fn(&str) -> Option<String>) -> Result<String, (String, String)> {
    let program = if cfg!(target_os = "macos") {
        "osascript"
    } else {
        "notify-send"
    };
    let Some(found) = on_path(program, env) else {
        return Err((
            format!("`{program}` is not on PATH: desktop notifications cannot be shown"),
            helper_hint().to_string(),
        ));
    };
    if cfg!(target_os = "macos") {
        return Ok(format!("desktop notifications through {}", found.display()));
    }
    let (addr, from) = match env("DBUS_SESSION_BUS_ADDRESS").filter(|a| !a.trim().is_empty()) {
        Some(a) => (a, "DBUS_SESSION_BUS_ADDRESS"),
        None => match env("XDG_RUNTIME_DIR").filter(|d| !d.trim().is_empty()) {
            Some(d) => (format!("unix:path={d}/bus"), "XDG_RUNTIME_DIR"),
            None => {
                return Err((
                    "no session bus: DBUS_SESSION_BUS_ADDRESS and XDG_RUNTIME_DIR are unset \
                     (a headless or ssh session?)"
                        .into(),
                    "run baton inside your desktop session, or use the terminal, command or \
                     url channel ([notify] in docs/notify.md)"
                        .into(),
                ));
            }
        },
    };
    let through = format!(
        "desktop notifications through {} and the session bus at {addr} (from {from})",
        found.display()
    );
    match connect(&addr) {
        Ok(stream) => match super::dbus::notification_server(stream, BUS_WAIT) {
            Ok(Server::Running) => Ok(format!(
                "{through}, where a notification server owns {NOTIFICATIONS}"
            )),
            Ok(Server::Activatable) => Ok(format!(
                "{through}, which starts a notification server ({NOTIFICATIONS}) when one is sent"
            )),
            Ok(Server::Missing) => Err((
                format!(
                    "nothing shows notifications on the session bus at {addr} (from {from}): \
                     no program owns {NOTIFICATIONS}, and the bus cannot start one"
                ),
                "start your desktop's notification daemon (dunst, mako, xfce4-notifyd, or the \
                 one your desktop ships), or use the terminal, command or url channel"
                    .into(),
            )),
            Err(e) => Err((
                format!("the session bus at {addr} (from {from}) did not answer as D-Bus: {e}"),
                "check DBUS_SESSION_BUS_ADDRESS (it should be your desktop session's bus), or \
                 use another channel"
                    .into(),
            )),
        },
        Err(e) => Err((
            format!("the session bus at {addr} (from {from}) does not accept a connection: {e}"),
            "run baton inside your desktop session (its DBUS_SESSION_BUS_ADDRESS), or use \
             another channel"
                .into(),
        )),
    }
}

/// Connect to the first `unix:` address of a D-Bus address list.
fn connect(addr: &str) -> Result<std::os::unix::net::UnixStream, String> {
    for one in addr.split(';') {
        let Some(kv) = one.strip_prefix("unix:") else {
            continue;
        };
        for pair in kv.split(',') {
            match pair.split_once('=') {
                Some(("path", p)) => {
                    return std::os::unix::net::UnixStream::connect(p).map_err(|e| e.to_string());
                }
                #[cfg(target_os = "linux")]
                Some(("abstract", name)) => {
                    use std::os::linux::net::SocketAddrExt;
                    let a = std::os::unix::net::SocketAddr::from_abstract_name(name)
                        .map_err(|e| e.to_string())?;
                    return std::os::unix::net::UnixStream::connect_addr(&a)
                        .map_err(|e| e.to_string());
                }
                _ => {}
            }
        }
    }
    Err("no unix:path= or unix:abstract= address in it".into())
}

fn on_path(program: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<std::path::PathBuf> {
    std::env::split_paths(&env("PATH")?)
        .map(|d| d.join(program))
        .find(|p| crate::sys::fd::access(p, libc::X_OK) && p.is_file())
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

    #[test]
    #[cfg(target_os = "linux")]
    fn reach_finds_the_helper_and_a_listening_bus() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let bin = d.path().join("notify-send");
        std::fs::write(&bin, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let sock = d.path().join("bus");
        let path = d.path().display().to_string();
        let env = |bus: Option<String>| {
            let path = path.clone();
            move |k: &str| match k {
                "PATH" => Some(path.clone()),
                "DBUS_SESSION_BUS_ADDRESS" => bus.clone(),
                _ => None,
            }
        };
        let addr = format!("unix:path={}", sock.display());
        let (m, _) = reach(&env(Some(addr.clone()))).unwrap_err();
        assert!(m.contains("does not accept a connection"), "{m}");
        // A socket that is no bus: it hangs up at once.
        let l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        let t = std::thread::spawn(move || drop(l.accept()));
        let (m, _) = reach(&env(Some(addr))).unwrap_err();
        assert!(m.contains("did not answer as D-Bus"), "{m}");
        t.join().unwrap();
        let (m, _) = reach(&env(None)).unwrap_err();
        assert!(m.contains("no session bus"), "{m}");
        let none = |k: &str| (k == "PATH").then(|| "/nonexistent".to_string());
        let (m, h) = reach(&none).unwrap_err();
        assert!(
            m.contains("not on PATH") && h.contains("libnotify"),
            "{m} {h}"
        );
    }
}
