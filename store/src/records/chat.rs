//! A chat session's records: the session and its transcript, micro-threads, confirmations,
//! grants and the audit of every call.

pub mod audit;
pub mod confirm;
pub mod header;
pub mod policy;
pub mod scope;
pub mod session;
pub mod threads;

pub use session::SessionId;
