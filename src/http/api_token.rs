//! The `/api/*` (and `/mcp`) guard, as a route layer reusable by every protected router.
//!
//! Two credentials open it, with different rules. The bearer token is sent by programs, which
//! choose their headers; the admin session's cookie is sent by a browser on its own, also when a
//! page on another site makes the request — so a request made with the cookie must say it comes
//! from this site's pages (`same_origin::is_same_origin`) unless its method changes nothing.
//! Either way a body must be labelled `Content-Type: application/json` (415 otherwise): the
//! asks and chat handlers read raw bytes, and a form on another site can only send
//! `text/plain`, form-encoded or multipart bodies without asking the browser first.

use axum::{
    body::HttpBody as _,
    extract::{Request, State},
    middleware::Next,
    response::Response,
};
use http::Method;

use super::{error::AppError, extract::is_json, same_origin::is_same_origin, AppState};

/// Lets the request through with `Authorization: Bearer <the API token>`, or with an admin
/// session when it comes from this site; a body must be JSON either way.
///
/// # Errors
/// [`AppError::Unauthorized`] (401 with `WWW-Authenticate: Bearer`) without a credential;
/// [`AppError::Forbidden`] (403 `cross_site`) for a state-changing request made with the admin
/// session from elsewhere; [`AppError::UnsupportedMediaType`] (415) for a body not labelled
/// JSON.
pub async fn require_api_token(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Result<Response, AppError> {
    let presented = request
        .headers()
        .get(http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(str::trim);
    let by_token = presented.is_some_and(|token| state.api_token.matches(token));
    if !by_token {
        let session = request.extensions().get::<tower_sessions::Session>();
        if !super::login::is_admin(&state, session).await {
            return Err(AppError::Unauthorized);
        }
        let changes_nothing =
            [Method::GET, Method::HEAD, Method::OPTIONS].contains(request.method());
        if !changes_nothing && !is_same_origin(request.headers(), &state.config.public_url) {
            return Err(AppError::Forbidden {
                code: "cross_site",
                message: "a request made with the admin session must come from this site's own pages; programs send the API token".to_owned(),
            });
        }
    }
    let has_body = request.body().size_hint().exact() != Some(0);
    if has_body && !is_json(request.headers()) {
        return Err(AppError::UnsupportedMediaType);
    }
    Ok(next.run(request).await)
}
