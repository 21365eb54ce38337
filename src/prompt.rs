//! What the peer is told. Kept in one place so it can be inspected
//! (`baton run --dry-run` prints it) and changed deliberately.

use crate::agent::{Access, Agent};

/// The programs a peer must not start: baton and every agent's CLI (each
/// once: zai and pi share `pi`), the ones the user brought included.
fn agent_programs() -> String {
    let mut names = vec!["baton"];
    for a in Agent::everyone() {
        let b = a.binary();
        if !b.is_empty() && !names.contains(&b) {
            names.push(b);
        }
    }
    let (last, rest) = names.split_last().expect("baton at least");
    format!("{} or {last}", rest.join(", "))
}

/// Wrap the user's task in baton's brief (unless `--raw`).
pub fn brief(task: &str, access: Access, cwd: &str) -> String {
    let access_line = match access {
        Access::ReadOnly => {
            "You have read-only access: do not try to modify files; report what should change instead."
        }
        Access::Workspace => {
            "You may edit files in this directory and run the project's own commands (tests, builds)."
        }
        Access::Full => {
            "You have full access to this machine; still change only what the task needs."
        }
    };
    format!(
        "You are a peer coding agent. Another coding agent, working for a person, is handing you \
this task through baton.\n\
Work in this directory: {cwd}\n\
{access_line}\n\
Do the task below. Run the relevant checks (tests, linters, builds) when you change code.\n\
Do not delegate to other agents: do not run {programs}.\n\
End with a concise report: the files you changed, how you verified the work, and any blockers \
or open questions.\n\
\n\
<task>\n{task}\n</task>\n",
        programs = agent_programs()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brief_names_the_rules_and_keeps_the_task() {
        let b = brief("fix the flaky test", Access::Workspace, "/repo");
        assert!(b.contains("fix the flaky test"));
        assert!(b.contains("/repo"));
        assert!(b.contains("Do not delegate"));
        assert!(b.contains("concise report"));
        assert!(brief("x", Access::ReadOnly, "/r").contains("read-only"));
        // Every agent's CLI, the ACP ones too (issue 29 §7). (Agents other
        // tests bring may follow them: the registry is per process.)
        let line = b
            .lines()
            .find(|l| l.starts_with("Do not delegate"))
            .unwrap();
        assert!(
            line.contains(
                "do not run baton, codex, claude, agy, pi, gemini, opencode, qwen, copilot, kilo, \
                 cline"
            ),
            "{line}"
        );
        assert!(line.contains("nanocoder"), "{line}");
    }
}
