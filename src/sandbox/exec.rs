//! `baton __sandbox-exec POLICY -- argv…`: the helper that restricts
//! itself, then execs the child (so the child keeps its pid, its process
//! group and its stdio, and baton supervises it as any other).
//!
//! POLICY is the JSON of [`HelperArgs`] inline, or `@FILE`. Its stage says
//! where the helper runs: inside bubblewrap (limits, Landlock scopes and
//! TCP rules, seccomp), or alone (Landlock on files too), or `wrap`: a tool
//! for people, tests and `bench/sandbox.sh` that chooses a backend, wraps
//! the rest and execs that, printing the report on stderr first.
//!
//! Order matters: the limits first (setrlimit is not filtered but cheap),
//! Landlock next (its own calls must not be refused by seccomp), then the
//! capabilities dropped, seccomp last, exec. A failure exits 126 with one line on stderr and never runs
//! the child unconfined; a program that cannot be found exits 127.

use std::ffi::OsString;
use std::path::PathBuf;

use super::sys::{self, Limit};
use super::{Backend, HelperArgs, Policy, Sandbox, Stage, WrapWith, landlock, seccomp};
use crate::process;

/// Setup failed: nothing ran.
pub const SETUP_FAILED: i32 = 126;
pub const NOT_FOUND: i32 = 127;

/// The helper's entry, from `crate::run` (arguments after the subcommand).
pub fn main(args: &[OsString]) -> i32 {
    match run(args) {
        Ok(never) => match never {},
        Err((code, message)) => {
            eprintln!("baton {}: {message}", super::HELPER);
            code
        }
    }
}

enum Never {}

fn run(args: &[OsString]) -> Result<Never, (i32, String)> {
    let fail = |m: String| (SETUP_FAILED, m);
    let (spec, argv) = match args {
        [spec, dashes, argv @ ..] if dashes == "--" && !argv.is_empty() => (spec, argv.to_vec()),
        _ => {
            return Err(fail(
                "usage: baton __sandbox-exec POLICY -- PROGRAM [ARG…]".into(),
            ));
        }
    };
    let spec = spec
        .to_str()
        .ok_or_else(|| fail("POLICY is not UTF-8".into()))?;
    let text = match spec.strip_prefix('@') {
        Some(file) => {
            std::fs::read_to_string(file).map_err(|e| fail(format!("reading {file}: {e}")))?
        }
        None => spec.to_string(),
    };
    let HelperArgs { stage, policy } =
        serde_json::from_str(&text).map_err(|e| fail(format!("the policy does not parse: {e}")))?;
    match stage {
        Stage::Wrap { backend, print } => wrap_and_exec(&policy, backend, print, argv),
        Stage::Bwrap | Stage::Landlock => {
            if let (Stage::Bwrap, super::Network::Provider { port }, Some(sock)) =
                (stage, policy.network, &policy.proxy_socket)
            {
                super::forward::start(port, sock).map_err(fail)?;
            }
            confine(&policy, stage).map_err(fail)?;
            Err(exec(
                process::Command::new(&argv[0]).args(&argv[1..]),
                &argv[0],
            ))
        }
    }
}

/// Limits, Landlock, seccomp, in that order.
fn confine(policy: &Policy, stage: Stage) -> Result<(), String> {
    if let Some(n) = policy.limits.max_procs {
        // Inside bubblewrap's user namespace the count starts from nothing;
        // outside, it is every process and thread of the user.
        let already = if stage == Stage::Landlock {
            user_tasks()
        } else {
            0
        };
        sys::lower_rlimit(Limit::Procs, n.saturating_add(already))
            .map_err(|e| format!("RLIMIT_NPROC: {e}"))?;
    }
    if let Some(n) = policy.limits.max_file_bytes {
        sys::lower_rlimit(Limit::FileSize, n).map_err(|e| format!("RLIMIT_FSIZE: {e}"))?;
    }
    landlock::apply(policy, stage, sys::landlock_abi())?;
    // bubblewrap dropped them already (--cap-drop ALL); the Landlock helper
    // started as root has them all.
    sys::drop_capabilities().map_err(|e| format!("dropping capabilities: {e}"))?;
    seccomp::apply(policy.network)
}

fn wrap_and_exec(
    policy: &Policy,
    with: Option<WrapWith>,
    print: bool,
    argv: Vec<OsString>,
) -> Result<Never, (i32, String)> {
    let fail = |m: String| (SETUP_FAILED, m);
    let helper = std::env::current_exe().map_err(|e| fail(format!("baton's own path: {e}")))?;
    let found = super::probe();
    let sandbox = match with {
        None => {
            Sandbox::choose_from(super::Want::Require, found, helper).map_err(|u| fail(u.reason))?
        }
        Some(WrapWith::Landlock) => Sandbox::with_backend(
            Backend::Landlock {
                abi: sys::landlock_abi(),
            },
            helper,
        ),
        Some(WrapWith::Bwrap) => {
            let (path, disable_userns) = found.bwrap.clone().map_err(fail)?;
            Sandbox::with_backend(
                Backend::Bwrap {
                    path,
                    disable_userns,
                    landlock_abi: found.landlock_abi,
                },
                helper,
            )
        }
    };
    let wrapped = sandbox
        .wrap(policy, argv, std::env::vars_os().collect())
        .map_err(|u| fail(u.reason))?;
    if print {
        let lossy = |s: &OsString| s.to_string_lossy().into_owned();
        let env: serde_json::Map<String, serde_json::Value> = wrapped
            .env
            .iter()
            .map(|(k, v)| (lossy(k), lossy(v).into()))
            .collect();
        let argv: Vec<String> = wrapped.argv.iter().map(lossy).collect();
        println!(
            "{}",
            serde_json::json!({"argv": argv, "env": env, "sandbox": wrapped.report})
        );
        std::process::exit(0);
    }
    eprintln!(
        "{}",
        serde_json::to_string(&wrapped.report).expect("a report serialises")
    );
    let mut cmd = process::Command::new(&wrapped.argv[0])
        .args(&wrapped.argv[1..])
        .env_clear();
    for (k, v) in wrapped.env {
        cmd = cmd.env(k, v);
    }
    Err(exec(cmd, &wrapped.argv[0]))
}

/// exec (the one launcher's: stdin, the group and the session stay the
/// helper's), or why not.
fn exec(cmd: process::Command, program: &OsString) -> (i32, String) {
    let e = cmd.exec();
    let code = if e.kind() == std::io::ErrorKind::NotFound {
        NOT_FOUND
    } else {
        SETUP_FAILED
    };
    (
        code,
        format!("cannot run `{}`: {e}", PathBuf::from(program).display()),
    )
}

/// The processes and threads of this real user, as RLIMIT_NPROC counts
/// them (the owner of `/proc/PID` is the real user for a process that did
/// not change ids; close enough for a margin).
fn user_tasks() -> u64 {
    use std::os::unix::fs::MetadataExt as _;
    let me = std::fs::metadata("/proc/self").map(|m| m.uid()).ok();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter(|e| e.metadata().ok().map(|m| m.uid()) == me)
        .map(|e| std::fs::read_dir(e.path().join("task")).map_or(1, |t| t.count() as u64))
        .sum()
}
