use sqlx::SqlitePool;

use super::RunRow;
use crate::{
    store::Result,
    workflow::run::{NewRun, RunId},
};

const COLUMNS: &str =
    "id, workflow, status, cursor, state, attempts, error, created_at, updated_at";

pub(super) async fn insert(
    pool: &SqlitePool,
    id: RunId,
    new_run: &NewRun,
    now: i64,
) -> Result<RunRow> {
    let sql = format!(
        "INSERT INTO runs (id, workflow, status, cursor, state, attempts, created_at, updated_at) \
         VALUES (?, ?, ?, 0, ?, 0, ?, ?) RETURNING {COLUMNS}"
    );
    Ok(sqlx::query_as(&sql)
        .bind(id.to_string())
        .bind(&new_run.workflow)
        .bind(new_run.status.as_str())
        .bind(new_run.state.to_string())
        .bind(now)
        .bind(now)
        .fetch_one(pool)
        .await?)
}

pub(super) async fn get(pool: &SqlitePool, id: RunId) -> Result<Option<RunRow>> {
    let sql = format!("SELECT {COLUMNS} FROM runs WHERE id = ?");
    Ok(sqlx::query_as(&sql)
        .bind(id.to_string())
        .fetch_optional(pool)
        .await?)
}

pub(super) async fn count_by_status(pool: &SqlitePool) -> Result<Vec<(String, i64)>> {
    Ok(
        sqlx::query_as("SELECT status, COUNT(*) FROM runs GROUP BY status ORDER BY status")
            .fetch_all(pool)
            .await?,
    )
}
