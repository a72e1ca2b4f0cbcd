//! A session's events and stops, in this process and across processes.
//!
//! [`Signals`] keeps the listeners of this process (the chat page's and the JSON API's SSE
//! streams) and the cancellation tokens of the loops running here. On PostgreSQL every event is
//! also published through the store's chat bus (`store/chat_bus.rs`: `LISTEN`/`NOTIFY`), in
//! order, by one writer task, and what other processes publish is handed to this process's
//! listeners: a batch running in one process shows its progress on a page served by another. A
//! stop cancels the loops running here, is published for the loops running elsewhere, and is
//! written on the session's running executions, which their owner reads between chunks (so a stop
//! reaches a batch even if its NOTIFY is lost). SQLite serves one process: nothing is published.

use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicU64, Ordering},
        Mutex, PoisonError,
    },
};

use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use super::{orchestrator::ChatEvent, session::SessionId};
use crate::store::{chat_bus::BusMessage, Store};

/// What travels between processes about a session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Signal {
    /// An event for the session's listeners.
    Event {
        /// The event.
        event: Box<ChatEvent>,
    },
    /// Stop the session's running loops.
    Stop,
}

/// Listeners, running loops and the bus of one orchestrator (one per process).
pub(crate) struct Signals {
    instance: String,
    store: Store,
    listeners: Mutex<HashMap<SessionId, broadcast::Sender<ChatEvent>>>,
    running: Mutex<HashMap<SessionId, Vec<(u64, CancellationToken)>>>,
    next_run: AtomicU64,
    outbox: Mutex<Option<mpsc::UnboundedSender<(SessionId, String)>>>,
}

/// Removes a loop's cancellation token when the loop ends, however it ends.
pub(crate) struct RunningGuard<'a> {
    signals: &'a Signals,
    session_id: SessionId,
    run: u64,
}

impl Drop for RunningGuard<'_> {
    fn drop(&mut self) {
        let mut running = self
            .signals
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(tokens) = running.get_mut(&self.session_id) {
            tokens.retain(|(run, _)| *run != self.run);
            if tokens.is_empty() {
                running.remove(&self.session_id);
            }
        }
    }
}

impl Signals {
    /// Signals for a new orchestrator instance over `store`.
    pub(crate) fn new(store: Store) -> Self {
        Self {
            instance: Uuid::new_v4().to_string(),
            store,
            listeners: Mutex::new(HashMap::new()),
            running: Mutex::new(HashMap::new()),
            next_run: AtomicU64::new(1),
            outbox: Mutex::new(None),
        }
    }

    /// This orchestrator's id, stored as the owner of the executions it runs.
    pub(crate) fn instance(&self) -> &str {
        &self.instance
    }

    /// A receiver of the session's events from now on, wherever they happen.
    pub(crate) fn subscribe(&self, id: SessionId) -> broadcast::Receiver<ChatEvent> {
        self.listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(id)
            .or_insert_with(|| broadcast::channel(256).0)
            .subscribe()
    }

    /// Hands `event` to this process's listeners and, once connected, to every other process.
    pub(crate) fn publish(&self, id: SessionId, event: &ChatEvent) {
        self.deliver(id, event);
        self.send_out(
            id,
            &Signal::Event {
                event: Box::new(event.clone()),
            },
        );
    }

    fn deliver(&self, id: SessionId, event: &ChatEvent) {
        let listeners = self
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(sender) = listeners.get(&id) {
            // No receiver is fine: nobody is watching this session right now.
            let _ = sender.send(event.clone());
        }
    }

    fn send_out(&self, id: SessionId, signal: &Signal) {
        let outbox = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(outbox) = outbox.as_ref() {
            match serde_json::to_string(signal) {
                Ok(body) => {
                    let _ = outbox.send((id, body));
                }
                Err(error) => tracing::warn!(error = %error, "cannot encode a chat signal"),
            }
        }
    }

    /// A new token for a loop of session `id`, removed when the guard drops.
    pub(crate) fn start_run(&self, id: SessionId) -> (CancellationToken, RunningGuard<'_>) {
        let token = CancellationToken::new();
        let run = self.next_run.fetch_add(1, Ordering::Relaxed);
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(id)
            .or_default()
            .push((run, token.clone()));
        (
            token,
            RunningGuard {
                signals: self,
                session_id: id,
                run,
            },
        )
    }

    /// Cancels the session's loops running in this process; returns whether one was.
    pub(crate) fn stop_here(&self, id: SessionId) -> bool {
        let running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        running.get(&id).is_some_and(|tokens| {
            for (_, token) in tokens {
                token.cancel();
            }
            !tokens.is_empty()
        })
    }

    /// Stops the session's loops here and everywhere: cancels this process's, publishes the stop
    /// and asks the session's running executions (`alive_since`: see
    /// `Store::request_execution_stop`) to stop at their next checkpoint. Returns whether anything
    /// was running.
    ///
    /// # Errors
    /// Storage failures (the loops here are cancelled all the same).
    pub(crate) async fn stop_everywhere(
        &self,
        id: SessionId,
        now: i64,
        alive_since: i64,
    ) -> Result<bool, crate::store::StoreError> {
        let here = self.stop_here(id);
        self.send_out(id, &Signal::Stop);
        let elsewhere = self
            .store
            .request_execution_stop(id, now, alive_since)
            .await?;
        Ok(here || elsewhere > 0)
    }

    /// Connects this process to the others (PostgreSQL) until `shutdown`: one task publishes this
    /// process's signals in order, one hands the others' to this process. Nothing on SQLite.
    /// Returns once this process listens.
    pub(crate) async fn connect(self: &std::sync::Arc<Self>, shutdown: &CancellationToken) {
        let Some(mut incoming) = self
            .store
            .listen_chat(self.instance.clone(), shutdown.clone())
            .await
        else {
            return;
        };
        let (outbox, mut outgoing) = mpsc::unbounded_channel::<(SessionId, String)>();
        *self.outbox.lock().unwrap_or_else(PoisonError::into_inner) = Some(outbox);
        let store = self.store.clone();
        let instance = self.instance.clone();
        let stopping = shutdown.clone();
        tokio::spawn(async move {
            loop {
                let next = tokio::select! {
                    next = outgoing.recv() => next,
                    () = stopping.cancelled() => None,
                };
                let Some((id, body)) = next else { return };
                if let Err(error) = store.publish_chat(&instance, id, &body).await {
                    tracing::warn!(session.id = %id, error = %error, "cannot publish a chat signal");
                }
            }
        });
        // The receiving task holds the signals only weakly: dropping the orchestrator ends it.
        let signals = std::sync::Arc::downgrade(self);
        tokio::spawn(async move {
            while let Some(message) = incoming.recv().await {
                let Some(signals) = signals.upgrade() else {
                    return;
                };
                signals.receive(&message);
            }
        });
    }

    fn receive(&self, message: &BusMessage) {
        match serde_json::from_str::<Signal>(&message.body) {
            Ok(Signal::Event { event }) => self.deliver(message.session_id, &event),
            Ok(Signal::Stop) => {
                self.stop_here(message.session_id);
            }
            Err(error) => {
                tracing::warn!(session.id = %message.session_id, error = %error, "an unreadable chat signal");
            }
        }
    }
}
