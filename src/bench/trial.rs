//! One trial: one task handed to one setting (agent, model) once, checked
//! by the task's hidden tests. `bench run` writes one file per trial
//! (`trials/<task>.<setting>.<repeat>.json` in the bench run's record);
//! `bench report` and `bench merge` read them.

use serde::{Deserialize, Serialize};

/// What one trial found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Trial {
    /// The task's id.
    pub task: String,
    /// The setting as given to `--agents`: `AGENT` or `AGENT:MODEL`.
    pub setting: String,
    /// Which repetition (0-based, below `--repeat`).
    pub repeat: u32,
    /// Every fail_to_pass test passes and no pass_to_pass test broke.
    pub solved: bool,
    /// fail_to_pass tests that did not pass.
    pub still_failing: Vec<String>,
    /// pass_to_pass tests that no longer pass.
    pub broken: Vec<String>,
    /// Test files and test infrastructure the peer changed, reverted before
    /// the tests ran.
    pub tampered_tests: Vec<String>,
    /// The peer's result status (`ok`, `error`, `timeout`, …).
    pub status: String,
    /// The failure kind of a peer that did not finish (`rate_limited`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_kind: Option<String>,
    /// Tokens the peer reported (input + output), when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// Dollars, when the CLI reported them or baton could price the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The peer's wall time, without baton's set-up and the tests.
    pub wall_ms: u64,
    /// Lines added plus removed by the peer (tests excluded).
    pub diff_lines: u64,
    pub started_at_ms: u64,
    pub ended_at_ms: u64,
}

/// The file a trial is stored in: `<task>.<setting>.<repeat>.json`, the
/// setting's `:` and `/` written `_` (a task id has neither `.` nor `_`).
pub fn file_name(task: &str, setting: &str, repeat: u32) -> String {
    let s: String = setting
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
        .collect();
    format!("{task}.{s}.{repeat}.json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trials_file_name_has_no_separator_from_the_setting() {
        assert_eq!(
            file_name("0123456789ab", "claude:opus/4.7", 2),
            "0123456789ab.claude_opus_4_7.2.json"
        );
    }
}
