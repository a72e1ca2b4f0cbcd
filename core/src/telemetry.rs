//! Tracing setup: one subscriber for the process, filtered by `TESSERA_LOG`, writing coloured
//! text for a terminal or, with `TESSERA_LOG_FORMAT=json`, one JSON object per line
//! ([`json`]); the `/metrics` exposition lives in [`metrics`].

pub mod json;
pub mod metrics;

use std::{fmt, str::FromStr};

use tracing::{level_filters::LevelFilter, Subscriber};
use tracing_subscriber::{
    filter::{FilterExt, Targets},
    layer::{Filter, SubscriberExt},
    registry::LookupSpan,
    util::SubscriberInitExt,
    EnvFilter, Layer,
};

/// How log lines are written (`TESSERA_LOG_FORMAT`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable text, coloured on a terminal.
    #[default]
    Text,
    /// One JSON object per line, for a log shipper.
    Json,
}

impl FromStr for LogFormat {
    type Err = String;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        match raw.trim().to_ascii_lowercase().as_str() {
            "text" => Ok(Self::Text),
            "json" => Ok(Self::Json),
            _ => Err(format!("`{raw}` is not text or json")),
        }
    }
}

impl fmt::Display for LogFormat {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            Self::Text => "text",
            Self::Json => "json",
        })
    }
}

/// Installs the global subscriber. Safe to call more than once (later calls do nothing).
pub fn init(filter: &str, format: LogFormat) {
    let registry = tracing_subscriber::registry();
    let _ = match format {
        LogFormat::Text => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .with_target(false)
                    .with_filter(log_filter(filter)),
            )
            .try_init(),
        LogFormat::Json => registry
            .with(json::JsonLayer::new(std::io::stdout).with_filter(log_filter(filter)))
            .try_init(),
    };
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
