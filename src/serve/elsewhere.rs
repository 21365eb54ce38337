//! `continue` for a job of another project (`baton serve --all`): `baton
//! continue ID PROMPT` itself, started in that project's root.
//!
//! Why a child: a follow-up job is made in the store of the directory
//! `baton continue` runs in (`Store::here`, as for every job command), and
//! one server serves many projects at once, so it cannot move into one.
//! The child is this very binary (`current_exe`), started through
//! `crate::process` with an argv array — the id checked against the
//! project's store first, the prompt after `--`, so neither is read as an
//! option — and its JSON answer is passed on as it printed it.

use std::ffi::OsStr;
use std::time::Duration;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::repos::RepoInfo;
use super::routes::blocking;
use crate::error::Error;

/// Longer than any launch takes (`continue` answers once the runner started).
const LIMIT: Duration = Duration::from_secs(60);

/// `POST /api/jobs/{id}/continue?repo=KEY` under `--all`.
pub async fn continue_job(repo: RepoInfo, id: String, prompt: String) -> Response {
    let r = blocking(move || {
        let (Some(store), Some(root)) = (repo.store.clone(), repo.root()) else {
            return Err(Error::Internal("a shown repository has no store".into()));
        };
        // The id must name a job of this project before anything runs.
        let job = store.open(OsStr::new(&id))?;
        let exe = std::env::current_exe()
            .map_err(|e| Error::io("finding baton's own binary to continue a job", e))?;
        let out = crate::process::Command::new(exe)
            .args(["continue", "--", job.id.as_str(), prompt.as_str()])
            .current_dir(&root)
            .stdin(std::process::Stdio::null())
            .deadline(LIMIT)
            .output()
            .map_err(|e| {
                Error::Internal(format!(
                    "running `baton continue {}` in {}: {e}",
                    job.id,
                    root.display()
                ))
            })?;
        let answer: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| {
            Error::Internal(format!(
                "`baton continue {}` printed no JSON ({e}): {}",
                job.id,
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        })?;
        Ok((out.status.code(), answer))
    })
    .await;
    match r {
        Ok((Some(0), v)) => (StatusCode::ACCEPTED, Json(v)).into_response(),
        Ok((code, v)) => {
            let status = match code {
                Some(4) => StatusCode::NOT_FOUND,
                Some(2) => StatusCode::BAD_REQUEST,
                Some(127) => StatusCode::CONFLICT,
                _ => StatusCode::INTERNAL_SERVER_ERROR,
            };
            (status, Json(v)).into_response()
        }
        Err(r) => r,
    }
}
