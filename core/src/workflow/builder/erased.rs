//! The type-erased steps the runner executes: a step's context and services, its handler,
//! and the built workflow as the registry holds it.

use std::{future::Future, marker::PhantomData, pin::Pin, sync::Arc};

use serde::{de::DeserializeOwned, Serialize};
use serde_json::Value;
use tessera_app::catalog::{Catalog, ComponentSpec};

use crate::{
    llm::ChatModel,
    pages::component_set::KnownComponents,
    workflow::{
        links::LinkHandoff,
        page::PageFactory,
        prompt::Template,
        retry::RetryPolicy,
        run::RunId,
        step::{StepOutput, StepResult},
        WorkflowError,
    },
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
    /// With `takes_unanswered`: the run carries on after the step as after an answer (a YAML
    /// wait with `outcome` routes on how it ended) instead of ending cancelled.
    pub continues_unanswered: bool,
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

/// A workflow definition, ready to register with a [`Registry`](crate::workflow::Registry).
pub struct Workflow<S> {
    pub(crate) definition: WorkflowDef,
    pub(super) state: PhantomData<fn() -> S>,
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
