//! Where an ask's own URLs lead: its `callback_url` and the webhook it names reach public
//! addresses only, unless the operator's `TESSERA_OUTBOUND_ALLOW` admits the host.
//!
//! Parsing (`request.rs`) reads the URLs; this check resolves their hosts, so it is async and
//! runs after parsing, before the ask starts. Every door that starts an ask (`POST /api/asks`,
//! MCP `ask_person`) calls it. The same rule holds again when the callback or webhook is sent
//! (`net::outbound`), against a name that resolves differently by then.

use super::{AskCapabilities, AskError, NewAsk};

impl NewAsk {
    /// Checks that the callback and the named webhook reach public addresses (or a host the
    /// allowlist admits), resolving host names now.
    ///
    /// # Errors
    /// [`AskError::Invalid`] naming `callback_url` or `notify.webhook`.
    pub async fn check_destinations(&self, can: &AskCapabilities) -> Result<(), AskError> {
        if let Some(url) = &self.callback_url {
            can.outbound
                .check(url)
                .await
                .map_err(|refused| AskError::invalid("callback_url", refused.to_string()))?;
        }
        let webhook = self
            .recipients
            .as_ref()
            .and_then(|recipients| recipients.webhook.as_deref());
        if let Some(raw) = webhook {
            let url = url::Url::parse(raw).map_err(|_| {
                AskError::invalid("notify.webhook", "must be an absolute http(s) URL")
            })?;
            can.outbound
                .check(&url)
                .await
                .map_err(|refused| AskError::invalid("notify.webhook", refused.to_string()))?;
        }
        Ok(())
    }
}
