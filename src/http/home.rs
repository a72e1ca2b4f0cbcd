//! The home page and the styled 404.

use axum::{extract::State, response::Response};
use http::StatusCode;
use leptos::prelude::*;
use tessera_app::{
    home::{HomeInfo, HomePage},
    not_found::ErrorPage,
};

use super::{render::html_document, AppState};

/// `GET /`.
pub async fn home(State(state): State<AppState>) -> Response {
    let info = HomeInfo {
        version: crate::VERSION.to_owned(),
        model: state.config.model.clone(),
        database: state.store.engine().to_owned(),
        admin: super::viewer::current(&state).await == tessera_app::shell::Viewer::Admin,
    };
    html_document(&state, StatusCode::OK, "Tessera", move || {
        view! { <HomePage info/> }.into_any()
    })
    .await
}

/// Every unmatched route: a styled 404 that names nothing else on the server.
pub async fn not_found(State(state): State<AppState>) -> Response {
    html_document(
        &state,
        StatusCode::NOT_FOUND,
        "Not found · Tessera",
        || {
            view! {
            <ErrorPage
                status=404
                heading="Page not found".to_owned()
                message="There is nothing at this address. Check the link, or start again from the home page.".to_owned()
            />
        }
        .into_any()
        },
    )
    .await
}
