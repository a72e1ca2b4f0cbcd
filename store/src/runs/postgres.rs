//! What PostgreSQL does its own way: the claim, which several processes make at once.

use sqlx::PgPool;

use super::{RunRow, RUN_COLUMNS};
use crate::Result;

pub(super) async fn claim(
    pool: &PgPool,
    owner: &str,
    workflows: &[String],
    expires_at: i64,
    now: i64,
) -> Result<Option<RunRow>> {
    // SKIP LOCKED: concurrent claimers in other processes each take a different row instead of
    // queueing behind the first; the locked row's WHERE is re-checked on its latest version.
    let sql = format!(
        "UPDATE runs SET status = 'running', lease_owner = $1, lease_expires_at = $2, \
         lease_epoch = lease_epoch + 1, updated_at = $3 \
         WHERE id = (SELECT id FROM runs \
             WHERE ((status = 'ready' AND next_attempt_at <= $3) \
                 OR (status = 'running' AND lease_expires_at <= $3)) AND workflow = ANY($4) \
             ORDER BY next_attempt_at, created_at LIMIT 1 FOR UPDATE SKIP LOCKED) \
         RETURNING {RUN_COLUMNS}"
    );
    Ok(sqlx::query_as(&sql)
        .bind(owner)
        .bind(expires_at)
        .bind(now)
        .bind(workflows)
        .fetch_optional(pool)
        .await?)
}

/// When the next run of these workflows may be claimed (the claim's condition, as a time).
pub(super) async fn claimable_at(pool: &PgPool, workflows: &[String]) -> Result<Option<i64>> {
    Ok(sqlx::query_scalar(
        "SELECT MIN(CASE WHEN status = 'ready' THEN next_attempt_at ELSE lease_expires_at END) \
         FROM runs WHERE status IN ('ready', 'running') AND workflow = ANY($1)",
    )
    .bind(workflows)
    .fetch_one(pool)
    .await?)
}
