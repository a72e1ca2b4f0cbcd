//! The chat's JSON API under `/api/chat`, and building the demo site's orchestrator.
//!
//! Thin handlers over [`Orchestrator`]: parse the path and body, call one method, map
//! [`ChatError`] to the app's JSON error. They sit behind the API token like every `/api/*` route.
//! The chat UI (forms and SSE) is built on the same orchestrator methods, never on these handlers'
//! internals.
//!
//! | route | what |
//! |---|---|
//! | `POST /api/chat/sessions` | `{scope?, model?}` → the session |
//! | `GET /api/chat/sessions/{id}` | transcript, threads, pending approvals, running calls |
//! | `POST /api/chat/sessions/{id}/turns` | `{text}` → [`TurnOutcome`] |
//! | `POST /api/chat/sessions/{id}/confirmations/{confirmation}` | `{decision: approve\|deny, scope?: once\|operation\|session}` → [`TurnOutcome`] |
//! | `GET /api/chat/sessions/{id}/tools` | the manual tools with their form schemas |
//! | `POST /api/chat/sessions/{id}/tools/{name}` | arguments JSON → [`TurnOutcome`] |
//! | `GET /api/chat/sessions/{id}/events` | server-sent events: [`ChatEvent`]s as JSON |

use std::{convert::Infallible, sync::Arc};

use axum::{
    body::Bytes,
    extract::{Path, State},
    middleware,
    response::sse::{Event, KeepAlive, Sse},
    routing::{get, post},
    Json, Router,
};
use serde::Deserialize;
use serde_json::Value;
use url::Url;

use super::{
    calendar::CivilDate,
    http_executor::{CallError, ExecutorConfig, HttpExecutor},
    manifest::{Manifest, ManifestError},
    orchestrator::{
        ChatEvent, ManualTool, OrchestratorParts, SessionModels, DEFAULT_MAX_MODEL_TURNS,
    },
    planner::{Planner, PLANNER_MODEL},
    ApprovalScope, ChatError, ChatSession, ConfirmationId, Orchestrator, RequestedScope, SessionId,
    SessionView, TurnOutcome,
};
use crate::{
    agent::Models,
    http::{api_token::require_api_token, error::AppError, AppState},
    store::{chat::Decision, now_ms, Store},
};

/// Why the chat could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The manifest contradicts itself.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// The executor cannot be built (a missing auth secret).
    #[error(transparent)]
    Executor(#[from] CallError),
    /// The site's base URL does not parse.
    #[error("bad site base URL: {0}")]
    BaseUrl(String),
}

/// The models a chat session may use: the offline planner as `heuristic`, plus the configured
/// provider model (the default) when there is one.
#[must_use]
pub fn chat_models(
    models: &Models,
    manifest: Arc<Manifest>,
    clock: super::orchestrator::Clock,
) -> SessionModels {
    let planner = Planner::new(manifest, Arc::new(move || CivilDate::from_unix_ms(clock())));
    let offline = SessionModels::only(PLANNER_MODEL, Arc::new(planner));
    let spec = models.configured_spec();
    if spec == PLANNER_MODEL {
        return offline;
    }
    match models.choose(None) {
        Ok(model) => offline.with_default(spec, model),
        Err(_) => offline,
    }
}

/// The orchestrator of the demo items site: its manifest, its base URL resolved against
/// `self_origin` (the app's own address), the server allowlist of every operation.
///
/// # Errors
/// [`SetupError`] when the manifest or the base URL is wrong.
pub fn demo_orchestrator(
    store: Store,
    self_origin: &Url,
    models: &Models,
) -> Result<Orchestrator, SetupError> {
    let manifest = Arc::new(Manifest::from_json(crate::demo::items::MANIFEST_JSON)?);
    let base_url = resolve_base_url(&manifest.base_url, self_origin)?;
    let executor = HttpExecutor::new(&manifest, base_url, ExecutorConfig::default(), &|name| {
        std::env::var(name).ok()
    })?;
    let clock: super::orchestrator::Clock = Arc::new(now_ms);
    Ok(Orchestrator::new(OrchestratorParts {
        store,
        allowlist: super::CapabilityScope::all_of(&manifest),
        models: chat_models(models, manifest.clone(), clock.clone()),
        manifest,
        executor,
        clock,
        max_model_turns: DEFAULT_MAX_MODEL_TURNS,
    }))
}

/// A manifest base URL: absolute as is, or relative (`/demo-api`) to `self_origin`.
///
/// # Errors
/// [`SetupError::BaseUrl`] when neither parses.
pub fn resolve_base_url(base_url: &str, self_origin: &Url) -> Result<Url, SetupError> {
    match Url::parse(base_url) {
        Ok(url) => Ok(url),
        Err(url::ParseError::RelativeUrlWithoutBase) => self_origin
            .join(base_url)
            .map_err(|error| SetupError::BaseUrl(format!("{base_url}: {error}"))),
        Err(error) => Err(SetupError::BaseUrl(format!("{base_url}: {error}"))),
    }
}

/// The `/api/chat` routes for the app in `state` (behind the API token), over the process's one
/// orchestrator. When the chat could not be set up (logged at startup) the routes are absent, so
/// the rest of the app still serves.
pub fn routes(state: &AppState) -> Router<AppState> {
    match state.chat() {
        Some(orchestrator) => api_routes(orchestrator.clone()).route_layer(
            middleware::from_fn_with_state(state.clone(), require_api_token),
        ),
        None => Router::new(),
    }
}

/// The handlers over `orchestrator`, without authentication (tests and embedders add their own).
pub fn api_routes<S: Clone + Send + Sync + 'static>(orchestrator: Orchestrator) -> Router<S> {
    Router::new()
        .route("/api/chat/sessions", post(create_session))
        .route("/api/chat/sessions/{id}", get(session_view))
        .route("/api/chat/sessions/{id}/turns", post(post_turn))
        .route(
            "/api/chat/sessions/{id}/confirmations/{confirmation}",
            post(decide),
        )
        .route("/api/chat/sessions/{id}/tools", get(manual_tools))
        .route("/api/chat/sessions/{id}/tools/{name}", post(run_tool))
        .route("/api/chat/sessions/{id}/events", get(events))
        .with_state(orchestrator)
}

impl From<ChatError> for AppError {
    fn from(error: ChatError) -> Self {
        match error {
            ChatError::SessionNotFound | ChatError::ConfirmationNotFound => Self::NotFound,
            ChatError::Conflict(message) => Self::BadRequest {
                code: "conflict",
                message,
                field: None,
            },
            ChatError::Selection(message) => Self::BadRequest {
                code: "bad_selection",
                message,
                field: Some("ids".into()),
            },
            ChatError::UnknownModel { .. } => Self::BadRequest {
                code: "unknown_model",
                message: error.to_string(),
                field: Some("model".into()),
            },
            other => Self::Unexpected(other.into()),
        }
    }
}

fn session_id(text: &str) -> Result<SessionId, AppError> {
    SessionId::parse(text).ok_or(AppError::NotFound)
}

fn json_body<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, AppError> {
    let body = if body.is_empty() {
        b"{}".as_slice()
    } else {
        body
    };
    serde_json::from_slice(body).map_err(|error| AppError::BadRequest {
        code: "bad_json",
        message: format!("the body is not the expected JSON: {error}"),
        field: None,
    })
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewSessionBody {
    #[serde(default)]
    scope: Option<RequestedScope>,
    #[serde(default)]
    model: Option<String>,
}

async fn create_session(
    State(orchestrator): State<Orchestrator>,
    body: Bytes,
) -> Result<Json<ChatSession>, AppError> {
    let request: NewSessionBody = json_body(&body)?;
    Ok(Json(
        orchestrator
            .create_session(request.scope.as_ref(), request.model.as_deref())
            .await?,
    ))
}

async fn session_view(
    State(orchestrator): State<Orchestrator>,
    Path(id): Path<String>,
) -> Result<Json<SessionView>, AppError> {
    Ok(Json(orchestrator.session_view(session_id(&id)?).await?))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnBody {
    text: String,
}

async fn post_turn(
    State(orchestrator): State<Orchestrator>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<TurnOutcome>, AppError> {
    let request: TurnBody = json_body(&body)?;
    if request.text.trim().is_empty() {
        return Err(AppError::BadRequest {
            code: "empty_turn",
            message: "say something".into(),
            field: Some("text".into()),
        });
    }
    Ok(Json(
        orchestrator
            .handle_turn(session_id(&id)?, &request.text)
            .await?,
    ))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum DecisionWord {
    Approve,
    Deny,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DecisionBody {
    decision: DecisionWord,
    #[serde(default)]
    scope: Option<ApprovalScope>,
}

async fn decide(
    State(orchestrator): State<Orchestrator>,
    Path((id, confirmation)): Path<(String, String)>,
    body: Bytes,
) -> Result<Json<TurnOutcome>, AppError> {
    let request: DecisionBody = json_body(&body)?;
    let confirmation = uuid::Uuid::parse_str(&confirmation)
        .map(ConfirmationId)
        .map_err(|_| AppError::NotFound)?;
    let decision = match request.decision {
        DecisionWord::Approve => Decision::Approve(request.scope.unwrap_or(ApprovalScope::Once)),
        DecisionWord::Deny => Decision::Deny,
    };
    Ok(Json(
        orchestrator
            .decide(session_id(&id)?, confirmation, decision)
            .await?,
    ))
}

async fn manual_tools(
    State(orchestrator): State<Orchestrator>,
    Path(id): Path<String>,
) -> Result<Json<Vec<ManualTool>>, AppError> {
    Ok(Json(orchestrator.manual_tools(session_id(&id)?).await?))
}

async fn run_tool(
    State(orchestrator): State<Orchestrator>,
    Path((id, name)): Path<(String, String)>,
    body: Bytes,
) -> Result<Json<TurnOutcome>, AppError> {
    let arguments: Value = json_body(&body)?;
    Ok(Json(
        orchestrator
            .run_manual_tool(session_id(&id)?, &name, arguments)
            .await?,
    ))
}

async fn events(
    State(orchestrator): State<Orchestrator>,
    Path(id): Path<String>,
) -> Result<Sse<impl futures_util::Stream<Item = Result<Event, Infallible>>>, AppError> {
    let id = session_id(&id)?;
    orchestrator.session_view(id).await?;
    Ok(session_events(&orchestrator, id))
}

/// The session's [`ChatEvent`]s from now on as server-sent events (event name = the event's kind,
/// data = the event as JSON). Shared by this API and the chat page's `/chat/events`; a listener
/// that falls behind skips what it missed and re-reads the session view.
pub fn session_events(
    orchestrator: &Orchestrator,
    id: SessionId,
) -> Sse<impl futures_util::Stream<Item = Result<Event, Infallible>>> {
    let receiver = orchestrator.subscribe(id);
    let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
        loop {
            match receiver.recv().await {
                Ok(event) => {
                    let name = event_name(&event);
                    let data = serde_json::to_string(&event).unwrap_or_else(|_| "{}".to_owned());
                    return Some((Ok(Event::default().event(name).data(data)), receiver));
                }
                // A slow listener missed events; the page re-reads the session view on its own.
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
            }
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

fn event_name(event: &ChatEvent) -> &'static str {
    match event {
        ChatEvent::TurnRouted { .. } => "turn_routed",
        ChatEvent::StepStarted { .. } => "step_started",
        ChatEvent::Progress { .. } => "progress",
        ChatEvent::StepFinished { .. } => "step_finished",
        ChatEvent::ApprovalRequested { .. } => "approval_requested",
        ChatEvent::Reply { .. } => "reply",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_base_urls_resolve_against_the_app() -> Result<(), Box<dyn std::error::Error>> {
        let origin = Url::parse("http://127.0.0.1:3000")?;
        assert_eq!(
            resolve_base_url("/demo-api", &origin)?.as_str(),
            "http://127.0.0.1:3000/demo-api"
        );
        assert_eq!(
            resolve_base_url("https://api.example.com/v1", &origin)?.as_str(),
            "https://api.example.com/v1"
        );
        Ok(())
    }
}
