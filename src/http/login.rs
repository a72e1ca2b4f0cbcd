//! The admin login: a password form, a session flag, and the guards for admin-only routes.
//!
//! `/runs` and `/chat` need the admin session; `/api/*` takes the session or the bearer token.
//! A session holds an [`AdminGrant`]: it ends `TESSERA_SESSION_LIFETIME_SECS` after login
//! however active it is, and when the admin password changes (a restart with another
//! `TESSERA_ADMIN_PASSWORD`); the session layer ends it earlier after inactivity.
//! Failed attempts are throttled per client and overall (`auth::throttle`): a refused attempt
//! gets the form again with 429 (503 when every password hash is busy) and `Retry-After`.
//! After login only a path on this site is followed (`safe_next`).

use axum::{
    extract::{Query, Request, State},
    middleware::Next,
    response::{IntoResponse, Redirect, Response},
};
use http::StatusCode;
use serde::Deserialize;
use tessera_app::access;
use tower_sessions::Session;

use super::{client_addr::ClientAddr, extract::Form, render::html_document, AppState};
use crate::{
    auth::{admin::AdminGrant, throttle::Refused},
    forms::raw_values,
    store::now_ms,
};

/// The session key of the [`AdminGrant`]. Sessions from before grants held `true` here, which
/// no longer reads as a grant: they log in again.
pub(super) const ADMIN_KEY: &str = "admin";

/// Whether the request's session belongs to a logged-in admin whose grant still holds.
pub async fn is_admin(state: &AppState, session: Option<&Session>) -> bool {
    let Some(session) = session else {
        return false;
    };
    let Ok(Some(grant)) = session.get::<AdminGrant>(ADMIN_KEY).await else {
        return false;
    };
    grant.holds(now_ms(), state.config.access.session_lifetime, &state.admin)
}

/// Whether the request carries `Authorization: Bearer <the API token>`.
pub fn has_api_token(state: &AppState, headers: &http::HeaderMap) -> bool {
    headers
        .get(http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .is_some_and(|token| state.api_token.matches(token.trim()))
}

/// Lets the admin through — their session, or a program with the API token (tools read
/// `/components` so) — and refuses a signed-in person with a 403 that says these pages are the
/// administrator's; sends everyone else to the login page and back afterwards.
pub async fn require_admin_page(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let session = request.extensions().get::<Session>();
    if is_admin(&state, session).await || has_api_token(&state, request.headers()) {
        return next.run(request).await;
    }
    if super::sign_in::signed_in_person(&state, session)
        .await
        .is_some()
    {
        return super::sign_in::not_for_people(&state).await;
    }
    let target = request
        .uri()
        .path_and_query()
        .map_or("/", |path| path.as_str());
    let encoded = form_urlencoded::Serializer::new(String::new())
        .append_pair("next", target)
        .finish();
    Redirect::to(&format!("/login?{encoded}")).into_response()
}

/// Query of `GET /login`.
#[derive(Debug, Deserialize)]
pub struct LoginQuery {
    next: Option<String>,
}

/// `GET /login`.
pub async fn login_page(
    State(state): State<AppState>,
    Query(query): Query<LoginQuery>,
) -> Response {
    login_form(
        &state,
        StatusCode::OK,
        safe_next(query.next.as_deref()),
        None,
    )
    .await
}

/// The login form's fields.
#[derive(Debug, Default, Deserialize)]
pub struct LoginFields {
    #[serde(default)]
    password: String,
    #[serde(default)]
    next: String,
}

/// `POST /login`: checks the password (argon2, off the executor, throttled), then starts the
/// admin session. A form from another site never gets here (`same_origin.rs` answers
/// [`refused_cross_site`]).
pub async fn login(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    session: Session,
    Form(fields): Form<LoginFields>,
) -> Response {
    let next = safe_next(Some(&fields.next));
    let checked = state
        .login_throttle
        .verify(&state.admin, client, fields.password)
        .await;
    if checked != Ok(true) {
        return refused(&state, next, checked.err(), client).await;
    }
    // A new id at login: a session id planted before login is worthless afterwards.
    let grant = AdminGrant::new(now_ms(), &state.admin);
    // An admin is never also a signed-in respondent in the same browser session.
    let signed_out = super::sign_in::forget_person(&session).await;
    if signed_out.is_err()
        || session.cycle_id().await.is_err()
        || session.insert(ADMIN_KEY, grant).await.is_err()
    {
        let failed = Some("Could not start a session; try again.".to_owned());
        return login_form(&state, StatusCode::SERVICE_UNAVAILABLE, next, failed).await;
    }
    Redirect::to(&next).into_response()
}

/// The login form again for a refused attempt: 401 for a wrong password; for one the throttle
/// turned away unchecked, 429 after too many failures or 503 when every password hash is busy,
/// with `Retry-After`.
async fn refused(
    state: &AppState,
    next: String,
    throttled: Option<Refused>,
    client: std::net::IpAddr,
) -> Response {
    let Some(throttled) = throttled else {
        tracing::info!(client.addr = %client, "admin login refused");
        let wrong = Some("That password is not right.".to_owned());
        return login_form(state, StatusCode::UNAUTHORIZED, next, wrong).await;
    };
    let seconds = throttled.retry_after_seconds();
    let (status, message) = match throttled {
        Refused::TooManyFailures { .. } => (
            StatusCode::TOO_MANY_REQUESTS,
            format!("Too many wrong passwords. Wait {seconds} seconds, then try again."),
        ),
        Refused::Busy { .. } => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("Too many logins at once. Wait {seconds} seconds, then try again."),
        ),
    };
    tracing::info!(client.addr = %client, error = %throttled, "admin login throttled");
    let mut response = login_form(state, status, next, Some(message)).await;
    response
        .headers_mut()
        .insert(http::header::RETRY_AFTER, http::HeaderValue::from(seconds));
    response
}

/// The login form again (403) for a login posted from another site, keeping its `next`.
pub(super) async fn refused_cross_site(state: &AppState, body: &[u8]) -> Response {
    let next = raw_values(body)
        .get("next")
        .and_then(|all| all.last())
        .cloned();
    login_form(
        state,
        StatusCode::FORBIDDEN,
        safe_next(next.as_deref()),
        Some("This form was not sent from this site.".to_owned()),
    )
    .await
}

/// `POST /logout`.
pub async fn logout(session: Session) -> Response {
    let _ = session.flush().await;
    Redirect::to("/").into_response()
}

/// Only a path on this site; anything else goes home (`/`). Browsers drop tabs and newlines
/// from a URL and read `\\` as `/`, so `/\t/evil.example` and `/\\evil.example` are
/// `//evil.example`, another site: a path with a backslash or a control character is refused,
/// and so is one whose percent-decoding starts with `//` or holds either.
pub(super) fn safe_next(next: Option<&str>) -> String {
    let local = |path: &str| {
        path.starts_with('/')
            && !path.starts_with("//")
            && !path.chars().any(|char| char == '\\' || char.is_control())
    };
    match next {
        Some(path)
            if local(path)
                && local(&percent_encoding::percent_decode_str(path).decode_utf8_lossy()) =>
        {
            path.to_owned()
        }
        _ => "/".to_owned(),
    }
}

async fn login_form(
    state: &AppState,
    status: StatusCode,
    next: String,
    error: Option<String>,
) -> Response {
    html_document(state, status, "Log in · Tessera", move || {
        access::login_form(next, error.as_deref())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::safe_next;

    #[test]
    fn only_local_paths_are_followed_after_login() {
        assert_eq!(
            safe_next(Some("/runs?status=waiting")),
            "/runs?status=waiting"
        );
        assert_eq!(safe_next(Some("/chat")), "/chat");
        for off_site in [
            "//evil.example/x",
            "https://evil.example",
            "/\\evil.example",
            "/\t/evil.example",
            "/\n/evil.example",
            "/%09/evil.example",
            "/%2F/evil.example",
            "/%5Cevil.example",
            "/%0d%0a/evil.example",
            "evil.example",
            "",
        ] {
            assert_eq!(safe_next(Some(off_site)), "/", "{off_site:?}");
        }
        assert_eq!(safe_next(None), "/");
    }
}
