//! The records the store persists, as plain data: what a run, a page, a generation, a chat
//! session or a demo item is when written down. Behaviour over them lives with the features that
//! own it (`workflow`, `pages`, `agent`, `chat`, `demo` in the root crate), as functions over
//! these types; only what is true of the record itself (its stored spelling, a status rule) is
//! written here.

/// Declares an id newtype over a random [`uuid::Uuid`]: the struct (serialized as the bare UUID),
/// `new()` for a fresh one, `Default` (also fresh) and `Display` (the UUID). The derives every id
/// shares are added here; an id that also needs ordering or an OpenAPI schema names those in its
/// own `#[derive(..)]`.
macro_rules! uuid_id {
    ($(#[$meta:meta])* $vis:vis struct $name:ident;) => {
        $(#[$meta])*
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq, Hash, ::serde::Serialize, ::serde::Deserialize,
        )]
        #[serde(transparent)]
        $vis struct $name(pub ::uuid::Uuid);

        impl $name {
            /// A fresh random id.
            #[must_use]
            pub fn new() -> Self {
                Self(::uuid::Uuid::new_v4())
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, formatter: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                ::std::fmt::Display::fmt(&self.0, formatter)
            }
        }
    };
}

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
