use sqlx::{Connection as _, SqlitePool};
use uuid::Uuid;

use super::{RunAdvance, RunRow, StepRow, CANCELLED, RUN_COLUMNS, STEP_COLUMNS, WAIT_TIMED_OUT};
use crate::{
    store::{begin_write, Result, Unsynced},
    workflow::run::{
        Lease, LeaseOutcome, NewRun, NextDue, NextRun, RunFilter, RunId, StepCompletion, StepRef,
    },
};

/// The run row is ours: running, same owner and epoch, lease not expired. Binds, in order:
/// run id, owner, epoch, now.
const LEASE_HELD: &str = "id = ? AND status = 'running' AND lease_owner = ? AND lease_epoch = ? \
     AND lease_expires_at > ?";

/// `workflow` is one of a JSON array of names (one bind instead of a placeholder per name).
const WORKFLOW_IN: &str = "workflow IN (SELECT value FROM json_each(?))";

fn names_json(workflows: &[String]) -> String {
    serde_json::Value::from(workflows.to_vec()).to_string()
}

pub(super) async fn insert(
    pool: &SqlitePool,
    id: RunId,
    new_run: &NewRun,
    now: i64,
) -> Result<RunRow> {
    let sql = format!(
        "INSERT INTO runs (id, workflow, status, cursor, state, attempts, next_attempt_at, \
         created_at, updated_at) VALUES (?, ?, ?, 0, ?, 0, ?, ?, ?) RETURNING {RUN_COLUMNS}"
    );
    Ok(sqlx::query_as(&sql)
        .bind(id.to_string())
        .bind(&new_run.workflow)
        .bind(new_run.status.as_str())
        .bind(new_run.state.to_string())
        .bind(now)
        .bind(now)
        .bind(now)
        .fetch_one(pool)
        .await?)
}

pub(super) async fn get(pool: &SqlitePool, id: RunId) -> Result<Option<RunRow>> {
    let sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?");
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

pub(super) async fn list(pool: &SqlitePool, filter: &RunFilter) -> Result<(Vec<RunRow>, i64)> {
    let condition = "(?1 IS NULL OR status = ?1) AND (?2 IS NULL OR workflow = ?2)";
    let status = filter.status.map(|status| status.as_str());
    let sql = format!(
        "SELECT {RUN_COLUMNS} FROM runs WHERE {condition} \
         ORDER BY created_at DESC, id DESC LIMIT ?3 OFFSET ?4"
    );
    let rows = sqlx::query_as(&sql)
        .bind(status)
        .bind(filter.workflow.as_deref())
        .bind(filter.limit)
        .bind(filter.offset)
        .fetch_all(pool)
        .await?;
    let total = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM runs WHERE {condition}"))
        .bind(status)
        .bind(filter.workflow.as_deref())
        .fetch_one(pool)
        .await?;
    Ok((rows, total))
}

pub(super) async fn steps(pool: &SqlitePool, id: RunId) -> Result<Vec<StepRow>> {
    let sql = format!("SELECT {STEP_COLUMNS} FROM run_steps WHERE run_id = ? ORDER BY step_index");
    Ok(sqlx::query_as(&sql)
        .bind(id.to_string())
        .fetch_all(pool)
        .await?)
}

pub(super) async fn claim(
    pool: &SqlitePool,
    owner: &str,
    workflows: &[String],
    expires_at: i64,
    now: i64,
) -> Result<Option<RunRow>> {
    // One statement (SQLite takes the write lock as it starts), unsynced: a claim lost in a
    // power cut leaves the run claimable again.
    let mut unsynced = Unsynced::acquire(pool).await?;
    let sql = format!(
        "UPDATE runs SET status = 'running', lease_owner = ?, lease_expires_at = ?, \
         lease_epoch = lease_epoch + 1, updated_at = ? \
         WHERE id = (SELECT id FROM runs \
             WHERE ((status = 'ready' AND next_attempt_at <= ?) \
                 OR (status = 'running' AND lease_expires_at <= ?)) AND {WORKFLOW_IN} \
             ORDER BY next_attempt_at, created_at LIMIT 1) \
         RETURNING {RUN_COLUMNS}"
    );
    let row = sqlx::query_as(&sql)
        .bind(owner)
        .bind(expires_at)
        .bind(now)
        .bind(now)
        .bind(now)
        .bind(names_json(workflows))
        .fetch_optional(unsynced.connection())
        .await?;
    unsynced.release().await?;
    Ok(row)
}

pub(super) async fn heartbeat(
    pool: &SqlitePool,
    lease: &Lease,
    expires_at: i64,
    now: i64,
) -> Result<bool> {
    let mut unsynced = Unsynced::acquire(pool).await?;
    let sql = format!("UPDATE runs SET lease_expires_at = ? WHERE {LEASE_HELD}");
    let done = sqlx::query(&sql)
        .bind(expires_at)
        .bind(lease.run_id.to_string())
        .bind(&lease.owner)
        .bind(lease.epoch)
        .bind(now)
        .execute(unsynced.connection())
        .await?;
    unsynced.release().await?;
    Ok(done.rows_affected() == 1)
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
    let sql = format!(
        "UPDATE runs SET attempts = attempts + 1, wait_page_id = NULL, wait_deadline = NULL, \
         wait_on_timeout = NULL, updated_at = ? WHERE {LEASE_HELD} AND cursor = ?"
    );
    let held = sqlx::query(&sql)
        .bind(now)
        .bind(lease.run_id.to_string())
        .bind(&lease.owner)
        .bind(lease.epoch)
        .bind(now)
        .bind(index)
        .execute(&mut *transaction)
        .await?;
    if held.rows_affected() != 1 {
        transaction.rollback().await?;
        unsynced.release().await?;
        return Ok(None);
    }
    let sql = format!(
        "INSERT INTO run_steps (run_id, step_index, name, status, input, attempts, started_at) \
         VALUES (?, ?, ?, 'running', ?, 1, ?) \
         ON CONFLICT (run_id, step_index) DO UPDATE SET status = 'running', \
             attempts = run_steps.attempts + 1, started_at = excluded.started_at, \
             finished_at = NULL, input = COALESCE(run_steps.input, excluded.input) \
         RETURNING {STEP_COLUMNS}"
    );
    let row = sqlx::query_as(&sql)
        .bind(lease.run_id.to_string())
        .bind(index)
        .bind(name)
        .bind(input)
        .bind(now)
        .fetch_one(&mut *transaction)
        .await?;
    transaction.commit().await?;
    unsynced.release().await?;
    Ok(Some(row))
}

pub(super) async fn complete_step(
    pool: &SqlitePool,
    lease: &Lease,
    completion: &StepCompletion,
    now: i64,
) -> Result<LeaseOutcome> {
    let mut transaction = begin_write(pool).await?;
    // BEGIN IMMEDIATE holds the write lock, so no submission can slip between this read and
    // the update below.
    let page_submitted = match &completion.next {
        NextRun::Wait(wait) => match wait.page_id {
            Some(page_id) => {
                let status: Option<String> =
                    sqlx::query_scalar("SELECT status FROM pages WHERE id = ?")
                        .bind(page_id.to_string())
                        .fetch_optional(&mut *transaction)
                        .await?;
                status.as_deref() == Some("submitted")
            }
            None => false,
        },
        _ => false,
    };
    let advance = RunAdvance::plan(completion, page_submitted, now);
    let sql = format!(
        "UPDATE runs SET state = ?, cursor = ?, attempts = 0, error = NULL, status = ?, \
         wait_page_id = ?, wait_deadline = ?, wait_on_timeout = ?, \
         lease_owner = CASE WHEN ? THEN lease_owner ELSE NULL END, \
         lease_expires_at = CASE WHEN ? THEN lease_expires_at ELSE NULL END, \
         next_attempt_at = ?, finished_at = ?, updated_at = ? \
         WHERE {LEASE_HELD} AND cursor = ?"
    );
    let held = sqlx::query(&sql)
        .bind(completion.state.to_string())
        .bind(advance.cursor)
        .bind(advance.status.as_str())
        .bind(
            advance
                .wait
                .and_then(|wait| wait.page_id.map(|id| id.to_string())),
        )
        .bind(advance.wait.and_then(|wait| wait.deadline_ms))
        .bind(advance.wait.map(|wait| wait.on_timeout.as_str()))
        .bind(advance.keep_lease)
        .bind(advance.keep_lease)
        .bind(now)
        .bind(advance.finished_at)
        .bind(now)
        .bind(lease.run_id.to_string())
        .bind(&lease.owner)
        .bind(lease.epoch)
        .bind(now)
        .bind(completion.index)
        .execute(&mut *transaction)
        .await?;
    if held.rows_affected() != 1 {
        transaction.rollback().await?;
        return Ok(LeaseOutcome::LeaseLost);
    }
    sqlx::query(
        "UPDATE run_steps SET status = 'succeeded', output = ?, error = NULL, finished_at = ? \
         WHERE run_id = ? AND step_index = ?",
    )
    .bind(completion.output.to_string())
    .bind(now)
    .bind(lease.run_id.to_string())
    .bind(completion.index)
    .execute(&mut *transaction)
    .await?;
    transaction.commit().await?;
    Ok(LeaseOutcome::Committed)
}

/// Runs the lease-checked run update `sql` (whose binds end with the [`LEASE_HELD`] binds),
/// then marks step `index` with `step_status` and `error`, in one transaction.
async fn leased_step_write<'q>(
    pool: &SqlitePool,
    lease: &'q Lease,
    run_update: sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>>,
    step: Option<(i64, &str, &str)>,
    now: i64,
) -> Result<LeaseOutcome> {
    let mut transaction = begin_write(pool).await?;
    let held = run_update
        .bind(lease.run_id.to_string())
        .bind(&lease.owner)
        .bind(lease.epoch)
        .bind(now)
        .execute(&mut *transaction)
        .await?;
    if held.rows_affected() != 1 {
        transaction.rollback().await?;
        return Ok(LeaseOutcome::LeaseLost);
    }
    if let Some((index, step_status, error)) = step {
        sqlx::query(
            "UPDATE run_steps SET status = ?, error = ?, finished_at = ? \
             WHERE run_id = ? AND step_index = ?",
        )
        .bind(step_status)
        .bind(error)
        .bind(now)
        .bind(lease.run_id.to_string())
        .bind(index)
        .execute(&mut *transaction)
        .await?;
    }
    transaction.commit().await?;
    Ok(LeaseOutcome::Committed)
}

pub(super) async fn retry_step(
    pool: &SqlitePool,
    lease: &Lease,
    index: i64,
    error: &str,
    next_attempt_at: i64,
    now: i64,
) -> Result<LeaseOutcome> {
    let sql = format!(
        "UPDATE runs SET status = 'ready', error = ?, next_attempt_at = ?, lease_owner = NULL, \
         lease_expires_at = NULL, updated_at = ? WHERE cursor = ? AND {LEASE_HELD}"
    );
    let update = sqlx::query(&sql)
        .bind(error)
        .bind(next_attempt_at)
        .bind(now)
        .bind(index);
    leased_step_write(pool, lease, update, Some((index, "failed", error)), now).await
}

pub(super) async fn fail_run(
    pool: &SqlitePool,
    lease: &Lease,
    step: &StepRef,
    error: &str,
    now: i64,
) -> Result<LeaseOutcome> {
    let sql = format!(
        "UPDATE runs SET status = 'failed', error = ?, failed_step = ?, failed_step_index = ?, \
         lease_owner = NULL, lease_expires_at = NULL, finished_at = ?, updated_at = ? \
         WHERE {LEASE_HELD}"
    );
    let update = sqlx::query(&sql)
        .bind(error)
        .bind(&step.name)
        .bind(step.index)
        .bind(now)
        .bind(now);
    leased_step_write(
        pool,
        lease,
        update,
        Some((step.index, "failed", error)),
        now,
    )
    .await
}

pub(super) async fn finish_run(pool: &SqlitePool, lease: &Lease, now: i64) -> Result<LeaseOutcome> {
    let sql = format!(
        "UPDATE runs SET status = 'succeeded', lease_owner = NULL, lease_expires_at = NULL, \
         finished_at = ?, updated_at = ? WHERE {LEASE_HELD}"
    );
    let update = sqlx::query(&sql).bind(now).bind(now);
    leased_step_write(pool, lease, update, None, now).await
}

pub(super) async fn release_run(
    pool: &SqlitePool,
    lease: &Lease,
    now: i64,
) -> Result<LeaseOutcome> {
    let mut transaction = begin_write(pool).await?;
    let sql = format!(
        "UPDATE runs SET status = 'ready', lease_owner = NULL, lease_expires_at = NULL, \
         next_attempt_at = ?, updated_at = ? WHERE {LEASE_HELD} RETURNING cursor"
    );
    let cursor: Option<i64> = sqlx::query_scalar(&sql)
        .bind(now)
        .bind(now)
        .bind(lease.run_id.to_string())
        .bind(&lease.owner)
        .bind(lease.epoch)
        .bind(now)
        .fetch_optional(&mut *transaction)
        .await?;
    let Some(cursor) = cursor else {
        transaction.rollback().await?;
        return Ok(LeaseOutcome::LeaseLost);
    };
    sqlx::query(
        "UPDATE run_steps SET status = 'failed', error = 'interrupted: the runner stopped', \
         finished_at = ? WHERE run_id = ? AND step_index = ? AND status = 'running'",
    )
    .bind(now)
    .bind(lease.run_id.to_string())
    .bind(cursor)
    .execute(&mut *transaction)
    .await?;
    transaction.commit().await?;
    Ok(LeaseOutcome::Committed)
}

pub(super) async fn cancel(
    pool: &SqlitePool,
    id: RunId,
    now: i64,
) -> Result<std::result::Result<RunRow, Option<String>>> {
    let mut transaction = begin_write(pool).await?;
    let sql = format!(
        "UPDATE runs SET status = 'cancelled', lease_owner = NULL, lease_expires_at = NULL, \
         finished_at = ?, updated_at = ? \
         WHERE id = ? AND status IN ('ready', 'running', 'waiting') RETURNING {RUN_COLUMNS}"
    );
    let row: Option<RunRow> = sqlx::query_as(&sql)
        .bind(now)
        .bind(now)
        .bind(id.to_string())
        .fetch_optional(&mut *transaction)
        .await?;
    let Some(row) = row else {
        let status: Option<String> = sqlx::query_scalar("SELECT status FROM runs WHERE id = ?")
            .bind(id.to_string())
            .fetch_optional(&mut *transaction)
            .await?;
        transaction.rollback().await?;
        return Ok(Err(status));
    };
    sqlx::query(
        "UPDATE run_steps SET status = 'failed', error = ?, finished_at = ? \
         WHERE run_id = ? AND status = 'running'",
    )
    .bind(CANCELLED)
    .bind(now)
    .bind(id.to_string())
    .execute(&mut *transaction)
    .await?;
    transaction.commit().await?;
    Ok(Ok(row))
}

pub(super) async fn expire_waits(pool: &SqlitePool, now: i64) -> Result<u64> {
    let mut transaction = super::super::begin_write(pool).await?;
    // The history says which outcome the deadline had, read off the waiting step's output
    // (a `continue` carries the marker of a decline or an expiry when it stands for one).
    sqlx::query(super::DEADLINE_EVENTS)
        .bind(now)
        .execute(&mut *transaction)
        .await?;
    let done = sqlx::query(
        "UPDATE runs SET \
             status = CASE wait_on_timeout WHEN 'continue' THEN 'ready' \
                 WHEN 'cancel' THEN 'cancelled' ELSE 'failed' END, \
             error = CASE WHEN wait_on_timeout IN ('continue', 'cancel') THEN error ELSE ?1 END, \
             failed_step_index = CASE WHEN wait_on_timeout IN ('continue', 'cancel') \
                 THEN failed_step_index ELSE cursor - 1 END, \
             failed_step = CASE WHEN wait_on_timeout IN ('continue', 'cancel') THEN failed_step \
                 ELSE (SELECT name FROM run_steps \
                     WHERE run_steps.run_id = runs.id AND run_steps.step_index = runs.cursor - 1) \
                 END, \
             finished_at = CASE WHEN wait_on_timeout = 'continue' THEN NULL ELSE ?2 END, \
             next_attempt_at = ?2, updated_at = ?2 \
         WHERE status = 'waiting' AND wait_deadline IS NOT NULL AND wait_deadline <= ?2",
    )
    .bind(WAIT_TIMED_OUT)
    .bind(now)
    .execute(&mut *transaction)
    .await?;
    transaction.commit().await?;
    Ok(done.rows_affected())
}

pub(super) async fn next_due(pool: &SqlitePool, workflows: &[String]) -> Result<NextDue> {
    let claimable_at_ms: Option<i64> = sqlx::query_scalar(&format!(
        "SELECT MIN(CASE WHEN status = 'ready' THEN next_attempt_at ELSE lease_expires_at END) \
         FROM runs WHERE status IN ('ready', 'running') AND {WORKFLOW_IN}"
    ))
    .bind(names_json(workflows))
    .fetch_one(pool)
    .await?;
    let wait_deadline_ms: Option<i64> = sqlx::query_scalar(
        "SELECT MIN(wait_deadline) FROM runs WHERE status = 'waiting' AND wait_deadline IS NOT NULL",
    )
    .fetch_one(pool)
    .await?;
    Ok(NextDue {
        claimable_at_ms,
        wait_deadline_ms,
    })
}

pub(super) async fn submitted_response(pool: &SqlitePool, page_id: Uuid) -> Result<Option<String>> {
    let response: Option<Option<String>> =
        sqlx::query_scalar("SELECT response FROM pages WHERE id = ? AND status = 'submitted'")
            .bind(page_id.to_string())
            .fetch_optional(pool)
            .await?;
    Ok(response.flatten())
}
