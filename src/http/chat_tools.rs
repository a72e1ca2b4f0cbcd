//! The chat's manual tools as forms, and the chat's live event stream (admin session).
//!
//! | route | what |
//! |---|---|
//! | `GET /chat/tools/{name}` | the tool's form, generated from its parameter schema |
//! | `POST /chat/tools/{name}` | decode + validate; 422 with the person's values, or run it and 303 to `/chat` |
//! | `GET /chat/events` | server-sent events of this browser's chat session ([`ChatEvent`]s as JSON) |
//!
//! The rules live in `chat::tool_forms` and the [`Orchestrator`]; these handlers only render,
//! redirect and refuse cross-site posts like every other chat POST.
//!
//! [`ChatEvent`]: crate::chat::ChatEvent
//! [`Orchestrator`]: crate::chat::Orchestrator

use axum::{
    body::Bytes,
    extract::{Path, State},
    response::{IntoResponse, Redirect, Response},
    routing::get,
    Router,
};
use http::StatusCode;
use tessera_app::{
    chat_tools::{tool_form_page, ToolSummary},
    render::{render_tree, FormState, RenderCtx},
};
use tower_sessions::Session;

use super::{
    chat::{chat_session, ChatState},
    chat_api::session_events,
    error::AppError,
    render::html_document,
};
use crate::chat::tool_forms::{
    submit_tool_form, tool_form, ToolForm, ToolFormError, ToolSubmission,
};

/// The routes above, for the chat page's router (which adds the admin-session check).
pub(super) fn routes() -> Router<ChatState> {
    Router::new()
        .route("/chat/tools/{name}", get(show_tool).post(submit_tool))
        .route("/chat/events", get(chat_events))
}

impl From<ToolFormError> for AppError {
    fn from(error: ToolFormError) -> Self {
        match error {
            ToolFormError::UnknownTool(_) => Self::NotFound,
            ToolFormError::Chat(error) => error.into(),
            other => Self::Unexpected(other.into()),
        }
    }
}

/// `GET /chat/tools/{name}`.
async fn show_tool(
    State(state): State<ChatState>,
    session: Session,
    Path(name): Path<String>,
) -> Result<Response, AppError> {
    let id = chat_session(&state, &session).await?;
    let form = tool_form(&state.orchestrator, state.app.models(), id, &name).await?;
    Ok(form_page(&state, StatusCode::OK, form, FormState::default()).await)
}

/// `POST /chat/tools/{name}`.
async fn submit_tool(
    State(state): State<ChatState>,
    session: Session,
    Path(name): Path<String>,
    body: Bytes,
) -> Result<Response, AppError> {
    let id = chat_session(&state, &session).await?;
    let models = state.app.models();
    match submit_tool_form(&state.orchestrator, models, id, &name, &body).await? {
        ToolSubmission::Ran(_) | ToolSubmission::Cancelled => {
            Ok(Redirect::to("/chat").into_response())
        }
        ToolSubmission::Invalid(form, values) => {
            Ok(form_page(&state, StatusCode::UNPROCESSABLE_ENTITY, *form, values).await)
        }
    }
}

/// `GET /chat/events`: what this browser's chat session does from now on, as it happens.
async fn chat_events(
    State(state): State<ChatState>,
    session: Session,
) -> Result<Response, AppError> {
    let id = chat_session(&state, &session).await?;
    Ok(session_events(&state.orchestrator, id).into_response())
}

async fn form_page(
    state: &ChatState,
    status: StatusCode,
    form: ToolForm,
    values: FormState,
) -> Response {
    let ToolForm { tool, tree, .. } = form;
    let mut ctx = RenderCtx::new(serde_json::json!({}));
    ctx.action = Some(format!("/chat/tools/{}", tool.name));
    ctx.form = values;
    let summary = ToolSummary {
        name: tool.name.clone(),
        description: tool.description,
        rules: tool.rules,
    };
    html_document(
        &state.app,
        status,
        &format!("{} · Chat · Tessera", tool.name),
        move || tool_form_page(summary, render_tree(&tree, &ctx)),
    )
    .await
}
