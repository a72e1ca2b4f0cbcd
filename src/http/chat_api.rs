//! The chat's JSON API under `/api/chat`: thin handlers over the [`Orchestrator`].
//!
//! Parse the path and body, call one method, map [`ChatError`] to the app's JSON error. They
//! sit behind the API token like every `/api/*` route. The chat UI (forms and SSE,
//! `http/chat.rs`) is built on the same orchestrator methods, never on these handlers'
//! internals.
//!
//! | route | what |
//! |---|---|
//! | `POST /api/chat/sessions` | `{scope?, model?}` → the session |
//! | `GET /api/chat/sessions/{id}` | transcript, threads, pending approvals, running calls |
//! | `POST /api/chat/sessions/{id}/turns` | `{text}` → [`TurnOutcome`] |
//! | `POST /api/chat/sessions/{id}/confirmations/{confirmation}` | `{decision: approve\|deny, scope?: once\|operation\|session}` → [`TurnOutcome`]; applied as the chat page's approval form is ([`ApprovalAnswer::apply`]), so a scope the confirmation does not offer is 400 `bad_scope` and nothing is recorded |
//! | `GET /api/chat/sessions/{id}/tools` | the manual tools with their form schemas |
//! | `POST /api/chat/sessions/{id}/tools/{name}` | arguments JSON → [`TurnOutcome`] |
//! | `GET /api/chat/sessions/{id}/events` | server-sent events: [`ChatEvent`]s as JSON |

use std::convert::Infallible;

use axum::{
    body::Bytes,
    extract::{Path, State},
    middleware,
    response::sse::{Event, KeepAlive, Sse},
    routing::{get, post},
    Router,
};
use serde::Deserialize;
use serde_json::Value;

use super::{api_token::require_api_token, error::AppError, extract::Json, AppState};
use crate::chat::{
    approval_form::ApprovalAnswer, orchestrator::ManualTool, ApprovalScope, ChatError, ChatEvent,
    ChatSession, ConfirmationId, Orchestrator, RequestedScope, SessionId, SessionView, TurnOutcome,
};

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
            ChatError::Conflict(message) => Self::Conflict {
                code: "conflict",
                message,
            },
            ChatError::Selection(message) => Self::BadRequest {
                code: "bad_selection",
                message,
                field: Some("ids".into()),
            },
            ChatError::Scope(message) => Self::BadRequest {
                code: "bad_scope",
                message,
                field: Some("scope".into()),
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
    // The same answer, applied the same way, as the chat page's approval forms.
    let answer = match request.decision {
        DecisionWord::Approve => ApprovalAnswer::Approve {
            scope: request.scope.unwrap_or(ApprovalScope::Once),
            selected: None,
        },
        DecisionWord::Deny => ApprovalAnswer::Deny,
    };
    let session = session_id(&id)?;
    Ok(Json(
        answer.apply(&orchestrator, session, confirmation).await?,
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
