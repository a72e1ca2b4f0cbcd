//! Runs: the facade, and the row types both dialects decode into.
//!
//! A run is driven by a runner holding a [`Lease`] (owner, fencing epoch, expiry). Every write a
//! runner makes is one transaction that first re-checks the whole lease on the run row, so a
//! runner whose lease expired or was taken over commits nothing ([`LeaseOutcome::LeaseLost`]).
//! The step transaction ([`Store::complete_step`]) records the step's output, writes the run's
//! new state and advances the cursor together: a finished step is never run again, and a step
//! that was under way when its runner died is run again by the next claimer.
//!
//! Claiming: PostgreSQL picks one due run with `FOR UPDATE SKIP LOCKED` inside an
//! `UPDATE … RETURNING`, so several processes share the work; SQLite runs the conditional
//! `UPDATE … RETURNING` as one statement, which takes the write lock as it starts (one
//! process), committed unsynced. On PostgreSQL every
//! transaction that makes a run ready sends one `NOTIFY` on [`RUNS_READY_CHANNEL`] (once per
//! transaction, never per row: DESIGN.md §10) so idle runners wake at once.
//!
//! A run waiting on a page is made ready by the pages store's submission statement (its trigger
//! sends the same single `NOTIFY`); this module reads the `pages` table only to decide, under
//! the page row's lock, whether a page was submitted before its run started waiting, and to read
//! a submitted page's response.

/// Binds a lease renewal's values to `$query` (`UPDATE runs SET lease_expires_at = $1 WHERE`
/// [`lease_held`]`(2)`), for whichever engine runs it.
macro_rules! bind_renewal {
    ($query:expr, $lease:expr, $expires_at:expr, $now:expr) => {
        $query
            .bind($expires_at)
            .bind($lease.run_id.to_string())
            .bind(&$lease.owner)
            .bind($lease.epoch)
            .bind($now)
    };
}

/// The start of an attempt at a step, inside `$transaction`: counts the attempt on the run
/// while the lease is held, then upserts the step row. `None` (nothing written) when the lease
/// was lost; the caller commits or rolls back.
macro_rules! begin_step_statements {
    ($transaction:expr, $lease:expr, $index:expr, $name:expr, $input:expr, $now:expr) => {{
        let held = sqlx::query(&format!(
            "UPDATE runs SET attempts = attempts + 1, wait_page_id = NULL, wait_deadline = NULL, \
             wait_on_timeout = NULL, updated_at = $1 WHERE {} AND cursor = $6",
            $crate::runs::lease_held(2)
        ))
        .bind($now)
        .bind($lease.run_id.to_string())
        .bind(&$lease.owner)
        .bind($lease.epoch)
        .bind($now)
        .bind($index)
        .execute(&mut *$transaction)
        .await?;
        if held.rows_affected() == 1 {
            let row: StepRow = sqlx::query_as(&format!(
                "INSERT INTO run_steps (run_id, step_index, name, status, input, attempts, \
                 started_at) VALUES ($1, $2, $3, 'running', $4, 1, $5) \
                 ON CONFLICT (run_id, step_index) DO UPDATE SET status = 'running', \
                     attempts = run_steps.attempts + 1, started_at = excluded.started_at, \
                     finished_at = NULL, input = COALESCE(run_steps.input, excluded.input) \
                 RETURNING {}",
                $crate::runs::STEP_COLUMNS
            ))
            .bind($lease.run_id.to_string())
            .bind($index)
            .bind($name)
            .bind($input)
            .bind($now)
            .fetch_one(&mut *$transaction)
            .await?;
            Some(row)
        } else {
            None
        }
    }};
}

mod lease;
mod postgres;
mod reads;
mod sqlite;
mod wakeups;

pub use wakeups::RunsWakeup;

use std::time::Duration;

use sqlx::{PgPool, SqlitePool, Transaction};

use super::{decode_json, decode_parsed, decode_uuid, now_ms, Result, StoreError};
use crate::records::run::{
    ClaimedRun, Lease, Run, RunId, RunStatus, RunStep, StepCompletion, StepRef, StepStatus,
    TimeoutAction, WaitInfo,
};

/// What a run's writes do differently on each engine, besides how a write transaction starts
/// (`WritePool`).
trait RunsEngine {
    /// The engine's driver.
    type Db: sqlx::Database;

    /// Wakes idle runners in every process once the transaction commits, once for the whole
    /// transaction (DESIGN.md §10): a `NOTIFY` on PostgreSQL; nothing on SQLite, whose one
    /// process wakes its runners itself.
    fn notify_ready(
        &self,
        transaction: &mut Transaction<'static, Self::Db>,
    ) -> impl std::future::Future<Output = Result<()>> + Send;

    /// The row lock a step's completion reads its page under, written after the statement:
    /// `FOR SHARE` on PostgreSQL; none on SQLite, whose write lock the transaction already holds.
    fn page_lock(&self) -> &'static str;
}

impl RunsEngine for SqlitePool {
    type Db = sqlx::Sqlite;

    async fn notify_ready(
        &self,
        _transaction: &mut Transaction<'static, sqlx::Sqlite>,
    ) -> Result<()> {
        Ok(())
    }

    fn page_lock(&self) -> &'static str {
        ""
    }
}

impl RunsEngine for PgPool {
    type Db = sqlx::Postgres;

    async fn notify_ready(
        &self,
        transaction: &mut Transaction<'static, sqlx::Postgres>,
    ) -> Result<()> {
        sqlx::query("SELECT pg_notify($1, '')")
            .bind(RUNS_READY_CHANNEL)
            .execute(&mut **transaction)
            .await?;
        Ok(())
    }

    fn page_lock(&self) -> &'static str {
        " FOR SHARE"
    }
}

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

/// The PostgreSQL `LISTEN`/`NOTIFY` channel that says "a run may be ready to claim".
pub const RUNS_READY_CHANNEL: &str = "tessera_runs_ready";

/// The error kept on a run whose wait timed out with `OnTimeout::Fail`.
pub const WAIT_TIMED_OUT: &str = "timed out waiting for a response";

/// The error kept on a step that was under way when its run was cancelled.
const CANCELLED: &str = "cancelled";

/// The largest page of the runs list.
const MAX_LIST_LIMIT: i64 = 500;

const RUN_COLUMNS: &str = "id, workflow, status, cursor, state, attempts, error, failed_step, \
     failed_step_index, wait_page_id, wait_deadline, wait_on_timeout, lease_owner, \
     lease_expires_at, lease_epoch, next_attempt_at, created_at, updated_at, finished_at, \
     definition_digest";

const STEP_COLUMNS: &str =
    "run_id, step_index, name, status, input, output, error, attempts, started_at, finished_at";

#[derive(sqlx::FromRow)]
struct RunRow {
    id: String,
    workflow: String,
    status: String,
    cursor: i64,
    state: String,
    attempts: i64,
    error: Option<String>,
    failed_step: Option<String>,
    failed_step_index: Option<i64>,
    wait_page_id: Option<String>,
    wait_deadline: Option<i64>,
    wait_on_timeout: Option<String>,
    lease_owner: Option<String>,
    lease_expires_at: Option<i64>,
    lease_epoch: i64,
    next_attempt_at: i64,
    created_at: i64,
    updated_at: i64,
    finished_at: Option<i64>,
    definition_digest: Option<String>,
}

impl TryFrom<RunRow> for Run {
    type Error = StoreError;

    fn try_from(row: RunRow) -> Result<Self> {
        let status = decode_parsed("runs.status", &row.status, RunStatus::parse)?;
        let waiting = if status == RunStatus::Waiting {
            Some(WaitInfo {
                page_id: row
                    .wait_page_id
                    .as_deref()
                    .map(|id| decode_uuid("runs.wait_page_id", id))
                    .transpose()?,
                deadline_ms: row.wait_deadline,
                on_timeout: row
                    .wait_on_timeout
                    .as_deref()
                    .map(|action| {
                        decode_parsed("runs.wait_on_timeout", action, TimeoutAction::parse)
                    })
                    .transpose()?
                    .unwrap_or(TimeoutAction::Fail),
            })
        } else {
            None
        };
        let failed_step = match (row.failed_step_index, row.failed_step) {
            (Some(index), Some(name)) => Some(StepRef { index, name }),
            _ => None,
        };
        let leased = status == RunStatus::Running;
        Ok(Self {
            id: RunId(decode_uuid("runs.id", &row.id)?),
            workflow: row.workflow,
            status,
            cursor: row.cursor,
            state: decode_json("runs.state", &row.state)?,
            attempts: row.attempts,
            error: row.error,
            failed_step,
            waiting,
            lease_owner: row.lease_owner.filter(|_| leased),
            lease_expires_at_ms: row.lease_expires_at.filter(|_| leased),
            next_attempt_at_ms: row.next_attempt_at,
            created_at_ms: row.created_at,
            updated_at_ms: row.updated_at,
            finished_at_ms: row.finished_at,
            definition_digest: row.definition_digest,
        })
    }
}

impl TryFrom<RunRow> for ClaimedRun {
    type Error = StoreError;

    fn try_from(row: RunRow) -> Result<Self> {
        let owner = row.lease_owner.clone().ok_or(StoreError::Corrupt {
            column: "runs.lease_owner",
            reason: "a claimed run has no lease owner".into(),
        })?;
        let expires_at_ms = row.lease_expires_at.ok_or(StoreError::Corrupt {
            column: "runs.lease_expires_at",
            reason: "a claimed run has no lease expiry".into(),
        })?;
        let epoch = row.lease_epoch;
        let run = Run::try_from(row)?;
        Ok(Self {
            lease: Lease {
                run_id: run.id,
                owner,
                epoch,
                expires_at_ms,
            },
            run,
        })
    }
}

#[derive(sqlx::FromRow)]
struct StepRow {
    run_id: String,
    step_index: i64,
    name: String,
    status: String,
    input: Option<String>,
    output: Option<String>,
    error: Option<String>,
    attempts: i64,
    started_at: i64,
    finished_at: Option<i64>,
}

impl TryFrom<StepRow> for RunStep {
    type Error = StoreError;

    fn try_from(row: StepRow) -> Result<Self> {
        Ok(Self {
            run_id: RunId(decode_uuid("run_steps.run_id", &row.run_id)?),
            index: row.step_index,
            name: row.name,
            status: decode_parsed("run_steps.status", &row.status, StepStatus::parse)?,
            input: row
                .input
                .as_deref()
                .map(|input| decode_json("run_steps.input", input))
                .transpose()?,
            output: row
                .output
                .as_deref()
                .map(|output| decode_json("run_steps.output", output))
                .transpose()?,
            error: row.error,
            attempts: row.attempts,
            started_at_ms: row.started_at,
            finished_at_ms: row.finished_at,
        })
    }
}

/// What the step transaction writes on the run row, decided from the [`StepCompletion`] (and,
/// for a wait, from whether its page was already submitted).
struct RunAdvance<'a> {
    status: RunStatus,
    /// The run's next cursor: the next step, or a jump's target.
    cursor: i64,
    keep_lease: bool,
    wait: Option<&'a WaitInfo>,
    finished_at: Option<i64>,
}

impl<'a> RunAdvance<'a> {
    fn plan(completion: &'a StepCompletion, page_already_submitted: bool, now: i64) -> Self {
        use crate::records::run::NextRun;
        let cursor = match &completion.next {
            NextRun::Jump(target) => *target,
            _ => completion.index + 1,
        };
        match &completion.next {
            NextRun::Continue | NextRun::Jump(_) => Self {
                status: RunStatus::Running,
                cursor,
                keep_lease: true,
                wait: None,
                finished_at: None,
            },
            NextRun::Wait(wait) => Self {
                cursor,
                status: if page_already_submitted {
                    RunStatus::Ready
                } else {
                    RunStatus::Waiting
                },
                keep_lease: false,
                wait: Some(wait),
                finished_at: None,
            },
            NextRun::Finish => Self {
                cursor,
                status: RunStatus::Succeeded,
                keep_lease: false,
                wait: None,
                finished_at: Some(now),
            },
            NextRun::Cancel => Self {
                cursor,
                status: RunStatus::Cancelled,
                keep_lease: false,
                wait: None,
                finished_at: Some(now),
            },
        }
    }
}

fn duration_ms(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// Records a `deadline` event in the history of each page whose wait times out at `$1` (unix
/// ms), in the transaction that applies the timeouts: `fail`, `cancel`, `decline` or
/// `continue`, as the wait said.
const DEADLINE_EVENTS: &str = "INSERT INTO ask_events (page_id, at, kind, who, detail) \
     SELECT runs.wait_page_id, $1, 'deadline', NULL, \
         CASE WHEN runs.wait_on_timeout = 'continue' THEN \
             CASE WHEN run_steps.output LIKE '%\"$declined\"%' THEN 'decline' \
                 WHEN run_steps.output LIKE '%\"$expired\"%' THEN 'cancel' \
                 ELSE 'continue' END \
             ELSE runs.wait_on_timeout END \
     FROM runs LEFT JOIN run_steps ON run_steps.run_id = runs.id \
         AND run_steps.step_index = runs.cursor - 1 \
     WHERE runs.status = 'waiting' AND runs.wait_deadline IS NOT NULL \
         AND runs.wait_deadline <= $1 AND runs.wait_page_id IS NOT NULL \
         AND EXISTS (SELECT 1 FROM pages WHERE pages.id = runs.wait_page_id)";
