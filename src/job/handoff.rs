//! The hand-off block of a started job: the commands a person needs to
//! watch it, send it the next turn, stop it, or take it over once it ends.
//!
//! `run --async` and `continue` put it in their JSON (`handoff`) so a host
//! agent prints it as is instead of building commands (and getting them wrong).

use schemars::JsonSchema;
use serde::Serialize;

/// The commands, ready to paste.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Handoff {
    pub job_id: String,
    /// Every job at a glance (the terminal dashboard).
    pub watch: String,
    /// This job's progress, as it happens.
    pub logs: String,
    /// Its result, once it ends.
    pub wait: String,
    /// The next turn (after it ends), with the text to replace.
    #[serde(rename = "continue")]
    pub continue_: String,
    pub cancel: String,
    /// The peer CLI's own interface on the same session, after it ends.
    pub attach: String,
    /// The block above for a person, one command a line.
    pub text: String,
}

impl Handoff {
    pub fn new(id: &str) -> Handoff {
        let watch = "baton watch".to_string();
        let logs = format!("baton logs --follow {id}");
        let wait = format!("baton wait {id}");
        let continue_ = continue_command(id);
        let cancel = format!("baton cancel {id}");
        let attach = format!("baton attach {id}");
        let text = format!(
            "Job {id} is running in the background.\n\
             watch:     {watch}   (or: {logs})\n\
             result:    {wait}\n\
             next turn: {continue_}\n\
             stop:      {cancel}\n\
             take over: {attach}   (once it has ended)\n"
        );
        Handoff {
            job_id: id.to_string(),
            watch,
            logs,
            wait,
            continue_,
            cancel,
            attach,
            text,
        }
    }
}

/// The command that sends job `id`'s session the next turn.
pub fn continue_command(id: &str) -> String {
    format!("baton continue {id} \"<next instruction>\"")
}

/// The hint of a job that was cancelled or lost: `baton continue` is how a
/// job's session goes on (not `--resume`, which starts a foreground run).
pub fn ended_hint(id: &str, session: bool) -> String {
    if session {
        format!(
            "run it again, or continue its session with `{}`",
            continue_command(id)
        )
    } else {
        "run it again (the peer reported no session to continue)".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_names_the_job() {
        let h = Handoff::new("abc123def4567");
        assert_eq!(h.logs, "baton logs --follow abc123def4567");
        assert_eq!(
            h.continue_,
            "baton continue abc123def4567 \"<next instruction>\""
        );
        assert_eq!(h.cancel, "baton cancel abc123def4567");
        assert_eq!(h.attach, "baton attach abc123def4567");
        for cmd in [
            &h.watch,
            &h.logs,
            &h.wait,
            &h.continue_,
            &h.cancel,
            &h.attach,
        ] {
            assert!(
                h.text.contains(cmd.as_str()),
                "{cmd} missing from the block"
            );
        }
        let v = serde_json::to_value(&h).unwrap();
        assert_eq!(v["continue"], h.continue_);
    }

    #[test]
    fn an_ended_job_is_continued_with_baton_continue_not_resume() {
        let h = ended_hint("abc123def4567", true);
        assert!(h.contains("`baton continue abc123def4567 \"<next instruction>\"`"));
        assert!(!h.contains("--resume"), "{h}");
        assert!(!ended_hint("abc123def4567", false).contains("continue abc"));
    }
}
