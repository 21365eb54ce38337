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
    /// The peer's result status as `baton run` prints it (`success`,
    /// `failed`, `timeout`, `cancelled`, `error`).
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
    /// Independent attempts made (`--attempts N`: each a fresh checkout and
    /// a fresh session; the next one starts only when the hidden tests said
    /// no). 1 in a record older than the flag.
    #[serde(default = "one")]
    pub attempts: u32,
    /// The attempt (1-based) whose work the hidden tests passed; absent when
    /// none did. `solved_on == 1` is pass@1, any is pass@k.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solved_on: Option<u32>,
    /// Repair turns over all attempts (`--until-green R`: the visible tests
    /// failed and the peer's session got their output).
    #[serde(default)]
    pub repair_rounds: u32,
}

fn one() -> u32 {
    1
}

/// The file a trial is stored in: `<task>.<setting>.<repeat>.json`, the
/// setting's `:` and `/` written `_` (a task id has neither `.` nor `_`).
pub fn file_name(task: &str, setting: &str, repeat: u32) -> String {
    let s: String = setting
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{task}.{s}.{repeat}.json")
}

/// Every trial stored in `dir` (files ending `.json`), sorted by task,
/// setting and repeat. A file that does not read as a trial is an error
/// naming it: a report must not quietly leave trials out.
pub fn read_dir(dir: &std::path::Path) -> crate::error::Result<Vec<Trial>> {
    use crate::error::Error;
    let mut out = Vec::new();
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(Error::io(format!("reading {}", dir.display()), e)),
    };
    for e in rd {
        let e = e.map_err(|e| Error::io(format!("reading {}", dir.display()), e))?;
        let p = e.path();
        if p.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let text = std::fs::read_to_string(&p)
            .map_err(|e| Error::io(format!("reading {}", p.display()), e))?;
        let t: Trial = serde_json::from_str(&text).map_err(|e| {
            Error::usage_hint(
                format!("{}: not a trial record: {e}", p.display()),
                "remove it, or run the trial again (`baton bench run --resume`)",
            )
        })?;
        out.push(t);
    }
    out.sort_by(|a, b| (&a.task, &a.setting, a.repeat).cmp(&(&b.task, &b.setting, b.repeat)));
    Ok(out)
}

/// Store a trial in `dir` under its `file_name`, atomically.
pub fn write(dir: &std::path::Path, t: &Trial) -> crate::error::Result<()> {
    let b =
        serde_json::to_vec_pretty(t).map_err(|e| crate::error::Error::Internal(e.to_string()))?;
    crate::fsutil::write_atomic(&dir.join(file_name(&t.task, &t.setting, t.repeat)), &b)
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

    #[test]
    fn trials_written_read_back_sorted_and_a_bad_file_is_named() {
        let d = tempfile::tempdir().unwrap();
        let t = |task: &str, setting: &str, repeat| Trial {
            task: task.into(),
            setting: setting.into(),
            repeat,
            solved: repeat == 0,
            still_failing: vec![],
            broken: vec![],
            tampered_tests: vec![],
            status: "ok".into(),
            failure_kind: None,
            tokens: Some(10),
            cost_usd: None,
            wall_ms: 5,
            diff_lines: 2,
            started_at_ms: 1,
            ended_at_ms: 6,
            attempts: 1,
            solved_on: (repeat == 0).then_some(1),
            repair_rounds: 0,
        };
        let all = vec![t("a", "codex", 0), t("a", "codex", 1), t("b", "pi:glm", 0)];
        for x in all.iter().rev() {
            write(d.path(), x).unwrap();
        }
        assert_eq!(read_dir(d.path()).unwrap(), all);
        assert!(read_dir(&d.path().join("none")).unwrap().is_empty());
        std::fs::write(d.path().join("x.json"), "{}").unwrap();
        let e = read_dir(d.path()).unwrap_err();
        assert!(e.to_string().contains("x.json"), "{e}");
    }
}
