//! Tracing setup: one subscriber for the process, filtered by `TESSERA_LOG`; the `/metrics`
//! exposition lives in [`metrics`].

pub mod metrics;

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. Safe to call more than once (later calls do nothing).
pub fn init(filter: &str) {
    let filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .try_init();
}
