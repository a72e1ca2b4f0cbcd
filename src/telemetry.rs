//! Tracing setup: one subscriber for the process, filtered by `TESSERA_LOG`; the `/metrics`
//! exposition lives in [`metrics`].

pub mod metrics;

use tracing::{level_filters::LevelFilter, Subscriber};
use tracing_subscriber::{
    filter::{FilterExt, Targets},
    layer::{Filter, SubscriberExt},
    registry::LookupSpan,
    util::SubscriberInitExt,
    EnvFilter, Layer,
};

/// Installs the global subscriber. Safe to call more than once (later calls do nothing).
pub fn init(filter: &str) {
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_target(false)
                .with_filter(log_filter(filter)),
        )
        .try_init();
}

/// What the log keeps: `directives` (`TESSERA_LOG`; `info` when they do not parse), with the
/// MCP SDK (`rmcp`) never above `info` whatever they say — its debug and trace lines dump
/// whole JSON-RPC messages, and an `ask_person` result carries a page link, which must never
/// reach a log (ARCHITECTURE.md, invariant 9).
pub fn log_filter<S>(directives: &str) -> impl Filter<S>
where
    S: Subscriber + for<'span> LookupSpan<'span>,
{
    let filter = EnvFilter::try_new(directives).unwrap_or_else(|_| EnvFilter::new("info"));
    filter.and(
        Targets::new()
            .with_default(LevelFilter::TRACE)
            .with_target("rmcp", LevelFilter::INFO),
    )
}
