//! The records the store persists, as plain data: what a run, a page, a generation, a chat
//! session or a demo item is when written down. Behaviour over them lives with the features that
//! own it (`workflow`, `pages`, `agent`, `chat`, `demo` in the root crate), as functions over
//! these types; only what is true of the record itself (its stored spelling, a status rule) is
//! written here.

pub mod chat;
pub mod component_set;
pub mod generation;
pub mod groups;
pub mod history;
pub mod inbox;
pub mod items;
pub mod page;
pub mod page_cache;
pub mod people;
pub mod run;
pub mod token;
pub mod unanswered;
