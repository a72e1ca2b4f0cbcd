//! The HTTP edge: routes, middleware, and the mapping of domain errors to responses.
//!
//! Handlers are thin: extract, parse into domain types, call one domain function, map the result.
//! Every HTML response goes through [`render::html_document`], which sets the security headers and
//! the per-response CSP nonce; JSON errors all have the shape `{"error": {"code", "message"}}`.

pub mod api_token;
pub mod asks;
pub mod chat;
pub mod chat_api;
pub mod chat_tools;
pub mod client_addr;
pub mod components;
pub mod error;
pub mod extract;
pub mod generate;
pub mod generation_page;
pub mod health;
pub mod home;
pub mod inbox;
pub mod login;
pub mod mcp;
pub mod metrics;
pub mod openapi;
pub mod pages;
pub mod presenters;
pub mod preview;
pub mod render;
pub mod runs;
pub mod same_origin;
pub mod security;
pub mod session;
pub mod sign_in;
pub mod site;
pub mod state;
pub mod viewer;

use std::time::Duration;

use axum::{
    extract::DefaultBodyLimit,
    middleware,
    routing::{get, post},
    Router,
};
use http::{HeaderName, Request};
use tower_http::{
    limit::RequestBodyLimitLayer,
    request_id::{MakeRequestUuid, PropagateRequestIdLayer, RequestId, SetRequestIdLayer},
    timeout::TimeoutLayer,
    trace::TraceLayer,
};

use same_origin::{refuse_cross_site, Refusal, SameOrigin};
pub use state::AppState;

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// A request's path as logged: a page link's or a sign-in link's token (`/p/{token}…`,
/// `/sign-in/{token}`) is replaced, since only its hash may exist outside the request
/// (ARCHITECTURE.md, invariant 9).
fn logged_path(path: &str) -> std::borrow::Cow<'_, str> {
    for prefix in ["/p/", "/sign-in/"] {
        if let Some(rest) = path.strip_prefix(prefix) {
            let after_token = rest.find('/').map_or("", |slash| &rest[slash..]);
            return format!("{prefix}:token{after_token}").into();
        }
    }
    path.into()
}

/// The demo site's APIs when the demo is on (`TESSERA_DEMO`), writes behind its key; else
/// nothing, so `/demo-api/*` is the 404 of any unknown path.
fn demo_site(state: &AppState) -> Router<AppState> {
    match &state.demo_key {
        Some(key) => crate::demo::routes(
            state.store.clone(),
            crate::demo::access::WriteGuard::new(key.clone(), state.api_token.clone()),
        ),
        None => Router::new(),
    }
}

/// A person's pages: sign-in by e-mailed link, sign-out and the inbox. Their forms must come
/// from this site's own pages.
fn people_pages(state: &AppState) -> Router<AppState> {
    Router::new()
        .route(
            "/sign-in",
            get(sign_in::sign_in_page).post(sign_in::request_link),
        )
        .route(
            "/sign-in/{token}",
            get(sign_in::confirm_page).post(sign_in::confirm),
        )
        .route("/sign-out", post(sign_in::sign_out))
        .route("/inbox", get(inbox::show_inbox))
        .route("/inbox/{page}/answer", post(inbox::answer))
        .route_layer(middleware::from_fn_with_state(
            SameOrigin::new(state, Refusal::Status),
            refuse_cross_site,
        ))
}

/// Builds the whole router with its middleware stack.
pub fn router(state: AppState) -> Router {
    let site_files = site::SiteFiles::choose(state.config.site_root.as_deref());
    let body_limit = state.config.body_limit;
    let state_store = state.store.clone();
    let secure_cookies = state.config.public_url.starts_with("https://");
    let (api, _) = openapi::api(&state);
    let admin_pages = Router::new()
        .route("/runs", get(runs::list_runs))
        .route("/runs/start", post(runs::start_run_page))
        .route("/runs/{id}", get(runs::show_run))
        .route(
            "/runs/generations/{id}",
            get(generation_page::show_generation),
        )
        .route("/runs/{id}/cancel", post(runs::cancel_run_page))
        .route("/runs/{id}/pages/{page}", post(runs::change_page))
        .route("/components", get(components::gallery))
        .route(
            "/components/download/{file}",
            get(components::gallery_download),
        )
        .route(
            "/components/try",
            get(components::try_fields).post(components::submit_try_fields),
        )
        // Rendering whatever a stranger pastes is work for admins only.
        .route(
            "/preview",
            get(preview::preview_page).post(preview::submit_preview_page),
        )
        // Inside the admin check: a stranger is sent to log in before anything else.
        .route_layer(middleware::from_fn_with_state(
            SameOrigin::new(&state, Refusal::Status),
            refuse_cross_site,
        ))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            login::require_admin_page,
        ));
    Router::new()
        .route("/", get(home::home))
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/metrics", get(metrics::show_metrics))
        .merge(people_pages(&state))
        .route(
            "/login",
            get(login::login_page)
                .post(login::login)
                .route_layer(middleware::from_fn_with_state(
                    SameOrigin::new(&state, Refusal::LoginForm),
                    refuse_cross_site,
                )),
        )
        .route("/logout", post(login::logout))
        .route(
            "/p/{token}",
            get(pages::show_page)
                .post(pages::submit)
                .route_layer(middleware::from_fn_with_state(
                    SameOrigin::new(&state, Refusal::PageError),
                    refuse_cross_site,
                )),
        )
        .route("/p/{token}/done", get(pages::confirmation))
        .route("/p/{token}/download/{file}", get(pages::download))
        .merge(api)
        .merge(mcp::routes(&state, &site_files))
        .merge(admin_pages)
        .merge(chat::routes(&state))
        .merge(demo_site(&state))
        .merge(site::routes(&site_files))
        .fallback(home::not_found)
        .with_state(state.clone())
        .layer(middleware::from_fn(viewer::remember_session))
        .layer(session::session_layer(state_store, secure_cookies))
        .layer(middleware::from_fn(security::html_security_headers))
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(RequestBodyLimitLayer::new(body_limit))
        .layer(middleware::from_fn(error::api_body_limit_as_json))
        .layer(TimeoutLayer::with_status_code(http::StatusCode::REQUEST_TIMEOUT, Duration::from_secs(60)))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(TraceLayer::new_for_http().make_span_with(|request: &Request<_>| {
            let request_id = request
                .extensions()
                .get::<RequestId>()
                .and_then(|id| id.header_value().to_str().ok())
                .unwrap_or("-")
                .to_owned();
            tracing::info_span!("request", request.id = %request_id, http.method = %request.method(), http.path = %logged_path(request.uri().path()))
        }))
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        // Outermost, so a request's time includes every layer above.
        .layer(middleware::from_fn_with_state(state, metrics::track_requests))
}

#[cfg(test)]
mod tests {
    use super::logged_path;

    #[test]
    fn page_tokens_are_kept_out_of_logged_paths() {
        let token = "0123456789abcdef0123456789abcdef0123456789abcdef";
        assert_eq!(logged_path(&format!("/p/{token}")), "/p/:token");
        assert_eq!(logged_path(&format!("/p/{token}/done")), "/p/:token/done");
        assert_eq!(logged_path("/runs/abc"), "/runs/abc");
        assert_eq!(logged_path(&format!("/sign-in/{token}")), "/sign-in/:token");
        assert_eq!(logged_path("/sign-in"), "/sign-in");
    }
}
