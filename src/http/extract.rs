//! Our own body extractors, so a body that cannot be read is answered like every other error.
//!
//! axum's `Json` and `Form` reject with plain text; these wrap them and reject with
//! [`AppError`], whose body is the JSON error shape `{"error": {"code", "message"}}` (413 for a
//! body over the limit, else 400 `invalid_body`). Handlers take these, never axum's own.

use axum::{
    extract::{
        rejection::{BytesRejection, FormRejection, JsonRejection},
        FromRequest, Request,
    },
    response::{IntoResponse, Response},
};
use http::StatusCode;
use serde::{de::DeserializeOwned, Serialize};

use super::error::AppError;

/// A JSON body read into `T`, or a JSON answer written from `T`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Json<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Json<T> {
    type Rejection = AppError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(request, state).await {
            Ok(axum::Json(value)) => Ok(Self(value)),
            Err(rejection) => Err(AppError::from(rejection)),
        }
    }
}

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        axum::Json(self.0).into_response()
    }
}

/// A URL-encoded form body read into `T`, for forms whose fields are fixed (a field a form may
/// leave out is `#[serde(default)]`). Forms with repeated or dynamic fields (generated pages,
/// approvals) read the raw pairs with `forms::raw_values` instead.
#[derive(Clone, Copy, Debug, Default)]
pub struct Form<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Form<T> {
    type Rejection = AppError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Form::<T>::from_request(request, state).await {
            Ok(axum::Form(value)) => Ok(Self(value)),
            Err(rejection) => Err(AppError::from(rejection)),
        }
    }
}

impl From<JsonRejection> for AppError {
    fn from(rejection: JsonRejection) -> Self {
        body_error(rejection.status(), rejection.body_text())
    }
}

impl From<FormRejection> for AppError {
    fn from(rejection: FormRejection) -> Self {
        body_error(rejection.status(), rejection.body_text())
    }
}

impl From<BytesRejection> for AppError {
    fn from(rejection: BytesRejection) -> Self {
        body_error(rejection.status(), rejection.body_text())
    }
}

fn body_error(status: StatusCode, message: String) -> AppError {
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        AppError::TooLarge
    } else {
        AppError::BadRequest {
            code: "invalid_body",
            message,
            field: None,
        }
    }
}
