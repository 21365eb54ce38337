//! What the peer is told. Kept in one place so it can be inspected
//! (`baton run --dry-run` prints it) and changed deliberately.

use crate::agent::Access;

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
Do not delegate to other agents: do not run baton, codex, claude, agy, pi, gemini, opencode or qwen.\n\
End with a concise report: the files you changed, how you verified the work, and any blockers \
or open questions.\n\
\n\
<task>\n{task}\n</task>\n"
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
    }
}
