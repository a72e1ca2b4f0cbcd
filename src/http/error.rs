//! `AppError`: the one error type of the HTTP edge, and its mapping to statuses and bodies.
//!
//! 5xx bodies are generic; the cause is logged once here, with the request's span.

use axum::{
    response::{IntoResponse, Response},
    Json,
};
use http::StatusCode;
use serde::Serialize;
use utoipa::ToSchema;

use crate::store::StoreError;

/// The body of every JSON error: `{"error": {"code", "message", "field"?}}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// What went wrong.
    pub error: ErrorDetail,
}

/// What went wrong, inside [`ErrorBody`].
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable machine-readable code, e.g. `not_found`, `invalid_ask`, `unauthorized`.
    pub code: String,
    /// What is wrong, for a person.
    pub message: String,
    /// The offending field, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// Everything a JSON handler can fail with.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The caller sent something we cannot accept.
    #[error("{message}")]
    BadRequest {
        /// Stable machine-readable code.
        code: &'static str,
        /// What is wrong, for a person.
        message: String,
        /// The offending field, when there is one.
        field: Option<String>,
    },
    /// The request is well-formed but a field's value cannot be accepted (422).
    #[error("{message}")]
    Unprocessable {
        /// Stable machine-readable code.
        code: &'static str,
        /// What is wrong, for a person.
        message: String,
        /// The offending field, when there is one.
        field: Option<String>,
    },
    /// The resource is no longer in a state that allows this (409), e.g. an ask already
    /// answered.
    #[error("{message}")]
    Conflict {
        /// Stable machine-readable code.
        code: &'static str,
        /// What is in the way, for a person.
        message: String,
    },
    /// The caller may not do this, whoever they are (403), e.g. a form posted from another site.
    #[error("{message}")]
    Forbidden {
        /// Stable machine-readable code.
        code: &'static str,
        /// Why not, for a person.
        message: String,
    },
    /// The resource existed but is gone for good (410), e.g. a revoked link.
    #[error("{message}")]
    Gone {
        /// Stable machine-readable code.
        code: &'static str,
        /// What is gone, for a person.
        message: String,
    },
    /// The server cannot answer this now, e.g. a render past its deadline (503).
    #[error("{message}")]
    Unavailable {
        /// Stable machine-readable code.
        code: &'static str,
        /// What happened, for a person.
        message: String,
    },
    /// The body is larger than the server accepts (413).
    #[error("the request body is larger than this server accepts (TESSERA_BODY_LIMIT)")]
    TooLarge,
    /// The body is not labelled JSON (415): `/api/*` bodies need `Content-Type: application/json`.
    #[error("send the body as JSON, with Content-Type: application/json")]
    UnsupportedMediaType,
    /// Missing or wrong credentials.
    #[error("a valid API token is required")]
    Unauthorized,
    /// No such resource.
    #[error("not found")]
    NotFound,
    /// Our fault; details go to the log, not the response.
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

impl From<StoreError> for AppError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound => Self::NotFound,
            // A unique key already taken or a state precondition that no longer holds: the
            // caller's request collides with what is stored, not our failure.
            StoreError::Conflict(message) => Self::Conflict {
                code: "conflict",
                message,
            },
            other => Self::Unexpected(other.into()),
        }
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let (status, code, message, field) = match &self {
            Self::BadRequest {
                code,
                message,
                field,
            } => (
                StatusCode::BAD_REQUEST,
                *code,
                message.clone(),
                field.clone(),
            ),
            Self::Unprocessable {
                code,
                message,
                field,
            } => (
                StatusCode::UNPROCESSABLE_ENTITY,
                *code,
                message.clone(),
                field.clone(),
            ),
            Self::Conflict { code, message } => {
                (StatusCode::CONFLICT, *code, message.clone(), None)
            }
            Self::Forbidden { code, message } => {
                (StatusCode::FORBIDDEN, *code, message.clone(), None)
            }
            Self::Gone { code, message } => (StatusCode::GONE, *code, message.clone(), None),
            Self::Unavailable { code, message } => (
                StatusCode::SERVICE_UNAVAILABLE,
                *code,
                message.clone(),
                None,
            ),
            Self::TooLarge => (
                StatusCode::PAYLOAD_TOO_LARGE,
                "body_too_large",
                self.to_string(),
                None,
            ),
            Self::UnsupportedMediaType => (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                self.to_string(),
                None,
            ),
            Self::Unauthorized => (
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                self.to_string(),
                None,
            ),
            Self::NotFound => (StatusCode::NOT_FOUND, "not_found", self.to_string(), None),
            Self::Unexpected(error) => {
                tracing::error!(error = format!("{error:#}"), "request failed");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "something went wrong on our side".to_owned(),
                    None,
                )
            }
        };
        let body = ErrorBody {
            error: ErrorDetail {
                code: code.to_owned(),
                message,
                field,
            },
        };
        let mut response = (status, Json(body)).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                http::header::WWW_AUTHENTICATE,
                http::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}

/// Gives `/api/*` callers the JSON error body for a 413 the body-limit layer answered with
/// plain text before any handler ran.
pub async fn api_body_limit_as_json(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let is_api = request.uri().path().starts_with("/api/");
    let response = next.run(request).await;
    let is_json = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"application/json"));
    if is_api && response.status() == StatusCode::PAYLOAD_TOO_LARGE && !is_json {
        AppError::TooLarge.into_response()
    } else {
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_conflict_is_409_with_its_reason() {
        let response =
            AppError::from(StoreError::Conflict("the id is taken".to_owned())).into_response();
        assert_eq!(response.status(), StatusCode::CONFLICT);
        let response = AppError::Gone {
            code: "revoked",
            message: "the link was revoked".to_owned(),
        }
        .into_response();
        assert_eq!(response.status(), StatusCode::GONE);
        let response = AppError::Forbidden {
            code: "cross_site",
            message: "not from this site".to_owned(),
        }
        .into_response();
        assert_eq!(response.status(), StatusCode::FORBIDDEN);
    }
}
