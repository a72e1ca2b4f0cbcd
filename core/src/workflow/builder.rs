//! The typed workflow builder (DESIGN.md §7) and the type-erased steps the runner executes.
//!
//! The builder carries two types: the run's state `S` and `P`, what the last step hands to the
//! next one — `()` (nothing), [`PageHandle<R>`] after a `ui` step, [`Response<R>`] after a step
//! that waited. Methods that consume a page or a response exist only on the matching `P`, so
//! `page` and `response` reach the next step and no other, and a response is typed by the `ui`
//! step's prompt. Each step is then erased into a [`StepDef`]: state and step input travel as
//! JSON, because that is how they are stored and any runner may pick up the run.

mod erased;
mod handlers;
mod prompt_step;
mod ui;

use std::{future::Future, marker::PhantomData, sync::Arc};

use serde::{de::DeserializeOwned, Serialize};
use serde_json::Value;

use crate::{
    forms::FormSchemaType,
    workflow::{
        page::UiOptions,
        prompt::Prompt,
        retry::RetryPolicy,
        run::RunId,
        step::{Answer, NoResponse, PageHandle, Response, StepError, StepOutput, StepResult},
        WorkflowError,
    },
};

pub(crate) use erased::{Goto, Handler, Services, StepContext, StepDef, StepDone, WorkflowDef};
pub use erased::{StepKind, Workflow, WorkflowState};
pub(crate) use handlers::working_links;
pub use handlers::Then;
use handlers::{answer_handler, code_step};
use prompt_step::sealed;
pub use prompt_step::PromptOutput;
pub(crate) use prompt_step::{ask_for_answer, ask_model, no_answer};
pub(crate) use ui::make_page;
use ui::ui_step;
pub use ui::DynamicPage;

/// Starts a workflow definition named `name` over state `S`.
///
/// ```
/// # extern crate tessera_core as tessera;
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
            continues_unanswered: false,
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
            continues_unanswered: false,
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
                let page: PageHandle<R> = decode("the previous step's page", input)?;
                let links = working_links(&context, page.page_id).await?;
                let page = page.with_links(links);
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
                    Answer::Cancelled | Answer::Expired | Answer::Declined(_) => Err(
                        StepError::fatal(anyhow::anyhow!("the wait ended unanswered")),
                    ),
                }
            }
        });
        self.push(code_step(name.into(), handler, false))
    }

    /// As [`WorkflowBuilder::step_with_response_in_run`], but the step also runs when the wait
    /// ended unanswered — the person pressed Cancel or declined, or the wait timed out with
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
