//! `GET/POST /p/{token}`: the single-use page links people open — a page's one link, or one
//! assignee's own (the page then says whom it is for, and once the request is decided, by whom).
//!
//! Statuses: 200 page or receipt, 303 after a recorded submission, 403 cross-site or wrong CSRF
//! token, 404 unknown link, 409 already submitted (with the receipt), 410 expired or withdrawn
//! (or answered longer ago than receipts are kept, `TESSERA_RECEIPT_LIFETIME_SECS`), 422 wrong
//! values (the page again with the person's values). Error pages never say whether any
//! other link exists.

use std::collections::BTreeMap;

use axum::{
    body::Bytes,
    extract::{Path, Query, State},
    response::{IntoResponse, Redirect, Response},
};
use http::{header, HeaderValue, StatusCode};
use tessera_app::{
    access::{sign_in_gate, GateForm},
    answer::{answer_page, receipt_page},
    components::{download::download_for_node, paging::state_query},
    not_found::error_page as app_error_page,
    render::{render_tree, FormState, RenderCtx},
    tree::PageTree,
};
use tower_sessions::Session;

use super::{
    error::AppError,
    render::{attachment, html_document},
    sign_in::signed_in_person,
    AppState,
};
use crate::{
    forms::pairs,
    pages::{
        lifecycle::{open_page, submit_page, Admission, Link, Opened, Submitted},
        page::{Page, PageStatus},
        people::{Assignee, Outcome},
        receipt::link_receipt_tree,
        render_ctx::page_render_ctx,
    },
    store::now_ms,
    workflow::Runner,
};

/// `GET /p/{token}`.
///
/// # Errors
/// Database failures (a generic 500 page).
pub async fn show_page(
    State(state): State<AppState>,
    session: Session,
    Path(token): Path<String>,
    Query(query): Query<BTreeMap<String, String>>,
) -> Result<Response, AppError> {
    Ok(match open_page(&state.store, &token, now_ms(), receipt_lifetime(&state)).await? {
        Opened::Open(link) => match link.admits(signed_in_person(&state, Some(&session)).await.as_deref()) {
            Admission::Admitted => render_open(&state, &token, &link, FormState::default(), query, StatusCode::OK).await,
            refused => not_admitted(&state, &token, refused).await,
        },
        Opened::Receipt(link) => {
            let heading = if link.holder.as_ref().is_some_and(|holder| holder.answer.is_none()) { "This request was already decided" } else { "Your answer was received" };
            render_receipt(&state, &link, StatusCode::OK, heading).await
        }
        Opened::ReceiptExpired => gone(&state, "This link has expired", "Your answer was recorded. Its receipt is no longer kept at this link; ask the sender if you need it.").await,
        Opened::Expired => gone(&state, "This link has expired", "The request it belonged to is no longer waiting for an answer. Ask the sender for a new link.").await,
        Opened::Revoked => gone(&state, "This link was withdrawn", "The sender withdrew this request. Ask them for a new link if you still need to answer.").await,
        Opened::NotFound => unknown_link(&state).await,
    })
}

/// `POST /p/{token}`.
///
/// # Errors
/// Database failures (a generic 500 page; nothing was recorded, the person can send again).
pub async fn submit(
    State(state): State<AppState>,
    session: Session,
    Path(token): Path<String>,
    body: Bytes,
) -> Result<Response, AppError> {
    // A page that wants its assignee signed in takes no answer from anyone else.
    if let Opened::Open(link) =
        open_page(&state.store, &token, now_ms(), receipt_lifetime(&state)).await?
    {
        let admission = link.admits(signed_in_person(&state, Some(&session)).await.as_deref());
        if admission != Admission::Admitted {
            let mut response = not_admitted(&state, &token, admission).await;
            *response.status_mut() = StatusCode::FORBIDDEN;
            return Ok(response);
        }
    }
    // A page shown again keeps its tables' search, sort and page.
    let table_state = state_query(&pairs(&body));
    let catalog_for = |page: &Page| state.catalog_for_page(page);
    let outcome = submit_page(
        &state.store,
        &state.csrf,
        &catalog_for,
        &token,
        &body,
        now_ms(),
        receipt_lifetime(&state),
    )
    .await
    .map_err(|error| AppError::Unexpected(error.into()))?;
    if let Submitted::Accepted(link) = &outcome {
        // Settled by this answer (a page with assignees may still wait for the others).
        if link.page.run_id.is_some() && link.page.status == PageStatus::Submitted {
            // The run is ready now: resume it without waiting for a worker's next poll (other
            // processes hear the submission's NOTIFY on PostgreSQL).
            state.runner().map(Runner::wake);
        }
    }
    Ok(submitted_response(&state, &token, outcome, table_state).await)
}

/// The answer to a page submission, by what the submission did.
async fn submitted_response(
    state: &AppState,
    token: &str,
    outcome: Submitted,
    table_state: BTreeMap<String, String>,
) -> Response {
    match outcome {
        Submitted::Accepted(_) => Redirect::to(&format!("/p/{token}/done")).into_response(),
        Submitted::Invalid(link, form) => render_open(state, token, &link, form, table_state, StatusCode::UNPROCESSABLE_ENTITY).await,
        Submitted::Navigated(link, form, query) => render_open(state, token, &link, form, query, StatusCode::OK).await,
        Submitted::AlreadySubmitted(link) => {
            let heading = if link.holder.as_ref().is_some_and(|holder| holder.answer.is_none()) { "This request was already decided" } else { "This link was already used" };
            render_receipt(state, &link, StatusCode::CONFLICT, heading).await
        }
        Submitted::Forbidden => forbidden(state).await,
        Submitted::NoForm => error_page(state, StatusCode::METHOD_NOT_ALLOWED, "Nothing to submit", "This page only shows information; it takes no answer.").await,
        Submitted::Expired => gone(state, "This link has expired", "Your answer was not recorded because the request is no longer waiting. Ask the sender for a new link.").await,
        Submitted::Revoked => gone(state, "This link was withdrawn", "Your answer was not recorded because the sender withdrew the request.").await,
        Submitted::NotFound => unknown_link(state).await,
    }
}

/// `GET /p/{token}/done`: the confirmation after a recorded submission.
///
/// # Errors
/// Database failures.
pub async fn confirmation(
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> Result<Response, AppError> {
    Ok(
        match open_page(&state.store, &token, now_ms(), receipt_lifetime(&state)).await? {
            Opened::Receipt(link) => {
                let heading = "Thank you — your answer was received";
                render_receipt(&state, &link, StatusCode::OK, heading).await
            }
            Opened::Open(_) | Opened::ReceiptExpired => {
                Redirect::to(&format!("/p/{token}")).into_response()
            }
            Opened::Expired | Opened::Revoked | Opened::NotFound => unknown_link(&state).await,
        },
    )
}

/// `GET /p/{token}/download/{file}`: a `DownloadLink`'s file, built from the page's data snapshot.
///
/// # Errors
/// Database failures.
pub async fn download(
    State(state): State<AppState>,
    Path((token, file)): Path<(String, String)>,
) -> Result<Response, AppError> {
    let page = match open_page(&state.store, &token, now_ms(), receipt_lifetime(&state)).await? {
        Opened::Open(link) | Opened::Receipt(link) => link.page,
        Opened::Expired | Opened::ReceiptExpired | Opened::Revoked | Opened::NotFound => {
            return Ok(unknown_link(&state).await)
        }
    };
    let tree = serde_json::from_value::<PageTree>(page.tree).ok();
    let Some(file) = tree.and_then(|tree| download_for_node(&tree, &page.data, &file)) else {
        return Ok(unknown_link(&state).await);
    };
    let mut response = attachment(file);
    // The file holds the page's data, personal like the page itself.
    let no_store = HeaderValue::from_static("no-store");
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, no_store);
    Ok(response)
}

/// The page for someone a `sign_in: "required"` link does not admit: the sign-in form for its
/// assignee, coming back here afterwards, or a 403 naming who is signed in.
async fn not_admitted(state: &AppState, token: &str, admission: Admission) -> Response {
    let (status, heading, message, email) = match admission {
        Admission::SomeoneElse { holder, signed_in } => (
            StatusCode::FORBIDDEN,
            "This request is for someone else",
            format!("You are signed in as {signed_in}, but this request is for {holder}. Sign out, then sign in as {holder} to answer it."),
            holder,
        ),
        Admission::SignInFirst(email) => (
            StatusCode::OK,
            "Sign in to answer",
            format!("This request is for {email}, who must sign in before answering. We e-mail you a link that signs you in and brings you back here."),
            email,
        ),
        Admission::Admitted => (StatusCode::OK, "Sign in to answer", String::new(), String::new()),
    };
    let form = (status == StatusCode::OK).then(|| GateForm {
        next: format!("/p/{token}"),
        email,
    });
    html_document(state, status, &format!("{heading} · Tessera"), move || {
        sign_in_gate(heading, message, form)
    })
    .await
}

/// How long a submitted page's receipt and downloads stay readable.
fn receipt_lifetime(state: &AppState) -> std::time::Duration {
    state.config.access.receipt_lifetime
}

async fn render_open(
    state: &AppState,
    token: &str,
    link: &Link,
    form: FormState,
    query: BTreeMap<String, String>,
    status: StatusCode,
) -> Response {
    let page = &link.page;
    let Ok(tree) = serde_json::from_value::<PageTree>(page.tree.clone()) else {
        return error_page(
            state,
            StatusCode::INTERNAL_SERVER_ERROR,
            "This page cannot be shown",
            "Its stored layout is damaged. The sender has been told nothing; please contact them.",
        )
        .await;
    };
    let catalog = match state.catalog_for_page(page) {
        Ok(catalog) => catalog,
        Err(unknown) => {
            tracing::error!(page.id = %page.id, component.name = %unknown.name, component.hash = %unknown.hash, "page cannot be shown: {unknown}");
            return error_page(
                state,
                StatusCode::INTERNAL_SERVER_ERROR,
                "This page cannot be shown",
                "It was made with components this server no longer has. Nothing was recorded; please ask the sender for a new link.",
            )
            .await;
        }
    };
    let mut ctx = page_render_ctx(page, &tree, catalog, form, query);
    ctx.action = Some(format!("/p/{token}"));
    ctx.csrf_token = Some(state.csrf.token_for(page.id));
    ctx.download_base = Some(format!("/p/{token}/download"));
    let addressed = link
        .holder
        .as_ref()
        .map(|holder| addressee_line(holder, link));
    html_document(
        state,
        status,
        "Your answer is requested · Tessera",
        move || answer_page(addressed, render_tree(&tree, &ctx)),
    )
    .await
}

/// The line that says whom a link is for, and how many approvals settle the request.
fn addressee_line(holder: &Assignee, link: &Link) -> String {
    let required = link.page.approvals_required.unwrap_or(1);
    let asked = link.people.len();
    let approved = link
        .answers()
        .iter()
        .filter(|answer| answer.outcome == Outcome::Submitted)
        .count();
    format!(
        "For {}. {required} of the {asked} people asked must approve; {approved} have so far.",
        holder.email
    )
}

async fn render_receipt(
    state: &AppState,
    link: &Link,
    status: StatusCode,
    heading: &str,
) -> Response {
    let tree = link_receipt_tree(link, heading);
    let ctx = RenderCtx::new(serde_json::Value::Null);
    html_document(state, status, "Answer received · Tessera", move || {
        receipt_page(render_tree(&tree, &ctx))
    })
    .await
}

async fn gone(state: &AppState, heading: &'static str, message: &'static str) -> Response {
    error_page(state, StatusCode::GONE, heading, message).await
}

async fn unknown_link(state: &AppState) -> Response {
    error_page(state, StatusCode::NOT_FOUND, "This link is not valid", "Check that you copied the whole link. Links are single-use and only the sender can issue a new one.").await
}

/// The 403 page for a page form posted from another site (`same_origin.rs`).
pub(super) async fn forbidden(state: &AppState) -> Response {
    error_page(
        state,
        StatusCode::FORBIDDEN,
        "This form could not be accepted",
        "It was not sent from its own page. Open the link you were sent and submit it from there.",
    )
    .await
}

async fn error_page(
    state: &AppState,
    status: StatusCode,
    heading: &'static str,
    message: &'static str,
) -> Response {
    html_document(state, status, &format!("{heading} · Tessera"), move || {
        app_error_page(status.as_u16(), heading.to_owned(), message.to_owned())
    })
    .await
}
