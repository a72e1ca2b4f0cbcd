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

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use futures_util::future::BoxFuture;
use minijinja::{context, Environment};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::{
    calendar::CivilDate,
    confirm::{
        operation_hash, ApprovalScope, Confirmation, ConfirmationId, ConfirmationPreview,
        ConfirmationStatus, NewConfirmation, OperationHash,
    },
    events::{RunningGuard, Signals},
    execution::{Approval, Execution, ExecutionEnd, ExecutionId, ExecutionStatus, NewExecution},
    executor::HttpExecutor,
    header::{ChunkProgress, ExecutionHeader, Step, StepRole, StepStatus},
    manifest::{id_text, Manifest, Operation, Tag},
    planner::{self, result_items},
    policy::{self, ConfirmReason, PolicyContext, Verdict},
    routing::{self, Answer, OverrideKind, Route},
    scope::{CapabilityScope, RequestedScope, ScopeRefusal},
    session::{Channel, ChatSession, SessionId, Speaker, TranscriptEntry},
    slash::{self, SlashCommand, HELP},
    threads::{ExpectedType, PendingQuestion, Thread, ThreadId, ThreadStatus},
    ChatError,
};
use crate::{
    forms::{decode_values, FormSchema},
    llm::{adopt_text_tool_calls, ChatModel, ChatRequest, Message, ToolCall},
    store::{
        chat::{BeginExecutionError, Decision},
        Store,
    },
};

const SYSTEM_TEMPLATE: &str = include_str!("prompts/system.j2");

/// The most model calls one turn may make before code stops the loop.
pub const DEFAULT_MAX_MODEL_TURNS: usize = 8;

/// Tool-call ids of manual tools start with this, so a resumed call knows it was a person's.
const MANUAL_CALL_PREFIX: &str = "manual-";

/// Unix milliseconds now; injectable so tests and "last month" are deterministic.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// The models a session may use, by name; one is the default.
#[derive(Clone)]
pub struct ChatModels {
    default: String,
    models: BTreeMap<String, Arc<dyn ChatModel>>,
}

impl std::fmt::Debug for ChatModels {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ChatModels")
            .field("default", &self.default)
            .field("models", &self.models.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl ChatModels {
    /// Only `model`, under `name`, as the default.
    #[must_use]
    pub fn only(name: impl Into<String>, model: Arc<dyn ChatModel>) -> Self {
        let name = name.into();
        Self {
            default: name.clone(),
            models: BTreeMap::from([(name, model)]),
        }
    }

    /// Adds `model` under `name` and makes it the default.
    #[must_use]
    pub fn with_default(mut self, name: impl Into<String>, model: Arc<dyn ChatModel>) -> Self {
        let name = name.into();
        self.models.insert(name.clone(), model);
        self.default = name;
        self
    }

    /// The default model's name.
    #[must_use]
    pub fn default_name(&self) -> &str {
        &self.default
    }

    /// Every name.
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        self.models.keys().cloned().collect()
    }

    fn get(&self, name: &str) -> Option<Arc<dyn ChatModel>> {
        self.models.get(name).cloned()
    }
}

/// What the orchestrator is built from.
pub struct OrchestratorParts {
    /// The store.
    pub store: Store,
    /// The site.
    pub manifest: Arc<Manifest>,
    /// Sends the site's requests.
    pub executor: HttpExecutor,
    /// The models sessions may use.
    pub models: ChatModels,
    /// The server's allowlist: no session scope is ever wider.
    pub allowlist: CapabilityScope,
    /// The clock.
    pub clock: Clock,
    /// The most model calls per turn.
    pub max_model_turns: usize,
}

/// Something a listener (the chat UI's SSE stream) sees while a turn runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ChatEvent {
    /// A turn was routed.
    TurnRouted {
        /// The route's name.
        route: String,
        /// Its thread.
        thread_id: Option<ThreadId>,
    },
    /// A tool call passed the gate and is about to send requests.
    StepStarted {
        /// The thread.
        thread_id: ThreadId,
        /// The operation.
        operation: String,
        /// The planned chunk sizes.
        chunks: Vec<usize>,
    },
    /// A chunked call advanced.
    Progress {
        /// The thread.
        thread_id: ThreadId,
        /// The execution.
        execution_id: ExecutionId,
        /// The operation.
        operation: String,
        /// Where it is.
        progress: ChunkProgress,
    },
    /// A step ended (or was refused, or now waits for confirmation).
    StepFinished {
        /// The thread.
        thread_id: ThreadId,
        /// The step as the header shows it.
        step: Step,
    },
    /// Code asks the person to approve a call.
    ApprovalRequested {
        /// What to show.
        approval: PendingApproval,
    },
    /// The turn's reply is ready.
    Reply {
        /// The thread.
        thread_id: Option<ThreadId>,
        /// The whole reply (header first).
        text: String,
    },
}

/// A confirmation waiting for the person, with everything a confirm view needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingApproval {
    /// Its id (for approve / deny).
    pub confirmation_id: ConfirmationId,
    /// The thread waiting on it.
    pub thread_id: ThreadId,
    /// The operation.
    pub operation: String,
    /// The exact arguments.
    pub arguments: Value,
    /// The SHA-256 the approval is bound to.
    pub hash: OperationHash,
    /// Why code asks.
    pub reasons: Vec<ConfirmReason>,
    /// The reasons for a person.
    pub reasons_text: Vec<String>,
    /// Items touched, the preview rows of those items, and the chunk plan.
    pub preview: ConfirmationPreview,
    /// Whether the call deletes (danger styling).
    pub destructive: bool,
    /// The approval scopes the person may choose (only `once` for `confirmation-required`).
    pub allowed_scopes: Vec<ApprovalScope>,
    /// The question, as the transcript asks it.
    pub question: String,
}

/// The result of one turn (or one decision, or one manual tool run).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnOutcome {
    /// The session.
    pub session_id: SessionId,
    /// How code routed it: a [`Route::name`], `slash`, `decision` or `manual_tool`.
    pub route: String,
    /// The thread it touched.
    pub thread_id: Option<ThreadId>,
    /// That thread's status afterwards.
    pub thread_status: Option<ThreadStatus>,
    /// What ran, built by code.
    pub header: ExecutionHeader,
    /// The words after the header (the model's, or code's).
    pub narrative: String,
    /// Header, blank line, narrative: the stored reply.
    pub reply: String,
    /// Confirmations waiting in the session after this turn.
    pub pending_approvals: Vec<PendingApproval>,
    /// Everything emitted during the turn, in order.
    pub events: Vec<ChatEvent>,
}

/// A session as the chat page shows it after a reload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionView {
    /// The session.
    pub session: ChatSession,
    /// The visible transcript, oldest first.
    pub transcript: Vec<TranscriptEntry>,
    /// Its threads, oldest first.
    pub threads: Vec<Thread>,
    /// Confirmations waiting for the person.
    pub pending_approvals: Vec<PendingApproval>,
    /// Calls still running, with their progress.
    pub running: Vec<Step>,
}

/// A tool a person may run from the panel or `/tool`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ManualTool {
    /// The operation.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The panel group.
    pub category: String,
    /// The form's JSON Schema (the §5 subset).
    pub parameters: Value,
    /// What code demands before it runs.
    pub rules: Vec<String>,
}

/// Who proposed a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Caller {
    Model,
    Person,
}

/// How the gate answered a call.
enum Gate {
    /// The call ran or was refused; this is the tool result.
    Answered(Message),
    /// The call waits for a person.
    Paused(Box<Confirmation>),
}

/// A call that passed the gate's checks.
#[derive(Clone, Copy)]
struct Proposed<'a> {
    call: &'a ToolCall,
    operation: &'a Operation,
    arguments: &'a Value,
}

/// One turn in the making.
struct Turn {
    session: ChatSession,
    route: String,
    steps: Vec<Step>,
    events: Vec<ChatEvent>,
    narrative: String,
    cancel: CancellationToken,
    stopped: bool,
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
        }
    }
}

struct Inner {
    store: Store,
    manifest: Arc<Manifest>,
    executor: HttpExecutor,
    models: ChatModels,
    allowlist: CapabilityScope,
    clock: Clock,
    max_model_turns: usize,
    templates: Environment<'static>,
    signals: Arc<Signals>,
    /// How long a running execution may go unheard before another process reports it interrupted.
    execution_lease: Duration,
    /// Progress of chunked calls running in this process, updated synchronously between chunks
    /// (the store gets the same numbers a moment later, for other processes).
    live: Mutex<HashMap<ExecutionId, ChunkProgress>>,
}

/// The chat orchestrator; cheap to clone.
#[derive(Clone)]
pub struct Orchestrator {
    inner: Arc<Inner>,
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

fn plural(count: usize, word: &str) -> String {
    if count == 1 {
        format!("1 {word}")
    } else {
        format!("{count} {word}s")
    }
}

fn chunk_text(sizes: &[usize]) -> String {
    sizes
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("+")
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
        let mut templates = Environment::new();
        templates.set_trim_blocks(true);
        if let Err(error) = templates.add_template("system.j2", SYSTEM_TEMPLATE) {
            tracing::error!(error = %error, "the chat system prompt template does not parse");
        }
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
                templates,
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

    /// Starts a session. `requested` narrows the server's allowlist (never widens it; what it
    /// named beyond the allowlist is logged and dropped); `model` picks a configured model.
    ///
    /// # Errors
    /// [`ChatError::UnknownModel`]; storage failures.
    pub async fn create_session(
        &self,
        requested: Option<&RequestedScope>,
        model: Option<&str>,
    ) -> Result<ChatSession, ChatError> {
        let model = match model.map(str::trim).filter(|name| !name.is_empty()) {
            Some(name) if self.inner.models.get(name).is_some() => name.to_owned(),
            Some(name) => {
                return Err(ChatError::UnknownModel {
                    requested: name.to_owned(),
                    available: self.inner.models.names(),
                })
            }
            None => self.inner.models.default_name().to_owned(),
        };
        let id = SessionId::new();
        let scope = match requested {
            Some(requested) => {
                let (scope, stripped) = self.inner.allowlist.intersect(requested);
                if !stripped.is_empty() {
                    tracing::warn!(
                        chat.session = %id,
                        stripped.operations = ?stripped.operations,
                        stripped.entities = ?stripped.entities,
                        "a requested capability scope named more than the allowlist; the extra was dropped"
                    );
                }
                scope
            }
            None => self.inner.allowlist.clone(),
        };
        let now = self.now();
        let session = ChatSession {
            id,
            scope,
            model,
            created_at_ms: now,
            updated_at_ms: now,
        };
        self.inner.store.create_chat_session(&session).await?;
        Ok(session)
    }

    async fn session(&self, id: SessionId) -> Result<ChatSession, ChatError> {
        self.inner
            .store
            .chat_session(id)
            .await
            .map_err(|error| match error {
                crate::store::StoreError::NotFound => ChatError::SessionNotFound,
                other => other.into(),
            })
    }

    /// Everything the chat page shows after a reload: transcript, threads, pending approvals and
    /// running calls.
    ///
    /// # Errors
    /// [`ChatError::SessionNotFound`]; storage failures.
    pub async fn session_view(&self, id: SessionId) -> Result<SessionView, ChatError> {
        let session = self.session(id).await?;
        let transcript = self.transcript(id).await?;
        let threads = self.inner.store.chat_threads(id).await?;
        let pending_approvals = self.pending_approvals(id).await?;
        let running = self
            .executions(id)
            .await?
            .iter()
            .filter(|execution| execution.status == ExecutionStatus::Running)
            .map(step_of_execution)
            .collect();
        Ok(SessionView {
            session,
            transcript,
            threads,
            pending_approvals,
            running,
        })
    }

    /// The visible transcript, oldest first.
    ///
    /// # Errors
    /// Storage failures, or a corrupt stored message.
    pub async fn transcript(&self, id: SessionId) -> Result<Vec<TranscriptEntry>, ChatError> {
        let messages = self
            .inner
            .store
            .chat_messages(id, Channel::Transcript)
            .await?;
        Ok(messages
            .into_iter()
            .map(|message| TranscriptEntry {
                id: message.id,
                speaker: Speaker::parse(&message.role).unwrap_or(Speaker::Assistant),
                text: message
                    .body
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                header: message
                    .body
                    .get("header")
                    .and_then(|header| serde_json::from_value(header.clone()).ok()),
                thread_id: message.thread_id,
                created_at_ms: message.created_at_ms,
            })
            .collect())
    }

    /// Confirmations waiting for the person, oldest first.
    ///
    /// # Errors
    /// Storage failures.
    pub async fn pending_approvals(
        &self,
        id: SessionId,
    ) -> Result<Vec<PendingApproval>, ChatError> {
        let pending = self
            .inner
            .store
            .confirmations_with_status(id, ConfirmationStatus::Pending)
            .await?;
        Ok(pending
            .iter()
            .map(|confirmation| self.pending_approval(confirmation))
            .collect())
    }

    fn pending_approval(&self, confirmation: &Confirmation) -> PendingApproval {
        let operation = self.inner.manifest.operation(&confirmation.operation);
        let always = operation.is_some_and(|operation| operation.has(Tag::ConfirmationRequired));
        PendingApproval {
            confirmation_id: confirmation.id,
            thread_id: confirmation.thread_id,
            operation: confirmation.operation.clone(),
            arguments: confirmation.arguments.clone(),
            hash: confirmation.hash.clone(),
            reasons: confirmation.reasons.clone(),
            reasons_text: confirmation
                .reasons
                .iter()
                .map(ConfirmReason::describe)
                .collect(),
            preview: confirmation.preview.clone(),
            destructive: operation.is_some_and(|operation| operation.has(Tag::Delete)),
            allowed_scopes: if always {
                vec![ApprovalScope::Once]
            } else {
                vec![
                    ApprovalScope::Once,
                    ApprovalScope::Operation,
                    ApprovalScope::Session,
                ]
            },
            question: approval_question(confirmation),
        }
    }

    /// The tools a person may run by hand in this session, in manifest order.
    ///
    /// # Errors
    /// [`ChatError::SessionNotFound`]; storage failures.
    pub async fn manual_tools(&self, id: SessionId) -> Result<Vec<ManualTool>, ChatError> {
        let session = self.session(id).await?;
        Ok(session
            .scope
            .manual_operations(&self.inner.manifest)
            .into_iter()
            .map(|operation| ManualTool {
                name: operation.name.clone(),
                description: operation.description.clone(),
                category: operation.category.clone(),
                parameters: operation.parameters.clone(),
                rules: policy::describe(&self.inner.manifest, operation),
            })
            .collect())
    }

    /// A receiver of the session's events (progress, approvals, replies) from now on, whichever
    /// process runs the turn (on PostgreSQL, once [`Orchestrator::spawn`] connected it).
    #[must_use]
    pub fn subscribe(&self, id: SessionId) -> broadcast::Receiver<ChatEvent> {
        self.inner.signals.subscribe(id)
    }

    /// Stops every loop of the session, in this process and (PostgreSQL) in the others; returns
    /// whether one was running. Loops stop between tool calls and between chunks.
    ///
    /// # Errors
    /// Storage failures (the loops of this process are stopped all the same).
    pub async fn stop(&self, id: SessionId) -> Result<bool, ChatError> {
        let now = crate::store::now_ms();
        Ok(self
            .inner
            .signals
            .stop_everywhere(id, now, now - self.lease_ms())
            .await?)
    }

    fn lease_ms(&self) -> i64 {
        i64::try_from(self.inner.execution_lease.as_millis()).unwrap_or(i64::MAX)
    }

    /// Connects this orchestrator to the other processes (PostgreSQL: events and stops through the
    /// store's chat bus) and reports calls whose process stopped (see [`super::interrupted`]),
    /// until `shutdown`. Returns once this process listens.
    pub async fn spawn(&self, shutdown: &CancellationToken) -> tokio::task::JoinHandle<()> {
        self.inner.signals.connect(shutdown).await;
        tokio::spawn(super::interrupted::sweep_until(
            self.inner.store.clone(),
            Arc::downgrade(&self.inner.signals),
            self.inner.manifest.clone(),
            self.inner.execution_lease,
            shutdown.clone(),
        ))
    }

    fn start_run(&self, id: SessionId) -> (CancellationToken, RunningGuard<'_>) {
        self.inner.signals.start_run(id)
    }

    /// A session's executions, with the live progress of calls running in this process.
    async fn executions(&self, id: SessionId) -> Result<Vec<Execution>, ChatError> {
        let mut executions = self.inner.store.chat_executions(id).await?;
        let live = self
            .inner
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for execution in &mut executions {
            if let Some(progress) = live.get(&execution.id) {
                if execution.status == ExecutionStatus::Running {
                    execution.items_done = execution.items_done.max(progress.items_done);
                    execution.chunks_done = execution.chunks_done.max(progress.chunks_done);
                }
            }
        }
        Ok(executions)
    }

    fn emit(&self, turn: &mut Turn, event: ChatEvent) {
        self.broadcast(turn.session.id, &event);
        turn.events.push(event);
    }

    fn broadcast(&self, id: SessionId, event: &ChatEvent) {
        self.inner.signals.publish(id, event);
    }

    fn routed(&self, turn: &mut Turn, thread_id: Option<ThreadId>) {
        let route = turn.route.clone();
        self.emit(turn, ChatEvent::TurnRouted { route, thread_id });
    }

    fn push_step(&self, turn: &mut Turn, thread_id: ThreadId, step: Step) {
        self.emit(
            turn,
            ChatEvent::StepFinished {
                thread_id,
                step: step.clone(),
            },
        );
        turn.steps.push(step);
    }

    /// Handles one turn of the person: routes it, runs what it asks for, and replies with the
    /// execution header first.
    ///
    /// # Errors
    /// [`ChatError::SessionNotFound`]; storage failures. Model and site failures are not errors:
    /// they are in the outcome's header and narrative.
    pub async fn handle_turn(&self, id: SessionId, text: &str) -> Result<TurnOutcome, ChatError> {
        let session = self.session(id).await?;
        self.record_transcript(id, Speaker::User, None, text, None)
            .await?;
        let mut turn = Turn::new(session, "");
        if let Some(command) = slash::parse(text) {
            turn.route = "slash".to_owned();
            let thread = self.run_slash(&mut turn, command).await?;
            return self.finish_turn(turn, thread).await;
        }
        let threads = self.inner.store.chat_threads(id).await?;
        let route = routing::route(text, &threads, self.today());
        turn.route = route.name().to_owned();
        let find = |thread_id: Option<ThreadId>| {
            thread_id.and_then(|thread_id| {
                threads
                    .iter()
                    .find(|thread| thread.id == thread_id)
                    .cloned()
            })
        };
        let thread = match route {
            Route::Override { kind, thread, rest } => {
                let stopped = find(thread);
                self.routed(&mut turn, thread);
                let stopped = self.stop_thread(&mut turn, stopped).await?;
                match (kind, rest) {
                    (OverrideKind::Redirect, Some(rest)) => {
                        let stopped_note = std::mem::take(&mut turn.narrative);
                        let redirected = self.new_request(&mut turn, &rest).await?;
                        turn.narrative = format!("{stopped_note}\n\n{}", turn.narrative);
                        Some(redirected)
                    }
                    _ => stopped,
                }
            }
            Route::Answer { thread, answer } => {
                self.routed(&mut turn, Some(thread));
                match find(Some(thread)) {
                    Some(thread) => Some(self.answer(&mut turn, thread, answer, text).await?),
                    None => Some(self.new_request(&mut turn, text).await?),
                }
            }
            Route::StatusNudge { thread } => {
                self.routed(&mut turn, thread);
                let thread = find(thread);
                self.report_status(&mut turn, thread.as_ref()).await?;
                thread
            }
            Route::Filler { thread } => {
                self.routed(&mut turn, thread);
                let thread = find(thread);
                turn.narrative = match thread
                    .as_ref()
                    .and_then(|thread| thread.pending_question.as_ref())
                {
                    Some(question) => format!("Noted. Still waiting for you: {}", question.prompt),
                    None => "Noted.".to_owned(),
                };
                thread
            }
            Route::NewRequest { text } => Some(self.new_request(&mut turn, &text).await?),
        };
        self.finish_turn(turn, thread).await
    }

    /// Approves or denies a pending confirmation. An approval runs the exact confirmed call (the
    /// confirmation is consumed in the transaction that records it) and continues the loop.
    ///
    /// # Errors
    /// [`ChatError::SessionNotFound`], [`ChatError::ConfirmationNotFound`],
    /// [`ChatError::Conflict`] when it was already decided; storage failures.
    pub async fn decide(
        &self,
        id: SessionId,
        confirmation_id: ConfirmationId,
        decision: Decision,
    ) -> Result<TurnOutcome, ChatError> {
        let session = self.session(id).await?;
        let said = match decision {
            Decision::Approve(ApprovalScope::Once) => "Approved (this once).",
            Decision::Approve(ApprovalScope::Operation) => "Approved (always for this operation).",
            Decision::Approve(ApprovalScope::Session) => "Approved (for this session).",
            Decision::Deny => "Declined.",
        };
        let mut turn = Turn::new(session, "decision");
        let thread = self
            .apply_decision(&mut turn, confirmation_id, decision, Some(said))
            .await?;
        self.finish_turn(turn, Some(thread)).await
    }

    /// Approves a pending confirmation for `selected` of its previewed items with `scope`.
    ///
    /// Every previewed item (or `None`) is a plain approval of the confirmed call. A strict subset
    /// is a *changed call*: the confirmation is withdrawn, and a new one bound to the hash of the
    /// narrowed arguments (the same call with only the chosen ids, in the previewed order) is
    /// created and approved, so the executor still only runs what a person approved. A selection
    /// can only narrow: an id outside the preview, an empty selection or a scope the confirmation
    /// does not offer is refused and nothing changes.
    ///
    /// # Errors
    /// [`ChatError::Selection`] for a selection or scope the confirmation does not offer;
    /// otherwise as [`Self::decide`].
    pub async fn approve_selection(
        &self,
        id: SessionId,
        confirmation_id: ConfirmationId,
        selected: Option<&[String]>,
        scope: ApprovalScope,
    ) -> Result<TurnOutcome, ChatError> {
        let confirmation = self.session_confirmation(id, confirmation_id).await?;
        if confirmation.status != ConfirmationStatus::Pending {
            return Err(ChatError::Conflict(
                "this confirmation was already answered".to_owned(),
            ));
        }
        let approval = self.pending_approval(&confirmation);
        if !approval.allowed_scopes.contains(&scope) {
            return Err(ChatError::Selection(format!(
                "`{}` can only be approved once at a time",
                confirmation.operation
            )));
        }
        let Some(operation) = self.inner.manifest.operation(&confirmation.operation) else {
            return Err(ChatError::ConfirmationNotFound);
        };
        let previewed = operation.item_ids(&confirmation.arguments);
        let key = operation
            .batch_argument
            .as_deref()
            .unwrap_or(super::manifest::DEFAULT_BATCH_ARGUMENT);
        // A call on one item (no id list) has nothing to narrow: its view shows no ticks, so
        // the form's missing `ids` means "the call as previewed", not "none ticked".
        let batch = confirmation.arguments.get(key).is_some_and(Value::is_array);
        let Some(selected) = selected.filter(|_| batch) else {
            return self
                .decide(id, confirmation_id, Decision::Approve(scope))
                .await;
        };
        if let Some(stranger) = selected.iter().find(|item| !previewed.contains(item)) {
            return Err(ChatError::Selection(format!(
                "`{stranger}` was not in the preview; an approval can only cover previewed items"
            )));
        }
        let chosen: Vec<&String> = previewed
            .iter()
            .filter(|item| selected.contains(item))
            .collect();
        if chosen.is_empty() {
            return Err(ChatError::Selection(
                "Tick at least one item to approve, or choose Deny.".to_owned(),
            ));
        }
        if chosen.len() == previewed.len() {
            return self
                .decide(id, confirmation_id, Decision::Approve(scope))
                .await;
        }
        let Some(original_ids) = confirmation.arguments.get(key).and_then(Value::as_array) else {
            return Err(ChatError::Selection(format!(
                "`{}` cannot be narrowed to some of its items",
                confirmation.operation
            )));
        };
        let narrowed_ids: Vec<Value> = original_ids
            .iter()
            .filter(|item| chosen.contains(&&id_text(item)))
            .cloned()
            .collect();
        let mut arguments = confirmation.arguments.clone();
        arguments[key] = Value::Array(narrowed_ids);
        // Withdraw first: it is the conditional step (pending -> denied), so two racing answers
        // cannot both narrow, and a crash after it leaves nothing approved.
        self.inner
            .store
            .decide_confirmation(id, confirmation_id, Decision::Deny)
            .await?;
        let chosen_ids: Vec<String> = chosen.iter().map(|item| (*item).clone()).collect();
        let narrowed = self
            .inner
            .store
            .create_confirmation(&NewConfirmation {
                session_id: id,
                thread_id: confirmation.thread_id,
                call_id: confirmation.call_id.clone(),
                operation: confirmation.operation.clone(),
                arguments: arguments.clone(),
                reasons: confirmation.reasons.clone(),
                preview: ConfirmationPreview {
                    count: chosen_ids.len(),
                    items: confirmation
                        .preview
                        .items
                        .iter()
                        .filter(|item| {
                            item.get("id")
                                .is_some_and(|item_id| chosen_ids.contains(&id_text(item_id)))
                        })
                        .cloned()
                        .collect(),
                    chunks: policy::chunk_plan(operation, &arguments).sizes,
                    preview_operation: confirmation.preview.preview_operation.clone(),
                },
            })
            .await?;
        let session = self.session(id).await?;
        let mut turn = Turn::new(session, "decision");
        let mut superseded = Step::new(
            confirmation.operation.clone(),
            StepRole::Mutation,
            StepStatus::Declined,
            format!(
                "narrowed by the person to {} of {}; nothing was sent for the rest",
                chosen_ids.len(),
                plural(previewed.len(), "item")
            ),
        );
        superseded.hash = Some(confirmation.hash.clone());
        superseded.confirmation_id = Some(confirmation.id);
        self.push_step(&mut turn, confirmation.thread_id, superseded);
        let said = format!(
            "Approved {} of {} ({}).",
            chosen_ids.len(),
            plural(previewed.len(), "item"),
            match scope {
                ApprovalScope::Once => "this once",
                ApprovalScope::Operation => "always for this operation",
                ApprovalScope::Session => "for this session",
            }
        );
        let thread = self
            .apply_decision(
                &mut turn,
                narrowed.id,
                Decision::Approve(scope),
                Some(&said),
            )
            .await?;
        self.finish_turn(turn, Some(thread)).await
    }

    /// Runs a manual tool for the person, through the same gate as a model's call (scope, schema,
    /// policy); its result is injected into the model's conversation.
    ///
    /// # Errors
    /// [`ChatError::SessionNotFound`]; storage failures.
    pub async fn run_manual_tool(
        &self,
        id: SessionId,
        name: &str,
        arguments: Value,
    ) -> Result<TurnOutcome, ChatError> {
        let session = self.session(id).await?;
        self.record_transcript(
            id,
            Speaker::User,
            None,
            &format!("/tool {name} {arguments}"),
            None,
        )
        .await?;
        let mut turn = Turn::new(session, "manual_tool");
        let thread = self.manual_call(&mut turn, name, arguments).await?;
        self.finish_turn(turn, Some(thread)).await
    }

    async fn record_transcript(
        &self,
        id: SessionId,
        speaker: Speaker,
        thread_id: Option<ThreadId>,
        text: &str,
        header: Option<&ExecutionHeader>,
    ) -> Result<(), ChatError> {
        let mut body = json!({ "text": text });
        if let Some(header) = header {
            body["header"] = serde_json::to_value(header).unwrap_or(Value::Null);
        }
        self.inner
            .store
            .append_chat_message(id, Channel::Transcript, speaker.as_str(), thread_id, &body)
            .await?;
        Ok(())
    }

    async fn append_model(
        &self,
        id: SessionId,
        thread_id: ThreadId,
        message: &Message,
    ) -> Result<(), ChatError> {
        let role = match message {
            Message::System(_) => "system",
            Message::User(_) => "user",
            Message::Assistant { .. } => "assistant",
            Message::ToolResult { .. } => "tool",
        };
        let body = serde_json::to_value(message).unwrap_or(Value::Null);
        self.inner
            .store
            .append_chat_message(id, Channel::Model, role, Some(thread_id), &body)
            .await?;
        Ok(())
    }

    async fn model_history(&self, id: SessionId) -> Result<Vec<Message>, ChatError> {
        let stored = self.inner.store.chat_messages(id, Channel::Model).await?;
        let mut messages = Vec::with_capacity(stored.len());
        for message in stored {
            match serde_json::from_value(message.body) {
                Ok(decoded) => messages.push(decoded),
                Err(error) => {
                    return Err(ChatError::Store(crate::store::StoreError::Corrupt {
                        column: "chat_messages.body",
                        reason: error.to_string(),
                    }))
                }
            }
        }
        Ok(messages)
    }

    async fn save_thread(&self, thread: &mut Thread) -> Result<(), ChatError> {
        thread.updated_at_ms = self.now().max(thread.updated_at_ms);
        self.inner.store.save_chat_thread(thread).await?;
        Ok(())
    }

    async fn finish_turn(
        &self,
        mut turn: Turn,
        thread: Option<Thread>,
    ) -> Result<TurnOutcome, ChatError> {
        let header = ExecutionHeader::new(std::mem::take(&mut turn.steps));
        let narrative = turn.narrative.trim().to_owned();
        let reply = if narrative.is_empty() {
            header.render()
        } else {
            format!("{}\n\n{narrative}", header.render())
        };
        let thread_id = thread.as_ref().map(|thread| thread.id);
        self.record_transcript(
            turn.session.id,
            Speaker::Assistant,
            thread_id,
            &reply,
            Some(&header),
        )
        .await?;
        self.emit(
            &mut turn,
            ChatEvent::Reply {
                thread_id,
                text: reply.clone(),
            },
        );
        let pending_approvals = self.pending_approvals(turn.session.id).await?;
        Ok(TurnOutcome {
            session_id: turn.session.id,
            route: turn.route,
            thread_id,
            thread_status: thread.map(|thread| thread.status),
            header,
            narrative,
            reply,
            pending_approvals,
            events: turn.events,
        })
    }

    async fn new_request(&self, turn: &mut Turn, text: &str) -> Result<Thread, ChatError> {
        let intent = planner::parse(text, &self.inner.manifest, self.today());
        let mut thread = Thread::new(
            turn.session.id,
            intent
                .as_ref()
                .map_or_else(|| "request".to_owned(), planner::Intent::name),
            text.chars().take(200).collect::<String>(),
            self.now(),
        );
        thread
            .slots
            .insert("request".into(), Value::String(text.to_owned()));
        if let Some(intent) = &intent {
            thread
                .slots
                .insert("filters".into(), Value::Object(intent.filters.clone()));
        }
        self.save_thread(&mut thread).await?;
        self.routed(turn, Some(thread.id));
        self.append_model(turn.session.id, thread.id, &Message::user(text))
            .await?;
        let (cancel, _running) = self.start_run(turn.session.id);
        turn.cancel = cancel;
        self.run_loop(turn, &mut thread).await?;
        Ok(thread)
    }

    fn model_for(&self, session: &ChatSession) -> Arc<dyn ChatModel> {
        self.inner
            .models
            .get(&session.model)
            .or_else(|| self.inner.models.get(self.inner.models.default_name()))
            .unwrap_or_else(|| {
                Arc::new(planner::Planner::new(self.inner.manifest.clone(), {
                    let clock = self.inner.clock.clone();
                    Arc::new(move || CivilDate::from_unix_ms(clock()))
                }))
            })
    }

    fn system_prompt(&self, tools: &[String]) -> Result<String, ChatError> {
        let manifest = &self.inner.manifest;
        self.inner
            .templates
            .get_template("system.j2")
            .and_then(|template| {
                template.render(context! {
                    site => manifest.site,
                    description => manifest.description,
                    today => self.today().to_string(),
                    tools => tools,
                })
            })
            .map_err(|error| ChatError::Template(error.to_string()))
    }

    /// The model loop for `thread`, from the model's next proposal until it answers in words,
    /// pauses for a confirmation, is stopped, or uses up its turns.
    /// The caller registers the run ([`Self::start_run`]) and keeps the guard alive across it.
    async fn run_loop(&self, turn: &mut Turn, thread: &mut Thread) -> Result<(), ChatError> {
        thread.status = ThreadStatus::InProgress;
        thread.pending_question = None;
        self.save_thread(thread).await?;
        let model = self.model_for(&turn.session);
        let tools: Vec<_> = turn
            .session
            .scope
            .model_operations(&self.inner.manifest)
            .into_iter()
            .map(|operation| operation.tool_definition(&self.inner.manifest))
            .collect();
        let tool_names: Vec<String> = tools.iter().map(|tool| tool.name.clone()).collect();
        let system = self.system_prompt(&tool_names)?;
        for _ in 0..self.inner.max_model_turns {
            if turn.cancel.is_cancelled() {
                turn.stopped = true;
                break;
            }
            let mut messages = vec![Message::system(system.clone())];
            messages.extend(self.model_history(turn.session.id).await?);
            let request = ChatRequest {
                messages,
                tools: tools.clone(),
                max_tokens: None,
                temperature: None,
            };
            let mut response = match model.chat(request).await {
                Ok(response) => response,
                Err(error) => {
                    tracing::warn!(chat.session = %turn.session.id, model = %model.name(), error = %error, "the chat model failed");
                    let step = Step::new(
                        model.name().to_string(),
                        StepRole::Read,
                        StepStatus::Failed,
                        "model call",
                    )
                    .with_error(error.to_string());
                    self.push_step(turn, thread.id, step);
                    turn.narrative = "The model failed, so I stopped here. You can try again, or use the manual tools (/tools).".to_owned();
                    thread.status = ThreadStatus::Failed;
                    thread.summary = format!("The model failed: {error}");
                    self.save_thread(thread).await?;
                    return Ok(());
                }
            };
            // Small models often write their calls as JSON text; the ids stay unique per session.
            let text_calls = adopt_text_tool_calls(
                &mut response,
                &tools,
                &format!("text_{}_", &uuid::Uuid::new_v4().simple().to_string()[..8]),
            );
            if text_calls > 0 {
                tracing::info!(chat.session = %turn.session.id, model = %model.name(), text_tool_calls = text_calls, "read tool calls from the model's text");
            }
            self.append_model(turn.session.id, thread.id, &Message::assistant(&response))
                .await?;
            if response.tool_calls.is_empty() {
                turn.narrative = response.text.unwrap_or_default();
                let failed = turn
                    .steps
                    .iter()
                    .any(|step| step.status == StepStatus::Failed);
                thread.status = if failed {
                    ThreadStatus::Failed
                } else {
                    ThreadStatus::Done
                };
                thread.summary = summarize(&turn.steps, &turn.narrative);
                self.save_thread(thread).await?;
                return Ok(());
            }
            let calls = response.tool_calls;
            for (index, call) in calls.iter().enumerate() {
                if turn.cancel.is_cancelled() {
                    for skipped in &calls[index..] {
                        self.append_model(
                            turn.session.id,
                            thread.id,
                            &Message::tool_error(
                                skipped,
                                json!({"error": "not run: the person said stop"}),
                            ),
                        )
                        .await?;
                        let step = Step::new(
                            skipped.name.clone(),
                            self.role_of(&skipped.name),
                            StepStatus::Cancelled,
                            "not started: stopped by the person",
                        );
                        self.push_step(turn, thread.id, step);
                    }
                    turn.stopped = true;
                    break;
                }
                match self.gate(turn, thread, call, Caller::Model).await? {
                    Gate::Answered(message) => {
                        self.append_model(turn.session.id, thread.id, &message)
                            .await?;
                    }
                    Gate::Paused(confirmation) => {
                        for later in &calls[index + 1..] {
                            let error = json!({"error": format!("not run: `{}` waits for the person's confirmation; propose this call again afterwards", confirmation.operation)});
                            self.append_model(
                                turn.session.id,
                                thread.id,
                                &Message::tool_error(later, error),
                            )
                            .await?;
                        }
                        self.pause(turn, thread, &confirmation).await?;
                        return Ok(());
                    }
                }
            }
            if turn.stopped {
                break;
            }
        }
        if turn.stopped || turn.cancel.is_cancelled() {
            turn.stopped = true;
            let finished = turn
                .steps
                .iter()
                .filter(|step| step.status == StepStatus::Succeeded)
                .count();
            turn.narrative = format!(
                "Stopped at your request. What finished stays finished ({} in this turn, see the header); nothing else will run.",
                plural(finished, "completed step")
            );
            thread.status = ThreadStatus::Failed;
            thread.summary = "Stopped at the person's request.".to_owned();
        } else {
            turn.narrative = format!(
                "I stopped after {} model calls without a final answer; the steps above are what ran.",
                self.inner.max_model_turns
            );
            thread.status = ThreadStatus::Failed;
            thread.summary = "Stopped: too many model calls.".to_owned();
        }
        self.save_thread(thread).await?;
        Ok(())
    }

    fn role_of(&self, operation: &str) -> StepRole {
        match self.inner.manifest.operation(operation) {
            Some(operation) if operation.is_mutating() => StepRole::Mutation,
            _ => StepRole::Read,
        }
    }

    /// Marks this turn's earlier reads by `operation`'s preview operation as previews, once a
    /// mutation relies on them (a search is only a preview in hindsight).
    fn mark_previews(&self, turn: &mut Turn, operation: &Operation) {
        if !self.inner.manifest.needs_preview(operation) {
            return;
        }
        if let Some(preview) = self.inner.manifest.preview_operation_for(operation) {
            for step in &mut turn.steps {
                if step.operation == preview.name && step.role == StepRole::Read {
                    step.role = StepRole::Preview;
                }
            }
        }
    }

    async fn pause(
        &self,
        turn: &mut Turn,
        thread: &mut Thread,
        confirmation: &Confirmation,
    ) -> Result<(), ChatError> {
        let question = approval_question(confirmation);
        thread.status = ThreadStatus::WorkflowProposed;
        thread.pending_question = Some(PendingQuestion {
            key: "approval".to_owned(),
            expected: ExpectedType::YesNo,
            prompt: question.clone(),
            confirmation_id: Some(confirmation.id),
            asked_at_ms: self.now(),
        });
        thread.summary = format!(
            "Waiting for approval: {}",
            confirmation_summary(confirmation)
        );
        self.save_thread(thread).await?;
        turn.narrative = question;
        Ok(())
    }

    /// Refuses a call: tool error to the caller, a `refused` audit row, one log line, a step.
    async fn refuse(
        &self,
        turn: &mut Turn,
        thread: &Thread,
        call: &ToolCall,
        arguments: &Value,
        reason: &str,
    ) -> Result<Gate, ChatError> {
        tracing::warn!(
            chat.session = %turn.session.id,
            chat.thread = %thread.id,
            tool.name = %call.name,
            reason,
            "refused a tool call"
        );
        let role = self.role_of(&call.name);
        let recorded = self
            .inner
            .store
            .begin_execution(&NewExecution {
                session_id: turn.session.id,
                thread_id: thread.id,
                operation: call.name.clone(),
                arguments: arguments.clone(),
                role,
                approval: Approval::Refused,
                items_total: 0,
                chunks_total: 0,
                status: ExecutionStatus::Refused,
                error: Some(reason.to_owned()),
            })
            .await;
        let execution_id = match recorded {
            Ok(id) => Some(id),
            Err(BeginExecutionError::Store(error)) => return Err(error.into()),
            Err(BeginExecutionError::ConfirmationUnusable) => None,
        };
        let mut step = Step::new(
            call.name.clone(),
            role,
            StepStatus::Refused,
            "refused by code; nothing was sent",
        )
        .with_error(reason);
        step.execution_id = execution_id;
        self.push_step(turn, thread.id, step);
        Ok(Gate::Answered(Message::tool_error(
            call,
            json!({"error": reason, "refused_by": "code", "nothing_sent": true}),
        )))
    }

    /// The gate every proposed call passes; see the module doc for the order.
    async fn gate(
        &self,
        turn: &mut Turn,
        thread: &Thread,
        call: &ToolCall,
        caller: Caller,
    ) -> Result<Gate, ChatError> {
        let manifest = self.inner.manifest.clone();
        let arguments = match &call.arguments {
            Ok(Value::Null) => Value::Object(Map::new()),
            Ok(arguments) => arguments.clone(),
            Err(malformed) => {
                let reason = format!("the arguments are not valid JSON: {}", malformed.error);
                return self
                    .refuse(
                        turn,
                        thread,
                        call,
                        &Value::String(malformed.raw.clone()),
                        &reason,
                    )
                    .await;
            }
        };
        let operation = match turn.session.scope.check(&manifest, &call.name) {
            Ok(operation) => operation,
            Err(refusal) => {
                return self
                    .refuse(turn, thread, call, &arguments, &refusal.to_string())
                    .await
            }
        };
        let offered = match caller {
            Caller::Model => operation
                .offered_to_model()
                .then_some(())
                .ok_or(ScopeRefusal::WrongCaller(call.name.clone(), "the model")),
            Caller::Person => operation
                .offered_manually()
                .then_some(())
                .ok_or(ScopeRefusal::WrongCaller(call.name.clone(), "manual use")),
        };
        if let Err(refusal) = offered {
            return self
                .refuse(turn, thread, call, &arguments, &refusal.to_string())
                .await;
        }
        if let Err(errors) = operation.validate_arguments(&arguments) {
            let reason = format!(
                "the arguments do not match `{}`'s schema: {}",
                operation.name,
                errors.join("; ")
            );
            return self.refuse(turn, thread, call, &arguments, &reason).await;
        }
        match self.inner.executor.url_for(operation, &arguments) {
            Ok(url) => {
                let host = url.host_str().unwrap_or_default();
                if let Err(refusal) = turn.session.scope.check_host(&operation.name, host) {
                    return self
                        .refuse(turn, thread, call, &arguments, &refusal.to_string())
                        .await;
                }
            }
            Err(error) => {
                return self
                    .refuse(turn, thread, call, &arguments, &error.to_string())
                    .await
            }
        }
        let readers: Vec<String> = manifest
            .operations()
            .iter()
            .filter(|candidate| candidate.entity == operation.entity && !candidate.is_mutating())
            .map(|candidate| candidate.name.clone())
            .collect();
        let shown = self.inner.store.shown_item_ids(thread.id, &readers).await?;
        let grants = self.inner.store.chat_grants(turn.session.id).await?;
        let hash = operation_hash(&operation.name, &arguments);
        let approved = self
            .inner
            .store
            .approved_confirmation(turn.session.id, &hash)
            .await?;
        let verdict = policy::evaluate(
            &manifest,
            operation,
            &arguments,
            PolicyContext {
                shown_ids: &shown,
                grants: &grants,
                confirmed: approved.is_some(),
            },
        );
        match verdict {
            Verdict::NeedsPreview(demand) => {
                let sample: Vec<&str> = demand
                    .unshown_ids
                    .iter()
                    .take(5)
                    .map(String::as_str)
                    .collect();
                let reason = format!(
                    "preview required: `{}` changes items no preview in this conversation has shown; call `{}` first so the person sees them, then propose this call with the ids it returned ({} not shown, e.g. {})",
                    operation.name,
                    demand.operation,
                    plural(demand.unshown_ids.len(), "id"),
                    sample.join(", ")
                );
                self.refuse(turn, thread, call, &arguments, &reason).await
            }
            Verdict::NeedsConfirmation { reasons, chunks } => {
                self.mark_previews(turn, operation);
                let items = self
                    .preview_rows(turn.session.id, thread.id, operation, &arguments)
                    .await?;
                let confirmation = self
                    .inner
                    .store
                    .create_confirmation(&NewConfirmation {
                        session_id: turn.session.id,
                        thread_id: thread.id,
                        call_id: call.id.clone(),
                        operation: operation.name.clone(),
                        arguments: arguments.clone(),
                        reasons,
                        preview: ConfirmationPreview {
                            count: operation.item_ids(&arguments).len(),
                            items,
                            chunks: chunks.sizes.clone(),
                            preview_operation: manifest
                                .preview_operation_for(operation)
                                .map(|preview| preview.name.clone()),
                        },
                    })
                    .await?;
                let mut step = Step::new(
                    operation.name.clone(),
                    StepRole::Mutation,
                    StepStatus::AwaitingConfirmation,
                    format!("{}; nothing sent yet", confirmation_summary(&confirmation)),
                );
                step.hash = Some(confirmation.hash.clone());
                step.confirmation_id = Some(confirmation.id);
                step.role = self.role_of(&operation.name);
                self.push_step(turn, thread.id, step);
                let approval = self.pending_approval(&confirmation);
                self.emit(turn, ChatEvent::ApprovalRequested { approval });
                Ok(Gate::Paused(Box::new(confirmation)))
            }
            Verdict::Allow {
                chunks,
                waived_by_grant,
                ..
            } => {
                self.mark_previews(turn, operation);
                let approval = match approved {
                    Some(confirmation) => Approval::Confirmation {
                        id: confirmation.id,
                    },
                    None if !waived_by_grant.is_empty() => Approval::Grant {
                        operation: if grants.session {
                            crate::store::chat::SESSION_GRANT.to_owned()
                        } else {
                            operation.name.clone()
                        },
                    },
                    None => Approval::NotNeeded,
                };
                let proposed = Proposed {
                    call,
                    operation,
                    arguments: &arguments,
                };
                self.execute(turn, thread, proposed, &chunks, approval)
                    .await
            }
        }
    }

    /// The preview rows of the items a call touches (from this thread's readonly results).
    async fn preview_rows(
        &self,
        id: SessionId,
        thread_id: ThreadId,
        operation: &Operation,
        arguments: &Value,
    ) -> Result<Vec<Value>, ChatError> {
        let wanted = operation.item_ids(arguments);
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let mut rows: HashMap<String, Value> = HashMap::new();
        for execution in self.inner.store.chat_executions(id).await? {
            if execution.thread_id != thread_id
                || execution.status != ExecutionStatus::Succeeded
                || execution.role == StepRole::Mutation
            {
                continue;
            }
            if let Some(result) = &execution.result {
                let mut items = result_items(result);
                if items.is_empty() && result.get("id").is_some() {
                    items.push(result.clone());
                }
                for item in items {
                    if let Some(item_id) = item.get("id") {
                        rows.insert(id_text(item_id), item);
                    }
                }
            }
        }
        Ok(wanted
            .iter()
            .filter_map(|item_id| rows.get(item_id).cloned())
            .collect())
    }

    async fn execute(
        &self,
        turn: &mut Turn,
        thread: &Thread,
        proposed: Proposed<'_>,
        chunks: &policy::ChunkPlan,
        approval: Approval,
    ) -> Result<Gate, ChatError> {
        let Proposed {
            call,
            operation,
            arguments,
        } = proposed;
        let role = self.role_of(&operation.name);
        let items_total = if operation.is_mutating() {
            operation.item_ids(arguments).len()
        } else {
            0
        };
        let begun = self
            .inner
            .store
            .begin_execution(&NewExecution {
                session_id: turn.session.id,
                thread_id: thread.id,
                operation: operation.name.clone(),
                arguments: arguments.clone(),
                role,
                approval: approval.clone(),
                items_total,
                chunks_total: chunks.sizes.len(),
                status: ExecutionStatus::Running,
                error: None,
            })
            .await;
        let execution_id = match begun {
            Ok(execution_id) => execution_id,
            Err(BeginExecutionError::ConfirmationUnusable) => {
                let reason = "the confirmation for this exact call was already used or withdrawn; a new one is needed";
                return self.refuse(turn, thread, call, arguments, reason).await;
            }
            Err(BeginExecutionError::Store(error)) => return Err(error.into()),
        };
        self.emit(
            turn,
            ChatEvent::StepStarted {
                thread_id: thread.id,
                operation: operation.name.clone(),
                chunks: chunks.sizes.clone(),
            },
        );
        // The call is this process's from now on: checkpoints between chunks record progress and
        // read a stop sent from any process; the heartbeat tells the others it is still alive.
        let owner = self.inner.signals.instance().to_owned();
        let store = self.inner.store.clone();
        if let Err(error) = store
            .checkpoint_execution(execution_id, &owner, None, crate::store::now_ms())
            .await
        {
            tracing::warn!(execution.id = %execution_id, error = %error, "cannot claim the execution");
        }
        let mut progress_events = Vec::new();
        let session_id = turn.session.id;
        let cancel = turn.cancel.clone();
        let outcome = {
            let mut on_progress = |progress: &ChunkProgress| -> BoxFuture<'static, ()> {
                self.inner
                    .live
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(execution_id, progress.clone());
                let event = ChatEvent::Progress {
                    thread_id: thread.id,
                    execution_id,
                    operation: operation.name.clone(),
                    progress: progress.clone(),
                };
                self.broadcast(session_id, &event);
                progress_events.push(event);
                Box::pin(super::interrupted::checkpoint(
                    store.clone(),
                    execution_id,
                    owner.clone(),
                    Some((progress.items_done, progress.chunks_done)),
                    cancel.clone(),
                ))
            };
            let run = self.inner.executor.run(
                operation,
                arguments,
                chunks,
                &turn.cancel,
                &mut on_progress,
            );
            let heartbeat = super::interrupted::keep_alive(
                store.clone(),
                execution_id,
                owner.clone(),
                cancel.clone(),
                self.inner.execution_lease / 3,
            );
            tokio::select! {
                outcome = run => outcome,
                never = heartbeat => match never {},
            }
        };
        turn.events.extend(progress_events);
        self.inner
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&execution_id);
        let result = outcome.result_value();
        let status = if outcome.succeeded() {
            ExecutionStatus::Succeeded
        } else if outcome.cancelled {
            ExecutionStatus::Cancelled
        } else {
            ExecutionStatus::Failed
        };
        let shown_ids =
            (!operation.is_mutating() && status == ExecutionStatus::Succeeded).then(|| {
                let mut items = result_items(&result);
                if items.is_empty() && result.get("id").is_some() {
                    items.push(result.clone());
                }
                items
                    .iter()
                    .filter_map(|item| item.get("id"))
                    .map(id_text)
                    .collect::<Vec<_>>()
            });
        let error = outcome.failure().map(|(chunk, error)| {
            if outcome.planned.len() > 1 {
                format!(
                    "chunk {} of {} failed: {error}",
                    chunk.index,
                    outcome.planned.len()
                )
            } else {
                error.to_string()
            }
        });
        let progress = outcome.progress();
        self.inner
            .store
            .finish_execution(
                execution_id,
                &ExecutionEnd {
                    status,
                    items_done: progress.items_done,
                    chunks_done: progress.chunks_done,
                    item_ids: shown_ids.clone(),
                    result: Some(result.clone()),
                    error: error.clone(),
                },
            )
            .await?;
        let detail = if operation.is_mutating() {
            let mut detail = format!(
                "{} of {} done",
                progress.items_done,
                plural(progress.items_total, "item")
            );
            if chunks.is_chunked() {
                detail.push_str(&format!(
                    " in {} of {} chunks ({})",
                    progress.chunks_done,
                    progress.chunks_total,
                    chunk_text(&chunks.sizes)
                ));
            }
            if outcome.cancelled {
                detail.push_str("; stopped by the person, the rest was not sent");
            }
            detail
        } else {
            let shown = shown_ids.as_ref().map_or(0, Vec::len);
            match result
                .get("total")
                .and_then(Value::as_u64)
                .and_then(|total| usize::try_from(total).ok())
            {
                Some(total) if total != shown => format!("{shown} of {total} items shown"),
                _ => plural(shown, "item"),
            }
        };
        let step_status = match status {
            ExecutionStatus::Succeeded => StepStatus::Succeeded,
            ExecutionStatus::Cancelled => StepStatus::Cancelled,
            _ => StepStatus::Failed,
        };
        let mut step = Step::new(operation.name.clone(), role, step_status, detail);
        if let Some(error) = &error {
            step = step.with_error(error);
        }
        step.execution_id = Some(execution_id);
        if let Approval::Confirmation { id } = &approval {
            step.confirmation_id = Some(*id);
            step.hash = Some(operation_hash(&operation.name, arguments));
        }
        if chunks.is_chunked() {
            step.chunks = Some(progress);
        }
        step.result = Some(result.clone());
        self.push_step(turn, thread.id, step);
        let message = match status {
            ExecutionStatus::Succeeded => Message::tool_result(call, result),
            ExecutionStatus::Cancelled => Message::tool_error(
                call,
                json!({"error": "stopped by the person between requests; finished chunks stay finished", "result": result}),
            ),
            _ => Message::tool_error(
                call,
                json!({"error": error.unwrap_or_else(|| "the call failed".to_owned()), "result": result}),
            ),
        };
        Ok(Gate::Answered(message))
    }

    /// Confirmation `confirmation_id` of session `id`; an unknown one (or another session's) is
    /// [`ChatError::ConfirmationNotFound`].
    async fn session_confirmation(
        &self,
        id: SessionId,
        confirmation_id: ConfirmationId,
    ) -> Result<Confirmation, ChatError> {
        self.inner
            .store
            .confirmation(id, confirmation_id)
            .await
            .map_err(|error| match error {
                crate::store::StoreError::NotFound => ChatError::ConfirmationNotFound,
                other => other.into(),
            })
    }

    async fn apply_decision(
        &self,
        turn: &mut Turn,
        confirmation_id: ConfirmationId,
        decision: Decision,
        said: Option<&str>,
    ) -> Result<Thread, ChatError> {
        let id = turn.session.id;
        // Another session's (or an unknown) confirmation is not found, before anything changes.
        self.session_confirmation(id, confirmation_id).await?;
        let confirmation = self
            .inner
            .store
            .decide_confirmation(id, confirmation_id, decision)
            .await?;
        if let Some(said) = said {
            self.record_transcript(id, Speaker::User, Some(confirmation.thread_id), said, None)
                .await?;
        }
        let threads = self.inner.store.chat_threads(id).await?;
        let mut thread = threads
            .into_iter()
            .find(|thread| thread.id == confirmation.thread_id)
            .ok_or(ChatError::ConfirmationNotFound)?;
        thread.pending_question = None;
        self.routed(turn, Some(thread.id));
        let call = ToolCall::new(
            confirmation.call_id.clone(),
            confirmation.operation.clone(),
            confirmation.arguments.clone(),
        );
        let manual = confirmation.call_id.starts_with(MANUAL_CALL_PREFIX);
        match decision {
            Decision::Deny => {
                if !manual {
                    self.append_model(
                        id,
                        thread.id,
                        &Message::tool_error(
                            &call,
                            json!({"error": "the person declined this call; nothing was sent"}),
                        ),
                    )
                    .await?;
                }
                let mut step = Step::new(
                    confirmation.operation.clone(),
                    StepRole::Mutation,
                    StepStatus::Declined,
                    "declined by the person; nothing was sent",
                );
                step.hash = Some(confirmation.hash.clone());
                step.confirmation_id = Some(confirmation.id);
                self.push_step(turn, thread.id, step);
                thread.status = ThreadStatus::Done;
                thread.summary = format!(
                    "Declined: {}; nothing changed.",
                    confirmation_summary(&confirmation)
                );
                self.save_thread(&mut thread).await?;
                turn.narrative = "Declined. Nothing was changed.".to_owned();
            }
            Decision::Approve(_) => {
                thread.status = ThreadStatus::InProgress;
                self.save_thread(&mut thread).await?;
                let (cancel, _running) = self.start_run(id);
                turn.cancel = cancel;
                let caller = if manual {
                    Caller::Person
                } else {
                    Caller::Model
                };
                match self.gate(turn, &thread, &call, caller).await? {
                    Gate::Answered(message) => {
                        if manual {
                            self.inject_manual_result(turn, &thread, &call, &message)
                                .await?;
                            self.settle_manual(turn, &mut thread).await?;
                        } else {
                            self.append_model(id, thread.id, &message).await?;
                            self.run_loop(turn, &mut thread).await?;
                        }
                    }
                    Gate::Paused(again) => self.pause(turn, &mut thread, &again).await?,
                }
            }
        }
        Ok(thread)
    }

    async fn answer(
        &self,
        turn: &mut Turn,
        mut thread: Thread,
        answer: Answer,
        text: &str,
    ) -> Result<Thread, ChatError> {
        let confirmation_id = thread
            .pending_question
            .as_ref()
            .and_then(|question| question.confirmation_id);
        match (confirmation_id, &answer) {
            (Some(confirmation_id), Answer::YesNo(yes)) => {
                let decision = if *yes {
                    Decision::Approve(ApprovalScope::Once)
                } else {
                    Decision::Deny
                };
                match self
                    .apply_decision(turn, confirmation_id, decision, None)
                    .await
                {
                    Ok(thread) => Ok(thread),
                    Err(ChatError::Conflict(message)) => {
                        turn.narrative =
                            format!("That confirmation can no longer be answered: {message}.");
                        thread.pending_question = None;
                        self.save_thread(&mut thread).await?;
                        Ok(thread)
                    }
                    Err(other) => Err(other),
                }
            }
            _ => {
                let key = thread
                    .pending_question
                    .as_ref()
                    .map_or_else(|| "answer".to_owned(), |question| question.key.clone());
                thread
                    .slots
                    .insert(key, serde_json::to_value(&answer).unwrap_or(Value::Null));
                thread.pending_question = None;
                self.append_model(turn.session.id, thread.id, &Message::user(text))
                    .await?;
                let (cancel, _running) = self.start_run(turn.session.id);
                turn.cancel = cancel;
                self.run_loop(turn, &mut thread).await?;
                Ok(thread)
            }
        }
    }

    async fn stop_thread(
        &self,
        turn: &mut Turn,
        thread: Option<Thread>,
    ) -> Result<Option<Thread>, ChatError> {
        let was_running = self.stop(turn.session.id).await?;
        let withdrawn = self
            .inner
            .store
            .withdraw_confirmations(turn.session.id, thread.as_ref().map(|thread| thread.id))
            .await?;
        let Some(mut thread) = thread else {
            turn.narrative = "Nothing is running.".to_owned();
            return Ok(None);
        };
        let finished = self
            .inner
            .store
            .chat_executions(turn.session.id)
            .await?
            .iter()
            .filter(|execution| {
                execution.thread_id == thread.id && execution.status == ExecutionStatus::Succeeded
            })
            .count();
        thread.status = ThreadStatus::Failed;
        thread.pending_question = None;
        thread.summary = "Stopped at the person's request.".to_owned();
        self.save_thread(&mut thread).await?;
        let mut parts = vec!["Stopped.".to_owned()];
        if was_running {
            parts.push("The running work halts before its next request.".to_owned());
        }
        if withdrawn > 0 {
            parts.push(format!(
                "{} withdrawn; nothing was sent for it.",
                plural(withdrawn as usize, "pending confirmation")
            ));
        }
        parts.push(format!(
            "{} stay finished.",
            plural(finished, "finished step")
        ));
        turn.narrative = parts.join(" ");
        Ok(Some(thread))
    }

    async fn report_status(
        &self,
        turn: &mut Turn,
        thread: Option<&Thread>,
    ) -> Result<(), ChatError> {
        let Some(thread) = thread else {
            turn.narrative = "Nothing is running, and nothing waits for you.".to_owned();
            return Ok(());
        };
        let executions: Vec<Execution> = self
            .executions(turn.session.id)
            .await?
            .into_iter()
            .filter(|execution| execution.thread_id == thread.id)
            .collect();
        // The header of a nudge is the thread's steps so far, as recorded: it shows progress and
        // failures the earlier replies may predate.
        turn.steps = executions.iter().map(step_of_execution).collect();
        let running = executions
            .iter()
            .find(|execution| execution.status == ExecutionStatus::Running);
        turn.narrative = match (thread.status, running) {
            (_, Some(execution)) => format!(
                "Still working on `{}`: {} of {} done.",
                execution.operation,
                execution.items_done,
                plural(execution.items_total, "item")
            ),
            (ThreadStatus::WorkflowProposed | ThreadStatus::WaitingForUser, None) => format!(
                "Waiting for you: {}",
                thread
                    .pending_question
                    .as_ref()
                    .map_or(thread.summary.as_str(), |question| question.prompt.as_str())
            ),
            (status, None) => format!("{} ({})", thread.summary, status.as_str().replace('_', " ")),
        };
        Ok(())
    }

    async fn run_slash(
        &self,
        turn: &mut Turn,
        command: Result<SlashCommand, slash::SlashError>,
    ) -> Result<Option<Thread>, ChatError> {
        let command = match command {
            Ok(command) => command,
            Err(error) => {
                turn.narrative = error.to_string();
                return Ok(None);
            }
        };
        match command {
            SlashCommand::Help => turn.narrative = HELP.to_owned(),
            SlashCommand::Tools => turn.narrative = self.tools_text(&turn.session),
            SlashCommand::Status => {
                let threads = self.inner.store.chat_threads(turn.session.id).await?;
                let executions = self.executions(turn.session.id).await?;
                turn.steps = executions
                    .iter()
                    .filter(|execution| execution.status == ExecutionStatus::Running)
                    .map(step_of_execution)
                    .collect();
                let mut lines: Vec<String> = threads
                    .iter()
                    .filter(|thread| !thread.status.is_terminal())
                    .map(|thread| {
                        format!(
                            "- {} [{}]: {}",
                            thread.intent,
                            thread.status.as_str(),
                            thread.summary
                        )
                    })
                    .collect();
                if lines.is_empty() {
                    lines.push("No open threads.".to_owned());
                }
                let pending = self.pending_approvals(turn.session.id).await?.len();
                lines.push(format!(
                    "{} waiting for you.",
                    plural(pending, "confirmation")
                ));
                lines.push(format!("Model: {}.", turn.session.model));
                turn.narrative = lines.join("\n");
            }
            SlashCommand::Model(None) => {
                turn.narrative = format!(
                    "This chat uses `{}`. Available: {}.",
                    turn.session.model,
                    self.inner.models.names().join(", ")
                );
            }
            SlashCommand::Model(Some(name)) => {
                if self.inner.models.get(&name).is_some() {
                    self.inner
                        .store
                        .set_chat_session_model(turn.session.id, &name)
                        .await?;
                    turn.session.model.clone_from(&name);
                    turn.narrative = format!("This chat now uses `{name}`.");
                } else {
                    turn.narrative = format!(
                        "`{name}` is not available here. Available: {}.",
                        self.inner.models.names().join(", ")
                    );
                }
            }
            SlashCommand::Clear => {
                let _ = self.stop(turn.session.id).await?;
                self.inner
                    .store
                    .withdraw_confirmations(turn.session.id, None)
                    .await?;
                for mut thread in self.inner.store.chat_threads(turn.session.id).await? {
                    if !thread.status.is_terminal() {
                        thread.status = ThreadStatus::Failed;
                        thread.pending_question = None;
                        thread.summary = "Cleared before it finished.".to_owned();
                        self.save_thread(&mut thread).await?;
                    }
                }
                self.inner
                    .store
                    .clear_chat_messages(turn.session.id, Channel::Model)
                    .await?;
                self.inner
                    .store
                    .clear_chat_messages(turn.session.id, Channel::Transcript)
                    .await?;
                turn.narrative =
                    "Cleared. The conversation starts afresh; what ran stays in the audit trail."
                        .to_owned();
            }
            SlashCommand::Tool { name, arguments } => {
                let Some(operation) = self.inner.manifest.operation(&name) else {
                    turn.narrative =
                        format!("There is no tool `{name}`; type /tools for the list.");
                    return Ok(None);
                };
                let schema = match FormSchema::from_json_schema(&operation.parameters) {
                    Ok(schema) => schema,
                    Err(error) => {
                        turn.narrative = format!("`{name}` cannot be run by hand: {error}");
                        return Ok(None);
                    }
                };
                let decoded = match decode_values(&schema, &arguments) {
                    Ok(decoded) => decoded,
                    Err(errors) => {
                        let messages: Vec<String> = errors.0.values().cloned().collect();
                        turn.narrative = format!("`{name}` was not run: {}", messages.join("; "));
                        return Ok(None);
                    }
                };
                return Ok(Some(
                    self.manual_call(turn, &name, Value::Object(decoded))
                        .await?,
                ));
            }
        }
        Ok(None)
    }

    fn tools_text(&self, session: &ChatSession) -> String {
        let manifest = &self.inner.manifest;
        let mut by_category: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for operation in manifest.operations() {
            let in_scope = session.scope.check(manifest, &operation.name).is_ok();
            let mode = match (operation.offered_to_model(), operation.offered_manually()) {
                (true, true) => "model and manual",
                (true, false) => "model only",
                _ => "manual only",
            };
            let mut line = format!("- {} ({mode}): {}", operation.name, operation.description);
            let rules = policy::describe(manifest, operation);
            if !rules.is_empty() {
                line.push(' ');
                line.push_str(&rules.join(" "));
            }
            if !in_scope {
                line.push_str(" [outside this session's scope]");
            }
            by_category
                .entry(operation.category.clone())
                .or_default()
                .push(line);
        }
        let mut text = String::from("Tools:");
        for (category, lines) in by_category {
            text.push_str(&format!("\n{category}:\n{}", lines.join("\n")));
        }
        text
    }

    async fn manual_call(
        &self,
        turn: &mut Turn,
        name: &str,
        arguments: Value,
    ) -> Result<Thread, ChatError> {
        let mut thread = Thread::new(
            turn.session.id,
            format!("manual: {name}"),
            format!("Manual tool `{name}`"),
            self.now(),
        );
        thread.slots.insert("arguments".into(), arguments.clone());
        self.save_thread(&mut thread).await?;
        self.routed(turn, Some(thread.id));
        let call = ToolCall::new(
            format!("{MANUAL_CALL_PREFIX}{}", uuid::Uuid::new_v4().simple()),
            name,
            arguments,
        );
        let (cancel, _running) = self.start_run(turn.session.id);
        turn.cancel = cancel;
        match self.gate(turn, &thread, &call, Caller::Person).await? {
            Gate::Answered(message) => {
                self.inject_manual_result(turn, &thread, &call, &message)
                    .await?;
                self.settle_manual(turn, &mut thread).await?;
            }
            Gate::Paused(confirmation) => self.pause(turn, &mut thread, &confirmation).await?,
        }
        Ok(thread)
    }

    /// Puts a manual tool's result into the model's conversation as a system note, so the model
    /// knows what the person did (and the planner, which reads only user turns, ignores it).
    async fn inject_manual_result(
        &self,
        turn: &Turn,
        thread: &Thread,
        call: &ToolCall,
        message: &Message,
    ) -> Result<(), ChatError> {
        let (content, is_error) = match message {
            Message::ToolResult {
                content, is_error, ..
            } => (content.clone(), *is_error),
            _ => (Value::Null, false),
        };
        let outcome = if is_error { "failed" } else { "returned" };
        let mut text = format!(
            "The person ran the manual tool `{}` with {}; it {outcome}: {}",
            call.name,
            call.arguments_text(),
            content
        );
        if text.len() > 20_000 {
            text.truncate(
                text.char_indices()
                    .nth(20_000)
                    .map_or(text.len(), |(index, _)| index),
            );
            text.push_str("… (truncated)");
        }
        self.append_model(turn.session.id, thread.id, &Message::system(text))
            .await
    }

    async fn settle_manual(&self, turn: &mut Turn, thread: &mut Thread) -> Result<(), ChatError> {
        let last = turn.steps.last();
        let (status, narrative) = match last.map(|step| step.status) {
            Some(StepStatus::Succeeded) => (
                ThreadStatus::Done,
                format!("`{}` ran.", last.map_or("", |step| step.operation.as_str())),
            ),
            Some(StepStatus::Refused) => (
                ThreadStatus::Failed,
                "Code refused the tool; see the header for why.".to_owned(),
            ),
            _ => (
                ThreadStatus::Failed,
                "The tool failed; see the header for the error.".to_owned(),
            ),
        };
        thread.status = status;
        thread.summary = summarize(&turn.steps, &narrative);
        self.save_thread(thread).await?;
        turn.narrative = narrative;
        Ok(())
    }
}

/// A header step for a recorded execution (nudges, `/status`, reloads).
fn step_of_execution(execution: &Execution) -> Step {
    let status = match execution.status {
        ExecutionStatus::Running => StepStatus::Running,
        ExecutionStatus::Succeeded => StepStatus::Succeeded,
        ExecutionStatus::Failed => StepStatus::Failed,
        ExecutionStatus::Cancelled => StepStatus::Cancelled,
        ExecutionStatus::Refused => StepStatus::Refused,
        ExecutionStatus::Interrupted => StepStatus::Interrupted,
    };
    let detail = if execution.role == StepRole::Mutation {
        format!(
            "{} of {} done",
            execution.items_done,
            plural(execution.items_total, "item")
        )
    } else {
        plural(execution.item_ids.as_ref().map_or(0, Vec::len), "item")
    };
    let mut step = Step::new(execution.operation.clone(), execution.role, status, detail);
    if let Some(error) = &execution.error {
        step = step.with_error(error);
    }
    step.execution_id = Some(execution.id);
    if execution.chunks_total > 1 {
        step.chunks = Some(ChunkProgress {
            chunks_done: execution.chunks_done,
            chunks_total: execution.chunks_total,
            items_done: execution.items_done,
            items_total: execution.items_total,
            sizes: Vec::new(),
        });
    }
    step
}

fn confirmation_summary(confirmation: &Confirmation) -> String {
    let count = confirmation.preview.count;
    let mut text = format!(
        "`{}` on {}",
        confirmation.operation,
        plural(count.max(1), "item")
    );
    if confirmation.preview.chunks.len() > 1 {
        text.push_str(&format!(
            " in {} chunks ({})",
            confirmation.preview.chunks.len(),
            chunk_text(&confirmation.preview.chunks)
        ));
    }
    text
}

fn approval_question(confirmation: &Confirmation) -> String {
    let reasons: Vec<String> = confirmation
        .reasons
        .iter()
        .map(ConfirmReason::describe)
        .collect();
    format!(
        "Approve {}? Code asks because {}. Nothing has been sent yet. Answer yes or no (this approval is bound to hash {}).",
        confirmation_summary(confirmation),
        reasons.join(", "),
        confirmation.hash.short()
    )
}

fn summarize(steps: &[Step], narrative: &str) -> String {
    let first_line = narrative.lines().next().unwrap_or_default();
    let failed = steps
        .iter()
        .filter(|step| step.status == StepStatus::Failed)
        .count();
    let mut summary: String = first_line.chars().take(200).collect();
    if failed > 0 {
        summary = format!("{} failed. {summary}", plural(failed, "step"));
    }
    if summary.is_empty() {
        summary = format!("{} ran.", plural(steps.len(), "step"));
    }
    summary
}
