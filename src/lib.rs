//! Tessera: workflows that ask a person through generated, server-rendered pages.
//!
//! This crate is the domain and the edges: configuration, the store, pages, workflows, the agent
//! and the HTTP surface. The view layer lives in `tessera-app`, which never depends on this crate.
//! Errors: each layer has its own `thiserror` type (`ConfigError`, `StoreError`, `AppError` at
//! the HTTP edge); `anyhow` only in `main` and startup.

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
pub mod http;
/// Chat models over the providers' wire formats, in a crate of their own (`tessera-llm`: the
/// only crate that talks to a model provider).
pub use tessera_llm as llm;
pub mod mcp;
pub mod net;
pub mod notify;
pub mod pages;
pub mod startup;
/// The records Tessera persists and the storage facade over them, in a crate of their own
/// (`tessera-store`: the only crate that names a database driver).
pub use tessera_store as store;
pub mod telemetry;
pub mod typed_forms;
pub mod util;
pub mod workflow;

/// The version shown on the home page and in `/healthz`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
