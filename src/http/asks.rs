//! The asks API (see `crate::asks`): create an ask, read it, and manage it — cancel, extend
//! its link, get a fresh link.

use axum::{
    body::Bytes,
    extract::{rejection::BytesRejection, Path, State},
    Json,
};
use http::StatusCode;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::{
    error::{AppError, ErrorBody},
    AppState,
};
use crate::{
    agent::CachePolicy,
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

/// The body of `POST /api/asks`, for the document: the handler reads it as JSON and
/// `NewAsk::parse` checks it field by field (`crate::asks::request`), naming the field at fault.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[expect(
    dead_code,
    reason = "describes the body NewAsk::parse reads; never built"
)]
pub struct AskBody {
    /// The request to the person: a minijinja template over `data`, 1 to 10,000 characters.
    #[schema(min_length = 1, max_length = 10000)]
    prompt: String,
    /// The response schema (JSON Schema in the form subset); one required free-text field
    /// `answer` when absent.
    schema: Option<Value>,
    /// `true` (without `schema`) for a page with no form.
    display: Option<bool>,
    /// The data shown on the page and the prompt's template variables.
    data: Option<Value>,
    /// Seconds until the link expires (default 7 days).
    #[schema(minimum = 1, maximum = 2_592_000)]
    expires_in: Option<i64>,
    /// `true` for every configured channel, or the ask's own recipients
    /// `{ntfy?: {topic}, email?: [..], webhook?: url}` within the operator's allowlist.
    notify: Option<Value>,
    /// Where the typed answer is posted (needs `TESSERA_WEBHOOK_SECRET`).
    #[schema(format = "uri")]
    callback_url: Option<String>,
    /// The page cache's policy for this ask's page.
    cache: Option<CachePolicy>,
    /// The people who answer, by e-mail address, each with a link of their own.
    assignees: Option<Vec<String>>,
    /// With assignees: `{"required": n}`, how many must approve (default 1).
    approvals: Option<Value>,
    /// `{"reason": "optional" | "required"}`: whether a Decline must say why.
    decline: Option<Value>,
}

/// The body of `POST /api/asks/{id}/extend`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[expect(
    dead_code,
    reason = "describes the body parse_extension reads; never built"
)]
pub struct ExtendBody {
    /// Seconds from now until the link expires.
    #[schema(minimum = 1, maximum = 2_592_000)]
    expires_in: i64,
}

/// The body of `POST /api/asks/{id}/reissue`: none for every link the ask waits on.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[expect(
    dead_code,
    reason = "describes the body parse_reissue reads; never built"
)]
pub struct ReissueBody {
    /// Only this assignee's link.
    assignee: Option<String>,
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
#[utoipa::path(
    post,
    path = "/api/asks",
    tag = "asks",
    request_body = AskBody,
    responses(
        (status = 201, description = "The ask, with its link (null when the page took longer than 20 s).", body = AskView),
        (status = 400, description = "The body is not JSON (`invalid_body`).", body = ErrorBody),
        (status = 422, description = "A field cannot be accepted (`invalid_ask`, naming it in `field`).", body = ErrorBody),
    ),
)]
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
#[utoipa::path(
    get,
    path = "/api/asks/{id}",
    tag = "asks",
    params(("id" = String, Path, description = "The ask's id.")),
    responses(
        (status = 200, description = "The ask (never its link).", body = AskView),
        (status = 404, description = "No such ask.", body = ErrorBody),
    ),
)]
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
#[utoipa::path(
    post,
    path = "/api/asks/{id}/cancel",
    tag = "asks",
    params(("id" = String, Path, description = "The ask's id.")),
    responses(
        (status = 200, description = "The ask, cancelled.", body = AskView),
        (status = 404, description = "No such ask.", body = ErrorBody),
        (status = 409, description = "It no longer waits (`ask_closed`).", body = ErrorBody),
    ),
)]
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
#[utoipa::path(
    post,
    path = "/api/asks/{id}/extend",
    tag = "asks",
    params(("id" = String, Path, description = "The ask's id.")),
    request_body = ExtendBody,
    responses(
        (status = 200, description = "The ask, with its new expiry.", body = AskView),
        (status = 400, description = "The body is not JSON (`invalid_body`).", body = ErrorBody),
        (status = 404, description = "No such ask.", body = ErrorBody),
        (status = 409, description = "It no longer waits (`ask_closed`).", body = ErrorBody),
        (status = 422, description = "A bad `expires_in` (`invalid_ask`).", body = ErrorBody),
    ),
)]
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
#[utoipa::path(
    post,
    path = "/api/asks/{id}/reissue",
    tag = "asks",
    params(("id" = String, Path, description = "The ask's id.")),
    request_body(content = Option<ReissueBody>, description = "Optional: without a body, fresh links for everyone who has not answered."),
    responses(
        (status = 200, description = "The ask with its fresh link (or `links`); earlier ones stop working.", body = AskView),
        (status = 400, description = "The body is not JSON (`invalid_body`).", body = ErrorBody),
        (status = 404, description = "No such ask.", body = ErrorBody),
        (status = 409, description = "It no longer waits, or the person answered (`ask_closed`).", body = ErrorBody),
        (status = 422, description = "An assignee the ask is not for, or an unknown field (`invalid_ask`).", body = ErrorBody),
    ),
)]
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
