//! Golden files for the command line: `baton schema` and the `--help` of every
//! visible command must match `tests/fixtures/cli/` byte for byte.
//!
//! A change to a flag or its help text is a change to the public interface:
//! re-bless deliberately with `BATON_BLESS=1 cargo test --test integration cli_snapshots`
//! and review the diff of the fixtures.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::support::{BATON, fixture};

/// Every visible command path (hidden `__job-runner` excluded).
const COMMANDS: &[&[&str]] = &[
    &[],
    &["run"],
    &["ask"],
    &["agents"],
    &["schema"],
    &["bench"],
    &["bench", "run"],
    &["bench", "merge"],
    &["council"],
    &["council", "discuss"],
    &["council", "plan"],
    &["council", "approve"],
    &["council", "execute"],
    &["council", "list"],
    &["bench"],
    &["bench", "mine"],
    &["bench", "list"],
    &["bench", "show"],
    &["bench", "report"],
    &["worktree"],
    &["worktree", "list"],
    &["worktree", "remove"],
    &["wait"],
    &["status"],
    &["result"],
    &["cancel"],
    &["jobs"],
    &["logs"],
    &["watch"],
    &["serve"],
    &["continue"],
    &["attach"],
    &["prune"],
    &["doctor"],
    &["config"],
    &["config", "show"],
    &["config", "path"],
    &["config", "init"],
    &["mcp"],
    &["setup"],
    &["completions"],
    &["man"],
];

/// Runs baton with a fixed terminal size so that clap's wrapping is the same
/// everywhere (`wrap_help` reads `COLUMNS`/`LINES` before asking the terminal).
fn baton(args: &[&str]) -> Vec<u8> {
    let out = Command::new(BATON)
        .args(args)
        .env("COLUMNS", "100")
        .env("LINES", "50")
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("run baton");
    assert!(
        out.status.success(),
        "baton {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn check(golden: PathBuf, actual: &[u8]) {
    if std::env::var_os("BATON_BLESS").is_some() {
        std::fs::write(&golden, actual).expect("write golden file");
        return;
    }
    let expected = std::fs::read(&golden)
        .unwrap_or_else(|e| panic!("read {}: {e} (bless with BATON_BLESS=1)", golden.display()));
    assert!(
        expected == actual,
        "{} differs from the binary's output:\n--- expected\n{}\n--- actual\n{}",
        golden.display(),
        String::from_utf8_lossy(&expected),
        String::from_utf8_lossy(actual)
    );
}

fn help_file(path: &[&str]) -> PathBuf {
    let name = if path.is_empty() {
        "baton".to_string()
    } else {
        format!("baton-{}", path.join("-"))
    };
    fixture(&format!("cli/help/{name}.txt"))
}

#[test]
fn help_text_of_every_command_is_unchanged() {
    for path in COMMANDS {
        let mut args = path.to_vec();
        args.push("--help");
        check(help_file(path), &baton(&args));
    }
}

#[test]
fn short_help_is_unchanged() {
    for path in [&[][..], &["run"], &["ask"]] {
        let mut args = path.to_vec();
        args.push("-h");
        let name = help_file(path).with_extension("short.txt");
        check(name, &baton(&args));
    }
}

#[test]
fn schema_is_unchanged() {
    check(fixture("cli/schema.json"), &baton(&["schema"]));
}

#[test]
fn help_does_not_depend_on_the_terminal_width_env_when_fixed() {
    // The same command twice gives the same bytes: the snapshot is deterministic.
    assert_eq!(baton(&["run", "--help"]), baton(&["run", "--help"]));
}
