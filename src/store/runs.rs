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
//! `UPDATE … RETURNING` in a `BEGIN IMMEDIATE` transaction (one process). On PostgreSQL every
//! transaction that makes a run ready sends one `NOTIFY` on [`RUNS_READY_CHANNEL`] (once per
//! transaction, never per row: DESIGN.md §10) so idle runners wake at once.
//!
//! A run waiting on a page is made ready by the pages store's submission statement (its trigger
//! sends the same single `NOTIFY`); this module reads the `pages` table only to decide, under
//! the page row's lock, whether a page was submitted before its run started waiting, and to read
//! a submitted page's response.

mod postgres;
mod sqlite;
mod wakeups;

pub use wakeups::RunsWakeup;

use std::time::Duration;

use uuid::Uuid;

use super::{decode_json, decode_uuid, now_ms, Result, Store, StoreError};
use crate::workflow::run::{
    ClaimedRun, Lease, LeaseOutcome, NewRun, NextDue, Run, RunFilter, RunId, RunList, RunStatus,
    RunStep, StepCompletion, StepRef, StepStatus, TimeoutAction, WaitInfo,
};

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
        let status = RunStatus::parse(&row.status).ok_or_else(|| StoreError::Corrupt {
            column: "runs.status",
            reason: row.status.clone(),
        })?;
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
                        TimeoutAction::parse(action).ok_or_else(|| StoreError::Corrupt {
                            column: "runs.wait_on_timeout",
                            reason: action.to_owned(),
                        })
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
            status: StepStatus::parse(&row.status).ok_or_else(|| StoreError::Corrupt {
                column: "run_steps.status",
                reason: row.status.clone(),
            })?,
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
        use crate::workflow::run::NextRun;
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

impl Store {
    /// Stores a new run and returns it (on PostgreSQL, a ready run also wakes idle runners).
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

    /// Records the digest of the declarative workflow file run `id` starts on.
    ///
    /// # Errors
    /// Database failures.
    pub async fn set_run_definition_digest(&self, id: RunId, digest: &str) -> Result<()> {
        match self {
            Self::Sqlite(pool) => {
                sqlx::query("UPDATE runs SET definition_digest = ? WHERE id = ?")
                    .bind(digest)
                    .bind(id.to_string())
                    .execute(pool)
                    .await?;
            }
            Self::Postgres(pool) => {
                sqlx::query("UPDATE runs SET definition_digest = $1 WHERE id = $2")
                    .bind(digest)
                    .bind(id.to_string())
                    .execute(pool)
                    .await?;
            }
        }
        Ok(())
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

    /// One page of runs, newest first, with the total matching the filter.
    ///
    /// # Errors
    /// Database failures.
    pub async fn list_runs(&self, filter: &RunFilter) -> Result<RunList> {
        let filter = RunFilter {
            limit: filter.limit.clamp(1, MAX_LIST_LIMIT),
            offset: filter.offset.max(0),
            ..filter.clone()
        };
        let (rows, total) = match self {
            Self::Sqlite(pool) => sqlite::list(pool, &filter).await?,
            Self::Postgres(pool) => postgres::list(pool, &filter).await?,
        };
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
        let rows = match self {
            Self::Sqlite(pool) => sqlite::steps(pool, id).await?,
            Self::Postgres(pool) => postgres::steps(pool, id).await?,
        };
        rows.into_iter().map(RunStep::try_from).collect()
    }

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
            Self::Sqlite(pool) => sqlite::claim(pool, owner, workflows, expires_at, now).await?,
            Self::Postgres(pool) => {
                postgres::claim(pool, owner, workflows, expires_at, now).await?
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
        let renewed = match self {
            Self::Sqlite(pool) => sqlite::heartbeat(pool, lease, expires_at, now).await?,
            Self::Postgres(pool) => postgres::heartbeat(pool, lease, expires_at, now).await?,
        };
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
            Self::Sqlite(pool) => sqlite::begin_step(pool, lease, index, name, &input, now).await?,
            Self::Postgres(pool) => {
                postgres::begin_step(pool, lease, index, name, &input, now).await?
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
        match self {
            Self::Sqlite(pool) => sqlite::complete_step(pool, lease, completion, now).await,
            Self::Postgres(pool) => postgres::complete_step(pool, lease, completion, now).await,
        }
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
        match self {
            Self::Sqlite(pool) => {
                sqlite::retry_step(pool, lease, index, error, next_attempt_at_ms, now).await
            }
            Self::Postgres(pool) => {
                postgres::retry_step(pool, lease, index, error, next_attempt_at_ms, now).await
            }
        }
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
        match self {
            Self::Sqlite(pool) => sqlite::fail_run(pool, lease, step, error, now).await,
            Self::Postgres(pool) => postgres::fail_run(pool, lease, step, error, now).await,
        }
    }

    /// Marks a run succeeded whose cursor is past its last step (its last step waited).
    ///
    /// # Errors
    /// Database failures.
    pub async fn finish_run(&self, lease: &Lease, now: i64) -> Result<LeaseOutcome> {
        match self {
            Self::Sqlite(pool) => sqlite::finish_run(pool, lease, now).await,
            Self::Postgres(pool) => postgres::finish_run(pool, lease, now).await,
        }
    }

    /// Gives a run back (a runner shutting down): ready at once, lease cleared; the step that
    /// was interrupted is marked failed and will run again.
    ///
    /// # Errors
    /// Database failures.
    pub async fn release_run(&self, lease: &Lease, now: i64) -> Result<LeaseOutcome> {
        match self {
            Self::Sqlite(pool) => sqlite::release_run(pool, lease, now).await,
            Self::Postgres(pool) => postgres::release_run(pool, lease, now).await,
        }
    }

    /// Cancels a run that has not finished; a runner holding it loses its lease and commits
    /// nothing more, and it is never claimed again.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] for an unknown run; [`StoreError::Conflict`] when it already
    /// succeeded, failed or was cancelled.
    pub async fn cancel_run(&self, id: RunId, now: i64) -> Result<Run> {
        let row = match self {
            Self::Sqlite(pool) => sqlite::cancel(pool, id, now).await?,
            Self::Postgres(pool) => postgres::cancel(pool, id, now).await?,
        };
        match row {
            Ok(row) => row.try_into(),
            Err(Some(status)) => Err(StoreError::Conflict(format!(
                "run {id} is already {status}"
            ))),
            Err(None) => Err(StoreError::NotFound),
        }
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
        match self {
            Self::Sqlite(pool) => sqlite::expire_waits(pool, now).await,
            Self::Postgres(pool) => postgres::expire_waits(pool, now).await,
        }
    }

    /// When a runner of these workflows next has something to do.
    ///
    /// # Errors
    /// Database failures.
    pub async fn next_due(&self, workflows: &[String]) -> Result<NextDue> {
        match self {
            Self::Sqlite(pool) => sqlite::next_due(pool, workflows).await,
            Self::Postgres(pool) => postgres::next_due(pool, workflows).await,
        }
    }

    /// The response stored on a submitted page; `None` while it is not submitted (or unknown).
    ///
    /// # Errors
    /// Database failures; [`StoreError::Corrupt`] for an unreadable response.
    pub async fn submitted_response(&self, page_id: Uuid) -> Result<Option<serde_json::Value>> {
        let text = match self {
            Self::Sqlite(pool) => sqlite::submitted_response(pool, page_id).await?,
            Self::Postgres(pool) => postgres::submitted_response(pool, page_id).await?,
        };
        text.as_deref()
            .map(|text| decode_json("pages.response", text))
            .transpose()
    }
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
