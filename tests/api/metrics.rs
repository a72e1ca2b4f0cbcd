//! `GET /metrics`: Prometheus text that moves with what the server does.

use std::collections::BTreeMap;

use anyhow::{ensure, Context as _};
use serde_json::{json, Value};
use tessera::{
    agent::generation::{GenerationOutcome, GenerationRecord},
    store::{metrics::LATENCY_BOUNDS_MS, now_ms, Store},
    workflow::run::{NewRun, RunStatus},
};

use crate::helpers::{spawn_app, store_contract, TestApp};

store_contract!(the_stores_figures_count_runs_generations_tokens_latency_and_cache_hits);

fn generation(
    provider: &str,
    outcome: GenerationOutcome,
    latency_ms: i64,
    cache_hit: bool,
) -> GenerationRecord {
    GenerationRecord {
        id: uuid::Uuid::new_v4(),
        model: "m".into(),
        provider: provider.into(),
        prompt_hash: "ab".repeat(32),
        outcome,
        turns: 2,
        tokens_in: if cache_hit { 0 } else { 1000 },
        tokens_out: if cache_hit { 0 } else { 200 },
        latency_ms,
        cache_hit,
        cache_lookup: Some(if cache_hit {
            tessera::agent::cache::CacheLookup::Hit
        } else {
            tessera::agent::cache::CacheLookup::Miss
        }),
        transcript: json!([]),
        tree: None,
        created_at_ms: now_ms(),
    }
}

async fn the_stores_figures_count_runs_generations_tokens_latency_and_cache_hits(
    store: &Store,
) -> anyhow::Result<()> {
    for status in [RunStatus::Ready, RunStatus::Ready, RunStatus::Waiting] {
        store
            .create_run(&NewRun {
                workflow: "w".into(),
                state: json!({}),
                status,
            })
            .await?;
    }
    for record in [
        generation("openai", GenerationOutcome::Ok, 300, false),
        generation("openai", GenerationOutcome::Ok, 4_000, false),
        generation("openai", GenerationOutcome::FellBack, 90_000, false),
        generation("openai", GenerationOutcome::Ok, 1, true),
        generation("heuristic", GenerationOutcome::Ok, 2, false),
    ] {
        store.insert_generation(&record).await?;
    }
    let figures = store.metrics_figures().await?;
    assert_eq!(figures.runs_by_status.get("ready"), Some(&2));
    assert_eq!(figures.runs_by_status.get("waiting"), Some(&1));
    assert_eq!(figures.runs_by_status.get("failed"), None);
    assert_eq!(
        figures
            .generations
            .get(&("openai".to_owned(), "ok".to_owned())),
        Some(&3),
        "a cache hit is still a generation"
    );
    assert_eq!(
        figures
            .generations
            .get(&("openai".to_owned(), "fell_back".to_owned())),
        Some(&1)
    );
    assert_eq!(figures.cache_hits, 1);
    let openai = figures.providers.get("openai").context("openai figures")?;
    assert_eq!((openai.tokens_in, openai.tokens_out), (3000, 600));
    assert_eq!(openai.generations, 3, "cache hits are not model calls");
    assert_eq!(openai.latency_sum_ms, 94_300);
    // Bounds 100, 250, 500, 1000, 2500, 5000, …, 60000 ms: 300 ms falls in the third bucket,
    // 4 s in the sixth, 90 s in none (only +Inf).
    assert_eq!(LATENCY_BOUNDS_MS.len(), openai.latency_buckets.len());
    assert_eq!(openai.latency_buckets, vec![0, 0, 1, 1, 1, 2, 2, 2, 2]);
    let heuristic = figures
        .providers
        .get("heuristic")
        .context("heuristic figures")?;
    assert_eq!(heuristic.latency_buckets[0], 1);
    Ok(())
}

/// Reads `/metrics` (no credentials) and parses every sample line into series → value, checking
/// the text as a scraper would: each sample's family was declared with `# TYPE` first.
async fn scrape(app: &TestApp) -> anyhow::Result<BTreeMap<String, f64>> {
    let response = app.get("/metrics").await?;
    ensure!(
        response.status() == 200,
        "/metrics answered {}",
        response.status()
    );
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    ensure!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "exposition content type, got {content_type}"
    );
    let text = response.text().await?;
    let mut declared = Vec::new();
    let mut samples = BTreeMap::new();
    for line in text.lines() {
        if let Some(declaration) = line.strip_prefix("# TYPE ") {
            let (family, kind) = declaration
                .split_once(' ')
                .context("a TYPE line names a kind")?;
            ensure!(
                ["counter", "gauge", "histogram"].contains(&kind),
                "unknown kind in {line}"
            );
            declared.push(family.to_owned());
            continue;
        }
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').context("a sample has a value")?;
        let value: f64 = value
            .parse()
            .with_context(|| format!("the value of {line} is a number"))?;
        let name = series.split('{').next().unwrap_or(series);
        ensure!(
            declared.iter().any(|family| name == family
                || ["_bucket", "_sum", "_count"]
                    .iter()
                    .any(|suffix| name.strip_suffix(suffix) == Some(family.as_str()))),
            "{name} was not declared before its samples"
        );
        ensure!(
            samples.insert(series.to_owned(), value).is_none(),
            "{series} twice"
        );
    }
    Ok(samples)
}

fn value(samples: &BTreeMap<String, f64>, series: &str) -> f64 {
    samples.get(series).copied().unwrap_or(0.0)
}

#[tokio::test]
async fn metrics_count_requests_by_route_runs_steps_and_generations() -> anyhow::Result<()> {
    let app = spawn_app().await?;
    let before = scrape(&app).await?;

    for _ in 0..2 {
        assert_eq!(app.get("/healthz").await?.status(), 200);
    }
    let secret_looking = "/p/not-a-real-token-0123456789";
    assert_eq!(app.get(secret_looking).await?.status(), 404);
    let started: Value = app
        .api_post("/api/runs", &serde_json::json!({"workflow": "dashboard"}))
        .await?
        .json()
        .await?;
    let id = started["id"].as_str().context("a run id")?.to_owned();
    app.wait_for_status(&id, "succeeded").await?;

    let after = scrape(&app).await?;
    let healthz = r#"tessera_http_request_duration_seconds_count{method="GET",route="/healthz",status="2xx"}"#;
    assert_eq!(value(&after, healthz) - value(&before, healthz), 2.0);
    assert_eq!(
        value(
            &after,
            r#"tessera_http_request_duration_seconds_bucket{method="GET",route="/healthz",status="2xx",le="+Inf"}"#
        ),
        value(&after, healthz),
        "the +Inf bucket holds every request"
    );
    let link = r#"tessera_http_request_duration_seconds_count{method="GET",route="/p/{token}",status="4xx"}"#;
    assert_eq!(
        value(&after, link),
        1.0,
        "the unknown link is counted under its template"
    );
    assert!(
        after
            .keys()
            .all(|series| !series.contains("not-a-real-token")),
        "raw paths never become labels"
    );
    assert_eq!(value(&after, r#"tessera_runs{status="succeeded"}"#), 1.0);
    assert_eq!(value(&before, r#"tessera_runs{status="succeeded"}"#), 0.0);
    assert!(
        value(&after, "tessera_steps_succeeded_total") >= 2.0,
        "the dashboard's two steps ran"
    );
    let generations: f64 = after
        .iter()
        .filter(|(series, _)| {
            series.starts_with("tessera_generations_total{provider=\"heuristic\"")
        })
        .map(|(_, count)| count)
        .sum();
    assert!(
        generations >= 1.0,
        "the dashboard page was generated: {after:#?}"
    );
    assert!(
        after.contains_key(r#"tessera_generation_duration_seconds_count{provider="heuristic"}"#)
            || value(&after, "tessera_page_cache_hits_total") >= 1.0
    );
    Ok(())
}
