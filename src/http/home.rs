//! The home page and the styled 404.

use axum::{extract::State, response::Response};
use http::StatusCode;
use tessera_app::{
    home::{home_page, HomeInfo},
    not_found::error_page,
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
    html_document(&state, StatusCode::OK, "Tessera", move || home_page(info)).await
}

/// Every unmatched route: a styled 404 that names nothing else on the server.
pub async fn not_found(State(state): State<AppState>) -> Response {
    html_document(
        &state,
        StatusCode::NOT_FOUND,
        "Not found · Tessera",
        || error_page(404, "Page not found".to_owned(), "There is nothing at this address. Check the link, or start again from the home page.".to_owned()),
    )
    .await
}
