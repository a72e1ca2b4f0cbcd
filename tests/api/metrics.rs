//! `GET /metrics`: Prometheus text that moves with what the server does.

use std::collections::BTreeMap;

use anyhow::{ensure, Context as _};
use axum::{
    body::{to_bytes, Body},
    http::{header, Request, StatusCode},
};
use serde_json::{json, Value};
use tessera::{
    agent::generation::{GenerationOutcome, GenerationRecord},
    config::Secret,
    store::{metrics::LATENCY_BOUNDS_MS, now_ms, pages::PageChange, Store},
    workflow::run::{NewRun, RunId, RunStatus},
};
use tower::ServiceExt as _;

use crate::{
    asks::{create, submit},
    helpers::{store_contract, Backend, TestApp, API_TOKEN},
};

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
    let app = TestApp::builder().spawn().await?;
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

const METRICS_TOKEN: &str = "scrape-0123456789abcdef";

#[tokio::test]
async fn without_a_token_metrics_answer_loopback_only_and_never_behind_a_proxy(
) -> anyhow::Result<()> {
    // The router without a server has no connection: the client is nobody on loopback.
    let app = TestApp::builder().router().await?;
    let stranger = Request::get("/metrics").body(Body::empty())?;
    let response = app.router.clone().oneshot(stranger).await?;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);

    let spawned = TestApp::builder().spawn().await?;
    assert_eq!(
        spawned.get("/metrics").await?.status(),
        200,
        "a scraper on loopback"
    );
    let proxied = TestApp::builder()
        .config(|config| config.behind_proxy = true)
        .spawn()
        .await?;
    // Behind a proxy every request arrives over the proxy's connection, loopback here.
    let response = proxied.get("/metrics").await?;
    assert_eq!(response.status(), 403);
    let body: Value = response.json().await?;
    assert_eq!(body["error"]["code"], "metrics_token_required");
    Ok(())
}

#[tokio::test]
async fn with_a_token_metrics_need_it_from_everyone_and_not_the_api_token() -> anyhow::Result<()> {
    let app = TestApp::builder()
        .config(|config| {
            config.behind_proxy = true;
            config.access.metrics_token = Some(Secret::new(METRICS_TOKEN));
        })
        .spawn()
        .await?;
    let scrape_with = |token: &str| {
        app.client
            .get(app.url("/metrics"))
            .header("x-forwarded-for", "203.0.113.9")
            .bearer_auth(token)
            .send()
    };
    assert_eq!(scrape_with(METRICS_TOKEN).await?.status(), 200);
    let wrong = scrape_with(API_TOKEN).await?;
    assert_eq!(wrong.status(), 401);
    assert_eq!(
        wrong
            .headers()
            .get("www-authenticate")
            .and_then(|value| value.to_str().ok()),
        Some("Bearer")
    );
    assert_eq!(app.get("/metrics").await?.status(), 401, "none sent");
    Ok(())
}

#[tokio::test]
async fn unknown_paths_and_methods_share_one_label_each() -> anyhow::Result<()> {
    let app = TestApp::builder()
        .config(|config| config.access.metrics_token = Some(Secret::new(METRICS_TOKEN)))
        .router()
        .await?;
    for path in ["/no-such-page-1", "/no-such-page-2", "/p/abc/def/ghi"] {
        let request = Request::get(path).body(Body::empty())?;
        app.router.clone().oneshot(request).await?;
    }
    for method in ["FOO", "BREW", "PROPFIND"] {
        let request = Request::builder()
            .method(method)
            .uri("/healthz")
            .body(Body::empty())?;
        app.router.clone().oneshot(request).await?;
    }
    let scrape = Request::get("/metrics")
        .header(header::AUTHORIZATION, format!("Bearer {METRICS_TOKEN}"))
        .body(Body::empty())?;
    let response = app.router.clone().oneshot(scrape).await?;
    assert_eq!(response.status(), StatusCode::OK);
    let text = String::from_utf8(to_bytes(response.into_body(), 1 << 20).await?.to_vec())?;
    let requests: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("tessera_http_request_duration_seconds_count"))
        .collect();
    assert!(
        requests.contains(
            &r#"tessera_http_request_duration_seconds_count{method="GET",route="unmatched",status="4xx"} 3"#
        ),
        "{requests:#?}"
    );
    assert!(
        requests.contains(
            &r#"tessera_http_request_duration_seconds_count{method="other",route="/healthz",status="4xx"} 3"#
        ),
        "{requests:#?}"
    );
    assert!(
        !text.contains("no-such-page") && !text.contains("FOO") && !text.contains("PROPFIND"),
        "{requests:#?}"
    );
    Ok(())
}

/// `SELECT label, count` rows as a map, on either engine.
async fn counted(store: &Store, sql: &str) -> anyhow::Result<BTreeMap<String, i64>> {
    tessera_store::testing::label_counts(store, sql).await
}

/// Drops the zero counts a gauge keeps for statuses no row holds any more.
fn held(figures: &BTreeMap<String, i64>) -> BTreeMap<String, i64> {
    figures
        .iter()
        .filter(|(_, count)| **count != 0)
        .map(|(label, count)| (label.clone(), *count))
        .collect()
}

#[tokio::test]
async fn counters_match_the_rows_on_sqlite() -> anyhow::Result<()> {
    the_counters_match_the_rows_after_runs_and_pages_live_their_lives_and_a_scrape_reads_only_them(
        Backend::Sqlite,
    )
    .await
}

#[tokio::test]
async fn counters_match_the_rows_on_postgres() -> anyhow::Result<()> {
    the_counters_match_the_rows_after_runs_and_pages_live_their_lives_and_a_scrape_reads_only_them(
        Backend::Postgres,
    )
    .await
}

async fn the_counters_match_the_rows_after_runs_and_pages_live_their_lives_and_a_scrape_reads_only_them(
    backend: Backend,
) -> anyhow::Result<()> {
    let Some(app) = TestApp::builder().backend(backend).try_spawn().await? else {
        return Ok(());
    };
    // Many rows in one go, in every status a run can be created with.
    for index in 0..300 {
        let status = [RunStatus::Ready, RunStatus::Waiting, RunStatus::Succeeded][index % 3];
        app.store
            .create_run(&NewRun {
                workflow: "no-such-workflow".into(),
                state: json!({}),
                status,
            })
            .await?;
    }
    // Runs through the runner: finished, answered, cancelled, a page revoked.
    let started: Value = app
        .api_post("/api/runs", &json!({"workflow": "dashboard"}))
        .await?
        .json()
        .await?;
    let dashboard = started["id"].as_str().context("a run id")?.to_owned();
    app.wait_for_status(&dashboard, "succeeded").await?;
    let (answered, path) = create(&app, &json!({"prompt": "Approve?"})).await?;
    assert_eq!(submit(&app, &path, "answer=yes").await?.status(), 303);
    app.wait_for_status(&answered, "succeeded").await?;
    let (cancelled, _) = create(&app, &json!({"prompt": "Deploy?"})).await?;
    let cancel = app
        .api_post(&format!("/api/asks/{cancelled}/cancel"), &json!({}))
        .await?;
    assert_eq!(cancel.status(), 200);
    app.wait_for_status(&cancelled, "cancelled").await?;
    let (revoked, _) = create(&app, &json!({"prompt": "Ship?"})).await?;
    let page = app.store.pages_of_run(revoked.parse::<RunId>()?).await?;
    let page = page.first().context("the ask's page")?;
    assert!(
        app.store
            .change_open_page(page.id, &PageChange::Revoke)
            .await?
    );
    let (expired, _) = create(&app, &json!({"prompt": "Still there?"})).await?;
    let page = app.store.pages_of_run(expired.parse::<RunId>()?).await?;
    let page = page.first().context("the ask's page")?;
    // Its deadline passes: the runner's sweep (`expire_waits`) resumes it, and it ends cancelled.
    app.store
        .change_open_page(page.id, &PageChange::Extend(now_ms() - 1_000))
        .await?;
    app.wait_for_status(&expired, "cancelled").await?;

    let figures = app.store.metrics_figures().await?;
    let runs = counted(
        &app.store,
        "SELECT status, COUNT(*) FROM runs GROUP BY status",
    )
    .await?;
    assert_eq!(held(&figures.runs_by_status), runs);
    assert!(
        runs.get("succeeded").copied().unwrap_or(0) >= 102,
        "{runs:?}"
    );
    let pages = counted(
        &app.store,
        "SELECT status, COUNT(*) FROM pages GROUP BY status",
    )
    .await?;
    assert_eq!(held(&figures.pages_by_status), pages);
    assert!(
        pages.contains_key("submitted") && pages.contains_key("revoked"),
        "{pages:?}"
    );
    let generations = counted(
        &app.store,
        "SELECT provider || '/' || outcome, COUNT(*) FROM generations GROUP BY provider, outcome",
    )
    .await?;
    let counters: BTreeMap<String, i64> = figures
        .generations
        .iter()
        .map(|((provider, outcome), count)| (format!("{provider}/{outcome}"), *count))
        .collect();
    assert_eq!(counters, generations);
    let model_calls = counted(
        &app.store,
        "SELECT provider, COUNT(*) FROM generations WHERE NOT cache_hit GROUP BY provider",
    )
    .await?;
    let counted_calls: BTreeMap<String, i64> = figures
        .providers
        .iter()
        .map(|(provider, figures)| (provider.clone(), figures.generations))
        .collect();
    assert_eq!(counted_calls, model_calls);

    // The scrape reads the counters, not the rows: a count kept there is what it shows.
    let planted = "INSERT INTO metric_counters (metric, label, label2, shard, value) \
                   VALUES ('runs', 'succeeded', '', 99, 1000)";
    tessera_store::testing::execute_on(&app.store, planted, &[]).await?;
    let text = app.get("/metrics").await?.text().await?;
    let succeeded = runs.get("succeeded").copied().unwrap_or(0) + 1000;
    assert!(
        text.contains(&format!(
            "tessera_runs{{status=\"succeeded\"}} {succeeded}\n"
        )),
        "{text}"
    );
    let submitted = pages.get("submitted").copied().unwrap_or(0);
    assert!(
        text.contains(&format!(
            "tessera_pages{{status=\"submitted\"}} {submitted}\n"
        )),
        "{text}"
    );
    app.cleanup().await
}
