//! The chat page at `/chat` (admin session): server-rendered, works with JavaScript off.
//!
//! `GET /chat` shows the conversation of this browser's chat session (its id lives in the
//! tower-sessions session; the history, threads and pending approvals live in the store, so they
//! survive a reload and a restart). `POST /chat` is one turn and `POST /chat/approvals/{id}`
//! approves or denies a pending confirmation; both redirect back (POST-redirect-GET). Every rule
//! is the [`Orchestrator`]'s: these handlers only translate forms and views.

use std::collections::BTreeMap;

use axum::{
    body::Bytes,
    extract::{Path, Query, State},
    middleware,
    response::{IntoResponse, Redirect, Response},
    routing::{get, post},
    Router,
};
use http::StatusCode;
use serde::Deserialize;
use tessera_app::{components::DownloadFormat, not_found::error_page};
use tower_sessions::Session;

use super::{
    error::AppError,
    extract::Form,
    login,
    presenters::{self, chat::RejectedAnswer},
    render::{attachment, html_document},
    same_origin::{refuse_cross_site, Refusal, SameOrigin},
    AppState,
};
use crate::{
    chat::{
        approval_form::{ApprovalAnswer, ApprovalFormError},
        views::{self, CallFile, SessionViews, SCOPE_FIELD},
        ChatError, ConfirmationId, ExecutionId, Orchestrator, SessionId, SessionView, TurnOutcome,
    },
    forms::raw_values,
};

const SESSION_KEY: &str = "chat_session";
const FLASH_KEY: &str = "chat_flash";

/// The `/chat` routes (admin session), over the process's one orchestrator. Without a chat (the
/// demo is off, or it could not be set up, logged at startup) `GET /chat` only says why and the
/// other routes are absent, so the rest of the app still serves.
pub fn routes(state: &AppState) -> Router<AppState> {
    let Some(orchestrator) = state.chat() else {
        return Router::new().route("/chat", get(chat_off)).route_layer(
            middleware::from_fn_with_state(state.clone(), login::require_admin_page),
        );
    };
    let page_state = ChatState {
        app: state.clone(),
        orchestrator: orchestrator.clone(),
    };
    Router::new()
        .route("/chat", get(chat_page).post(post_turn))
        .route("/chat/approvals/{id}", post(decide))
        .merge(super::chat_tools::routes())
        .route("/chat/results/{execution}/{file}", get(download_result))
        .route("/chat/reads/{execution}/{file}", get(download_read))
        // Inside the admin check: a stranger is sent to log in before anything else.
        .route_layer(middleware::from_fn_with_state(
            SameOrigin::new(state, Refusal::Status),
            refuse_cross_site,
        ))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            login::require_admin_page,
        ))
        .with_state(page_state)
}

/// `GET /chat` on a server without a chat: a 404 that says why, not a bare "not found".
async fn chat_off(State(state): State<AppState>) -> Response {
    let message = if state.demo_key.is_none() {
        "The chat drives the demo site, which this server does not serve (TESSERA_DEMO is off)."
    } else {
        "The chat could not be set up; the server's log says why."
    };
    html_document(
        &state,
        StatusCode::NOT_FOUND,
        "Chat is off · Tessera",
        move || error_page(404, "The chat is off".to_owned(), message.to_owned()),
    )
    .await
}

/// What the chat page's handlers reach: the app and its orchestrator.
#[derive(Clone)]
pub(super) struct ChatState {
    pub(super) app: AppState,
    pub(super) orchestrator: Orchestrator,
}

/// This browser's chat session: the one its cookie names when the store still has it, else a new
/// one remembered in the cookie session.
pub(super) async fn chat_session(
    state: &ChatState,
    session: &Session,
) -> Result<SessionId, AppError> {
    let remembered = session
        .get::<String>(SESSION_KEY)
        .await
        .ok()
        .flatten()
        .and_then(|text| SessionId::parse(&text));
    if let Some(id) = remembered {
        match state.orchestrator.session_view(id).await {
            Ok(_) => return Ok(id),
            Err(ChatError::SessionNotFound) => {}
            Err(error) => return Err(error.into()),
        }
    }
    let created = state.orchestrator.create_session(None, None).await?;
    session
        .insert(SESSION_KEY, created.id.to_string())
        .await
        .map_err(|error| AppError::Unexpected(anyhow::anyhow!("session: {error}")))?;
    Ok(created.id)
}

pub(super) async fn flash(session: &Session, message: String) {
    let _ = session.insert(FLASH_KEY, message).await;
}

/// An id in a path; anything else is an unknown page (404).
fn parse_uuid(text: &str) -> Result<uuid::Uuid, AppError> {
    uuid::Uuid::parse_str(text).map_err(|_| AppError::NotFound)
}

/// `GET /chat`; the query carries the read views' table pages and sorts (`page`, `sort`, `dir`).
async fn chat_page(
    State(state): State<ChatState>,
    session: Session,
    Query(query): Query<BTreeMap<String, String>>,
) -> Result<Response, AppError> {
    render_chat(&state, &session, StatusCode::OK, None, &query).await
}

/// The chat page with its generated views; `rejected` re-fills one confirm view with the
/// person's values and the message.
async fn render_chat(
    state: &ChatState,
    session: &Session,
    status: StatusCode,
    rejected: Option<RejectedAnswer>,
    query: &BTreeMap<String, String>,
) -> Result<Response, AppError> {
    let id = chat_session(state, session).await?;
    let view = state.orchestrator.session_view(id).await?;
    let tools = state.orchestrator.manual_tools(id).await?;
    let flash = session.remove::<String>(FLASH_KEY).await.ok().flatten();
    let generated = generated_views(state, &view).await?;
    let data =
        presenters::chat::chat_page_data(&view, generated, &tools, flash, rejected.as_ref(), query);
    let render = move || tessera_app::chat::chat_page(data);
    Ok(html_document(&state.app, status, "Chat · Tessera", render).await)
}

/// The session's confirm, progress and result views, generated with the default model.
async fn generated_views(state: &ChatState, view: &SessionView) -> Result<SessionViews, AppError> {
    let model = state
        .app
        .models()
        .choose(None)
        .map_err(anyhow::Error::from)?;
    let orchestrator = &state.orchestrator;
    let (store, manifest) = (orchestrator.store(), orchestrator.manifest());
    let generated = views::session_views(store, model.as_ref(), manifest, view)
        .await
        .map_err(anyhow::Error::from)?;
    Ok(generated)
}

/// The chat's message form.
#[derive(Debug, Default, Deserialize)]
struct TurnForm {
    #[serde(default)]
    text: String,
}

/// `POST /chat`: one turn, then back to the page.
async fn post_turn(
    State(state): State<ChatState>,
    session: Session,
    Form(form): Form<TurnForm>,
) -> Result<Response, AppError> {
    let text = form.text.trim();
    if text.is_empty() {
        flash(&session, "Type a message first.".to_owned()).await;
        return Ok(Redirect::to("/chat").into_response());
    }
    let id = chat_session(&state, &session).await?;
    state.orchestrator.handle_turn(id, text).await?;
    Ok(Redirect::to("/chat").into_response())
}

impl From<ApprovalFormError> for AppError {
    fn from(error: ApprovalFormError) -> Self {
        let (code, field) = match error {
            ApprovalFormError::Decision => ("bad_decision", "decision"),
            ApprovalFormError::Scope => ("bad_scope", SCOPE_FIELD),
        };
        Self::BadRequest {
            code,
            message: error.to_string(),
            field: Some(field.into()),
        }
    }
}

/// `POST /chat/approvals/{id}`: the confirm view's form (`_action=submit|cancel`, `ids`,
/// `scope`) or the short form `decision=approve|deny` (optional `scope`), which approves every
/// previewed item. A refused selection re-renders the page (422) with the person's ticks.
async fn decide(
    State(state): State<ChatState>,
    session: Session,
    Path(confirmation): Path<String>,
    body: Bytes,
) -> Result<Response, AppError> {
    let confirmation = ConfirmationId(parse_uuid(&confirmation)?);
    let values = raw_values(&body);
    let Some(answer) = ApprovalAnswer::from_form(&values)? else {
        return Ok(Redirect::to("/chat").into_response());
    };
    let id = chat_session(&state, &session).await?;
    let outcome = answer.apply(&state.orchestrator, id, confirmation).await;
    after_decision(&state, &session, confirmation, values, outcome).await
}

/// Back to the page after a decision; a decision already taken is a flash, a refused selection
/// the page again (422) with the person's ticks.
async fn after_decision(
    state: &ChatState,
    session: &Session,
    confirmation: ConfirmationId,
    values: BTreeMap<String, Vec<String>>,
    outcome: Result<TurnOutcome, ChatError>,
) -> Result<Response, AppError> {
    match outcome {
        Ok(_) => {}
        // Already decided (a double submit, another tab): show why, keep the page.
        Err(ChatError::Conflict(message)) => flash(session, message).await,
        Err(ChatError::Selection(message) | ChatError::Scope(message)) => {
            let rejected = RejectedAnswer::refused_selection(confirmation, values, message);
            let status = StatusCode::UNPROCESSABLE_ENTITY;
            return render_chat(state, session, status, Some(rejected), &BTreeMap::new()).await;
        }
        Err(error) => return Err(error.into()),
    }
    Ok(Redirect::to("/chat").into_response())
}

/// The format a download's file name asks for (`….csv`, `….json`); any other is not found.
fn download_format(file: &str) -> Result<DownloadFormat, AppError> {
    file.rsplit_once('.')
        .and_then(|(_, extension)| DownloadFormat::from_extension(extension))
        .ok_or(AppError::NotFound)
}

/// A download of this browser's chat session only: another session's execution is not found.
async fn download_call_file(
    state: &ChatState,
    session: &Session,
    (execution, file): (String, String),
    which: CallFile,
) -> Result<Response, AppError> {
    let execution = ExecutionId(parse_uuid(&execution)?);
    let format = download_format(&file)?;
    let id = chat_session(state, session).await?;
    let (store, manifest) = (state.orchestrator.store(), state.orchestrator.manifest());
    let file = views::call_file(store, manifest, (id, execution), which, format)
        .await
        .map_err(anyhow::Error::from)?;
    Ok(attachment(file.ok_or(AppError::NotFound)?))
}

/// `GET /chat/results/{execution}/download.{csv,json}`: the per-item result of a finished call
/// of this browser's chat session, built from the execution record.
async fn download_result(
    State(state): State<ChatState>,
    session: Session,
    Path(path): Path<(String, String)>,
) -> Result<Response, AppError> {
    download_call_file(&state, &session, path, CallFile::Result).await
}

/// `GET /chat/reads/{execution}/{node}.{csv,json}`: the rows a read of this browser's chat
/// session returned, from the result stored with the turn (the site is not asked again).
async fn download_read(
    State(state): State<ChatState>,
    session: Session,
    Path(path): Path<(String, String)>,
) -> Result<Response, AppError> {
    download_call_file(&state, &session, path, CallFile::Read).await
}
