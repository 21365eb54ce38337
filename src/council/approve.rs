//! Stage 5, approval: bound to the plan's sha256, the base commit and the
//! authorized files; an edited plan, a moved base or a wrong hash is refused.
//! Stages 6–9 take the plan only through `approved_plan`.

use super::machine::{Event, Stage};
use super::schema::Plan;
use super::store::{Approval, Record, now_ms, sha256_hex};
use crate::error::{Error, Result};

/// Approve `rec`'s plan if `plan_sha256` is its hash and nothing moved.
/// `mode`: `explicit` (`approve`) or `auto` (`plan --yes`).
pub fn approve(rec: &mut Record, plan_sha256: &str, mode: &str) -> Result<()> {
    if rec.stage != Stage::AwaitingApproval {
        return Err(super::store::not_now(
            rec,
            "be approved",
            "only a plan waiting for approval can be approved; `baton council status ID` shows where it is",
        ));
    }
    let path = rec.dir()?.join("plan.json");
    let bytes =
        std::fs::read(&path).map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
    let actual = sha256_hex(&bytes);
    if Some(&actual) != rec.plan_sha256.as_ref() {
        return Err(refused(
            "plan_changed",
            format!(
                "the plan at {} was changed after the council wrote it",
                path.display()
            ),
            "a plan is approved as the council wrote it; start a new council for a different plan",
        ));
    }
    if !plan_sha256.eq_ignore_ascii_case(&actual) {
        return Err(refused(
            "plan_sha256_mismatch",
            format!("--plan-sha256 {plan_sha256} is not the plan's sha256"),
            "copy `plan.sha256` from `baton council result ID` after reading the plan",
        ));
    }
    let head = crate::git::git(&rec.cwd)
        .args(["rev-parse", "--verify", "-q", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if head != rec.base_commit {
        return Err(refused(
            "base_moved",
            format!(
                "the repository moved from the plan's base commit {} to {}",
                rec.base_commit.as_deref().unwrap_or("none"),
                head.as_deref().unwrap_or("none")
            ),
            "the plan was made against the old base; start a new council on the current one",
        ));
    }
    let plan: super::schema::Plan = serde_json::from_slice(&bytes)
        .map_err(|e| Error::Internal(format!("the stored plan does not parse: {e}")))?;
    rec.approval = Some(Approval {
        mode: mode.into(),
        plan_sha256: actual,
        base_commit: rec.base_commit.clone(),
        authorized_files: plan.authorized_files,
        at_ms: now_ms(),
    });
    rec.advance(Event::Approved)?;
    Ok(())
}

/// The plan stages 6–9 execute, with the sha256 of the bytes it was parsed
/// from. `plan.json` is read once, those bytes are hashed and compared with
/// the approval, and the same bytes are parsed: never read again after the
/// check, so a plan edited after approval (a peer without a sandbox can
/// write in the state directory) is refused, not run.
pub fn approved_plan(rec: &Record) -> Result<(Plan, String)> {
    let approved = rec
        .approval
        .as_ref()
        .map(|a| a.plan_sha256.clone())
        .ok_or_else(|| Error::Internal("an executing council without an approval".into()))?;
    let path = rec.dir()?.join("plan.json");
    let changed = |what: String| {
        refused(
            "plan_changed",
            format!("{what}: baton executes only the plan that was approved (sha256 {approved})"),
            &format!(
                "put back the approved plan.json and `baton council resume {id}`, or re-plan: \
                 `baton council plan …` makes a new plan to read and approve",
                id = rec.council_id
            ),
        )
    };
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(changed(format!(
                "the approved plan {} was removed",
                path.display()
            )));
        }
        Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
    };
    let actual = sha256_hex(&bytes);
    if !actual.eq_ignore_ascii_case(&approved) {
        return Err(changed(format!(
            "the plan at {} was changed after approval (its sha256 is now {actual})",
            path.display()
        )));
    }
    let plan = serde_json::from_slice(&bytes)
        .map_err(|e| Error::Internal(format!("the approved plan does not parse: {e}")))?;
    Ok((plan, actual))
}

fn refused(kind: &'static str, message: String, hint: &str) -> Error {
    Error::Refused {
        kind,
        message,
        hint: hint.into(),
    }
}
