//! The live events of one generation: what the loop did, as it did it.
//!
//! Every event is stored (`generation_events`, see `store/generations.rs`) so any server process
//! can replay a generation's events and follow one that is still running: the runs page and the
//! chat subscribe through `GET /api/generations/{id}/events` (SSE), which polls the store
//! ([`follow`]). An in-process listener can also pass an [`EventSink`] to get them without the
//! store. A generation's events end with exactly one [`EventKind::Finished`].
//!
//! Events are written once per model turn (one transaction for all of a turn's tool calls), not
//! once per call: a turn is the unit a person waits for, and SQLite pays an fsync per commit.

use std::time::Duration;

use futures_util::Stream;
use serde_json::Value;
use tokio::sync::mpsc;
use uuid::Uuid;

use crate::store::{Store, StoreError};

/// How often [`follow`] polls the store for new events.
pub const POLL_INTERVAL: Duration = Duration::from_millis(250);
/// [`follow`] gives up on a generation that shows no new event for this long (a crashed process
/// never writes its `finished` event).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(120);

pub use tessera_store::records::generation::{EventKind, GenerationEvent};

/// Where an in-process listener receives events as they happen (before they are stored).
#[derive(Clone, Debug)]
pub struct EventSink(mpsc::UnboundedSender<GenerationEvent>);

impl EventSink {
    /// A sink and the receiver that gets every event sent to it.
    #[must_use]
    pub fn channel() -> (Self, mpsc::UnboundedReceiver<GenerationEvent>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (Self(sender), receiver)
    }

    /// Hands `event` to the listener; a listener that went away is not an error.
    pub fn send(&self, event: &GenerationEvent) {
        // The receiver may have been dropped (a client that disconnected); the loop goes on.
        let _ignored = self.0.send(event.clone());
    }
}

/// Numbers, buffers and writes the events of one generation.
pub(crate) struct EventLog<'a> {
    generation_id: Uuid,
    store: &'a Store,
    sink: Option<EventSink>,
    next_seq: i64,
    pending: Vec<GenerationEvent>,
}

impl<'a> EventLog<'a> {
    pub(crate) fn new(generation_id: Uuid, store: &'a Store, sink: Option<EventSink>) -> Self {
        Self {
            generation_id,
            store,
            sink,
            next_seq: 1,
            pending: Vec::new(),
        }
    }

    /// Records an event: sent to the sink now, stored at the next [`EventLog::flush`].
    pub(crate) fn push(&mut self, kind: EventKind, payload: Value) {
        let event = GenerationEvent {
            generation_id: self.generation_id,
            seq: self.next_seq,
            kind,
            payload,
            created_at_ms: crate::store::now_ms(),
        };
        self.next_seq += 1;
        if let Some(sink) = &self.sink {
            sink.send(&event);
        }
        self.pending.push(event);
    }

    /// Stores the buffered events in one transaction.
    pub(crate) async fn flush(&mut self) -> Result<(), StoreError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.store.insert_generation_events(&self.pending).await?;
        self.pending.clear();
        Ok(())
    }
}

/// The stored events of generation `id` after `after_seq`, then the new ones as they are stored,
/// ending after the [`EventKind::Finished`] event, when the generation is recorded and nothing
/// is left after `after_seq` (a client resuming after the last event), or after
/// [`IDLE_TIMEOUT`] without news.
///
/// A generation that has not started yet is waited for, so a caller may subscribe before it
/// starts the generation.
pub fn follow(
    store: Store,
    id: Uuid,
    after_seq: i64,
) -> impl Stream<Item = Result<GenerationEvent, StoreError>> {
    struct Follow {
        store: Store,
        id: Uuid,
        after_seq: i64,
        buffered: std::collections::VecDeque<GenerationEvent>,
        finished: bool,
        last_news: tokio::time::Instant,
        first_poll: bool,
    }
    let state = Follow {
        store,
        id,
        after_seq,
        buffered: std::collections::VecDeque::new(),
        finished: false,
        last_news: tokio::time::Instant::now(),
        first_poll: true,
    };
    futures_util::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(event) = state.buffered.pop_front() {
                state.after_seq = event.seq;
                if event.kind == EventKind::Finished {
                    state.finished = true;
                    state.buffered.clear();
                }
                return Some((Ok(event), state));
            }
            if state.finished || state.last_news.elapsed() >= IDLE_TIMEOUT {
                return None;
            }
            if !state.first_poll {
                tokio::time::sleep(POLL_INTERVAL).await;
            }
            state.first_poll = false;
            match state
                .store
                .generation_events(state.id, state.after_seq, 500)
                .await
            {
                Ok(events) if events.is_empty() => {
                    // The record is written just before the last event: once it exists and no
                    // event is left after `after_seq`, there is nothing more to wait for.
                    if state.store.generation(state.id).await.is_ok() {
                        let rest = state
                            .store
                            .generation_events(state.id, state.after_seq, 500)
                            .await;
                        match rest {
                            Ok(events) if !events.is_empty() => state.buffered.extend(events),
                            _ => state.finished = true,
                        }
                    }
                }
                Ok(events) => {
                    state.last_news = tokio::time::Instant::now();
                    state.buffered.extend(events);
                }
                Err(error) => {
                    state.finished = true;
                    return Some((Err(error), state));
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_through_its_stored_spelling() {
        for kind in EventKind::ALL {
            assert_eq!(EventKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(EventKind::parse("exploded"), None);
    }

    #[tokio::test]
    async fn a_sink_gets_events_and_ignores_a_departed_listener() -> anyhow::Result<()> {
        let (sink, mut receiver) = EventSink::channel();
        let event = GenerationEvent {
            generation_id: Uuid::new_v4(),
            seq: 1,
            kind: EventKind::Started,
            payload: serde_json::json!({}),
            created_at_ms: 0,
        };
        sink.send(&event);
        assert_eq!(receiver.recv().await, Some(event.clone()));
        drop(receiver);
        sink.send(&event);
        Ok(())
    }
}
