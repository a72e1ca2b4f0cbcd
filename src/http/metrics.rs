//! `GET /metrics` (Prometheus text exposition) and the middleware that times every request.
//!
//! `/metrics` is open, like `/healthz`: it shows aggregate counts and latencies only (route
//! templates, never raw paths or tokens; no ids, names or answers), and Prometheus scrapes it
//! without credentials. Deployments that must hide even those figures keep it off the public
//! listener (a reverse proxy that does not route `/metrics`).

use std::time::Instant;

use axum::{
    extract::{MatchedPath, Request, State},
    middleware::Next,
    response::{IntoResponse, Response},
};
use http::header;

use super::{error::AppError, AppState};
use crate::{telemetry::metrics::render, workflow::Runner};

/// Times a request and counts it under its route template and status class.
pub async fn track_requests(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |path| path.as_str().to_owned());
    let method = request.method().clone();
    let started = Instant::now();
    let response = next.run(request).await;
    state.metrics().observe_request(
        method.as_str(),
        &route,
        response.status().as_u16(),
        started.elapsed(),
    );
    response
}

/// `GET /metrics`.
///
/// # Errors
/// Database failures (a generic 500).
pub async fn show_metrics(State(state): State<AppState>) -> Result<Response, AppError> {
    let figures = state.store.metrics_figures().await?;
    let text = render(state.metrics(), state.runner().map(Runner::stats), &figures);
    Ok((
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response())
}
