//! The registry: workflow names to their definitions, and starting runs by name.
//!
//! A run stores only its workflow's name; whichever runner claims it looks the steps up here.
//! Every server process registers the same workflows at startup (`startup.rs`), so any of them
//! can resume any run.

use std::{collections::BTreeMap, sync::Arc};

use tessera_app::catalog::ComponentSpec;

use serde::Serialize;
use serde_json::Value;

use super::{
    builder::{StepKind, Workflow, WorkflowDef},
    run::{NewRun, Run, RunStatus},
    WorkflowError,
};
use crate::store::Store;

/// The registered workflows. Build it at startup, then share it (`Arc<Registry>`).
#[derive(Default)]
pub struct Registry {
    workflows: BTreeMap<String, Arc<WorkflowDef>>,
}

/// A registered workflow as the runs API and UI describe it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WorkflowInfo {
    /// Its name.
    pub name: String,
    /// Its steps, in order.
    pub steps: Vec<StepInfo>,
}

/// One step of a registered workflow.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StepInfo {
    /// Its name.
    pub name: String,
    /// Code, ui or prompt.
    pub kind: StepKind,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Registry")
            .field("workflows", &self.workflows.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Registry {
    /// An empty registry.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a workflow.
    ///
    /// # Errors
    /// [`WorkflowError::Duplicate`] when a workflow of that name is already registered.
    pub fn register<S>(&mut self, workflow: Workflow<S>) -> Result<&mut Self, WorkflowError> {
        let definition = workflow.definition;
        if self.workflows.contains_key(&definition.name) {
            return Err(WorkflowError::Duplicate(definition.name));
        }
        self.workflows
            .insert(definition.name.clone(), Arc::new(definition));
        Ok(self)
    }

    /// Adds a workflow, builder style.
    ///
    /// # Errors
    /// As [`Registry::register`].
    pub fn with<S>(mut self, workflow: Workflow<S>) -> Result<Self, WorkflowError> {
        self.register(workflow)?;
        Ok(self)
    }

    /// Every component a registered `ui_with` step names, workflow by workflow (sorted by
    /// name), step by step.
    pub(crate) fn step_components(&self) -> impl Iterator<Item = &ComponentSpec> {
        self.workflows
            .values()
            .flat_map(|definition| definition.steps.iter())
            .flat_map(|step| step.components.iter())
    }

    /// The registered names, sorted.
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        self.workflows.keys().cloned().collect()
    }

    /// A registered workflow's steps.
    #[must_use]
    pub fn describe(&self, name: &str) -> Option<WorkflowInfo> {
        self.workflows.get(name).map(|definition| WorkflowInfo {
            name: definition.name.clone(),
            steps: definition
                .steps
                .iter()
                .map(|step| StepInfo {
                    name: step.name.clone(),
                    kind: step.kind,
                })
                .collect(),
        })
    }

    pub(crate) fn get(&self, name: &str) -> Option<Arc<WorkflowDef>> {
        self.workflows.get(name).cloned()
    }

    /// Starts a run of the workflow `name` with `input` as its initial state; it is ready for
    /// any runner at once.
    ///
    /// # Errors
    /// [`WorkflowError::UnknownWorkflow`] for a name not registered, [`WorkflowError::BadInput`]
    /// when `input` does not decode as the workflow's state, [`WorkflowError::Store`] when it
    /// cannot be stored.
    pub async fn start_run(
        &self,
        store: &Store,
        name: &str,
        input: Value,
    ) -> Result<Run, WorkflowError> {
        let definition = self
            .get(name)
            .ok_or_else(|| WorkflowError::UnknownWorkflow(name.to_owned()))?;
        (definition.check_state)(&input).map_err(|error| WorkflowError::BadInput {
            workflow: name.to_owned(),
            reason: error.to_string(),
        })?;
        let run = store
            .create_run(&NewRun {
                workflow: definition.name.clone(),
                state: input,
                status: RunStatus::Ready,
            })
            .await?;
        let mut run = run;
        if let Some(digest) = &definition.digest {
            // A runner that claims the run before this lands runs it on this same definition.
            store.set_run_definition_digest(run.id, digest).await?;
            run.definition_digest = Some(digest.clone());
        }
        tracing::info!(run.id = %run.id, workflow.name = %run.workflow, "run started");
        Ok(run)
    }

    /// Starts a run from a typed initial state; see [`Registry::start_run`].
    ///
    /// # Errors
    /// As [`Registry::start_run`]; [`WorkflowError::BadInput`] also when `state` does not
    /// serialize.
    pub async fn start<S: Serialize>(
        &self,
        store: &Store,
        name: &str,
        state: &S,
    ) -> Result<Run, WorkflowError> {
        let input = serde_json::to_value(state).map_err(|error| WorkflowError::BadInput {
            workflow: name.to_owned(),
            reason: error.to_string(),
        })?;
        self.start_run(store, name, input).await
    }
}
