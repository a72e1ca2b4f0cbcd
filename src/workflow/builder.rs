//! The typed workflow builder (DESIGN.md §7) and the type-erased steps the runner executes.
//!
//! The builder carries two types: the run's state `S` and `P`, what the last step hands to the
//! next one — `()` (nothing), [`PageHandle<R>`] after a `ui` step, [`Response<R>`] after a step
//! that waited. Methods that consume a page or a response exist only on the matching `P`, so
//! `page` and `response` reach the next step and no other, and a response is typed by the `ui`
//! step's prompt. Each step is then erased into a [`StepDef`]: state and step input travel as
//! JSON, because that is how they are stored and any runner may pick up the run.

use std::{future::Future, marker::PhantomData, pin::Pin, sync::Arc};

use serde::{de::DeserializeOwned, Serialize};
use serde_json::Value;
use tessera_app::catalog::{Catalog, ComponentSpec};

use crate::pages::component_set::KnownComponents;

use super::{
    links::{LinkHandoff, MintedLink},
    page::{PageFactory, PageRequest, UiOptions},
    prompt::{Prompt, Template},
    retry::RetryPolicy,
    run::{RunId, TimeoutAction},
    step::{
        Answer, NoResponse, OnTimeout, PageHandle, Response, StepError, StepOutput, StepResult,
        Text, Unanswered, Wait,
    },
    WorkflowError,
};
use crate::{
    forms::{FormSchema, FormSchemaType},
    llm::{ChatModel, ChatRequest, Message, ToolDefinition},
    pages::page::PageId,
    store::now_ms,
};

/// What a run's state must be: JSON in and out, movable between tasks.
pub trait WorkflowState: Serialize + DeserializeOwned + Send + 'static {}

impl<S: Serialize + DeserializeOwned + Send + 'static> WorkflowState for S {}

pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// What the runner lends a step: the run, the attempt, and the runner's services.
#[derive(Clone)]
pub(crate) struct StepContext {
    pub run_id: RunId,
    pub step_index: i64,
    pub step_name: String,
    pub attempt: i64,
    /// The index of the step whose output this step is handed (the one that ran before it,
    /// which a jump may have brought from further back); `None` for the first step.
    pub previous_index: Option<i64>,
    pub services: Arc<Services>,
}

/// The runner-level services steps may call.
#[derive(Clone, Default)]
pub(crate) struct Services {
    pub page_factory: Option<Arc<dyn PageFactory>>,
    pub model: Option<Arc<dyn ChatModel>>,
    pub model_spec: Option<String>,
    pub components: Vec<ComponentSpec>,
    /// What served pages render with (see `Runner::page_catalog`); set when the runner is built.
    pub page_catalog: Catalog,
    /// Every spec a page may record (see `Runner::known_components`); set when the runner is built.
    pub known_components: KnownComponents,
    /// The links this process minted, for the step after a `ui` step and for `POST /api/asks`.
    pub links: Arc<LinkHandoff>,
}

/// A step's result: the run's new state and what the next step gets.
pub(crate) struct StepDone {
    pub state: Value,
    pub output: StepOutput,
    /// Where the run goes next when not to the following step (declarative workflows only).
    pub goto: Option<Goto>,
}

/// A step's choice of what runs after it, instead of the following step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Goto {
    /// The step at this index, later than the current one.
    Step(usize),
    /// Nothing: the run succeeds.
    End,
}

/// A step with its types erased: `(context, state, input) → (state, output)`.
pub(crate) type Handler =
    Arc<dyn Fn(StepContext, Value, Value) -> BoxFuture<StepResult<StepDone>> + Send + Sync>;

/// What kind of step it is, for the run timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// Code (`step`, `step_with_page`, `step_with_response`).
    Code,
    /// A generated page (`ui`, `ui_with`, `display`).
    Ui,
    /// A model call (`prompt`).
    Prompt,
}

/// One erased step.
#[derive(Clone)]
pub(crate) struct StepDef {
    pub name: String,
    pub kind: StepKind,
    pub retry: Option<RetryPolicy>,
    pub template: Option<Template>,
    pub handler: Handler,
    /// The step is handed a wait that ended unanswered (Cancel, expiry) instead of the run
    /// being cancelled before it; see `step_with_answer_in_run`.
    pub takes_unanswered: bool,
    /// The components a `ui_with` step names (empty: the runner's). Served pages render with
    /// them too (see `Runner::page_catalog`).
    pub components: Vec<ComponentSpec>,
}

/// A built workflow with its types erased, as the registry holds it.
pub(crate) struct WorkflowDef {
    pub name: String,
    pub steps: Vec<StepDef>,
    pub default_retry: RetryPolicy,
    pub check_state: fn(&Value) -> Result<(), serde_json::Error>,
    /// The digest of the file a declarative workflow was loaded from; a run records it at its
    /// start, and a run whose file changed since is failed rather than resumed (see `yaml`).
    pub digest: Option<String>,
}

impl WorkflowDef {
    pub fn retry_policy(&self, index: usize) -> RetryPolicy {
        self.steps
            .get(index)
            .and_then(|step| step.retry)
            .unwrap_or(self.default_retry)
    }
}

/// A workflow definition, ready to register with a [`Registry`](super::Registry).
pub struct Workflow<S> {
    pub(crate) definition: WorkflowDef,
    state: PhantomData<fn() -> S>,
}

impl Workflow<Value> {
    /// A workflow over a JSON state from an erased definition (declarative workflows).
    pub(crate) fn from_definition(definition: WorkflowDef) -> Result<Self, WorkflowError> {
        if definition.steps.is_empty() {
            return Err(WorkflowError::Invalid {
                workflow: definition.name,
                reason: "it has no step".into(),
            });
        }
        Ok(Self {
            definition,
            state: PhantomData,
        })
    }
}

impl<S> Workflow<S> {
    /// Its name, unique in a registry.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.definition.name
    }

    /// Its steps' names, in order.
    #[must_use]
    pub fn step_names(&self) -> Vec<&str> {
        self.definition
            .steps
            .iter()
            .map(|step| step.name.as_str())
            .collect()
    }
}

/// Starts a workflow definition named `name` over state `S`.
///
/// ```
/// use serde::{Deserialize, Serialize};
/// use tessera::forms::FormSchema;
/// use tessera::workflow::{wait_for, workflow, Prompt};
///
/// #[derive(Serialize, Deserialize)]
/// struct Digest { emails: Vec<String>, archived: Vec<String> }
///
/// #[derive(FormSchema, Serialize, Deserialize)]
/// struct DigestForm { archive_ids: Vec<String>, note: Option<String> }
///
/// let digest = workflow::<Digest>("email-digest")
///     .step("Fetch", |state: Digest| async move { Ok(Digest { emails: vec!["a".into()], ..state }) })
///     .ui("ShowDigest", Prompt::<DigestForm>::new("Group {{ emails | length }} emails"))
///     .step_with_page("Notify", |state, page| async move {
///         println!("open {}", page.link);
///         Ok((state, wait_for(page.webhook)))
///     })
///     .step_with_response("Archive", |state, response: DigestForm| async move {
///         Ok(Digest { archived: response.archive_ids, ..state })
///     })
///     .build()?;
/// assert_eq!(digest.step_names(), ["Fetch", "ShowDigest", "Notify", "Archive"]);
/// # Ok::<(), tessera::workflow::WorkflowError>(())
/// ```
pub fn workflow<S: WorkflowState>(name: impl Into<String>) -> WorkflowBuilder<S, ()> {
    WorkflowBuilder {
        name: name.into(),
        steps: Vec::new(),
        default_retry: RetryPolicy::default(),
        types: PhantomData,
    }
}

/// Builds a workflow step by step; see [`workflow`].
#[must_use = "a builder does nothing until built and registered"]
pub struct WorkflowBuilder<S, P> {
    name: String,
    steps: Vec<StepDef>,
    default_retry: RetryPolicy,
    types: PhantomData<fn() -> (S, P)>,
}

fn fatal(context: &str, error: impl std::fmt::Display) -> StepError {
    StepError::fatal(anyhow::anyhow!("{context}: {error}"))
}

fn decode<T: DeserializeOwned>(what: &str, value: Value) -> StepResult<T> {
    serde_json::from_value(value).map_err(|error| fatal(&format!("{what} does not decode"), error))
}

fn encode<T: Serialize>(what: &str, value: &T) -> StepResult<Value> {
    serde_json::to_value(value).map_err(|error| fatal(&format!("{what} does not encode"), error))
}

impl<S: WorkflowState, P> WorkflowBuilder<S, P> {
    fn push<Q>(mut self, step: StepDef) -> WorkflowBuilder<S, Q> {
        self.steps.push(step);
        WorkflowBuilder {
            name: self.name,
            steps: self.steps,
            default_retry: self.default_retry,
            types: PhantomData,
        }
    }

    /// Adds a code step: the state in, the new state out. Nothing reaches the next step but the
    /// state.
    pub fn step<F, Fut>(self, name: impl Into<String>, step: F) -> WorkflowBuilder<S, ()>
    where
        F: Fn(S) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = StepResult<S>> + Send + 'static,
    {
        let step = Arc::new(step);
        let handler: Handler = Arc::new(move |_context, state, _input| {
            let step = Arc::clone(&step);
            Box::pin(async move {
                let state: S = decode("the run's state", state)?;
                let state = step(state).await?;
                Ok(StepDone {
                    state: encode("the run's state", &state)?,
                    output: StepOutput::None,
                    goto: None,
                })
            })
        });
        self.push(code_step(name.into(), handler, false))
    }

    /// Adds a `ui` step: a page generated from `prompt` (rendered over the state) asking for an
    /// `R`, with the state as its data. The next step gets the page's [`PageHandle<R>`].
    ///
    /// `R` must be a flat form (DESIGN.md §5), so anything else fails to compile:
    /// ```compile_fail,E0277
    /// use serde::{Deserialize, Serialize};
    /// use tessera::workflow::{workflow, Prompt};
    ///
    /// #[derive(Serialize, Deserialize)]
    /// struct State {}
    ///
    /// // Deserializable, but not a `#[derive(FormSchema)]` form: a nested list of numbers.
    /// #[derive(Serialize, Deserialize)]
    /// struct Scores { scores: Vec<Vec<i64>> }
    ///
    /// let _ = workflow::<State>("scores").ui("Ask", Prompt::<Scores>::new("Scores?"));
    /// ```
    pub fn ui<R>(
        self,
        name: impl Into<String>,
        prompt: Prompt<R>,
    ) -> WorkflowBuilder<S, PageHandle<R>>
    where
        R: FormSchemaType + 'static,
    {
        self.ui_with(name, prompt, UiOptions::default())
    }

    /// Adds a `ui` step with per-step options (components, agent-loop turns, expiry, model,
    /// data selector); see [`WorkflowBuilder::ui`].
    pub fn ui_with<R>(
        self,
        name: impl Into<String>,
        prompt: Prompt<R>,
        options: UiOptions,
    ) -> WorkflowBuilder<S, PageHandle<R>>
    where
        R: FormSchemaType + 'static,
    {
        self.push(ui_step(
            name.into(),
            prompt.into_template(),
            Some(R::form_schema()),
            options,
        ))
    }

    /// Adds a display-only `ui` step: a page with no form. The next step gets its handle, whose
    /// webhook is `None`.
    pub fn display(
        self,
        name: impl Into<String>,
        prompt: Prompt<NoResponse>,
        options: UiOptions,
    ) -> WorkflowBuilder<S, PageHandle<NoResponse>> {
        self.push(ui_step(name.into(), prompt.into_template(), None, options))
    }

    /// Adds a `ui` step whose prompt, schema, data and options come from the run's state, for
    /// workflows whose form is chosen at run time (the asks API). The next step gets the page's
    /// handle typed by the response as JSON.
    pub fn ui_from_state<F>(
        self,
        name: impl Into<String>,
        page: F,
    ) -> WorkflowBuilder<S, PageHandle<Value>>
    where
        F: Fn(&S) -> StepResult<DynamicPage> + Send + Sync + 'static,
    {
        let page = Arc::new(page);
        let handler: Handler = Arc::new(move |context, state, _input| {
            let page = Arc::clone(&page);
            Box::pin(async move {
                let typed: S = decode("the run's state", state.clone())?;
                let request = page(&typed)?;
                make_page(&context, state, request).await
            })
        });
        self.push(StepDef {
            name: name.into(),
            kind: StepKind::Ui,
            retry: None,
            template: None,
            handler,
            takes_unanswered: false,
            components: Vec::new(),
        })
    }

    /// Adds a model step: `prompt` rendered over the state and sent to the runner's model.
    ///
    /// With a form type `R` (a schema) the model must answer in that shape, and the answer's
    /// fields are merged into the state (replacing fields of the same name). With [`Text`] (no
    /// schema) the state is unchanged and the reply reaches the next step only, as a
    /// [`Response<Text>`].
    pub fn prompt<R: PromptOutput>(
        self,
        name: impl Into<String>,
        prompt: Prompt<R>,
    ) -> WorkflowBuilder<S, R::Next> {
        let template = prompt.into_template();
        self.push(StepDef {
            name: name.into(),
            kind: StepKind::Prompt,
            retry: None,
            template: Some(template.clone()),
            handler: <R as sealed::PromptKind>::handler::<S>(sealed::PromptTemplate(template)).0,
            takes_unanswered: false,
            components: Vec::new(),
        })
    }

    /// Sets the retry policy of the step just added.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        if let Some(step) = self.steps.last_mut() {
            step.retry = Some(policy);
        }
        self
    }

    /// Sets the retry policy of every step without its own.
    pub fn default_retry(mut self, policy: RetryPolicy) -> Self {
        self.default_retry = policy;
        self
    }

    /// Checks the definition and finishes it.
    ///
    /// # Errors
    /// [`WorkflowError::Invalid`] when the name is empty, it has no step, two steps share a
    /// name, or a prompt template does not parse.
    pub fn build(self) -> Result<Workflow<S>, WorkflowError> {
        let invalid = |reason: String| WorkflowError::Invalid {
            workflow: self.name.clone(),
            reason,
        };
        if self.name.trim().is_empty() {
            return Err(invalid("the name is empty".into()));
        }
        if self.steps.is_empty() {
            return Err(invalid("it has no step".into()));
        }
        for (index, step) in self.steps.iter().enumerate() {
            if step.name.trim().is_empty() {
                return Err(invalid(format!("step {index} has no name")));
            }
            if self.steps[..index]
                .iter()
                .any(|earlier| earlier.name == step.name)
            {
                return Err(invalid(format!("two steps are named {}", step.name)));
            }
            if let Some(template) = &step.template {
                template.check().map_err(|error| {
                    invalid(format!(
                        "the prompt of step {} does not parse: {error}",
                        step.name
                    ))
                })?;
            }
        }
        Ok(Workflow {
            definition: WorkflowDef {
                name: self.name,
                steps: self.steps,
                default_retry: self.default_retry,
                check_state: |state| serde_json::from_value::<S>(state.clone()).map(|_| ()),
                digest: None,
            },
            state: PhantomData,
        })
    }
}

impl<S: WorkflowState, R: 'static> WorkflowBuilder<S, PageHandle<R>> {
    /// Adds a code step that gets the page the previous `ui` step made — typically to send its
    /// link and return `wait_for(page.webhook)`, which suspends the run until the page is
    /// submitted and hands the typed response to the step after.
    pub fn step_with_page<F, Fut, O>(
        self,
        name: impl Into<String>,
        step: F,
    ) -> WorkflowBuilder<S, O::Next>
    where
        F: Fn(S, PageHandle<R>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = StepResult<(S, O)>> + Send + 'static,
        O: Then,
    {
        let step = Arc::new(step);
        let handler: Handler = Arc::new(move |context, state, input| {
            let step = Arc::clone(&step);
            Box::pin(async move {
                let state: S = decode("the run's state", state)?;
                let mut page: PageHandle<R> = decode("the previous step's page", input)?;
                page.link = working_link(&context, page.page_id).await?;
                let (state, then) = step(state, page).await?;
                Ok(StepDone {
                    state: encode("the run's state", &state)?,
                    output: then.into_output()?,
                    goto: None,
                })
            })
        });
        self.push(code_step(name.into(), handler, false))
    }
}

impl<S: WorkflowState, R: DeserializeOwned + Send + 'static> WorkflowBuilder<S, Response<R>> {
    /// Adds a code step that gets the typed response the previous step waited for (or the
    /// reply of a schema-less prompt).
    pub fn step_with_response<F, Fut>(
        self,
        name: impl Into<String>,
        step: F,
    ) -> WorkflowBuilder<S, ()>
    where
        F: Fn(S, R) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = StepResult<S>> + Send + 'static,
    {
        self.step_with_response_in_run(name, move |_run: RunId, state, response| {
            step(state, response)
        })
    }

    /// As [`WorkflowBuilder::step_with_response`], also handing the step its run's id: a
    /// stable key for work that must be recognised when repeated (a callback's delivery id).
    pub fn step_with_response_in_run<F, Fut>(
        self,
        name: impl Into<String>,
        step: F,
    ) -> WorkflowBuilder<S, ()>
    where
        F: Fn(RunId, S, R) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = StepResult<S>> + Send + 'static,
    {
        let step = Arc::new(step);
        let handler = answer_handler(move |run, state: S, answer: Answer<R>| {
            let step = Arc::clone(&step);
            async move {
                match answer {
                    Answer::Given(response) => step(run, state, response).await,
                    // The runner cancels the run before such a step; never hand it a marker.
                    Answer::Cancelled | Answer::Expired => Err(StepError::fatal(anyhow::anyhow!(
                        "the wait ended unanswered"
                    ))),
                }
            }
        });
        self.push(code_step(name.into(), handler, false))
    }

    /// As [`WorkflowBuilder::step_with_response_in_run`], but the step also runs when the wait
    /// ended unanswered — the person pressed Cancel, or the wait timed out with
    /// [`OnTimeout::Cancel`] — and gets [`Answer`] saying which. Once it succeeds on an
    /// unanswered wait the run ends cancelled. For telling someone who waits for the answer
    /// (a callback) that none is coming.
    pub fn step_with_answer_in_run<F, Fut>(
        self,
        name: impl Into<String>,
        step: F,
    ) -> WorkflowBuilder<S, ()>
    where
        F: Fn(RunId, S, Answer<R>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = StepResult<S>> + Send + 'static,
    {
        self.push(code_step(name.into(), answer_handler(step), true))
    }
}

/// The link the step after a `ui` step sends: the one this process minted with the page, or —
/// when another process made it, or this one restarted since — a fresh one for the same page
/// (the stored output holds no link, only the page's id), which stops the old one working.
pub(crate) async fn working_link(context: &StepContext, page_id: PageId) -> StepResult<String> {
    if let Some(link) = context.services.links.get(page_id) {
        return Ok(link);
    }
    let factory = context.services.page_factory.clone().ok_or_else(|| {
        StepError::fatal(anyhow::anyhow!(
            "the runner has no page factory to mint a link with"
        ))
    })?;
    let link = factory.relink(page_id).await?;
    tracing::info!(run.id = %context.run_id, page.id = %page_id, "the page's link was not in this process's memory (a restart or another process made it): a fresh one was minted and the earlier one no longer works");
    context.services.links.put(MintedLink {
        run_id: context.run_id,
        page_id,
        link: link.clone(),
    });
    Ok(link)
}

/// The erased handler of a step after a wait: decodes the state and the [`Answer`] (a marker,
/// or the response as an `R`), runs `step`, encodes the new state.
fn answer_handler<S, R, F, Fut>(step: F) -> Handler
where
    S: WorkflowState,
    R: DeserializeOwned + Send + 'static,
    F: Fn(RunId, S, Answer<R>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = StepResult<S>> + Send + 'static,
{
    let step = Arc::new(step);
    Arc::new(move |context, state, input| {
        let step = Arc::clone(&step);
        Box::pin(async move {
            let state: S = decode("the run's state", state)?;
            let answer = match Unanswered::of(&input) {
                Some(Unanswered::Cancelled) => Answer::Cancelled,
                Some(Unanswered::Expired) => Answer::Expired,
                None => Answer::Given(decode("the response", input)?),
            };
            let state = step(context.run_id, state, answer).await?;
            Ok(StepDone {
                state: encode("the run's state", &state)?,
                output: StepOutput::None,
                goto: None,
            })
        })
    })
}

/// A code step (no template, no components of its own).
fn code_step(name: String, handler: Handler, takes_unanswered: bool) -> StepDef {
    StepDef {
        name,
        kind: StepKind::Code,
        retry: None,
        template: None,
        handler,
        takes_unanswered,
        components: Vec::new(),
    }
}

/// What a step that got a page may return besides the state: `()` (carry on) or a
/// [`Wait<R>`] (suspend until the page is submitted; the next step gets an `R`).
pub trait Then: Send + 'static {
    /// What the next step gets (`()` or [`Response<R>`]).
    type Next;

    /// The stored form.
    ///
    /// # Errors
    /// A fatal [`StepError`] when a default response does not encode.
    #[doc(hidden)]
    fn into_output(self) -> StepResult<StepOutput>;
}

impl Then for () {
    type Next = ();

    fn into_output(self) -> StepResult<StepOutput> {
        Ok(StepOutput::None)
    }
}

impl<R: Serialize + Send + 'static> Then for Wait<R> {
    type Next = Response<R>;

    fn into_output(self) -> StepResult<StepOutput> {
        let page_id = self.token.map(|token| token.page_id);
        let (deadline_ms, on_timeout, default_response) = match self.timeout {
            None => (None, None, None),
            Some((duration, on_timeout)) => {
                let after = i64::try_from(duration.as_millis()).unwrap_or(i64::MAX);
                let deadline = now_ms().saturating_add(after);
                let (action, default_response) = match on_timeout {
                    OnTimeout::Fail => (TimeoutAction::Fail, None),
                    // Resumed with the expiry marker, so a `step_with_answer` after the wait
                    // hears of it; any other step is not run and the run ends cancelled.
                    OnTimeout::Cancel => {
                        (TimeoutAction::Continue, Some(Unanswered::Expired.marker()))
                    }
                    OnTimeout::Continue(response) => (
                        TimeoutAction::Continue,
                        Some(encode("the default response", &response)?),
                    ),
                };
                (Some(deadline), Some(action), default_response)
            }
        };
        if page_id.is_none() && deadline_ms.is_none() {
            return Err(StepError::fatal(anyhow::anyhow!(
                "wait_for on a page without a form (no webhook) needs a timeout"
            )));
        }
        Ok(StepOutput::Wait {
            page_id,
            deadline_ms,
            on_timeout,
            default_response,
        })
    }
}

/// What a state-driven `ui` step asks for, worked out from the run's state when it runs (see
/// [`WorkflowBuilder::ui_from_state`]).
#[derive(Clone, Debug)]
pub struct DynamicPage {
    /// The prompt, used as written (not a template: callers' text may contain `{{`).
    pub prompt: String,
    /// The template `prompt` was rendered from, if the caller rendered one: the page cache keys
    /// on it, so pages differing only in interpolated values share a cached tree.
    pub template: Option<String>,
    /// The response schema; `None` for a display-only page.
    pub schema: Option<FormSchema>,
    /// The page's data.
    pub data: Value,
    /// Per-page options (expiry, components, model); `data` is ignored here.
    pub options: UiOptions,
}

fn ui_step(
    name: String,
    template: Template,
    schema: Option<FormSchema>,
    options: UiOptions,
) -> StepDef {
    let template_for_step = template.clone();
    let components = options.components.clone();
    let handler: Handler = Arc::new(move |context, state, _input| {
        let template = template_for_step.clone();
        let schema = schema.clone();
        let options = options.clone();
        Box::pin(async move {
            let prompt = template
                .render(&state)
                .map_err(|error| fatal("the prompt does not render", error))?;
            let data = match options.data.as_deref() {
                None => state.clone(),
                Some(pointer) => state.pointer(pointer).cloned().ok_or_else(|| {
                    StepError::fatal(anyhow::anyhow!(
                        "the data selector {pointer} matches nothing in the state"
                    ))
                })?,
            };
            let page = DynamicPage {
                prompt,
                template: Some(template.source().to_owned()),
                schema,
                data,
                options,
            };
            make_page(&context, state, page).await
        })
    });
    StepDef {
        name,
        kind: StepKind::Ui,
        retry: None,
        template: Some(template),
        handler,
        takes_unanswered: false,
        components,
    }
}

/// Asks the runner's page factory for `page` and hands its handle to the next step: the one
/// path every kind of `ui` step takes.
pub(crate) async fn make_page(
    context: &StepContext,
    state: Value,
    page: DynamicPage,
) -> StepResult<StepDone> {
    let factory = context.services.page_factory.clone().ok_or_else(|| {
        StepError::fatal(anyhow::anyhow!(
            "the runner has no page factory for ui steps"
        ))
    })?;
    let DynamicPage {
        prompt,
        template,
        schema,
        data,
        mut options,
    } = page;
    if options.components.is_empty() {
        options.components.clone_from(&context.services.components);
    }
    // A component chosen from the state at run time must still be one the server can render
    // when the person opens the link, possibly after a restart: the page records this very spec.
    if let Some(unknown) = options
        .components
        .iter()
        .find(|spec| !context.services.known_components.contains(spec))
    {
        return Err(StepError::fatal(anyhow::anyhow!(
            "component {} is not in the runner's page catalog, so its page could not be served: \
             register it with the runner (`RunnerBuilder::components`, `Options::components`)",
            unknown.name
        )));
    }
    if options.model.is_none() {
        options.model.clone_from(&context.services.model_spec);
    }
    let has_form = schema.is_some();
    let mut page = factory
        .create_page(PageRequest {
            run_id: context.run_id,
            step_index: context.step_index,
            step_name: context.step_name.clone(),
            attempt: context.attempt,
            prompt,
            template,
            schema,
            data,
            options,
        })
        .await?;
    if !has_form {
        page.webhook = None;
    }
    // The stored output drops the link; the next step finds it here (see `working_link`).
    context.services.links.put(MintedLink {
        run_id: context.run_id,
        page_id: page.page_id,
        link: page.link.clone(),
    });
    Ok(StepDone {
        state,
        output: StepOutput::Page { page },
        goto: None,
    })
}

/// What a `prompt` step asks the model for: [`Text`], or a form type whose fields are merged
/// into the state.
pub trait PromptOutput: sealed::PromptKind + Sized + Send + 'static {
    /// What the next step gets.
    type Next;
}

mod sealed {
    use super::{Handler, Template, WorkflowState};

    /// A prompt template, opaque outside the crate.
    pub struct PromptTemplate(pub(crate) Template);

    /// An erased step, opaque outside the crate.
    pub struct ErasedStep(pub(crate) Handler);

    /// How each kind of prompt becomes a step; sealed so only this module implements it.
    pub trait PromptKind {
        fn handler<S: WorkflowState>(template: PromptTemplate) -> ErasedStep;
    }
}

/// The tool a model answers a schema prompt with.
pub(crate) const ANSWER_TOOL: &str = "Answer";

pub(crate) async fn ask_model(
    context: &StepContext,
    prompt: String,
    tools: Vec<ToolDefinition>,
) -> StepResult<crate::llm::ChatResponse> {
    let model = context.services.model.clone().ok_or_else(|| {
        StepError::fatal(anyhow::anyhow!("the runner has no model for prompt steps"))
    })?;
    let mut messages = Vec::new();
    if !tools.is_empty() {
        messages.push(Message::system(format!(
            "Answer by calling the {ANSWER_TOOL} tool exactly once with arguments that fit its schema."
        )));
    }
    messages.push(Message::user(prompt));
    model
        .chat(ChatRequest {
            messages,
            tools,
            ..ChatRequest::default()
        })
        .await
        .map_err(|error| {
            if error.is_retryable() {
                StepError::retryable(error)
            } else {
                StepError::fatal(error)
            }
        })
}

impl PromptOutput for Text {
    type Next = Response<Text>;
}

impl sealed::PromptKind for Text {
    fn handler<S: WorkflowState>(template: sealed::PromptTemplate) -> sealed::ErasedStep {
        let template = template.0;
        sealed::ErasedStep(Arc::new(move |context, state, _input| {
            let template = template.clone();
            Box::pin(async move {
                let prompt = template
                    .render(&state)
                    .map_err(|error| fatal("the prompt does not render", error))?;
                let reply = ask_model(&context, prompt, Vec::new()).await?;
                let text = Text {
                    text: reply.text.unwrap_or_default(),
                };
                Ok(StepDone {
                    state,
                    output: StepOutput::Value {
                        value: encode("the reply", &text)?,
                    },
                    goto: None,
                })
            })
        }))
    }
}

impl<R> PromptOutput for R
where
    R: FormSchemaType + Serialize + DeserializeOwned + Send + 'static,
{
    type Next = ();
}

impl<R> sealed::PromptKind for R
where
    R: FormSchemaType + Serialize + DeserializeOwned + Send + 'static,
{
    fn handler<S: WorkflowState>(template: sealed::PromptTemplate) -> sealed::ErasedStep {
        let template = template.0;
        sealed::ErasedStep(Arc::new(move |context, state, _input| {
            let template = template.clone();
            Box::pin(async move {
                let prompt = template
                    .render(&state)
                    .map_err(|error| fatal("the prompt does not render", error))?;
                let tool = ToolDefinition {
                    name: ANSWER_TOOL.into(),
                    description: "Give your answer in this shape.".into(),
                    parameters: R::json_schema(),
                };
                let reply = ask_model(&context, prompt, vec![tool]).await?;
                let arguments = reply
                    .tool_calls
                    .into_iter()
                    .find(|call| call.name == ANSWER_TOOL)
                    .and_then(|call| call.arguments.ok())
                    .or_else(|| {
                        reply
                            .text
                            .as_deref()
                            .and_then(|text| serde_json::from_str(text.trim()).ok())
                    })
                    .ok_or_else(|| {
                        StepError::retryable(anyhow::anyhow!(
                            "the model gave no {ANSWER_TOOL} in the schema's shape"
                        ))
                    })?;
                let answer: R = serde_json::from_value(arguments).map_err(|error| {
                    StepError::retryable(anyhow::anyhow!(
                        "the model's answer does not fit the schema: {error}"
                    ))
                })?;
                let state = merge(state, encode("the answer", &answer)?)?;
                let state: S = decode("the state with the answer merged in", state)?;
                Ok(StepDone {
                    state: encode("the run's state", &state)?,
                    output: StepOutput::None,
                    goto: None,
                })
            })
        }))
    }
}

/// Sets every field of `answer` on `state` (both JSON objects).
fn merge(state: Value, answer: Value) -> StepResult<Value> {
    match (state, answer) {
        (Value::Object(mut state), Value::Object(answer)) => {
            state.extend(answer);
            Ok(Value::Object(state))
        }
        _ => Err(StepError::fatal(anyhow::anyhow!(
            "a prompt's answer merges only into a state that is a JSON object"
        ))),
    }
}
