//! The seccomp filter every sandboxed child runs under, whichever backend
//! confines its files: the system calls that reach other processes, the
//! kernel's keyrings and BPF, or the terminal, answered EPERM.
//!
//! - `ptrace`, `process_vm_readv`/`writev`, `pidfd_getfd`: another
//!   process's memory and descriptors.
//! - `bpf`, `perf_event_open`, `userfaultfd`, `io_uring_*`: large kernel
//!   surfaces (io_uring also opens sockets and files past this filter).
//! - `keyctl`, `add_key`, `request_key`: the user's keyrings.
//! - `ioctl(TIOCSTI)`, `ioctl(TIOCLINUX)`: typing into a terminal. The
//!   request is compared on its low 32 bits, as the kernel reads it.
//! - `unshare`/`clone` with CLONE_NEWUSER: no inner sandbox or namespace
//!   tricks. `clone3` passes its flags in memory a filter cannot read, so it
//!   answers ENOSYS, which makes the C libraries fall back to `clone`.
//! - Network `none`: `socket`/`socketpair` of any family but AF_UNIX.
//!   `provider`: only AF_UNIX, AF_NETLINK and TCP over IPv4/IPv6 (Landlock
//!   then names the one port). `all`: AF_VSOCK refused (a VM's host).
//!
//! Filters are built per architecture by `seccompiler`, which refuses a call
//! made through another ABI of the machine (an i386 call on x86_64).

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op,
    SeccompCondition as Cond, SeccompFilter, SeccompRule, TargetArch,
};

use super::Network;

/// Always refused, whatever the arguments.
pub const DENIED: &[(&str, i64)] = &[
    ("ptrace", libc::SYS_ptrace),
    ("process_vm_readv", libc::SYS_process_vm_readv),
    ("process_vm_writev", libc::SYS_process_vm_writev),
    ("pidfd_getfd", libc::SYS_pidfd_getfd),
    ("bpf", libc::SYS_bpf),
    ("perf_event_open", libc::SYS_perf_event_open),
    ("userfaultfd", libc::SYS_userfaultfd),
    ("io_uring_setup", libc::SYS_io_uring_setup),
    ("io_uring_enter", libc::SYS_io_uring_enter),
    ("io_uring_register", libc::SYS_io_uring_register),
    ("keyctl", libc::SYS_keyctl),
    ("add_key", libc::SYS_add_key),
    ("request_key", libc::SYS_request_key),
];

const TIOCSTI: u64 = 0x5412;
const TIOCLINUX: u64 = 0x541C;

fn arch() -> Result<TargetArch, String> {
    if cfg!(target_arch = "x86_64") {
        Ok(TargetArch::x86_64)
    } else if cfg!(target_arch = "aarch64") {
        Ok(TargetArch::aarch64)
    } else if cfg!(target_arch = "riscv64") {
        Ok(TargetArch::riscv64)
    } else {
        Err("no seccomp filter for this architecture".into())
    }
}

fn cond(arg: u8, len: Len, op: Op, value: u64) -> Result<Cond, String> {
    Cond::new(arg, len, op, value).map_err(|e| e.to_string())
}

fn rule(conds: Vec<Cond>) -> Result<SeccompRule, String> {
    SeccompRule::new(conds).map_err(|e| e.to_string())
}

/// The rules answered EPERM.
fn eperm_rules(network: Network) -> Result<BTreeMap<i64, Vec<SeccompRule>>, String> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for (_, nr) in DENIED {
        rules.insert(*nr, Vec::new());
    }
    rules.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(1, Len::Dword, Op::Eq, TIOCSTI)?])?,
            rule(vec![cond(1, Len::Dword, Op::Eq, TIOCLINUX)?])?,
        ],
    );
    let newuser = libc::CLONE_NEWUSER as u64;
    for nr in [libc::SYS_unshare, libc::SYS_clone] {
        rules.insert(
            nr,
            vec![rule(vec![cond(
                0,
                Len::Qword,
                Op::MaskedEq(newuser),
                newuser,
            )?])?],
        );
    }
    let family = |op: Op, af: i32| cond(0, Len::Dword, op, af as u64);
    let socket: Vec<SeccompRule> = match network {
        Network::All => vec![rule(vec![family(Op::Eq, libc::AF_VSOCK)?])?],
        Network::None => vec![rule(vec![family(Op::Ne, libc::AF_UNIX)?])?],
        Network::Provider { .. } => {
            let mut v = vec![rule(vec![
                family(Op::Ne, libc::AF_UNIX)?,
                family(Op::Ne, libc::AF_NETLINK)?,
                family(Op::Ne, libc::AF_INET)?,
                family(Op::Ne, libc::AF_INET6)?,
            ])?];
            // The type's low bits; SOCK_NONBLOCK/SOCK_CLOEXEC sit above.
            for af in [libc::AF_INET, libc::AF_INET6] {
                for ty in [
                    libc::SOCK_DGRAM,
                    libc::SOCK_RAW,
                    libc::SOCK_RDM,
                    libc::SOCK_SEQPACKET,
                    10, // SOCK_PACKET (obsolete, still accepted)
                ] {
                    v.push(rule(vec![
                        family(Op::Eq, af)?,
                        cond(1, Len::Dword, Op::MaskedEq(0xf), ty as u64)?,
                    ])?);
                }
            }
            v
        }
    };
    let pair = match network {
        Network::All => socket.clone(),
        _ => vec![rule(vec![family(Op::Ne, libc::AF_UNIX)?])?],
    };
    rules.insert(libc::SYS_socket, socket);
    rules.insert(libc::SYS_socketpair, pair);
    Ok(rules)
}

/// The filters, in the order they are installed.
pub fn programs(network: Network) -> Result<Vec<BpfProgram>, String> {
    let arch = arch()?;
    let eperm = SeccompFilter::new(
        eperm_rules(network)?,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    let clone3 = SeccompFilter::new(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for filter in [eperm, clone3] {
        out.push(BpfProgram::try_from(filter).map_err(|e| e.to_string())?);
    }
    Ok(out)
}

/// Install the filters on this thread (with no_new_privs); what it execs
/// keeps them.
pub fn apply(network: Network) -> Result<(), String> {
    for program in programs(network)? {
        seccompiler::apply_filter(&program).map_err(|e| format!("seccomp: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_network_mode_compiles_to_a_filter() {
        for n in [
            Network::All,
            Network::None,
            Network::Provider { port: 3128 },
        ] {
            let p = programs(n).unwrap();
            assert_eq!(p.len(), 2);
            assert!(p[0].len() > p[1].len());
        }
    }

    #[test]
    fn the_issue_list_is_denied() {
        let names: Vec<&str> = DENIED.iter().map(|(n, _)| *n).collect();
        for n in [
            "ptrace",
            "process_vm_readv",
            "process_vm_writev",
            "bpf",
            "keyctl",
            "add_key",
            "request_key",
            "perf_event_open",
            "userfaultfd",
            "io_uring_setup",
            "io_uring_enter",
            "io_uring_register",
        ] {
            assert!(names.contains(&n), "{n}");
        }
        let rules = eperm_rules(Network::None).unwrap();
        assert_eq!(rules[&libc::SYS_ioctl].len(), 2);
        assert!(rules.contains_key(&libc::SYS_unshare));
    }
}
