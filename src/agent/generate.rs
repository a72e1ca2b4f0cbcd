//! `generate_page`: the agent loop that turns a prompt, a response schema and data into a valid
//! page tree by tool calls (DESIGN.md §2).
//!
//! One generation: look in the page cache; on a miss, run the model — system prompt, user prompt
//! with the data summary, one tool per component plus the loop's own tools — turn by turn,
//! executing every tool call in order against the page being built. The loop ends only when the
//! model calls `Finish` (or stops calling tools) **and** code's own `ValidateForm` passes; if the
//! model stops early, code tells it what is still wrong and goes on. Tool calls a model writes as
//! JSON in its text are read as calls of that turn (`llm::text_calls`) and counted in the record
//! (`text_tool_calls` per turn and per attempt). Past `max_steps` turns, or
//! when the model call fails after its retries, the heuristic model builds the page through the
//! same loop and the generation is recorded as fallen back. Every generation leaves a
//! [`GenerationRecord`] and a stream of [`GenerationEvent`]s in the store.
//!
//! The generation's id is chosen by the caller ([`GenerationInput::id`]) so it can subscribe to
//! the events before the loop starts.

mod whole;

pub use whole::{place_answer, Placed, Problem};

use std::{sync::OnceLock, time::Instant};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tessera_app::{catalog::Catalog, tree::PageTree};
use uuid::Uuid;

use super::{
    cache::{
        cache_key, canonical_json,
        literals::{provenance_of, rebind_prompt_text, stale_values, Request},
        CacheLookup, CachePolicy, CachedPage,
    },
    events::{EventKind, EventLog, EventSink},
    generation::{GenerationOutcome, GenerationRecord},
    heuristic::{HeuristicModel, HEURISTIC},
    page_schema::{page_schema, PageRequest},
    prompt::{follow_up, page_system_prompt, system_prompt, user_prompt_for},
    summary::DataSummary,
    tools::{tool_definitions, Effect, Reply, Workspace, AGENT_TOOLS, FINISH},
};
use crate::{
    forms::{
        validate_form::{validate_form, FormIssue, FormReport},
        FormSchema,
    },
    llm::{
        adopt_text_tool_calls, ChatModel, ChatRequest, Message, ModelError, ModelName, PageMode,
        ToolDefinition, Usage,
    },
    store::{now_ms, Store, StoreError},
};

/// Model turns allowed per attempt unless the step says otherwise.
pub const DEFAULT_MAX_STEPS: usize = 10;
/// The reply budget asked of the model per turn.
const MAX_TOKENS: u32 = 4096;

/// What went wrong generating a page. Model failures are not here: the loop falls back instead.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// A custom component took the name of one of the loop's own tools.
    #[error("component `{0}` uses a name reserved for the agent's own tools")]
    ReservedToolName(String),
    /// A prompt template failed to render (a broken template file).
    #[error("prompt template: {0}")]
    Template(#[from] minijinja::Error),
    /// The store failed while recording.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Not even the heuristic page validated; the record says what was tried.
    #[error("no valid page could be generated: {}", describe(.errors))]
    Failed {
        /// The recorded generation (outcome `failed`).
        record: Box<GenerationRecord>,
        /// The last errors of the last attempt.
        errors: Vec<FormIssue>,
    },
}

fn describe(errors: &[FormIssue]) -> String {
    errors
        .iter()
        .map(|issue| format!("{}: {}", issue.rule, issue.message))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Everything one generation needs.
#[derive(Clone, Debug)]
pub struct GenerationInput {
    /// The generation's id, known before it starts (subscribe to its events with it).
    pub id: Uuid,
    /// The request, already rendered from the step's prompt template.
    pub prompt: String,
    /// The template `prompt` was rendered from, when there is one: the page cache keys on it
    /// rather than on the rendering, so requests differing only in interpolated values share
    /// a page (see `agent::cache`).
    pub template: Option<String>,
    /// The response schema; `None` for a page that only shows data.
    pub schema: Option<FormSchema>,
    /// The step's data, which the page binds to.
    pub data: Value,
    /// The resolved component set.
    pub catalog: Catalog,
    /// Model turns allowed per attempt.
    pub max_steps: usize,
    /// Whether the page cache may answer.
    pub cache: CachePolicy,
    /// The page is answered by named assignees, each through a link of their own (code shows
    /// whom a link is for and adds their Decline): the model is told so, and places no Cancel.
    pub for_assignees: bool,
    /// How the model is asked for the page; `None` for the model's own preference
    /// ([`ChatModel::page_mode`]).
    pub mode: Option<PageMode>,
}

impl GenerationInput {
    /// A display-only generation for `prompt` with no data, the default components, a fresh id,
    /// [`DEFAULT_MAX_STEPS`] and the cache on.
    #[must_use]
    pub fn new(prompt: impl Into<String>) -> Self {
        Self {
            id: Uuid::new_v4(),
            prompt: prompt.into(),
            template: None,
            schema: None,
            data: json!({}),
            catalog: Catalog::defaults(),
            max_steps: DEFAULT_MAX_STEPS,
            cache: CachePolicy::Use,
            for_assignees: false,
            mode: None,
        }
    }

    /// The same input, asking the model for the page in `mode` whatever it prefers.
    #[must_use]
    pub fn with_mode(mut self, mode: PageMode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// The same input asking for `schema`.
    #[must_use]
    pub fn with_schema(mut self, schema: FormSchema) -> Self {
        self.schema = Some(schema);
        self
    }

    /// The same input over `data`.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = data;
        self
    }

    /// The same input with another turn limit.
    #[must_use]
    pub fn with_max_steps(mut self, max_steps: usize) -> Self {
        self.max_steps = max_steps;
        self
    }

    /// The same input, rendered from `template` (the page cache keys on the template).
    #[must_use]
    pub fn with_template(mut self, template: impl Into<String>) -> Self {
        self.template = Some(template.into());
        self
    }

    /// The same input with another cache policy.
    #[must_use]
    pub fn with_cache(mut self, cache: CachePolicy) -> Self {
        self.cache = cache;
        self
    }
}

/// A generated page.
#[derive(Clone, Debug)]
pub struct Generated {
    /// The page tree.
    pub tree: PageTree,
    /// Code's `ValidateForm` report on it (ok; warnings may remain).
    pub report: FormReport,
    /// What was recorded.
    pub record: GenerationRecord,
    /// The input's page data, handed back: a caller that stores the page with its data need not
    /// have copied the rows to generate it.
    pub data: Value,
}

/// How one attempt (one model's run of the loop) ended.
#[derive(Debug)]
enum AttemptEnd {
    /// Finished with a valid page.
    Valid,
    /// `max_steps` turns without a finished, valid page.
    Exhausted,
    /// The model call failed (after its retries).
    ModelFailed(ModelError),
}

struct Attempt {
    model: ModelName,
    /// `tools` (the tool loop) or `whole` (the whole page in one answer).
    mode: &'static str,
    end: AttemptEnd,
    turns: i64,
    usage: Usage,
    /// Tool calls read from the model's text rather than its `tool_calls` (`llm::text_calls`).
    text_tool_calls: usize,
    tree: PageTree,
    report: FormReport,
    transcript: Vec<Value>,
}

impl Attempt {
    /// One model call of this attempt, counted; `None` (the attempt ends, the error recorded
    /// and reported) when it fails after its retries.
    async fn call(
        &mut self,
        model: &dyn ChatModel,
        request: ChatRequest,
        turn: usize,
        log: &mut EventLog<'_>,
    ) -> Result<Option<crate::llm::ChatResponse>, AgentError> {
        match model.chat(request).await {
            Ok(response) => {
                self.turns += 1;
                self.usage.input_tokens += response.usage.input_tokens;
                self.usage.output_tokens += response.usage.output_tokens;
                Ok(Some(response))
            }
            Err(error) => {
                log.push(
                    EventKind::ModelError,
                    json!({"turn": turn, "model": self.model.to_string(), "error": error.to_string()}),
                );
                log.flush().await?;
                self.end = AttemptEnd::ModelFailed(error);
                Ok(None)
            }
        }
    }

    fn summary(&self) -> Value {
        let (end, error) = match &self.end {
            AttemptEnd::Valid => ("valid", None),
            AttemptEnd::Exhausted => ("exhausted", None),
            AttemptEnd::ModelFailed(error) => ("model_error", Some(error.to_string())),
        };
        json!({
            "model": self.model.to_string(),
            "mode": self.mode,
            "end": end,
            "error": error,
            "turns": self.turns,
            "tokens_in": self.usage.input_tokens,
            "tokens_out": self.usage.output_tokens,
            "text_tool_calls": self.text_tool_calls,
            "last_errors": self.report.errors,
            "transcript": self.transcript,
        })
    }
}

/// The conversation and page one attempt starts from.
struct Setup<'a> {
    input: &'a GenerationInput,
    system: String,
    user: String,
    summary: DataSummary,
    /// Made on first use: a cache hit calls no model, so it never needs them.
    tools: OnceLock<Vec<ToolDefinition>>,
    /// The whole-page answer's schema, made on first use like the tools.
    page_schema: OnceLock<Value>,
}

impl Setup<'_> {
    /// The tool definitions offered to the model.
    fn tools(&self) -> &[ToolDefinition] {
        self.tools
            .get_or_init(|| tool_definitions(&self.input.catalog))
    }

    fn page_request(&self) -> PageRequest<'_> {
        PageRequest::new(
            &self.input.catalog,
            self.input.schema.as_ref(),
            &self.summary,
        )
    }

    /// The schema a whole-page answer must follow.
    fn page_schema(&self) -> &Value {
        self.page_schema
            .get_or_init(|| page_schema(&self.page_request()))
    }

    /// The system prompt of a whole-page answer: the format, the components, the fields.
    fn page_system(&self) -> Result<String, AgentError> {
        Ok(page_system_prompt(
            &self.page_request(),
            self.input.for_assignees,
        )?)
    }
}

/// Builds a page for `input` with `model` (falling back to the heuristic), records it in `store`
/// and reports each step to the store's event log and to `events`.
///
/// # Errors
/// [`AgentError::ReservedToolName`] before anything runs; [`AgentError::Template`] or
/// [`AgentError::Store`] when recording fails; [`AgentError::Failed`] (after recording) when not
/// even the heuristic page validates.
pub async fn generate_page(
    input: GenerationInput,
    model: &dyn ChatModel,
    store: &Store,
    events: Option<EventSink>,
) -> Result<Generated, AgentError> {
    let Finished {
        tree,
        report,
        record,
    } = generate(&input, model, store, events).await?;
    Ok(Generated {
        tree,
        report,
        record,
        data: input.data,
    })
}

/// What [`generate_page`] made, before the input's data is handed back with it.
struct Finished {
    tree: PageTree,
    report: FormReport,
    record: GenerationRecord,
}

async fn generate(
    input: &GenerationInput,
    model: &dyn ChatModel,
    store: &Store,
    events: Option<EventSink>,
) -> Result<Finished, AgentError> {
    let started = Instant::now();
    if let Some(clash) = input
        .catalog
        .specs()
        .iter()
        .find(|spec| AGENT_TOOLS.contains(&spec.name.as_str()))
    {
        return Err(AgentError::ReservedToolName(clash.name.clone()));
    }
    let model_name = model.name();
    let summary = DataSummary::of(&input.data);
    let setup = Setup {
        input,
        system: system_prompt(input.schema.is_some())?,
        user: user_prompt_for(
            &input.prompt,
            input.schema.as_ref(),
            &summary,
            input.for_assignees,
        )?,
        summary: summary.clone(),
        tools: OnceLock::new(),
        page_schema: OnceLock::new(),
    };
    let prompt_hash = hex::encode(Sha256::digest(setup.user.as_bytes()));
    let mut log = EventLog::new(input.id, store, events);
    log.push(
        EventKind::Started,
        json!({"model": model_name.to_string(), "cache": input.cache, "max_steps": input.max_steps,
               "mode": input.mode.unwrap_or_else(|| model.page_mode()),
               "prompt_bytes": setup.user.len(), "prompt": input.prompt}),
    );
    let schema_text = canonical_json(
        &input
            .schema
            .as_ref()
            .map_or(Value::Null, FormSchema::to_json_schema),
    );
    let request = Request {
        source: input.template.as_deref().unwrap_or(&input.prompt),
        prompt: &input.prompt,
        schema: &schema_text,
        data: &input.data,
    };
    // A page for named people is built differently (Decline, no Cancel): it has keys of its own.
    let keyed_source = if input.for_assignees {
        format!("{}\n<people>", request.source)
    } else {
        request.source.to_owned()
    };
    let key = input.cache.writes().then(|| {
        cache_key(
            &keyed_source,
            &schema_text,
            &summary,
            &input.catalog,
            &model_name,
        )
    });
    let base = RecordBase {
        id: input.id,
        model: &model_name,
        prompt_hash: &prompt_hash,
        started,
    };
    let mut lookup = match input.cache {
        CachePolicy::Use => CacheLookup::Miss,
        CachePolicy::Refresh => CacheLookup::Refresh,
        CachePolicy::Bypass => CacheLookup::Off,
    };
    let mut why = Value::Null;
    if let (Some(key), true) = (&key, input.cache.reads()) {
        match cached(input, &request, store, key, &mut log).await? {
            Lookup::Hit(hit) => {
                let mut record = base.record(
                    GenerationOutcome::Ok,
                    &[],
                    true,
                    json!({"cache": {"policy": input.cache, "key": key, "hit": true,
                                     "result": CacheLookup::Hit, "rebound": hit.rebound,
                                     "source_generation": hit.source}}),
                    &hit.tree,
                );
                record.cache_lookup = Some(CacheLookup::Hit);
                return finish(store, &mut log, record, hit.tree, hit.report).await;
            }
            Lookup::Miss => {}
            Lookup::Stale(reason) => {
                lookup = CacheLookup::Stale;
                why = reason;
            }
        }
    }
    log.flush().await?;

    let mode = input.mode.unwrap_or_else(|| model.page_mode());
    let mut attempts = Vec::new();
    if mode == PageMode::Tools {
        attempts.push(attempt(model, &setup, &mut log).await?);
    } else {
        let whole = whole::attempt(model, &setup, &mut log).await?;
        // A provider or server that cannot constrain its answer refuses the request outright;
        // the same model may still build the page by tool calls.
        let refused = matches!(
            &whole.end,
            AttemptEnd::ModelFailed(ModelError::Rejected { .. })
        );
        attempts.push(whole);
        if refused && mode == PageMode::Auto {
            log.push(
                EventKind::FallBack,
                json!({"reason": "the provider refused the page schema; building by tool calls",
                       "to": "tools"}),
            );
            attempts.push(attempt(model, &setup, &mut log).await?);
        }
    }
    let mut outcome = GenerationOutcome::Ok;
    let last_end = attempts.last().map(|last| &last.end);
    if !matches!(last_end, Some(AttemptEnd::Valid)) {
        outcome = GenerationOutcome::Failed;
        if model_name.provider != HEURISTIC {
            let reason = match last_end {
                Some(AttemptEnd::ModelFailed(error)) => format!("model error: {error}"),
                _ if mode == PageMode::Tools => {
                    format!("no valid page after {} turns", input.max_steps)
                }
                _ => "no valid page after the answer and one repair turn".to_owned(),
            };
            let last_errors = attempts
                .last()
                .map(|last| last.report.errors.clone())
                .unwrap_or_default();
            log.push(
                EventKind::FallBack,
                json!({"reason": reason, "last_errors": last_errors, "to": HEURISTIC}),
            );
            let fallback = attempt(&HeuristicModel::new(), &setup, &mut log).await?;
            if matches!(fallback.end, AttemptEnd::Valid) {
                outcome = GenerationOutcome::FellBack;
            }
            attempts.push(fallback);
        }
    }
    let (tree, report) = attempts
        .last()
        .map(|last| (last.tree.clone(), last.report.clone()))
        .unwrap_or_default();
    if outcome == GenerationOutcome::Ok {
        if let Some(key) = &key {
            store
                .put_cached_page(&CachedPage {
                    key: key.clone(),
                    tree: serde_json::to_value(&tree).unwrap_or(Value::Null),
                    provenance: provenance_of(&tree, &request),
                    generation_id: input.id,
                    model: model_name.to_string(),
                    hits: 0,
                    created_at_ms: now_ms(),
                })
                .await?;
        }
    }
    let transcript = json!({
        "cache": {"policy": input.cache, "key": key, "hit": false, "result": lookup,
                  "stale": why},
        "attempts": attempts.iter().map(Attempt::summary).collect::<Vec<_>>(),
    });
    let mut record = base.record(outcome, &attempts, false, transcript, &tree);
    record.cache_lookup = Some(lookup);
    if outcome == GenerationOutcome::Failed {
        let errors = report.errors.clone();
        finish(store, &mut log, record.clone(), tree, report).await?;
        return Err(AgentError::Failed {
            record: Box::new(record),
            errors,
        });
    }
    finish(store, &mut log, record, tree, report).await
}

struct RecordBase<'a> {
    id: Uuid,
    model: &'a ModelName,
    prompt_hash: &'a str,
    started: Instant,
}

impl RecordBase<'_> {
    fn record(
        &self,
        outcome: GenerationOutcome,
        attempts: &[Attempt],
        cache_hit: bool,
        transcript: Value,
        tree: &PageTree,
    ) -> GenerationRecord {
        let sum = |pick: fn(&Attempt) -> u64| {
            i64::try_from(attempts.iter().map(pick).sum::<u64>()).unwrap_or(i64::MAX)
        };
        GenerationRecord {
            id: self.id,
            model: self.model.model.clone(),
            provider: self.model.provider.clone(),
            prompt_hash: self.prompt_hash.to_owned(),
            outcome,
            turns: attempts.iter().map(|attempt| attempt.turns).sum(),
            tokens_in: sum(|attempt| attempt.usage.input_tokens),
            tokens_out: sum(|attempt| attempt.usage.output_tokens),
            latency_ms: i64::try_from(self.started.elapsed().as_millis()).unwrap_or(i64::MAX),
            cache_hit,
            cache_lookup: None,
            transcript,
            tree: serde_json::to_value(tree).ok(),
            created_at_ms: now_ms(),
        }
    }
}

/// Stores the record, then the `finished` event (so a reader who saw it finds the record).
async fn finish(
    store: &Store,
    log: &mut EventLog<'_>,
    record: GenerationRecord,
    tree: PageTree,
    report: FormReport,
) -> Result<Finished, AgentError> {
    log.flush().await?;
    store.insert_generation(&record).await?;
    log.push(
        EventKind::Finished,
        json!({"outcome": record.outcome, "turns": record.turns, "tokens_in": record.tokens_in,
               "tokens_out": record.tokens_out, "latency_ms": record.latency_ms,
               "cache_hit": record.cache_hit}),
    );
    log.flush().await?;
    Ok(Finished {
        tree,
        report,
        record,
    })
}

struct CacheHit {
    tree: PageTree,
    report: FormReport,
    source: Uuid,
    /// Pieces of literal text re-bound from the old prompt to the new one.
    rebound: usize,
}

/// What the cache holds for one generation.
enum Lookup {
    /// A page that fits the new request, re-bound to it.
    Hit(CacheHit),
    /// Nothing usable under the key.
    Miss,
    /// A page that no longer fits; why, for the record.
    Stale(Value),
}

/// The cached page under `key`, re-bound to this request, when there is one and it fits: no
/// literal text holds a value of the old request that this one lacks, and code's `ValidateForm`
/// passes against this data.
async fn cached(
    input: &GenerationInput,
    request: &Request<'_>,
    store: &Store,
    key: &str,
    log: &mut EventLog<'_>,
) -> Result<Lookup, AgentError> {
    let Some(page) = store.cached_page(key).await? else {
        log.push(EventKind::CacheMiss, json!({"reason": "empty"}));
        return Ok(Lookup::Miss);
    };
    let Ok(mut tree) = serde_json::from_value::<PageTree>(page.tree) else {
        log.push(EventKind::CacheMiss, json!({"reason": "unreadable"}));
        return Ok(Lookup::Miss);
    };
    let rebound = rebind_prompt_text(&mut tree, &page.provenance.prompt, &input.prompt);
    let stale = stale_values(&tree, &page.provenance, request);
    if !stale.is_empty() {
        let why = json!({"reason": "stale_literal", "values": stale,
                         "source_generation": page.generation_id});
        log.push(EventKind::CacheMiss, why.clone());
        return Ok(Lookup::Stale(why));
    }
    let report = validate_form(&tree, &input.catalog, input.schema.as_ref(), &input.data);
    if !report.ok {
        let why = json!({"reason": "no_longer_valid", "errors": report.errors,
                         "source_generation": page.generation_id});
        log.push(EventKind::CacheMiss, why.clone());
        return Ok(Lookup::Stale(why));
    }
    store.record_cache_hit(key, now_ms()).await?;
    log.push(
        EventKind::CacheHit,
        json!({"source_generation": page.generation_id, "hits": page.hits + 1,
               "rebound": rebound}),
    );
    Ok(Lookup::Hit(CacheHit {
        tree,
        report,
        source: page.generation_id,
        rebound,
    }))
}

/// One model's run of the loop, from an empty page.
async fn attempt(
    model: &dyn ChatModel,
    setup: &Setup<'_>,
    log: &mut EventLog<'_>,
) -> Result<Attempt, AgentError> {
    let input = setup.input;
    let mut workspace = Workspace::new(&input.catalog, input.schema.as_ref(), &input.data);
    let mut messages = vec![
        Message::system(setup.system.clone()),
        Message::user(setup.user.clone()),
    ];
    let mut attempt = Attempt {
        model: model.name(),
        mode: "tools",
        end: AttemptEnd::Exhausted,
        turns: 0,
        usage: Usage::default(),
        text_tool_calls: 0,
        tree: PageTree::default(),
        report: FormReport::default(),
        transcript: Vec::new(),
    };
    for turn in 1..=input.max_steps {
        let request = ChatRequest {
            messages: messages.clone(),
            tools: setup.tools().to_vec(),
            max_tokens: Some(MAX_TOKENS),
            temperature: None,
            response_format: None,
        };
        let Some(mut response) = attempt.call(model, request, turn, log).await? else {
            break;
        };
        // Small models often write their calls as JSON text; they count as calls of this turn.
        let text_tool_calls =
            adopt_text_tool_calls(&mut response, setup.tools(), &format!("text_{turn}_"));
        attempt.text_tool_calls += text_tool_calls;
        messages.push(Message::assistant(&response));
        let mut calls = Vec::new();
        let mut finish_called = response.tool_calls.is_empty();
        let mut told = false;
        for call in &response.tool_calls {
            let reply = if call.name == FINISH && call.arguments.is_ok() {
                finish_called = true;
                let report = workspace.check();
                validation_event(log, turn, "finish", &report);
                if report.ok {
                    Reply {
                        content: json!({"finished": true}),
                        is_error: false,
                        effect: Effect::Finish,
                    }
                } else {
                    told = true;
                    let message = follow_up(&report.errors)?;
                    log.push(
                        EventKind::FollowUp,
                        json!({"turn": turn, "message": message, "errors": report.errors}),
                    );
                    Reply {
                        content: json!({"error": {"rule": "not_finished", "message": message,
                                                  "errors": report.errors}}),
                        is_error: true,
                        effect: Effect::Refused,
                    }
                }
            } else {
                workspace.execute(call)
            };
            call_event(log, turn, &call.id, &call.name, &reply);
            calls.push(json!({
                "id": call.id,
                "tool": call.name,
                "arguments": match &call.arguments {
                    Ok(arguments) => arguments.clone(),
                    Err(malformed) => json!({"malformed": malformed.raw, "error": malformed.error}),
                },
                "result": reply.content,
                "is_error": reply.is_error,
            }));
            messages.push(if reply.is_error {
                Message::tool_error(call, reply.content)
            } else {
                Message::tool_result(call, reply.content)
            });
        }
        attempt.transcript.push(json!({
            "turn": turn,
            "text": response.text,
            "stop_reason": response.stop_reason,
            "usage": response.usage,
            "text_tool_calls": text_tool_calls,
            "calls": calls,
        }));
        if finish_called {
            let report = workspace.check();
            if report.ok {
                if response.tool_calls.is_empty() {
                    validation_event(log, turn, "stopped", &report);
                }
                attempt.end = AttemptEnd::Valid;
                log.flush().await?;
                break;
            }
            if !told {
                if response.tool_calls.is_empty() {
                    validation_event(log, turn, "stopped", &report);
                }
                let message = follow_up(&report.errors)?;
                log.push(
                    EventKind::FollowUp,
                    json!({"turn": turn, "message": message, "errors": report.errors}),
                );
                messages.push(Message::user(message));
            }
        }
        log.flush().await?;
    }
    attempt.report = workspace.check();
    attempt.tree = workspace.tree;
    Ok(attempt)
}

fn validation_event(log: &mut EventLog<'_>, turn: usize, source: &str, report: &FormReport) {
    let rules: Vec<Value> = report
        .errors
        .iter()
        .map(|issue| json!({"rule": issue.rule, "field": issue.field, "node": issue.node}))
        .collect();
    log.push(
        EventKind::Validation,
        json!({"turn": turn, "source": source, "ok": report.ok, "errors": rules,
               "warnings": report.warnings.len()}),
    );
}

fn call_event(log: &mut EventLog<'_>, turn: usize, call_id: &str, tool: &str, reply: &Reply) {
    let base = json!({"turn": turn, "call_id": call_id, "tool": tool});
    let (kind, extra) = match &reply.effect {
        Effect::Placed {
            id,
            component,
            inside,
        } if inside.is_empty() => (
            EventKind::ToolCall,
            json!({"component": component, "node": id}),
        ),
        Effect::Placed {
            id,
            component,
            inside,
        } => (
            EventKind::ToolCall,
            json!({"component": component, "node": id, "inside": inside}),
        ),
        Effect::Updated { id } | Effect::Moved { id } => {
            (EventKind::ToolCall, json!({ "node": id }))
        }
        Effect::Read => (EventKind::ToolCall, json!({})),
        Effect::Removed { ids } => (EventKind::ToolCall, json!({ "removed": ids })),
        Effect::Finish => (EventKind::ToolCall, json!({})),
        Effect::Validated(report) => {
            validation_event(log, turn, "tool", report);
            (EventKind::ToolCall, json!({"ok": report.ok}))
        }
        Effect::Refused => (
            EventKind::ToolError,
            json!({"error": reply.content.get("error").cloned().unwrap_or(Value::Null)}),
        ),
    };
    let mut payload = base;
    if let (Some(target), Value::Object(extra)) = (payload.as_object_mut(), extra) {
        target.extend(extra);
    }
    log.push(kind, payload);
}
