//! The bubblewrap command line for a policy (pure: strings only).
//!
//! Mounts are laid shallowest first, so a deeper rule wins whichever kind
//! it is: a run folder revealed inside hidden state, a writable temporary
//! directory inside a hidden runtime directory, `.git/hooks` kept read-only
//! inside the writable checkout. Every target exists (`Policy::resolved`):
//! bubblewrap would otherwise create the missing mount point on the host,
//! inside a writable root, and leave it there. Hidden directories become an
//! empty tmpfs, made read-only last (the remount is not recursive, so what
//! is bound below stays as it is).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::{Degraded, Network, Policy, Stage};

/// One mount, before ordering.
#[derive(Debug, Clone, PartialEq)]
enum Op {
    /// An empty read-only directory over a hidden directory.
    HideDir,
    /// An empty file over a hidden file or socket, and over a symlink that
    /// must not be swapped.
    Null,
    ReadOnly,
    Writable,
    /// The private temporary directory as a tmpfs of this many bytes.
    Tmpfs(u64),
}

/// `bwrap …flags… -- <helper> __sandbox-exec <policy> -- argv`, and what the
/// kernel's Landlock (used inside for network rules and scopes) cannot do.
pub fn wrap(
    policy: &Policy,
    bwrap: &Path,
    disable_userns: bool,
    landlock_abi: u8,
    helper: &Path,
    argv: Vec<OsString>,
) -> (Vec<OsString>, Vec<Degraded>) {
    let mut degraded = Vec::new();
    let mut out: Vec<OsString> = vec![bwrap.into()];
    let bridged = policy.proxy_socket.is_some();
    out.extend(
        namespaces(policy.network, bridged, disable_userns)
            .into_iter()
            .map(OsString::from),
    );
    if !disable_userns {
        degraded.push(Degraded::NoDisableUserns);
    }
    if let (Network::Provider { .. }, false) = (policy.network, bridged) {
        // No socket to bridge to: the child keeps the host's network
        // namespace, and Landlock's TCP rule narrows it to the proxy's port.
        if landlock_abi < 4 {
            degraded.push(Degraded::NetworkProviderNotEnforced);
        } else {
            degraded.push(Degraded::ProviderPortAnyHost);
        }
    }
    if policy.limits.max_procs.is_some() && super::running_as_root() {
        degraded.push(Degraded::NoProcessLimit);
    }
    for arg in ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"] {
        out.push(arg.into());
    }
    let mut hidden_dirs = Vec::new();
    for (path, op) in mounts(policy) {
        match op {
            Op::HideDir => {
                push(&mut out, &["--tmpfs"], &[&path]);
                hidden_dirs.push(path);
            }
            Op::Null => push(&mut out, &["--ro-bind", "/dev/null"], &[&path]),
            Op::ReadOnly => push(&mut out, &["--ro-bind"], &[&path, &path]),
            Op::Writable => push(&mut out, &["--bind"], &[&path, &path]),
            Op::Tmpfs(bytes) => {
                let size = bytes.to_string();
                push(&mut out, &["--size", &size, "--tmpfs"], &[&path]);
            }
        }
    }
    for dir in hidden_dirs {
        push(&mut out, &["--remount-ro"], &[&dir]);
    }
    let stage = super::exec_stage(Stage::Bwrap, policy);
    out.push("--".into());
    out.extend(super::helper_argv(helper, stage, argv));
    (out, degraded)
}

/// The namespaces and process flags, before any mount. `bridged`: the
/// `provider` child reaches the proxy through a unix socket, so it needs no
/// network of the host's either.
pub fn namespaces(network: Network, bridged: bool, disable_userns: bool) -> Vec<&'static str> {
    let mut out = vec!["--unshare-user"];
    if disable_userns {
        out.push("--disable-userns");
    }
    out.extend([
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
    ]);
    if network == Network::None || bridged {
        // bubblewrap brings the new namespace's loopback up.
        out.push("--unshare-net");
    }
    // Root keeps every capability in bubblewrap's namespace unless told.
    // A new session: the child has no controlling terminal to push input
    // into (TIOCSTI; the seccomp filter refuses it as well).
    out.extend(["--cap-drop", "ALL", "--die-with-parent", "--new-session"]);
    out
}

fn push(out: &mut Vec<OsString>, words: &[&str], paths: &[&PathBuf]) {
    out.extend(words.iter().map(OsString::from));
    out.extend(paths.iter().map(|p| p.as_os_str().to_owned()));
}

/// Every mount of the policy, shallowest first (stable within a depth, so
/// hidden, then revealed, then writable, then protected).
fn mounts(policy: &Policy) -> Vec<(PathBuf, Op)> {
    let mut all: Vec<(PathBuf, Op)> = Vec::new();
    for path in &policy.hidden {
        let op = if path.is_dir() { Op::HideDir } else { Op::Null };
        all.push((path.clone(), op));
    }
    for path in &policy.reveal {
        all.push((path.clone(), Op::ReadOnly));
    }
    for path in policy.writable() {
        let op = match policy.limits.tmp_bytes {
            Some(bytes) if path == policy.tmp => Op::Tmpfs(bytes),
            _ => Op::Writable,
        };
        all.push((path.to_path_buf(), op));
    }
    for path in &policy.read_only_inside {
        let link = path
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink());
        all.push((path.clone(), if link { Op::Null } else { Op::ReadOnly }));
    }
    // The proxy's socket, reachable whatever covers its directory (a
    // socket can be connected to on a read-only mount).
    if let Some(sock) = &policy.proxy_socket {
        all.push((sock.clone(), Op::ReadOnly));
    }
    all.sort_by_key(|(p, _)| p.components().count());
    all
}

#[cfg(test)]
mod tests {
    use super::super::{Limits, Mode};
    use super::*;

    fn args(out: &[OsString]) -> Vec<String> {
        out.iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect()
    }

    fn find(out: &[String], seq: &[&str]) -> usize {
        out.windows(seq.len())
            .position(|w| w.iter().zip(seq).all(|(a, b)| a == b))
            .unwrap_or_else(|| panic!("{seq:?} not in {out:?}"))
    }

    fn policy(root: &Path) -> Policy {
        let mk = |p: &str| {
            let p = root.join(p);
            std::fs::create_dir_all(&p).unwrap();
            p
        };
        let state = mk("state");
        mk("state/runs/r1");
        mk("ws/.git/hooks");
        std::fs::write(root.join("ws/.git/config"), "").unwrap();
        std::fs::write(root.join("netrc"), "machine x").unwrap();
        let mut p =
            Policy::new(Mode::Workspace, mk("run/tmp"), None, &[]).with_workspace(root.join("ws"));
        p.hidden = vec![
            state.clone(),
            root.join("netrc"),
            mk("ssh"),
            root.join("absent"),
        ];
        p.reveal = vec![state.join("runs/r1")];
        p.limits = Limits {
            max_procs: Some(64),
            max_file_bytes: None,
            tmp_bytes: Some(1 << 20),
        };
        p.resolved().unwrap()
    }

    #[test]
    fn namespaces_root_read_only_and_the_helper_last() {
        let dir = tempfile::tempdir().unwrap();
        let p = policy(dir.path());
        let (out, degraded) = wrap(
            &p,
            Path::new("/usr/bin/bwrap"),
            true,
            7,
            Path::new("/opt/baton"),
            vec!["pi".into(), "-p".into()],
        );
        let out = args(&out);
        assert_eq!(out[0], "/usr/bin/bwrap");
        for flag in [
            "--unshare-user",
            "--disable-userns",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent",
            "--new-session",
        ] {
            assert!(out.contains(&flag.to_string()), "{flag}");
        }
        find(&out, &["--cap-drop", "ALL"]);
        assert!(
            !out.contains(&"--unshare-net".to_string()),
            "network all keeps the host's"
        );
        let root = find(&out, &["--ro-bind", "/", "/"]);
        assert!(root < find(&out, &["--dev", "/dev"]));
        let dd = out.iter().position(|a| a == "--").unwrap();
        assert_eq!(&out[dd + 1..dd + 3], ["/opt/baton", "__sandbox-exec"]);
        let stage: super::super::HelperArgs = serde_json::from_str(&out[dd + 3]).unwrap();
        assert_eq!(stage.stage, Stage::Bwrap);
        assert_eq!(stage.policy, p);
        assert_eq!(&out[dd + 4..], ["--", "pi", "-p"]);
        assert_eq!(
            degraded,
            vec![Degraded::NoProcessLimit; super::super::running_as_root() as usize]
        );
    }

    #[test]
    fn deeper_mounts_come_after_the_ones_they_sit_in() {
        let dir = tempfile::tempdir().unwrap();
        let p = policy(dir.path());
        let (out, _) = wrap(
            &p,
            Path::new("bwrap"),
            true,
            7,
            Path::new("/b"),
            vec!["x".into()],
        );
        let out = args(&out);
        let s = |p: &str| p.to_string();
        let state = s(p
            .hidden
            .iter()
            .find(|h| h.ends_with("state"))
            .unwrap()
            .to_str()
            .unwrap());
        let run = format!("{state}/runs/r1");
        let ws = p.workspace.clone().unwrap().to_string_lossy().into_owned();
        let tmp = p.tmp.to_string_lossy().into_owned();
        // The state hidden, its run folder shown again, read-only.
        let hide = find(&out, &["--tmpfs", &state]);
        assert!(hide < find(&out, &["--ro-bind", &run, &run]));
        // The checkout writable, its git metadata read-only on top.
        let w = find(&out, &["--bind", &ws, &ws]);
        let cfg = format!("{ws}/.git/config");
        let hooks = format!("{ws}/.git/hooks");
        assert!(w < find(&out, &["--ro-bind", &cfg, &cfg]));
        assert!(w < find(&out, &["--ro-bind", &hooks, &hooks]));
        // A hidden file becomes an empty one; the absent one is left out.
        let netrc = p.hidden.iter().find(|h| h.ends_with("netrc")).unwrap();
        find(&out, &["--ro-bind", "/dev/null", netrc.to_str().unwrap()]);
        assert!(!out.iter().any(|a| a.ends_with("absent")));
        // The private tmp as a sized tmpfs; hidden dirs read-only at the end.
        find(&out, &["--size", "1048576", "--tmpfs", &tmp]);
        let last_bind = out
            .iter()
            .rposition(|a| a == "--bind" || a == "--ro-bind")
            .unwrap();
        assert!(find(&out, &["--remount-ro", &state]) > last_bind);
    }

    #[test]
    fn a_swappable_link_is_covered_and_network_none_unshares() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = policy(dir.path());
        let hooks = p.workspace.clone().unwrap().join(".git/hooks");
        std::fs::remove_dir(&hooks).unwrap();
        std::os::unix::fs::symlink("/tmp", &hooks).unwrap();
        p.network = Network::None;
        let p = p.resolved().unwrap();
        let (out, _) = wrap(
            &p,
            Path::new("bwrap"),
            false,
            7,
            Path::new("/b"),
            vec!["x".into()],
        );
        let out = args(&out);
        find(&out, &["--ro-bind", "/dev/null", hooks.to_str().unwrap()]);
        assert!(out.contains(&"--unshare-net".to_string()));
        assert!(!out.contains(&"--disable-userns".to_string()));
    }

    #[test]
    fn provider_keeps_the_host_network_and_says_what_landlock_lacks() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = policy(dir.path());
        p.network = Network::Provider { port: 8080 };
        let (out, d4) = wrap(&p, Path::new("bwrap"), true, 4, Path::new("/b"), vec![]);
        assert!(!args(&out).contains(&"--unshare-net".to_string()));
        assert!(d4.contains(&Degraded::ProviderPortAnyHost));
        let (_, d3) = wrap(&p, Path::new("bwrap"), true, 3, Path::new("/b"), vec![]);
        assert!(d3.contains(&Degraded::NetworkProviderNotEnforced));
    }

    #[test]
    fn provider_with_the_proxy_socket_has_no_network_but_the_socket() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = policy(dir.path());
        p.network = Network::Provider { port: 8080 };
        let sock = dir.path().join("run/net/proxy.sock");
        std::fs::create_dir_all(sock.parent().unwrap()).unwrap();
        std::fs::write(&sock, "").unwrap();
        p.proxy_socket = Some(sock.clone());
        for abi in [3, 4] {
            let (out, degraded) = wrap(&p, Path::new("bwrap"), true, abi, Path::new("/b"), vec![]);
            let out = args(&out);
            assert!(out.contains(&"--unshare-net".to_string()));
            let s = sock.to_string_lossy();
            find(&out, &["--ro-bind", &s, &s]);
            assert!(
                !degraded.contains(&Degraded::ProviderPortAnyHost),
                "{degraded:?}"
            );
            assert!(!degraded.contains(&Degraded::NetworkProviderNotEnforced));
        }
    }
}
