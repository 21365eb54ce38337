//! The group routes (councils and fan-outs): one run's transcript as
//! Server-Sent Events (`/api/councils/{id}/runs/{name}/events`) and cancel
//! (`/api/councils/{id}/cancel`).
//!
//! No path from the client is joined unchecked: the repository (`?repo`)
//! must be one the server lists and shows, the id a valid id
//! of a council or fan-out of that project, and the run name must be one
//! its record lists (the log path is the record's, never the client's).
//! Cancel calls what `baton cancel ID` calls for the group.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::routes::{App, Which, blocking, error};
use super::sse::{self, Source};
use crate::agent::Agent;
use crate::council::store::Record;
use crate::error::{Error, IdOf, Result};
use crate::group::runs;
use crate::job::store::Store;
use crate::view::group as view;

/// The folder of group `id` (a council or a fan-out) of this project,
/// checked to exist, and which kind it is.
fn group_dir(store: &Store, id: &str) -> Result<(view::GroupKind, std::path::PathBuf)> {
    if !crate::ids::is_valid(id) {
        return Err(Error::InvalidId {
            what: IdOf::Group,
            id: id.into(),
        });
    }
    let folders = view::group_dirs(store);
    store
        .root()
        .and_then(|root| crate::store::find(root, std::ffi::OsStr::new(id)))
        .filter(|f| f.kind != view::GroupKind::Job)
        .map(|f| (f.kind, f.dir))
        .ok_or_else(|| Error::NotFound {
            what: IdOf::Group,
            id: id.into(),
            store: folders
                .first()
                .map_or_else(|| store.dir.clone(), |(_, d)| d.clone()),
        })
}

/// A run the record does not list (or one that kept no log): 404, saying why.
fn no_such_run(id: &str, name: &str, listed: bool) -> Response {
    let e = if listed {
        Error::usage_hint(
            format!("council `{id}`'s run `{name}` kept no log (no run directory could be made)"),
            format!("`baton council report {id}` shows what the run answered"),
        )
    } else {
        Error::usage_hint(
            format!("council `{id}` has no run `{name}`"),
            "the fleet lists a council's runs by name (`councils[].runs[].name`)",
        )
    };
    let mut report = crate::result::ErrorReport::from_error(&e);
    report.exit_code = Some(crate::error::exit::JOB_NOT_FOUND);
    (StatusCode::NOT_FOUND, Json(report)).into_response()
}

/// `GET /api/councils/{id}/runs/{name}/events`: the run's transcript.
pub async fn run_events(
    State(app): State<App>,
    Path((id, name)): Path<(String, String)>,
    Query(which): Query<Which>,
) -> Response {
    let store = match app.store(&which) {
        Ok(s) => s,
        Err(e) => return error(e),
    };
    let (cid, wanted) = (id.clone(), name.clone());
    let found = blocking(move || {
        let (kind, dir) = group_dir(&store, &cid)?;
        let run = runs::list(&dir).into_iter().find(|r| r.name() == wanted);
        Ok(run.map(|r| ((kind, dir), r)))
    })
    .await;
    let ((kind, dir), run) = match found {
        Ok(Some(x)) => x,
        Ok(None) => return no_such_run(&id, &name, false),
        Err(r) => return r,
    };
    let (Some(log), Ok(agent)) = (run.log.clone(), Agent::parse(&run.agent)) else {
        // Nothing of the run is on disk (no run directory could be made).
        return no_such_run(&id, &name, true);
    };
    let record = dir.join("runs").join(format!("{name}.json"));
    let ended = {
        let (dir, record) = (dir.clone(), record.clone());
        move || {
            let ended = crate::group::read_json::<runs::RunRecord>(&record)
                .ok()
                .flatten()
                .is_none_or(|r| r.ended_ms.is_some());
            ended || !view::load_head(kind, &dir).is_some_and(|_| view::head_alive(&dir))
        }
    };
    let end = move || {
        let status = crate::group::read_json::<runs::RunRecord>(&record)
            .ok()
            .flatten()
            .map_or("lost".to_string(), |r| {
                r.outcome.unwrap_or_else(|| "lost".into())
            });
        serde_json::json!({ "council_id": id, "run": name, "status": status })
    };
    let base = log
        .parent()
        .map_or(dir.clone(), std::path::Path::to_path_buf);
    sse::follow_source(Source {
        log,
        agent,
        base,
        dirs: vec![dir.join("runs"), dir.clone()],
        ended: Box::new(ended),
        end: Box::new(end),
    })
    .into_response()
}

/// `POST /api/councils/{id}/cancel`: as `baton cancel ID` for a council;
/// its status (`baton council status`) once its runner is gone.
pub async fn cancel(
    State(app): State<App>,
    Path(id): Path<String>,
    Query(which): Query<Which>,
) -> Response {
    let store = match app.store(&which) {
        Ok(s) => s,
        Err(e) => return error(e),
    };
    let r = blocking(move || {
        let (kind, _) = group_dir(&store, &id)?;
        let root = store
            .root()
            .ok_or_else(|| Error::Internal("the server's store has no project".into()))?;
        if kind == view::GroupKind::Fanout {
            let rec = crate::fanout::as_job::stop(crate::fanout::store::Record::load(root, &id)?)?;
            return Ok(crate::fanout::as_job::status_value(&rec));
        }
        let rec = crate::council::as_job::stop(Record::load(root, &id)?)?;
        Ok(crate::council::envelope::status(&rec))
    })
    .await;
    match r {
        Ok(v) => Json(v).into_response(),
        Err(r) => r,
    }
}
