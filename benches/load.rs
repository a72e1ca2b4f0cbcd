//! A load test a user can run against a running server (issue 16): N concurrent people, each
//! opening a page link (`GET /p/…`), answering it (`POST`, 303), and waiting until the run the
//! page belongs to has resumed; it prints throughput and latency percentiles.
//!
//! The server is any Tessera on a loopback address (SQLite or PostgreSQL: whatever it was
//! started with) with `TESSERA_WEBHOOK_SECRET` set and `TESSERA_OUTBOUND_ALLOW=127.0.0.1` (the
//! callbacks go to this tool's loopback listener, which asks may reach only when admitted). Before the timed part the tool asks its
//! questions through `POST /api/asks` (one per journey, with the API token), each with a
//! `callback_url` on a small loopback server of its own: the ask's `Callback` step runs right
//! after the answer resumes the run, so its arrival is the instant the run resumed, measured
//! without polling. `make load` starts a release server on a free port (on a fresh SQLite file,
//! or on `DATABASE_URL`), runs this, and stops it.
//!
//! Settings (environment):
//! - `LOAD_URL`: the server, e.g. `http://127.0.0.1:3000`; loopback addresses only.
//! - `TESSERA_API_TOKEN`: the server's API token (to create the asks).
//! - `LOAD_PEOPLE` (default 16, at most 256): people answering at once.
//! - `LOAD_JOURNEYS` (default 400, at most 20,000): journeys in all.
//! - `LOAD_MAX_SECS` (default 120, at most 900): no journey starts after this many seconds of
//!   the timed part, and no answer is awaited longer than it.
//!
//! Run with `cargo bench --bench load` (settings as above) or `make load`.

#[path = "support/timing.rs"]
#[expect(
    dead_code,
    reason = "this tool times requests it sends, not calls: it uses Percentiles only"
)]
mod timing;

use std::{
    net::IpAddr,
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc, OnceLock,
    },
    time::{Duration, Instant},
};

use anyhow::{bail, ensure, Context as _};
use axum::{
    extract::{Path, State},
    routing::post,
    Router,
};
use http::StatusCode;
use serde_json::{json, Value};
use tokio::{sync::Notify, task::JoinSet};

use timing::{report, Percentiles};

const MAX_PEOPLE: usize = 256;
const MAX_JOURNEYS: usize = 20_000;
const MAX_SECS: u64 = 900;

/// What the tool was asked to do.
struct Settings {
    url: url::Url,
    token: String,
    people: usize,
    journeys: usize,
    max_time: Duration,
}

fn bounded(name: &str, default: u64, max: u64) -> anyhow::Result<u64> {
    let value = match std::env::var(name) {
        Ok(raw) => raw
            .trim()
            .parse::<u64>()
            .with_context(|| format!("{name} is a whole number"))?,
        Err(_) => default,
    };
    ensure!(
        (1..=max).contains(&value),
        "{name} must be between 1 and {max}, not {value}"
    );
    Ok(value)
}

impl Settings {
    fn from_env() -> anyhow::Result<Self> {
        let raw = std::env::var("LOAD_URL").context(
            "LOAD_URL names the server, e.g. http://127.0.0.1:3000 (or run `make load`)",
        )?;
        let url = url::Url::parse(raw.trim()).context("LOAD_URL is a URL")?;
        ensure!(
            is_loopback(&url),
            "LOAD_URL must be a loopback address (127.0.0.0/8, ::1 or localhost), not {url}"
        );
        Ok(Self {
            url,
            token: std::env::var("TESSERA_API_TOKEN")
                .context("TESSERA_API_TOKEN is the server's API token (it creates the asks)")?,
            people: usize::try_from(bounded("LOAD_PEOPLE", 16, MAX_PEOPLE as u64)?)?,
            journeys: usize::try_from(bounded("LOAD_JOURNEYS", 400, MAX_JOURNEYS as u64)?)?,
            max_time: Duration::from_secs(bounded("LOAD_MAX_SECS", 120, MAX_SECS)?),
        })
    }

    fn at(&self, path: &str) -> String {
        format!("{}{path}", self.url.as_str().trim_end_matches('/'))
    }
}

fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name == "localhost",
        Some(url::Host::Ipv4(address)) => IpAddr::V4(address).is_loopback(),
        Some(url::Host::Ipv6(address)) => IpAddr::V6(address).is_loopback(),
        None => false,
    }
}

/// When each journey's run resumed (its callback arrived), by journey index.
struct Resumed {
    at: Vec<OnceLock<Instant>>,
    arrived: Notify,
}

impl Resumed {
    async fn wait_for(&self, index: usize, deadline: Instant) -> anyhow::Result<Instant> {
        loop {
            let arrived = self.arrived.notified();
            if let Some(at) = self.at.get(index).and_then(|slot| slot.get()) {
                return Ok(*at);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            ensure!(
                !left.is_zero(),
                "journey {index}: the run did not resume in time"
            );
            let _ = tokio::time::timeout(left, arrived).await;
        }
    }
}

async fn callback(State(resumed): State<Arc<Resumed>>, Path(index): Path<usize>) -> StatusCode {
    let now = Instant::now();
    match resumed.at.get(index) {
        Some(slot) => {
            let _ = slot.set(now);
            resumed.arrived.notify_waiters();
            StatusCode::NO_CONTENT
        }
        None => StatusCode::NOT_FOUND,
    }
}

/// Serves the callback sink on a free loopback port; returns its base URL.
async fn spawn_sink(resumed: Arc<Resumed>) -> anyhow::Result<String> {
    let router = Router::new()
        .route("/resumed/{index}", post(callback))
        .with_state(resumed);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Ok(address)
}

/// Runs `work(index)` for `0..count` over `concurrency` tasks until `deadline`; returns what
/// each finished one gave, by index.
async fn each<T, F, Fut>(
    count: usize,
    concurrency: usize,
    deadline: Instant,
    work: F,
) -> anyhow::Result<Vec<Option<T>>>
where
    T: Send + 'static,
    F: Fn(usize) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = anyhow::Result<T>> + Send + 'static,
{
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = JoinSet::new();
    for _ in 0..concurrency {
        let next = Arc::clone(&next);
        let work = work.clone();
        tasks.spawn(async move {
            let mut done = Vec::new();
            loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= count || Instant::now() >= deadline {
                    return anyhow::Ok(done);
                }
                done.push((index, work(index).await?));
            }
        });
    }
    let mut results: Vec<Option<T>> = (0..count).map(|_| None).collect();
    while let Some(joined) = tasks.join_next().await {
        for (index, value) in joined?? {
            if let Some(slot) = results.get_mut(index) {
                *slot = Some(value);
            }
        }
    }
    Ok(results)
}

/// One page to answer.
struct Ask {
    path: String,
}

async fn create_ask(
    client: &reqwest::Client,
    settings: &Settings,
    sink: &str,
    index: usize,
) -> anyhow::Result<Ask> {
    let response = client
        .post(settings.at("/api/asks"))
        .bearer_auth(&settings.token)
        .json(&json!({
            "prompt": "Load test: approve expense claim {{ number }}?",
            "data": {"number": index},
            "callback_url": format!("{sink}/resumed/{index}"),
        }))
        .send()
        .await?;
    let status = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    if status != StatusCode::CREATED {
        bail!("POST /api/asks answered {status}: {body} (is TESSERA_WEBHOOK_SECRET set on the server, TESSERA_OUTBOUND_ALLOW=127.0.0.1, and TESSERA_API_TOKEN right?)");
    }
    let link = body["link"].as_str().context("an ask's link")?;
    let path = link
        .split_once("/p/")
        .map(|(_, token)| format!("/p/{token}"))
        .context("a page link")?;
    Ok(Ask { path })
}

/// The instants of one journey.
struct Journey {
    started: Instant,
    page_read: Instant,
    posted: Instant,
    answered: Instant,
    resumed: Instant,
}

fn csrf_of(html: &str) -> Option<&str> {
    html.split("name=\"_csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
}

async fn journey(
    client: &reqwest::Client,
    settings: &Settings,
    ask: &Ask,
    resumed: &Resumed,
    index: usize,
    deadline: Instant,
) -> anyhow::Result<Journey> {
    let started = Instant::now();
    let page = client.get(settings.at(&ask.path)).send().await?;
    ensure!(
        page.status() == StatusCode::OK,
        "GET page answered {}",
        page.status()
    );
    let html = page.text().await?;
    let page_read = Instant::now();
    let csrf = csrf_of(&html).context("the page has a CSRF field")?;
    // The default ask has one required free-text field, `answer`.
    let body = format!("_csrf={csrf}&answer=Approved+in+the+load+test");
    let posted = Instant::now();
    let answer = client
        .post(settings.at(&ask.path))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await?;
    ensure!(
        answer.status() == StatusCode::SEE_OTHER,
        "POST answered {}",
        answer.status()
    );
    let answered = Instant::now();
    let resumed = resumed.wait_for(index, deadline).await?;
    Ok(Journey {
        started,
        page_read,
        posted,
        answered,
        resumed,
    })
}

fn rate(count: usize, span: Duration) -> f64 {
    if span.is_zero() {
        0.0
    } else {
        count as f64 / span.as_secs_f64()
    }
}

// `cargo bench` passes `--bench`; settings come from the environment.
#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let settings = Arc::new(Settings::from_env()?);
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(settings.people)
        .timeout(Duration::from_secs(60))
        .build()?;
    let resumed = Arc::new(Resumed {
        at: (0..settings.journeys).map(|_| OnceLock::new()).collect(),
        arrived: Notify::new(),
    });
    let sink = spawn_sink(Arc::clone(&resumed)).await?;
    eprintln!(
        "load: {} journeys, {} people at once, against {} (at most {:?})",
        settings.journeys, settings.people, settings.url, settings.max_time
    );

    let setup_started = Instant::now();
    let asks = {
        let (client, settings, sink) = (client.clone(), Arc::clone(&settings), sink.clone());
        each(
            settings.journeys,
            settings.people,
            setup_started + settings.max_time,
            move |index| {
                let (client, settings, sink) =
                    (client.clone(), Arc::clone(&settings), sink.clone());
                async move { create_ask(&client, &settings, &sink, index).await }
            },
        )
        .await?
    };
    let asks: Arc<Vec<Ask>> = Arc::new(asks.into_iter().map_while(|ask| ask).collect());
    ensure!(!asks.is_empty(), "no ask was created in time");
    eprintln!(
        "load: {} pages made in {:.1?} (not timed below)",
        asks.len(),
        setup_started.elapsed()
    );

    let timed_started = Instant::now();
    let deadline = timed_started + settings.max_time;
    let journeys = {
        let (client, settings, resumed, asks) = (
            client.clone(),
            Arc::clone(&settings),
            Arc::clone(&resumed),
            Arc::clone(&asks),
        );
        each(asks.len(), settings.people, deadline, move |index| {
            let (client, settings, resumed, asks) = (
                client.clone(),
                Arc::clone(&settings),
                Arc::clone(&resumed),
                Arc::clone(&asks),
            );
            async move {
                let ask = asks.get(index).context("ask index")?;
                journey(&client, &settings, ask, &resumed, index, deadline).await
            }
        })
        .await?
    };
    let span = timed_started.elapsed();
    let done: Vec<Journey> = journeys.into_iter().flatten().collect();
    let latency = |name: &str, of: fn(&Journey) -> Duration| {
        Percentiles::of(name, done.iter().map(of).collect())
    };
    report(
        &format!(
            "{} journeys by {} people at once in {span:.2?}",
            done.len(),
            settings.people
        ),
        &[
            latency("GET page (200, read)", |j| j.page_read - j.started),
            latency("POST answer → 303", |j| j.answered - j.posted),
            latency("POST answer → run resumed", |j| j.resumed - j.posted),
            latency("whole journey", |j| j.resumed - j.started),
        ],
    );
    eprintln!(
        "  journeys (= submissions = runs resumed) per second: {:.0}",
        rate(done.len(), span)
    );
    ensure!(
        done.len() == asks.len(),
        "only {} of {} journeys finished within {:?}",
        done.len(),
        asks.len(),
        settings.max_time
    );
    Ok(())
}
