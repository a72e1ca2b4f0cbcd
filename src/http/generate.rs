//! Generating a page over HTTP, and reading generation records and their live events.
//!
//! `POST /api/pages/generate` runs the agent loop and answers when the page is built;
//! `GET /api/generations/{id}/events` streams (SSE) what a generation does while it runs, from the
//! store, so any server process can serve it. A caller that wants to watch a generation live
//! passes its own `id` to the POST and subscribes with it first.

use std::convert::Infallible;

use axum::{
    extract::{Path, State},
    response::sse::{Event, KeepAlive, Sse},
};
use futures_util::{Stream, StreamExt};
use http::HeaderMap;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::{
    error::{AppError, ErrorBody},
    extract::{Json, Query},
    openapi::ServerSentEvent,
    AppState,
};
use crate::{
    agent::{
        events::{follow, GenerationEvent},
        generate::DEFAULT_MAX_STEPS,
        generate_page as run_generation,
        generation::GenerationRecord,
        AgentError, CachePolicy, GenerationInput, UnknownModel,
    },
    forms::{validate_form::FormReport, FormSchema, SchemaError},
    store::StoreError,
};

/// The most turns a caller may allow one attempt.
const MAX_STEPS_LIMIT: usize = 30;

impl From<AgentError> for AppError {
    fn from(error: AgentError) -> Self {
        match error {
            AgentError::ReservedToolName(name) => Self::BadRequest {
                code: "reserved_component_name",
                message: format!("component `{name}` uses a name reserved for the agent's tools"),
                field: None,
            },
            other => Self::Unexpected(other.into()),
        }
    }
}

impl From<UnknownModel> for AppError {
    fn from(error: UnknownModel) -> Self {
        Self::BadRequest {
            code: "unknown_model",
            message: error.to_string(),
            field: Some("model".to_owned()),
        }
    }
}

fn invalid_schema(error: &SchemaError) -> AppError {
    AppError::BadRequest {
        code: "invalid_schema",
        message: error.to_string(),
        field: Some(if error.field.is_empty() {
            "schema".to_owned()
        } else {
            error.field.clone()
        }),
    }
}

/// The body of `POST /api/pages/generate`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GenerateRequest {
    /// The request, already rendered.
    pub prompt: String,
    /// The response schema (JSON Schema in the form subset); absent for display-only pages.
    #[serde(default)]
    pub schema: Option<Value>,
    /// The data the page binds to (default `{}`).
    #[serde(default)]
    pub data: Option<Value>,
    /// `heuristic` or the configured model's spec; the configured model when absent.
    #[serde(default)]
    pub model: Option<String>,
    /// The generation's id, to subscribe to its events before posting; fresh when absent.
    #[serde(default)]
    pub id: Option<Uuid>,
    /// The page cache: `use` (default), `refresh` (build and store) or `off` (`bypass`).
    #[serde(default)]
    pub cache: Option<CachePolicy>,
    /// Model turns allowed, 1 to 30 (default 10; others are brought into that range).
    #[serde(default)]
    #[schema(minimum = 0)]
    pub max_steps: Option<usize>,
}

impl GenerateRequest {
    /// The domain input.
    ///
    /// # Errors
    /// 400 naming the schema field outside the form subset.
    pub fn parse(self) -> Result<GenerationInput, AppError> {
        let schema = match self.schema {
            None | Some(Value::Null) => None,
            Some(schema) => Some(
                FormSchema::from_json_schema(&schema).map_err(|error| invalid_schema(&error))?,
            ),
        };
        let mut input = GenerationInput::new(self.prompt)
            .with_data(self.data.unwrap_or_else(|| json!({})))
            .with_cache(self.cache.unwrap_or_default())
            .with_max_steps(
                self.max_steps
                    .unwrap_or(DEFAULT_MAX_STEPS)
                    .clamp(1, MAX_STEPS_LIMIT),
            );
        input.schema = schema;
        if let Some(id) = self.id {
            input.id = id;
        }
        Ok(input)
    }
}

/// The answer of `POST /api/pages/generate`.
#[derive(Debug, Serialize, ToSchema)]
pub struct GeneratedPage {
    /// The page tree (DESIGN.md §4).
    #[schema(value_type = Object)]
    pub tree: tessera_app::tree::PageTree,
    /// `ValidateForm`'s report on it (ok; warnings may remain).
    pub validation: FormReport,
    /// What was recorded.
    pub generation: GenerationRecord,
}

/// `POST /api/pages/generate`: `{prompt, schema?, data?, model?, id?, cache?, max_steps?}` →
/// `{tree, validation, generation}`.
///
/// # Errors
/// 400 for a body that does not parse, a schema outside the subset (naming the field) or a model
/// that is not configured; 409 for an `id` already used; 500 when no page could be built.
#[utoipa::path(
    post,
    path = "/api/pages/generate",
    tag = "pages",
    request_body = GenerateRequest,
    responses(
        (status = 200, description = "The page built, its report and its generation record.", body = GeneratedPage),
        (status = 400, description = "A body that does not parse (`invalid_body`), a schema outside the form subset (`invalid_schema`, naming the field), a model that is not configured (`unknown_model`), or a component using a reserved name.", body = ErrorBody),
        (status = 409, description = "The `id` is already a generation's (`id_in_use`).", body = ErrorBody),
    ),
)]
pub async fn generate_page(
    State(state): State<AppState>,
    Json(body): Json<GenerateRequest>,
) -> Result<Json<GeneratedPage>, AppError> {
    let model = state.models().choose(body.model.as_deref())?;
    let input = body.parse()?;
    if state.store.generation(input.id).await.is_ok() {
        return Err(AppError::Conflict {
            code: "id_in_use",
            message: format!("generation {} already exists", input.id),
        });
    }
    let generated = run_generation(input, model.as_ref(), &state.store, None).await?;
    Ok(Json(GeneratedPage {
        tree: generated.tree,
        validation: generated.report,
        generation: generated.record,
    }))
}

/// The query of `GET /api/generations`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// How many records, newest first (default 20, at most 200; others are brought into that
    /// range).
    #[serde(default)]
    pub limit: Option<i64>,
}

/// The body of `GET /api/generations`.
#[derive(Debug, Serialize, ToSchema)]
pub struct GenerationList {
    /// The records, newest first.
    pub generations: Vec<GenerationRecord>,
}

/// `GET /api/generations?limit=20`: the most recent generation records, newest first.
///
/// # Errors
/// 500 when the store fails.
#[utoipa::path(
    get,
    path = "/api/generations",
    tag = "pages",
    params(ListQuery),
    responses(
        (status = 200, description = "The most recent generation records.", body = GenerationList),
        (status = 400, description = "A query that does not parse (`invalid_query`).", body = ErrorBody),
    ),
)]
pub async fn list_generations(
    State(state): State<AppState>,
    Query(query): Query<ListQuery>,
) -> Result<Json<GenerationList>, AppError> {
    let generations = state
        .store
        .recent_generations(query.limit.unwrap_or(20))
        .await?;
    Ok(Json(GenerationList { generations }))
}

fn generation_id(text: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(text).map_err(|_| AppError::NotFound)
}

/// `GET /api/generations/{id}`: one generation record.
///
/// # Errors
/// 404 for an unknown id.
#[utoipa::path(
    get,
    path = "/api/generations/{id}",
    tag = "pages",
    params(("id" = String, Path, description = "The generation's id (a UUID).")),
    responses(
        (status = 200, description = "The generation record.", body = GenerationRecord),
        (status = 404, description = "No such generation.", body = ErrorBody),
    ),
)]
pub async fn generation(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<GenerationRecord>, AppError> {
    Ok(Json(state.store.generation(generation_id(&id)?).await?))
}

/// `GET /api/generations/{id}/events`: the generation's events as server-sent events (event name
/// = kind, id = seq, data = the event as JSON), replayed from the store and followed until the
/// `finished` event. `Last-Event-ID` resumes after that event.
///
/// # Errors
/// 404 for an id that is not a UUID.
#[utoipa::path(
    get,
    path = "/api/generations/{id}/events",
    tag = "pages",
    params(
        ("id" = String, Path, description = "The generation's id (a UUID); it may be subscribed to before it starts."),
        ("Last-Event-ID" = Option<String>, Header, description = "Resume after the event with this id (a sequence number; anything else replays from the start)."),
    ),
    responses(
        (status = 200, description = "Server-sent events: name = the event's kind, id = its sequence number, data = the event as JSON; the stream ends after `finished`.", content_type = "text/event-stream", body = ServerSentEvent),
        (status = 404, description = "The id is not a UUID.", body = ErrorBody),
    ),
)]
pub async fn generation_events(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, AppError> {
    let id = generation_id(&id)?;
    // A reconnecting browser says the last event it saw; it gets only the ones after it.
    let after_seq = headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<i64>().ok())
        .unwrap_or(0);
    let stream = follow(state.store.clone(), id, after_seq)
        .map(move |item| Ok::<_, Infallible>(sse_event(item, id)));
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// One stored generation event as a server-sent event (name = its kind, id = its sequence
/// number), or an `error` event when the store could not be read.
fn sse_event(item: Result<GenerationEvent, StoreError>, id: Uuid) -> Event {
    match item {
        Ok(event) => Event::default()
            .event(event.kind.as_str())
            .id(event.seq.to_string())
            .json_data(&event)
            .unwrap_or_else(|_| Event::default().event(event.kind.as_str())),
        Err(error) => {
            log_store_error(&error, id);
            Event::default()
                .event("error")
                .data("the events could not be read")
        }
    }
}

fn log_store_error(error: &StoreError, id: Uuid) {
    tracing::error!(generation.id = %id, error = %error, "reading generation events failed");
}
