//! Page submissions (issue 6): POST-to-resumed latency and sustained submissions per second
//! against the real server on loopback, on SQLite and on PostgreSQL, each beside a baseline
//! measured in the same run: a bare axum handler that inserts one row into the same database.
//!
//! Per engine:
//! - the real `Application` (router, middleware, runner with its default settings) runs a
//!   one-ui-step workflow `Ask` (ui, heuristic model) → `Wait` → `Record`; every run is started
//!   and driven to its waiting page before the timed phase, and each page's CSRF token is known;
//! - a closed-loop load generator (`support/load.rs`, 16 connections) POSTs one valid answer to
//!   each page: a warm-up batch, then the timed batch;
//! - **POST-to-resumed** is measured from the instant the client starts sending a page's POST to
//!   the instant the step after the wait (`Record`) starts executing in the runner: the
//!   submission committed, the runner woke, claimed the run, read the response and recorded the
//!   step's start. **POST-to-303** is the submission's own round trip;
//! - **submissions per second** is answered POSTs over the span from the first send to the last
//!   answer; **resumed per second** is the same for the `Record` starts;
//! - then [`ONE_AT_A_TIME`] submissions, each sent once the run answered before it resumed (one
//!   person at a time), give the same two latencies without a queue in front of the runner's
//!   workers (before issue 16 they were only sent over one connection, so answers arrived faster
//!   than runs resumed and the figure measured that queue);
//! - the baseline POSTs the same form body to a handler that only inserts it as one row (same
//!   pool, so the same pragmas: WAL and `synchronous=FULL` on SQLite); on PostgreSQL a second
//!   baseline adds one `pg_notify` in the insert's transaction (DESIGN.md §10 asks for submit
//!   throughput with and without `NOTIFY`).
//!
//! Run with `cargo bench --bench submit` (PostgreSQL too under `scripts/with-postgres.sh`, or with
//! `TEST_DATABASE_URL` set); `SUBMIT_BENCH_PAGES` sets the timed batch (default 2000). Figures go
//! in BENCHMARKS.md.

#[path = "support/load.rs"]
mod load;
#[path = "support/timing.rs"]
#[expect(
    dead_code,
    reason = "this bench times requests it sends, not calls: it uses Percentiles only"
)]
mod timing;

use std::{
    sync::{Arc, OnceLock},
    time::{Duration, Instant},
};

use anyhow::{bail, ensure, Context as _};
use axum::{body::Bytes, extract::State, routing::post, Router};
use http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tessera::{
    config::{Config, DatabaseUrl},
    http::AppState,
    pages::links::{reissue_links, LinkChange, PageLinks},
    startup::{Application, Options},
    store::Store,
    workflow::{
        overview::run_overview,
        run::{RunFilter, RunStatus},
        wait_for, workflow, PageHandle, Prompt, Registry, Workflow, WorkflowError,
    },
};
use tessera_store::testing::{self, FreshPostgres};
use tokio_util::sync::CancellationToken;

use load::{closed_loop, per_second, Timed};
use timing::{report, Percentiles};

const CONCURRENCY: usize = 16;
const WARM_UP: usize = 100;
/// Submissions sent one at a time after the loaded phase: the wake-up path without a queue.
const ONE_AT_A_TIME: usize = 200;
/// How often the timed phases look whether their runs resumed (the instants are taken by the
/// runs themselves, so this only bounds how long the bench waits).
const POLL: Duration = Duration::from_millis(10);
const WORKFLOW: &str = "bench-approval";

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Claim {
    number: usize,
    #[serde(default)]
    approved: Option<bool>,
}

#[derive(Clone, Debug, Serialize, Deserialize, tessera::forms::FormSchema)]
struct Answer {
    approve: bool,
    reason: String,
}

/// When each run's `Record` step first started, by the run's number.
type Resumed = Arc<Vec<OnceLock<Instant>>>;

fn bench_workflow(resumed: Resumed) -> Result<Workflow<Claim>, WorkflowError> {
    workflow::<Claim>(WORKFLOW)
        .ui(
            "Ask",
            Prompt::<Answer>::new("Approve expense claim number {{ number }}? Give a reason."),
        )
        .step_with_page("Wait", |state: Claim, page: PageHandle<Answer>| async move {
            Ok((state, wait_for(page.webhook)))
        })
        .step_with_response("Record", move |state: Claim, answer: Answer| {
            if let Some(slot) = resumed.get(state.number) {
                let _ = slot.set(Instant::now());
            }
            async move {
                Ok(Claim {
                    approved: Some(answer.approve),
                    ..state
                })
            }
        })
        .build()
}

/// One page to answer: its path and the form body a browser would send.
struct Answerable {
    path: String,
    body: String,
}

/// A database for one engine, dropped after the run.
enum Database {
    Sqlite(tempfile::TempDir),
    Postgres(FreshPostgres),
}

impl Database {
    fn url(&self) -> DatabaseUrl {
        match self {
            Self::Sqlite(dir) => {
                DatabaseUrl::Sqlite(dir.path().join("tessera.db").to_string_lossy().into_owned())
            }
            Self::Postgres(database) => database.database_url(),
        }
    }

    async fn drop_database(self) -> anyhow::Result<()> {
        if let Self::Postgres(database) = self {
            database.drop_database().await?;
        }
        Ok(())
    }
}

/// What one engine's run measured.
struct Figures {
    engine: &'static str,
    setup: Duration,
    latencies: Vec<Percentiles>,
    rates: Vec<(String, f64)>,
}

fn client() -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(CONCURRENCY)
        .timeout(Duration::from_secs(60))
        .build()?)
}

/// Starts `count` runs and waits until every one waits on its page; returns the pages to answer.
async fn waiting_pages(state: &AppState, count: usize) -> anyhow::Result<Vec<Answerable>> {
    let runner = state.runner().context("the application has a runner")?;
    let mut runs = Vec::with_capacity(count);
    for number in 0..count {
        runs.push(
            runner
                .start_run(WORKFLOW, json!({"number": number}))
                .await?,
        );
    }
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let waiting = state
            .store
            .list_runs(&RunFilter {
                status: Some(RunStatus::Waiting),
                workflow: None,
                limit: 1,
                offset: 0,
            })
            .await?
            .total;
        if usize::try_from(waiting)? == count {
            break;
        }
        ensure!(
            Instant::now() < deadline,
            "only {waiting} of {count} runs reached their page"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut pages = Vec::with_capacity(count);
    for run in runs {
        let overview = run_overview(&state.store, run.id).await?;
        let page_id = overview
            .waiting_page
            .context("a waiting run has an open page")?;
        // Only the token's hash is stored: a working link is a freshly minted one.
        let LinkChange::Done(PageLinks::Shared(link)) =
            reissue_links(&state.store, &state.config.public_url, page_id).await?
        else {
            bail!("the waiting page is no longer open");
        };
        let page = overview.pages.first().context("the run made a page")?;
        let path = link
            .split_once("/p/")
            .map(|(_, token)| format!("/p/{token}"))
            .context("a page link")?;
        let csrf = state.csrf.token_for(page.id);
        pages.push(Answerable {
            path,
            body: format!("_csrf={csrf}&approve=true&reason=Receipts+attached"),
        });
    }
    Ok(pages)
}

/// POSTs an answer to each page over `connections`; any answer but 303 fails the bench.
/// Sends each page's answer over `connections` connections. With `resumed` (the slots and the
/// run number of the first page), a connection sends its next answer only once the run it
/// answered has resumed: one person at a time, with no queue in front of the runner.
async fn submit_all(
    client: &reqwest::Client,
    address: &str,
    pages: Arc<Vec<Answerable>>,
    connections: usize,
    resumed: Option<(Resumed, usize)>,
) -> anyhow::Result<Timed> {
    let client = client.clone();
    let address = address.to_owned();
    closed_loop(pages.len(), connections, move |index| {
        let client = client.clone();
        let pages = Arc::clone(&pages);
        let address = address.clone();
        let resumed = resumed.clone();
        async move {
            let page = pages.get(index).context("page index")?;
            let response = client
                .post(format!("{address}{}", page.path))
                .header("content-type", "application/x-www-form-urlencoded")
                .body(page.body.clone())
                .send()
                .await?;
            ensure!(
                response.status() == StatusCode::SEE_OTHER,
                "submission answered {}",
                response.status()
            );
            if let Some((resumed, first)) = resumed {
                let number = first + index;
                all_resumed(&resumed, number..number + 1, Duration::from_micros(50)).await?;
            }
            Ok(())
        }
    })
    .await
}

/// From each request's send to the matching instant of `events`.
fn since_sent(timed: &Timed, events: &[Instant]) -> Vec<Duration> {
    timed
        .sent
        .iter()
        .zip(events)
        .map(|(sent, event)| event.saturating_duration_since(*sent))
        .collect()
}

/// Waits until every run numbered in `numbers` has started its `Record` step.
async fn all_resumed(
    resumed: &Resumed,
    numbers: std::ops::Range<usize>,
    poll: Duration,
) -> anyhow::Result<Vec<Instant>> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let starts: Option<Vec<Instant>> = numbers
            .clone()
            .map(|number| resumed.get(number).and_then(|slot| slot.get().copied()))
            .collect();
        if let Some(starts) = starts {
            return Ok(starts);
        }
        ensure!(Instant::now() < deadline, "some runs never resumed");
        tokio::time::sleep(poll).await;
    }
}

async fn insert_row(State(store): State<Store>, body: Bytes) -> StatusCode {
    match testing::insert_baseline_row(&store, &String::from_utf8_lossy(&body)).await {
        Ok(()) => StatusCode::CREATED,
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

async fn insert_row_and_notify(State(store): State<Store>, body: Bytes) -> StatusCode {
    match testing::insert_baseline_row_and_notify(&store, &String::from_utf8_lossy(&body)).await {
        Ok(true) => StatusCode::CREATED,
        Ok(false) => StatusCode::NOT_FOUND,
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// Serves the baseline handlers on a free loopback port until `shutdown`.
async fn spawn_baseline(store: Store, shutdown: CancellationToken) -> anyhow::Result<String> {
    testing::create_baseline_table(&store).await?;
    let router = Router::new()
        .route("/rows", post(insert_row))
        .route("/rows-notify", post(insert_row_and_notify))
        .with_state(store);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move {
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(async move { shutdown.cancelled().await })
            .await;
    });
    Ok(address)
}

/// POSTs `count` bodies to the baseline route `path`; any answer but 201 fails the bench.
async fn insert_all(
    client: &reqwest::Client,
    url: String,
    count: usize,
    body: String,
) -> anyhow::Result<Timed> {
    let client = client.clone();
    closed_loop(count, CONCURRENCY, move |_| {
        let request = client
            .post(&url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body.clone());
        async move {
            let response = request.send().await?;
            ensure!(
                response.status() == StatusCode::CREATED,
                "baseline answered {}",
                response.status()
            );
            Ok(())
        }
    })
    .await
}

async fn bench_engine(database: &Database, pages: usize) -> anyhow::Result<Figures> {
    let mut config = Config::for_tests(database.url());
    config.log = "warn".to_owned();
    let engine = config.database_url.engine();
    let total = WARM_UP + pages + ONE_AT_A_TIME;
    let resumed: Resumed = Arc::new((0..total).map(|_| OnceLock::new()).collect());
    let registry = Registry::new().with(bench_workflow(Arc::clone(&resumed))?)?;
    let application = Application::build_with(
        config,
        Options {
            workflows: Some(registry),
            ..Options::default()
        },
    )
    .await?;
    let address = format!("http://{}", application.local_addr()?);
    let store = application.state().store.clone();
    let shutdown = CancellationToken::new();

    let state = application.state().clone();
    // The runner's workers start with the server; they make the pages.
    let server = tokio::spawn(application.run_until(shutdown.clone()));
    let setup_started = Instant::now();
    let mut answerable = waiting_pages(&state, total).await?;
    let setup = setup_started.elapsed();

    let client = client()?;
    let baseline_address = spawn_baseline(store.clone(), shutdown.clone()).await?;
    let body = answerable
        .first()
        .map(|page| page.body.clone())
        .context("pages")?;

    let single_pages = Arc::new(answerable.split_off(WARM_UP + pages));
    let timed_pages = Arc::new(answerable.split_off(WARM_UP));
    let warm_pages = Arc::new(answerable);

    // Warm-up: connections, prepared statements, caches; not counted.
    insert_all(
        &client,
        format!("{baseline_address}/rows"),
        WARM_UP,
        body.clone(),
    )
    .await?;
    submit_all(&client, &address, warm_pages, CONCURRENCY, None).await?;
    all_resumed(&resumed, 0..WARM_UP, POLL).await?;

    let baseline = insert_all(
        &client,
        format!("{baseline_address}/rows"),
        pages,
        body.clone(),
    )
    .await?;
    let notify_baseline = if engine == "postgres" {
        Some(
            insert_all(
                &client,
                format!("{baseline_address}/rows-notify"),
                pages,
                body,
            )
            .await?,
        )
    } else {
        None
    };

    let submitted = submit_all(&client, &address, timed_pages, CONCURRENCY, None).await?;
    let resumed_at = all_resumed(&resumed, WARM_UP..WARM_UP + pages, POLL).await?;
    let to_resumed = since_sent(&submitted, &resumed_at);
    let single = submit_all(
        &client,
        &address,
        single_pages,
        1,
        Some((Arc::clone(&resumed), WARM_UP + pages)),
    )
    .await?;
    let single_resumed_at = all_resumed(&resumed, WARM_UP + pages..total, POLL).await?;
    let single_to_resumed = since_sent(&single, &single_resumed_at);

    // Check what was timed: every run finished with the answer it was sent.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let succeeded = store
            .list_runs(&RunFilter {
                status: Some(RunStatus::Succeeded),
                workflow: None,
                limit: 1,
                offset: 0,
            })
            .await?
            .total;
        if usize::try_from(succeeded)? == total {
            break;
        }
        ensure!(
            Instant::now() < deadline,
            "{succeeded} of {total} runs succeeded"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let mut latencies = vec![
        Percentiles::of("submission POST → Record step started", to_resumed),
        Percentiles::of("submission POST → 303", submitted.latencies()),
        Percentiles::of(
            "baseline: POST → one row inserted (201)",
            baseline.latencies(),
        ),
        Percentiles::of(
            "one at a time: submission POST → Record started",
            single_to_resumed,
        ),
        Percentiles::of("one at a time: submission POST → 303", single.latencies()),
    ];
    let mut rates = vec![
        (
            "submissions answered (303) per second".to_owned(),
            submitted.answers_per_second(),
        ),
        (
            "runs resumed (Record started) per second".to_owned(),
            per_second(submitted.first_sent(), &resumed_at),
        ),
        (
            "baseline: rows inserted per second".to_owned(),
            baseline.answers_per_second(),
        ),
    ];
    if let Some(notify_baseline) = notify_baseline {
        latencies.push(Percentiles::of(
            "baseline + pg_notify: POST → 201",
            notify_baseline.latencies(),
        ));
        rates.push((
            "baseline + pg_notify: rows inserted per second".to_owned(),
            notify_baseline.answers_per_second(),
        ));
    }
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(30), server)
        .await
        .context("the server did not stop")???;
    Ok(Figures {
        engine,
        setup,
        latencies,
        rates,
    })
}

fn print(figures: &Figures, pages: usize) {
    report(
        &format!(
            "{}: {pages} submissions and {pages} baseline inserts over {CONCURRENCY} connections (pages made in {:.1?})",
            figures.engine, figures.setup
        ),
        &figures.latencies,
    );
    for (name, rate) in &figures.rates {
        eprintln!("  {name}: {rate:.0}");
    }
}

// `cargo bench` passes `--bench`; nothing here reads the command line.
#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let pages = match std::env::var("SUBMIT_BENCH_PAGES") {
        Ok(raw) => raw
            .parse::<usize>()
            .context("SUBMIT_BENCH_PAGES is a whole number")?,
        Err(_) => 2000,
    };
    let sqlite = Database::Sqlite(tempfile::tempdir()?);
    let figures = bench_engine(&sqlite, pages).await;
    sqlite.drop_database().await?;
    print(&figures?, pages);

    if std::env::var("TEST_DATABASE_URL").is_err() {
        eprintln!(
            "\nPostgreSQL skipped: TEST_DATABASE_URL is not set (run under scripts/with-postgres.sh)"
        );
    } else if let Some(database) = FreshPostgres::create().await? {
        let postgres = Database::Postgres(database);
        let figures = bench_engine(&postgres, pages).await;
        postgres.drop_database().await?;
        print(&figures?, pages);
    }
    Ok(())
}
