//! `bench mine --describe AGENT`: a peer writes the task text as an issue
//! would be written (what is wrong, how it shows), from the commit message,
//! the failing tests and the diff, instead of a commit message that often
//! says how it was fixed.
//!
//! The peer sees the fix, so what it writes is checked: a description that
//! quotes a line the fix added (whitespace aside, 6 characters or more) is
//! refused and the commit message kept, with a warning. The peer runs
//! read-only in the repository, as an ordinary run (`run::chain`).

use std::path::Path;

use crate::error::Result;
use crate::run::{self, Hooks, RunRequest};

use super::task::{PeerUsage, Task};

/// The most of the fix's diff the prompt holds.
const FIX_MAX: usize = 64 << 10;

/// What came of asking for a description.
#[derive(Debug, Clone, PartialEq)]
pub enum Described {
    Written(String),
    /// It quoted these lines of the fix.
    Refused(Vec<String>),
    /// The peer did not answer (its status and summary).
    Failed(String),
}

/// Ask `agent` (`NAME[:MODEL]`) to describe task `t`, whose fix is the
/// diff `fix`; and what the call spent (it is in the usage ledger too).
pub fn describe(agent: &str, top: &Path, t: &Task, fix: &str) -> Result<(Described, PeerUsage)> {
    // `NAME[:MODEL]`, as `--agents` takes it.
    let (name, model) = match agent.split_once(':') {
        Some((n, m)) => (n, Some(m.to_string())),
        None => (agent, None),
    };
    let req = RunRequest {
        agent: Some(name.to_string()),
        model,
        read_only: true,
        cwd: Some(top.to_path_buf()),
        ..RunRequest::default()
    };
    let text = prompt(t, fix);
    let plan = run::plan(&req, text)?;
    let mut ints = crate::process::Interrupts::install()?;
    let mut on_spawn = |_| {};
    let r = run::chain::run(&plan, None, &mut ints, Hooks::new(&mut on_spawn))?;
    let spent = PeerUsage {
        agent: agent.to_string(),
        tokens: r.usage.total_tokens(),
        cost_usd: r.usage.cost_usd,
        wall_ms: r.duration_ms,
    };
    let answer = r.message.unwrap_or_default();
    if r.status != crate::result::Status::Success || answer.trim().is_empty() {
        let why = format!("{}: {}", r.status.as_str(), r.summary);
        return Ok((Described::Failed(why), spent));
    }
    let quoted = quoted_lines(&answer, fix);
    if quoted.is_empty() {
        Ok((Described::Written(answer.trim().to_string()), spent))
    } else {
        Ok((Described::Refused(quoted), spent))
    }
}

/// `--describe`: the peer's text for `t`, when it writes one that does
/// not quote the fix; else the commit message stays, with a warning.
pub fn apply(top: &Path, agent: &str, t: &mut Task, warnings: &mut Vec<String>) -> Result<()> {
    let out = crate::git::git(top)
        .arg("diff")
        .args(crate::git::DIFF)
        .args(["--no-color", &t.base, &t.commit, "--"])
        .args(&t.source_files)
        .output()
        .map_err(|e| crate::error::Error::io("reading the fix for --describe", e))?;
    let fix = String::from_utf8_lossy(&out.stdout);
    let (described, spent) = describe(agent, top, t, &fix)?;
    t.describe_usage = Some(spent);
    match described {
        Described::Written(text) => {
            t.task = text;
            t.described_by = Some(agent.to_string());
        }
        Described::Refused(lines) => warnings.push(format!(
            "task {}: the description by {agent} quoted the fix ({}); the commit message is kept",
            t.id,
            lines.join(" | ")
        )),
        Described::Failed(why) => warnings.push(format!(
            "task {}: {agent} wrote no description ({why}); the commit message is kept",
            t.id
        )),
    }
    Ok(())
}

/// What the peer is asked.
pub fn prompt(t: &Task, fix: &str) -> String {
    let fix = if fix.len() > FIX_MAX {
        let mut end = FIX_MAX;
        while !fix.is_char_boundary(end) {
            end -= 1;
        }
        &fix[..end]
    } else {
        fix
    };
    format!(
        "Write the issue a user would have filed before this change existed: what is wrong, \
         how it shows, what is expected. Plain prose, a title line then a few sentences. Do \
         not say how to fix it, do not name the changed functions' new code, and do not quote \
         any line of the diff below. Answer with the issue text only.\n\n\
         The commit message:\n{}\n\nTests that fail before the change and pass after it:\n{}\n\n\
         The change (for your understanding only):\n{}",
        t.task.trim(),
        t.fail_to_pass.join("\n"),
        fix
    )
}

/// The lines `fix` adds (6 characters or more once whitespace is squeezed)
/// that `text` contains.
pub fn quoted_lines(text: &str, fix: &str) -> Vec<String> {
    let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let said = squeeze(text);
    let mut out: Vec<String> = fix
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .map(|l| squeeze(&l[1..]))
        .filter(|l| l.chars().count() >= 6 && l.chars().any(char::is_alphanumeric))
        .filter(|l| said.contains(l.as_str()))
        .collect();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIX: &str = "diff --git a/src/lib.rs b/src/lib.rs\n--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-    if n > 0 { n - 1 } else { 0 }\n+    n.saturating_sub(1)\n+}\n";

    #[test]
    fn a_description_that_quotes_the_fix_is_caught() {
        let bad = "Underflow\n\nUse `n.saturating_sub(1)` instead.";
        assert_eq!(quoted_lines(bad, FIX), ["n.saturating_sub(1)"]);
        // Spacing does not hide a quote; a line too short to mean anything
        // (`}`) and the removed line are not looked for.
        let spaced = "write   n.saturating_sub(1) there; if n > 0 { n - 1 } else { 0 } was it";
        assert_eq!(quoted_lines(spaced, FIX), ["n.saturating_sub(1)"]);
        let good = "Decrementing zero panics\n\ndec(0) should stay 0.";
        assert!(quoted_lines(good, FIX).is_empty());
    }

    #[test]
    fn the_prompt_holds_the_tests_and_a_bounded_diff() {
        use crate::bench::task::{FORMAT, Runner, TestCmd};
        let t = Task {
            format: FORMAT,
            id: "0123456789ab".into(),
            base: "a".repeat(40),
            commit: "b".repeat(40),
            task: "Fix dec".into(),
            source_files: vec!["src/lib.rs".into()],
            test_files: vec!["tests/dec.rs".into()],
            test_patch: "diff".into(),
            test_cmd: TestCmd {
                runner: Runner::Cargo,
                command: "cargo test".into(),
            },
            fail_to_pass: vec!["dec::zero".into()],
            pass_to_pass: vec![],
            mined_at_ms: 0,
            mined_by: "baton".into(),
            described_by: None,
            describe_usage: None,
        };
        let p = prompt(&t, FIX);
        assert!(
            p.contains("dec::zero") && p.contains("saturating_sub"),
            "{p}"
        );
        let huge = "+x€".repeat(FIX_MAX);
        assert!(prompt(&t, &huge).len() < FIX_MAX + 2000);
    }
}
