//! Keeping a claimed run's lease while its step runs, and giving up the step the moment the
//! lease may be lost.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::Runner;
use crate::workflow::run::Lease;

pub(super) fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

impl Runner {
    /// Renews the lease every `heartbeat`; once it is lost, says so through `lost` and idles
    /// until the drive ends.
    ///
    /// A renewal that has not answered half a lease before the lease runs out counts as lost: past
    /// that instant another runner may claim the run, and the step must not go on beside it
    /// (a stalled database connection would otherwise keep it running until the call returns).
    pub(super) async fn renew_lease(
        &self,
        mut lease: Lease,
        lost: CancellationToken,
    ) -> std::convert::Infallible {
        let config = &self.inner.config;
        loop {
            tokio::time::sleep(config.heartbeat).await;
            if lost.is_cancelled() {
                continue;
            }
            let now = self.now_ms();
            let left = u64::try_from(lease.expires_at_ms.saturating_sub(now)).unwrap_or(0);
            // Give up half a lease early: a starved process (timers late, a renewal queued behind
            // SQLite's write lock) must have dropped the step before another runner may claim it.
            let budget = Duration::from_millis(left).saturating_sub(config.lease / 2);
            let renewal = self.inner.store.heartbeat(&lease, config.lease, now);
            match tokio::time::timeout(budget, renewal).await {
                Ok(Ok(Some(renewed))) => lease = renewed,
                Ok(Ok(None)) => lost.cancel(),
                Ok(Err(error)) => {
                    tracing::warn!(run.id = %lease.run_id, error = %error, "heartbeat failed");
                    if self.now_ms().saturating_add(millis(config.heartbeat)) >= lease.expires_at_ms
                    {
                        lost.cancel();
                    }
                }
                Err(_) => {
                    tracing::warn!(run.id = %lease.run_id, "heartbeat did not answer before the lease ran out");
                    lost.cancel();
                }
            }
        }
    }
}

/// Aborts a spawned step when its run stops waiting for it (lease lost, shutdown, an error).
pub(super) struct AbortOnDrop<T>(pub(super) tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}
