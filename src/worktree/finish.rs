//! After the peer (`finish`): commit, fill the result's `worktree` report, run
//! `--test-cmd` in a fresh checkout of the commit (`checkout`). A commit that
//! fails fails the run; a check that fails leaves `status` the peer's but
//! takes the merge hint away (and exits `CHECK_FAILED`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::error::Error;
use crate::result::{ErrorInfo, RunResult, Status, Verification, Warning};
use crate::run::{self, Plan};
use crate::{fsutil, process};

use super::Session;
use super::checkout::Checkout;
use super::commit::{self, settle};
use super::{repo, store, verify};

/// The `worktree` object of the result.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "WorktreeReport")]
pub struct Report {
    pub id: String,
    pub path: PathBuf,
    pub branch: String,
    /// The commit the branch started from.
    pub base: String,
    /// The branch's tip after baton's commit.
    pub head: String,
    /// The commit baton imported into your repository (= `head`), onto
    /// `branch`; what was tested and what `merge_hint` names. `None` in a
    /// report of an older baton.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// `base..branch`, oldest first: the peer's own commits, then baton's.
    pub commits: Vec<repo::Commit>,
    /// Equal to the summary line of `git diff --stat base..branch`.
    pub diffstat: repo::DiffStat,
    /// Every path that differs between base and branch.
    pub changed_files: Vec<String>,
    /// The exact command that brings the work into the current branch
    /// (`git merge <commit>`); null when `--test-cmd` ran and failed
    /// (`verification` says how).
    pub merge_hint: Option<String>,
    /// Paths changed outside `--allow`, reverted by baton.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reverted: Vec<String>,
    /// Paths carried from the user's uncommitted state (`--include-dirty`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub carried: Vec<String>,
}

/// The `worktree` object of a result whose work baton did not commit: the
/// peer tampered with the worktree, the commit failed, or a job's runner
/// ended first. Only the schema uses this type (`baton schema`); the
/// contract test checks real results of each case against it.
#[derive(Serialize, JsonSchema)]
#[allow(dead_code)]
pub struct NotCommitted {
    pub id: String,
    pub path: PathBuf,
    pub branch: String,
    /// The commit the branch started from.
    pub base: String,
    /// Why nothing was committed.
    pub error: String,
    /// `true`: the peer rewired the worktree's git metadata
    /// (`worktree_tampered`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tampered: bool,
    /// `true`: a job's runner ended before baton committed the peer's work.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// `worktree_commit_failed`: the paths the peer changed that are not on
    /// the branch (left in the worktree, when it still exists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncommitted: Option<Vec<String>>,
}

/// After the peer: commit, describe the branch, run `--test-cmd`, and
/// rewrite `result.json` in `dir`. Never fails: a commit that fails (or a
/// tampered worktree) makes the run `failed` with its own error kind, and
/// other problems become warnings.
pub fn finish(s: &Session, plan: &Plan, result: &mut RunResult, dir: &Path, stop: &verify::Stop) {
    let status = result.status;
    let mut tampered = None;
    let mut head = None;
    match settle(s, plan, status) {
        Ok(settled) => {
            let report = settled.report;
            head = Some(report.head.clone());
            result
                .warnings
                .extend(settled.notes.into_iter().map(Warning::from));
            // What the peer changed is what is on disk against where it
            // started (reverted paths gone), and the summary counts that
            // same list.
            result.changed_files = settled.changed;
            result.summary = run::summarize(
                plan.agent,
                result.status,
                Duration::from_millis(result.duration_ms),
                result.message.as_deref(),
                result.error.as_ref(),
                result.changed_files.len(),
            );
            if !report.reverted.is_empty() {
                result.summary.push_str(&format!(
                    "; {} reverted outside --allow",
                    report.reverted.len()
                ));
            }
            result.summary.push_str(&format!(
                "; branch {}: {} file(s), +{} -{}",
                report.branch,
                report.diffstat.files,
                report.diffstat.insertions,
                report.diffstat.deletions
            ));
            if let Ok(v) = serde_json::to_value(&report) {
                result.extra.insert("worktree".into(), v);
            }
        }
        Err(e) => {
            // Whatever the peer said, its run failed: baton did not commit
            // its work (it could not, or will not from a worktree whose git
            // metadata the peer rewired).
            if let Some(prev) = result.error.take() {
                result.warnings.push(Warning::Text(format!(
                    "the peer's run had also ended with `{}`: {}",
                    prev.kind, prev.message
                )));
            }
            result.status = Status::Failed;
            let mut object = json!({
                "id": s.id,
                "path": s.path,
                "branch": s.branch,
                "base": s.base,
                "error": e.to_string(),
            });
            // Not "succeeded …": the peer's own verdict no longer stands.
            match &e {
                Error::WorktreeTampered { what, .. } => {
                    result.summary = format!(
                        "{} run failed: the peer tampered with its worktree's git metadata \
                         ({what}); nothing committed",
                        plan.agent.name()
                    );
                    object["tampered"] = json!(true);
                    tampered = Some(e.to_string());
                }
                Error::WorktreeCommitFailed { uncommitted, .. } => {
                    result.summary = format!(
                        "{} run failed: baton could not commit its work on {}; {}",
                        plan.agent.name(),
                        s.branch,
                        if s.path.is_dir() {
                            format!("it is left in {}", s.path.display())
                        } else {
                            format!("its worktree {} is gone", s.path.display())
                        }
                    );
                    if let Some(left) = uncommitted {
                        object["uncommitted"] = json!(left);
                    }
                    // What the peer changed, from the files on disk (never
                    // from its index), when git can still tell.
                    result.changed_files = s
                        .pin()
                        .ok()
                        .filter(|p| s.path.is_dir() && p.verify().is_ok())
                        .and_then(|p| commit::on_disk_against(s, &p, s.run_from()).ok())
                        .unwrap_or_default();
                }
                _ => {}
            }
            result.error = Some(ErrorInfo {
                retry_after_s: None,
                kind: e.kind().into(),
                message: e.to_string(),
                hint: e.hint(),
            });
            result.extra.insert("worktree".into(), object);
        }
    }
    if let Some(cmd) = &s.test_cmd {
        verify_run(s, plan, result, dir, stop, cmd, head.as_deref());
    }
    if let Some(mut r) = store::load(&s.root, &s.id) {
        r.finished_ms = Some(store::now_ms());
        r.status = Some(result.status.as_str().to_string());
        r.tampered = tampered;
        r.pid = None;
        if let Err(e) = store::save(&s.root, &r) {
            result
                .warnings
                .push(format!("worktree: could not update its record: {e}").into());
        }
    }
    match serde_json::to_vec(&*result) {
        Ok(json) => {
            if let Err(e) = fsutil::write_atomic(&dir.join("result.json"), &json) {
                result
                    .warnings
                    .push(format!("could not save result.json: {e}").into());
            }
        }
        Err(e) => result
            .warnings
            .push(format!("could not save result.json: {e}").into()),
    }
}

pub(super) fn verify_run(
    s: &Session,
    plan: &Plan,
    result: &mut RunResult,
    dir: &Path,
    stop: &verify::Stop,
    cmd: &str,
    head: Option<&str>,
) {
    let Some(head) = head.filter(|_| result.status == Status::Success) else {
        result.warnings.push(Warning::Text(format!(
            "--test-cmd was not run: the peer's run ended with status `{}`",
            result.status.as_str()
        )));
        return;
    };
    let log = dir.join("test.log");
    let ran = Checkout::make(s, head).and_then(|c| {
        let rel = plan.cwd.strip_prefix(&s.path).unwrap_or(Path::new(""));
        let env = [
            ("BATON_WORKTREE".to_string(), c.top.display().to_string()),
            ("BATON_BRANCH".to_string(), s.branch.clone()),
            ("BATON_COMMIT".to_string(), head.to_string()),
        ];
        let checked = c.cwd(rel).and_then(|cwd| {
            verify::run(
                cmd,
                verify::Place {
                    cwd: &cwd,
                    top: &c.top,
                    sandbox: plan.sandbox,
                },
                &log,
                &env,
                Duration::from_millis(plan.timeout_ms),
                run::KILL_GRACE,
                stop,
            )
        });
        result.warnings.extend(c.remove().map(Warning::from));
        checked
    });
    let checked = match ran {
        Ok(c) => c,
        Err(e) => {
            // Not proven is not passed: no merge hint for what was not tested.
            result.summary.push_str("; test-cmd could not be run");
            result.verification = Some(Verification {
                command: cmd.to_string(),
                exit_code: None,
                passed: false,
                output_tail: format!("[baton: --test-cmd could not be run: {e}]"),
                commit: Some(head.to_string()),
                sandbox: None,
            });
            no_merge_hint(result);
            return;
        }
    };
    let v = &checked.verification;
    result.summary.push_str(&if v.passed {
        "; test-cmd passed".to_string()
    } else if checked.timed_out {
        "; test-cmd timed out".to_string()
    } else {
        format!(
            "; test-cmd FAILED ({})",
            v.exit_code
                .map_or("no exit code".to_string(), |c| format!("exit {c}"))
        )
    });
    result
        .warnings
        .extend(checked.log_warning(&log).map(Warning::from));
    if let Some(sig) = checked.interrupted {
        result.status = Status::Cancelled;
        result.error = Some(ErrorInfo {
            retry_after_s: None,
            kind: "cancelled".into(),
            message: format!(
                "stopped by {} while --test-cmd ran",
                process::signal_name(sig)
            ),
            hint: Some(format!(
                "the peer's work is committed on {}; run the check yourself in a checkout of it",
                s.branch
            )),
        });
    }
    if !v.passed {
        no_merge_hint(result);
    }
    result.verification = Some(Verification {
        commit: Some(head.to_string()),
        ..checked.verification
    });
}

/// The check failed: the result's `worktree` names no command to merge.
fn no_merge_hint(result: &mut RunResult) {
    if let Some(w) = result
        .extra
        .get_mut("worktree")
        .and_then(|w| w.as_object_mut())
    {
        w.insert("merge_hint".into(), serde_json::Value::Null);
    }
}
