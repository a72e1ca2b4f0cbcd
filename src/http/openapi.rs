//! The `/api/*` router and its OpenAPI 3.1 document, built from one list so they cannot differ.
//!
//! Each handler carries its `#[utoipa::path]` annotation (method, path, parameters, bodies,
//! statuses) beside it; [`api`] registers them with `utoipa_axum::routes!`, which adds the route
//! and its operation together. What every operation shares is added here by [`Shared`]: the
//! bearer-token security, and the error statuses the `/api/*` guard and the body limit answer
//! before any handler runs (401, 403, 413, 415), and the generic 500.
//!
//! The document is served at `GET /api/openapi.json` without the token: it holds no secret and
//! clients generate code from it before they have one. It describes what this server serves:
//! the chat operations are absent when the chat is (`chat_api::routes`).

use std::sync::Arc;

use axum::{middleware, response::IntoResponse, Extension, Router};
use http::header;
use utoipa::{
    openapi::{
        path::Operation,
        security::{HttpAuthScheme, HttpBuilder, SecurityScheme},
        ContentBuilder, OpenApi as Document, Ref, ResponseBuilder,
    },
    Modify, OpenApi,
};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    api_token, asks, chat_api, components, error::ErrorBody, generate, health, preview, runs,
    AppState,
};

/// The name of the bearer-token security scheme in the document.
pub const BEARER: &str = "bearer";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Tessera API",
        description = "Ask people through generated pages, run workflows, generate and preview pages, and chat.\n\nEvery operation but this document needs the API token as `Authorization: Bearer <TESSERA_API_TOKEN>`. A browser logged in as the admin may instead send its session cookie, for requests made from this site's own pages (a state-changing request with the cookie from elsewhere is 403 `cross_site`). Request bodies are JSON with `Content-Type: application/json` (415 otherwise). Every error has the body `{\"error\": {\"code\", \"message\", \"field\"?}}`.",
        license(name = "MIT", identifier = "MIT"),
    ),
    components(schemas(ErrorBody)),
    modifiers(&Shared),
    security(("bearer" = [])),
)]
struct ApiDoc;

/// One server-sent event of a `text/event-stream` answer, as the document describes it.
#[derive(utoipa::ToSchema)]
#[expect(
    dead_code,
    reason = "describes the events axum's Sse writes; never built"
)]
pub struct ServerSentEvent {
    /// The event's name: its kind.
    event: Option<String>,
    /// Its id (a sequence number), where the stream can be resumed with `Last-Event-ID`.
    id: Option<String>,
    /// The event as JSON.
    data: String,
}

/// The served document, shared by every request for it.
#[derive(Clone)]
struct Served(Arc<str>);

/// `GET /api/openapi.json`: this document.
#[utoipa::path(
    get,
    path = "/api/openapi.json",
    tag = "meta",
    security(()),
    responses((status = 200, description = "The OpenAPI 3.1 document of `/api/*`.", content_type = "application/json", body = Object)),
)]
async fn openapi_json(Extension(Served(document)): Extension<Served>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        document.to_string(),
    )
}

/// The `/api/*` routes (the token guard on all but the document) and the document they serve.
pub fn api(state: &AppState) -> (Router<AppState>, Document) {
    let guarded = OpenApiRouter::new()
        .routes(routes!(health::status))
        .routes(routes!(components::tool_definitions))
        .routes(routes!(preview::preview_api))
        .routes(routes!(runs::start_run_api, runs::list_runs_api))
        .routes(routes!(runs::show_run_api))
        .routes(routes!(runs::issue_link_api))
        .routes(routes!(asks::create_ask_api))
        .routes(routes!(asks::show_ask_api))
        .routes(routes!(asks::cancel_ask_api))
        .routes(routes!(asks::extend_ask_api))
        .routes(routes!(asks::reissue_ask_api))
        .routes(routes!(generate::generate_page))
        .routes(routes!(generate::list_generations))
        .routes(routes!(generate::generation))
        .routes(routes!(generate::generation_events))
        .merge(chat_api::routes(state))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            api_token::require_api_token,
        ));
    let (router, document) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(openapi_json))
        .merge(guarded)
        .split_for_parts();
    let document = with_shared_responses(document);
    let served = Served(document.to_json().unwrap_or_default().into());
    (router.layer(Extension(served)), document)
}

/// Security and the shared component schemas, applied to the derived document.
struct Shared;

impl Modify for Shared {
    fn modify(&self, document: &mut Document) {
        let components = document.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            BEARER,
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("The API token, `TESSERA_API_TOKEN`."))
                    .build(),
            ),
        );
    }
}

/// Adds to each operation the statuses answered before its handler runs, so no operation can
/// forget one: 401 and 403 from the token guard (`api_token.rs`), 413 from the body limit, 415
/// for a body not labelled JSON, and the generic 500. Runs after the routes are merged, which
/// the derive's modifiers do not see.
fn with_shared_responses(mut document: Document) -> Document {
    for item in document.paths.paths.values_mut() {
        let operations = [
            (&mut item.get, false),
            (&mut item.post, true),
            (&mut item.put, true),
            (&mut item.patch, true),
            (&mut item.delete, true),
        ];
        for (operation, changes_state) in operations {
            if let Some(operation) = operation {
                add_shared_responses(operation, changes_state);
            }
        }
    }
    document
}

fn add_shared_responses(operation: &mut Operation, changes_state: bool) {
    let public = operation
        .security
        .as_ref()
        .is_some_and(|requirements| requirements.iter().all(is_empty_requirement));
    let mut shared = vec![("500", "Our failure; the details are in the server's log.")];
    if !public {
        shared.push((
            "401",
            "No API token, or a wrong one (`WWW-Authenticate: Bearer`).",
        ));
        shared.push(("413", "The body is larger than `TESSERA_BODY_LIMIT`."));
        shared.push((
            "415",
            "A body not labelled `Content-Type: application/json`.",
        ));
        if changes_state {
            shared.push((
                "403",
                "Made with the admin session's cookie from another site (`cross_site`).",
            ));
        }
    }
    for (status, description) in shared {
        operation
            .responses
            .responses
            .entry(status.to_owned())
            .or_insert_with(|| error_response(description).into());
    }
}

fn is_empty_requirement(requirement: &utoipa::openapi::security::SecurityRequirement) -> bool {
    serde_json::to_value(requirement)
        .is_ok_and(|value| value.as_object().is_some_and(|map| map.is_empty()))
}

fn error_response(description: &str) -> utoipa::openapi::Response {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("ErrorBody")))
                .build(),
        )
        .build()
}
