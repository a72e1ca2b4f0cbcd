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

mod attempt;
mod cached;
mod record;
mod setup;
mod tool_loop;
mod whole;

pub use whole::{place_answer, Placed, Problem};

use std::time::Instant;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tessera_app::{catalog::Catalog, tree::PageTree};
use uuid::Uuid;

use self::{
    attempt::{run_attempts, Attempt},
    cached::{key_for, look_up, remember, Lookup},
    record::{finish, RecordBase},
    setup::Setup,
};
use super::{
    cache::{canonical_json, literals::Request, CacheLookup, CachePolicy},
    events::{EventKind, EventLog, EventSink},
    generation::{GenerationOutcome, GenerationRecord},
    tools::AGENT_TOOLS,
};
use crate::{
    forms::{
        validate_form::{FormIssue, FormReport},
        FormSchema,
    },
    llm::{ChatModel, PageMode},
    store::{Store, StoreError},
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

/// Refuses a catalog whose component takes the name of one of the loop's own tools.
fn check_tool_names(catalog: &Catalog) -> Result<(), AgentError> {
    match catalog
        .specs()
        .iter()
        .find(|spec| AGENT_TOOLS.contains(&spec.name.as_str()))
    {
        Some(clash) => Err(AgentError::ReservedToolName(clash.name.clone())),
        None => Ok(()),
    }
}

/// How a lookup that found nothing is recorded under `policy`.
fn missed(policy: CachePolicy) -> CacheLookup {
    match policy {
        CachePolicy::Use => CacheLookup::Miss,
        CachePolicy::Refresh => CacheLookup::Refresh,
        CachePolicy::Bypass => CacheLookup::Off,
    }
}

/// One generation from start to record: the cache first, then the attempts, each step an event.
async fn generate(
    input: &GenerationInput,
    model: &dyn ChatModel,
    store: &Store,
    events: Option<EventSink>,
) -> Result<Finished, AgentError> {
    let started = Instant::now();
    check_tool_names(&input.catalog)?;
    let model_name = model.name();
    let setup = Setup::new(input)?;
    let prompt_hash = hex::encode(Sha256::digest(setup.user.as_bytes()));
    let mut log = EventLog::new(input.id, store, events);
    log.push(
        EventKind::Started,
        json!({"model": model_name.to_string(), "cache": input.cache, "max_steps": input.max_steps,
               "mode": input.mode.unwrap_or_else(|| model.page_mode()),
               "prompt_bytes": setup.user.len(), "prompt": input.prompt}),
    );
    let schema_json = input
        .schema
        .as_ref()
        .map_or(Value::Null, FormSchema::to_json_schema);
    let schema_text = canonical_json(&schema_json);
    let request = Request {
        source: input.template.as_deref().unwrap_or(&input.prompt),
        prompt: &input.prompt,
        schema: &schema_text,
        data: &input.data,
    };
    let key = key_for(input, &request, &schema_text, &setup.summary, &model_name);
    let base = RecordBase {
        id: input.id,
        model: &model_name,
        prompt_hash: &prompt_hash,
        started,
    };
    let (lookup, why) = match look_up(input, &request, store, key.as_deref(), &mut log).await? {
        Lookup::Hit(hit) => {
            let transcript = json!({"cache": {"policy": input.cache, "key": key, "hit": true,
                                              "result": CacheLookup::Hit, "rebound": hit.rebound,
                                              "source_generation": hit.source}});
            let mut record = base.record(GenerationOutcome::Ok, &[], true, transcript, &hit.tree);
            record.cache_lookup = Some(CacheLookup::Hit);
            return finish(store, &mut log, record, hit.tree, hit.report).await;
        }
        Lookup::Miss => (missed(input.cache), Value::Null),
        Lookup::Stale(reason) => (CacheLookup::Stale, reason),
    };
    log.flush().await?;

    let mode = input.mode.unwrap_or_else(|| model.page_mode());
    let (attempts, outcome) = run_attempts(model, &setup, mode, &mut log).await?;
    let (tree, report) = attempts
        .last()
        .map(|last| (last.tree.clone(), last.report.clone()))
        .unwrap_or_default();
    if outcome == GenerationOutcome::Ok {
        if let Some(key) = &key {
            remember(store, key, &tree, &request, input.id, &model_name).await?;
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
