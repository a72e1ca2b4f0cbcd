//! Waiting inside a tool call for a person's answer, with MCP progress notifications.
//!
//! The answer arrives through the page (`POST /p/{token}`), possibly on another server
//! process, so the wait reads the ask from the store rather than listening in memory: a poll
//! every [`POLL_EVERY`] costs a few indexed reads. While it waits, a client that sent a progress
//! token gets a `notifications/progress` every [`PROGRESS_EVERY`] (seconds waited out of
//! `wait_seconds`), which also keeps clients that reset their request timeout on progress
//! from giving up. A client's cancellation of the call ends the wait; the ask stays open.

use std::time::Duration;

use rmcp::{
    model::{ProgressNotificationParam, ProgressToken},
    service::Peer,
    RoleServer,
};
use tokio_util::sync::CancellationToken;

use crate::{
    asks::{ask_status, AskError, AskView},
    store::Store,
};

/// How often the ask is read while waiting.
pub const POLL_EVERY: Duration = Duration::from_millis(200);
/// How often a progress notification is sent while waiting.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// Where progress goes: the caller's peer and the token its request carried.
pub struct Progress<'a> {
    /// The client.
    pub peer: &'a Peer<RoleServer>,
    /// The token the client asked progress for.
    pub token: ProgressToken,
}

/// Waits until `wait` after `started` (the call's start: progress counts from there, out of
/// `wait`) for ask `ask_id` to be answered or closed, and returns it as it is then.
///
/// # Errors
/// [`AskError::NotFound`] for an unknown id; database failures.
pub async fn wait_for_answer(
    store: &Store,
    ask_id: &str,
    started: tokio::time::Instant,
    wait: Duration,
    progress: Option<Progress<'_>>,
    cancelled: &CancellationToken,
) -> Result<AskView, AskError> {
    let mut next_progress = tokio::time::Instant::now() + PROGRESS_EVERY;
    loop {
        let view = ask_status(store, ask_id).await?;
        let now = tokio::time::Instant::now();
        if !view.status.is_open() || now >= started + wait || cancelled.is_cancelled() {
            return Ok(view);
        }
        if let Some(progress) = progress.as_ref().filter(|_| now >= next_progress) {
            next_progress = now + PROGRESS_EVERY;
            let waited = now.duration_since(started).as_secs_f64().floor();
            let notification = ProgressNotificationParam::new(progress.token.clone(), waited)
                .with_total(wait.as_secs_f64())
                .with_message(format!(
                    "waiting for the person's answer ({})",
                    view.status.as_str()
                ));
            if let Err(error) = progress.peer.notify_progress(notification).await {
                // The client went away; its cancellation (or the wait's end) stops the loop.
                tracing::debug!(ask.id = %ask_id, %error, "a progress notification was not sent");
            }
        }
        tokio::select! {
            () = tokio::time::sleep(POLL_EVERY) => {}
            () = cancelled.cancelled() => {}
        }
    }
}
