use sqlx::{PgPool, Postgres, Transaction};
use uuid::Uuid;

use super::{
    RunAdvance, RunRow, StepRow, CANCELLED, RUNS_READY_CHANNEL, RUN_COLUMNS, STEP_COLUMNS,
    WAIT_TIMED_OUT,
};
use crate::{
    store::Result,
    workflow::run::{
        Lease, LeaseOutcome, NewRun, NextDue, NextRun, RunFilter, RunId, RunStatus, StepCompletion,
        StepRef,
    },
};

/// The run row is ours: running, same owner and epoch, lease not expired. Its four binds
/// (run id, owner, epoch, now) are numbered from `first`.
fn lease_held(first: usize) -> String {
    format!(
        "id = ${first} AND status = 'running' AND lease_owner = ${} AND lease_epoch = ${} \
         AND lease_expires_at > ${}",
        first + 1,
        first + 2,
        first + 3
    )
}

/// Wakes idle runners in every process, once for the whole transaction (DESIGN.md §10).
async fn notify_ready(transaction: &mut Transaction<'_, Postgres>) -> Result<()> {
    sqlx::query("SELECT pg_notify($1, '')")
        .bind(RUNS_READY_CHANNEL)
        .execute(&mut **transaction)
        .await?;
    Ok(())
}

pub(super) async fn insert(pool: &PgPool, id: RunId, new_run: &NewRun, now: i64) -> Result<RunRow> {
    let mut transaction = pool.begin().await?;
    let sql = format!(
        "INSERT INTO runs (id, workflow, status, cursor, state, attempts, next_attempt_at, \
         created_at, updated_at) VALUES ($1, $2, $3, 0, $4, 0, $5, $5, $5) RETURNING {RUN_COLUMNS}"
    );
    let row = sqlx::query_as(&sql)
        .bind(id.to_string())
        .bind(&new_run.workflow)
        .bind(new_run.status.as_str())
        .bind(new_run.state.to_string())
        .bind(now)
        .fetch_one(&mut *transaction)
        .await?;
    if new_run.status == RunStatus::Ready {
        notify_ready(&mut transaction).await?;
    }
    transaction.commit().await?;
    Ok(row)
}

pub(super) async fn get(pool: &PgPool, id: RunId) -> Result<Option<RunRow>> {
    let sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = $1");
    Ok(sqlx::query_as(&sql)
        .bind(id.to_string())
        .fetch_optional(pool)
        .await?)
}

pub(super) async fn count_by_status(pool: &PgPool) -> Result<Vec<(String, i64)>> {
    Ok(
        sqlx::query_as("SELECT status, COUNT(*) FROM runs GROUP BY status ORDER BY status")
            .fetch_all(pool)
            .await?,
    )
}

pub(super) async fn list(pool: &PgPool, filter: &RunFilter) -> Result<(Vec<RunRow>, i64)> {
    let condition =
        "($1::TEXT IS NULL OR status = $1::TEXT) AND ($2::TEXT IS NULL OR workflow = $2::TEXT)";
    let status = filter.status.map(|status| status.as_str());
    let sql = format!(
        "SELECT {RUN_COLUMNS} FROM runs WHERE {condition} \
         ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4"
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

pub(super) async fn steps(pool: &PgPool, id: RunId) -> Result<Vec<StepRow>> {
    let sql = format!("SELECT {STEP_COLUMNS} FROM run_steps WHERE run_id = $1 ORDER BY step_index");
    Ok(sqlx::query_as(&sql)
        .bind(id.to_string())
        .fetch_all(pool)
        .await?)
}

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

pub(super) async fn heartbeat(
    pool: &PgPool,
    lease: &Lease,
    expires_at: i64,
    now: i64,
) -> Result<bool> {
    let sql = format!(
        "UPDATE runs SET lease_expires_at = $1 WHERE {}",
        lease_held(2)
    );
    let done = sqlx::query(&sql)
        .bind(expires_at)
        .bind(lease.run_id.to_string())
        .bind(&lease.owner)
        .bind(lease.epoch)
        .bind(now)
        .execute(pool)
        .await?;
    Ok(done.rows_affected() == 1)
}

pub(super) async fn begin_step(
    pool: &PgPool,
    lease: &Lease,
    index: i64,
    name: &str,
    input: &str,
    now: i64,
) -> Result<Option<StepRow>> {
    let mut transaction = pool.begin().await?;
    let sql = format!(
        "UPDATE runs SET attempts = attempts + 1, wait_page_id = NULL, wait_deadline = NULL, \
         wait_on_timeout = NULL, updated_at = $1 WHERE {} AND cursor = $6",
        lease_held(2)
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
        return Ok(None);
    }
    let sql = format!(
        "INSERT INTO run_steps (run_id, step_index, name, status, input, attempts, started_at) \
         VALUES ($1, $2, $3, 'running', $4, 1, $5) \
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
    Ok(Some(row))
}

pub(super) async fn complete_step(
    pool: &PgPool,
    lease: &Lease,
    completion: &StepCompletion,
    now: i64,
) -> Result<LeaseOutcome> {
    let mut transaction = pool.begin().await?;
    // Lock the page row first. A submission holding it (page updated, run not yet) makes us
    // wait for its commit and then read `submitted`; a submission arriving after us waits for
    // our commit and then finds the run `waiting`. Either way the run cannot be left waiting on
    // a page that was already submitted.
    let page_submitted = match &completion.next {
        NextRun::Wait(wait) => match wait.page_id {
            Some(page_id) => {
                let status: Option<String> =
                    sqlx::query_scalar("SELECT status FROM pages WHERE id = $1 FOR SHARE")
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
        "UPDATE runs SET state = $1, cursor = $14, attempts = 0, error = NULL, status = $2, \
         wait_page_id = $3, wait_deadline = $4, wait_on_timeout = $5, \
         lease_owner = CASE WHEN $6 THEN lease_owner ELSE NULL END, \
         lease_expires_at = CASE WHEN $6 THEN lease_expires_at ELSE NULL END, \
         next_attempt_at = $7, finished_at = $8, updated_at = $7 \
         WHERE {} AND cursor = $13",
        lease_held(9)
    );
    let held = sqlx::query(&sql)
        .bind(completion.state.to_string())
        .bind(advance.status.as_str())
        .bind(
            advance
                .wait
                .and_then(|wait| wait.page_id.map(|id| id.to_string())),
        )
        .bind(advance.wait.and_then(|wait| wait.deadline_ms))
        .bind(advance.wait.map(|wait| wait.on_timeout.as_str()))
        .bind(advance.keep_lease)
        .bind(now)
        .bind(advance.finished_at)
        .bind(lease.run_id.to_string())
        .bind(&lease.owner)
        .bind(lease.epoch)
        .bind(now)
        .bind(completion.index)
        .bind(advance.cursor)
        .execute(&mut *transaction)
        .await?;
    if held.rows_affected() != 1 {
        transaction.rollback().await?;
        return Ok(LeaseOutcome::LeaseLost);
    }
    sqlx::query(
        "UPDATE run_steps SET status = 'succeeded', output = $1, error = NULL, finished_at = $2 \
         WHERE run_id = $3 AND step_index = $4",
    )
    .bind(completion.output.to_string())
    .bind(now)
    .bind(lease.run_id.to_string())
    .bind(completion.index)
    .execute(&mut *transaction)
    .await?;
    if advance.status == RunStatus::Ready {
        notify_ready(&mut transaction).await?;
    }
    transaction.commit().await?;
    Ok(LeaseOutcome::Committed)
}

/// Runs the lease-checked run update `run_update` (whose last four placeholders are the lease
/// binds), then marks step `index` with a status and an error, in one transaction.
async fn leased_step_write<'q>(
    pool: &PgPool,
    lease: &'q Lease,
    run_update: sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments>,
    step: Option<(i64, &str, &str)>,
    now: i64,
) -> Result<LeaseOutcome> {
    let mut transaction = pool.begin().await?;
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
            "UPDATE run_steps SET status = $1, error = $2, finished_at = $3 \
             WHERE run_id = $4 AND step_index = $5",
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
    pool: &PgPool,
    lease: &Lease,
    index: i64,
    error: &str,
    next_attempt_at: i64,
    now: i64,
) -> Result<LeaseOutcome> {
    let sql = format!(
        "UPDATE runs SET status = 'ready', error = $1, next_attempt_at = $2, lease_owner = NULL, \
         lease_expires_at = NULL, updated_at = $3 WHERE cursor = $4 AND {}",
        lease_held(5)
    );
    let update = sqlx::query(&sql)
        .bind(error)
        .bind(next_attempt_at)
        .bind(now)
        .bind(index);
    leased_step_write(pool, lease, update, Some((index, "failed", error)), now).await
}

pub(super) async fn fail_run(
    pool: &PgPool,
    lease: &Lease,
    step: &StepRef,
    error: &str,
    now: i64,
) -> Result<LeaseOutcome> {
    let sql = format!(
        "UPDATE runs SET status = 'failed', error = $1, failed_step = $2, failed_step_index = $3, \
         lease_owner = NULL, lease_expires_at = NULL, finished_at = $4, updated_at = $4 \
         WHERE {}",
        lease_held(5)
    );
    let update = sqlx::query(&sql)
        .bind(error)
        .bind(&step.name)
        .bind(step.index)
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

pub(super) async fn finish_run(pool: &PgPool, lease: &Lease, now: i64) -> Result<LeaseOutcome> {
    let sql = format!(
        "UPDATE runs SET status = 'succeeded', lease_owner = NULL, lease_expires_at = NULL, \
         finished_at = $1, updated_at = $1 WHERE {}",
        lease_held(2)
    );
    let update = sqlx::query(&sql).bind(now);
    leased_step_write(pool, lease, update, None, now).await
}

pub(super) async fn release_run(pool: &PgPool, lease: &Lease, now: i64) -> Result<LeaseOutcome> {
    let mut transaction = pool.begin().await?;
    let sql = format!(
        "UPDATE runs SET status = 'ready', lease_owner = NULL, lease_expires_at = NULL, \
         next_attempt_at = $1, updated_at = $1 WHERE {} RETURNING cursor",
        lease_held(2)
    );
    let cursor: Option<i64> = sqlx::query_scalar(&sql)
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
         finished_at = $1 WHERE run_id = $2 AND step_index = $3 AND status = 'running'",
    )
    .bind(now)
    .bind(lease.run_id.to_string())
    .bind(cursor)
    .execute(&mut *transaction)
    .await?;
    notify_ready(&mut transaction).await?;
    transaction.commit().await?;
    Ok(LeaseOutcome::Committed)
}

pub(super) async fn cancel(
    pool: &PgPool,
    id: RunId,
    now: i64,
) -> Result<std::result::Result<RunRow, Option<String>>> {
    let mut transaction = pool.begin().await?;
    let sql = format!(
        "UPDATE runs SET status = 'cancelled', lease_owner = NULL, lease_expires_at = NULL, \
         finished_at = $1, updated_at = $1 \
         WHERE id = $2 AND status IN ('ready', 'running', 'waiting') RETURNING {RUN_COLUMNS}"
    );
    let row: Option<RunRow> = sqlx::query_as(&sql)
        .bind(now)
        .bind(id.to_string())
        .fetch_optional(&mut *transaction)
        .await?;
    let Some(row) = row else {
        let status: Option<String> = sqlx::query_scalar("SELECT status FROM runs WHERE id = $1")
            .bind(id.to_string())
            .fetch_optional(&mut *transaction)
            .await?;
        transaction.rollback().await?;
        return Ok(Err(status));
    };
    sqlx::query(
        "UPDATE run_steps SET status = 'failed', error = $1, finished_at = $2 \
         WHERE run_id = $3 AND status = 'running'",
    )
    .bind(CANCELLED)
    .bind(now)
    .bind(id.to_string())
    .execute(&mut *transaction)
    .await?;
    transaction.commit().await?;
    Ok(Ok(row))
}

pub(super) async fn expire_waits(pool: &PgPool, now: i64) -> Result<u64> {
    let mut transaction = pool.begin().await?;
    // The history says which outcome the deadline had, read off the waiting step's output
    // (a `continue` carries the marker of a decline or an expiry when it stands for one).
    sqlx::query(super::DEADLINE_EVENTS)
        .bind(now)
        .execute(&mut *transaction)
        .await?;
    let statuses: Vec<String> = sqlx::query_scalar(
        "UPDATE runs SET \
             status = CASE wait_on_timeout WHEN 'continue' THEN 'ready' \
                 WHEN 'cancel' THEN 'cancelled' ELSE 'failed' END, \
             error = CASE WHEN wait_on_timeout IN ('continue', 'cancel') THEN error ELSE $1 END, \
             failed_step_index = CASE WHEN wait_on_timeout IN ('continue', 'cancel') \
                 THEN failed_step_index ELSE cursor - 1 END, \
             failed_step = CASE WHEN wait_on_timeout IN ('continue', 'cancel') THEN failed_step \
                 ELSE (SELECT name FROM run_steps \
                     WHERE run_steps.run_id = runs.id AND run_steps.step_index = runs.cursor - 1) \
                 END, \
             finished_at = CASE WHEN wait_on_timeout = 'continue' THEN NULL ELSE $2 END, \
             next_attempt_at = $2, updated_at = $2 \
         WHERE status = 'waiting' AND wait_deadline IS NOT NULL AND wait_deadline <= $2 \
         RETURNING status",
    )
    .bind(WAIT_TIMED_OUT)
    .bind(now)
    .fetch_all(&mut *transaction)
    .await?;
    if statuses.iter().any(|status| status == "ready") {
        notify_ready(&mut transaction).await?;
    }
    transaction.commit().await?;
    Ok(u64::try_from(statuses.len()).unwrap_or(u64::MAX))
}

pub(super) async fn next_due(pool: &PgPool, workflows: &[String]) -> Result<NextDue> {
    let claimable_at_ms: Option<i64> = sqlx::query_scalar(
        "SELECT MIN(CASE WHEN status = 'ready' THEN next_attempt_at ELSE lease_expires_at END) \
         FROM runs WHERE status IN ('ready', 'running') AND workflow = ANY($1)",
    )
    .bind(workflows)
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

pub(super) async fn submitted_response(pool: &PgPool, page_id: Uuid) -> Result<Option<String>> {
    let response: Option<Option<String>> =
        sqlx::query_scalar("SELECT response FROM pages WHERE id = $1 AND status = 'submitted'")
            .bind(page_id.to_string())
            .fetch_optional(pool)
            .await?;
    Ok(response.flatten())
}
