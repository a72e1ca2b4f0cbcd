//! The seam between a `ui` step and the pages lifecycle: [`PageFactory`].
//!
//! The engine renders the step's prompt, picks its data and resolves its options; making the
//! page (agent loop or cache, storage with a fresh token, the link) is the factory's job, done
//! by the pages module and injected into the runner as `Arc<dyn PageFactory>` so tests can use a
//! fake. The engine never names HTTP, tokens or the agent.

use std::time::Duration;

use serde_json::Value;
use tessera_app::catalog::ComponentSpec;

use super::{
    run::RunId,
    step::{PageHandle, StepError},
};
use crate::{
    agent::CachePolicy,
    forms::FormSchema,
    pages::{links::PageLinks, page::PageId, people::People},
};

/// Per-step options of a `ui` step (`.ui_with(name, prompt, options)`).
#[derive(Clone, Debug, Default)]
pub struct UiOptions {
    /// Components this step may use; empty means the runner's, then the defaults.
    pub components: Vec<ComponentSpec>,
    /// The most agent-loop turns before falling back to the heuristic page.
    pub max_steps: Option<u32>,
    /// How long the link stays valid; the factory's default when `None`.
    pub expires_in: Option<Duration>,
    /// The model spec (`provider:model`); the runner's when `None`.
    pub model: Option<String>,
    /// A JSON pointer into the state selecting the page's data; the whole state when `None`.
    pub data: Option<String>,
    /// Whether the page cache may answer (`Use`, the default), is only written (`Refresh`) or is
    /// left alone (`Bypass`). The page cache is the agent's; this only passes the choice on.
    pub cache: CachePolicy,
    /// Who answers the page: named assignees with a link each and the approvals that settle
    /// it, and whether a Decline needs a reason. The default is one anonymous link.
    pub people: People,
}

/// Everything a factory needs to make one page.
#[derive(Clone, Debug)]
pub struct PageRequest {
    /// The run asking.
    pub run_id: RunId,
    /// The `ui` step's index in its workflow.
    pub step_index: i64,
    /// The `ui` step's name.
    pub step_name: String,
    /// Which attempt at the step this is, from 1. A step runs at least once, so a factory may
    /// be asked again for the same run and step after a crash; it may return the page it made.
    pub attempt: i64,
    /// The prompt, rendered over the run's state.
    pub prompt: String,
    /// The template the prompt was rendered from, when there is one (the page cache keys on it).
    pub template: Option<String>,
    /// The response schema; `None` for a display-only page.
    pub schema: Option<FormSchema>,
    /// The page's data: the state, or the part of it [`UiOptions::data`] selects.
    pub data: Value,
    /// The step's options, resolved: components are the step's, else the runner's (empty means
    /// the default catalog); the model is the step's, else the runner's.
    pub options: UiOptions,
}

impl PageRequest {
    /// The id its generation is recorded under; see [`step_generation_id`].
    #[must_use]
    pub fn generation_id(&self) -> uuid::Uuid {
        step_generation_id(self.run_id, self.step_index, self.attempt)
    }
}

/// The id of the generation record made by attempt `attempt` of step `step_index` of a run.
///
/// Derived rather than stored, so the run's timeline finds a `ui` step's generation records
/// (one per attempt) with no link column: a SHA-256 of the three, shaped as a UUID.
#[must_use]
pub fn step_generation_id(run_id: RunId, step_index: i64, attempt: i64) -> uuid::Uuid {
    use sha2::{Digest as _, Sha256};
    let digest = Sha256::digest(format!("generation:{run_id}:{step_index}:{attempt}"));
    let mut bytes = [0_u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}

/// Makes and stores the page of a `ui` step.
#[async_trait::async_trait]
pub trait PageFactory: Send + Sync {
    /// Generates and stores a page for `request`, tied to its run, and returns its handle
    /// (with a webhook when the page has a form).
    ///
    /// # Errors
    /// [`StepError::Retryable`] for failures that may pass (a model or database hiccup),
    /// [`StepError::Fatal`] for requests no retry fixes.
    async fn create_page(&self, request: PageRequest) -> Result<PageHandle, StepError>;

    /// Mints fresh links for page `page_id`, which an earlier step made (its one link, or each
    /// unanswered assignee's); any earlier link stops working. Called when the step that sends a
    /// page's links runs where they are not known (another process, or after a restart), since
    /// only the tokens' hashes are stored.
    ///
    /// # Errors
    /// [`StepError::Fatal`] when the page is no longer open (revoked, answered); retryable for
    /// database failures.
    async fn relink(&self, page_id: PageId) -> Result<PageLinks, StepError>;
}
