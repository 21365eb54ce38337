//! The council routes: one member run's transcript as Server-Sent Events
//! (`/api/councils/{id}/runs/{name}/events`) and cancel (`/api/councils/{id}/cancel`).
//!
//! No path from the client is joined unchecked: the id must be a valid id
//! of a council of this project, and the run name must be one its record
//! lists (the log path is the record's, never the client's). Cancel calls
//! what `baton cancel ID` calls for a council.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::routes::{App, blocking};
use super::sse::{self, Source};
use crate::agent::Agent;
use crate::council::store::Record;
use crate::error::{Error, Result};
use crate::group::runs;
use crate::job::store::Store;
use crate::view::council as view;

/// The folder of council `id` of this project, checked to exist.
fn council_dir(store: &Store, id: &str) -> Result<std::path::PathBuf> {
    if !crate::ids::is_valid(id) {
        return Err(Error::InvalidJobId { id: id.into() });
    }
    let councils = view::dir_of(store).ok_or_else(|| Error::JobNotFound {
        id: id.into(),
        store: store.dir.clone(),
    })?;
    let dir = councils.join(id);
    if !dir.join("state.json").is_file() {
        return Err(Error::JobNotFound {
            id: id.into(),
            store: councils,
        });
    }
    Ok(dir)
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
) -> Response {
    let store = app.store.clone();
    let (cid, wanted) = (id.clone(), name.clone());
    let found = blocking(move || {
        let dir = council_dir(&store, &cid)?;
        let run = runs::list(&dir).into_iter().find(|r| r.name() == wanted);
        Ok(run.map(|r| (dir, r)))
    })
    .await;
    let (dir, run) = match found {
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
            ended || !view::load(&dir).is_some_and(|rec| view::runner_alive(&rec))
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
pub async fn cancel(State(app): State<App>, Path(id): Path<String>) -> Response {
    let store = app.store.clone();
    let r = blocking(move || {
        council_dir(&store, &id)?;
        let root = store
            .root()
            .ok_or_else(|| Error::Internal("the server's store has no project".into()))?;
        let rec = crate::council::as_job::stop(Record::load(root, &id)?)?;
        Ok(crate::council::envelope::status(&rec))
    })
    .await;
    match r {
        Ok(v) => Json(v).into_response(),
        Err(r) => r,
    }
}
