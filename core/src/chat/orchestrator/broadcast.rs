//! Events and cancellation: what listeners see while a turn runs, and how a stop reaches a loop.
//!
//! Events go to this process's listeners and, on PostgreSQL, through the store's chat bus to the
//! others ([`crate::chat::events`]); a stop cancels the loop's token wherever it runs.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::{decisions::PendingApproval, Orchestrator, Turn};
use crate::chat::{
    audit::ExecutionId,
    events::RunningGuard,
    header::{ChunkProgress, Step},
    session::SessionId,
    threads::ThreadId,
    ChatError,
};

/// Something a listener (the chat UI's SSE stream) sees while a turn runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ChatEvent {
    /// A turn was routed.
    TurnRouted {
        /// The route's name.
        route: String,
        /// Its thread.
        thread_id: Option<ThreadId>,
    },
    /// A tool call passed the gate and is about to send requests.
    StepStarted {
        /// The thread.
        thread_id: ThreadId,
        /// The operation.
        operation: String,
        /// The planned chunk sizes.
        chunks: Vec<usize>,
    },
    /// A chunked call advanced.
    Progress {
        /// The thread.
        thread_id: ThreadId,
        /// The execution.
        execution_id: ExecutionId,
        /// The operation.
        operation: String,
        /// Where it is.
        progress: ChunkProgress,
    },
    /// A step ended (or was refused, or now waits for confirmation).
    StepFinished {
        /// The thread.
        thread_id: ThreadId,
        /// The step as the header shows it.
        step: Step,
    },
    /// Code asks the person to approve a call.
    ApprovalRequested {
        /// What to show.
        approval: PendingApproval,
    },
    /// The turn's reply is ready.
    Reply {
        /// The thread.
        thread_id: Option<ThreadId>,
        /// The whole reply (header first).
        text: String,
    },
}

impl Orchestrator {
    /// A receiver of the session's events (progress, approvals, replies) from now on, whichever
    /// process runs the turn (on PostgreSQL, once [`Orchestrator::spawn`] connected it).
    #[must_use]
    pub fn subscribe(&self, id: SessionId) -> broadcast::Receiver<ChatEvent> {
        self.inner.signals.subscribe(id)
    }

    /// Stops every loop of the session, in this process and (PostgreSQL) in the others; returns
    /// whether one was running. Loops stop between tool calls and between chunks.
    ///
    /// # Errors
    /// Storage failures (the loops of this process are stopped all the same).
    pub async fn stop(&self, id: SessionId) -> Result<bool, ChatError> {
        let now = crate::store::now_ms();
        Ok(self
            .inner
            .signals
            .stop_everywhere(id, now, now - self.lease_ms())
            .await?)
    }

    pub(super) fn lease_ms(&self) -> i64 {
        i64::try_from(self.inner.execution_lease.as_millis()).unwrap_or(i64::MAX)
    }

    /// Connects this orchestrator to the other processes (PostgreSQL: events and stops through the
    /// store's chat bus) and reports calls whose process stopped (see [`super::interrupted`]),
    /// until `shutdown`. Returns once this process listens.
    pub async fn spawn(&self, shutdown: &CancellationToken) -> tokio::task::JoinHandle<()> {
        self.inner.signals.connect(shutdown).await;
        tokio::spawn(crate::chat::interrupted::sweep_until(
            self.inner.store.clone(),
            Arc::downgrade(&self.inner.signals),
            self.inner.manifest.clone(),
            self.inner.execution_lease,
            shutdown.clone(),
        ))
    }

    pub(super) fn start_run(&self, id: SessionId) -> (CancellationToken, RunningGuard<'_>) {
        self.inner.signals.start_run(id)
    }

    pub(super) fn emit(&self, turn: &mut Turn, event: ChatEvent) {
        self.broadcast(turn.session.id, &event);
        turn.events.push(event);
    }

    pub(super) fn broadcast(&self, id: SessionId, event: &ChatEvent) {
        self.inner.signals.publish(id, event);
    }

    pub(super) fn routed(&self, turn: &mut Turn, thread_id: Option<ThreadId>) {
        let route = turn.route.clone();
        self.emit(turn, ChatEvent::TurnRouted { route, thread_id });
    }

    pub(super) fn push_step(&self, turn: &mut Turn, thread_id: ThreadId, step: Step) {
        self.emit(
            turn,
            ChatEvent::StepFinished {
                thread_id,
                step: step.clone(),
            },
        );
        turn.steps.push(step);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::orchestrator::test_support::Fixture;

    #[tokio::test]
    async fn a_subscriber_sees_the_turn_routed_then_the_reply() -> anyhow::Result<()> {
        let fixture = Fixture::new(Vec::new()).await?;
        let session = fixture.session().await?;
        let mut events = fixture.orchestrator.subscribe(session.id);
        let outcome = fixture
            .orchestrator
            .handle_turn(session.id, "/help")
            .await?;
        let mut seen = Vec::new();
        while let Ok(event) = events.try_recv() {
            seen.push(event);
        }
        assert_eq!(seen, outcome.events);
        assert!(
            matches!(seen.last(), Some(ChatEvent::Reply { text, .. }) if text == &outcome.reply),
            "{seen:?}"
        );
        Ok(())
    }

    #[tokio::test]
    async fn stopping_a_session_with_nothing_running_says_so() -> anyhow::Result<()> {
        let fixture = Fixture::new(Vec::new()).await?;
        let session = fixture.session().await?;
        assert!(!fixture.orchestrator.stop(session.id).await?);
        Ok(())
    }
}
