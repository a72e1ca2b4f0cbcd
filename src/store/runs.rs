//! Runs: the facade, and the row type both dialects decode into.

mod postgres;
mod sqlite;

use super::{decode_json, decode_uuid, now_ms, Result, Store, StoreError};
use crate::workflow::run::{NewRun, Run, RunId, RunStatus};

#[derive(sqlx::FromRow)]
struct RunRow {
    id: String,
    workflow: String,
    status: String,
    cursor: i64,
    state: String,
    attempts: i64,
    error: Option<String>,
    created_at: i64,
    updated_at: i64,
}

impl TryFrom<RunRow> for Run {
    type Error = StoreError;

    fn try_from(row: RunRow) -> Result<Self> {
        Ok(Self {
            id: RunId(decode_uuid("runs.id", &row.id)?),
            workflow: row.workflow,
            status: RunStatus::parse(&row.status).ok_or_else(|| StoreError::Corrupt {
                column: "runs.status",
                reason: row.status.clone(),
            })?,
            cursor: row.cursor,
            state: decode_json("runs.state", &row.state)?,
            attempts: row.attempts,
            error: row.error,
            created_at_ms: row.created_at,
            updated_at_ms: row.updated_at,
        })
    }
}

impl Store {
    /// Stores a new run and returns it.
    ///
    /// # Errors
    /// Database failures.
    pub async fn create_run(&self, new_run: &NewRun) -> Result<Run> {
        let id = RunId::new();
        let now = now_ms();
        let row = match self {
            Self::Sqlite(pool) => sqlite::insert(pool, id, new_run, now).await?,
            Self::Postgres(pool) => postgres::insert(pool, id, new_run, now).await?,
        };
        row.try_into()
    }

    /// Reads a run.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when no run has this id.
    pub async fn run(&self, id: RunId) -> Result<Run> {
        let row = match self {
            Self::Sqlite(pool) => sqlite::get(pool, id).await?,
            Self::Postgres(pool) => postgres::get(pool, id).await?,
        };
        row.ok_or(StoreError::NotFound)?.try_into()
    }

    /// How many runs are in each status (for metrics and the runs page).
    ///
    /// # Errors
    /// Database failures.
    pub async fn count_runs_by_status(&self) -> Result<Vec<(RunStatus, i64)>> {
        let rows = match self {
            Self::Sqlite(pool) => sqlite::count_by_status(pool).await?,
            Self::Postgres(pool) => postgres::count_by_status(pool).await?,
        };
        rows.into_iter()
            .map(|(status, count)| {
                RunStatus::parse(&status)
                    .map(|status| (status, count))
                    .ok_or(StoreError::Corrupt {
                        column: "runs.status",
                        reason: status,
                    })
            })
            .collect()
    }
}
