//! Server-side rendering of whole documents through the `tessera-app` shell.
//!
//! A fresh reactive owner per response keeps renders independent; a fresh nonce per response goes
//! into both the hydration script tags and the `Content-Security-Policy` header, so no other inline
//! script can run.

use axum::response::{Html, IntoResponse, Response};
use http::{HeaderValue, StatusCode};
use leptos::{nonce::Nonce, prelude::*};
use tessera_app::{
    components::download::DownloadFile,
    shell::{Shell, ShellOptions},
};

use super::AppState;

/// A generated file as a download: its type, and `attachment` with its name so the browser
/// saves it rather than showing it.
pub fn attachment(file: DownloadFile) -> Response {
    let disposition = format!("attachment; filename=\"{}\"", file.filename);
    (
        [
            (http::header::CONTENT_TYPE, file.content_type.to_owned()),
            (http::header::CONTENT_DISPOSITION, disposition),
        ],
        file.body,
    )
        .into_response()
}

/// Renders `body` inside the document shell and returns it with `status` and a nonce-bound CSP.
pub fn html_document(
    state: &AppState,
    status: StatusCode,
    title: &str,
    body: impl FnOnce() -> AnyView + Send + 'static,
) -> Response {
    let nonce = Nonce::new();
    let options = ShellOptions {
        leptos: state.site.clone(),
        title: title.to_owned(),
    };
    let owner = Owner::new();
    let html = owner.with(|| {
        provide_context(nonce.clone());
        view! { <Shell options>{body()}</Shell> }.to_html()
    });
    let mut response = (status, Html(html)).into_response();
    let policy = format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; style-src 'self'; \
         img-src 'self' data: https: http:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"
    );
    if let Ok(value) = HeaderValue::from_str(&policy) {
        response
            .headers_mut()
            .insert(http::header::CONTENT_SECURITY_POLICY, value);
    }
    response
}

/// Renders a view to an HTML fragment (no document, no headers), e.g. for JSON APIs.
pub fn fragment_html(body: impl FnOnce() -> AnyView) -> String {
    let owner = Owner::new();
    owner.with(|| body().to_html())
}
