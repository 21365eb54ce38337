//! Stage 5, approval: bound to the plan's sha256, the base commit and the
//! authorized files; an edited plan, a moved base or a wrong hash is refused.

use super::machine::{Event, Stage};
use super::store::{Approval, Record, now_ms, sha256_hex};
use crate::error::{Error, Result};

/// Approve `rec`'s plan if `plan_sha256` is its hash and nothing moved.
/// `mode`: `explicit` (`approve`) or `auto` (`plan --yes`).
pub fn approve(rec: &mut Record, plan_sha256: &str, mode: &str) -> Result<()> {
    if rec.stage != Stage::AwaitingApproval {
        return Err(super::command::not_now(
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

fn refused(kind: &'static str, message: String, hint: &str) -> Error {
    Error::Refused {
        kind,
        message,
        hint: hint.into(),
    }
}
