//! Creating and reading runs: one statement each, the same text on both engines.

use uuid::Uuid;

use super::{
    decode_json, now_ms, RunRow, RunsEngine as _, StepRow, MAX_LIST_LIMIT, RUN_COLUMNS,
    STEP_COLUMNS,
};
use crate::{
    records::run::{NewRun, NextDue, Run, RunFilter, RunId, RunList, RunStatus, RunStep},
    Result, Store, StoreError, WritePool as _,
};

impl Store {
    /// Stores a new run and returns it (on PostgreSQL, a ready run also wakes idle runners).
    ///
    /// # Errors
    /// Database failures.
    pub async fn create_run(&self, new_run: &NewRun) -> Result<Run> {
        let id = RunId::new();
        let now = now_ms();
        let sql = format!(
            "INSERT INTO runs (id, workflow, status, cursor, state, attempts, next_attempt_at, \
             created_at, updated_at) VALUES ($1, $2, $3, 0, $4, 0, $5, $5, $5) \
             RETURNING {RUN_COLUMNS}"
        );
        let row: RunRow = on_pool!(self, |pool| {
            let mut transaction = pool.begin_write().await?;
            let row = sqlx::query_as(&sql)
                .bind(id.to_string())
                .bind(&new_run.workflow)
                .bind(new_run.status.as_str())
                .bind(new_run.state.to_string())
                .bind(now)
                .fetch_one(&mut *transaction)
                .await?;
            if new_run.status == RunStatus::Ready {
                pool.notify_ready(&mut transaction).await?;
            }
            transaction.commit().await?;
            row
        });
        row.try_into()
    }

    /// Records the digest of the declarative workflow file run `id` starts on.
    ///
    /// # Errors
    /// Database failures.
    pub async fn set_run_definition_digest(&self, id: RunId, digest: &str) -> Result<()> {
        on_pool!(self, |pool| {
            sqlx::query("UPDATE runs SET definition_digest = $1 WHERE id = $2")
                .bind(digest)
                .bind(id.to_string())
                .execute(pool)
                .await
                .map(drop)?;
        });
        Ok(())
    }

    /// Reads a run.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when no run has this id.
    pub async fn run(&self, id: RunId) -> Result<Run> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = $1");
        let row: Option<RunRow> = on_pool!(self, |pool| {
            sqlx::query_as(&sql)
                .bind(id.to_string())
                .fetch_optional(pool)
                .await?
        });
        row.ok_or(StoreError::NotFound)?.try_into()
    }

    /// How many runs are in each status (for metrics and the runs page).
    ///
    /// # Errors
    /// Database failures.
    pub async fn count_runs_by_status(&self) -> Result<Vec<(RunStatus, i64)>> {
        let rows: Vec<(String, i64)> = on_pool!(self, |pool| {
            sqlx::query_as("SELECT status, COUNT(*) FROM runs GROUP BY status ORDER BY status")
                .fetch_all(pool)
                .await?
        });
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

    /// One page of runs, newest first, with the total matching the filter.
    ///
    /// # Errors
    /// Database failures.
    pub async fn list_runs(&self, filter: &RunFilter) -> Result<RunList> {
        let limit = filter.limit.clamp(1, MAX_LIST_LIMIT);
        let offset = filter.offset.max(0);
        let condition = "(CAST($1 AS TEXT) IS NULL OR status = $1) \
             AND (CAST($2 AS TEXT) IS NULL OR workflow = $2)";
        let status = filter.status.map(|status| status.as_str());
        let workflow = filter.workflow.as_deref();
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE {condition} \
             ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4"
        );
        let count = format!("SELECT COUNT(*) FROM runs WHERE {condition}");
        let (rows, total): (Vec<RunRow>, i64) = on_pool!(self, |pool| {
            let rows = sqlx::query_as(&sql)
                .bind(status)
                .bind(workflow)
                .bind(limit)
                .bind(offset)
                .fetch_all(pool)
                .await?;
            let total = sqlx::query_scalar(&count)
                .bind(status)
                .bind(workflow)
                .fetch_one(pool)
                .await?;
            (rows, total)
        });
        Ok(RunList {
            runs: rows.into_iter().map(Run::try_from).collect::<Result<_>>()?,
            total,
        })
    }

    /// Every recorded step of a run, in workflow order (steps not yet started have no row).
    ///
    /// # Errors
    /// Database failures; an unknown run has no steps.
    pub async fn run_steps(&self, id: RunId) -> Result<Vec<RunStep>> {
        let sql =
            format!("SELECT {STEP_COLUMNS} FROM run_steps WHERE run_id = $1 ORDER BY step_index");
        let rows: Vec<StepRow> = on_pool!(self, |pool| {
            sqlx::query_as(&sql)
                .bind(id.to_string())
                .fetch_all(pool)
                .await?
        });
        rows.into_iter().map(RunStep::try_from).collect()
    }

    /// When a runner of these workflows next has something to do.
    ///
    /// # Errors
    /// Database failures.
    pub async fn next_due(&self, workflows: &[String]) -> Result<NextDue> {
        let claimable_at_ms = match self {
            Self::Sqlite(pool) => super::sqlite::claimable_at(pool, workflows).await?,
            Self::Postgres(pool) => super::postgres::claimable_at(pool, workflows).await?,
        };
        let wait_deadline_ms: Option<i64> = on_pool!(self, |pool| {
            sqlx::query_scalar(
                "SELECT MIN(wait_deadline) FROM runs \
                 WHERE status = 'waiting' AND wait_deadline IS NOT NULL",
            )
            .fetch_one(pool)
            .await?
        });
        Ok(NextDue {
            claimable_at_ms,
            wait_deadline_ms,
        })
    }

    /// The response stored on a submitted page; `None` while it is not submitted (or unknown).
    ///
    /// # Errors
    /// Database failures; [`StoreError::Corrupt`] for an unreadable response.
    pub async fn submitted_response(&self, page_id: Uuid) -> Result<Option<serde_json::Value>> {
        let text: Option<Option<String>> = on_pool!(self, |pool| {
            sqlx::query_scalar("SELECT response FROM pages WHERE id = $1 AND status = 'submitted'")
                .bind(page_id.to_string())
                .fetch_optional(pool)
                .await?
        });
        text.flatten()
            .as_deref()
            .map(|text| decode_json("pages.response", text))
            .transpose()
    }
}
