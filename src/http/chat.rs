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
    extract::{Path, State},
    middleware,
    response::{IntoResponse, Redirect, Response},
    routing::{get, post},
    Router,
};
use http::{HeaderMap, StatusCode};
use leptos::prelude::*;
use serde_json::Value;
use tessera_app::{
    chat::{
        ApprovalView, ChatMessage, ChatPage, ChatPageData, GeneratedView, HeaderStep, ToolEntry,
        ToolGroup,
    },
    components::DownloadFormat,
    render::FormState,
};
use tower_sessions::Session;

use super::{error::AppError, login, render::html_document, security::is_cross_site, AppState};
use crate::{
    chat::{
        header::Step,
        orchestrator::ManualTool,
        session::Speaker,
        views::{self, ChatView, SessionViews, IDS_FIELD, SCOPE_FIELD},
        ApprovalScope, ChatError, ConfirmationId, ExecutionId, Orchestrator, PendingApproval,
        SessionId,
    },
    forms::raw_values,
    store::chat::Decision,
};
use tessera_app::{components::paging::NAV_FIELD, render::ACTION_FIELD};

const SESSION_KEY: &str = "chat_session";
const FLASH_KEY: &str = "chat_flash";

/// The `/chat` routes (admin session), over the process's one orchestrator. When the chat could
/// not be set up (logged at startup) the routes are absent, so the rest of the app still serves.
pub fn routes(state: &AppState) -> Router<AppState> {
    let Some(orchestrator) = state.chat() else {
        return Router::new();
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
        .route_layer(middleware::from_fn(login::require_admin_page))
        .with_state(page_state)
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

fn field(body: &[u8], name: &str) -> String {
    raw_values(body)
        .get(name)
        .and_then(|all| all.last())
        .cloned()
        .unwrap_or_default()
}

pub(super) async fn flash(session: &Session, message: String) {
    let _ = session.insert(FLASH_KEY, message).await;
}

/// `GET /chat`.
async fn chat_page(State(state): State<ChatState>, session: Session) -> Result<Response, AppError> {
    render_chat(&state, &session, StatusCode::OK, None).await
}

/// The person's answer to one confirm view, shown again after it was refused.
struct RejectedAnswer {
    confirmation: ConfirmationId,
    form: FormState,
}

/// The chat page with its generated views; `rejected` re-fills one confirm view with the
/// person's values and the message.
async fn render_chat(
    state: &ChatState,
    session: &Session,
    status: StatusCode,
    rejected: Option<RejectedAnswer>,
) -> Result<Response, AppError> {
    let id = chat_session(state, session).await?;
    let view = state.orchestrator.session_view(id).await?;
    let tools = state.orchestrator.manual_tools(id).await?;
    let flash = session.remove::<String>(FLASH_KEY).await.ok().flatten();
    let model = state
        .app
        .models()
        .choose(None)
        .map_err(|error| AppError::Unexpected(error.into()))?;
    let mut generated = views::session_views(
        state.orchestrator.store(),
        model.as_ref(),
        state.orchestrator.manifest(),
        &view,
    )
    .await
    .map_err(|error| AppError::Unexpected(error.into()))?;
    let data = ChatPageData {
        messages: view
            .transcript
            .iter()
            .map(|entry| message(entry, &mut generated))
            .collect(),
        approvals: view
            .pending_approvals
            .iter()
            .filter_map(|approval| {
                let confirm = generated.confirms.remove(&approval.confirmation_id)?;
                let mut shown = generated_view(confirm);
                if let Some(rejected) = rejected
                    .as_ref()
                    .filter(|rejected| rejected.confirmation == approval.confirmation_id)
                {
                    shown.form = rejected.form.clone();
                }
                Some(approval_view(approval, shown))
            })
            .collect(),
        running: generated.progress.into_iter().map(generated_view).collect(),
        tools: tool_groups(&tools),
        flash,
    };
    Ok(html_document(
        &state.app,
        status,
        "Chat · Tessera",
        move || view! { <ChatPage data/> }.into_any(),
    ))
}

fn message(
    entry: &crate::chat::session::TranscriptEntry,
    generated: &mut SessionViews,
) -> ChatMessage {
    let header_text = entry
        .header
        .as_ref()
        .map(crate::chat::ExecutionHeader::render);
    let text = match &header_text {
        Some(rendered) => entry
            .text
            .strip_prefix(rendered.as_str())
            .unwrap_or(&entry.text)
            .trim_start()
            .to_owned(),
        None => entry.text.clone(),
    };
    let steps = entry
        .header
        .as_ref()
        .map(|header| header.steps.as_slice())
        .unwrap_or_default();
    ChatMessage {
        speaker: entry.speaker.as_str().to_owned(),
        header: steps.iter().map(header_step).collect(),
        header_text: (entry.speaker == Speaker::Assistant)
            .then(|| header_text.unwrap_or_else(|| "Execution: no operations ran.".to_owned())),
        text,
        views: steps
            .iter()
            .filter_map(|step| step.execution_id)
            .filter_map(|execution| generated.results.remove(&execution))
            .map(generated_view)
            .collect(),
    }
}

fn generated_view(view: ChatView) -> GeneratedView {
    GeneratedView {
        kind: view.kind.as_str().to_owned(),
        tree: view.tree,
        data: view.data,
        action: view.action,
        form: FormState {
            values: view.values,
            ..FormState::default()
        },
        download_base: view.download_base,
    }
}

/// `POST /chat`: one turn, then back to the page.
async fn post_turn(
    State(state): State<ChatState>,
    session: Session,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    if is_cross_site(&headers) {
        return Ok(StatusCode::FORBIDDEN.into_response());
    }
    let text = field(&body, "text");
    if text.trim().is_empty() {
        flash(&session, "Type a message first.".to_owned()).await;
        return Ok(Redirect::to("/chat").into_response());
    }
    let id = chat_session(&state, &session).await?;
    state.orchestrator.handle_turn(id, text.trim()).await?;
    Ok(Redirect::to("/chat").into_response())
}

/// `POST /chat/approvals/{id}`: the confirm view's form (`_action=submit|cancel`, `ids`,
/// `scope`) or the short form `decision=approve|deny` (optional `scope`), which approves every
/// previewed item. A refused selection re-renders the page (422) with the person's ticks.
async fn decide(
    State(state): State<ChatState>,
    session: Session,
    headers: HeaderMap,
    Path(confirmation): Path<String>,
    body: Bytes,
) -> Result<Response, AppError> {
    if is_cross_site(&headers) {
        return Ok(StatusCode::FORBIDDEN.into_response());
    }
    let confirmation = uuid::Uuid::parse_str(&confirmation)
        .map(ConfirmationId)
        .map_err(|_| AppError::NotFound)?;
    let values = raw_values(&body);
    // A table's paging button is never a decision; the confirm table shows every row at once,
    // so only a crafted request gets here.
    if values.contains_key(NAV_FIELD) {
        return Ok(Redirect::to("/chat").into_response());
    }
    let last = |name: &str| {
        values
            .get(name)
            .and_then(|all| all.last())
            .map(String::as_str)
    };
    let approve = match (last("decision"), last(ACTION_FIELD)) {
        (Some("approve"), _) | (None, Some("submit")) => true,
        (Some("deny"), _) | (None, Some("cancel")) => false,
        _ => {
            return Err(AppError::BadRequest {
                code: "bad_decision",
                message: "decision must be approve or deny".into(),
                field: Some("decision".into()),
            })
        }
    };
    let id = chat_session(&state, &session).await?;
    let outcome = if approve {
        let scope = ApprovalScope::parse(last(SCOPE_FIELD).unwrap_or("once")).ok_or_else(|| {
            AppError::BadRequest {
                code: "bad_scope",
                message: "scope must be once, operation or session".into(),
                field: Some(SCOPE_FIELD.into()),
            }
        })?;
        // The confirm view always sends its ticks (none ticked sends no `ids` at all).
        let selected: Option<Vec<String>> = match last(ACTION_FIELD) {
            Some("submit") => Some(
                values
                    .get(IDS_FIELD)
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|item| !item.is_empty())
                    .collect(),
            ),
            _ => None,
        };
        state
            .orchestrator
            .approve_selection(id, confirmation, selected.as_deref(), scope)
            .await
    } else {
        state
            .orchestrator
            .decide(id, confirmation, Decision::Deny)
            .await
    };
    match outcome {
        Ok(_) => {}
        // Already decided (a double submit, another tab): show why, keep the page.
        Err(ChatError::Conflict(message)) => flash(&session, message).await,
        Err(ChatError::Selection(message)) => {
            let form = FormState {
                values,
                errors: BTreeMap::from([(IDS_FIELD.to_owned(), message.clone())]),
                form_error: Some(message),
            };
            let rejected = RejectedAnswer { confirmation, form };
            return render_chat(
                &state,
                &session,
                StatusCode::UNPROCESSABLE_ENTITY,
                Some(rejected),
            )
            .await;
        }
        Err(error) => return Err(error.into()),
    }
    Ok(Redirect::to("/chat").into_response())
}

/// `GET /chat/results/{execution}/download.{csv,json}`: the per-item result of a finished call
/// of this browser's chat session, built from the execution record.
async fn download_result(
    State(state): State<ChatState>,
    session: Session,
    Path((execution, file)): Path<(String, String)>,
) -> Result<Response, AppError> {
    let execution = uuid::Uuid::parse_str(&execution)
        .map(ExecutionId)
        .map_err(|_| AppError::NotFound)?;
    let format = file
        .rsplit_once('.')
        .and_then(|(_, extension)| DownloadFormat::from_extension(extension))
        .ok_or(AppError::NotFound)?;
    let id = chat_session(&state, &session).await?;
    let file = views::result_file(
        state.orchestrator.store(),
        state.orchestrator.manifest(),
        id,
        execution,
        format,
    )
    .await
    .map_err(|error| AppError::Unexpected(error.into()))?
    .ok_or(AppError::NotFound)?;
    Ok((
        [
            (http::header::CONTENT_TYPE, file.content_type.to_owned()),
            (
                http::header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{}\"", file.filename),
            ),
        ],
        file.body,
    )
        .into_response())
}

fn status_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(text)) => text,
        _ => String::new(),
    }
}

fn header_step(step: &Step) -> HeaderStep {
    HeaderStep {
        label: step.status.label().to_owned(),
        status: status_name(&step.status),
        operation: step.operation.clone(),
        summary: step.detail.clone(),
        error: step.error.clone(),
        progress: step.chunks.as_ref().map(|chunks| {
            (
                u64::try_from(chunks.items_done).unwrap_or(u64::MAX),
                u64::try_from(chunks.items_total).unwrap_or(u64::MAX),
            )
        }),
    }
}

fn approval_view(approval: &PendingApproval, view: GeneratedView) -> ApprovalView {
    ApprovalView {
        id: approval.confirmation_id.0.to_string(),
        operation: approval.operation.clone(),
        question: approval.question.clone(),
        reasons: approval.reasons_text.clone(),
        chunks: approval.preview.chunks.clone(),
        hash: approval.hash.short().to_owned(),
        view,
    }
}

fn tool_groups(tools: &[ManualTool]) -> Vec<ToolGroup> {
    let mut groups: BTreeMap<String, Vec<ToolEntry>> = BTreeMap::new();
    for tool in tools {
        let parameters = tool
            .parameters
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default();
        groups
            .entry(tool.category.clone())
            .or_default()
            .push(ToolEntry {
                name: tool.name.clone(),
                description: tool.description.clone(),
                parameters,
            });
    }
    groups
        .into_iter()
        .map(|(category, tools)| ToolGroup { category, tools })
        .collect()
}
