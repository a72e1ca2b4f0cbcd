//! The runs pages (admin session) and the runs API (session or bearer token).

use std::collections::BTreeMap;

use axum::{
    body::Bytes,
    extract::{Path, Query, State},
    response::{IntoResponse, Redirect, Response},
    Json,
};
use http::{HeaderMap, StatusCode};
use leptos::prelude::*;
use serde::Deserialize;
use serde_json::{json, Value};
use tessera_app::runs::{
    PageView, RunDetail, RunDetailPage, RunRow, RunsList, RunsListPage, StepView,
};

use super::{error::AppError, render::html_document, security::is_cross_site, AppState};
use crate::{
    forms::raw_values,
    pages::{
        links::{self, LinkChange},
        page::PageId,
        receipt::format_utc,
    },
    store::{now_ms, StoreError},
    workflow::{
        overview::{run_overview, RunOverview},
        run::{RunFilter, RunId, RunStatus, TimeoutAction},
        Runner, Unanswered, WorkflowError,
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
    let status = query.status.as_deref().and_then(RunStatus::parse);
    let page = query.page.unwrap_or(0);
    let filter = RunFilter {
        status,
        workflow: None,
        limit: PAGE_SIZE,
        offset: i64::from(page) * PAGE_SIZE,
    };
    let listed = state.store.list_runs(&filter).await?;
    let rows = listed
        .runs
        .iter()
        .map(|run| RunRow {
            id: run.id.to_string(),
            workflow: run.workflow.clone(),
            status: run.status.as_str().to_owned(),
            step: format!("step {}", run.cursor + 1),
            updated: format_utc(run.updated_at_ms),
        })
        .collect();
    let list = RunsList {
        rows,
        status: status.map(|status| status.as_str().to_owned()),
        page,
        has_next: i64::from(page + 1) * PAGE_SIZE < listed.total,
        // Asks are started through `POST /api/asks` with a prompt, never with an empty state.
        workflows: state
            .runner()
            .map(|runner| runner.registry().names())
            .unwrap_or_default()
            .into_iter()
            .filter(|name| name != crate::asks::ASK_WORKFLOW)
            .collect(),
        flash: None,
    };
    Ok(html_document(
        &state,
        StatusCode::OK,
        "Runs · Tessera",
        move || view! { <RunsListPage list/> }.into_any(),
    ))
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
    Ok(detail_page(&state, &overview, None, None))
}

fn detail_page(
    state: &AppState,
    overview: &RunOverview,
    new_link: Option<String>,
    flash: Option<String>,
) -> Response {
    let pretty = |value: &Value| serde_json::to_string_pretty(value).unwrap_or_default();
    let now = now_ms();
    // A fresh link is shown once: reloading would lose it, so that answer stays put (it offers
    // "Refresh now").
    let live = new_link.is_none()
        && matches!(
            overview.run.status,
            RunStatus::Ready | RunStatus::Running | RunStatus::Waiting
        );
    let detail = RunDetail {
        id: overview.run.id.to_string(),
        workflow: overview.run.workflow.clone(),
        status: overview.run.status.as_str().to_owned(),
        error: overview.run.error.clone(),
        state: pretty(&overview.run.state),
        steps: overview
            .steps
            .iter()
            .map(|step| StepView {
                index: step.index,
                name: step.name.clone(),
                status: step.status.as_str().to_owned(),
                attempts: step.attempts,
                output: step
                    .output
                    .as_ref()
                    .filter(|output| !output.is_null())
                    .map(pretty),
                error: step.error.clone(),
                generations: overview
                    .generations
                    .iter()
                    .filter(|(index, _)| *index == step.index)
                    .map(|(_, id)| id.to_string())
                    .collect(),
            })
            .collect(),
        pages: overview
            .pages
            .iter()
            .map(|page| PageView {
                id: page.id.to_string(),
                status: if page.status == crate::pages::page::PageStatus::Open
                    && page.is_expired(now)
                {
                    "expired".to_owned()
                } else {
                    page.status.as_str().to_owned()
                },
                expires: format_utc(page.expires_at_ms),
                response: page.response.as_ref().map(pretty),
            })
            .collect(),
        waiting: waiting_sentence(overview),
        new_link,
        flash,
        live,
    };
    let title = format!("Run {} · Tessera", overview.run.workflow);
    let mut response = html_document(state, StatusCode::OK, &title, move || {
        view! { <RunDetailPage detail/> }.into_any()
    });
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

fn form_field(body: &[u8], name: &str) -> String {
    raw_values(body)
        .get(name)
        .and_then(|values| values.last())
        .cloned()
        .unwrap_or_default()
}

/// `POST /runs/start`: starts a demo run and opens its timeline.
///
/// # Errors
/// 400 for an unknown workflow; 403 from another site.
pub async fn start_run_page(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    if is_cross_site(&headers) {
        return Ok(StatusCode::FORBIDDEN.into_response());
    }
    let run = runner(&state)?
        .start_run(&form_field(&body, "workflow"), json!({}))
        .await?;
    Ok(Redirect::to(&format!("/runs/{}", run.id)).into_response())
}

/// What a waiting run waits for, until when, and what happens then, in one sentence.
fn waiting_sentence(overview: &RunOverview) -> Option<String> {
    let run = &overview.run;
    if run.status != RunStatus::Waiting {
        return None;
    }
    let wait = run.waiting.as_ref()?;
    let Some(deadline) = wait.deadline_ms else {
        return Some("Waiting for an answer, with no deadline.".to_owned());
    };
    let default_response = overview
        .steps
        .iter()
        .find(|step| step.index == run.cursor - 1)
        .and_then(|step| step.output.as_ref())
        .and_then(|output| output.get("default_response"));
    let then = match wait.on_timeout {
        TimeoutAction::Fail => "the run fails",
        TimeoutAction::Cancel => "the run is cancelled",
        TimeoutAction::Continue if default_response.and_then(Unanswered::of).is_some() => {
            "the run is cancelled"
        }
        TimeoutAction::Continue => "the run carries on with its default answer",
    };
    Some(format!(
        "Waiting for an answer until {}; then {then}. Extending the link moves this too.",
        format_utc(deadline)
    ))
}

/// `POST /runs/{id}/cancel`.
///
/// # Errors
/// 404 for an unknown run; 403 from another site.
pub async fn cancel_run_page(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    if is_cross_site(&headers) {
        return Ok(StatusCode::FORBIDDEN.into_response());
    }
    runner(&state)?.cancel_run(parse_run_id(&id)?).await?;
    Ok(Redirect::to(&format!("/runs/{id}")).into_response())
}

/// `POST /runs/{id}/pages/{page}`: revoke, extend (7 days) or get a working link (`reissue`:
/// a fresh one, shown once; any link sent earlier stops working) for a waiting page.
///
/// # Errors
/// 404 for an unknown run or page; 403 from another site.
pub async fn change_page(
    State(state): State<AppState>,
    Path((id, page_id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    if is_cross_site(&headers) {
        return Ok(StatusCode::FORBIDDEN.into_response());
    }
    let run_id = parse_run_id(&id)?;
    let page_id = PageId(page_id.parse().map_err(|_| AppError::NotFound)?);
    if state.store.page(page_id).await?.run_id != Some(run_id) {
        return Err(AppError::NotFound);
    }
    let store = &state.store;
    let (changed, new_link) = match form_field(&body, "action").as_str() {
        "revoke" => (links::revoke_link(store, page_id).await?.done(), None),
        "extend" => (
            links::extend_link(
                store,
                page_id,
                links::Extension::By(links::DEFAULT_EXTENSION_MS),
            )
            .await?
            .done(),
            None,
        ),
        "reissue" => match links::reissue_link(store, &state.config.public_url, page_id).await? {
            LinkChange::Done(link) => (true, Some(link)),
            LinkChange::NotOpen => (false, None),
        },
        other => {
            return Err(AppError::BadRequest {
                code: "invalid_action",
                message: format!("unknown action `{other}`"),
                field: Some("action".into()),
            })
        }
    };
    let flash = match (changed, &new_link) {
        (true, Some(_)) => "A working link was issued. Any link sent earlier no longer works.",
        (true, None) => "Done.",
        (false, _) => "Nothing changed: the page is no longer open.",
    };
    let overview = run_overview(&state.store, run_id).await?;
    Ok(detail_page(
        &state,
        &overview,
        new_link,
        Some(flash.to_owned()),
    ))
}

/// `POST /api/runs/{id}/link`: a working link to the page the run waits on — a fresh one,
/// answered once; any link sent earlier stops working (only tokens' hashes are stored).
///
/// # Errors
/// 404 for an unknown run; 409 when the run waits on no open page.
pub async fn issue_link_api(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let overview = run_overview(&state.store, parse_run_id(&id)?).await?;
    let not_open = || AppError::Conflict {
        code: "not_waiting",
        message: "the run waits on no open page".into(),
    };
    let page_id = overview.waiting_page.ok_or_else(not_open)?;
    match links::reissue_link(&state.store, &state.config.public_url, page_id).await? {
        LinkChange::Done(link) => Ok((
            StatusCode::CREATED,
            Json(json!({ "page_id": page_id, "link": link })),
        )),
        LinkChange::NotOpen => Err(not_open()),
    }
}

/// Body of `POST /api/runs`.
#[derive(Debug, Deserialize)]
pub struct StartRun {
    workflow: String,
    #[serde(default)]
    input: Option<Value>,
}

/// `POST /api/runs`: `{workflow, input}` → the run.
///
/// # Errors
/// 400 for an unknown workflow or input that does not fit its state.
pub async fn start_run_api(
    State(state): State<AppState>,
    Json(body): Json<StartRun>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let run = runner(&state)?
        .start_run(&body.workflow, body.input.unwrap_or_else(|| json!({})))
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(
            json!({ "id": run.id, "workflow": run.workflow, "status": run.status, "links": { "self": format!("/api/runs/{}", run.id), "page": format!("/runs/{}", run.id) } }),
        ),
    ))
}

/// Query of `GET /api/runs`.
#[derive(Debug, Default, Deserialize)]
pub struct ApiListQuery {
    workflow: Option<String>,
    status: Option<String>,
    limit: Option<i64>,
    offset: Option<i64>,
}

/// `GET /api/runs`: runs newest first, optionally of one workflow and status, with the total —
/// how a caller finds a run whose start it did not see answered.
///
/// # Errors
/// 400 for an unknown status; database failures.
pub async fn list_runs_api(
    State(state): State<AppState>,
    Query(query): Query<ApiListQuery>,
) -> Result<Json<Value>, AppError> {
    let status = match query.status.as_deref() {
        None => None,
        Some(raw) => Some(RunStatus::parse(raw).ok_or_else(|| AppError::BadRequest {
            code: "invalid_status",
            message: format!("`{raw}` is not a run status"),
            field: Some("status".into()),
        })?),
    };
    let filter = RunFilter {
        status,
        workflow: query.workflow,
        limit: query.limit.unwrap_or(100),
        offset: query.offset.unwrap_or(0),
    };
    let listed = state.store.list_runs(&filter).await?;
    let runs: Vec<Value> = listed
        .runs
        .iter()
        .map(|run| json!({ "id": run.id, "workflow": run.workflow, "status": run.status, "links": { "self": format!("/api/runs/{}", run.id) } }))
        .collect();
    Ok(Json(json!({ "runs": runs, "total": listed.total })))
}

/// `GET /api/runs/{id}`: status, current step, each step's output and the id of the page it
/// waits on (never a link: `POST /api/runs/{id}/link` gives a working one).
///
/// # Errors
/// 404 for an unknown run.
pub async fn show_run_api(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, AppError> {
    let overview = run_overview(&state.store, parse_run_id(&id)?).await?;
    let steps: Vec<Value> = overview
        .steps
        .iter()
        .map(|step| json!({ "index": step.index, "name": step.name, "status": step.status.as_str(), "attempts": step.attempts, "output": step.output, "error": step.error }))
        .collect();
    let mut pages: BTreeMap<String, Value> = BTreeMap::new();
    for page in &overview.pages {
        pages.insert(page.id.to_string(), json!({ "status": page.status.as_str(), "expires_at_ms": page.expires_at_ms, "response": page.response }));
    }
    Ok(Json(json!({
        "id": overview.run.id,
        "workflow": overview.run.workflow,
        "status": overview.run.status,
        "current_step": overview.current_step,
        "error": overview.run.error,
        "state": overview.run.state,
        "steps": steps,
        "pages": pages,
        "waiting_page": overview.waiting_page,
        "definition_digest": overview.run.definition_digest,
    })))
}
