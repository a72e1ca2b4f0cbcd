//! URL-mode elicitation (MCP 2025-11-25): the ask's page link sent to the client as an
//! `elicitation/create` with `mode: "url"`, and `notifications/elicitation/complete` once the
//! ask is settled.
//!
//! URL mode exists for input that must not pass through the client; a Tessera page is exactly
//! that: the person answers on the generated page, which validates and resumes the ask once,
//! and the client only learns the typed answer from the tool's result. The elicitation's id
//! is the ask's id, so a client can tie the completion notice to the ask. `rmcp` 3.11 has a
//! typed URL-mode request but no type for the completion notice, which is sent as a custom
//! notification with the spec's method and params.

use std::time::Duration;

use rmcp::{
    model::{CustomNotification, ElicitationAction, ServerNotification},
    service::{ElicitationMode, Peer},
    RoleServer,
};
use serde_json::json;

/// The least time the client gets to answer an elicitation (the person sees it, agrees to
/// open the page), whatever the call's `wait_seconds`.
pub const MIN_TIMEOUT: Duration = Duration::from_secs(60);

/// The method of the notice that a URL-mode elicitation is complete.
pub const COMPLETE_METHOD: &str = "notifications/elicitation/complete";

/// What came of sending the link as an elicitation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sent {
    /// The person agreed to open the page.
    Accepted,
    /// The person declined: the ask's own Decline (MCP's decline is a refusal, AG-UI's too).
    Declined,
    /// The person dismissed it without choosing.
    Cancelled,
    /// The client failed to answer (an error or no answer in time).
    Failed,
}

/// Whether the client declared the elicitation `url` capability.
#[must_use]
pub fn client_opens_urls(peer: &Peer<RoleServer>) -> bool {
    peer.supported_elicitation_modes()
        .contains(&ElicitationMode::Url)
}

/// Sends `link` to the client as a URL-mode elicitation for ask `ask_id`, with `message`
/// (the ask's prompt), and waits up to `timeout` for the client's answer.
pub async fn send_link(
    peer: &Peer<RoleServer>,
    ask_id: &str,
    message: &str,
    link: &str,
    timeout: Duration,
) -> Sent {
    let Ok(url) = url::Url::parse(link) else {
        tracing::error!(ask.id = %ask_id, "the ask's link is not a URL; not eliciting");
        return Sent::Failed;
    };
    match peer
        .elicit_url_with_timeout(message, url, ask_id, Some(timeout))
        .await
    {
        Ok(ElicitationAction::Accept) => Sent::Accepted,
        Ok(ElicitationAction::Decline) => Sent::Declined,
        Ok(_) => Sent::Cancelled,
        Err(error) => {
            tracing::warn!(ask.id = %ask_id, %error, "the client did not answer the elicitation");
            Sent::Failed
        }
    }
}

/// Tells the client that the elicitation for ask `ask_id` is complete (answered, cancelled or
/// expired), so it can stop showing it.
pub async fn send_complete(peer: &Peer<RoleServer>, ask_id: &str) {
    let notice = CustomNotification::new(COMPLETE_METHOD, Some(json!({"elicitationId": ask_id})));
    if let Err(error) = peer
        .send_notification(ServerNotification::CustomNotification(notice))
        .await
    {
        tracing::warn!(ask.id = %ask_id, %error, "the elicitation's completion was not sent");
    }
}
