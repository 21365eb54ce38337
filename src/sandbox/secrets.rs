//! What every sandboxed child is kept from, whatever its mode: credential
//! files, agent and daemon sockets, and the variables that lead to them.
//!
//! Other agents' credential files are the caller's to add (per agent, as
//! `doctor/auth.rs` knows them), and so is baton's state directory (hidden
//! but for the run's folder, through `Policy::reveal`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Under the home directory.
pub const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".aws",
    ".config/gh",
    ".netrc",
    ".docker",
    ".kube",
    ".gnupg",
    ".git-credentials",
    ".config/git/credentials",
    ".pgpass",
    ".config/gcloud",
    ".azure",
    ".password-store",
    ".local/share/keyrings",
];

/// Sockets that hand out more than the file system would (a docker socket
/// is root on the host; a session bus reaches the keyring).
pub const SOCKETS: &[&str] = &[
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/run/podman/podman.sock",
    "/run/containerd/containerd.sock",
];

/// Variables removed from a child's environment: agent sockets, the
/// session bus, tokens whose files are hidden anyway.
pub const DROP_ENV: &[&str] = &[
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "DOCKER_HOST",
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "KUBECONFIG",
];

/// The standard hidden paths for `home` and the sockets `env` names
/// (whether or not they exist: `Policy::resolved` keeps those that do).
pub fn hidden(home: Option<&Path>, env: &[(OsString, OsString)]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    if let Some(home) = home {
        out.extend(HOME_SECRETS.iter().map(|s| home.join(s)));
    }
    out.extend(SOCKETS.iter().map(PathBuf::from));
    for (k, v) in env {
        let path = PathBuf::from(v);
        match k.to_str() {
            // The agent's socket (and its directory, where ssh puts one).
            Some("SSH_AUTH_SOCK") if path.is_absolute() => out.push(path),
            // The per-user runtime directory holds the session bus, the
            // gpg and ssh agents, a rootless docker's socket.
            Some("XDG_RUNTIME_DIR") if path.is_absolute() => out.push(path),
            Some("DOCKER_HOST") => {
                if let Some(p) = v.to_str().and_then(|s| s.strip_prefix("unix://")) {
                    out.push(PathBuf::from(p));
                }
            }
            _ => {}
        }
    }
    out
}

/// The paths of a checkout that must stay read-only although the checkout
/// is writable: what baton's own git calls (and the user's, after a merge)
/// would obey. A `.git` file (a linked worktree's pointer) is kept as is,
/// so the child cannot point the checkout at another repository.
pub fn git_protected(checkout: &Path) -> Vec<PathBuf> {
    let git = checkout.join(".git");
    if git.is_dir() {
        vec![git.join("config"), git.join("hooks")]
    } else {
        vec![git]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_secret_of_the_issue_is_hidden_and_the_agent_socket_too() {
        let env = vec![
            ("SSH_AUTH_SOCK".into(), "/tmp/ssh-x/agent.1".into()),
            ("XDG_RUNTIME_DIR".into(), "/run/user/1000".into()),
            (
                "DOCKER_HOST".into(),
                "unix:///home/u/.docker/run/docker.sock".into(),
            ),
            ("PATH".into(), "/usr/bin".into()),
        ];
        let h = hidden(Some(Path::new("/home/u")), &env);
        for s in [
            ".ssh",
            ".aws",
            ".config/gh",
            ".netrc",
            ".docker",
            ".kube",
            ".gnupg",
        ] {
            assert!(h.contains(&Path::new("/home/u").join(s)), "{s}");
        }
        for s in [
            "/tmp/ssh-x/agent.1",
            "/run/user/1000",
            "/home/u/.docker/run/docker.sock",
            "/var/run/docker.sock",
            "/run/docker.sock",
        ] {
            assert!(h.contains(&PathBuf::from(s)), "{s}");
        }
        assert!(!h.iter().any(|p| p == Path::new("/usr/bin")));
        assert!(DROP_ENV.contains(&"SSH_AUTH_SOCK"));
    }

    #[test]
    fn a_relative_socket_is_not_taken_for_a_path() {
        let env = vec![("SSH_AUTH_SOCK".into(), "agent.1".into())];
        assert!(!hidden(None, &env).iter().any(|p| p.ends_with("agent.1")));
    }

    #[test]
    fn a_checkout_keeps_its_git_config_and_hooks_or_its_pointer() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        assert_eq!(
            git_protected(dir.path()),
            vec![
                dir.path().join(".git/config"),
                dir.path().join(".git/hooks")
            ]
        );
        let linked = tempfile::tempdir().unwrap();
        std::fs::write(linked.path().join(".git"), "gitdir: /elsewhere\n").unwrap();
        assert_eq!(
            git_protected(linked.path()),
            vec![linked.path().join(".git")]
        );
    }
}
