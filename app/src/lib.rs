//! Tessera's view layer: the Leptos components, the document shell and the pages built from them.
//!
//! This crate is isomorphic. With `ssr` the server renders every page to HTML; with `hydrate` the
//! browser bundle wakes up only the `#[island]` components. It must never know about the database,
//! HTTP routing, models or workflows: the root crate `tessera` depends on it, never the reverse.
//!
//! Every page the server sends is offered as a plain function from data to an `AnyView` (or, for
//! the document shell, to HTML), never as a component the server writes `view!` around. A view's
//! type is a deep nest of generics, and whoever names it compiles all of its rendering: erased
//! here, a page is compiled once, in this crate, and an edit to a handler recompiles none of it.

pub mod access;
pub mod answer;
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
pub mod inbox;
pub mod not_found;
pub mod preview;
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
