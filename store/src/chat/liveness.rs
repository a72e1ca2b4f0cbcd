//! Which process runs an execution, and what happens when it is gone.
//!
//! The orchestrator instance running a call owns its row (`owner`) and checkpoints it between
//! chunks and on a heartbeat (`heartbeat_at`); a stop sent from any process sets
//! `stop_requested_at`, which the owner reads at its next checkpoint, so a stop reaches the batch
//! even when the NOTIFY that also carries it is missed. A running row whose owner is gone is
//! *stale*: on PostgreSQL its heartbeat is older than the lease; on SQLite (one process by design)
//! any other instance's row is, since the process that wrote it has been replaced. A stale row is
//! marked `interrupted` by a conditional update, so exactly one process reports it. Checkpoint and
//! interrupt read the same on both engines; asking to stop and finding the stale differ by design
//! (lease vs. owner), so those two keep one statement per dialect, side by side.

use super::{ExecutionRow, EXECUTION_COLUMNS};
use crate::{
    records::chat::{
        audit::{Execution, ExecutionEnd, ExecutionId, ExecutionStatus},
        session::SessionId,
    },
    {Result, Store},
};

fn count(value: usize) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

impl Store {
    /// Claims and renews execution `id` for `owner`, recording `done` (items, chunks) when given.
    /// Returns whether the call may go on: `false` once a stop was requested for it, or when it is
    /// no longer running (another process reported it interrupted).
    ///
    /// # Errors
    /// Database failures.
    pub async fn checkpoint_execution(
        &self,
        id: ExecutionId,
        owner: &str,
        done: Option<(usize, usize)>,
        now: i64,
    ) -> Result<bool> {
        let items = done.map(|(items, _)| count(items));
        let chunks = done.map(|(_, chunks)| count(chunks));
        let row: Option<(Option<i64>,)> = on_pool!(self, |pool| {
            sqlx::query_as(
                "UPDATE chat_executions SET owner = $1, heartbeat_at = $2, \
                 items_done = COALESCE($3, items_done), chunks_done = COALESCE($4, chunks_done) \
                 WHERE id = $5 AND status = 'running' RETURNING stop_requested_at",
            )
            .bind(owner)
            .bind(now)
            .bind(items)
            .bind(chunks)
            .bind(id.to_string())
            .fetch_optional(pool)
            .await?
        });
        Ok(matches!(row, Some((None,))))
    }

    /// Asks every running execution of `session_id` to stop at its next checkpoint, whichever
    /// process runs it; returns how many were asked. On PostgreSQL only executions heard from
    /// since `alive_since` count (a stale one has nobody left to stop).
    ///
    /// # Errors
    /// Database failures.
    pub async fn request_execution_stop(
        &self,
        session_id: SessionId,
        now: i64,
        alive_since: i64,
    ) -> Result<u64> {
        let done = match self {
            Self::Sqlite(pool) => sqlx::query(
                "UPDATE chat_executions SET stop_requested_at = ? \
                     WHERE session_id = ? AND status = 'running'",
            )
            .bind(now)
            .bind(session_id.to_string())
            .execute(pool)
            .await?
            .rows_affected(),
            Self::Postgres(pool) => sqlx::query(
                "UPDATE chat_executions SET stop_requested_at = COALESCE(stop_requested_at, $1) \
                     WHERE session_id = $2 AND status = 'running' \
                     AND COALESCE(heartbeat_at, created_at) >= $3",
            )
            .bind(now)
            .bind(session_id.to_string())
            .bind(alive_since)
            .execute(pool)
            .await?
            .rows_affected(),
        };
        Ok(done)
    }

    /// Running executions whose process is gone (see the module doc): on PostgreSQL those not
    /// heard from since `alive_since`; on SQLite those not owned by `me`.
    ///
    /// # Errors
    /// Database failures, corrupt rows.
    pub async fn stale_executions(&self, me: &str, alive_since: i64) -> Result<Vec<Execution>> {
        let rows: Vec<ExecutionRow> = match self {
            Self::Sqlite(pool) => {
                let sql = format!(
                    "SELECT {EXECUTION_COLUMNS} FROM chat_executions \
                     WHERE status = 'running' AND (owner IS NULL OR owner <> ?) ORDER BY seq"
                );
                sqlx::query_as(&sql).bind(me).fetch_all(pool).await?
            }
            Self::Postgres(pool) => {
                let sql = format!(
                    "SELECT {EXECUTION_COLUMNS} FROM chat_executions \
                     WHERE status = 'running' AND COALESCE(heartbeat_at, created_at) < $1 ORDER BY seq"
                );
                sqlx::query_as(&sql)
                    .bind(alive_since)
                    .fetch_all(pool)
                    .await?
            }
        };
        rows.into_iter().map(Execution::try_from).collect()
    }

    /// Marks a stale execution `interrupted` with what is known of it; returns whether this call
    /// did (only one process does, so only one reports it).
    ///
    /// # Errors
    /// Database failures.
    pub async fn interrupt_execution(
        &self,
        id: ExecutionId,
        end: &ExecutionEnd,
        now: i64,
    ) -> Result<bool> {
        let result = end.result.as_ref().map(ToString::to_string);
        let status = ExecutionStatus::Interrupted.as_str();
        let changed = on_pool!(self, |pool| {
            sqlx::query(
                "UPDATE chat_executions SET status = $1, items_done = $2, chunks_done = $3, \
                 result = $4, error = $5, finished_at = $6 WHERE id = $7 AND status = 'running'",
            )
            .bind(status)
            .bind(count(end.items_done))
            .bind(count(end.chunks_done))
            .bind(result)
            .bind(end.error.as_deref())
            .bind(now)
            .bind(id.to_string())
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(changed == 1)
    }
}
