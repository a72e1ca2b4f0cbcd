//! What SQLite does its own way: the claim (one process, so no row lock to skip) with the
//! workflow names as one JSON bind, and the lease bookkeeping (claim, renewal, step start)
//! committed unsynced (`Unsynced`): losing it in a power cut only makes a run claimable again.

use sqlx::{Connection as _, SqlitePool};

use super::{RunRow, StepRow, RUN_COLUMNS};
use crate::{records::run::Lease, Result, Unsynced};

/// `workflow` is one of a JSON array of names (one bind instead of a placeholder per name).
const WORKFLOW_IN: &str = "workflow IN (SELECT value FROM json_each($4))";

fn names_json(workflows: &[String]) -> String {
    serde_json::Value::from(workflows.to_vec()).to_string()
}

pub(super) async fn claim(
    pool: &SqlitePool,
    owner: &str,
    workflows: &[String],
    expires_at: i64,
    now: i64,
) -> Result<Option<RunRow>> {
    // One statement (SQLite takes the write lock as it starts).
    let mut unsynced = Unsynced::acquire(pool).await?;
    let sql = format!(
        "UPDATE runs SET status = 'running', lease_owner = $1, lease_expires_at = $2, \
         lease_epoch = lease_epoch + 1, updated_at = $3 \
         WHERE id = (SELECT id FROM runs \
             WHERE ((status = 'ready' AND next_attempt_at <= $3) \
                 OR (status = 'running' AND lease_expires_at <= $3)) AND {WORKFLOW_IN} \
             ORDER BY next_attempt_at, created_at LIMIT 1) \
         RETURNING {RUN_COLUMNS}"
    );
    let row = sqlx::query_as(&sql)
        .bind(owner)
        .bind(expires_at)
        .bind(now)
        .bind(names_json(workflows))
        .fetch_optional(unsynced.connection())
        .await?;
    unsynced.release().await?;
    Ok(row)
}

/// When the next run of these workflows may be claimed (the claim's condition, as a time).
pub(super) async fn claimable_at(pool: &SqlitePool, workflows: &[String]) -> Result<Option<i64>> {
    Ok(sqlx::query_scalar(
        "SELECT MIN(CASE WHEN status = 'ready' THEN next_attempt_at ELSE lease_expires_at END) \
         FROM runs WHERE status IN ('ready', 'running') \
         AND workflow IN (SELECT value FROM json_each($1))",
    )
    .bind(names_json(workflows))
    .fetch_one(pool)
    .await?)
}

/// Renews a lease with `sql` (the one renewal statement); the rows it changed.
pub(super) async fn heartbeat(
    pool: &SqlitePool,
    sql: &str,
    lease: &Lease,
    expires_at: i64,
    now: i64,
) -> Result<u64> {
    let mut unsynced = Unsynced::acquire(pool).await?;
    let done = bind_renewal!(sqlx::query(sql), lease, expires_at, now)
        .execute(unsynced.connection())
        .await?;
    unsynced.release().await?;
    Ok(done.rows_affected())
}

pub(super) async fn begin_step(
    pool: &SqlitePool,
    lease: &Lease,
    index: i64,
    name: &str,
    input: &str,
    now: i64,
) -> Result<Option<StepRow>> {
    // Unsynced: a start lost in a power cut only means the attempt is counted when it runs again.
    let mut unsynced = Unsynced::acquire(pool).await?;
    let mut transaction = unsynced.connection().begin_with("BEGIN IMMEDIATE").await?;
    let row = begin_step_statements!(transaction, lease, index, name, input, now);
    if row.is_some() {
        transaction.commit().await?;
    } else {
        transaction.rollback().await?;
    }
    unsynced.release().await?;
    Ok(row)
}
