//! Figures for `/metrics` read from the database at scrape time: runs by status, generations by
//! provider and outcome, model tokens and latency, page-cache hits and lookups by result.
//!
//! Reading them from the store (rather than counting in memory) makes them cover every process
//! sharing the database and survive restarts (DESIGN.md §13). The SQL is plain aggregates with
//! explicit casts that both dialects read the same way, so there are no dialect files here. The
//! cost grows with the `generations` table; a scrape every 15–60 s is what it is meant for.

use std::collections::BTreeMap;

use super::{Result, Store};

/// Upper bounds (milliseconds) of the generation latency buckets.
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
    /// Runs per stored status (`ready`, `waiting`…); statuses without runs are absent.
    pub runs_by_status: BTreeMap<String, i64>,
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

fn generations_sql() -> String {
    let buckets: String = LATENCY_BOUNDS_MS
        .iter()
        .enumerate()
        .map(|(index, bound)| {
            format!(
                ", CAST(COALESCE(SUM(CASE WHEN latency_ms <= {bound} THEN 1 ELSE 0 END), 0) AS BIGINT) AS le_{index}"
            )
        })
        .collect();
    format!(
        "SELECT provider, outcome, cache_hit, COUNT(*) AS generations, \
         CAST(COALESCE(SUM(tokens_in), 0) AS BIGINT) AS tokens_in, \
         CAST(COALESCE(SUM(tokens_out), 0) AS BIGINT) AS tokens_out, \
         CAST(COALESCE(SUM(latency_ms), 0) AS BIGINT) AS latency_ms{buckets} \
         FROM generations GROUP BY provider, outcome, cache_hit"
    )
}

const RUNS_SQL: &str = "SELECT status, COUNT(*) AS runs FROM runs GROUP BY status";

const LOOKUPS_SQL: &str = "SELECT cache_lookup, COUNT(*) AS generations FROM generations \
     WHERE cache_lookup IS NOT NULL GROUP BY cache_lookup";

/// One aggregate row, whichever driver read it.
struct GenerationGroup {
    provider: String,
    outcome: String,
    cache_hit: bool,
    generations: i64,
    tokens_in: i64,
    tokens_out: i64,
    latency_ms: i64,
    buckets: Vec<i64>,
}

/// Reads one row of `generations_sql`, by column position (the same in both dialects).
fn group<'r, R>(row: &'r R) -> std::result::Result<GenerationGroup, sqlx::Error>
where
    R: sqlx::Row,
    usize: sqlx::ColumnIndex<R>,
    String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    bool: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let mut buckets = Vec::with_capacity(LATENCY_BOUNDS_MS.len());
    for index in 0..LATENCY_BOUNDS_MS.len() {
        buckets.push(row.try_get::<i64, _>(7 + index)?);
    }
    Ok(GenerationGroup {
        provider: row.try_get(0)?,
        outcome: row.try_get(1)?,
        cache_hit: row.try_get(2)?,
        generations: row.try_get(3)?,
        tokens_in: row.try_get(4)?,
        tokens_out: row.try_get(5)?,
        latency_ms: row.try_get(6)?,
        buckets,
    })
}

/// Reads one row of [`RUNS_SQL`] or [`LOOKUPS_SQL`]: a label and a count.
fn status_count<'r, R>(row: &'r R) -> std::result::Result<(String, i64), sqlx::Error>
where
    R: sqlx::Row,
    usize: sqlx::ColumnIndex<R>,
    String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    Ok((row.try_get(0)?, row.try_get(1)?))
}

impl Store {
    /// Reads the figures `/metrics` exposes.
    ///
    /// # Errors
    /// Database failures.
    pub async fn metrics_figures(&self) -> Result<StoreFigures> {
        let sql = generations_sql();
        let (runs, lookups, groups) = on_pool!(self, |pool| {
            let runs = sqlx::query(RUNS_SQL).fetch_all(pool).await?;
            let groups = sqlx::query(&sql).fetch_all(pool).await?;
            let lookups = sqlx::query(LOOKUPS_SQL).fetch_all(pool).await?;
            (
                runs.iter()
                    .map(status_count)
                    .collect::<std::result::Result<Vec<_>, _>>()?,
                lookups
                    .iter()
                    .map(status_count)
                    .collect::<std::result::Result<Vec<_>, _>>()?,
                groups
                    .iter()
                    .map(group)
                    .collect::<std::result::Result<Vec<_>, _>>()?,
            )
        });
        let mut figures = StoreFigures {
            runs_by_status: runs.into_iter().collect(),
            cache_lookups: lookups.into_iter().collect(),
            ..StoreFigures::default()
        };
        for group in groups {
            *figures
                .generations
                .entry((group.provider.clone(), group.outcome))
                .or_default() += group.generations;
            if group.cache_hit {
                figures.cache_hits += group.generations;
                continue;
            }
            let provider = figures.providers.entry(group.provider).or_default();
            provider.tokens_in += group.tokens_in;
            provider.tokens_out += group.tokens_out;
            provider.latency_sum_ms += group.latency_ms;
            provider.generations += group.generations;
            provider.latency_buckets.resize(LATENCY_BOUNDS_MS.len(), 0);
            for (total, count) in provider.latency_buckets.iter_mut().zip(group.buckets) {
                *total += count;
            }
        }
        Ok(figures)
    }
}
