//! Chat orchestration state: sessions, both message channels, micro-threads, confirmations,
//! grants and the execution audit trail.
//!
//! Everything the orchestrator needs to resume lives here, not in memory (DESIGN.md §13): a
//! pending approval survives a reload and a restart. The one multi-statement rule is
//! [`Store::begin_execution`]: an approved confirmation for the call's exact hash is consumed in
//! the same transaction that records the execution, so a confirmation runs at most one call even
//! when two requests race (and `chat_executions.confirmation_id` is UNIQUE as a backstop).

mod liveness;
mod queries;

use std::collections::BTreeSet;

use serde_json::Value;

use super::{decode_json, decode_parsed, decode_uuid, now_ms, Result, Store, StoreError};
use crate::records::chat::{
    audit::{Approval, Execution, ExecutionEnd, ExecutionId, ExecutionStatus, NewExecution},
    confirm::{
        ApprovalScope, Caller, Confirmation, ConfirmationId, ConfirmationStatus, NewConfirmation,
        OperationHash,
    },
    header::StepRole,
    policy::Grants,
    session::{ChatSession, MessageChannel, SessionId},
    threads::{Thread, ThreadId, ThreadStatus},
};

/// The grant row that stands for "everything, for this session".
pub const SESSION_GRANT: &str = "*";

const SESSION_COLUMNS: &str = "id, scope, model, created_at, updated_at";
const THREAD_COLUMNS: &str =
    "id, session_id, intent, slots, status, pending_question, summary, created_at, updated_at";
const CONFIRMATION_COLUMNS: &str = "id, session_id, thread_id, call_id, caller, operation, arguments, hash, reasons, preview, status, scope, created_at, decided_at, consumed_at";
const EXECUTION_COLUMNS: &str = "id, session_id, thread_id, operation, arguments, hash, role, approval, status, items_total, items_done, chunks_total, chunks_done, item_ids, result, error, created_at, finished_at";

#[derive(sqlx::FromRow)]
struct SessionRow {
    id: String,
    scope: String,
    model: String,
    created_at: i64,
    updated_at: i64,
}

impl TryFrom<SessionRow> for ChatSession {
    type Error = StoreError;

    fn try_from(row: SessionRow) -> Result<Self> {
        Ok(Self {
            id: SessionId(decode_uuid("chat_sessions.id", &row.id)?),
            scope: decode_typed("chat_sessions.scope", &row.scope)?,
            model: row.model,
            created_at_ms: row.created_at,
            updated_at_ms: row.updated_at,
        })
    }
}

#[derive(sqlx::FromRow)]
struct ThreadRow {
    id: String,
    session_id: String,
    intent: String,
    slots: String,
    status: String,
    pending_question: Option<String>,
    summary: String,
    created_at: i64,
    updated_at: i64,
}

impl TryFrom<ThreadRow> for Thread {
    type Error = StoreError;

    fn try_from(row: ThreadRow) -> Result<Self> {
        Ok(Self {
            id: ThreadId(decode_uuid("chat_threads.id", &row.id)?),
            session_id: SessionId(decode_uuid("chat_threads.session_id", &row.session_id)?),
            intent: row.intent,
            slots: decode_typed("chat_threads.slots", &row.slots)?,
            status: decode_parsed("chat_threads.status", &row.status, ThreadStatus::parse)?,
            pending_question: row
                .pending_question
                .as_deref()
                .map(|text| decode_typed("chat_threads.pending_question", text))
                .transpose()?,
            summary: row.summary,
            created_at_ms: row.created_at,
            updated_at_ms: row.updated_at,
        })
    }
}

#[derive(sqlx::FromRow)]
struct ConfirmationRow {
    id: String,
    session_id: String,
    thread_id: String,
    call_id: String,
    caller: String,
    operation: String,
    arguments: String,
    hash: String,
    reasons: String,
    preview: String,
    status: String,
    scope: Option<String>,
    created_at: i64,
    decided_at: Option<i64>,
    consumed_at: Option<i64>,
}

impl TryFrom<ConfirmationRow> for Confirmation {
    type Error = StoreError;

    fn try_from(row: ConfirmationRow) -> Result<Self> {
        Ok(Self {
            id: ConfirmationId(decode_uuid("chat_confirmations.id", &row.id)?),
            session_id: SessionId(decode_uuid(
                "chat_confirmations.session_id",
                &row.session_id,
            )?),
            thread_id: ThreadId(decode_uuid("chat_confirmations.thread_id", &row.thread_id)?),
            call_id: row.call_id,
            caller: decode_parsed("chat_confirmations.caller", &row.caller, Caller::parse)?,
            operation: row.operation,
            arguments: decode_json("chat_confirmations.arguments", &row.arguments)?,
            hash: OperationHash(row.hash),
            reasons: decode_typed("chat_confirmations.reasons", &row.reasons)?,
            preview: decode_typed("chat_confirmations.preview", &row.preview)?,
            status: decode_parsed(
                "chat_confirmations.status",
                &row.status,
                ConfirmationStatus::parse,
            )?,
            scope: row
                .scope
                .as_deref()
                .map(|text| decode_parsed("chat_confirmations.scope", text, ApprovalScope::parse))
                .transpose()?,
            created_at_ms: row.created_at,
            decided_at_ms: row.decided_at,
            consumed_at_ms: row.consumed_at,
        })
    }
}

#[derive(sqlx::FromRow)]
struct ExecutionRow {
    id: String,
    session_id: String,
    thread_id: String,
    operation: String,
    arguments: String,
    hash: String,
    role: String,
    approval: String,
    status: String,
    items_total: i64,
    items_done: i64,
    chunks_total: i64,
    chunks_done: i64,
    item_ids: Option<String>,
    result: Option<String>,
    error: Option<String>,
    created_at: i64,
    finished_at: Option<i64>,
}

fn count(column: &'static str, value: i64) -> Result<usize> {
    usize::try_from(value).map_err(|_| StoreError::Corrupt {
        column,
        reason: value.to_string(),
    })
}

fn stored_count(value: usize) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

impl TryFrom<ExecutionRow> for Execution {
    type Error = StoreError;

    fn try_from(row: ExecutionRow) -> Result<Self> {
        Ok(Self {
            id: ExecutionId(decode_uuid("chat_executions.id", &row.id)?),
            session_id: SessionId(decode_uuid("chat_executions.session_id", &row.session_id)?),
            thread_id: ThreadId(decode_uuid("chat_executions.thread_id", &row.thread_id)?),
            operation: row.operation,
            arguments: decode_json("chat_executions.arguments", &row.arguments)?,
            hash: OperationHash(row.hash),
            role: decode_parsed("chat_executions.role", &row.role, StepRole::parse)?,
            approval: decode_parsed("chat_executions.approval", &row.approval, Approval::parse)?,
            status: decode_parsed(
                "chat_executions.status",
                &row.status,
                ExecutionStatus::parse,
            )?,
            items_total: count("chat_executions.items_total", row.items_total)?,
            items_done: count("chat_executions.items_done", row.items_done)?,
            chunks_total: count("chat_executions.chunks_total", row.chunks_total)?,
            chunks_done: count("chat_executions.chunks_done", row.chunks_done)?,
            item_ids: row
                .item_ids
                .as_deref()
                .map(|text| decode_typed("chat_executions.item_ids", text))
                .transpose()?,
            result: row
                .result
                .as_deref()
                .map(|text| decode_json("chat_executions.result", text))
                .transpose()?,
            error: row.error,
            created_at_ms: row.created_at,
            finished_at_ms: row.finished_at,
        })
    }
}

/// A stored message of either channel.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredMessage {
    /// Its position (increasing per session).
    pub id: i64,
    /// `user` / `assistant` for the transcript; the model message's role for the model channel.
    pub role: String,
    /// The thread it belongs to.
    pub thread_id: Option<ThreadId>,
    /// The body (JSON).
    pub body: Value,
    /// When, unix ms.
    pub created_at_ms: i64,
}

#[derive(sqlx::FromRow)]
struct MessageRow {
    id: i64,
    role: String,
    thread_id: Option<String>,
    body: String,
    created_at: i64,
}

impl TryFrom<MessageRow> for StoredMessage {
    type Error = StoreError;

    fn try_from(row: MessageRow) -> Result<Self> {
        Ok(Self {
            id: row.id,
            role: row.role,
            thread_id: row
                .thread_id
                .as_deref()
                .map(|id| decode_uuid("chat_messages.thread_id", id).map(ThreadId))
                .transpose()?,
            body: decode_json("chat_messages.body", &row.body)?,
            created_at_ms: row.created_at,
        })
    }
}

/// A person's answer to a confirmation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Yes, reaching this far.
    Approve(ApprovalScope),
    /// No.
    Deny,
}

/// Why [`Store::begin_execution`] refused to record an execution.
#[derive(Debug, thiserror::Error)]
pub enum BeginExecutionError {
    /// The confirmation is not approved, already used, or bound to other arguments.
    #[error("the confirmation is not approved for this exact call, or was already used")]
    ConfirmationUnusable,
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn decode_typed<T: serde::de::DeserializeOwned>(column: &'static str, text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|error| StoreError::Corrupt {
        column,
        reason: error.to_string(),
    })
}

fn encode<T: serde::Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|error| StoreError::Corrupt {
        column: "chat (encoding)",
        reason: error.to_string(),
    })
}

impl Store {
    /// Stores a new session.
    ///
    /// # Errors
    /// [`StoreError::Conflict`] if the id exists.
    pub async fn create_chat_session(&self, session: &ChatSession) -> Result<()> {
        let scope = encode(&session.scope)?;
        queries::insert_session(self, session, &scope).await
    }

    /// Reads a session.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when there is none.
    pub async fn chat_session(&self, id: SessionId) -> Result<ChatSession> {
        let row = queries::session(self, id).await?;
        row.ok_or(StoreError::NotFound)?.try_into()
    }

    /// Changes a session's model and marks it active at `now`.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when there is no such session.
    pub async fn set_chat_session_model(&self, id: SessionId, model: &str) -> Result<()> {
        let changed = queries::set_model(self, id, model, now_ms()).await?;
        if changed {
            Ok(())
        } else {
            Err(StoreError::NotFound)
        }
    }

    /// Appends a message to one of a session's channels; returns its position.
    ///
    /// # Errors
    /// Database failures (a missing session is a foreign-key failure).
    pub async fn append_chat_message(
        &self,
        session_id: SessionId,
        channel: MessageChannel,
        role: &str,
        thread_id: Option<ThreadId>,
        body: &Value,
    ) -> Result<i64> {
        let body = body.to_string();
        let now = now_ms();
        queries::append_message(self, session_id, channel, role, thread_id, &body, now).await
    }

    /// A channel's messages, oldest first.
    ///
    /// # Errors
    /// Database failures.
    pub async fn chat_messages(
        &self,
        session_id: SessionId,
        channel: MessageChannel,
    ) -> Result<Vec<StoredMessage>> {
        let rows = queries::messages(self, session_id, channel).await?;
        rows.into_iter().map(StoredMessage::try_from).collect()
    }

    /// Deletes a channel's messages (for `/clear`).
    ///
    /// # Errors
    /// Database failures.
    pub async fn clear_chat_messages(
        &self,
        session_id: SessionId,
        channel: MessageChannel,
    ) -> Result<()> {
        queries::clear_messages(self, session_id, channel).await
    }

    /// Inserts or replaces a thread.
    ///
    /// # Errors
    /// Database failures.
    pub async fn save_chat_thread(&self, thread: &Thread) -> Result<()> {
        let slots = encode(&thread.slots)?;
        let question = thread.pending_question.as_ref().map(encode).transpose()?;
        queries::save_thread(self, thread, &slots, question.as_deref()).await
    }

    /// A session's threads, oldest first.
    ///
    /// # Errors
    /// Database failures.
    pub async fn chat_threads(&self, session_id: SessionId) -> Result<Vec<Thread>> {
        let rows = queries::threads(self, session_id).await?;
        rows.into_iter().map(Thread::try_from).collect()
    }

    /// Stores a pending confirmation, bound to the hash of its operation and arguments.
    ///
    /// # Errors
    /// Database failures.
    pub async fn create_confirmation(&self, new: &NewConfirmation) -> Result<Confirmation> {
        let id = ConfirmationId::new();
        let hash = new.hash();
        let reasons = encode(&new.reasons)?;
        let preview = encode(&new.preview)?;
        let now = now_ms();
        let row =
            queries::insert_confirmation(self, id, new, &hash, &reasons, &preview, now).await?;
        row.try_into()
    }

    /// Reads a confirmation of a session.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when the session has no such confirmation.
    pub async fn confirmation(
        &self,
        session_id: SessionId,
        id: ConfirmationId,
    ) -> Result<Confirmation> {
        let row = queries::confirmation(self, session_id, id).await?;
        row.ok_or(StoreError::NotFound)?.try_into()
    }

    /// A session's confirmations in `status`, oldest first.
    ///
    /// # Errors
    /// Database failures.
    pub async fn confirmations_with_status(
        &self,
        session_id: SessionId,
        status: ConfirmationStatus,
    ) -> Result<Vec<Confirmation>> {
        let rows = queries::confirmations(self, session_id, status.as_str()).await?;
        rows.into_iter().map(Confirmation::try_from).collect()
    }

    /// Records a person's decision on a pending confirmation; an approval "for this operation"
    /// or "for this session" also stores the grant, in the same transaction.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when there is no such confirmation; [`StoreError::Conflict`]
    /// when it is no longer pending.
    pub async fn decide_confirmation(
        &self,
        session_id: SessionId,
        id: ConfirmationId,
        decision: Decision,
    ) -> Result<Confirmation> {
        let now = now_ms();
        let row = queries::decide(self, session_id, id, decision, now).await?;
        row.try_into()
    }

    /// Denies every pending or approved-but-unused confirmation of a thread (or of the whole
    /// session when `thread_id` is `None`); returns how many.
    ///
    /// # Errors
    /// Database failures.
    pub async fn withdraw_confirmations(
        &self,
        session_id: SessionId,
        thread_id: Option<ThreadId>,
    ) -> Result<u64> {
        let now = now_ms();
        queries::withdraw(self, session_id, thread_id, now).await
    }

    /// The grants a session's person gave.
    ///
    /// # Errors
    /// Database failures.
    pub async fn chat_grants(&self, session_id: SessionId) -> Result<Grants> {
        let operations = queries::grants(self, session_id).await?;
        let session = operations
            .iter()
            .any(|operation| operation == SESSION_GRANT);
        Ok(Grants {
            operations: operations
                .into_iter()
                .filter(|operation| operation != SESSION_GRANT)
                .collect(),
            session,
        })
    }

    /// The approved, unused confirmation of a session bound to `hash`, if any.
    ///
    /// # Errors
    /// Database failures.
    pub async fn approved_confirmation(
        &self,
        session_id: SessionId,
        hash: &OperationHash,
    ) -> Result<Option<Confirmation>> {
        let row = queries::approved_by_hash(self, session_id, hash).await?;
        row.map(Confirmation::try_from).transpose()
    }

    /// Consumes the approved, unused confirmation `id` of a session bound to `hash` on its own:
    /// a group confirmation, which stands behind several executions, is used up once, before the
    /// first of its calls runs. `false` when it is not approved, already used, or bound to
    /// another hash (nothing changes then).
    ///
    /// # Errors
    /// Database failures.
    pub async fn consume_confirmation(
        &self,
        session_id: SessionId,
        id: ConfirmationId,
        hash: &OperationHash,
    ) -> Result<bool> {
        queries::consume(self, session_id, id, hash, now_ms()).await
    }

    /// Records an execution before any request is sent. When it relies on a confirmation, that
    /// confirmation is consumed in the same transaction — only if it belongs to the session, is
    /// approved, unused, and bound to this call's exact hash.
    ///
    /// # Errors
    /// [`BeginExecutionError::ConfirmationUnusable`] when the confirmation cannot be consumed
    /// (nothing is recorded then); database failures.
    pub async fn begin_execution(
        &self,
        new: &NewExecution,
    ) -> Result<ExecutionId, BeginExecutionError> {
        let id = ExecutionId::new();
        let hash = new.hash();
        let now = now_ms();
        let recorded = queries::begin_execution(self, id, new, &hash, now).await?;
        if recorded {
            Ok(id)
        } else {
            Err(BeginExecutionError::ConfirmationUnusable)
        }
    }

    /// Records progress of a running execution.
    ///
    /// # Errors
    /// Database failures.
    pub async fn execution_progress(
        &self,
        id: ExecutionId,
        items_done: usize,
        chunks_done: usize,
    ) -> Result<()> {
        queries::progress(
            self,
            id,
            stored_count(items_done),
            stored_count(chunks_done),
        )
        .await
    }

    /// Records how an execution ended.
    ///
    /// # Errors
    /// Database failures.
    pub async fn finish_execution(&self, id: ExecutionId, end: &ExecutionEnd) -> Result<()> {
        let item_ids = end.item_ids.as_ref().map(encode).transpose()?;
        let result = end.result.as_ref().map(ToString::to_string);
        let now = now_ms();
        queries::finish(self, id, end, item_ids.as_deref(), result.as_deref(), now).await
    }

    /// A session's executions, oldest first.
    ///
    /// # Errors
    /// Database failures.
    pub async fn chat_executions(&self, session_id: SessionId) -> Result<Vec<Execution>> {
        let rows = queries::executions(self, session_id).await?;
        rows.into_iter().map(Execution::try_from).collect()
    }

    /// The item ids shown by succeeded readonly calls of `operations` in a thread: what the
    /// person has seen, which is what the preview rule checks a mutation against.
    ///
    /// # Errors
    /// Database failures.
    pub async fn shown_item_ids(
        &self,
        thread_id: ThreadId,
        operations: &[String],
    ) -> Result<BTreeSet<String>> {
        let lists = queries::shown_ids(self, thread_id).await?;
        let mut shown = BTreeSet::new();
        for (operation, text) in lists {
            if operations.contains(&operation) {
                let ids: Vec<String> = decode_typed("chat_executions.item_ids", &text)?;
                shown.extend(ids);
            }
        }
        Ok(shown)
    }
}
