//! The runs pages (admin session) and the runs API (session or bearer token).

use axum::{
    extract::{Path, State},
    response::{IntoResponse, Redirect, Response},
};
use http::StatusCode;
use serde::Deserialize;
use serde_json::{json, Value};
use tessera_app::runs::{run_detail_page, runs_list_page};
use utoipa::{IntoParams, ToSchema};

use super::{
    error::{AppError, ErrorBody},
    extract::{Form, Json, Query},
    presenters::{
        self,
        runs::{IssuedLinks, RunJson, RunSummary, RunsPage},
    },
    render::html_document,
    AppState,
};
use crate::{
    pages::{
        links::{self, LinkAction, LinkChange, PageLinks},
        page::PageId,
    },
    store::{now_ms, StoreError},
    workflow::{
        overview::{run_overview, RunOverview},
        run::{RunFilter, RunId, RunStatus},
        Runner, WorkflowError,
    },
};

const PAGE_SIZE: i64 = 20;
/// How often an unfinished run's timeline reloads itself, in seconds.
const LIVE_REFRESH_SECONDS: &str = "3";

impl From<WorkflowError> for AppError {
    fn from(error: WorkflowError) -> Self {
        match error {
            WorkflowError::UnknownWorkflow(_) | WorkflowError::BadInput { .. } => {
                Self::BadRequest {
                    code: "invalid_run",
                    message: error.to_string(),
                    field: Some("workflow".into()),
                }
            }
            WorkflowError::Store(StoreError::NotFound) => Self::NotFound,
            other => Self::Unexpected(other.into()),
        }
    }
}

fn runner(state: &AppState) -> Result<&Runner, AppError> {
    state
        .runner()
        .ok_or_else(|| AppError::Unexpected(anyhow::anyhow!("no workflow runner is configured")))
}

fn parse_status(raw: &str) -> Result<RunStatus, AppError> {
    RunStatus::parse(raw).ok_or_else(|| AppError::BadRequest {
        code: "invalid_status",
        message: format!("`{raw}` is not a run status"),
        field: Some("status".into()),
    })
}

fn parse_run_id(text: &str) -> Result<RunId, AppError> {
    text.parse().map_err(|_| AppError::NotFound)
}

/// Query of `GET /runs`.
#[derive(Debug, Default, Deserialize)]
pub struct ListQuery {
    status: Option<String>,
    page: Option<u32>,
}

/// `GET /runs`: the runs, newest first, filtered by status, 20 a page.
///
/// # Errors
/// Database failures.
pub async fn list_runs(
    State(state): State<AppState>,
    Query(query): Query<ListQuery>,
) -> Result<Response, AppError> {
    let filter = RunFilter {
        status: query.status.as_deref().and_then(RunStatus::parse),
        workflow: None,
        limit: PAGE_SIZE,
        offset: i64::from(query.page.unwrap_or(0)) * PAGE_SIZE,
    };
    let listed = state.store.list_runs(&filter).await?;
    let list = presenters::runs::runs_list(&listed, &filter, startable_workflows(&state));
    let title = "Runs · Tessera";
    let render = move || runs_list_page(list);
    Ok(html_document(&state, StatusCode::OK, title, render).await)
}

/// The workflows the runs list offers to start. Asks are started through `POST /api/asks` with
/// a prompt, never with an empty state.
fn startable_workflows(state: &AppState) -> Vec<String> {
    state
        .runner()
        .map(|runner| runner.registry().names())
        .unwrap_or_default()
        .into_iter()
        .filter(|name| name != crate::asks::ASK_WORKFLOW)
        .collect()
}

/// `GET /runs/{id}`: one run's timeline.
///
/// # Errors
/// 404 for an unknown run; database failures.
pub async fn show_run(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let overview = run_overview(&state.store, parse_run_id(&id)?).await?;
    Ok(detail_page(&state, &overview, None, None).await)
}

async fn detail_page(
    state: &AppState,
    overview: &RunOverview,
    new_links: Option<PageLinks>,
    flash: Option<String>,
) -> Response {
    let detail = presenters::runs::run_detail(overview, now_ms(), new_links, flash);
    let live = detail.live;
    let title = format!("Run {} · Tessera", overview.run.workflow);
    let mut response = html_document(state, StatusCode::OK, &title, move || {
        run_detail_page(detail)
    })
    .await;
    let refresh = format!("{LIVE_REFRESH_SECONDS}; url=/runs/{}", overview.run.id);
    if let (true, Ok(refresh)) = (live, http::HeaderValue::from_str(&refresh)) {
        // The browser reloads an unfinished run's timeline by itself: live with JavaScript off
        // and under the no-inline-script CSP; the page also offers a "Refresh now" link. The
        // URL is the timeline's, so the answer to a POST (extend, revoke) reloads it too.
        response
            .headers_mut()
            .insert(http::header::REFRESH, refresh);
    }
    response
}

/// The runs list's start form.
#[derive(Debug, Default, Deserialize)]
pub struct StartRunForm {
    #[serde(default)]
    workflow: String,
}

/// `POST /runs/start`: starts a demo run and opens its timeline.
///
/// # Errors
/// 400 for an unknown workflow; 403 from another site (`same_origin.rs`).
pub async fn start_run_page(
    State(state): State<AppState>,
    Form(form): Form<StartRunForm>,
) -> Result<Response, AppError> {
    let run = runner(&state)?.start_run(&form.workflow, json!({})).await?;
    Ok(Redirect::to(&format!("/runs/{}", run.id)).into_response())
}

/// `POST /runs/{id}/cancel`.
///
/// # Errors
/// 404 for an unknown run; 403 from another site (`same_origin.rs`).
pub async fn cancel_run_page(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    runner(&state)?.cancel_run(parse_run_id(&id)?).await?;
    Ok(Redirect::to(&format!("/runs/{id}")).into_response())
}

/// The run page's link buttons.
#[derive(Debug, Default, Deserialize)]
pub struct ChangePageForm {
    #[serde(default)]
    action: String,
}

/// `POST /runs/{id}/pages/{page}`: revoke, extend (by a new link's lifetime, 7 days) or get a
/// working link (`reissue`: a fresh one, shown once; any link sent earlier stops working) for a
/// waiting page.
///
/// # Errors
/// 404 for an unknown run or page; 400 for an unknown action; 403 from another site
/// (`same_origin.rs`).
pub async fn change_page(
    State(state): State<AppState>,
    Path((id, page_id)): Path<(String, String)>,
    Form(form): Form<ChangePageForm>,
) -> Result<Response, AppError> {
    let run_id = parse_run_id(&id)?;
    let page_id = PageId(page_id.parse().map_err(|_| AppError::NotFound)?);
    let action = LinkAction::parse(&form.action).ok_or_else(|| AppError::BadRequest {
        code: "invalid_action",
        message: format!("unknown action `{}`", form.action),
        field: Some("action".into()),
    })?;
    let public_url = &state.config.public_url;
    let change = links::change_run_page(&state.store, public_url, run_id, page_id, action).await?;
    let overview = run_overview(&state.store, run_id).await?;
    let (new_links, flash) = presenters::runs::link_change(change);
    Ok(detail_page(&state, &overview, new_links, Some(flash)).await)
}

/// `POST /api/runs/{id}/link`: a working link to the page the run waits on — a fresh one,
/// answered once; any link sent earlier stops working (only tokens' hashes are stored). A page
/// with assignees answers `links: [{assignee, link}]` instead, one for each assignee who has not
/// answered yet.
///
/// # Errors
/// 404 for an unknown run; 409 when the run waits on no open page.
#[utoipa::path(
    post,
    path = "/api/runs/{id}/link",
    tag = "runs",
    params(("id" = String, Path, description = "The run's id.")),
    responses(
        (status = 201, description = "A fresh link (or the assignees' links); earlier ones stop working.", body = IssuedLinks),
        (status = 404, description = "No such run.", body = ErrorBody),
        (status = 409, description = "The run waits on no open page (`not_waiting`).", body = ErrorBody),
    ),
)]
pub async fn issue_link_api(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<IssuedLinks>), AppError> {
    let overview = run_overview(&state.store, parse_run_id(&id)?).await?;
    let not_open = || AppError::Conflict {
        code: "not_waiting",
        message: "the run waits on no open page".into(),
    };
    let page_id = overview.waiting_page.ok_or_else(not_open)?;
    match links::reissue_links(&state.store, &state.config.public_url, page_id).await? {
        LinkChange::Done(links) => Ok((
            StatusCode::CREATED,
            Json(presenters::runs::issued_links(page_id, &links)),
        )),
        LinkChange::NotOpen => Err(not_open()),
    }
}

/// Body of `POST /api/runs`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct StartRun {
    /// A registered workflow's name.
    workflow: String,
    /// Its initial state (default `{}`).
    #[serde(default)]
    input: Option<Value>,
}

/// `POST /api/runs`: `{workflow, input}` → the run.
///
/// # Errors
/// 400 for an unknown workflow or input that does not fit its state.
#[utoipa::path(
    post,
    path = "/api/runs",
    tag = "runs",
    request_body = StartRun,
    responses(
        (status = 201, description = "The run, started.", body = RunSummary),
        (status = 400, description = "A body that does not parse (`invalid_body`), an unknown workflow or input that does not fit its state (`invalid_run`).", body = ErrorBody),
    ),
)]
pub async fn start_run_api(
    State(state): State<AppState>,
    Json(body): Json<StartRun>,
) -> Result<(StatusCode, Json<RunSummary>), AppError> {
    let run = runner(&state)?
        .start_run(&body.workflow, body.input.unwrap_or_else(|| json!({})))
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(presenters::runs::started_run(&run)),
    ))
}

/// Query of `GET /api/runs`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ApiListQuery {
    /// Only runs of this workflow.
    workflow: Option<String>,
    /// Only runs in this status.
    #[param(value_type = Option<RunStatus>)]
    status: Option<String>,
    /// How many runs (default 100).
    limit: Option<i64>,
    /// How many to skip, newest first (default 0).
    offset: Option<i64>,
}

/// `GET /api/runs`: runs newest first, optionally of one workflow and status, with the total —
/// how a caller finds a run whose start it did not see answered.
///
/// # Errors
/// 400 for an unknown status; database failures.
#[utoipa::path(
    get,
    path = "/api/runs",
    tag = "runs",
    params(ApiListQuery),
    responses(
        (status = 200, description = "One page of runs, newest first, with the total.", body = RunsPage),
        (status = 400, description = "An unknown status (`invalid_status`) or a query that does not parse.", body = ErrorBody),
    ),
)]
pub async fn list_runs_api(
    State(state): State<AppState>,
    Query(query): Query<ApiListQuery>,
) -> Result<Json<RunsPage>, AppError> {
    let status = query.status.as_deref().map(parse_status).transpose()?;
    let filter = RunFilter {
        status,
        workflow: query.workflow,
        limit: query.limit.unwrap_or(100),
        offset: query.offset.unwrap_or(0),
    };
    let listed = state.store.list_runs(&filter).await?;
    let runs = listed
        .runs
        .iter()
        .map(presenters::runs::run_summary)
        .collect();
    Ok(Json(RunsPage {
        runs,
        total: listed.total,
    }))
}

/// `GET /api/runs/{id}`: status, current step, each step's output and the id of the page it
/// waits on (never a link: `POST /api/runs/{id}/link` gives a working one).
///
/// # Errors
/// 404 for an unknown run.
#[utoipa::path(
    get,
    path = "/api/runs/{id}",
    tag = "runs",
    params(("id" = String, Path, description = "The run's id.")),
    responses(
        (status = 200, description = "The run with its steps and pages.", body = RunJson),
        (status = 404, description = "No such run.", body = ErrorBody),
    ),
)]
pub async fn show_run_api(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<RunJson>, AppError> {
    let overview = run_overview(&state.store, parse_run_id(&id)?).await?;
    Ok(Json(presenters::runs::run_json(&overview)))
}
