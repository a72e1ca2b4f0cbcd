//! Our own body and query extractors, so input that cannot be read is answered like every other
//! error.
//!
//! axum's `Json`, `Form` and `Query` reject with plain text; these wrap them and reject with
//! [`AppError`], whose body is the JSON error shape `{"error": {"code", "message"}}` (413 for a
//! body over the limit, 415 for a JSON body without `Content-Type: application/json`, else 400
//! `invalid_body`, or `invalid_query` for a query string). Handlers take these, never axum's own. [`is_json`] is the one reading of
//! that header, also for the `/api/*` guard (`api_token.rs`), which handlers reading raw bytes
//! (asks, chat) rely on.

use axum::{
    extract::{
        rejection::{BytesRejection, FormRejection, JsonRejection, QueryRejection},
        FromRequest, FromRequestParts, Request,
    },
    response::{IntoResponse, Response},
};
use http::{header, request::Parts, HeaderMap, StatusCode};
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

/// A query string read into `T` (a parameter a caller may leave out is an `Option`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Query<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(Self(value)),
            Err(rejection) => Err(AppError::from(rejection)),
        }
    }
}

impl From<QueryRejection> for AppError {
    fn from(rejection: QueryRejection) -> Self {
        AppError::BadRequest {
            code: "invalid_query",
            message: rejection.body_text(),
            field: None,
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

/// Whether `headers` label the body JSON: `Content-Type: application/json`, with any
/// parameters (`; charset=utf-8`), in any case.
#[must_use]
pub fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

fn body_error(status: StatusCode, message: String) -> AppError {
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        AppError::TooLarge
    } else if status == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        AppError::UnsupportedMediaType
    } else {
        AppError::BadRequest {
            code: "invalid_body",
            message,
            field: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    #[test]
    fn only_application_json_labels_a_json_body() {
        let mut headers = HeaderMap::new();
        assert!(!is_json(&headers), "no label");
        for (label, json) in [
            ("application/json", true),
            ("Application/JSON; charset=utf-8", true),
            ("text/plain", false),
            ("application/x-www-form-urlencoded", false),
            ("multipart/form-data; boundary=x", false),
            ("application/jsonx", false),
        ] {
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(label));
            assert_eq!(is_json(&headers), json, "{label}");
        }
    }
}
