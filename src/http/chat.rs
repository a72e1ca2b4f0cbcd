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
use tessera_app::chat::{
    ApprovalView, ChatMessage, ChatPage, ChatPageData, HeaderStep, ToolEntry, ToolGroup,
};
use tower_sessions::Session;

use super::{error::AppError, login, render::html_document, security::is_cross_site, AppState};
use crate::{
    chat::{
        header::Step, orchestrator::ManualTool, session::Speaker, ApprovalScope, ChatError,
        ConfirmationId, Orchestrator, PendingApproval, SessionId,
    },
    forms::raw_values,
    store::chat::Decision,
};

const SESSION_KEY: &str = "chat_session";
const FLASH_KEY: &str = "chat_flash";
/// The most preview rows the page shows (the count is always the full one).
const MAX_PREVIEW_ROWS: usize = 200;

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
    let id = chat_session(&state, &session).await?;
    let view = state.orchestrator.session_view(id).await?;
    let tools = state.orchestrator.manual_tools(id).await?;
    let flash = session.remove::<String>(FLASH_KEY).await.ok().flatten();
    let data = ChatPageData {
        messages: view
            .transcript
            .iter()
            .map(|entry| {
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
                ChatMessage {
                    speaker: entry.speaker.as_str().to_owned(),
                    header: entry
                        .header
                        .as_ref()
                        .map(|header| header.steps.iter().map(header_step).collect())
                        .unwrap_or_default(),
                    header_text: (entry.speaker == Speaker::Assistant).then(|| {
                        header_text.unwrap_or_else(|| "Execution: no operations ran.".to_owned())
                    }),
                    text,
                }
            })
            .collect(),
        approvals: view.pending_approvals.iter().map(approval_view).collect(),
        running: view.running.iter().map(header_step).collect(),
        tools: tool_groups(&tools),
        flash,
    };
    Ok(html_document(
        &state.app,
        StatusCode::OK,
        "Chat · Tessera",
        move || view! { <ChatPage data/> }.into_any(),
    ))
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

/// `POST /chat/approvals/{id}`: `decision=approve|deny`, optional `scope=once|operation|session`.
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
    let decision = match field(&body, "decision").as_str() {
        "approve" => Decision::Approve(
            ApprovalScope::parse(&field(&body, "scope")).unwrap_or(ApprovalScope::Once),
        ),
        "deny" => Decision::Deny,
        _ => {
            return Err(AppError::BadRequest {
                code: "bad_decision",
                message: "decision must be approve or deny".into(),
                field: Some("decision".into()),
            })
        }
    };
    let id = chat_session(&state, &session).await?;
    match state.orchestrator.decide(id, confirmation, decision).await {
        Ok(_) => {}
        // Already decided (a double submit, another tab): show why, keep the page.
        Err(ChatError::Conflict(message)) => flash(&session, message).await,
        Err(error) => return Err(error.into()),
    }
    Ok(Redirect::to("/chat").into_response())
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

fn cell(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

fn approval_view(approval: &PendingApproval) -> ApprovalView {
    let mut columns: Vec<String> = Vec::new();
    for item in &approval.preview.items {
        if let Value::Object(fields) = item {
            for key in fields.keys() {
                if !columns.contains(key) {
                    columns.push(key.clone());
                }
            }
        }
    }
    let rows = approval
        .preview
        .items
        .iter()
        .take(MAX_PREVIEW_ROWS)
        .map(|item| {
            columns
                .iter()
                .map(|column| cell(item.get(column)))
                .collect()
        })
        .collect();
    ApprovalView {
        id: approval.confirmation_id.0.to_string(),
        operation: approval.operation.clone(),
        question: approval.question.clone(),
        reasons: approval.reasons_text.clone(),
        count: approval.preview.count,
        columns,
        rows,
        chunks: approval.preview.chunks.clone(),
        destructive: approval.destructive,
        hash: approval.hash.short().to_owned(),
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
