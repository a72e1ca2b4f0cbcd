//! Server-side rendering of whole documents through the `tessera-app` shell.
//!
//! A fresh reactive owner per response keeps renders independent; a fresh nonce per response goes
//! into both the hydration script tags and the `Content-Security-Policy` header, so no other inline
//! script can run.
//!
//! Rendering is CPU work: it runs on the blocking pool, and the answer waits at most
//! [`RENDER_DEADLINE`] (`util::blocking`). What stops the work itself is the render budget
//! (`tessera_app::render::budget`): every tree rendered in the document spends from its budget, a
//! [`BudgetWatch`] hears of an overrun, and the answer is then an error (a 422 page, or a 422
//! JSON body for fragments) naming the limit, never a page cut short.

use axum::response::{Html, IntoResponse, Response};
use http::{HeaderValue, StatusCode};
use leptos::{nonce::Nonce, prelude::*};
use tessera_app::{
    components::download::DownloadFile,
    not_found::error_page,
    render::{BudgetWatch, OverBudget},
    shell::{document_html, ShellOptions},
};

use super::{error::AppError, AppState};
pub use crate::util::blocking::RENDER_DEADLINE;
use crate::util::blocking::{within_deadline, BlockingError};

impl From<OverBudget> for AppError {
    fn from(over: OverBudget) -> Self {
        Self::Unprocessable {
            code: "render_budget",
            message: over.to_string(),
            field: None,
        }
    }
}

impl From<BlockingError> for AppError {
    fn from(error: BlockingError) -> Self {
        match error {
            BlockingError::TimedOut(deadline) => Self::Unavailable {
                code: "render_timeout",
                message: format!(
                    "rendering took longer than {} seconds; try again later",
                    deadline.as_secs()
                ),
            },
            BlockingError::Failed(error) => Self::Unexpected(anyhow::Error::new(error)),
        }
    }
}

/// A generated file as a download: its type, and `attachment` with its name so the browser
/// saves it rather than showing it.
pub fn attachment(file: DownloadFile) -> Response {
    let disposition = format!("attachment; filename=\"{}\"", file.filename);
    (
        [
            (http::header::CONTENT_TYPE, file.content_type.to_owned()),
            (http::header::CONTENT_DISPOSITION, disposition),
        ],
        file.body,
    )
        .into_response()
}

/// Renders `body` inside the document shell, off the async workers, and returns it with
/// `status` and a nonce-bound CSP; a document over its render budget or past the deadline is an
/// error page instead.
pub async fn html_document(
    state: &AppState,
    status: StatusCode,
    title: &str,
    body: impl FnOnce() -> AnyView + Send + 'static,
) -> Response {
    // Boxed, so the shell, the render and the deadline are compiled once here rather than once
    // per page that calls this: an edit to a handler then recompiles only the handler.
    document(state, status, title, Box::new(body)).await
}

async fn document(
    state: &AppState,
    status: StatusCode,
    title: &str,
    body: Box<dyn FnOnce() -> AnyView + Send>,
) -> Response {
    let nonce = Nonce::new();
    let options = ShellOptions {
        leptos: state.site.clone(),
        title: title.to_owned(),
        viewer: super::viewer::current(state).await,
    };
    let document_nonce = nonce.clone();
    let rendered = within_deadline(RENDER_DEADLINE, move || {
        Owner::new().with(|| {
            provide_context(document_nonce);
            let watch = BudgetWatch::provide();
            let html = document_html(options, body());
            watch.overrun().map_or(Ok(html), Err)
        })
    })
    .await;
    match rendered {
        Ok(Ok(html)) => with_policy(status, html, &nonce),
        Ok(Err(over)) => failure_page(
            state,
            StatusCode::UNPROCESSABLE_ENTITY,
            "This page is too large to show",
            over.for_the_person(),
        ),
        Err(BlockingError::TimedOut(deadline)) => {
            tracing::warn!(
                render.deadline_secs = deadline.as_secs(),
                "a page took too long to render"
            );
            failure_page(
                state,
                StatusCode::SERVICE_UNAVAILABLE,
                "This page took too long to show",
                "The server gave up rendering it. Try again in a moment.".to_owned(),
            )
        }
        Err(BlockingError::Failed(error)) => {
            tracing::error!(error = %error, "rendering a page failed");
            failure_page(
                state,
                StatusCode::INTERNAL_SERVER_ERROR,
                "This page cannot be shown",
                "Something went wrong on our side.".to_owned(),
            )
        }
    }
}

/// The small error page for a document that could not be rendered, rendered in place: it is a
/// fixed few hundred bytes, so it needs neither the blocking pool nor a budget.
fn failure_page(
    state: &AppState,
    status: StatusCode,
    heading: &'static str,
    message: String,
) -> Response {
    let nonce = Nonce::new();
    let options = ShellOptions {
        leptos: state.site.clone(),
        title: format!("{heading} · Tessera"),
        viewer: tessera_app::shell::Viewer::Anonymous,
    };
    let html = Owner::new().with(|| {
        provide_context(nonce.clone());
        document_html(
            options,
            error_page(status.as_u16(), heading.to_owned(), message),
        )
    });
    with_policy(status, html, &nonce)
}

fn with_policy(status: StatusCode, html: String, nonce: &Nonce) -> Response {
    let mut response = (status, Html(html)).into_response();
    let policy = format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; style-src 'self'; \
         img-src 'self' data: https: http:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"
    );
    if let Ok(value) = HeaderValue::from_str(&policy) {
        response
            .headers_mut()
            .insert(http::header::CONTENT_SECURITY_POLICY, value);
    }
    response
}

/// Renders a view to an HTML fragment (no document, no headers), e.g. for JSON APIs, off the
/// async workers.
///
/// # Errors
/// A 422 naming the render budget's limit the fragment went over; a 503 past the deadline.
pub async fn fragment_html(
    body: impl FnOnce() -> AnyView + Send + 'static,
) -> Result<String, AppError> {
    let rendered = within_deadline(RENDER_DEADLINE, move || {
        Owner::new().with(|| {
            let watch = BudgetWatch::provide();
            let html = body().to_html();
            watch.overrun().map_or(Ok(html), Err)
        })
    })
    .await?;
    Ok(rendered?)
}
