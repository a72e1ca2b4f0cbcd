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
use leptos::prelude::*;
use serde::Deserialize;
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
    let rows: Vec<Row> = entries.iter().map(Row::of).collect();
    Ok(
        html_document(&state, StatusCode::OK, "Your inbox · Tessera", move || {
            view! { <InboxView email rows page more/> }.into_any()
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

/// One line of the inbox, as shown.
#[derive(Clone, Debug)]
struct Row {
    page_id: String,
    title: String,
    asked_by: String,
    asked_at: String,
    deadline: String,
    status: String,
    open: bool,
}

impl Row {
    fn of(entry: &InboxEntry) -> Self {
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
        Self {
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
}

#[component]
fn InboxView(email: String, rows: Vec<Row>, page: u32, more: bool) -> impl IntoView {
    let empty = rows.is_empty();
    view! {
        <section class="space-y-4" aria-labelledby="inbox-title">
            <h1 id="inbox-title" class="text-2xl font-bold">"Your inbox"</h1>
            <p class="text-slate-700 dark:text-slate-300">{format!("Requests for {email}, the ones waiting for you first.")}</p>
            {empty.then(|| view! { <p data-testid="inbox-empty">"Nothing has been asked of you."</p> })}
            <ul class="space-y-3" data-testid="inbox">
                {rows.into_iter().map(|row| view! {
                    <li class="rounded-lg border border-slate-200 bg-white p-4 shadow-sm dark:bg-slate-800 dark:border-slate-700" data-testid="inbox-item" data-open=row.open.to_string()>
                        <h2 class="font-semibold">{row.title}</h2>
                        <p class="text-sm text-slate-700 dark:text-slate-300">
                            {format!("Asked{} on {}", row.asked_by, row.asked_at)}
                            {row.open.then(|| format!(" · answer by {}", row.deadline))}
                        </p>
                        <p class="mt-1 text-sm font-medium" data-testid="inbox-status">{row.status}</p>
                        {row.open.then(|| {
                            let action = format!("/inbox/{}/answer", row.page_id);
                            view! {
                                <form method="post" action=action class="mt-2">
                                    <button type="submit" data-testid="inbox-answer" class="rounded-md bg-indigo-700 px-3 py-1 font-semibold text-white hover:bg-indigo-800 focus:outline-none focus:ring-2 focus:ring-indigo-500">"Answer"</button>
                                </form>
                            }
                        })}
                    </li>
                }).collect_view()}
            </ul>
            <nav aria-label="Inbox pages" class="flex gap-4">
                {(page > 1).then(|| view! { <a href=format!("/inbox?page={}", page - 1) class="text-indigo-700 underline dark:text-indigo-300">"Previous page"</a> })}
                {more.then(|| view! { <a href=format!("/inbox?page={}", page + 1) data-testid="inbox-next" class="text-indigo-700 underline dark:text-indigo-300">"Next page"</a> })}
            </nav>
        </section>
    }
}
