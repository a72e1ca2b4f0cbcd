//! Figures for `/metrics`, read from `metric_counters` at scrape time: runs and pages by status,
//! generations by provider and outcome, model tokens and latency, page-cache hits and lookups by
//! result.
//!
//! Reading them from the store (rather than counting in memory) makes them cover every process
//! sharing the database and survive restarts (DESIGN.md §13). They are not counted at scrape
//! time: triggers on `runs`, `pages` and `generations` keep `metric_counters` in the very
//! statement that changes a counted row (migration `20261128150000_metric_counters`), so a
//! scrape reads one small table — a row per label and shard — whatever the size of the others.
//! Run and page statuses are gauges (a status change moves one from the old to the new); the
//! generation figures are counters that only grow (deleting old generations takes nothing back).

use std::collections::BTreeMap;

use super::{Result, Store};

/// Upper bounds (milliseconds) of the generation latency buckets. The triggers of migration
/// `20261128150000_metric_counters` file each generation under the first bound it fits; change
/// both together.
pub const LATENCY_BOUNDS_MS: [i64; 9] =
    [100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000];

/// A provider's model figures, over generations not served from the page cache.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProviderFigures {
    /// Prompt tokens.
    pub tokens_in: i64,
    /// Completion tokens.
    pub tokens_out: i64,
    /// Generations at or under each of [`LATENCY_BOUNDS_MS`], in order (cumulative).
    pub latency_buckets: Vec<i64>,
    /// Sum of their latencies, in milliseconds.
    pub latency_sum_ms: i64,
    /// How many generations the latency figures cover.
    pub generations: i64,
}

/// Everything `/metrics` reads from the store.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoreFigures {
    /// Runs per stored status (`ready`, `waiting`…); statuses never held are absent.
    pub runs_by_status: BTreeMap<String, i64>,
    /// Pages per stored status (`open`, `submitted`, `revoked`); statuses never held are absent.
    pub pages_by_status: BTreeMap<String, i64>,
    /// Generations per (provider, outcome).
    pub generations: BTreeMap<(String, String), i64>,
    /// Model figures per provider.
    pub providers: BTreeMap<String, ProviderFigures>,
    /// Generations served from the page cache.
    pub cache_hits: i64,
    /// Generations per page-cache result (`hit`, `miss`, `stale`, `refresh`, `off`); generations
    /// recorded before the result was kept are absent.
    pub cache_lookups: BTreeMap<String, i64>,
}

/// The shards summed: the table holds a few rows per label, never one per counted row.
const COUNTERS_SQL: &str = "SELECT metric, label, label2, CAST(SUM(value) AS BIGINT) AS value \
     FROM metric_counters GROUP BY metric, label, label2";

/// One counter, whichever driver read it.
#[derive(sqlx::FromRow)]
struct CounterRow {
    metric: String,
    label: String,
    label2: String,
    value: i64,
}

impl StoreFigures {
    fn add(&mut self, row: CounterRow) {
        let CounterRow {
            metric,
            label,
            label2,
            value,
        } = row;
        match metric.as_str() {
            "runs" => *self.runs_by_status.entry(label).or_default() += value,
            "pages" => *self.pages_by_status.entry(label).or_default() += value,
            "generations" => *self.generations.entry((label, label2)).or_default() += value,
            "cache_hits" => self.cache_hits += value,
            "cache_lookups" => *self.cache_lookups.entry(label).or_default() += value,
            "model_calls" => self.provider(label).generations += value,
            "tokens_in" => self.provider(label).tokens_in += value,
            "tokens_out" => self.provider(label).tokens_out += value,
            "latency_ms" => self.provider(label).latency_sum_ms += value,
            "latency_bucket" => {
                let provider = self.provider(label);
                // Stored per bucket; exposed cumulatively: a generation counts under its own
                // bound and every larger one (`+Inf` is the provider's count).
                for (total, bound) in provider.latency_buckets.iter_mut().zip(LATENCY_BOUNDS_MS) {
                    if label2.parse::<i64>().is_ok_and(|upper| upper <= bound) {
                        *total += value;
                    }
                }
            }
            // A counter a newer release added: this one does not show it.
            _ => {}
        }
    }

    fn provider(&mut self, provider: String) -> &mut ProviderFigures {
        let figures = self.providers.entry(provider).or_default();
        figures.latency_buckets.resize(LATENCY_BOUNDS_MS.len(), 0);
        figures
    }
}

impl Store {
    /// Reads the figures `/metrics` exposes: one read of the counters, whatever the number of
    /// runs, pages and generations.
    ///
    /// # Errors
    /// Database failures.
    pub async fn metrics_figures(&self) -> Result<StoreFigures> {
        let rows: Vec<CounterRow> = on_pool!(self, |pool| {
            sqlx::query_as(COUNTERS_SQL).fetch_all(pool).await?
        });
        let mut figures = StoreFigures::default();
        for row in rows {
            figures.add(row);
        }
        Ok(figures)
    }
}
