//! The asks API (see `crate::asks`): create an ask, read it, and manage it — cancel, extend
//! its link, get a fresh link.

use axum::{
    body::Bytes,
    extract::{rejection::BytesRejection, Path, State},
    Json,
};
use http::StatusCode;
use serde_json::Value;

use super::{error::AppError, AppState};
use crate::{
    asks::{
        ask_status, cancel_ask, create_ask, extend_ask, parse_extension, reissue_ask,
        AskCapabilities, AskError, AskRequest, AskView, NewAsk, LINK_WAIT,
    },
    workflow::Runner,
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
            AskError::Conflict(message) => Self::Conflict {
                code: "ask_closed",
                message,
            },
            AskError::Unexpected(error) => Self::Unexpected(error),
        }
    }
}

fn capabilities(state: &AppState) -> AskCapabilities {
    AskCapabilities::of(&state.config.notify, &state.config.outbound_allow)
        .with_groups(state.config.groups.clone())
}

fn runner(state: &AppState) -> Result<&Runner, AppError> {
    state
        .runner()
        .ok_or_else(|| AppError::Unexpected(anyhow::anyhow!("no workflow runner is configured")))
}

/// The body as JSON: 400 when it is not, 413 when it is over the size limit.
fn json_body(body: Result<Bytes, BytesRejection>) -> Result<AskRequest, AppError> {
    let body = body.map_err(AppError::from)?;
    let request: Value = serde_json::from_slice(&body).map_err(|error| AppError::BadRequest {
        code: "invalid_body",
        message: format!("the body is not JSON: {error}"),
        field: None,
    })?;
    Ok(AskRequest(request))
}

/// `POST /api/asks`: `{prompt, schema?, data?, expires_in?, notify?, callback_url?}` → 201
/// `{id, link, status}`. The link is in this answer only (only its hash is stored); it is
/// null when the page took longer than 20 s — get one with `POST /api/asks/{id}/reissue`.
///
/// # Errors
/// 400 for a body that is not JSON, 413 for one over the size limit, 422 naming the field at
/// fault for anything else wrong (see `crate::asks::request`), a callback or webhook that does
/// not reach a public address included (`crate::asks::destinations`).
/// A body not labelled `application/json` never gets here: the `/api/*` guard answers 415
/// (`api_token.rs`).
pub async fn create_ask_api(
    State(state): State<AppState>,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<AskView>), AppError> {
    let can = capabilities(&state);
    let ask = NewAsk::parse(json_body(body)?, &can)?;
    ask.check_destinations(&can).await?;
    let view = create_ask(runner(&state)?, &state.config.public_url, ask, LINK_WAIT).await?;
    Ok((StatusCode::CREATED, Json(view)))
}

/// `GET /api/asks/{id}`: status, expiry, the typed response once submitted, the callback's
/// delivery (never the link).
///
/// # Errors
/// 404 for an unknown id.
pub async fn show_ask_api(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<AskView>, AppError> {
    Ok(Json(ask_status(&state.store, &id).await?))
}

/// `POST /api/asks/{id}/cancel`: the ask ends cancelled (its callback says so).
///
/// # Errors
/// 404 for an unknown id; 409 when it is already answered, expired or cancelled.
pub async fn cancel_ask_api(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<AskView>, AppError> {
    Ok(Json(cancel_ask(runner(&state)?, &id).await?))
}

/// `POST /api/asks/{id}/extend`: `{"expires_in": seconds}` → the link expires that long from
/// now, and the ask waits as long.
///
/// # Errors
/// 404 for an unknown id; 409 when it no longer waits; 422 for a bad `expires_in`.
pub async fn extend_ask_api(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<AskView>, AppError> {
    let expires_in = parse_extension(json_body(body)?)?;
    Ok(Json(extend_ask(&state.store, &id, expires_in).await?))
}

/// `POST /api/asks/{id}/reissue`: a fresh link, in this answer only; any link sent earlier
/// stops working. For an ask with assignees, fresh `links` for everyone who has not answered,
/// or with `{"assignee": "…"}` for that one person.
///
/// # Errors
/// 404 for an unknown id; 409 when it no longer waits (or the person answered); 422 for an
/// assignee the ask is not for.
pub async fn reissue_ask_api(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<AskView>, AppError> {
    let request = optional_json_body(body)?;
    let public_url = &state.config.public_url;
    Ok(Json(
        reissue_ask(&state.store, public_url, &id, request).await?,
    ))
}

/// The body as JSON when there is one: an empty body is `None`.
fn optional_json_body(body: Result<Bytes, BytesRejection>) -> Result<Option<AskRequest>, AppError> {
    match body {
        Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => Ok(None),
        other => json_body(other).map(Some),
    }
}
