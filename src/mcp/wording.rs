//! What a host's model reads about a tool's fields: shorter texts than the
//! flags' `--help` lines, and the fixed values of a field as an `enum`.
//!
//! Why not the help line itself: it is written for a person at a shell
//! (`--worktree, --agents: …`, `(or pipe it on stdin)`, what the config
//! file changes), and every host sends every tool's schema to its model in
//! every session, so each word is paid for again and again (docs/mcp.md#size:
//! the model-visible part of `tools/list` is held to 12 KiB). A field not
//! named here keeps its help line (`input::described`), so a new flag still
//! reaches the model described; the unit tests keep this table in step with
//! the tools' fields and each value with the command line's own parser.

/// A field's text for the model: by `tool.field` for one tool, or by
/// `field` for every tool that has it. An empty text leaves the field
/// undescribed (its name and `enum` say it all).
const TEXT: &[(&str, &str)] = &[
    // Shared: the same words in each tool, so `tools::SoFar` describes
    // each once in the list.
    ("agent", "Peer agent (the `agents` tool lists them)"),
    ("model", "Model or alias (the `agents` tool lists them)"),
    ("effort", "Reasoning effort (values depend on the agent)"),
    ("access", ""),
    ("cwd", "Directory to work in"),
    ("timeout", "Stop a peer after this long (e.g. 90s, 45m)"),
    ("idle_timeout", "Stop a peer silent for this long"),
    (
        "provider",
        "pi, opencode: provider (e.g. openai); qwen: auth type",
    ),
    ("max_usd", "Spending limit in dollars"),
    ("budget_tokens", "Spending limit in tokens (input + output)"),
    ("async", "Return an id at once; follow it with job_wait"),
    ("help_type", ""),
    ("constraint", "Constraints to respect"),
    (
        "observation",
        "Observations: errors, measurements, symptoms",
    ),
    ("file", "Files to inline: `src/a.rs`, `src/a.rs:10-40`"),
    (
        "diff",
        "Include `git diff` against this revision (e.g. HEAD)",
    ),
    ("task", "The task"),
    ("id", "A job's, fan-out's or council's id"),
    // run
    (
        "run.resume",
        "Continue this peer session (an earlier result's `session`)",
    ),
    (
        "run.fallback",
        "Agents (`NAME[:MODEL]`) that take the task over, in order, when the agent cannot \
         answer (rate limit, quota, auth) before changing a file",
    ),
    (
        "run.retry",
        "Retries of a rate-limited or unavailable provider",
    ),
    (
        "run.worktree",
        "Write in a new git worktree on branch `baton/<id>`, not in your checkout",
    ),
    (
        "run.base",
        "worktree, agents: the commit to branch from (default HEAD)",
    ),
    (
        "run.include_dirty",
        "worktree, agents: start from your uncommitted changes too",
    ),
    (
        "run.allow",
        "worktree, agents: the only paths (globs) the peer may change",
    ),
    (
        "run.test_cmd",
        "worktree, agents: a shell command run in the worktree after the peer",
    ),
    (
        "run.agents",
        "Fan out: these agents (`NAME[:MODEL]`) each attempt the task in a worktree of their own",
    ),
    ("run.attempts", "Fan out: attempts per agent (best of N)"),
    (
        "run.until_green",
        "Fan out: repair rounds of a candidate whose test_cmd fails",
    ),
    ("run.pick", "Fan out: how the winner is picked"),
    ("run.judge", "Fan out: who ranks: peers, none or an agent"),
    (
        "run.keep_all",
        "Fan out: keep every candidate's branch, not only the winner's",
    ),
    (
        "run.max_wall",
        "Fan out: no repair round or judge past this wall time",
    ),
    // ask
    ("ask.agent", "Adviser (an agent with a read-only mode)"),
    (
        "ask.agents",
        "Several advisers, side by side (`NAME[:MODEL]`)",
    ),
    ("ask.scope", "What the adviser may read"),
    ("ask.question", "The question"),
    // the councils
    ("members", "Members (`NAME[:MODEL]`)"),
    ("council_discuss.task", "The question"),
    ("depth", "quick: no critique; deep: a revision after it"),
    ("yes", "Approve the plan at once (no council_approve)"),
    ("execute", "With `yes`: execute the plan too"),
    ("council_approve.id", "The council's id"),
    ("council_execute.id", "The council's id"),
    // the jobs
    (
        "job_wait.timeout",
        "Stop waiting (not the job) after this long",
    ),
    ("jobs.all", "Every job, not only running and recent ones"),
    ("continue.id", "The job whose peer session to continue"),
    ("continue.task", "The follow-up task"),
    ("doctor.agent", "Check only this agent"),
    (
        "doctor.probe",
        "Also send each ready agent a tiny prompt (costs tokens)",
    ),
];

/// Fields that take one of a few values, which the command line checks
/// itself (so the flags have no clap values to read them from).
const CHOICES: &[(&str, &[&str])] = &[
    ("access", &["read-only", "workspace", "full"]),
    ("pick", &["best", "first-green"]),
    ("scope", &["packet", "repo"]),
    (
        "help_type",
        &[
            "diagnosis",
            "design_critique",
            "code_review",
            "experiment_review",
            "other",
        ],
    ),
    ("depth", &crate::council::preflight::DEPTHS),
];

/// The text for `field` of `tool`, if this table has one.
pub fn text(tool: &str, field: &str) -> Option<&'static str> {
    let key = format!("{tool}.{field}");
    TEXT.iter()
        .find(|(k, _)| *k == key)
        .or_else(|| TEXT.iter().find(|(k, _)| *k == field))
        .map(|(_, t)| *t)
}

/// The values `field` takes, if it takes a fixed few.
pub fn choices(field: &str) -> Option<&'static [&'static str]> {
    CHOICES.iter().find(|(k, _)| *k == field).map(|(_, v)| *v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry names a field some tool (or the named tool) has: a
    /// flag renamed or a tool removed leaves no dead text behind.
    #[test]
    fn every_text_names_a_field_of_a_tool() {
        let tools = crate::cli::mcp::described();
        let has = |tool: Option<&str>, field: &str| {
            tools
                .iter()
                .filter(|t| tool.is_none_or(|n| t.def.name == n))
                .any(|t| t.fields.iter().any(|f| f.name == field))
        };
        for (key, _) in TEXT {
            let ok = match key.split_once('.') {
                Some((tool, field)) => has(Some(tool), field),
                None => has(None, key),
            };
            assert!(ok, "`{key}` names no field of a tool");
        }
        for (field, _) in CHOICES {
            assert!(has(None, field), "`{field}` names no field of a tool");
        }
    }

    #[test]
    fn a_tools_own_text_comes_before_the_shared_one() {
        assert_eq!(
            text("job_wait", "timeout"),
            Some("Stop waiting (not the job) after this long")
        );
        assert_eq!(text("ask", "timeout"), text("run", "timeout"));
        assert_eq!(text("run", "raw"), None);
    }

    /// Each value offered is one the command line accepts, under the same
    /// name (the model is told these and no others).
    #[test]
    fn every_value_offered_is_accepted_by_the_command_line() {
        use crate::agent::Access;
        use crate::ask::packet::HelpType;
        use crate::fanout::request::Pick;
        let values = |f: &str| choices(f).unwrap().iter().copied();
        for v in values("access") {
            assert_eq!(Access::parse(v).unwrap().as_str(), v);
        }
        for v in values("pick") {
            assert_eq!(Pick::parse(Some(v)).unwrap().as_str(), v);
        }
        for v in values("help_type") {
            let h = HelpType::parse(v).unwrap();
            assert_eq!(serde_json::to_value(h).unwrap(), v);
        }
        for v in values("scope") {
            assert_eq!(crate::ask::parse_scope(v).unwrap().as_str(), v);
        }
    }
}
