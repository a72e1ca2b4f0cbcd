//! The demo site: an items service (CRUD, filtered search, bulk update and bulk delete) served by
//! the app under `/demo-api/items`, so the chat has a real API to orchestrate out of the box.
//!
//! It plays the part of somebody else's web API: the chat reaches it only over HTTP through its
//! manifest ([`MANIFEST_JSON`]), never through the store, and it knows nothing about the chat.
//! It is `rate-limited`: a bulk call over [`model::MAX_BATCH_SIZE`] ids gets `429` with
//! `Retry-After`, so the orchestrator's chunking is exercised for real. Its ~250 items are seeded
//! on first use ([`DemoItems::ensure_seeded`]) from [`seed::seed_items`].
//!
//! | route | what |
//! |---|---|
//! | `GET /demo-api/items` | search: `status`, `priority`, `updated_after`, `updated_before`, `q`, `limit`, `offset` |
//! | `POST /demo-api/items` | create |
//! | `GET, PATCH, DELETE /demo-api/items/{id}` | read, change, delete one |
//! | `POST /demo-api/items/bulk-update` | `{ids, status?, priority?, …}` |
//! | `POST /demo-api/items/bulk-delete` | `{ids}` |

pub use tessera_store::records::items as model;
pub mod routes;
pub mod seed;

use std::sync::Arc;

use axum::{
    routing::{get, post},
    Router,
};
use tokio::sync::OnceCell;

use crate::store::{now_ms, Store, StoreError};

/// The demo site's manifest: its operations, tags and HTTP bindings, relative to `/demo-api`.
pub const MANIFEST_JSON: &str = include_str!("items_manifest.json");

/// The demo items service's state: the store and whether seeding was checked in this process.
#[derive(Clone, Debug)]
pub struct DemoItems {
    store: Store,
    seeded: Arc<OnceCell<()>>,
}

impl DemoItems {
    /// The service over `store`.
    #[must_use]
    pub fn new(store: Store) -> Self {
        Self {
            store,
            seeded: Arc::new(OnceCell::new()),
        }
    }

    /// Seeds the ~250 demo items unless this database was seeded before (checked once per process).
    ///
    /// # Errors
    /// Database failures; the next call tries again.
    pub async fn ensure_seeded(&self) -> Result<(), StoreError> {
        self.seeded
            .get_or_try_init(|| async {
                let seeded = self
                    .store
                    .seed_demo_items(&seed::seed_items(now_ms()))
                    .await?;
                if seeded {
                    tracing::info!(items = seed::SEED_COUNT, "seeded the demo items");
                }
                Ok::<(), StoreError>(())
            })
            .await?;
        Ok(())
    }
}

/// The `/demo-api/items` routes over `store`, ready to merge into any router.
pub fn routes<S: Clone + Send + Sync + 'static>(store: Store) -> Router<S> {
    Router::new()
        .route(
            "/demo-api/items",
            get(routes::search_items).post(routes::create_item),
        )
        .route("/demo-api/items/bulk-update", post(routes::bulk_update))
        .route("/demo-api/items/bulk-delete", post(routes::bulk_delete))
        .route(
            "/demo-api/items/{id}",
            get(routes::get_item)
                .patch(routes::update_item)
                .delete(routes::delete_item),
        )
        .with_state(DemoItems::new(store))
}
