//! `POST /api/asks` and `GET /api/asks/{id}`: ask a person from any system (see `crate::asks`).

use axum::{
    body::Bytes,
    extract::{rejection::BytesRejection, Path, State},
    Json,
};
use http::StatusCode;
use serde_json::Value;

use super::{error::AppError, AppState};
use crate::asks::{
    ask_status, create_ask, AskCapabilities, AskError, AskRequest, AskView, NewAsk, LINK_WAIT,
};

impl From<AskError> for AppError {
    fn from(error: AskError) -> Self {
        match error {
            AskError::Invalid { field, message } => Self::Unprocessable {
                code: "invalid_ask",
                message: format!("{field}: {message}"),
                field: Some(field),
            },
            AskError::NotFound => Self::NotFound,
            AskError::Unexpected(error) => Self::Unexpected(error),
        }
    }
}

fn capabilities(state: &AppState) -> AskCapabilities {
    let notify = &state.config.notify;
    AskCapabilities {
        notify: notify.ntfy.is_some() || notify.webhook_url.is_some() || notify.email.is_some(),
        callbacks: notify.webhook_secret.is_some(),
    }
}

/// `POST /api/asks`: `{prompt, schema?, data?, expires_in?, notify?, callback_url?}` → 201
/// `{id, link, status}` (`link` is null and `status` `pending` when the page took longer than
/// 20 s; read it from `GET /api/asks/{id}`).
///
/// # Errors
/// 400 for a body that is not JSON, 413 for one over the size limit, 422 naming the field at
/// fault for anything else wrong (see `crate::asks::request`).
pub async fn create_ask_api(
    State(state): State<AppState>,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<AskView>), AppError> {
    let body = body.map_err(|rejection| AppError::from_body_rejection(&rejection))?;
    let request: Value = serde_json::from_slice(&body).map_err(|error| AppError::BadRequest {
        code: "invalid_body",
        message: format!("the body is not JSON: {error}"),
        field: None,
    })?;
    let ask = NewAsk::parse(AskRequest(request), capabilities(&state))?;
    let runner = state
        .runner()
        .ok_or_else(|| AppError::Unexpected(anyhow::anyhow!("no workflow runner is configured")))?;
    let view = create_ask(runner, ask, LINK_WAIT).await?;
    Ok((StatusCode::CREATED, Json(view)))
}

/// `GET /api/asks/{id}`: status, the link while open, the typed response once submitted, the
/// callback's delivery.
///
/// # Errors
/// 404 for an unknown id.
pub async fn show_ask_api(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<AskView>, AppError> {
    Ok(Json(ask_status(&state.store, &id).await?))
}
