//! Tessera: workflows that ask a person through generated, server-rendered pages.
//!
//! This crate is the HTTP surface and the composition root: the handlers (`http`) and the start
//! (`startup`, `main`). Everything they serve lives in the crates below, re-exported here under
//! the paths the handlers, tests and benches name: the domain in `tessera-core`, the views in
//! `tessera-app`, the store in `tessera-store`. Nothing below depends on this crate, so editing
//! a handler compiles this crate alone. Errors: `AppError` at the HTTP edge; `anyhow` only in
//! `main` and startup.

// Lets `#[derive(FormSchema)]`'s generated `::tessera::forms` paths resolve inside this crate too.
extern crate self as tessera;

pub use tessera_core::{
    agent, asks, auth, chat, config, demo, eval, forms, llm, mcp, net, notify, pages, store,
    telemetry, util, workflow, VERSION,
};
pub mod http;
pub mod startup;
pub mod typed_forms;
