//! Tessera's domain: configuration, pages, workflows, the agent, the chat and the MCP server,
//! everything the server does apart from its HTTP surface and its start.
//!
//! The handlers and the composition root live in the `tessera` crate above this one, so an edit
//! to a handler compiles only that crate. The view layer lives in `tessera-app`, the store in
//! `tessera-store`; neither depends on this crate. Errors: each layer has its own `thiserror`
//! type (`ConfigError`, `StoreError`, …).

// Lets `#[derive(FormSchema)]`'s generated `::tessera::forms` paths resolve inside this crate too.
extern crate self as tessera;

pub mod agent;
pub mod asks;
pub mod auth;
pub mod chat;
pub mod config;
pub mod demo;
pub mod eval;
/// Response schemas and form submissions, in a crate of their own (`tessera-forms`: no I/O, and
/// the compiler keeps it from reaching the server's other layers).
pub use tessera_forms as forms;
/// Chat models over the providers' wire formats, in a crate of their own (`tessera-llm`: the
/// only crate that talks to a model provider).
pub use tessera_llm as llm;
pub mod mcp;
pub mod net;
pub mod notify;
pub mod pages;
/// The records Tessera persists and the storage facade over them, in a crate of their own
/// (`tessera-store`: the only crate that names a database driver).
pub use tessera_store as store;
pub mod telemetry;
pub mod util;
pub mod workflow;

/// The version shown on the home page and in `/healthz`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
