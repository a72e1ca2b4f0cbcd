//! The orchestrator: one chat turn from routing to reply, with every rule enforced in code.
//!
//! [`Orchestrator::handle_turn`] is the whole server-side loop of DESIGN.md §8. It routes the
//! turn ([`super::routing`]); handles slash commands, stops, nudges and filler by code; and runs
//! the model loop for requests. Every tool call the model (or a person, for manual tools) proposes
//! goes through one gate, in this order, before any byte is sent:
//!
//! 1. well-formed arguments;
//! 2. the session's capability scope, and the caller (model or person) the tool is offered to;
//! 3. the operation's parameter schema;
//! 4. the host constraint of the scope;
//! 5. the policy table: preview shown → confirmation (or grant) → chunk plan.
//!
//! Before the calls of one model reply go through the gate, code adds up what each operation's
//! calls touch in the turn ([`group`]): several calls adding up beyond the operation's
//! `max_batch_size` are refused, and calls touching more than ten items together wait for one
//! confirmation of them all (a *group*), so splitting a batch into single-item calls changes
//! nothing. Who proposed a call (the model, or a person through a manual tool) is recorded with
//! its confirmation from the path it arrived on, never read from its id.
//!
//! A refusal is answered to the model as a tool error with the reason, shown in the header,
//! logged once and recorded as a `refused` execution. A call that needs confirmation pauses the
//! loop: the confirmation (bound to the call's hash) and the thread's pending question are stored,
//! and [`Orchestrator::decide`] (or a "yes"/"no" turn) resumes it — the approved call runs only
//! through `Store::begin_execution`, which consumes the confirmation in the same transaction.
//! *Stop* cancels the running loop's token: the loop and the executor check it between tool calls
//! and between chunks, so finished steps stay finished. A stop and the events reach every process
//! on PostgreSQL ([`super::events`]); a call whose process dies is reported as interrupted
//! ([`super::interrupted`]).
//!
//! The orchestrator holds no state a restart would lose except the cancellation tokens of loops
//! running in this process and the event channels of connected listeners.
//!
//! Layout, one job per file: [`sessions`] (create, reload, the stored channels), [`broadcast`]
//! (events and stops), [`turn`] (dispatch on the route, the reply), [`model_loop`], [`gate`],
//! [`group`] (what a turn's calls of one operation add up to), [`execute`], [`decisions`]
//! (confirmations, answers, subset approval), [`manual`] (manual tools) and [`text`] (the words
//! code writes); slash commands run in [`super::slash`].

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use minijinja::Environment;
use tokio_util::sync::CancellationToken;

use super::{
    audit::ExecutionId,
    calendar::CivilDate,
    events::Signals,
    header::{ChunkProgress, Step},
    http_executor::HttpExecutor,
    manifest::Manifest,
    policy::TurnTotals,
    scope::CapabilityScope,
    session::ChatSession,
};
use crate::store::Store;

mod broadcast;
mod decisions;
mod execute;
mod gate;
mod group;
mod manual;
mod model_loop;
mod sessions;
mod text;
mod turn;

pub use broadcast::ChatEvent;
pub use decisions::PendingApproval;
pub use manual::ManualTool;
pub use model_loop::{SessionModels, DEFAULT_MAX_MODEL_TURNS};
pub use sessions::SessionView;
pub use turn::TurnOutcome;

// Slash commands (in `chat/slash.rs`) write the same text and steps as the rest of the loop.
pub(super) use sessions::step_of_execution;
pub(super) use text::plural;

/// Unix milliseconds now; injectable so tests and "last month" are deterministic.
pub use crate::util::clock::Clock;

/// What the orchestrator is built from.
pub struct OrchestratorParts {
    /// The store.
    pub store: Store,
    /// The site.
    pub manifest: Arc<Manifest>,
    /// Sends the site's requests.
    pub executor: HttpExecutor,
    /// The models sessions may use.
    pub models: SessionModels,
    /// The server's allowlist: no session scope is ever wider.
    pub allowlist: CapabilityScope,
    /// The clock.
    pub clock: Clock,
    /// The most model calls per turn.
    pub max_model_turns: usize,
}

/// One turn in the making.
pub(super) struct Turn {
    pub(super) session: ChatSession,
    pub(super) route: String,
    pub(super) steps: Vec<Step>,
    pub(super) events: Vec<ChatEvent>,
    pub(super) narrative: String,
    pub(super) cancel: CancellationToken,
    pub(super) stopped: bool,
    /// The items each operation's calls touched so far in this turn (the policy counts per turn).
    pub(super) totals: TurnTotals,
}

impl Turn {
    /// A turn with nothing done yet; `route` says how code routed it (set later for messages).
    fn new(session: ChatSession, route: &str) -> Self {
        Self {
            session,
            route: route.to_owned(),
            steps: Vec::new(),
            events: Vec::new(),
            narrative: String::new(),
            cancel: CancellationToken::new(),
            stopped: false,
            totals: TurnTotals::default(),
        }
    }
}

pub(super) struct Inner {
    pub(super) store: Store,
    pub(super) manifest: Arc<Manifest>,
    pub(super) executor: HttpExecutor,
    pub(super) models: SessionModels,
    pub(super) allowlist: CapabilityScope,
    pub(super) clock: Clock,
    pub(super) max_model_turns: usize,
    pub(super) templates: Environment<'static>,
    pub(super) signals: Arc<Signals>,
    /// How long a running execution may go unheard before another process reports it interrupted.
    pub(super) execution_lease: Duration,
    /// Progress of chunked calls running in this process, updated synchronously between chunks
    /// (the store gets the same numbers a moment later, for other processes).
    pub(super) live: Mutex<HashMap<ExecutionId, ChunkProgress>>,
}

/// The chat orchestrator; cheap to clone.
#[derive(Clone)]
pub struct Orchestrator {
    pub(super) inner: Arc<Inner>,
}

impl std::fmt::Debug for Orchestrator {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Orchestrator")
            .field("site", &self.inner.manifest.site)
            .field("models", &self.inner.models)
            .finish_non_exhaustive()
    }
}

impl Orchestrator {
    /// Builds the orchestrator, with the default execution lease.
    #[must_use]
    pub fn new(parts: OrchestratorParts) -> Self {
        Self::with_execution_lease(parts, super::interrupted::DEFAULT_EXECUTION_LEASE)
    }

    /// Builds the orchestrator; on PostgreSQL a call of this process not heard from for `lease`
    /// counts as interrupted (it renews every third of it).
    #[must_use]
    pub fn with_execution_lease(parts: OrchestratorParts, lease: Duration) -> Self {
        let signals = Arc::new(Signals::new(parts.store.clone()));
        Self {
            inner: Arc::new(Inner {
                store: parts.store,
                manifest: parts.manifest,
                executor: parts.executor,
                models: parts.models,
                allowlist: parts.allowlist,
                clock: parts.clock,
                max_model_turns: parts.max_model_turns.max(1),
                signals,
                execution_lease: lease.max(Duration::from_millis(30)),
                templates: model_loop::system_templates(),
                live: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The site's manifest.
    #[must_use]
    pub fn manifest(&self) -> &Manifest {
        &self.inner.manifest
    }

    /// The store.
    #[must_use]
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    fn now(&self) -> i64 {
        (self.inner.clock)()
    }

    fn today(&self) -> CivilDate {
        CivilDate::from_unix_ms(self.now())
    }
}

#[cfg(test)]
pub(super) mod test_support;
