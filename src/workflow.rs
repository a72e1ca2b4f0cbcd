//! Durable workflow runs: their identity, status and state.
//!
//! Runs live in the database, never only in memory, so any server process can resume one.

pub mod run;
