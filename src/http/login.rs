//! The admin login: a password form, a session flag, and the guards for admin-only routes.
//!
//! `/runs` and `/chat` need the admin session; `/api/*` takes the session or the bearer token.

use axum::{
    body::Bytes,
    extract::{Query, Request, State},
    middleware::Next,
    response::{IntoResponse, Redirect, Response},
};
use http::{HeaderMap, StatusCode};
use leptos::prelude::*;
use serde::Deserialize;
use tower_sessions::Session;

use super::{render::html_document, security::is_cross_site, AppState};
use crate::forms::raw_values;

const ADMIN_KEY: &str = "admin";

/// Whether the request's session belongs to a logged-in admin.
pub async fn is_admin(session: Option<&Session>) -> bool {
    match session {
        Some(session) => session
            .get::<bool>(ADMIN_KEY)
            .await
            .ok()
            .flatten()
            .unwrap_or(false),
        None => false,
    }
}

/// Lets admin sessions through; sends everyone else to the login page and back afterwards.
pub async fn require_admin_page(request: Request, next: Next) -> Response {
    if is_admin(request.extensions().get::<Session>()).await {
        return next.run(request).await;
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
}

/// `POST /login`: checks the password (argon2, off the executor), then starts the admin session.
pub async fn login(
    State(state): State<AppState>,
    session: Session,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let values = raw_values(&body);
    let field = |name: &str| {
        values
            .get(name)
            .and_then(|all| all.last())
            .cloned()
            .unwrap_or_default()
    };
    let next = safe_next(Some(&field("next")));
    if is_cross_site(&headers) {
        return login_form(
            &state,
            StatusCode::FORBIDDEN,
            next,
            Some("This form was not sent from this site."),
        );
    }
    let attempt = field("password");
    let hash = state.admin.clone();
    let verified = tokio::task::spawn_blocking(move || hash.verify(&attempt))
        .await
        .unwrap_or(false);
    if !verified {
        tracing::info!("admin login refused");
        return login_form(
            &state,
            StatusCode::UNAUTHORIZED,
            next,
            Some("That password is not right."),
        );
    }
    // A new id at login: a session id planted before login is worthless afterwards.
    if session.cycle_id().await.is_err() || session.insert(ADMIN_KEY, true).await.is_err() {
        return login_form(
            &state,
            StatusCode::SERVICE_UNAVAILABLE,
            next,
            Some("Could not start a session; try again."),
        );
    }
    Redirect::to(&next).into_response()
}

/// `POST /logout`.
pub async fn logout(session: Session) -> Response {
    let _ = session.flush().await;
    Redirect::to("/").into_response()
}

/// Only same-site absolute paths; anything else (`//evil`, `https://…`) goes home.
fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(path) if path.starts_with('/') && !path.starts_with("//") && !path.contains('\\') => {
            path.to_owned()
        }
        _ => "/runs".to_owned(),
    }
}

fn login_form(
    state: &AppState,
    status: StatusCode,
    next: String,
    error: Option<&'static str>,
) -> Response {
    html_document(state, status, "Log in · Tessera", move || {
        view! {
            <section class="mx-auto max-w-sm space-y-4" aria-labelledby="login-title">
                <h1 id="login-title" class="text-2xl font-bold">"Log in"</h1>
                <p class="text-slate-700 dark:text-slate-300">"Runs and chat are for the administrator of this Tessera."</p>
                {error.map(|message| view! {
                    <p role="alert" id="login-error" class="rounded border border-red-300 bg-red-50 p-3 text-red-800">{message}</p>
                })}
                <form method="post" action="/login" class="space-y-4">
                    <input type="hidden" name="next" value=next/>
                    <div>
                        <label for="login-password" class="block font-medium">"Admin password"</label>
                        <input id="login-password" name="password" type="password" required autocomplete="current-password"
                            aria-describedby=error.map(|_| "login-error")
                            class="mt-1 block w-full rounded-md border border-slate-400 bg-white px-3 py-2 text-slate-900 focus:outline-none focus:ring-2 focus:ring-indigo-500 dark:bg-slate-800 dark:text-slate-100"/>
                    </div>
                    <button type="submit" data-testid="login-submit" class="rounded-md bg-indigo-700 px-4 py-2 font-semibold text-white hover:bg-indigo-800 focus:outline-none focus:ring-2 focus:ring-indigo-500">
                        "Log in"
                    </button>
                </form>
            </section>
        }
        .into_any()
    })
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
        assert_eq!(safe_next(Some("//evil.example/x")), "/runs");
        assert_eq!(safe_next(Some("https://evil.example")), "/runs");
        assert_eq!(safe_next(Some("/\\evil.example")), "/runs");
        assert_eq!(safe_next(None), "/runs");
    }
}
