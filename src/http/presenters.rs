//! Presenters: domain values turned into the view models and JSON bodies the handlers answer.
//!
//! Pure functions, no I/O: a handler fetches through the domain, a presenter shapes the result
//! (`tessera_app` view structs, `serde_json` bodies), the handler renders or returns it. Nothing
//! here decides anything a domain function would (no rule, no store call).

pub mod chat;
pub mod runs;
