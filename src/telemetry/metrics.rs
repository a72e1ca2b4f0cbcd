//! Prometheus text exposition for `GET /metrics`: request latency histograms kept by this
//! process, plus figures read at scrape time (runs by status, generations, model tokens and
//! latency, page-cache hits from the store; steps from this process's runner).
//!
//! Hand-written rather than the `metrics` crates: a few counters and histograms with fixed
//! buckets are all we expose, and the store-derived figures are computed per scrape anyway.
//! Request labels use the route *template* (`/p/{token}`), never the raw path, so page tokens
//! never reach the exposition and label sets stay bounded; requests no route matched share
//! `route="unmatched"`, and methods outside the standard set share `method="other"` (a client
//! may send any token as a method, and each new label would be kept for the process's life).

use std::{collections::BTreeMap, fmt::Write as _, sync::Mutex, time::Duration};

use crate::store::{
    metrics::{StoreFigures, LATENCY_BOUNDS_MS},
    records::{page::PageStatus, page_cache::CacheLookup, run::RunStatus},
};

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

/// A cumulative histogram with fixed upper bounds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    /// Observations at or under each bound, in the bounds' order.
    pub buckets: Vec<u64>,
    /// Sum of the observed values.
    pub sum: f64,
    /// Number of observations.
    pub count: u64,
}

impl Histogram {
    fn observe(&mut self, bounds: &[f64], value: f64) {
        if self.buckets.len() != bounds.len() {
            self.buckets = vec![0; bounds.len()];
        }
        for (bucket, bound) in self.buckets.iter_mut().zip(bounds) {
            if value <= *bound {
                *bucket += 1;
            }
        }
        self.sum += value;
        self.count += 1;
    }
}

/// The labels a request is counted under.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct RequestKey {
    method: &'static str,
    route: String,
    status: &'static str,
}

/// What this process measured of its HTTP requests.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<RequestKey, Histogram>>,
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
        let key = RequestKey {
            method: method_label(method),
            route: route.to_owned(),
            status: status_class(status),
        };
        self.requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(key)
            .or_default()
            .observe(&REQUEST_BUCKETS, elapsed.as_secs_f64());
    }

    fn requests(&self) -> BTreeMap<RequestKey, Histogram> {
        self.requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// Writes the exposition: one `# HELP`/`# TYPE` pair per family, then its samples.
struct Exposition(String);

impl Exposition {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.0, "# HELP {name} {help}");
        let _ = writeln!(self.0, "# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        self.0.push_str(name);
        if !labels.is_empty() {
            self.0.push('{');
            for (index, (label, text)) in labels.iter().enumerate() {
                if index > 0 {
                    self.0.push(',');
                }
                let _ = write!(self.0, "{label}=\"{}\"", escape_label(text));
            }
            self.0.push('}');
        }
        let _ = writeln!(self.0, " {value}");
    }

    fn histogram(
        &mut self,
        name: &str,
        labels: &[(&str, &str)],
        bounds: &[f64],
        histogram: &Histogram,
    ) {
        let bucket = format!("{name}_bucket");
        for (bound, count) in bounds.iter().zip(&histogram.buckets) {
            let le = bound.to_string();
            let mut with_le = labels.to_vec();
            with_le.push(("le", &le));
            self.sample(&bucket, &with_le, *count as f64);
        }
        let mut with_inf = labels.to_vec();
        with_inf.push(("le", "+Inf"));
        self.sample(&bucket, &with_inf, histogram.count as f64);
        self.sample(&format!("{name}_sum"), labels, histogram.sum);
        self.sample(&format!("{name}_count"), labels, histogram.count as f64);
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

/// Label values escape backslash, double quote and newline (the exposition format's rule).
fn escape_label(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The whole exposition: this process's requests and runner, and the store's figures.
#[must_use]
pub fn render(metrics: &Metrics, runner: Option<DrainReport>, store: &StoreFigures) -> String {
    let mut out = Exposition(String::new());

    out.family(
        "tessera_http_request_duration_seconds",
        "histogram",
        "HTTP request latency by method, route template and status class (this process).",
    );
    for (key, histogram) in metrics.requests() {
        out.histogram(
            "tessera_http_request_duration_seconds",
            &[
                ("method", key.method),
                ("route", &key.route),
                ("status", key.status),
            ],
            &REQUEST_BUCKETS,
            &histogram,
        );
    }

    out.family(
        "tessera_runs",
        "gauge",
        "Workflow runs by status (whole database).",
    );
    for status in RunStatus::ALL {
        let count = store
            .runs_by_status
            .get(status.as_str())
            .copied()
            .unwrap_or(0);
        out.sample("tessera_runs", &[("status", status.as_str())], count as f64);
    }

    out.family(
        "tessera_pages",
        "gauge",
        "Page links by stored status: open (expired ones included until answered or revoked), submitted, revoked (whole database).",
    );
    for status in PageStatus::ALL {
        let count = store
            .pages_by_status
            .get(status.as_str())
            .copied()
            .unwrap_or(0);
        out.sample(
            "tessera_pages",
            &[("status", status.as_str())],
            count as f64,
        );
    }

    let runner = runner.unwrap_or_default();
    for (name, help, value) in [
        (
            "tessera_runs_claimed_total",
            "Runs claimed by this process's runner (a resumed run counts again).",
            runner.runs_claimed,
        ),
        (
            "tessera_steps_started_total",
            "Step attempts started by this process's runner.",
            runner.steps_started,
        ),
        (
            "tessera_steps_succeeded_total",
            "Steps finished and committed by this process's runner.",
            runner.steps_succeeded,
        ),
        (
            "tessera_steps_retried_total",
            "Step attempts that failed and were scheduled again (this process).",
            runner.steps_retried,
        ),
        (
            "tessera_runs_failed_total",
            "Runs failed for good by this process's runner.",
            runner.runs_failed,
        ),
    ] {
        out.family(name, "counter", help);
        out.sample(name, &[], value as f64);
    }

    out.family(
        "tessera_generations_total",
        "counter",
        "Page generations by provider and outcome (whole database).",
    );
    for ((provider, outcome), count) in &store.generations {
        out.sample(
            "tessera_generations_total",
            &[("provider", provider), ("outcome", outcome)],
            *count as f64,
        );
    }
    out.family(
        "tessera_model_tokens_total",
        "counter",
        "Model tokens by provider and direction (whole database).",
    );
    for (provider, figures) in &store.providers {
        out.sample(
            "tessera_model_tokens_total",
            &[("provider", provider), ("direction", "in")],
            figures.tokens_in as f64,
        );
        out.sample(
            "tessera_model_tokens_total",
            &[("provider", provider), ("direction", "out")],
            figures.tokens_out as f64,
        );
    }
    out.family(
        "tessera_generation_duration_seconds",
        "histogram",
        "Latency of generations that were not served from the page cache, by provider (whole database).",
    );
    let bounds: Vec<f64> = LATENCY_BOUNDS_MS
        .iter()
        .map(|ms| *ms as f64 / 1000.0)
        .collect();
    for (provider, figures) in &store.providers {
        let latency = Histogram {
            buckets: figures
                .latency_buckets
                .iter()
                .map(|count| u64::try_from(*count).unwrap_or(0))
                .collect(),
            sum: figures.latency_sum_ms as f64 / 1000.0,
            count: u64::try_from(figures.generations).unwrap_or(0),
        };
        out.histogram(
            "tessera_generation_duration_seconds",
            &[("provider", provider)],
            &bounds,
            &latency,
        );
    }
    out.family(
        "tessera_page_cache_hits_total",
        "counter",
        "Generations served from the page cache (whole database).",
    );
    out.sample(
        "tessera_page_cache_hits_total",
        &[],
        store.cache_hits as f64,
    );
    out.family(
        "tessera_page_cache_lookups_total",
        "counter",
        "Generations by what the page cache did: hit, miss, stale (a cached page no longer fitted the request, so the model ran), refresh, off (whole database).",
    );
    for lookup in CacheLookup::ALL {
        let count = store
            .cache_lookups
            .get(lookup.as_str())
            .copied()
            .unwrap_or(0);
        out.sample(
            "tessera_page_cache_lookups_total",
            &[("result", lookup.as_str())],
            count as f64,
        );
    }
    out.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_counted_by_route_template_and_status_class_in_cumulative_buckets() {
        let metrics = Metrics::default();
        metrics.observe_request("GET", "/p/{token}", 404, Duration::from_millis(3));
        metrics.observe_request("GET", "/p/{token}", 410, Duration::from_millis(30));
        let text = render(&metrics, None, &StoreFigures::default());
        assert!(text.contains(
            "tessera_http_request_duration_seconds_bucket{method=\"GET\",route=\"/p/{token}\",status=\"4xx\",le=\"0.005\"} 1\n"
        ), "{text}");
        assert!(text.contains(
            "tessera_http_request_duration_seconds_bucket{method=\"GET\",route=\"/p/{token}\",status=\"4xx\",le=\"+Inf\"} 2\n"
        ));
        assert!(text.contains(
            "tessera_http_request_duration_seconds_count{method=\"GET\",route=\"/p/{token}\",status=\"4xx\"} 2\n"
        ));
    }

    #[test]
    fn a_method_outside_the_standard_set_is_counted_as_other() {
        let metrics = Metrics::default();
        for method in ["FOO", "BREW", "get", "PROPFIND"] {
            metrics.observe_request(method, "unmatched", 405, Duration::from_millis(1));
        }
        metrics.observe_request("PATCH", "/api/runs", 405, Duration::from_millis(1));
        let text = render(&metrics, None, &StoreFigures::default());
        assert!(text.contains(
            "tessera_http_request_duration_seconds_count{method=\"other\",route=\"unmatched\",status=\"4xx\"} 4\n"
        ), "{text}");
        assert!(text.contains("method=\"PATCH\""), "{text}");
        assert!(!text.contains("FOO") && !text.contains("BREW"), "{text}");
        assert_eq!(method_label("FOO"), "other");
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
