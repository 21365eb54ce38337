//! Landlock as the helper applies it to itself before it execs the child.
//!
//! Landlock grants, it cannot subtract: a rule on a directory covers all
//! below it. So "everything readable but the secrets" is built by walking
//! down from `/` to each hidden path and granting each sibling met on the
//! way ([`read_roots`]); the hidden path itself, and the directories that
//! lead to it, get no rule (they can be walked through but not listed). A
//! sibling that is a symlink into a secret (or to a directory holding one)
//! is left out too. What appears in those directories after the child
//! starts is not readable to it. `/dev` gets only its harmless devices: a
//! read rule on `/dev` would hand root the raw disks.
//!
//! Inside bubblewrap (stage `Bwrap`) the namespaces do the files and the
//! processes; Landlock adds what they lack: the TCP port of `provider`, and
//! (ABI 6) the scopes that keep signals and abstract unix sockets inside.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};

use super::{Network, Policy, Stage};

/// Devices a child may use (read, write, ioctl), and those it may read.
const DEVICES_RW: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];
const DEVICES_RO: &[&str] = &[
    "/dev/urandom",
    "/dev/random",
    "/dev/fd",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
];

/// Restrict this process (and what it execs). `abi` is the kernel's.
pub fn apply(policy: &Policy, stage: Stage, abi: u8) -> Result<(), String> {
    let files = stage == Stage::Landlock;
    let network = !matches!(policy.network, Network::All) && abi >= 4;
    let scopes = abi >= 6;
    if !files && !network && !scopes {
        return Ok(());
    }
    let err = |e: landlock::RulesetError| format!("landlock: {e}");
    let mut ruleset = Ruleset::default().set_compatibility(CompatLevel::BestEffort);
    if files {
        ruleset = ruleset
            .handle_access(AccessFs::from_all(ABI::V9))
            .map_err(err)?;
    }
    if network {
        ruleset = ruleset
            .handle_access(AccessNet::ConnectTcp | AccessNet::BindTcp)
            .map_err(err)?;
    }
    if scopes {
        ruleset = ruleset.scope(Scope::from_all(ABI::V6)).map_err(err)?;
    }
    let mut created = ruleset.create().map_err(err)?;
    if files {
        let all = AccessFs::from_all(ABI::V9);
        let read = AccessFs::from_read(ABI::V9) | AccessFs::ResolveUnix;
        let readable = read_roots(Path::new("/"), &policy.hidden, &policy.reveal);
        created = created
            .add_rules(path_beneath_rules(grantable(readable), read))
            .map_err(err)?
            .add_rules(path_beneath_rules(grantable(DEVICES_RO), read))
            .map_err(err)?
            .add_rules(path_beneath_rules(grantable(DEVICES_RW), all))
            .map_err(err)?
            .add_rules(path_beneath_rules(policy.writable(), all))
            .map_err(err)?;
    }
    if network && let Network::Provider { port } = policy.network {
        created = created
            .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
            .map_err(err)?;
    }
    let status = created.restrict_self().map_err(err)?;
    if files && status.ruleset == RulesetStatus::NotEnforced {
        return Err("landlock: the kernel enforced nothing".into());
    }
    Ok(())
}

/// The paths a rule can name. The kernel refuses a rule on a pipe or a
/// socket (EBADFD), and `/dev/stdout` is one when the helper's output is
/// captured; such a file needs no rule (Landlock does not govern reopening
/// it). A path that is gone needs none either.
fn grantable<P: AsRef<Path>>(paths: impl IntoIterator<Item = P>) -> Vec<PathBuf> {
    use std::os::unix::fs::FileTypeExt as _;
    paths
        .into_iter()
        .filter(|p| {
            std::fs::metadata(p.as_ref())
                .is_ok_and(|m| !m.file_type().is_fifo() && !m.file_type().is_socket())
        })
        .map(|p| p.as_ref().to_path_buf())
        .collect()
}

/// The paths under `top` to grant reading so that everything is readable
/// except `hidden` (canonical paths) and `/dev`, plus `reveal`.
pub fn read_roots(top: &Path, hidden: &[PathBuf], reveal: &[PathBuf]) -> Vec<PathBuf> {
    let dev = Path::new("/dev");
    let hidden: Vec<&Path> = hidden
        .iter()
        .map(PathBuf::as_path)
        .chain(std::iter::once(dev).filter(|_| top == Path::new("/")))
        .filter(|h| h.starts_with(top))
        .collect();
    let mut out = Vec::new();
    walk(top, &hidden, &mut out);
    out.extend(reveal.iter().cloned());
    out
}

/// `dir` leads to a hidden path: grant each child that is neither hidden
/// nor on the way to one, and go down the ways.
fn walk(dir: &Path, hidden: &[&Path], out: &mut Vec<PathBuf>) {
    if hidden.contains(&dir) {
        return;
    }
    if !hidden.iter().any(|h| h.starts_with(dir)) {
        out.push(dir.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let child = entry.path();
        let link = entry.file_type().is_ok_and(|t| t.is_symlink());
        if link {
            // A rule on a link lands on its target: skip one that leads into
            // a secret or to a directory above one.
            match std::fs::canonicalize(&child) {
                Ok(t) if hidden.iter().any(|h| t.starts_with(h) || h.starts_with(&t)) => continue,
                Ok(_) => out.push(child),
                Err(_) => {}
            }
            continue;
        }
        walk(&child, hidden, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_but_the_secrets_and_the_way_to_them() {
        let d = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(d.path()).unwrap();
        for p in [
            "home/.ssh",
            "home/.config/gh",
            "home/.config/nvim",
            "home/src",
            "usr/bin",
        ] {
            std::fs::create_dir_all(top.join(p)).unwrap();
        }
        std::fs::write(top.join("home/.bashrc"), "").unwrap();
        std::os::unix::fs::symlink(top.join("home/.ssh"), top.join("home/keys")).unwrap();
        std::os::unix::fs::symlink(top.join("home"), top.join("usr/homes")).unwrap();
        std::os::unix::fs::symlink(top.join("home/src"), top.join("usr/src")).unwrap();
        let hidden = vec![top.join("home/.ssh"), top.join("home/.config/gh")];
        let mut got = read_roots(&top, &hidden, &[top.join("home/.ssh/known_hosts")]);
        got.sort();
        let mut want = vec![
            top.join("home/.bashrc"),
            top.join("home/.config/nvim"),
            top.join("home/src"),
            top.join("usr"),
            top.join("home/.ssh/known_hosts"),
        ];
        want.sort();
        assert_eq!(got, want);
        // No secret is under any grant but the revealed file.
        for g in got.iter().filter(|g| !g.ends_with("known_hosts")) {
            assert!(!hidden.iter().any(|h| h.starts_with(g)), "{g:?}");
        }
    }

    #[test]
    fn a_pipe_or_a_missing_path_gets_no_rule() {
        // The kernel refuses a rule on a pipe (EBADFD): `/dev/stdout` is one
        // when the helper's output is captured.
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let file = d.path().join("file");
        std::fs::write(&file, "").unwrap();
        let got = grantable([
            fifo,
            d.path().join("gone"),
            file.clone(),
            d.path().to_path_buf(),
        ]);
        assert_eq!(got, vec![file, d.path().to_path_buf()]);
    }

    #[test]
    fn nothing_hidden_grants_the_top() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(read_roots(d.path(), &[], &[]), vec![d.path().to_path_buf()]);
    }

    #[test]
    fn the_root_never_grants_dev() {
        let got = read_roots(Path::new("/"), &[], &[]);
        assert!(!got.contains(&PathBuf::from("/dev")));
        assert!(!got.contains(&PathBuf::from("/")));
        assert!(got.contains(&PathBuf::from("/usr")));
    }
}
