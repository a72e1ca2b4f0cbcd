//! Durable workflows: a typed builder, and runners that execute runs from the database.
//!
//! A workflow is a list of named steps over a JSON-serializable state (DESIGN.md §7), built
//! with [`workflow`] and registered in a [`Registry`]. A run's state, cursor, status, attempts
//! and every step's input, output and error live in the database, never only in memory, so any
//! runner in any process can resume a run: steps run at least once, a finished step never runs
//! again, and a page submission resumes its run exactly once.
//!
//! - [`builder`]: the typed builder (`step`, `ui`, `prompt`, `step_with_page`,
//!   `step_with_response`, and `step_with_answer_in_run` for a step that must also hear of a
//!   wait ending unanswered) and the erased steps the runner executes;
//! - [`step`]: step errors ([`StepError`]: retryable or fatal), pages, waits, responses and the
//!   [`Unanswered`] markers (Cancel pressed, declined, wait expired);
//! - [`prompt`]: minijinja prompt templates typed by their response;
//! - [`page`]: the [`PageFactory`] seam to the pages lifecycle;
//! - [`retry`]: per-step [`RetryPolicy`];
//! - [`registry`]: workflow names to definitions, starting runs;
//! - [`runner`]: claiming runs under a lease, heartbeats, the step transaction, retries,
//!   timeouts, shutdown;
//! - [`run`]: the run, its steps and the lease, as stored;
//! - [`yaml`]: declarative workflows from YAML files, compiled into the same steps.
//!
//! Errors: step closures return [`StepError`]; everything else here returns
//! [`WorkflowError`], which wraps [`StoreError`](crate::store::StoreError) for database failures.
//! This module must not know HTTP, tokens or the agent loop: `ui` steps reach them only through
//! the injected [`PageFactory`].

pub mod builder;
pub mod links;
pub mod overview;
pub mod page;
pub mod prompt;
pub mod registry;
pub mod retry;
pub use tessera_store::records::run;
pub mod runner;
pub mod step;
pub mod yaml;

pub use builder::{
    workflow, DynamicPage, PromptOutput, StepKind, Then, Workflow, WorkflowBuilder, WorkflowState,
};
pub use page::{PageFactory, PageRequest, UiOptions};
pub use prompt::Prompt;
pub use registry::{Registry, StepInfo, WorkflowInfo};
pub use retry::RetryPolicy;
pub use runner::{DrainReport, Runner, RunnerBuilder, RunnerConfig};
pub use step::{
    declined_by, wait_for, Answer, Decline, NoResponse, OnTimeout, PageHandle, Response, StepError,
    StepOutput, StepResult, Text, Unanswered, Wait, WaitToken,
};

use crate::store::StoreError;

/// What can go wrong defining workflows and starting or running them.
#[derive(Debug, thiserror::Error)]
pub enum WorkflowError {
    /// A workflow definition is wrong (the author's fault, found at startup).
    #[error("workflow {workflow} is invalid: {reason}")]
    Invalid {
        /// The workflow's name.
        workflow: String,
        /// What is wrong.
        reason: String,
    },
    /// Two workflows share a name.
    #[error("a workflow named {0} is already registered")]
    Duplicate(String),
    /// No workflow has this name (the caller's fault).
    #[error("no workflow named {0} is registered")]
    UnknownWorkflow(String),
    /// A run's input does not decode as the workflow's state (the caller's fault).
    #[error("the input does not fit workflow {workflow}: {reason}")]
    BadInput {
        /// The workflow's name.
        workflow: String,
        /// Why it does not decode.
        reason: String,
    },
    /// The store failed, or refused (not found, conflict).
    #[error(transparent)]
    Store(#[from] StoreError),
}
