//! The routes: the embedded page, the token exchange, the repositories
//! shown, the fleet and one job's transcript, what was spent (`baton
//! usage`), the bench runs' reports (`baton bench report`), and the two
//! actions (`cancel`, `continue`); a council's run transcript and cancel are
//! in `groups`.
//!
//! The actions call exactly what `baton cancel` and `baton continue` call;
//! no route runs anything else. Every route sits behind `security::gate`.
//! A route about one repository's work takes `?repo=KEY`, looked up in the
//! server's listing (`repos::pick`); without it, the one repository shown.

use std::ffi::OsStr;
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use tokio::sync::watch;

use super::fleets::Fleets;
use super::repos::{self, RepoInfo};
use super::security::{self, Secrets};
use super::sse;
use crate::agent::Agent;
use crate::error::Error;
use crate::job::store::{Store, now_ms};
use crate::result::ErrorReport;

const INDEX: &str = include_str!("assets/index.html");
const APP_JS: &str = include_str!("assets/app.js");
const APP_CSS: &str = include_str!("assets/app.css");

/// What every handler shares.
#[derive(Clone)]
pub struct App {
    pub sec: Arc<Secrets>,
    pub fleet: watch::Receiver<Arc<Fleets>>,
    /// Runners started by `continue` (this process is their parent).
    pub children: super::Children,
}

/// `?repo=KEY`: which repository a request is about.
#[derive(Debug, Default, Deserialize)]
pub struct Which {
    pub repo: Option<String>,
}

impl App {
    /// Whether the server shows every repository (`--all`).
    fn all(&self) -> bool {
        self.fleet.borrow().all
    }

    /// The repository `which` names, as the server lists it now.
    pub(super) fn repo(&self, which: &Which) -> crate::error::Result<RepoInfo> {
        let f = self.fleet.borrow().clone();
        repos::pick(&f.repos, which.repo.as_deref()).cloned()
    }

    /// The store of the repository `which` names.
    pub(super) fn store(&self, which: &Which) -> crate::error::Result<Arc<Store>> {
        self.repo(which)?
            .store
            .ok_or_else(|| Error::Internal("a shown repository has no store".into()))
    }
}

pub fn router(app: App) -> Router {
    let sec = app.sec.clone();
    Router::new()
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", INDEX) }),
        )
        .route(
            "/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }),
        )
        .route(
            "/app.css",
            get(|| async { asset("text/css; charset=utf-8", APP_CSS) }),
        )
        .route("/api/session", post(session))
        .route("/api/repos", get(list_repos))
        .route("/api/jobs", get(jobs))
        .route("/api/usage", get(usage))
        .route("/api/benches", get(benches))
        .route("/api/events", get(fleet_events))
        .route("/api/jobs/{id}/events", get(job_events))
        .route("/api/jobs/{id}/cancel", post(cancel))
        .route("/api/jobs/{id}/continue", post(continue_job))
        .route(
            "/api/councils/{id}/runs/{name}/events",
            get(super::groups::run_events),
        )
        .route("/api/councils/{id}/cancel", post(super::groups::cancel))
        .layer(axum::middleware::from_fn_with_state(sec, security::gate))
        .with_state(app)
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, kind)], body).into_response()
}

/// A baton error as JSON, with the HTTP status that fits its kind.
pub(super) fn error(e: Error) -> Response {
    let code = match e.exit_code() {
        4 => StatusCode::NOT_FOUND,
        2 => StatusCode::BAD_REQUEST,
        127 => StatusCode::CONFLICT,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    let mut report = ErrorReport::from_error(&e);
    report.exit_code = Some(e.exit_code());
    (code, Json(report)).into_response()
}

/// Run blocking store work off the async threads.
pub(super) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> crate::error::Result<T> + Send + 'static,
) -> Result<T, Response> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r.map_err(error),
        Err(e) => Err(error(Error::Internal(format!("a server task failed: {e}")))),
    }
}

#[derive(Deserialize)]
struct TokenBody {
    token: String,
}

/// `POST /api/session {"token": …}` → `{"session": …}`: the start token
/// for the session the page presents as `Authorization: Bearer`. No cookie:
/// a browser would send it to every port of 127.0.0.1 (docs/serve.md).
/// Any body that is not a token (malformed, no `token`) is a wrong token.
async fn session(State(app): State<App>, body: axum::body::Bytes) -> Response {
    match serde_json::from_slice::<TokenBody>(&body) {
        Ok(b) if app.sec.token_ok(&b.token) => {
            Json(serde_json::json!({ "session": app.sec.session })).into_response()
        }
        _ => (StatusCode::UNAUTHORIZED, "baton serve: wrong token\n").into_response(),
    }
}

/// `GET /api/repos`: `{"all", "repos": [{"repo", "label", "exists", "shown"}]}`.
async fn list_repos(State(app): State<App>) -> Response {
    let f = app.fleet.borrow().clone();
    Json(serde_json::json!({ "all": f.all, "repos": &*f.repos })).into_response()
}

/// `GET /api/jobs`: what `baton watch --once --json` prints (for the
/// repository `?repo` names; `--all` without it: one per shown repository,
/// `{"repos": [{"repo", "watch"}]}`).
async fn jobs(State(app): State<App>, Query(which): Query<Which>) -> Response {
    let stores: Vec<(String, Arc<Store>)> = if app.all() && which.repo.is_none() {
        let f = app.fleet.borrow().clone();
        f.repos
            .iter()
            .filter_map(|r| Some((r.repo.clone(), r.store.clone()?)))
            .collect()
    } else {
        match app.repo(&which) {
            Ok(r) => r.store.map(|s| (r.repo, s)).into_iter().collect(),
            Err(e) => return error(e),
        }
    };
    let all = app.all() && which.repo.is_none();
    let snap = blocking(move || {
        let mut out = Vec::new();
        for (repo, store) in stores {
            let w = crate::view::watch::snapshot(&store, now_ms())?;
            out.push(serde_json::json!({ "repo": repo, "watch": w }));
        }
        Ok(out)
    });
    match snap.await {
        Ok(v) if all => Json(serde_json::json!({ "repos": v })).into_response(),
        Ok(mut v) => Json(v.pop().map(|mut o| o["watch"].take())).into_response(),
        Err(r) => r,
    }
}

/// `GET /api/usage`: what `baton usage --by agent --json` prints (every
/// project's ledger, or with `?repo=KEY` that listed project's only), for
/// the page's panel of what was spent.
async fn usage(State(app): State<App>, Query(which): Query<Which>) -> Response {
    let req = crate::spend::usage::UsageRequest {
        by: Some("agent".into()),
        ..Default::default()
    };
    let one = match which.repo.as_deref() {
        None => None,
        Some(key) => {
            let f = app.fleet.borrow().clone();
            match repos::any(&f.repos, key) {
                Ok(r) => Some((r.dir.clone(), r.label.clone())),
                Err(e) => return error(e),
            }
        }
    };
    let r = blocking(move || match one {
        Some((dir, label)) => crate::spend::usage::report_of(&req, &dir, label),
        None => crate::spend::usage::report(&req),
    });
    match r.await {
        Ok(r) => Json(r).into_response(),
        Err(r) => r,
    }
}

/// `GET /api/benches`: every bench run of the shown repositories, each what
/// `baton bench report ID` prints (newest first), for the page's bench
/// panel; under `--all` each carries its `repo` (plain `serve`: exactly
/// what `baton bench report ID` prints).
async fn benches(State(app): State<App>) -> Response {
    let f = app.fleet.borrow().clone();
    let all = f.all;
    let roots: Vec<(String, std::path::PathBuf)> = f
        .repos
        .iter()
        .filter_map(|r| Some((r.repo.clone(), r.root()?)))
        .collect();
    let listed = blocking(move || {
        let mut benches = Vec::new();
        let mut unreadable = Vec::new();
        for (repo, root) in roots {
            let l = serde_json::to_value(crate::bench::report_cmd::all(&root)?)
                .map_err(|e| Error::Internal(format!("a bench report as JSON: {e}")))?;
            for (from, to) in [("benches", &mut benches), ("unreadable", &mut unreadable)] {
                for mut b in l[from].as_array().cloned().unwrap_or_default() {
                    if let Some(o) = b.as_object_mut().filter(|_| all) {
                        o.insert("repo".into(), repo.clone().into());
                    }
                    to.push(b);
                }
            }
        }
        Ok(serde_json::json!({ "benches": benches, "unreadable": unreadable }))
    });
    match listed.await {
        Ok(l) => Json(l).into_response(),
        Err(r) => r,
    }
}

async fn fleet_events(State(app): State<App>) -> Response {
    sse::fleet(app.fleet.clone()).into_response()
}

async fn job_events(
    State(app): State<App>,
    Path(id): Path<String>,
    Query(which): Query<Which>,
) -> Response {
    let store = match app.store(&which) {
        Ok(s) => s,
        Err(e) => return error(e),
    };
    let opened = blocking(move || {
        let job = store.open(OsStr::new(&id))?;
        let s = job.read_state()?;
        let agent = match job.read_spec() {
            Ok(sp) => sp.plan.agent,
            Err(_) => Agent::parse(&s.agent)?,
        };
        Ok((job, agent))
    })
    .await;
    match opened {
        Ok((job, agent)) => sse::transcript(job, agent).into_response(),
        Err(r) => r,
    }
}

/// `POST /api/jobs/{id}/cancel`: as `baton cancel ID`; the job's result.
async fn cancel(
    State(app): State<App>,
    Path(id): Path<String>,
    Query(which): Query<Which>,
) -> Response {
    let store = match app.store(&which) {
        Ok(s) => s,
        Err(e) => return error(e),
    };
    let r = blocking(move || {
        let job = store.open(OsStr::new(&id))?;
        let s = crate::job::cancel_job(&job)?;
        job.result(&s)
    })
    .await;
    match r {
        Ok(r) => Json(r).into_response(),
        Err(r) => r,
    }
}

#[derive(Deserialize)]
pub(super) struct ContinueBody {
    pub prompt: String,
}

/// `POST /api/jobs/{id}/continue {"prompt": …}`: as `baton continue ID
/// PROMPT`; the new job's `running` result. Under `--all` it is `baton
/// continue` itself, run in the job's project (`continue_elsewhere`).
async fn continue_job(
    State(app): State<App>,
    Path(id): Path<String>,
    Query(which): Query<Which>,
    Json(body): Json<ContinueBody>,
) -> Response {
    let repo = match app.repo(&which) {
        Ok(r) => r,
        Err(e) => return error(e),
    };
    if app.all() {
        return super::elsewhere::continue_job(repo, id, body.prompt).await;
    }
    let Some(store) = repo.store else {
        return error(Error::Internal("a shown repository has no store".into()));
    };
    let r = blocking(move || {
        let r = crate::job::continue_start(
            OsStr::new(&id),
            vec![body.prompt],
            crate::notify::Choice::Config,
        )?;
        let runner = r
            .job_id
            .as_deref()
            .and_then(|j| store.job(j).read_state().ok())
            .and_then(|s| s.runner_pid);
        Ok((r, runner))
    })
    .await;
    match r {
        Ok((r, runner)) => {
            if let Some(pid) = runner {
                app.children.add(pid);
            }
            (StatusCode::ACCEPTED, Json(r)).into_response()
        }
        Err(r) => r,
    }
}
