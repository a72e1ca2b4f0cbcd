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
pub mod forms;
pub mod http;
pub mod llm;
pub mod mcp;
pub mod net;
pub mod notify;
pub mod pages;
pub mod startup;
pub mod store;
pub mod telemetry;
pub mod util;
pub mod workflow;

/// The version shown on the home page and in `/healthz`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
