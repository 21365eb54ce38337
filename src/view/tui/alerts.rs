//! Alerts when a job ends, fails or stalls: the terminal bell, an OSC 9
//! desktop notification, and `--on-change CMD` run with the event in its env.
//!
//! CMD is split into words like a shell would (quotes, backslashes; what needs
//! a shell, such as `;` or `$`, is refused) and run
//! without one — baton starts no shell between itself and a child; write
//! `sh -c '…'` as CMD to get one. The child gets no terminal (stdin, stdout and
//! stderr are null: it must not draw over the view), runs in its own process
//! group, and is reaped by a thread: it never blocks the view.

use std::collections::HashMap;
use std::process::Stdio;

use crate::error::{Error, Result};
use crate::view::watch::JobView;

use super::app::is_running;

/// A job changed in a way worth telling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alert {
    pub job_id: String,
    pub agent: String,
    /// The new status: an end state, or `stalled`.
    pub status: String,
}

/// What changed between two looks: a running job that ended or stalled, or
/// a job first seen already ended. `before` maps ids to their last status;
/// `None` is the first look (nothing to compare with: no alerts).
pub fn changes(before: Option<&HashMap<String, String>>, now: &[JobView]) -> Vec<Alert> {
    let Some(before) = before else {
        return Vec::new();
    };
    now.iter()
        .filter(|v| match before.get(&v.job_id).map(String::as_str) {
            None => !is_running(v.status),
            Some(old) => old != v.status && (v.status == "stalled" || !is_running(v.status)),
        })
        .map(|v| Alert {
            job_id: v.job_id.clone(),
            agent: v.agent.clone(),
            status: v.status.to_string(),
        })
        .collect()
}

/// The statuses to compare the next look with.
pub fn statuses(jobs: &[JobView]) -> HashMap<String, String> {
    jobs.iter()
        .map(|v| (v.job_id.clone(), v.status.to_string()))
        .collect()
}

/// The bell and an OSC 9 notification for `a` (terminals that do not know
/// OSC 9 ignore it).
pub fn terminal_bytes(a: &Alert) -> String {
    let text: String = format!("baton: {} job {} {}", a.agent, a.job_id, a.status)
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    format!("\x07\x1b]9;{text}\x07")
}

/// `--on-change CMD`, split into its program and arguments.
#[derive(Debug, Clone)]
pub struct OnChange {
    argv: Vec<String>,
}

impl OnChange {
    pub fn parse(cmd: &str) -> Result<OnChange> {
        let argv = crate::words::split(cmd).map_err(|m| {
            Error::usage_hint(
                format!("--on-change: {m}"),
                "quote as in a shell: --on-change 'notify-send \"baton\"' (no shell runs it; use sh -c '…' for one)",
            )
        })?;
        if argv.is_empty() {
            return Err(Error::usage_hint(
                "--on-change needs a command",
                "e.g. --on-change 'notify-send baton' (BATON_JOB_ID and BATON_JOB_STATUS are set)",
            ));
        }
        Ok(OnChange { argv })
    }

    /// Start CMD for `a` and return at once.
    pub fn fire(&self, a: &Alert) {
        // No parent-death signal: a notification may outlive the view.
        let c = crate::process::Command::new(&self.argv[0])
            .args(&self.argv[1..])
            .env("BATON_JOB_ID", &a.job_id)
            .env("BATON_JOB_STATUS", &a.status)
            .env("BATON_JOB_AGENT", &a.agent)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .parent_death(None);
        // A command that cannot start is skipped: the view goes on.
        if let Ok(mut child) = c.spawn() {
            std::thread::spawn(move || child.wait());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::tui::app::tests::job;

    #[test]
    fn splits_like_a_shell_without_one() {
        assert_eq!(
            OnChange::parse(r#"notify-send  'baton: $X' "a \"b\"" d\ e ''"#)
                .unwrap()
                .argv,
            ["notify-send", "baton: $X", "a \"b\"", "d e", ""]
        );
        // What needs a shell is refused, not run literally: `sh -c '…'` is the way.
        assert!(OnChange::parse("a;rm -rf x").is_err());
        assert!(OnChange::parse("'open").is_err());
        assert!(OnChange::parse("  ").is_err());
    }

    #[test]
    fn alerts_on_end_failure_and_stall_only() {
        assert!(
            changes(None, &[job("a", "failed", 1)]).is_empty(),
            "first look"
        );
        let before = statuses(&[
            job("run", "running", 1),
            job("stall", "running", 2),
            job("same", "running", 3),
            job("old", "success", 4),
        ]);
        let now = [
            job("run", "failed", 1),
            job("stall", "stalled", 2),
            job("same", "running", 3),
            job("old", "success", 4),
            job("new", "running", 5),
            job("quick", "success", 6),
        ];
        let got: Vec<(String, String)> = changes(Some(&before), &now)
            .into_iter()
            .map(|a| (a.job_id, a.status))
            .collect();
        assert_eq!(
            got,
            [
                ("run".into(), "failed".into()),
                ("stall".into(), "stalled".into()),
                ("quick".into(), "success".into())
            ]
        );
        // A stalled job that streams again is not an alert; its end is.
        let before = statuses(&[job("s", "stalled", 1)]);
        assert!(changes(Some(&before), &[job("s", "running", 1)]).is_empty());
        assert_eq!(changes(Some(&before), &[job("s", "cancelled", 1)]).len(), 1);
    }

    #[test]
    fn notification_bytes_are_bell_and_osc9_without_controls() {
        let a = Alert {
            job_id: "1m8".into(),
            agent: "co\x1bdex".into(),
            status: "failed".into(),
        };
        assert_eq!(
            terminal_bytes(&a),
            "\x07\x1b]9;baton: codex job 1m8 failed\x07"
        );
    }
}
