//! `GET /inbox`: a signed-in person's asks, open first (each with a button to answer it), then
//! the ones answered, decided, expired or withdrawn; [`INBOX_PAGE_SIZE`] a page, without
//! JavaScript. `POST /inbox/{page}/answer` opens one: tokens are kept as hashes only, so the
//! person gets one more link of their own (the one in their mail keeps working) and the browser
//! is sent to it.

use axum::{
    extract::{Path, Query, State},
    response::{IntoResponse, Redirect, Response},
};
use http::StatusCode;
use serde::Deserialize;
use tessera_app::inbox::{inbox_page, InboxRow};
use tower_sessions::Session;

use super::{error::AppError, render::html_document, sign_in::signed_in_person, AppState};
use crate::{
    pages::{
        inbox::{InboxEntry, InboxState, INBOX_PAGE_SIZE},
        page::PageId,
        people::Outcome,
        token::PageToken,
    },
    store::now_ms,
    util::dates::format_utc,
};

/// Query of `GET /inbox`.
#[derive(Debug, Default, Deserialize)]
pub struct InboxQuery {
    page: Option<u32>,
}

/// `GET /inbox`: the person's asks; the sign-in form for anyone not signed in.
///
/// # Errors
/// Database failures.
pub async fn show_inbox(
    State(state): State<AppState>,
    session: Session,
    Query(query): Query<InboxQuery>,
) -> Result<Response, AppError> {
    let Some(email) = signed_in_person(&state, Some(&session)).await else {
        return Ok(Redirect::to("/sign-in?next=%2Finbox").into_response());
    };
    let page = query.page.unwrap_or(1).max(1);
    let offset = i64::from(page - 1) * INBOX_PAGE_SIZE;
    let mut entries = state
        .store
        .inbox(&email, now_ms(), INBOX_PAGE_SIZE + 1, offset)
        .await
        .map_err(|error| AppError::Unexpected(error.into()))?;
    let more = entries.len() > usize::try_from(INBOX_PAGE_SIZE).unwrap_or(usize::MAX);
    entries.truncate(usize::try_from(INBOX_PAGE_SIZE).unwrap_or(usize::MAX));
    let rows: Vec<InboxRow> = entries.iter().map(row_of).collect();
    Ok(
        html_document(&state, StatusCode::OK, "Your inbox · Tessera", move || {
            inbox_page(&email, rows, page, more)
        })
        .await,
    )
}

/// `POST /inbox/{page}/answer`: a fresh link of the person's own to that ask; the one in their
/// mail keeps working.
///
/// # Errors
/// Database failures.
pub async fn answer(
    State(state): State<AppState>,
    session: Session,
    Path(page_id): Path<String>,
) -> Result<Response, AppError> {
    let Some(email) = signed_in_person(&state, Some(&session)).await else {
        return Ok(Redirect::to("/sign-in?next=%2Finbox").into_response());
    };
    let Ok(page_id) = uuid::Uuid::parse_str(&page_id).map(PageId) else {
        return Ok(Redirect::to("/inbox").into_response());
    };
    let unexpected = |error: crate::store::StoreError| AppError::Unexpected(error.into());
    let Some(position) = state
        .store
        .assignee_position(page_id, &email)
        .await
        .map_err(unexpected)?
    else {
        // Not theirs: the inbox again, saying nothing about the page.
        return Ok(Redirect::to("/inbox").into_response());
    };
    let token = PageToken::generate();
    let given = state
        .store
        .add_assignee_link(page_id, position, &token.hash(), now_ms())
        .await
        .map_err(unexpected)?;
    if !given {
        // Answered or settled meanwhile: the inbox shows where it stands.
        return Ok(Redirect::to("/inbox").into_response());
    }
    Ok(Redirect::to(&format!("/p/{}", token.as_str())).into_response())
}

/// One line of the inbox, in the words the page shows.
fn row_of(entry: &InboxEntry) -> InboxRow {
    let status = match entry.state {
        InboxState::Open => "Waiting for your answer".to_owned(),
        InboxState::Answered {
            outcome: Outcome::Submitted,
            at_ms,
        } => format!("You answered on {}", format_utc(at_ms)),
        InboxState::Answered {
            outcome: Outcome::Declined,
            at_ms,
        } => format!("You declined on {}", format_utc(at_ms)),
        InboxState::Decided => "Decided by others".to_owned(),
        InboxState::Expired => "Expired without your answer".to_owned(),
        InboxState::Withdrawn => "Withdrawn".to_owned(),
    };
    InboxRow {
        page_id: entry.page_id.to_string(),
        title: entry.title(),
        asked_by: match entry.workflow.as_deref() {
            // `POST /api/asks` and MCP asks run the `ask` workflow: it says nothing more.
            Some("ask") | None => String::new(),
            Some(workflow) => format!(" by the {workflow} workflow"),
        },
        asked_at: format_utc(entry.created_at_ms),
        deadline: format_utc(entry.expires_at_ms),
        status,
        open: entry.state == InboxState::Open,
    }
}
