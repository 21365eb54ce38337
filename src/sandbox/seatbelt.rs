//! macOS: a `(deny default)` profile for `sandbox-exec`, generated per
//! policy. Paths never enter the profile's text: each is a `-D NAME=PATH`
//! parameter read with `(param "NAME")`, so no path can close a string and
//! add a rule. Rules only allow, and what must stay closed inside an
//! allowed tree is cut out with `require-not`, so nothing depends on the
//! order in which the kernel weighs rules.
//!
//! No Mac is at hand: the unit tests check the text and the parameters;
//! docs/sandbox.md says so.

use std::ffi::OsString;
use std::path::PathBuf;

use super::{Degraded, Network, Policy};

pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// What every child needs to start at all: processes, its own signals,
/// system information, the Mach services and terminals.
const BASE: &str = r#"(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
(allow mach-lookup)
(allow ipc-posix-sem)
(allow ipc-posix-shm)
(allow pseudo-tty)
(allow file-read-metadata)
(allow file-ioctl (literal "/dev/tty") (regex #"^/dev/ttys[0-9]+$"))
(allow file-write-data (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (regex #"^/dev/ttys[0-9]+$"))
"#;

/// The profile and its parameters.
pub fn profile(policy: &Policy) -> (String, Vec<(String, PathBuf)>) {
    let mut params: Vec<(String, PathBuf)> = Vec::new();
    let mut names = |prefix: &str, paths: Vec<PathBuf>| -> Vec<String> {
        paths
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                let name = format!("{prefix}_{i}");
                params.push((name.clone(), p));
                name
            })
            .collect()
    };
    let hidden = names("HIDDEN", policy.hidden.clone());
    let reveal = names("REVEAL", policy.reveal.clone());
    let writable = names("WRITABLE", policy.writable().map(PathBuf::from).collect());
    let protected = names("PROTECTED", policy.read_only_inside.clone());
    let subpaths = |names: &[String]| -> String {
        names
            .iter()
            .map(|n| format!(" (subpath (param \"{n}\"))"))
            .collect()
    };
    let nots = |names: &[String]| -> String {
        names
            .iter()
            .map(|n| format!(" (require-not (subpath (param \"{n}\")))"))
            .collect()
    };
    let mut text = String::from(BASE);
    text.push_str(&format!(
        "(allow file-read* (require-all (subpath \"/\"){}))\n",
        nots(&hidden)
    ));
    if !reveal.is_empty() {
        text.push_str(&format!("(allow file-read*{})\n", subpaths(&reveal)));
    }
    for w in &writable {
        text.push_str(&format!(
            "(allow file-read* file-write* (require-all (subpath (param \"{w}\")){}))\n",
            nots(&protected)
        ));
    }
    match policy.network {
        Network::All => {
            // Every socket but the hidden ones (a docker or agent socket).
            let sockets: String = hidden
                .iter()
                .map(|n| {
                    format!(" (require-not (remote unix-socket (path-literal (param \"{n}\"))))")
                })
                .collect();
            text.push_str(&format!(
                "(allow network-outbound (require-all (require-any (remote ip) (remote unix-socket)){sockets}))\n(allow network-inbound network-bind system-socket)\n"
            ));
        }
        Network::None => {}
        Network::Provider { port } => {
            text.push_str(&format!(
                "(allow network-outbound (remote tcp \"localhost:{port}\"))\n(allow system-socket)\n"
            ));
        }
    }
    (text, params)
}

/// `sandbox-exec -p PROFILE -D NAME=PATH… -- argv`.
pub fn wrap(policy: &Policy, argv: Vec<OsString>) -> (Vec<OsString>, Vec<Degraded>) {
    let (text, params) = profile(policy);
    let mut out: Vec<OsString> = vec![SANDBOX_EXEC.into(), "-p".into(), text.into()];
    for (name, path) in params {
        let mut d = OsString::from(format!("-D{name}="));
        d.push(path.as_os_str());
        out.push(d);
    }
    out.push("--".into());
    out.extend(argv);
    let degraded = vec![
        Degraded::NoPidNamespace,
        Degraded::NoProcessLimit,
        Degraded::NoTmpSizeLimit,
    ];
    (out, degraded)
}

#[cfg(test)]
mod tests {
    use super::super::Mode;
    use super::*;

    fn policy(mode: Mode, network: Network) -> Policy {
        let mut p = Policy::new(mode, "/private/tmp/baton-run".into(), None, &[]);
        p.workspace = Some("/Users/u/src/wt \"x\")".into());
        p.read_only_inside = vec!["/Users/u/src/wt \"x\")/.git/hooks".into()];
        p.hidden = vec!["/Users/u/.ssh".into(), "/var/run/docker.sock".into()];
        p.reveal = vec!["/Users/u/.baton/runs/r1".into()];
        p.network = network;
        p
    }

    #[test]
    fn deny_default_and_paths_only_as_parameters() {
        let p = policy(Mode::Workspace, Network::All);
        let (text, params) = profile(&p);
        assert!(text.starts_with("(version 1)\n(deny default)\n"));
        // A path with a quote and a parenthesis never reaches the text.
        assert!(!text.contains("/Users"), "{text}");
        assert!(
            params
                .iter()
                .any(|(n, v)| n == "WRITABLE_0" && v == &PathBuf::from("/Users/u/src/wt \"x\")"))
        );
        assert!(text.contains(
            "(allow file-read* (require-all (subpath \"/\") (require-not (subpath (param \"HIDDEN_0\"))) (require-not (subpath (param \"HIDDEN_1\")))))"
        ));
        assert!(text.contains("(allow file-read* (subpath (param \"REVEAL_0\")))"));
        assert!(text.contains(
            "(allow file-read* file-write* (require-all (subpath (param \"WRITABLE_0\")) (require-not (subpath (param \"PROTECTED_0\")))))"
        ));
        // The temporary directory is the second writable root.
        assert!(text.contains("(subpath (param \"WRITABLE_1\"))"));
        assert!(
            text.contains("(require-not (remote unix-socket (path-literal (param \"HIDDEN_1\"))))")
        );
        // Balanced parentheses: the profile parses as one list per line.
        for line in text.lines().filter(|l| !l.is_empty()) {
            let open = line.matches('(').count();
            assert_eq!(open, line.matches(')').count(), "{line}");
        }
    }

    #[test]
    fn read_only_writes_only_its_own_places_and_no_network() {
        let p = policy(Mode::ReadOnly, Network::None);
        let (text, params) = profile(&p);
        assert!(
            !params
                .iter()
                .any(|(n, v)| n.starts_with("WRITABLE") && v.starts_with("/Users/u/src"))
        );
        assert_eq!(
            params
                .iter()
                .filter(|(n, _)| n.starts_with("WRITABLE"))
                .count(),
            1
        );
        assert!(!text.contains("network-outbound"));
        let (_, pp) = profile(&policy(Mode::ReadOnly, Network::Provider { port: 41234 }));
        let (t, _) = profile(&policy(Mode::ReadOnly, Network::Provider { port: 41234 }));
        assert!(t.contains("(allow network-outbound (remote tcp \"localhost:41234\"))"));
        assert!(!t.contains("(remote ip)"));
        assert_eq!(pp.len(), params.len());
    }

    #[test]
    fn the_argv_runs_sandbox_exec_with_the_parameters() {
        let p = policy(Mode::Workspace, Network::All);
        let (argv, degraded) = wrap(&p, vec!["opencode".into(), "run".into()]);
        assert_eq!(argv[0], SANDBOX_EXEC);
        assert_eq!(argv[1], "-p");
        assert!(argv.iter().any(|a| a == "-DHIDDEN_0=/Users/u/.ssh"));
        let dd = argv.iter().position(|a| a == "--").unwrap();
        assert_eq!(&argv[dd + 1..], ["opencode", "run"]);
        assert!(degraded.contains(&Degraded::NoPidNamespace));
    }
}
