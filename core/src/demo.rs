//! Demo content shipped with the app so it is useful with no configuration: pages to try, the
//! demo workflows, and the demo site (its APIs under `/demo-api`, which the chat and the YAML
//! examples call). The site is served only with `TESSERA_DEMO` on; its writes need the key of
//! [`access`].

pub mod access;
pub mod chat_site;
pub mod drill;
pub mod emails;
pub mod expenses;
pub mod expenses_api;
pub mod field_types;
pub mod items;
pub mod workflows;

use axum::{middleware, Router};

use crate::store::Store;

/// The demo site's APIs (`/demo-api/items`, `/demo-api/expenses`), each write checked by
/// `guard` ([`access`]). Mounted only when `TESSERA_DEMO` is on.
pub fn routes<S: Clone + Send + Sync + 'static>(
    store: Store,
    guard: access::WriteGuard,
) -> Router<S> {
    Router::new()
        .merge(items::routes(store))
        .merge(expenses_api::routes())
        .route_layer(middleware::from_fn_with_state(
            guard,
            access::require_key_for_writes,
        ))
}
