//! Prometheus text exposition (format 0.0.4) for `GET /metrics`, written by `prometheus-client`:
//! request latency histograms kept by this process, plus figures read at scrape time (runs by
//! status, generations, model tokens and latency, page-cache hits from the store; steps from this
//! process's runner), which a per-scrape [`Collector`] encodes.
//!
//! Request labels use the route *template* (`/p/{token}`), never the raw path, so page tokens
//! never reach the exposition and label sets stay bounded; requests no route matched share
//! `route="unmatched"`, and methods outside the standard set share `method="other"` (a client
//! may send any token as a method, and each new label would be kept for the process's life).

use std::{collections::BTreeMap, fmt, time::Duration};

use prometheus_client::{
    collector::Collector,
    encoding::{prometheus_text, DescriptorEncoder, EncodeLabelSet, EncodeMetric as _, NoLabelSet},
    metrics::{
        counter::ConstCounter, family::Family, gauge::ConstGauge, histogram::Histogram, MetricType,
    },
    registry::Registry,
};

use crate::store::{
    metrics::{StoreFigures, LATENCY_BOUNDS_MS},
    records::{page::PageStatus, page_cache::CacheLookup, run::RunStatus},
};

/// The `Content-Type` of what [`render`] writes.
pub const CONTENT_TYPE: &str = prometheus_text::CONTENT_TYPE;

/// The methods counted under their own name; any other is `other`.
const STANDARD_METHODS: [&str; 7] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/// The `method` label of a request: its method when standard, else `other`.
#[must_use]
pub fn method_label(method: &str) -> &'static str {
    STANDARD_METHODS
        .into_iter()
        .find(|standard| *standard == method)
        .unwrap_or("other")
}

/// Upper bounds (seconds) of the request latency buckets.
const REQUEST_BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

/// The labels a request is counted under.
#[derive(Clone, Debug, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RequestLabels {
    method: &'static str,
    route: String,
    status: &'static str,
}

/// A request latency histogram with [`REQUEST_BUCKETS`].
fn request_histogram() -> Histogram {
    Histogram::new(REQUEST_BUCKETS)
}

/// What this process measured of its HTTP requests.
#[derive(Debug)]
pub struct Metrics {
    requests: Family<RequestLabels, Histogram, fn() -> Histogram>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            requests: Family::new_with_constructor(request_histogram),
        }
    }
}

/// `2xx`, `4xx`…: the status class a request is counted under.
fn status_class(status: u16) -> &'static str {
    match status {
        100..=199 => "1xx",
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        _ => "5xx",
    }
}

impl Metrics {
    /// Counts one answered request; `route` is the matched route's template (or `unmatched`),
    /// `method` is labelled by [`method_label`].
    pub fn observe_request(&self, method: &str, route: &str, status: u16, elapsed: Duration) {
        let labels = RequestLabels {
            method: method_label(method),
            route: route.to_owned(),
            status: status_class(status),
        };
        self.requests
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
    }
}

/// What `Runner::run_until_idle` did, or (from `Runner::stats`) what a runner did since it
/// was built — for logs and `/metrics`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrainReport {
    /// Runs claimed (a run resumed after a wait or a retry counts again).
    pub runs_claimed: u64,
    /// Step attempts started.
    pub steps_started: u64,
    /// Steps that finished and were committed.
    pub steps_succeeded: u64,
    /// Attempts that failed and will be retried.
    pub steps_retried: u64,
    /// Runs failed for good.
    pub runs_failed: u64,
}

impl DrainReport {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Self) {
        self.runs_claimed += other.runs_claimed;
        self.steps_started += other.steps_started;
        self.steps_succeeded += other.steps_succeeded;
        self.steps_retried += other.steps_retried;
        self.runs_failed += other.runs_failed;
    }
}

/// The figures read at scrape time, encoded as the registry is: the runner's counts since it
/// was built and the store's counters.
#[derive(Debug)]
struct Scraped {
    runner: DrainReport,
    store: StoreFigures,
}

/// Encodes one family of gauges or counters, a sample per label value.
fn labelled<'a>(
    encoder: &mut DescriptorEncoder,
    (name, help, kind): (&str, &str, MetricType),
    samples: impl IntoIterator<Item = (&'a [(&'a str, &'a str)], i64)>,
) -> fmt::Result {
    let mut family = encoder.encode_descriptor(name, help, None, kind)?;
    for (labels, value) in samples {
        let sample = family.encode_family(&labels)?;
        match kind {
            MetricType::Counter => {
                ConstCounter::new(u64::try_from(value).unwrap_or(0)).encode(sample)?;
            }
            _ => ConstGauge::new(value).encode(sample)?,
        }
    }
    Ok(())
}

/// Encodes a family with one label: a sample for each of its values, with the count the store
/// holds for it (a status never held counts 0, so every series exists from the first scrape).
fn one_label<'a>(
    encoder: &mut DescriptorEncoder,
    descriptor: (&str, &str, MetricType),
    (label, values): (&'a str, impl Iterator<Item = &'a str>),
    counts: &BTreeMap<String, i64>,
) -> fmt::Result {
    let samples: Vec<_> = values
        .map(|value| ([(label, value)], counts.get(value).copied().unwrap_or(0)))
        .collect();
    labelled(
        encoder,
        descriptor,
        samples.iter().map(|(labels, count)| (&labels[..], *count)),
    )
}

/// This process's runner's counters.
fn runner_counters(encoder: &mut DescriptorEncoder, runner: &DrainReport) -> fmt::Result {
    for (name, help, value) in [
        (
            "tessera_runs_claimed",
            "Runs claimed by this process's runner (a resumed run counts again).",
            runner.runs_claimed,
        ),
        (
            "tessera_steps_started",
            "Step attempts started by this process's runner.",
            runner.steps_started,
        ),
        (
            "tessera_steps_succeeded",
            "Steps finished and committed by this process's runner.",
            runner.steps_succeeded,
        ),
        (
            "tessera_steps_retried",
            "Step attempts that failed and were scheduled again (this process).",
            runner.steps_retried,
        ),
        (
            "tessera_runs_failed",
            "Runs failed for good by this process's runner.",
            runner.runs_failed,
        ),
    ] {
        let counter = ConstCounter::new(value);
        counter.encode(encoder.encode_descriptor(name, help, None, counter.metric_type())?)?;
    }
    Ok(())
}

/// The store's figures of page generations by provider: outcomes, tokens and latency.
fn model_figures(encoder: &mut DescriptorEncoder, store: &StoreFigures) -> fmt::Result {
    let generations: Vec<_> = store
        .generations
        .iter()
        .map(|((provider, outcome), count)| {
            (
                [
                    ("provider", provider.as_str()),
                    ("outcome", outcome.as_str()),
                ],
                *count,
            )
        })
        .collect();
    labelled(
        encoder,
        (
            "tessera_generations",
            "Page generations by provider and outcome (whole database).",
            MetricType::Counter,
        ),
        generations
            .iter()
            .map(|(labels, count)| (&labels[..], *count)),
    )?;
    let tokens: Vec<_> = store
        .providers
        .iter()
        .flat_map(|(provider, figures)| {
            [
                (
                    [("provider", provider.as_str()), ("direction", "in")],
                    figures.tokens_in,
                ),
                (
                    [("provider", provider.as_str()), ("direction", "out")],
                    figures.tokens_out,
                ),
            ]
        })
        .collect();
    labelled(
        encoder,
        (
            "tessera_model_tokens",
            "Model tokens by provider and direction (whole database).",
            MetricType::Counter,
        ),
        tokens.iter().map(|(labels, count)| (&labels[..], *count)),
    )?;
    let mut latency = encoder.encode_descriptor(
        "tessera_generation_duration_seconds",
        "Latency of generations that were not served from the page cache, by provider (whole database).",
        None,
        MetricType::Histogram,
    )?;
    for (provider, figures) in &store.providers {
        // The store counts each bound cumulatively; the encoder wants each bucket's own.
        let mut below = 0;
        let buckets: Vec<(f64, u64)> = LATENCY_BOUNDS_MS
            .iter()
            .zip(&figures.latency_buckets)
            .map(|(bound_ms, cumulative)| {
                let own = cumulative.saturating_sub(below);
                below = *cumulative;
                (*bound_ms as f64 / 1000.0, u64::try_from(own).unwrap_or(0))
            })
            .collect();
        latency
            .encode_family(&[("provider", provider.as_str())])?
            .encode_histogram::<NoLabelSet>(
                figures.latency_sum_ms as f64 / 1000.0,
                u64::try_from(figures.generations).unwrap_or(0),
                &buckets,
                None,
            )?;
    }
    Ok(())
}

impl Collector for Scraped {
    fn encode(&self, mut encoder: DescriptorEncoder) -> fmt::Result {
        let store = &self.store;
        one_label(
            &mut encoder,
            (
                "tessera_runs",
                "Workflow runs by status (whole database).",
                MetricType::Gauge,
            ),
            (
                "status",
                RunStatus::ALL.iter().map(|status| status.as_str()),
            ),
            &store.runs_by_status,
        )?;
        one_label(
            &mut encoder,
            (
                "tessera_pages",
                "Page links by stored status: open (expired ones included until answered or revoked), submitted, revoked (whole database).",
                MetricType::Gauge,
            ),
            ("status", PageStatus::ALL.iter().map(|status| status.as_str())),
            &store.pages_by_status,
        )?;
        runner_counters(&mut encoder, &self.runner)?;
        model_figures(&mut encoder, store)?;
        let hits = ConstCounter::new(u64::try_from(store.cache_hits).unwrap_or(0));
        hits.encode(encoder.encode_descriptor(
            "tessera_page_cache_hits",
            "Generations served from the page cache (whole database).",
            None,
            hits.metric_type(),
        )?)?;
        one_label(
            &mut encoder,
            (
                "tessera_page_cache_lookups",
                "Generations by what the page cache did: hit, miss, stale (a cached page no longer fitted the request, so the model ran), refresh, off (whole database).",
                MetricType::Counter,
            ),
            ("result", CacheLookup::ALL.iter().map(|lookup| lookup.as_str())),
            &store.cache_lookups,
        )
    }
}

/// The whole exposition: this process's requests and runner, and the store's figures.
///
/// # Errors
/// Only when the encoder refuses what it is given (writing into a `String` cannot fail).
pub fn render(
    metrics: &Metrics,
    runner: Option<DrainReport>,
    store: &StoreFigures,
) -> Result<String, fmt::Error> {
    let mut registry = Registry::default();
    registry.register(
        "tessera_http_request_duration_seconds",
        "HTTP request latency by method, route template and status class (this process)",
        metrics.requests.clone(),
    );
    registry.register_collector(Box::new(Scraped {
        runner: runner.unwrap_or_default(),
        store: store.clone(),
    }));
    let mut text = String::new();
    prometheus_text::encode(&mut text, &registry)?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_counted_by_route_template_and_status_class_in_cumulative_buckets(
    ) -> Result<(), fmt::Error> {
        let metrics = Metrics::default();
        metrics.observe_request("GET", "/p/{token}", 404, Duration::from_millis(3));
        metrics.observe_request("GET", "/p/{token}", 410, Duration::from_millis(30));
        let text = render(&metrics, None, &StoreFigures::default())?;
        assert!(text.contains(
            "tessera_http_request_duration_seconds_bucket{method=\"GET\",route=\"/p/{token}\",status=\"4xx\",le=\"0.005\"} 1\n"
        ), "{text}");
        assert!(text.contains(
            "tessera_http_request_duration_seconds_bucket{method=\"GET\",route=\"/p/{token}\",status=\"4xx\",le=\"+Inf\"} 2\n"
        ));
        assert!(text.contains(
            "tessera_http_request_duration_seconds_count{method=\"GET\",route=\"/p/{token}\",status=\"4xx\"} 2\n"
        ));
        Ok(())
    }

    #[test]
    fn a_method_outside_the_standard_set_is_counted_as_other() -> Result<(), fmt::Error> {
        let metrics = Metrics::default();
        for method in ["FOO", "BREW", "get", "PROPFIND"] {
            metrics.observe_request(method, "unmatched", 405, Duration::from_millis(1));
        }
        metrics.observe_request("PATCH", "/api/runs", 405, Duration::from_millis(1));
        let text = render(&metrics, None, &StoreFigures::default())?;
        assert!(text.contains(
            "tessera_http_request_duration_seconds_count{method=\"other\",route=\"unmatched\",status=\"4xx\"} 4\n"
        ), "{text}");
        assert!(text.contains("method=\"PATCH\""), "{text}");
        assert!(!text.contains("FOO") && !text.contains("BREW"), "{text}");
        assert_eq!(method_label("FOO"), "other");
        Ok(())
    }

    #[test]
    fn the_stores_cumulative_latency_counts_are_exposed_cumulatively_with_counters_as_totals(
    ) -> Result<(), fmt::Error> {
        let mut store = StoreFigures::default();
        store.providers.insert(
            "openai".to_owned(),
            crate::store::metrics::ProviderFigures {
                tokens_in: 7,
                tokens_out: 5,
                // 300 ms, 4 s and 90 s: the third bound, the sixth, and only +Inf.
                latency_buckets: vec![0, 0, 1, 1, 1, 2, 2, 2, 2],
                latency_sum_ms: 94_300,
                generations: 3,
            },
        );
        store.cache_hits = 4;
        let runner = DrainReport {
            steps_succeeded: 2,
            ..DrainReport::default()
        };
        let text = render(&Metrics::default(), Some(runner), &store)?;
        for line in [
            "tessera_generation_duration_seconds_bucket{provider=\"openai\",le=\"0.25\"} 0\n",
            "tessera_generation_duration_seconds_bucket{provider=\"openai\",le=\"0.5\"} 1\n",
            "tessera_generation_duration_seconds_bucket{provider=\"openai\",le=\"5\"} 2\n",
            "tessera_generation_duration_seconds_bucket{provider=\"openai\",le=\"60\"} 2\n",
            "tessera_generation_duration_seconds_bucket{provider=\"openai\",le=\"+Inf\"} 3\n",
            "tessera_generation_duration_seconds_sum{provider=\"openai\"} 94.3\n",
            "tessera_model_tokens_total{provider=\"openai\",direction=\"out\"} 5\n",
            "# TYPE tessera_steps_succeeded_total counter\n",
            "tessera_steps_succeeded_total 2\n",
            "tessera_page_cache_hits_total 4\n",
            "tessera_runs{status=\"ready\"} 0\n",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
        Ok(())
    }

    #[test]
    fn label_values_are_escaped() -> Result<(), fmt::Error> {
        let metrics = Metrics::default();
        metrics.observe_request("GET", "a\"b\\c\nd", 200, Duration::from_millis(1));
        let text = render(&metrics, None, &StoreFigures::default())?;
        assert!(text.contains("route=\"a\\\"b\\\\c\\nd\""), "{text}");
        Ok(())
    }
}
