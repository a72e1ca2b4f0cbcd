//! Page generation: the agent loop, the offline `heuristic` model, and the records they leave.
//!
//! A page is built by a model calling tools (DESIGN.md §2, §6): [`generate::generate_page`] runs
//! the loop, [`tools`] executes each call against the page being built, [`heuristic`] is the
//! offline model that is the default and the fallback, [`summary`] tells the model about the data
//! without sending it, [`prompt`] renders the minijinja templates in `agent/prompts/`,
//! [`cache`] keys and reuses validated pages, [`events`] streams what happens, and
//! [`generation`] is the record each generation leaves in the store.
//!
//! Errors: [`AgentError`] for the loop (a broken template, a store failure, no valid page even
//! from the heuristic); model failures are [`crate::llm::ModelError`] and never escape the loop,
//! which falls back instead. This module must not know about HTTP.

pub mod cache;
pub mod events;
pub mod generate;
#[cfg(test)]
mod provider_fixtures;
pub use tessera_store::records::generation;
pub mod heuristic;
pub mod models;
pub mod page_schema;
pub mod prompt;
pub mod structure;
pub mod summary;
pub mod tools;

pub use cache::CachePolicy;
pub use events::{EventKind, EventSink, GenerationEvent};
pub use generate::{generate_page, AgentError, Generated, GenerationInput};
pub use heuristic::HeuristicModel;
pub use models::{AllowedModels, UnknownModel};
