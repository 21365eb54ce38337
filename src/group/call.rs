//! One structured call of a group's peer, as a council member and a
//! fan-out judge make it: read-only, prompted with `prompt`, answering in
//! a schema (`extract` checks it), through `ask`'s consultation (retries
//! and fallbacks as for any run, one repair round naming the schema), with
//! the run's record (`runs`) written at its start and end. Each caller
//! keeps its own prompt, answer type and way of reporting the outcome.

use std::path::Path;

use crate::ask::AskRequest;
use crate::ask::advice::Scope;
use crate::ask::adviser::{AdviserSpec, prepare_with};
use crate::ask::consult::{Repair, Verdict, answer, schema_repair_fresh, schema_repair_in_session};
use crate::error::Result;
use crate::process::Interrupts;
use crate::result::{RunResult, Status, Usage};

use super::runs::{self, Started, Who};

/// The answer's schema: its id (every repair prompt names it), its text,
/// and the file the CLI is given it in.
pub struct Schema<'a> {
    pub id: &'a str,
    pub text: &'a str,
    pub path: &'a Path,
}

/// Where the run's record goes: the group's folder, the stage (with its
/// round, as `reviewing0`) and who (`m0`, `j1`).
pub struct Record<'a> {
    pub dir: &'a Path,
    pub stage: &'a str,
    pub who: &'a str,
    pub peer: Who<'a>,
}

pub struct Structured<'a, T> {
    pub spec: AdviserSpec,
    pub req: AskRequest,
    /// `Packet`: tools off, in an empty folder; `Repo`: read-only in `cwd`.
    pub scope: Scope,
    pub cwd: &'a Path,
    pub root: &'a Path,
    pub prompt: &'a str,
    pub schema: Schema<'a>,
    pub extract: &'a (dyn Fn(&str) -> std::result::Result<T, Vec<String>> + Sync),
    pub record: Record<'a>,
}

/// The call's run (both rounds' costs added up) and its verdict; its
/// record stays open until `end`.
pub struct Answered<T> {
    pub run: RunResult,
    pub verdict: Verdict<T>,
    started: Option<Started>,
}

impl<T> Answered<T> {
    /// Close the run's record: `outcome`, or `cancelled` when a cancel or
    /// a signal stopped it (no error of the peer's).
    pub fn end(&mut self, outcome: &str, usage: &Usage, model: Option<&str>, ints: &Interrupts) {
        if let Some(s) = self.started.take() {
            let outcome = match ints.fired() {
                Some(_) => "cancelled",
                None => outcome,
            };
            s.end(outcome, usage, model);
        }
    }
}

/// Make the call. A tool error (the peer could not be prepared or run at
/// all) is the error, its record ended as `error`; a peer that ran and
/// failed or answered out of schema is the verdict.
pub fn call<T>(s: &Structured<'_, T>, ints: &mut Interrupts) -> Result<Answered<T>> {
    let p = prepare_with(
        &s.spec,
        &s.req,
        s.scope,
        s.cwd,
        s.root,
        s.prompt,
        (s.schema.text, s.schema.path),
    )?;
    let (dir, _) = crate::run::run_dir_or_warning(s.root)?;
    let (id, text) = (s.schema.id, s.schema.text);
    let repair = Repair {
        in_session: &|errs| schema_repair_in_session(errs, id, text),
        fresh: &|errs, raw| schema_repair_fresh(errs, raw, id, text),
    };
    let log = dir.as_ref().map(|d| d.join("stdout.log"));
    let r = &s.record;
    let started = runs::start(r.dir, r.stage, r.who, r.peer, log.as_deref());
    match answer(&p, dir.as_deref(), ints, s.extract, &repair) {
        Ok((run, verdict, _)) => Ok(Answered {
            run,
            verdict,
            started,
        }),
        Err(e) => {
            if let Some(st) = started {
                st.end("error", &Usage::default(), None);
            }
            Err(e)
        }
    }
}

/// A run that failed as its outcome (`timeout` or `error`) and why: its
/// error's kind and message, else its summary.
pub fn failed(r: &RunResult) -> (&'static str, String) {
    let outcome = match r.status {
        Status::Timeout => "timeout",
        _ => "error",
    };
    let reason = r
        .error
        .as_ref()
        .map(|e| format!("{}: {}", e.kind, e.message))
        .unwrap_or_else(|| r.summary.clone());
    (outcome, reason)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::ErrorInfo;

    #[test]
    fn a_failed_run_is_an_outcome_named_by_its_error_else_its_summary() {
        let mut r: RunResult = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "status": "timeout", "summary": "codex timed out after 1s",
            "message": null, "agent": "codex", "model": null, "effort": null,
            "access": "read-only", "cwd": "/", "session": null, "changed_files": [],
            "usage": {"input_tokens": null, "output_tokens": null,
                "cached_input_tokens": null, "cost_usd": null},
            "duration_ms": 1, "exit_code": null, "log_path": null, "warnings": [],
            "error": null, "verification": null
        }))
        .unwrap();
        assert_eq!(
            failed(&r),
            ("timeout", "codex timed out after 1s".to_string())
        );
        r.status = Status::Failed;
        r.error = Some(ErrorInfo {
            kind: "rate_limited".into(),
            message: "slow down".into(),
            hint: None,
            retry_after_s: None,
        });
        assert_eq!(failed(&r), ("error", "rate_limited: slow down".to_string()));
    }
}
