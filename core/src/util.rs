//! Small helpers with no domain of their own, each written once for the whole crate.
//!
//! - [`dates`]: UTC calendar dates over the `time` crate (`YYYY-MM-DD`, RFC 3339 instants).
//! - `backoff` (from `tessera-llm`, whose retries it was written for): exponential backoff with jitter and the `Retry-After` header, for the model
//!   providers, webhooks and the chat's site calls.
//! - `causes` (from `tessera-llm` too): an error and its causes on one line, for the providers,
//!   the notifiers and email.
//! - [`canonical_json`]: JSON text with sorted keys, the input of cache keys and digests.
//! - [`blocking`]: CPU-bound work on the blocking pool, answered within a deadline.
//! - [`templates`]: minijinja templates someone else wrote, rendered with fuel and an output cap.
//!
//! HTML escaping lives in the view crate (`tessera_app::escape`) because both crates need it and
//! the view crate never depends on this one.

pub use tessera_llm::backoff;
pub use tessera_llm::causes;
pub mod blocking;
pub use tessera_store::canonical_json;
pub mod clock;
pub mod dates;
pub mod templates;
