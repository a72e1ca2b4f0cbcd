//! Tessera's view layer: the Leptos components, the document shell and the pages built from them.
//!
//! This crate is isomorphic. With `ssr` the server renders every page to HTML; with `hydrate` the
//! browser bundle wakes up only the `#[island]` components. It must never know about the database,
//! HTTP routing, models or workflows: the root crate `tessera` depends on it, never the reverse.

pub mod binding;
pub mod catalog;
pub mod chat;
pub mod chat_stream;
pub mod chat_tools;
pub mod components;
pub mod escape;
pub mod gallery;
pub mod generation;
pub mod home;
pub mod not_found;
pub mod render;
pub mod runs;
pub mod shell;
pub mod theme;
pub mod tree;

/// Browser entry point: hydrates the islands on the server-rendered page and nothing else.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_islands();
}
