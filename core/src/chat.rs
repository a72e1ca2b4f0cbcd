//! Chat orchestration over a site's API manifest: the model proposes, code decides (DESIGN.md §8).
//!
//! A person's turn goes to [`Orchestrator::handle_turn`], which routes it into a micro-thread
//! ([`routing`], [`threads`]), runs slash commands by code ([`slash`]), and otherwise runs the
//! model loop: the model (a provider, or the offline [`planner`]) proposes tool calls; each call
//! passes the session's capability scope ([`scope`]), the operation's parameter schema
//! ([`manifest`]) and the policy table derived from tags ([`policy`]) before the executor sends
//! real HTTP requests ([`http_executor`]), chunked above `max_batch_size` with progress and cancel
//! between chunks. Calls that need a person's approval pause the loop with a confirmation bound to
//! the hash of the exact call ([`confirm`]), stored so it survives a restart. Every reply starts
//! with the execution header code builds from what actually ran ([`header`]), and every call code
//! looked at leaves an audit row ([`audit`]).
//!
//! Where things live: domain types here and in the submodules; persistence in
//! `store/chat.rs`; the demo site it drives in `demo/items.rs`, built at startup by [`setup`];
//! the JSON API in `http/chat_api.rs`. The chat
//! UI (pages, SSE) builds on [`Orchestrator`] and must not re-implement any rule.
//!
//! Errors: [`ChatError`] for the orchestrator's callers (unknown session, a decided confirmation,
//! storage); refusals, failed calls and model failures are not errors — they are outcomes, shown
//! in the header and the reply.

pub mod approval_form;
pub use tessera_store::records::chat::audit;
pub mod calendar;
pub mod confirm;
mod events;
pub use tessera_store::records::chat::header;
pub mod http_executor;
mod interrupted;
pub mod manifest;
pub mod offer;
pub mod orchestrator;
pub mod planner;
pub mod policy;
pub mod routing;
pub mod scope;
pub use tessera_store::records::chat::session;
pub mod setup;
pub mod sites;
pub mod slash;
pub use tessera_store::records::chat::threads;
pub mod tool_forms;
pub mod views;

pub use audit::ExecutionId;
pub use confirm::{ApprovalScope, ConfirmationId, OperationHash};
pub use header::{CallStatus, ExecutionHeader, Step};
pub use manifest::Manifest;
pub use orchestrator::{
    ChatEvent, Orchestrator, OrchestratorParts, PendingApproval, SessionModels, SessionView,
    TurnOutcome,
};
pub use scope::{CapabilityScope, RequestedScope, ScopeRules};
pub use session::{ChatSession, SessionId};
pub use threads::{Thread, ThreadId, ThreadStatus};

use crate::store::StoreError;

/// What the orchestrator's callers can get wrong, or what failed underneath.
#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    /// No session with that id.
    #[error("no such chat session")]
    SessionNotFound,
    /// No confirmation with that id in this session.
    #[error("no such confirmation in this session")]
    ConfirmationNotFound,
    /// The confirmation was already decided or used.
    #[error("{0}")]
    Conflict(String),
    /// An approval named items the confirmation does not offer (the person's fault).
    #[error("{0}")]
    Selection(String),
    /// An approval asked for a scope the confirmation does not offer, such as "always" for a
    /// `confirmation-required` operation (the person's fault); nothing was recorded.
    #[error("{0}")]
    Scope(String),
    /// A model name this server does not have.
    #[error("model `{requested}` is not available; use one of: {}", available.join(", "))]
    UnknownModel {
        /// What was asked for.
        requested: String,
        /// What exists.
        available: Vec<String>,
    },
    /// A prompt template is broken (a build problem, not input).
    #[error("prompt template: {0}")]
    Template(String),
    /// Storage failed.
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for ChatError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Conflict(message) => Self::Conflict(message),
            other => Self::Store(other),
        }
    }
}
