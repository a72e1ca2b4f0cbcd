//! Liveness, readiness and a token-protected status document.

use axum::{extract::State, Json};
use http::StatusCode;
use serde_json::{json, Value};

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

/// `GET /api/status`: version, engine, model and runs by status (needs the API token).
///
/// # Errors
/// Database failures become a generic 500.
pub async fn status(State(state): State<AppState>) -> Result<Json<Value>, AppError> {
    let runs = state.store.count_runs_by_status().await?;
    let runs: serde_json::Map<String, Value> = runs
        .into_iter()
        .map(|(status, count)| (status.as_str().to_owned(), json!(count)))
        .collect();
    Ok(Json(json!({
        "version": crate::VERSION,
        "database": state.store.engine(),
        "model": state.config.model,
        "runs": runs,
    })))
}
