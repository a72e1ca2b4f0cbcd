//! Chat orchestration overhead per turn, excluding model time, beside the bare HTTP call to the
//! demo API on loopback.
//!
//! - `decide`: the code-only part of a turn — routing, the offline planner's two proposals for
//!   "delete all completed items from last month" (search, then the bulk delete of the 23 ids the
//!   search returned), scope check, schema check and policy for each, the confirmation hash and
//!   the header — with no I/O.
//! - `turn`: a whole turn through [`Orchestrator::handle_turn`] with the planner on a fresh-file
//!   SQLite store (WAL, `synchronous=FULL`) and the demo API on loopback: a simple query (one
//!   search) and the bulk-delete proposal (search, then a stored confirmation).
//! - `view`: the confirm view of the delete turn's pending approval (as many items as the demo
//!   data, seeded relative to now, has completed last month: the count varies by day and is in
//!   the bench names), built through the page-generation loop with the offline heuristic exactly
//!   as `GET /chat` builds it ([`views::confirm_view`]) — uncached (a model name no earlier call
//!   used, so the page cache misses and the heuristic places the page, which is then cached) and
//!   cached (the page cache answers) — and rendered to HTML by the renderer every page uses.
//! - `turn + views`: the delete turn up to the confirmation, then what `GET /chat` builds and
//!   renders for it: the session view, [`views::session_views`] and each view's HTML.
//! - `baseline`: the same search as a bare `reqwest` GET to the demo API, and one durable SQLite
//!   commit (a turn makes about a dozen: every message, thread change and execution record is
//!   committed as it happens, so a crash mid-turn loses nothing already shown).
//!
//! Run with `cargo bench --bench orchestration`; figures go in BENCHMARKS.md.

#[path = "support/scratch.rs"]
mod scratch;

use std::{
    hint::black_box,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
    time::Duration,
};

use criterion::Criterion;
use leptos::prelude::*;
use serde_json::{json, Value};
use tessera::chat::ScopeRules as _;
use tessera::{
    agent::HeuristicModel,
    chat::{
        calendar::CivilDate,
        confirm::operation_hash,
        header::{CallStatus, ExecutionHeader, Step, StepRole},
        http_executor::{ExecutorConfig, HttpExecutor},
        orchestrator::{OrchestratorParts, SessionModels},
        planner::Planner,
        policy::{self, Grants, PolicyContext},
        routing,
        session::MessageChannel,
        threads::{Thread, ThreadStatus},
        views::{self, ChatView},
        CapabilityScope, Manifest, Orchestrator, PendingApproval, SessionId,
    },
    demo::items::{DemoItems, MANIFEST_JSON},
    llm::{ChatModel, ChatRequest, ChatResponse, Message, ModelName},
    store::now_ms,
};
use tessera_app::{
    catalog::Catalog,
    render::{render_tree, FormState, RenderCtx},
};
use url::Url;

use scratch::Scratch;

const REQUEST: &str = "delete all completed items from last month";

/// The code-only decisions of one "delete …" turn; returns the header length so nothing is
/// optimized away.
fn decide(
    manifest: &Manifest,
    planner: &Planner,
    scope: &CapabilityScope,
    threads: &[Thread],
    search_result: &Value,
    today: CivilDate,
) -> usize {
    let route = routing::route(REQUEST, threads, today);
    let offered: Vec<String> = scope
        .model_operations(manifest)
        .iter()
        .map(|operation| operation.name.clone())
        .collect();
    let mut messages = vec![Message::user(REQUEST)];
    let first = planner.propose(&messages, &offered);
    let mut steps = Vec::new();
    let mut shown = std::collections::BTreeSet::new();
    let mut responses: Vec<ChatResponse> = vec![first];
    while let Some(response) = responses.pop() {
        let Some(call) = response.tool_calls.first().cloned() else {
            break;
        };
        let arguments = call.arguments.clone().unwrap_or(Value::Null);
        let Ok(operation) = scope.check(manifest, &call.name) else {
            break;
        };
        if operation.validate_arguments(&arguments).is_err() {
            break;
        }
        let verdict = policy::evaluate(
            manifest,
            operation,
            &arguments,
            PolicyContext {
                shown_ids: &shown,
                grants: &Grants::default(),
                confirmed: false,
            },
        );
        let hash = operation_hash(&operation.name, &arguments);
        let status = match verdict {
            policy::Verdict::Allow { .. } => CallStatus::Succeeded,
            policy::Verdict::NeedsPreview(_) => CallStatus::Refused,
            policy::Verdict::NeedsConfirmation { .. } => CallStatus::AwaitingConfirmation,
        };
        let mut step = Step::new(call.name.clone(), StepRole::Read, status, "");
        step.hash = Some(hash);
        steps.push(step);
        if status == CallStatus::Succeeded {
            for item in search_result["items"].as_array().into_iter().flatten() {
                if let Some(id) = item["id"].as_str() {
                    shown.insert(id.to_owned());
                }
            }
            messages.push(Message::assistant(&response));
            messages.push(Message::tool_result(&call, search_result.clone()));
            responses.push(planner.propose(&messages, &offered));
        }
    }
    black_box(route);
    ExecutionHeader::new(steps).render().len()
}

/// The heuristic under a model name no earlier call used. The page cache is keyed by the model's
/// name among other things and `confirm_view` offers no bypass, so a fresh name is how the bench
/// times a miss without changing product code; the provider stays `heuristic`, so the loop takes
/// the same path as for the real heuristic.
struct FreshHeuristic {
    name: ModelName,
    inner: HeuristicModel,
}

impl FreshHeuristic {
    fn next(counter: &AtomicU64) -> Self {
        let inner = HeuristicModel::new();
        let base = inner.name();
        let index = counter.fetch_add(1, Ordering::Relaxed);
        Self {
            name: ModelName::new(base.provider, format!("{}-uncached-{index}", base.model)),
            inner,
        }
    }
}

#[async_trait::async_trait]
impl ChatModel for FreshHeuristic {
    fn name(&self) -> ModelName {
        self.name.clone()
    }

    async fn chat(&self, request: ChatRequest) -> tessera::llm::model::Result<ChatResponse> {
        self.inner.chat(request).await
    }
}

/// A view's HTML, rendered in a fresh reactive owner with the context the chat page's
/// `GeneratedViewPanel` gives it.
fn render_view(view: &ChatView) -> String {
    let mut ctx = RenderCtx::new(view.data.clone());
    ctx.catalog = Catalog::defaults();
    ctx.action.clone_from(&view.action);
    ctx.form = FormState {
        values: view.values.clone(),
        ..FormState::default()
    };
    ctx.download_base.clone_from(&view.download_base);
    Owner::new().with(|| render_tree(&view.tree, &ctx).to_html())
}

/// The delete turn up to its confirmation, then what `GET /chat` builds and renders for the
/// session: its view, every generated view (the page cache answers after the first) and their
/// HTML. Returns the HTML's total length.
async fn turn_and_views(orchestrator: &Orchestrator) -> anyhow::Result<usize> {
    let session = orchestrator.create_session(None, None).await?;
    orchestrator.handle_turn(session.id, REQUEST).await?;
    let view = orchestrator.session_view(session.id).await?;
    let generated = views::session_views(
        orchestrator.store(),
        &HeuristicModel::new(),
        orchestrator.manifest(),
        &view,
    )
    .await?;
    let html: usize = generated
        .confirms
        .values()
        .chain(generated.results.values())
        .chain(&generated.progress)
        .map(|view| render_view(view).len())
        .sum();
    Ok(html)
}

fn search_result(count: usize) -> Value {
    let items: Vec<Value> = (1..=count)
        .map(|index| json!({"id": format!("item-{index:04}"), "title": format!("Review the Q3 budget {index}"), "status": "completed",
                            "priority": "medium", "updated_at": "2026-10-14T09:30:00Z"}))
        .collect();
    json!({"items": items, "total": count, "limit": 1000, "offset": 0})
}

fn threads(session_id: SessionId) -> Vec<Thread> {
    let mut running = Thread::new(
        session_id,
        "update items",
        "mark open items done",
        now_ms() - 5000,
    );
    running.status = ThreadStatus::InProgress;
    let mut done = Thread::new(session_id, "show items", "show items", now_ms() - 9000);
    done.status = ThreadStatus::Done;
    vec![running, done]
}

fn main() -> anyhow::Result<()> {
    let scratch = Scratch::new()?;
    let (runtime, store) = (&scratch.runtime, scratch.store.clone());
    runtime.block_on(DemoItems::new(store.clone()).ensure_seeded())?;
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let address = listener.local_addr()?;
    let app = tessera::demo::items::routes::<()>(store.clone());
    runtime.spawn(async move { axum::serve(listener, app).await });
    let base = Url::parse(&format!("http://{address}/demo-api"))?;

    let manifest = Arc::new(Manifest::from_json(MANIFEST_JSON)?);
    let today = CivilDate::from_unix_ms(now_ms());
    let planner = Planner::new(manifest.clone(), Arc::new(move || today));
    let scope = CapabilityScope::all_of(&manifest);
    let executor = HttpExecutor::new(&manifest, base.clone(), ExecutorConfig::default(), &|_| {
        None
    })?;
    let orchestrator = Orchestrator::new(OrchestratorParts {
        store: store.clone(),
        manifest: manifest.clone(),
        executor,
        models: SessionModels::only("heuristic", Arc::new(planner.clone())),
        allowlist: scope.clone(),
        clock: Arc::new(now_ms),
        max_model_turns: 8,
    });
    let client = reqwest::Client::new();
    let search_url = format!("{base}/items?status=open");
    let result = search_result(23);
    let bench_threads = threads(SessionId::new());

    // Check the flows work before timing them.
    anyhow::ensure!(decide(&manifest, &planner, &scope, &bench_threads, &result, today) > 0);
    let check = runtime.block_on(async {
        let session = orchestrator.create_session(None, None).await?;
        orchestrator.handle_turn(session.id, REQUEST).await
    })?;
    anyhow::ensure!(
        check.pending_approvals.len() == 1,
        "the delete turn did not propose a confirmation"
    );
    eprintln!("delete turn header:\n{}", check.header.render());
    let approval: PendingApproval = check.pending_approvals[0].clone();
    let heuristic = HeuristicModel::new();
    let fresh_names = AtomicU64::new(0);
    let uncached = runtime.block_on(views::confirm_view(
        &store,
        &FreshHeuristic::next(&fresh_names),
        &manifest,
        &approval,
    ))?;
    // Primes the page cache for the cached case, and checks it answers with the same tree.
    let cached = runtime.block_on(views::confirm_view(
        &store, &heuristic, &manifest, &approval,
    ))?;
    let cached_again = runtime.block_on(views::confirm_view(
        &store, &heuristic, &manifest, &approval,
    ))?;
    anyhow::ensure!(
        cached.tree == cached_again.tree && uncached.tree == cached.tree,
        "the cached confirm view differs from the generated one"
    );
    let count = approval.preview.count;
    let rows = cached.data["items"].as_array().map_or(0, Vec::len);
    // The count is the approval card's (its summary and button); the view binds only the rows.
    anyhow::ensure!(
        count > 0 && rows == count,
        "the confirm view shows {rows} rows for a count of {count}"
    );
    let html = render_view(&cached);
    let label = views::confirm_label(&approval);
    anyhow::ensure!(
        html.contains(&label) && html.contains("Deny"),
        "the confirm view's HTML does not name {label:?}"
    );
    eprintln!(
        "confirm view: {} nodes, {rows} rows, {} bytes of HTML, button {label:?}",
        cached.tree.nodes.len(),
        html.len()
    );
    let page_html = runtime.block_on(turn_and_views(&orchestrator))?;
    anyhow::ensure!(
        page_html >= html.len(),
        "the chat page's views render {page_html} bytes, less than the confirm view alone"
    );

    let mut criterion = Criterion::default()
        .sample_size(30)
        .measurement_time(Duration::from_secs(8))
        .configure_from_args();
    let mut group = criterion.benchmark_group("orchestration");
    group.bench_function(
        "decide: route + plan + scope + schema + policy + hash + header (delete, 23 ids)",
        |bencher| {
            bencher.iter(|| decide(&manifest, &planner, &scope, &bench_threads, &result, today));
        },
    );
    group.bench_function("decide: route only", |bencher| {
        bencher.iter(|| routing::route(black_box(REQUEST), &bench_threads, today));
    });
    group.bench_function(
        "turn: show items where status is open (1 search, SQLite)",
        |bencher| {
            bencher.iter(|| {
                runtime.block_on(async {
                    let session = orchestrator.create_session(None, None).await?;
                    orchestrator
                        .handle_turn(session.id, "show items where status is open")
                        .await
                })
            });
        },
    );
    group.bench_function(
        "turn: delete … from last month, up to the confirmation (SQLite)",
        |bencher| {
            bencher.iter(|| {
                runtime.block_on(async {
                    let session = orchestrator.create_session(None, None).await?;
                    orchestrator.handle_turn(session.id, REQUEST).await
                })
            });
        },
    );
    group.bench_function(
        format!("view: confirm ({count} items), heuristic, uncached (miss, generate, cache)"),
        |bencher| {
            bencher.iter(|| {
                let model = FreshHeuristic::next(&fresh_names);
                runtime.block_on(views::confirm_view(&store, &model, &manifest, &approval))
            });
        },
    );
    group.bench_function(
        format!("view: confirm ({count} items), heuristic, cached"),
        |bencher| {
            bencher.iter(|| {
                runtime.block_on(views::confirm_view(
                    &store, &heuristic, &manifest, &approval,
                ))
            });
        },
    );
    group.bench_function(
        format!("view: render confirm ({count} items) to HTML"),
        |bencher| {
            bencher.iter(|| render_view(black_box(&cached)));
        },
    );
    group.bench_function(
        "turn + views: delete … up to the confirmation, then GET /chat's views built and rendered (SQLite)",
        |bencher| {
            bencher.iter(|| runtime.block_on(turn_and_views(&orchestrator)));
        },
    );
    let append_session = runtime.block_on(orchestrator.create_session(None, None))?;
    group.bench_function(
        "baseline: one durable SQLite commit (append one chat message)",
        |bencher| {
            bencher.iter(|| {
                runtime.block_on(store.append_chat_message(
                    append_session.id,
                    MessageChannel::Transcript,
                    "user",
                    None,
                    &json!({"text": "any luck?"}),
                ))
            });
        },
    );
    group.bench_function(
        "baseline: bare GET /demo-api/items?status=open on loopback",
        |bencher| {
            bencher.iter(|| {
                runtime.block_on(async {
                    let response = client.get(&search_url).send().await?;
                    response.bytes().await
                })
            });
        },
    );
    group.finish();
    criterion.final_summary();
    scratch.close();
    Ok(())
}
