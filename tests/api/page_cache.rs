//! The page cache keyed on shape, not values: the demo workflows' pages and asks that differ only
//! in data values are answered from the cache with no model request, checked on a local
//! OpenAI-compatible server; `refresh` and `off` do what they say; a cached page that no longer
//! fits (stale literal text, or failed validation) falls through to the model.
//!
//! The server behind the mock plays the heuristic model over the OpenAI wire format (plus extra
//! component calls a test asks for), so its pages are real ones and every request is counted.

use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context as _;
use axum::{extract::State, routing::post, Json, Router};
use serde_json::{json, Value};
use tessera::{
    agent::{
        cache::CacheLookup, generate_page, generation::GenerationRecord, AllowedModels,
        CachePolicy, GenerationInput, HeuristicModel,
    },
    llm::{
        model_from_spec, ChatModel, ChatRequest, Message, ModelSettings, ToolCall, ToolDefinition,
    },
    startup::Options,
};

use crate::helpers::{on_both_backends, Backend, TestApp};

/// Extra component calls the mock places on its first turn: `(tool, arguments)`.
type Extra = Arc<Mutex<Vec<(String, Value)>>>;

#[derive(Clone, Default)]
struct Mock {
    requests: Arc<Mutex<usize>>,
    extra: Extra,
}

impl Mock {
    fn requests(&self) -> usize {
        *self.requests.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn place_first(&self, calls: Vec<(&str, Value)>) {
        *self.extra.lock().unwrap_or_else(PoisonError::into_inner) = calls
            .into_iter()
            .map(|(tool, arguments)| (tool.to_owned(), arguments))
            .collect();
    }
}

/// Reads an OpenAI chat completion request back into a [`ChatRequest`].
fn chat_request(body: &Value) -> ChatRequest {
    let text = |value: &Value| value.as_str().map(str::to_owned);
    let messages = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|message| match message["role"].as_str() {
            Some("system") => Message::System(text(&message["content"]).unwrap_or_default()),
            Some("assistant") => Message::Assistant {
                text: text(&message["content"]),
                tool_calls: message["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|call| {
                        let arguments = call["function"]["arguments"]
                            .as_str()
                            .and_then(|raw| serde_json::from_str(raw).ok())
                            .unwrap_or(Value::Null);
                        ToolCall::new(
                            call["id"].as_str().unwrap_or_default(),
                            call["function"]["name"].as_str().unwrap_or_default(),
                            arguments,
                        )
                    })
                    .collect(),
            },
            Some("tool") => {
                let content = text(&message["content"]).unwrap_or_default();
                Message::ToolResult {
                    call_id: text(&message["tool_call_id"]).unwrap_or_default(),
                    name: String::new(),
                    content: serde_json::from_str(&content).unwrap_or(Value::String(content)),
                    is_error: false,
                }
            }
            _ => Message::User(text(&message["content"]).unwrap_or_default()),
        })
        .collect();
    let tools = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|tool| ToolDefinition {
            name: tool["function"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            description: tool["function"]["description"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            parameters: tool["function"]["parameters"].clone(),
        })
        .collect();
    ChatRequest {
        messages,
        tools,
        ..ChatRequest::default()
    }
}

async fn completions(State(mock): State<Mock>, Json(body): Json<Value>) -> Json<Value> {
    *mock.requests.lock().unwrap_or_else(PoisonError::into_inner) += 1;
    let request = chat_request(&body);
    let mut response = HeuristicModel::new().respond(&request);
    let first_turn = !request
        .messages
        .iter()
        .any(|message| matches!(message, Message::Assistant { .. }));
    if first_turn {
        let extra = mock
            .extra
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        for (index, (tool, arguments)) in extra.into_iter().enumerate().rev() {
            response
                .tool_calls
                .insert(0, ToolCall::new(format!("extra_{index}"), tool, arguments));
        }
    }
    let tool_calls: Vec<Value> = response
        .tool_calls
        .iter()
        .map(|call| {
            let arguments = call.arguments.clone().unwrap_or(Value::Null);
            json!({"id": call.id, "type": "function",
                   "function": {"name": call.name, "arguments": arguments.to_string()}})
        })
        .collect();
    let finish = if tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let mut message = json!({"role": "assistant", "content": response.text, "refusal": null});
    if !tool_calls.is_empty() {
        message["tool_calls"] = Value::Array(tool_calls);
    }
    Json(json!({
        "id": "chatcmpl-cache", "object": "chat.completion", "created": 1_741_570_283,
        "model": "mock",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    }))
}

/// Starts the mock and returns it with a model (`openai:mock`) that talks to it.
async fn start_mock() -> anyhow::Result<(Mock, Arc<dyn ChatModel>)> {
    let mock = Mock::default();
    let router = Router::new()
        .route("/v1/chat/completions", post(completions))
        .with_state(mock.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base_url = format!("http://{}/v1", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, router).await });
    let settings = ModelSettings::from_lookup(&|name: &str| match name {
        "OPENAI_BASE_URL" => Some(base_url.clone()),
        "OPENAI_API_KEY" => Some("sk-local".to_owned()),
        "TESSERA_MODEL_TIMEOUT_SECS" => Some("10".to_owned()),
        // The mock answers through the tool protocol (the heuristic's calls); what is tested
        // here is the cache in front of any model.
        "TESSERA_PAGE_MODE" => Some("tools".to_owned()),
        _ => None,
    })?;
    let model = model_from_spec("openai:mock", &settings)?;
    Ok((mock, model))
}

async fn spawn_with_mock(backend: Backend) -> anyhow::Result<(TestApp, Mock)> {
    let (mock, model) = start_mock().await?;
    let options = Options {
        models: Some(AllowedModels::with_model("openai:mock", model)),
        ..Options::default()
    };
    Ok((
        TestApp::builder()
            .backend(backend)
            .options(options)
            .spawn()
            .await?,
        mock,
    ))
}

const REFUND: &str = "Approve the refund of {{ amount }} euros for {{ customer }}? Say yes or no.";

/// The generation records' cache lookups, oldest first.
async fn lookups(app: &TestApp) -> anyhow::Result<Vec<Option<CacheLookup>>> {
    let records = generations_oldest_first(app).await?;
    Ok(records.iter().map(|record| record.cache_lookup).collect())
}

async fn asks_that_differ_only_in_data_values_share_a_page_with_no_model_request(
    backend: Backend,
) -> anyhow::Result<()> {
    let (app, mock) = spawn_with_mock(backend).await?;
    let (_, first) = crate::asks::create(
        &app,
        &json!({"prompt": REFUND, "data": {"amount": 40, "customer": "Ada Lovelace"}}),
    )
    .await?;
    let after_first = mock.requests();
    assert!(after_first > 0, "the first ask's page reached the model");
    let first_html = app.get(&first).await?.text().await?;
    assert!(first_html.contains("Approve the refund of 40 euros for Ada Lovelace?"));

    let (_, second) = crate::asks::create(
        &app,
        &json!({"prompt": REFUND, "data": {"amount": 75, "customer": "Grace Hopper"}}),
    )
    .await?;
    assert_eq!(
        mock.requests(),
        after_first,
        "the second ask asked no model"
    );
    let second_html = app.get(&second).await?.text().await?;
    // The cached heading was re-bound to the new prompt: none of the old values show.
    assert!(
        second_html.contains("Approve the refund of 75 euros for Grace Hopper?"),
        "{second_html}"
    );
    for old in ["Ada", "Lovelace", ">40", " 40 "] {
        assert!(
            !second_html.contains(old),
            "{old} leaked into {second_html}"
        );
    }
    assert_eq!(
        lookups(&app).await?,
        vec![Some(CacheLookup::Miss), Some(CacheLookup::Hit)]
    );
    let metrics = app.get("/metrics").await?.text().await?;
    assert!(
        metrics.contains("tessera_page_cache_lookups_total{result=\"hit\"} 1\n"),
        "{metrics}"
    );
    assert!(metrics.contains("tessera_page_cache_lookups_total{result=\"miss\"} 1\n"));
    app.cleanup().await
}

async fn refresh_rebuilds_and_stores_while_off_neither_reads_nor_writes(
    backend: Backend,
) -> anyhow::Result<()> {
    let (app, mock) = spawn_with_mock(backend).await?;
    let ask = |amount: u32, cache: Option<&str>| {
        let mut body = json!({"prompt": REFUND, "data": {"amount": amount, "customer": "Ada"}});
        if let Some(cache) = cache {
            body["cache"] = json!(cache);
        }
        body
    };
    crate::asks::create(&app, &ask(1, None)).await?;
    let mut seen = mock.requests();
    crate::asks::create(&app, &ask(2, Some("refresh"))).await?;
    assert!(mock.requests() > seen, "refresh does not read the cache");
    seen = mock.requests();
    crate::asks::create(&app, &ask(3, Some("off"))).await?;
    assert!(mock.requests() > seen, "off does not read the cache");
    seen = mock.requests();
    crate::asks::create(&app, &ask(4, Some("use"))).await?;
    assert_eq!(mock.requests(), seen, "use reads what refresh stored");
    let records = generations_oldest_first(&app).await?;
    let results: Vec<_> = records.iter().map(|record| record.cache_lookup).collect();
    assert_eq!(
        results,
        vec![
            Some(CacheLookup::Miss),
            Some(CacheLookup::Refresh),
            Some(CacheLookup::Off),
            Some(CacheLookup::Hit),
        ]
    );
    // The hit served the page `refresh` stored, not the one `off` built.
    assert_eq!(
        records[3].transcript["cache"]["source_generation"],
        json!(records[1].id)
    );

    let response = crate::asks::post_ask(&app, &ask(5, Some("sometimes"))).await?;
    assert_eq!(response.status(), 422);
    let body: Value = response.json().await?;
    assert_eq!(body["error"]["field"], "cache", "{body:#}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("refresh") && message.contains("sometimes"),
        "{message}"
    );
    app.cleanup().await
}

async fn a_model_written_count_of_the_old_rows_is_stale_and_the_model_runs_again(
    backend: Backend,
) -> anyhow::Result<()> {
    let (app, mock) = spawn_with_mock(backend).await?;
    let prompt = "Which tickets should be closed?";
    let (html, why) = falls_through(
        &app,
        &mock,
        prompt,
        ("3 tickets are open", 3),
        ("5 tickets are open", 5),
    )
    .await?;
    assert!(html.contains("5 tickets are open"), "{html}");
    assert!(!html.contains("3 tickets are open"));
    assert_eq!(why["reason"], "stale_literal", "{why:#}");
    assert_eq!(why["values"][0]["value"], "3", "{why:#}");

    // The same count again is that request's value too: the page is reused.
    let seen = mock.requests();
    crate::asks::create(
        &app,
        &json!({"prompt": prompt, "data": {"tickets": tickets(5)}}),
    )
    .await?;
    assert_eq!(mock.requests(), seen);
    let metrics = app.get("/metrics").await?.text().await?;
    assert!(
        metrics.contains("tessera_page_cache_lookups_total{result=\"stale\"} 1\n"),
        "{metrics}"
    );
    app.cleanup().await
}

async fn a_cached_page_that_no_longer_validates_falls_through_to_the_model(
    backend: Backend,
) -> anyhow::Result<()> {
    let (app, mock) = spawn_with_mock(backend).await?;
    // Bound to the third row, which the next snapshot (same shape) lacks.
    let (html, why) = falls_through(
        &app,
        &mock,
        "Which tickets should be closed?",
        ("Oldest: {{/tickets/2/title}}", 3),
        ("Oldest: {{/tickets/0/title}}", 1),
    )
    .await?;
    assert!(html.contains("Oldest: Ticket 0"), "{html}");
    assert_eq!(why["reason"], "no_longer_valid", "{why:#}");
    assert_eq!(why["errors"][0]["rule"], "unbound_data", "{why:#}");
    app.cleanup().await
}

on_both_backends!(
    asks_that_differ_only_in_data_values_share_a_page_with_no_model_request,
    refresh_rebuilds_and_stores_while_off_neither_reads_nor_writes,
    a_model_written_count_of_the_old_rows_is_stale_and_the_model_runs_again,
    a_cached_page_that_no_longer_validates_falls_through_to_the_model,
);

/// The demo workflows' pages, run with varying data straight through `generate_page`.
mod demo_pages {
    use tessera::{
        demo::{
            emails::inbox,
            expenses::claims,
            workflows::{
                ApprovalForm, DigestForm, APPROVAL_PROMPT, DASHBOARD_PROMPT, DIGEST_PROMPT,
                DIGEST_RESULT_PROMPT,
            },
        },
        forms::{FormSchema, FormSchemaType},
        store::Store,
    };

    use super::*;
    use crate::helpers::store_contract;

    /// One demo `ui` step: its template, schema and state (the page's data is the whole state).
    struct DemoPage {
        template: &'static str,
        schema: Option<FormSchema>,
        state: Value,
    }

    /// The four demo pages for variation `round`: different row counts and values each round.
    fn demo_pages(round: usize) -> anyhow::Result<Vec<DemoPage>> {
        let emails: Vec<_> = inbox()
            .into_iter()
            .skip(round * 3)
            .take(3 + round)
            .collect();
        let all_claims = claims();
        let claim_count = all_claims.len();
        let some_claims: Vec<_> = all_claims
            .into_iter()
            .cycle()
            .skip(round)
            .take(1 + round % claim_count)
            .collect();
        let archived: Vec<_> = emails
            .iter()
            .take(round % 3)
            .map(|email| email.id.clone())
            .collect();
        let categories = ["newsletter", "receipt", "notification", "personal", "work"];
        let by_category: Vec<Value> = categories
            .iter()
            .map(|category| {
                let count = emails
                    .iter()
                    .filter(|email| email.category == *category)
                    .count();
                json!({"category": category, "count": count})
            })
            .collect();
        let total: f64 = some_claims.iter().map(|claim| claim.amount).sum();
        let note = ["", "keep the receipts", "ask Finance first"][round % 3];
        Ok(vec![
            DemoPage {
                template: DIGEST_PROMPT,
                schema: Some(DigestForm::form_schema()),
                state: json!({"emails": emails, "archived": [], "note": null}),
            },
            DemoPage {
                template: DIGEST_RESULT_PROMPT,
                schema: None,
                state: json!({"emails": emails, "archived": archived,
                              "note": if note.is_empty() { Value::Null } else { json!(note) }}),
            },
            DemoPage {
                template: APPROVAL_PROMPT,
                schema: Some(ApprovalForm::form_schema()),
                state: json!({"claims": some_claims, "decision": null, "selected": [], "reason": null}),
            },
            DemoPage {
                template: DASHBOARD_PROMPT,
                schema: None,
                state: json!({"by_category": by_category,
                              "totals": {"claims": some_claims.len(), "amount": (total * 100.0).round() / 100.0,
                                         "emails": emails.len()}}),
            },
        ])
    }

    fn input(page: &DemoPage, cache: CachePolicy) -> anyhow::Result<GenerationInput> {
        let mut environment = minijinja::Environment::new();
        environment.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        let prompt = environment.render_str(page.template, &page.state)?;
        let mut input = GenerationInput::new(prompt)
            .with_template(page.template)
            .with_data(page.state.clone())
            .with_cache(cache);
        input.schema = page.schema.clone();
        Ok(input)
    }

    /// Literal text of a tree (every string prop), to compare a hit with a fresh page.
    fn texts(tree: &Value) -> Vec<String> {
        fn walk(value: &Value, out: &mut Vec<String>) {
            match value {
                Value::String(text) => out.push(text.clone()),
                Value::Array(items) => items.iter().for_each(|item| walk(item, out)),
                Value::Object(map) => map.values().for_each(|item| walk(item, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        walk(tree, &mut out);
        out
    }

    /// Runs every demo page ten times with varying data; returns (hits, generations, hits the
    /// earlier key over the rendered prompt would have had).
    async fn run_rounds(
        store: &Store,
        mock: &Mock,
        model: &dyn ChatModel,
    ) -> anyhow::Result<(usize, usize, usize)> {
        let mut hits = 0;
        let mut generations = 0;
        let mut rendered_keys = std::collections::HashSet::new();
        let mut rendered_hits = 0;
        for round in 0..10 {
            for (index, page) in demo_pages(round)?.iter().enumerate() {
                let rendered = input(page, CachePolicy::Use)?.prompt;
                let shape = tessera::agent::summary::DataSummary::of(&page.state).shape_signature();
                if !rendered_keys.insert((index, rendered, shape)) {
                    rendered_hits += 1;
                }
                let before = mock.requests();
                let generated = generate_page(input(page, CachePolicy::Use)?, model, store, None)
                    .await
                    .with_context(|| format!("page {index}, round {round}"))?;
                generations += 1;
                if generated.record.cache_hit {
                    hits += 1;
                    assert_eq!(mock.requests(), before, "a hit asked no model");
                    // What a hit shows is what a fresh page for this data would show.
                    let fresh = generate_page(
                        input(page, CachePolicy::Bypass)?,
                        &HeuristicModel::new(),
                        store,
                        None,
                    )
                    .await?;
                    assert_eq!(
                        texts(&serde_json::to_value(&generated.tree)?),
                        texts(&serde_json::to_value(&fresh.tree)?),
                        "page {index}, round {round}"
                    );
                } else {
                    eprintln!(
                        "page {index}, round {round}: {:?} {}",
                        generated.record.cache_lookup,
                        generated.record.transcript["cache"]["stale"]
                    );
                    assert!(mock.requests() > before, "a miss reached the model");
                }
            }
        }
        Ok((hits, generations, rendered_hits))
    }

    async fn the_demo_pages_hit_the_cache_with_other_row_counts_and_values(
        store: &Store,
    ) -> anyhow::Result<()> {
        let (mock, model) = start_mock().await?;
        let (hits, generations, rendered_hits) = run_rounds(store, &mock, model.as_ref()).await?;
        eprintln!(
            "page cache over the demo workflows: {hits} hits of {generations} generations ({:.0}%); \
             keyed on the rendered prompt: {rendered_hits} ({:.0}%)",
            hits as f64 * 100.0 / generations as f64,
            rendered_hits as f64 * 100.0 / generations as f64
        );
        // Only each page's first round reaches the model, plus one for the result page's second
        // data shape: round 0 (and every third round) has no archived ids and no note (`[]`,
        // `null`), the others have both, and a shape is part of the key.
        assert_eq!((hits, generations), (35, 40));
        Ok(())
    }

    store_contract!(the_demo_pages_hit_the_cache_with_other_row_counts_and_values);
}

/// `count` tickets of one shape: `{id, title}`.
fn tickets(count: usize) -> Vec<Value> {
    (0..count)
        .map(|index| json!({"id": format!("t{index}"), "title": format!("Ticket {index}")}))
        .collect()
}

/// Asks `prompt` over `first.1` tickets with the model placing a Text of `first.0`, then over
/// `second.1` tickets with it placing `second.0`, and checks that the second ask did not reuse
/// the first page but reached the model, its cache lookup recorded as stale. Returns the
/// second page's HTML and why the cached page was stale.
async fn falls_through(
    app: &TestApp,
    mock: &Mock,
    prompt: &str,
    first: (&str, usize),
    second: (&str, usize),
) -> anyhow::Result<(String, Value)> {
    mock.place_first(vec![("Text", json!({"props": {"text": first.0}}))]);
    crate::asks::create(
        app,
        &json!({"prompt": prompt, "data": {"tickets": tickets(first.1)}}),
    )
    .await?;
    let seen = mock.requests();
    mock.place_first(vec![("Text", json!({"props": {"text": second.0}}))]);
    let (_, link) = crate::asks::create(
        app,
        &json!({"prompt": prompt, "data": {"tickets": tickets(second.1)}}),
    )
    .await?;
    assert!(
        mock.requests() > seen,
        "the cached page fell through to the model"
    );
    let html = app.get(&link).await?.text().await?;
    let records = generations_oldest_first(app).await?;
    assert_eq!(records[1].cache_lookup, Some(CacheLookup::Stale));
    Ok((html, records[1].transcript["cache"]["stale"].clone()))
}

/// The app's generation records, oldest first.
async fn generations_oldest_first(app: &TestApp) -> anyhow::Result<Vec<GenerationRecord>> {
    let mut records = app.store.recent_generations(50).await?;
    records.sort_by_key(|record| record.created_at_ms);
    Ok(records)
}
