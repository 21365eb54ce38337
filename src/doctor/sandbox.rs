//! doctor's `baton.sandbox`: does the sandbox baton owns work here, with
//! which backend, and when user namespaces are blocked, the fix that keeps
//! the protection (an AppArmor profile for bwrap), never one that drops it.

use super::{Check, Severity};
use crate::sandbox::{Availability, Backend};

const ID: &str = "baton.sandbox";

/// Ubuntu ≥ 23.10 (`kernel.apparmor_restrict_unprivileged_userns=1`).
const APPARMOR_FIX: &str = "let bubblewrap make user namespaces with its AppArmor profile (its children get no capabilities): Ubuntu 25.04 ships /etc/apparmor.d/bwrap-userns-restrict; on 24.04 `sudo apt install apparmor-profiles && sudo install -m 0644 /usr/share/apparmor/extra-profiles/bwrap-userns-restrict /etc/apparmor.d/ && sudo apparmor_parser -r /etc/apparmor.d/bwrap-userns-restrict` (docs/sandbox.md); do not turn the restriction off";

/// The check for what the probe found.
pub fn check(found: &Availability) -> Check {
    let outer = if found.outer.is_empty() {
        String::new()
    } else {
        format!("; baton itself runs inside {}", found.outer.join(", "))
    };
    let why_not_bwrap = || {
        let e = found.bwrap.as_ref().err().map_or("", String::as_str);
        match &found.userns_blocked {
            Some(by) => format!("{e} (user namespaces blocked: {by})"),
            None => e.to_string(),
        }
    };
    let fix = || -> String {
        match found.userns_blocked.as_deref() {
            Some("apparmor") => APPARMOR_FIX.into(),
            Some(other) => format!(
                "allow unprivileged user namespaces for bubblewrap ({other} blocks them), or run baton where they are allowed"
            ),
            None if found.bwrap.as_ref().is_err_and(|e| e.contains("not installed")) => {
                "install bubblewrap: `apt-get install bubblewrap` (or your system's package)".into()
            }
            // A container without user namespaces: the host decides.
            None => "run baton where user namespaces are allowed (a container needs them from its host, e.g. docker's default seccomp profile blocks them)".into(),
        }
    };
    match found.best() {
        Ok(Backend::Bwrap {
            path,
            disable_userns,
            landlock_abi,
        }) => Check::ok(
            ID.into(),
            format!(
                "the sandbox works here: bubblewrap {}{} with Landlock ABI {landlock_abi} and seccomp{outer}",
                path.display(),
                if disable_userns {
                    ""
                } else {
                    " (< 0.8: no --disable-userns)"
                }
            ),
        ),
        Ok(Backend::Landlock { abi }) => Check::problem(
            ID.into(),
            Severity::Warning,
            format!(
                "the sandbox falls back to Landlock ABI {abi} and seccomp (no PID namespace: a detached process can outlive a run): bubblewrap cannot be used: {}{outer}",
                why_not_bwrap()
            ),
            &fix(),
        ),
        Ok(Backend::Seatbelt) => Check::ok(
            ID.into(),
            format!("the sandbox works here: sandbox-exec (Seatbelt){outer}"),
        ),
        Err(reason) => Check::problem(
            ID.into(),
            Severity::Warning,
            format!("no sandbox works here: {reason}{outer}"),
            &fix(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(
        bwrap: Result<(std::path::PathBuf, bool), String>,
        abi: u8,
        blocked: Option<&str>,
    ) -> Availability {
        Availability {
            bwrap,
            landlock_abi: abi,
            userns_blocked: blocked.map(String::from),
            outer: Vec::new(),
            seatbelt: false,
        }
    }

    #[test]
    fn bubblewrap_is_ok_and_names_itself() {
        let c = check(&found(Ok(("/usr/bin/bwrap".into(), true)), 7, None));
        assert!(
            c.ok && c.message.contains("bubblewrap /usr/bin/bwrap"),
            "{}",
            c.message
        );
    }

    #[test]
    fn apparmor_gets_the_profile_never_the_sysctl_off() {
        let c = check(&found(
            Err("bwrap failed here: setting up uid map: Permission denied".into()),
            7,
            Some("apparmor"),
        ));
        assert_eq!(c.severity, Severity::Warning);
        assert!(c.message.contains("Landlock ABI 7"), "{}", c.message);
        let hint = c.hint.unwrap();
        assert!(hint.contains("bwrap-userns-restrict"), "{hint}");
        assert!(!hint.contains("=0"), "{hint}");
    }

    #[test]
    fn nothing_at_all_says_how_to_get_bubblewrap() {
        let c = check(&found(
            Err("`bwrap` is not installed (apt-get install bubblewrap)".into()),
            0,
            None,
        ));
        assert!(!c.ok);
        assert!(c.message.contains("no sandbox works here"), "{}", c.message);
        assert!(c.hint.unwrap().contains("apt-get install bubblewrap"));
    }
}
