//! A runner's writes under its lease, and the writes that end or time out a run. Each statement
//! is written once, in `$n` placeholders both engines read; what differs per engine is only how
//! a transaction starts (SQLite's `BEGIN IMMEDIATE`), the page's row lock and the `NOTIFY`
//! ([`RunsEngine`]), and the lease bookkeeping SQLite commits unsynced (`sqlite.rs`).

use std::time::Duration;

use super::{
    duration_ms, lease_held, RunAdvance, RunRow, RunsEngine as _, StepRow, CANCELLED,
    DEADLINE_EVENTS, RUN_COLUMNS, WAIT_TIMED_OUT,
};
use crate::{
    records::run::{
        ClaimedRun, Lease, LeaseOutcome, NextRun, Run, RunId, RunStatus, RunStep, StepCompletion,
        StepRef,
    },
    Result, Store, StoreError, WritePool as _,
};

/// Runs the lease-checked run update `$update` (whose last four placeholders are the lease
/// binds), then marks step `index` with a status and an error, in one transaction.
macro_rules! leased_step_write {
    ($pool:expr, $lease:expr, $update:expr, $step:expr, $now:expr) => {{
        let mut transaction = $pool.begin_write().await?;
        let held = $update
            .bind($lease.run_id.to_string())
            .bind(&$lease.owner)
            .bind($lease.epoch)
            .bind($now)
            .execute(&mut *transaction)
            .await?;
        if held.rows_affected() != 1 {
            transaction.rollback().await?;
            return Ok(LeaseOutcome::LeaseLost);
        }
        let step: Option<(i64, &str, &str)> = $step;
        if let Some((index, step_status, error)) = step {
            sqlx::query(
                "UPDATE run_steps SET status = $1, error = $2, finished_at = $3 \
                 WHERE run_id = $4 AND step_index = $5",
            )
            .bind(step_status)
            .bind(error)
            .bind($now)
            .bind($lease.run_id.to_string())
            .bind(index)
            .execute(&mut *transaction)
            .await?;
        }
        transaction.commit().await?;
        Ok(LeaseOutcome::Committed)
    }};
}

impl Store {
    /// Claims one due run of the named workflows for `owner` until `now + lease`: a ready run
    /// whose backoff has passed, or a running run whose lease expired (its runner died).
    ///
    /// Returns `None` when nothing is due. The claim bumps the run's lease epoch, so every
    /// earlier lease on it is stale.
    ///
    /// # Errors
    /// Database failures.
    pub async fn claim_run(
        &self,
        owner: &str,
        workflows: &[String],
        lease: Duration,
        now: i64,
    ) -> Result<Option<ClaimedRun>> {
        if workflows.is_empty() {
            return Ok(None);
        }
        let expires_at = now.saturating_add(duration_ms(lease));
        let row = match self {
            Self::Sqlite(pool) => {
                super::sqlite::claim(pool, owner, workflows, expires_at, now).await?
            }
            Self::Postgres(pool) => {
                super::postgres::claim(pool, owner, workflows, expires_at, now).await?
            }
        };
        row.map(ClaimedRun::try_from).transpose()
    }

    /// Extends a lease to `now + lease`; `None` when it was lost (expired, taken over,
    /// cancelled), after which the holder must stop and write nothing.
    ///
    /// # Errors
    /// Database failures.
    pub async fn heartbeat(
        &self,
        lease: &Lease,
        duration: Duration,
        now: i64,
    ) -> Result<Option<Lease>> {
        let expires_at = now.saturating_add(duration_ms(duration));
        let sql = format!(
            "UPDATE runs SET lease_expires_at = $1 WHERE {}",
            lease_held(2)
        );
        let renewed = match self {
            Self::Sqlite(pool) => {
                super::sqlite::heartbeat(pool, &sql, lease, expires_at, now).await?
            }
            Self::Postgres(pool) => bind_renewal!(sqlx::query(&sql), lease, expires_at, now)
                .execute(pool)
                .await?
                .rows_affected(),
        } == 1;
        Ok(renewed.then(|| Lease {
            expires_at_ms: expires_at,
            ..lease.clone()
        }))
    }

    /// Records the start of an attempt at step `index` (the run's cursor): counts the attempt
    /// on the step and the run, and keeps the step's input. The input given is stored only on
    /// the first attempt; later attempts get the stored one back, so a re-run sees what the
    /// first attempt saw. Returns `None` when the lease was lost.
    ///
    /// # Errors
    /// Database failures.
    pub async fn begin_step(
        &self,
        lease: &Lease,
        index: i64,
        name: &str,
        input: &serde_json::Value,
        now: i64,
    ) -> Result<Option<RunStep>> {
        let input = input.to_string();
        let row = match self {
            Self::Sqlite(pool) => {
                super::sqlite::begin_step(pool, lease, index, name, &input, now).await?
            }
            Self::Postgres(pool) => {
                let mut transaction = pool.begin().await?;
                let row = begin_step_statements!(transaction, lease, index, name, &input, now);
                if row.is_some() {
                    transaction.commit().await?;
                } else {
                    transaction.rollback().await?;
                }
                row
            }
        };
        row.map(RunStep::try_from).transpose()
    }

    /// The step transaction: records the step's output, writes the run's new state, advances
    /// the cursor and moves the run on (keep running, wait, or succeed) — all or nothing, and
    /// only while the lease is still held.
    ///
    /// A wait on a page that was submitted before this commit makes the run ready at once.
    ///
    /// # Errors
    /// Database failures; nothing is written.
    pub async fn complete_step(
        &self,
        lease: &Lease,
        completion: &StepCompletion,
        now: i64,
    ) -> Result<LeaseOutcome> {
        let update = format!(
            "UPDATE runs SET state = $1, cursor = $14, attempts = 0, error = NULL, status = $2, \
             wait_page_id = $3, wait_deadline = $4, wait_on_timeout = $5, \
             lease_owner = CASE WHEN $6 THEN lease_owner ELSE NULL END, \
             lease_expires_at = CASE WHEN $6 THEN lease_expires_at ELSE NULL END, \
             next_attempt_at = $7, finished_at = $8, updated_at = $7 \
             WHERE {} AND cursor = $13",
            lease_held(9)
        );
        on_pool!(self, |pool| {
            let mut transaction = pool.begin_write().await?;
            // The page is read under a lock a submission also takes (SQLite's write lock, the
            // page row's on PostgreSQL): a submission that got there first is seen as
            // `submitted`, one that comes after finds the run `waiting`. Either way the run
            // cannot be left waiting on a page that was already submitted.
            let page_submitted = match &completion.next {
                NextRun::Wait(wait) => match wait.page_id {
                    Some(page_id) => {
                        let status: Option<String> = sqlx::query_scalar(&format!(
                            "SELECT status FROM pages WHERE id = $1{}",
                            pool.page_lock()
                        ))
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
            let held = sqlx::query(&update)
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
                "UPDATE run_steps SET status = 'succeeded', output = $1, error = NULL, \
                 finished_at = $2 WHERE run_id = $3 AND step_index = $4",
            )
            .bind(completion.output.to_string())
            .bind(now)
            .bind(lease.run_id.to_string())
            .bind(completion.index)
            .execute(&mut *transaction)
            .await?;
            if advance.status == RunStatus::Ready {
                pool.notify_ready(&mut transaction).await?;
            }
            transaction.commit().await?;
            Ok(LeaseOutcome::Committed)
        })
    }

    /// Records a failed attempt that will be retried: the step keeps the error, the run goes
    /// back to ready, not claimable before `next_attempt_at_ms`, and the lease is released.
    ///
    /// # Errors
    /// Database failures.
    pub async fn retry_step(
        &self,
        lease: &Lease,
        index: i64,
        error: &str,
        next_attempt_at_ms: i64,
        now: i64,
    ) -> Result<LeaseOutcome> {
        let sql = format!(
            "UPDATE runs SET status = 'ready', error = $1, next_attempt_at = $2, \
             lease_owner = NULL, lease_expires_at = NULL, updated_at = $3 \
             WHERE cursor = $4 AND {}",
            lease_held(5)
        );
        on_pool!(self, |pool| {
            let update = sqlx::query(&sql)
                .bind(error)
                .bind(next_attempt_at_ms)
                .bind(now)
                .bind(index);
            leased_step_write!(pool, lease, update, Some((index, "failed", error)), now)
        })
    }

    /// Fails the run for good, keeping the error and the step that raised it.
    ///
    /// # Errors
    /// Database failures.
    pub async fn fail_run(
        &self,
        lease: &Lease,
        step: &StepRef,
        error: &str,
        now: i64,
    ) -> Result<LeaseOutcome> {
        let sql = format!(
            "UPDATE runs SET status = 'failed', error = $1, failed_step = $2, \
             failed_step_index = $3, lease_owner = NULL, lease_expires_at = NULL, \
             finished_at = $4, updated_at = $4 WHERE {}",
            lease_held(5)
        );
        on_pool!(self, |pool| {
            let update = sqlx::query(&sql)
                .bind(error)
                .bind(&step.name)
                .bind(step.index)
                .bind(now);
            leased_step_write!(
                pool,
                lease,
                update,
                Some((step.index, "failed", error)),
                now
            )
        })
    }

    /// Marks a run succeeded whose cursor is past its last step (its last step waited).
    ///
    /// # Errors
    /// Database failures.
    pub async fn finish_run(&self, lease: &Lease, now: i64) -> Result<LeaseOutcome> {
        let sql = format!(
            "UPDATE runs SET status = 'succeeded', lease_owner = NULL, lease_expires_at = NULL, \
             finished_at = $1, updated_at = $1 WHERE {}",
            lease_held(2)
        );
        on_pool!(self, |pool| {
            let update = sqlx::query(&sql).bind(now);
            leased_step_write!(pool, lease, update, None, now)
        })
    }

    /// Gives a run back (a runner shutting down): ready at once, lease cleared; the step that
    /// was interrupted is marked failed and will run again.
    ///
    /// # Errors
    /// Database failures.
    pub async fn release_run(&self, lease: &Lease, now: i64) -> Result<LeaseOutcome> {
        let sql = format!(
            "UPDATE runs SET status = 'ready', lease_owner = NULL, lease_expires_at = NULL, \
             next_attempt_at = $1, updated_at = $1 WHERE {} RETURNING cursor",
            lease_held(2)
        );
        on_pool!(self, |pool| {
            let mut transaction = pool.begin_write().await?;
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
            pool.notify_ready(&mut transaction).await?;
            transaction.commit().await?;
            Ok(LeaseOutcome::Committed)
        })
    }

    /// Cancels a run that has not finished; a runner holding it loses its lease and commits
    /// nothing more, and it is never claimed again.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] for an unknown run; [`StoreError::Conflict`] when it already
    /// succeeded, failed or was cancelled.
    pub async fn cancel_run(&self, id: RunId, now: i64) -> Result<Run> {
        let sql = format!(
            "UPDATE runs SET status = 'cancelled', lease_owner = NULL, lease_expires_at = NULL, \
             finished_at = $1, updated_at = $1 \
             WHERE id = $2 AND status IN ('ready', 'running', 'waiting') RETURNING {RUN_COLUMNS}"
        );
        on_pool!(self, |pool| {
            let mut transaction = pool.begin_write().await?;
            let row: Option<RunRow> = sqlx::query_as(&sql)
                .bind(now)
                .bind(id.to_string())
                .fetch_optional(&mut *transaction)
                .await?;
            let Some(row) = row else {
                let status: Option<String> =
                    sqlx::query_scalar("SELECT status FROM runs WHERE id = $1")
                        .bind(id.to_string())
                        .fetch_optional(&mut *transaction)
                        .await?;
                transaction.rollback().await?;
                return Err(match status {
                    Some(status) => StoreError::Conflict(format!("run {id} is already {status}")),
                    None => StoreError::NotFound,
                });
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
            row.try_into()
        })
    }

    /// Applies the timeout of every waiting run whose deadline has passed: continue (ready),
    /// fail (naming the waiting step) or cancel. Returns how many runs it changed.
    ///
    /// A submission racing the sweep is serialized on the run row: whichever commits first
    /// wins, and the other matches nothing.
    ///
    /// # Errors
    /// Database failures.
    pub async fn expire_waits(&self, now: i64) -> Result<u64> {
        on_pool!(self, |pool| {
            let mut transaction = pool.begin_write().await?;
            // The history says which outcome the deadline had, read off the waiting step's
            // output (a `continue` carries the marker of a decline or an expiry when it stands
            // for one).
            sqlx::query(DEADLINE_EVENTS)
                .bind(now)
                .execute(&mut *transaction)
                .await?;
            let statuses: Vec<String> = sqlx::query_scalar(
                "UPDATE runs SET \
                     status = CASE wait_on_timeout WHEN 'continue' THEN 'ready' \
                         WHEN 'cancel' THEN 'cancelled' ELSE 'failed' END, \
                     error = CASE WHEN wait_on_timeout IN ('continue', 'cancel') THEN error \
                         ELSE $1 END, \
                     failed_step_index = CASE WHEN wait_on_timeout IN ('continue', 'cancel') \
                         THEN failed_step_index ELSE cursor - 1 END, \
                     failed_step = CASE WHEN wait_on_timeout IN ('continue', 'cancel') \
                         THEN failed_step \
                         ELSE (SELECT name FROM run_steps WHERE run_steps.run_id = runs.id \
                             AND run_steps.step_index = runs.cursor - 1) END, \
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
                pool.notify_ready(&mut transaction).await?;
            }
            transaction.commit().await?;
            Ok(u64::try_from(statuses.len()).unwrap_or(u64::MAX))
        })
    }
}
