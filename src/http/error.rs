//! `AppError`: the one error type of the HTTP edge, and its mapping to statuses and bodies.
//!
//! 5xx bodies are generic; the cause is logged once here, with the request's span.

use axum::{
    response::{IntoResponse, Response},
    Json,
};
use http::StatusCode;
use serde_json::json;

use crate::store::StoreError;

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
        let mut body = json!({ "error": { "code": code, "message": message } });
        if let Some(field) = field {
            body["error"]["field"] = json!(field);
        }
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
