//! The chat aggregate's queries, each written once for both engines (see `store`'s module doc).

use super::{
    stored_count, ConfirmationRow, Decision, ExecutionRow, MessageRow, SessionRow, ThreadRow,
    CONFIRMATION_COLUMNS, EXECUTION_COLUMNS, SESSION_COLUMNS, SESSION_GRANT, THREAD_COLUMNS,
};
use crate::{
    records::chat::{
        audit::{Approval, ExecutionEnd, ExecutionId, NewExecution},
        confirm::{ApprovalScope, ConfirmationId, NewConfirmation, OperationHash},
        session::{ChatSession, MessageChannel, SessionId},
        threads::{Thread, ThreadId},
    },
    {begin_write, Result, Store, StoreError},
};

pub(super) async fn insert_session(
    store: &Store,
    session: &ChatSession,
    scope: &str,
) -> Result<()> {
    on_pool!(store, |pool| {
        sqlx::query("INSERT INTO chat_sessions (id, scope, model, created_at, updated_at) VALUES ($1, $2, $3, $4, $5)")
            .bind(session.id.to_string())
            .bind(scope)
            .bind(&session.model)
            .bind(session.created_at_ms)
            .bind(session.updated_at_ms)
            .execute(pool)
            .await?;
        Ok(())
    })
}

pub(super) async fn session(store: &Store, id: SessionId) -> Result<Option<SessionRow>> {
    on_pool!(store, |pool| {
        let sql = format!("SELECT {SESSION_COLUMNS} FROM chat_sessions WHERE id = $1");
        Ok(sqlx::query_as(&sql)
            .bind(id.to_string())
            .fetch_optional(pool)
            .await?)
    })
}

pub(super) async fn set_model(store: &Store, id: SessionId, model: &str, now: i64) -> Result<bool> {
    on_pool!(store, |pool| {
        let result =
            sqlx::query("UPDATE chat_sessions SET model = $1, updated_at = $2 WHERE id = $3")
                .bind(model)
                .bind(now)
                .bind(id.to_string())
                .execute(pool)
                .await?;
        Ok(result.rows_affected() == 1)
    })
}

pub(super) async fn append_message(
    store: &Store,
    session_id: SessionId,
    channel: MessageChannel,
    role: &str,
    thread_id: Option<ThreadId>,
    body: &str,
    now: i64,
) -> Result<i64> {
    on_pool!(store, |pool| {
        let mut transaction = begin_write(pool).await?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO chat_messages (session_id, channel, role, thread_id, body, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        )
        .bind(session_id.to_string())
        .bind(channel.as_str())
        .bind(role)
        .bind(thread_id.map(|id| id.to_string()))
        .bind(body)
        .bind(now)
        .fetch_one(&mut *transaction)
        .await?;
        sqlx::query("UPDATE chat_sessions SET updated_at = $1 WHERE id = $2")
            .bind(now)
            .bind(session_id.to_string())
            .execute(&mut *transaction)
            .await?;
        transaction.commit().await?;
        Ok(id)
    })
}

pub(super) async fn messages(
    store: &Store,
    session_id: SessionId,
    channel: MessageChannel,
) -> Result<Vec<MessageRow>> {
    on_pool!(store, |pool| {
        Ok(sqlx::query_as(
            "SELECT id, role, thread_id, body, created_at FROM chat_messages WHERE session_id = $1 AND channel = $2 ORDER BY id",
        )
        .bind(session_id.to_string())
        .bind(channel.as_str())
        .fetch_all(pool)
        .await?)
    })
}

pub(super) async fn clear_messages(
    store: &Store,
    session_id: SessionId,
    channel: MessageChannel,
) -> Result<()> {
    on_pool!(store, |pool| {
        sqlx::query("DELETE FROM chat_messages WHERE session_id = $1 AND channel = $2")
            .bind(session_id.to_string())
            .bind(channel.as_str())
            .execute(pool)
            .await?;
        Ok(())
    })
}

pub(super) async fn save_thread(
    store: &Store,
    thread: &Thread,
    slots: &str,
    question: Option<&str>,
) -> Result<()> {
    on_pool!(store, |pool| {
        sqlx::query(
            "INSERT INTO chat_threads (id, session_id, intent, slots, status, pending_question, summary, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
             ON CONFLICT (id) DO UPDATE SET intent = excluded.intent, slots = excluded.slots, status = excluded.status, \
             pending_question = excluded.pending_question, summary = excluded.summary, updated_at = excluded.updated_at",
        )
        .bind(thread.id.to_string())
        .bind(thread.session_id.to_string())
        .bind(&thread.intent)
        .bind(slots)
        .bind(thread.status.as_str())
        .bind(question)
        .bind(&thread.summary)
        .bind(thread.created_at_ms)
        .bind(thread.updated_at_ms)
        .execute(pool)
        .await?;
        Ok(())
    })
}

pub(super) async fn threads(store: &Store, session_id: SessionId) -> Result<Vec<ThreadRow>> {
    on_pool!(store, |pool| {
        let sql = format!(
            "SELECT {THREAD_COLUMNS} FROM chat_threads WHERE session_id = $1 ORDER BY created_at, id"
        );
        Ok(sqlx::query_as(&sql)
            .bind(session_id.to_string())
            .fetch_all(pool)
            .await?)
    })
}

pub(super) async fn insert_confirmation(
    store: &Store,
    id: ConfirmationId,
    new: &NewConfirmation,
    hash: &OperationHash,
    reasons: &str,
    preview: &str,
    now: i64,
) -> Result<ConfirmationRow> {
    on_pool!(store, |pool| {
        let sql = format!(
            "INSERT INTO chat_confirmations (id, session_id, thread_id, call_id, caller, operation, arguments, hash, reasons, preview, status, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending', $11) RETURNING {CONFIRMATION_COLUMNS}"
        );
        Ok(sqlx::query_as(&sql)
            .bind(id.to_string())
            .bind(new.session_id.to_string())
            .bind(new.thread_id.to_string())
            .bind(&new.call_id)
            .bind(new.caller.as_str())
            .bind(&new.operation)
            .bind(new.arguments.to_string())
            .bind(&hash.0)
            .bind(reasons)
            .bind(preview)
            .bind(now)
            .fetch_one(pool)
            .await?)
    })
}

pub(super) async fn confirmation(
    store: &Store,
    session_id: SessionId,
    id: ConfirmationId,
) -> Result<Option<ConfirmationRow>> {
    on_pool!(store, |pool| {
        let sql = format!(
            "SELECT {CONFIRMATION_COLUMNS} FROM chat_confirmations WHERE id = $1 AND session_id = $2"
        );
        Ok(sqlx::query_as(&sql)
            .bind(id.to_string())
            .bind(session_id.to_string())
            .fetch_optional(pool)
            .await?)
    })
}

pub(super) async fn confirmations(
    store: &Store,
    session_id: SessionId,
    status: &str,
) -> Result<Vec<ConfirmationRow>> {
    on_pool!(store, |pool| {
        let sql = format!(
            "SELECT {CONFIRMATION_COLUMNS} FROM chat_confirmations WHERE session_id = $1 AND status = $2 ORDER BY created_at, id"
        );
        Ok(sqlx::query_as(&sql)
            .bind(session_id.to_string())
            .bind(status)
            .fetch_all(pool)
            .await?)
    })
}

pub(super) async fn decide(
    store: &Store,
    session_id: SessionId,
    id: ConfirmationId,
    decision: Decision,
    now: i64,
) -> Result<ConfirmationRow> {
    on_pool!(store, |pool| {
        let (status, scope) = match decision {
            Decision::Approve(scope) => ("approved", Some(scope)),
            Decision::Deny => ("denied", None),
        };
        let mut transaction = begin_write(pool).await?;
        let sql = format!(
            "UPDATE chat_confirmations SET status = $1, scope = $2, decided_at = $3 \
             WHERE id = $4 AND session_id = $5 AND status = 'pending' RETURNING {CONFIRMATION_COLUMNS}"
        );
        let updated: Option<ConfirmationRow> = sqlx::query_as(&sql)
            .bind(status)
            .bind(scope.map(ApprovalScope::as_str))
            .bind(now)
            .bind(id.to_string())
            .bind(session_id.to_string())
            .fetch_optional(&mut *transaction)
            .await?;
        let Some(row) = updated else {
            let exists: Option<String> = sqlx::query_scalar(
                "SELECT status FROM chat_confirmations WHERE id = $1 AND session_id = $2",
            )
            .bind(id.to_string())
            .bind(session_id.to_string())
            .fetch_optional(&mut *transaction)
            .await?;
            transaction.rollback().await?;
            return Err(match exists {
                Some(status) => {
                    StoreError::Conflict(format!("the confirmation is already {status}"))
                }
                None => StoreError::NotFound,
            });
        };
        let grant = match scope {
            Some(ApprovalScope::Operation) => Some(row.operation.clone()),
            Some(ApprovalScope::Session) => Some(SESSION_GRANT.to_owned()),
            _ => None,
        };
        if let Some(operation) = grant {
            sqlx::query(
                "INSERT INTO chat_grants (session_id, operation, confirmation_id, created_at) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (session_id, operation) DO NOTHING",
            )
            .bind(session_id.to_string())
            .bind(operation)
            .bind(id.to_string())
            .bind(now)
            .execute(&mut *transaction)
            .await?;
        }
        transaction.commit().await?;
        Ok(row)
    })
}

pub(super) async fn withdraw(
    store: &Store,
    session_id: SessionId,
    thread_id: Option<ThreadId>,
    now: i64,
) -> Result<u64> {
    on_pool!(store, |pool| {
        let result = sqlx::query(
            "UPDATE chat_confirmations SET status = 'denied', decided_at = $1 \
             WHERE session_id = $2 AND status IN ('pending', 'approved') AND (CAST($3 AS TEXT) IS NULL OR thread_id = $4)",
        )
        .bind(now)
        .bind(session_id.to_string())
        .bind(thread_id.map(|id| id.to_string()))
        .bind(thread_id.map(|id| id.to_string()))
        .execute(pool)
        .await?;
        Ok(result.rows_affected())
    })
}

pub(super) async fn grants(store: &Store, session_id: SessionId) -> Result<Vec<String>> {
    on_pool!(store, |pool| {
        Ok(sqlx::query_scalar(
            "SELECT operation FROM chat_grants WHERE session_id = $1 ORDER BY operation",
        )
        .bind(session_id.to_string())
        .fetch_all(pool)
        .await?)
    })
}

pub(super) async fn approved_by_hash(
    store: &Store,
    session_id: SessionId,
    hash: &OperationHash,
) -> Result<Option<ConfirmationRow>> {
    on_pool!(store, |pool| {
        let sql = format!(
            "SELECT {CONFIRMATION_COLUMNS} FROM chat_confirmations WHERE session_id = $1 AND hash = $2 AND status = 'approved' \
             ORDER BY decided_at DESC LIMIT 1"
        );
        Ok(sqlx::query_as(&sql)
            .bind(session_id.to_string())
            .bind(&hash.0)
            .fetch_optional(pool)
            .await?)
    })
}

pub(super) async fn consume(
    store: &Store,
    session_id: SessionId,
    id: ConfirmationId,
    hash: &OperationHash,
    now: i64,
) -> Result<bool> {
    on_pool!(store, |pool| {
        let consumed = sqlx::query(
            "UPDATE chat_confirmations SET status = 'consumed', consumed_at = $1 \
             WHERE id = $2 AND session_id = $3 AND hash = $4 AND status = 'approved'",
        )
        .bind(now)
        .bind(id.to_string())
        .bind(session_id.to_string())
        .bind(&hash.0)
        .execute(pool)
        .await?;
        Ok(consumed.rows_affected() == 1)
    })
}

pub(super) async fn begin_execution(
    store: &Store,
    id: ExecutionId,
    new: &NewExecution,
    hash: &OperationHash,
    now: i64,
) -> Result<bool> {
    on_pool!(store, |pool| {
        let mut transaction = begin_write(pool).await?;
        let confirmation_id = match &new.approval {
            Approval::Confirmation {
                id: confirmation_id,
            } => {
                let consumed = sqlx::query(
                    "UPDATE chat_confirmations SET status = 'consumed', consumed_at = $1 \
                     WHERE id = $2 AND session_id = $3 AND hash = $4 AND status = 'approved'",
                )
                .bind(now)
                .bind(confirmation_id.to_string())
                .bind(new.session_id.to_string())
                .bind(&hash.0)
                .execute(&mut *transaction)
                .await?;
                if consumed.rows_affected() != 1 {
                    transaction.rollback().await?;
                    return Ok(false);
                }
                Some(confirmation_id.to_string())
            }
            _ => None,
        };
        sqlx::query(
            "INSERT INTO chat_executions (id, session_id, thread_id, operation, arguments, hash, role, approval, confirmation_id, \
             status, items_total, chunks_total, error, created_at, finished_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
        )
        .bind(id.to_string())
        .bind(new.session_id.to_string())
        .bind(new.thread_id.to_string())
        .bind(&new.operation)
        .bind(new.arguments.to_string())
        .bind(&hash.0)
        .bind(new.role.as_str())
        .bind(new.approval.as_text())
        .bind(confirmation_id)
        .bind(new.status.as_str())
        .bind(stored_count(new.items_total))
        .bind(stored_count(new.chunks_total))
        .bind(new.error.as_deref())
        .bind(now)
        .bind((new.status == crate::records::chat::audit::ExecutionStatus::Refused).then_some(now))
        .execute(&mut *transaction)
        .await?;
        transaction.commit().await?;
        Ok(true)
    })
}

pub(super) async fn progress(
    store: &Store,
    id: ExecutionId,
    items_done: i64,
    chunks_done: i64,
) -> Result<()> {
    on_pool!(store, |pool| {
        sqlx::query("UPDATE chat_executions SET items_done = $1, chunks_done = $2 WHERE id = $3")
            .bind(items_done)
            .bind(chunks_done)
            .bind(id.to_string())
            .execute(pool)
            .await?;
        Ok(())
    })
}

pub(super) async fn finish(
    store: &Store,
    id: ExecutionId,
    end: &ExecutionEnd,
    item_ids: Option<&str>,
    result: Option<&str>,
    now: i64,
) -> Result<()> {
    on_pool!(store, |pool| {
        sqlx::query(
            "UPDATE chat_executions SET status = $1, items_done = $2, chunks_done = $3, item_ids = $4, result = $5, error = $6, finished_at = $7 \
             WHERE id = $8",
        )
        .bind(end.status.as_str())
        .bind(stored_count(end.items_done))
        .bind(stored_count(end.chunks_done))
        .bind(item_ids)
        .bind(result)
        .bind(end.error.as_deref())
        .bind(now)
        .bind(id.to_string())
        .execute(pool)
        .await?;
        Ok(())
    })
}

pub(super) async fn executions(store: &Store, session_id: SessionId) -> Result<Vec<ExecutionRow>> {
    on_pool!(store, |pool| {
        let sql = format!(
            "SELECT {EXECUTION_COLUMNS} FROM chat_executions WHERE session_id = $1 ORDER BY seq"
        );
        Ok(sqlx::query_as(&sql)
            .bind(session_id.to_string())
            .fetch_all(pool)
            .await?)
    })
}

pub(super) async fn shown_ids(store: &Store, thread_id: ThreadId) -> Result<Vec<(String, String)>> {
    on_pool!(store, |pool| {
        Ok(sqlx::query_as(
            "SELECT operation, item_ids FROM chat_executions \
             WHERE thread_id = $1 AND status = 'succeeded' AND role IN ('read', 'preview') AND item_ids IS NOT NULL",
        )
        .bind(thread_id.to_string())
        .fetch_all(pool)
        .await?)
    })
}
