//! A worker's loop: claim the next due run and run it, else sleep until something is due or a
//! wake-up arrives; and the task that turns the store's ready-run wake-ups into worker wake-ups.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{DrainReport, Runner};
use crate::{store::runs::RunsWakeup, workflow::WorkflowError};

/// The shortest idle sleep, so a row another process is claiming right now does not spin us.
const MIN_IDLE_SLEEP: Duration = Duration::from_millis(5);

/// How long to sleep until `at_ms`, kept between [`MIN_IDLE_SLEEP`] and `longest`.
pub(super) fn sleep_until(at_ms: i64, now_ms: i64, longest: Duration) -> Duration {
    let wait_ms = u64::try_from(at_ms.saturating_sub(now_ms)).unwrap_or(0);
    Duration::from_millis(wait_ms).clamp(MIN_IDLE_SLEEP, longest.max(MIN_IDLE_SLEEP))
}

impl Runner {
    /// One worker until `shutdown`: claim and run due runs one after the other; when none is
    /// due, sleep until the next due time (at most `poll_interval`) or a wake-up. Worker 0 also
    /// applies due wait timeouts.
    pub(super) async fn run_worker(self, worker: usize, shutdown: CancellationToken) {
        let owner = format!("{}/{worker}", self.inner.config.owner);
        let poll = self.inner.config.poll_interval;
        let mut report = DrainReport::default();
        while !shutdown.is_cancelled() {
            let notified = self.inner.wake.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            match self
                .claim_and_run_next(&owner, worker == 0, &shutdown, &mut report)
                .await
            {
                Ok(true) => continue,
                Ok(false) => {}
                Err(error) => {
                    tracing::error!(error = %error, runner.owner = %owner, "claiming or running a run failed");
                }
            }
            let idle = match self.inner.store.next_due(&self.inner.workflows).await {
                Ok(due) => {
                    let sweeps = if worker == 0 {
                        due.wait_deadline_ms
                    } else {
                        None
                    };
                    [due.claimable_at_ms, sweeps]
                        .into_iter()
                        .flatten()
                        .min()
                        .map_or(poll, |at| sleep_until(at, self.now_ms(), poll))
                }
                Err(error) => {
                    tracing::error!(error = %error, "cannot read when runs are next due");
                    poll
                }
            };
            tokio::select! {
                () = &mut notified => {}
                () = tokio::time::sleep(idle) => {}
                () = shutdown.cancelled() => break,
            }
        }
    }

    /// One round of a worker: apply due timeouts (worker 0), claim one run and drive it.
    /// `Ok(true)` when it drove a run (look again at once).
    pub(super) async fn claim_and_run_next(
        &self,
        owner: &str,
        sweeps: bool,
        shutdown: &CancellationToken,
        report: &mut DrainReport,
    ) -> Result<bool, WorkflowError> {
        let store = &self.inner.store;
        let now = self.now_ms();
        if sweeps {
            let expired = store.expire_waits(now).await?;
            if expired > 0 {
                tracing::info!(runs = expired, "wait timeouts applied");
            }
        }
        let claimed = store
            .claim_run(owner, &self.inner.workflows, self.inner.config.lease, now)
            .await?;
        let Some(claimed) = claimed else {
            return Ok(false);
        };
        let mut round = DrainReport {
            runs_claimed: 1,
            ..DrainReport::default()
        };
        let driven = self.run_claimed(claimed, shutdown, &mut round).await;
        self.record(&round);
        report.add(&round);
        driven?;
        Ok(true)
    }

    /// Wakes idle workers when any process makes a run ready (PostgreSQL; on SQLite this
    /// returns at once and [`Runner::wake`] is the only wake-up).
    pub(super) async fn wake_on_ready_runs(self, shutdown: CancellationToken) {
        let workers = self.inner.config.workers.max(1);
        let store = self.inner.store.clone();
        store
            .listen_runs_ready(self.inner.config.poll_interval, shutdown, |wakeup| {
                match wakeup {
                    // Several runs may be waiting: every idle worker looks.
                    RunsWakeup::Listening => self.inner.wake.notify_waiters(),
                    // One worker per ready run, up to all of them; a busy worker looks again
                    // as soon as it finishes its run.
                    RunsWakeup::Ready(count) => {
                        for _ in 0..count.min(workers) {
                            self.inner.wake.notify_one();
                        }
                    }
                }
            })
            .await;
    }
}
