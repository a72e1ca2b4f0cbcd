//! Generated pages: the single-use links a person opens, and their lifecycle.
//!
//! A page is `open` until it is submitted (exactly once) or revoked; past its expiry it is
//! expired whatever its stored status. Only the SHA-256 of a link's token is stored.

pub mod component_set;
pub mod csrf;
pub mod groups;
pub use tessera_store::records::history;
pub use tessera_store::records::inbox;
pub mod lifecycle;
pub mod links;
pub use tessera_store::records::page;
pub mod people;
pub mod preview;
pub mod receipt;
pub mod render_ctx;
pub mod submission;
pub mod timers;
pub use tessera_store::records::token;
