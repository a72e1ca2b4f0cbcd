//! Liveness, readiness and a token-protected status document.

use std::collections::BTreeMap;

use axum::{extract::State, Json};
use http::StatusCode;
use serde::Serialize;
use serde_json::{json, Value};
use utoipa::ToSchema;

use super::{error::AppError, AppState};

/// `GET /healthz`: the process is up.
pub async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok", "version": crate::VERSION }))
}

/// `GET /readyz`: the database answers; 503 when it does not.
pub async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Value>) {
    match state.store.ping().await {
        Ok(()) => (
            StatusCode::OK,
            Json(json!({ "status": "ready", "database": state.store.engine() })),
        ),
        Err(error) => {
            tracing::warn!(error = %error, "readiness check failed");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({ "status": "unavailable", "database": state.store.engine() })),
            )
        }
    }
}

/// The body of `GET /api/status`.
#[derive(Debug, Serialize, ToSchema)]
pub struct StatusBody {
    /// The server's version.
    pub version: &'static str,
    /// `sqlite` or `postgres`.
    #[schema(example = "sqlite")]
    pub database: &'static str,
    /// The configured model (`heuristic` for the offline one).
    pub model: String,
    /// How many runs are in each status (statuses with none are absent).
    pub runs: BTreeMap<String, i64>,
}

/// `GET /api/status`: version, engine, model and runs by status (needs the API token).
///
/// # Errors
/// Database failures become a generic 500.
#[utoipa::path(
    get,
    path = "/api/status",
    tag = "status",
    responses((status = 200, description = "The server's version, store, model and runs by status.", body = StatusBody)),
)]
pub async fn status(State(state): State<AppState>) -> Result<Json<StatusBody>, AppError> {
    let runs = state.store.count_runs_by_status().await?;
    Ok(Json(StatusBody {
        version: crate::VERSION,
        database: state.store.engine(),
        model: state.config.model.clone(),
        runs: runs
            .into_iter()
            .map(|(status, count)| (status.as_str().to_owned(), count))
            .collect(),
    }))
}
