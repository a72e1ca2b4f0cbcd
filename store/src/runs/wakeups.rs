//! Wake-ups for idle runners in every process: PostgreSQL `LISTEN` on [`RUNS_READY_CHANNEL`]
//! behind the facade, so the workflow engine never names a driver.
//!
//! Every transaction that makes a run ready sends one `NOTIFY` on the channel (at most one per
//! transaction: PostgreSQL folds identical notifications of one transaction into one). The
//! listener hands them over as [`RunsWakeup`]s; notifications that arrived together become one
//! wake-up with their count, so a burst of submissions wakes each idle worker once rather than
//! once per submission. SQLite serves one process: there a runner's own [`Runner::wake`] is the
//! only wake-up, and nothing listens.
//!
//! [`Runner::wake`]: crate::workflow::Runner::wake

use std::time::Duration;

use sqlx::postgres::PgListener;
use tokio_util::sync::CancellationToken;

use super::RUNS_READY_CHANNEL;
use crate::Store;

/// A reason for idle runners to look for ready runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunsWakeup {
    /// Listening (again): runs made ready while nobody listened may be waiting, so every idle
    /// worker should look.
    Listening,
    /// This many runs were made ready since the last wake-up.
    Ready(usize),
}

impl Store {
    /// Calls `wake` for every [`RunsWakeup`] any process causes, until `shutdown`; reconnects
    /// `reconnect_after` a lost connection (runners poll meanwhile). Returns at once on SQLite,
    /// which has no other process to hear from.
    pub async fn listen_runs_ready(
        &self,
        reconnect_after: Duration,
        shutdown: CancellationToken,
        wake: impl Fn(RunsWakeup) + Send,
    ) {
        let Self::Postgres(pool) = self else {
            return;
        };
        while !shutdown.is_cancelled() {
            match PgListener::connect_with(pool).await {
                Ok(listener) => {
                    if hand_over(listener, &shutdown, &wake).await {
                        return;
                    }
                }
                Err(error) => {
                    tracing::warn!(error = %error, "cannot connect to LISTEN for ready runs; polling");
                }
            }
            tokio::select! {
                () = tokio::time::sleep(reconnect_after) => {}
                () = shutdown.cancelled() => return,
            }
        }
    }
}

/// Listens on one connection and hands each batch of notifications to `wake`; `true` once
/// `shutdown` is cancelled, `false` when the connection failed (to reconnect).
async fn hand_over(
    mut listener: PgListener,
    shutdown: &CancellationToken,
    wake: &(impl Fn(RunsWakeup) + Send),
) -> bool {
    if let Err(error) = listener.listen(RUNS_READY_CHANNEL).await {
        tracing::warn!(error = %error, "cannot LISTEN for ready runs; polling");
        return false;
    }
    wake(RunsWakeup::Listening);
    loop {
        tokio::select! {
            received = listener.recv() => match received {
                Ok(_) => {
                    // Whatever else already arrived is the same news: one wake-up for the lot.
                    let mut count = 1;
                    while listener.next_buffered().is_some() {
                        count += 1;
                    }
                    wake(RunsWakeup::Ready(count));
                }
                Err(error) => {
                    tracing::warn!(error = %error, "LISTEN connection lost; polling");
                    return false;
                }
            },
            () = shutdown.cancelled() => return true,
        }
    }
}
