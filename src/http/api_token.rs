//! The bearer-token check, as a route layer reusable by every protected router.

use axum::{
    extract::{Request, State},
    middleware::Next,
    response::Response,
};

use super::{error::AppError, AppState};

/// Lets the request through with `Authorization: Bearer <the API token>` or an admin session.
///
/// # Errors
/// [`AppError::Unauthorized`] (401 with `WWW-Authenticate: Bearer`) otherwise.
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
    match presented {
        Some(token) if state.api_token.matches(token) => Ok(next.run(request).await),
        _ if super::login::is_admin(request.extensions().get::<tower_sessions::Session>())
            .await =>
        {
            Ok(next.run(request).await)
        }
        _ => Err(AppError::Unauthorized),
    }
}
