//! The chat's JSON API under `/api/chat`: thin handlers over the [`Orchestrator`].
//!
//! Parse the path and body, call one method, map [`ChatError`] to the app's JSON error. They
//! sit behind the API token like every `/api/*` route (the guard is added with the others in
//! `openapi::api`, which also puts them in the API's document). The chat UI (forms and SSE,
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
    response::sse::{Event, KeepAlive, Sse},
    Router,
};
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::{AppError, ErrorBody},
    extract::Json,
    openapi::ServerSentEvent,
    AppState,
};
use crate::chat::{
    approval_form::ApprovalAnswer, orchestrator::ManualTool, ApprovalScope, ChatError, ChatEvent,
    ChatSession, ConfirmationId, Orchestrator, RequestedScope, SessionId, SessionView, TurnOutcome,
};

/// The `/api/chat` routes for the app in `state`, with their operations, over the process's one
/// orchestrator. When the chat could not be set up (logged at startup) the routes are absent, so
/// the rest of the app still serves.
pub fn routes(state: &AppState) -> OpenApiRouter<AppState> {
    match state.chat() {
        Some(orchestrator) => documented_routes(orchestrator.clone()),
        None => OpenApiRouter::new(),
    }
}

/// The handlers over `orchestrator`, without authentication (tests and embedders add their own).
pub fn api_routes<S: Clone + Send + Sync + 'static>(orchestrator: Orchestrator) -> Router<S> {
    documented_routes(orchestrator).split_for_parts().0
}

fn documented_routes<S: Clone + Send + Sync + 'static>(
    orchestrator: Orchestrator,
) -> OpenApiRouter<S> {
    OpenApiRouter::new()
        .routes(routes!(create_session))
        .routes(routes!(session_view))
        .routes(routes!(post_turn))
        .routes(routes!(decide))
        .routes(routes!(manual_tools))
        .routes(routes!(run_tool))
        .routes(routes!(events))
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

/// The body as `T`; no body, or `null` (as the document's optional bodies allow), is `{}`.
fn json_body<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, AppError> {
    let bad_json = |error: serde_json::Error| AppError::BadRequest {
        code: "bad_json",
        message: format!("the body is not the expected JSON: {error}"),
        field: None,
    };
    let value: Value = if body.is_empty() {
        Value::Object(serde_json::Map::new())
    } else {
        serde_json::from_slice(body).map_err(bad_json)?
    };
    let value = match value {
        Value::Null => Value::Object(serde_json::Map::new()),
        other => other,
    };
    // serde reads a struct from an array too (`["hi"]`); every body here is an object.
    let scope_is_array = value.get("scope").is_some_and(Value::is_array);
    if !value.is_object() || scope_is_array {
        return Err(AppError::BadRequest {
            code: "bad_json",
            message: "the body and its `scope` must be JSON objects".to_owned(),
            field: scope_is_array.then(|| "scope".to_owned()),
        });
    }
    serde_json::from_value(value).map_err(bad_json)
}

/// The body of `POST /api/chat/sessions` (optional: none is `{}`).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct NewSessionBody {
    /// Narrows what the session may run (within the server's allowlist).
    #[serde(default)]
    scope: Option<RequestedScope>,
    /// `heuristic` or a configured model's spec; the configured model when absent.
    #[serde(default)]
    model: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/chat/sessions",
    tag = "chat",
    request_body(content = Option<NewSessionBody>, description = "Optional."),
    responses(
        (status = 200, description = "The new session.", body = ChatSession),
        (status = 400, description = "A body that is not the expected JSON (`bad_json`) or a model that is not configured (`unknown_model`).", body = ErrorBody),
    ),
)]
/// `POST /api/chat/sessions`: a new session, narrowed to `scope`, on `model`.
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

#[utoipa::path(
    get,
    path = "/api/chat/sessions/{id}",
    tag = "chat",
    params(("id" = String, Path, description = "The session's id (a UUID).")),
    responses(
        (status = 200, description = "Transcript, threads, pending approvals and running calls.", body = SessionView),
        (status = 404, description = "No such session.", body = ErrorBody),
    ),
)]
/// `GET /api/chat/sessions/{id}`: what the chat page shows after a reload.
async fn session_view(
    State(orchestrator): State<Orchestrator>,
    Path(id): Path<String>,
) -> Result<Json<SessionView>, AppError> {
    Ok(Json(orchestrator.session_view(session_id(&id)?).await?))
}

/// The body of `POST /api/chat/sessions/{id}/turns`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct TurnBody {
    /// What the person says (not blank).
    #[schema(min_length = 1, pattern = r"\S")]
    text: String,
}

#[utoipa::path(
    post,
    path = "/api/chat/sessions/{id}/turns",
    tag = "chat",
    params(("id" = String, Path, description = "The session's id (a UUID).")),
    request_body = TurnBody,
    responses(
        (status = 200, description = "What the turn did and the reply.", body = TurnOutcome),
        (status = 400, description = "A body that is not the expected JSON (`bad_json`) or a blank text (`empty_turn`).", body = ErrorBody),
        (status = 404, description = "No such session.", body = ErrorBody),
        (status = 409, description = "The session cannot take this now (`conflict`).", body = ErrorBody),
    ),
)]
/// `POST /api/chat/sessions/{id}/turns`: one turn of the person.
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

/// Approve or deny.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
enum DecisionWord {
    Approve,
    Deny,
}

/// The body of `POST /api/chat/sessions/{id}/confirmations/{confirmation}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct DecisionBody {
    /// The person's decision.
    decision: DecisionWord,
    /// How far an approval reaches (default `once`); one the confirmation does not offer is 400.
    #[serde(default)]
    scope: Option<ApprovalScope>,
}

#[utoipa::path(
    post,
    path = "/api/chat/sessions/{id}/confirmations/{confirmation}",
    tag = "chat",
    params(
        ("id" = String, Path, description = "The session's id (a UUID)."),
        ("confirmation" = String, Path, description = "The confirmation's id (a UUID)."),
    ),
    request_body = DecisionBody,
    responses(
        (status = 200, description = "What the decision did.", body = TurnOutcome),
        (status = 400, description = "A body that is not the expected JSON (`bad_json`) or a scope the confirmation does not offer (`bad_scope`).", body = ErrorBody),
        (status = 404, description = "No such session or confirmation.", body = ErrorBody),
        (status = 409, description = "The confirmation was already decided (`conflict`).", body = ErrorBody),
    ),
)]
/// `POST /api/chat/sessions/{id}/confirmations/{confirmation}`: approve or deny a confirmation.
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

#[utoipa::path(
    get,
    path = "/api/chat/sessions/{id}/tools",
    tag = "chat",
    params(("id" = String, Path, description = "The session's id (a UUID).")),
    responses(
        (status = 200, description = "The tools a person may run by hand, with their form schemas.", body = Vec<ManualTool>),
        (status = 404, description = "No such session.", body = ErrorBody),
    ),
)]
/// `GET /api/chat/sessions/{id}/tools`: the tools a person may run by hand.
async fn manual_tools(
    State(orchestrator): State<Orchestrator>,
    Path(id): Path<String>,
) -> Result<Json<Vec<ManualTool>>, AppError> {
    Ok(Json(orchestrator.manual_tools(session_id(&id)?).await?))
}

#[utoipa::path(
    post,
    path = "/api/chat/sessions/{id}/tools/{name}",
    tag = "chat",
    params(
        ("id" = String, Path, description = "The session's id (a UUID)."),
        ("name" = String, Path, description = "The tool's operation name."),
    ),
    request_body(content = Option<Object>, description = "The tool's arguments, as its form schema says (optional: none is `{}`)."),
    responses(
        (status = 200, description = "What the tool run did.", body = TurnOutcome),
        (status = 400, description = "A body that is not JSON (`bad_json`) or arguments the tool refuses (`bad_selection`).", body = ErrorBody),
        (status = 404, description = "No such session.", body = ErrorBody),
        (status = 409, description = "The session cannot run it now (`conflict`).", body = ErrorBody),
    ),
)]
/// `POST /api/chat/sessions/{id}/tools/{name}`: run a manual tool with its arguments.
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

#[utoipa::path(
    get,
    path = "/api/chat/sessions/{id}/events",
    tag = "chat",
    params(("id" = String, Path, description = "The session's id (a UUID).")),
    responses(
        (status = 200, description = "Server-sent events from now on: name = the event's kind, data = the event as JSON.", content_type = "text/event-stream", body = ServerSentEvent),
        (status = 404, description = "No such session.", body = ErrorBody),
    ),
)]
/// `GET /api/chat/sessions/{id}/events`: the session's events from now on (SSE).
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
