//! Recipients an ask names itself (`"notify": {"ntfy": {"topic": …}, "email": […], "webhook": …}`)
//! and the operator's allowlist they must fall within.
//!
//! The allowlist is configuration (`TESSERA_ASK_NTFY_TOPICS`, `TESSERA_ASK_EMAIL_TO`,
//! `TESSERA_ASK_WEBHOOK_URLS`, see [`super::config`]): without it an ask could make the server
//! send mail or POST to anywhere. Empty lists allow nothing. The channels themselves are the
//! server's (the ntfy server of `TESSERA_NTFY_URL`, the SMTP server, the webhook secret):
//! [`Notifier::for_recipients`] builds a notifier aimed at the named recipients only. The
//! webhook is a URL the caller wrote, so beyond the prefix list it reaches public addresses only,
//! unless `TESSERA_OUTBOUND_ALLOW` admits its host (`net::outbound`): a prefix such as
//! `https://hooks.example.com` also matches `https://hooks.example.com@127.0.0.1/`.

use std::sync::Arc;

use lettre::message::Mailbox;
use serde::{Deserialize, Serialize};

use super::{config::NotifyConfig, EmailSender, Notifier, Notify, NotifyError, NtfyClient, Result};
use crate::net::outbound::OutboundAllow;

/// Builds the notifier that reaches some recipients only (see [`Notifier::for_recipients`]):
/// what the asks workflow uses for an ask's own recipients, and every door for e-mailing an
/// assignee their own link.
pub type NotifierFor =
    Arc<dyn Fn(&AskRecipients) -> Result<Arc<dyn Notify>, NotifyError> + Send + Sync>;

/// Who an ask's link goes to, as the ask named them (checked against the allowlist first).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskRecipients {
    /// A topic on the configured ntfy server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ntfy_topic: Option<String>,
    /// E-mail addresses, sent through the configured SMTP server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub email: Vec<String>,
    /// A URL that gets the notification as signed JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<String>,
}

/// What an ask may name, set by the operator.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecipientAllowlist {
    /// ntfy topics, exactly.
    pub ntfy_topics: Vec<String>,
    /// E-mail addresses (compared without case), or `@example.com` for every address of a
    /// domain.
    pub email: Vec<String>,
    /// URL prefixes a webhook must start with, e.g. `https://hooks.example.com/`.
    pub webhook_prefixes: Vec<String>,
}

impl RecipientAllowlist {
    /// Whether an ask may name ntfy topic `topic`.
    #[must_use]
    pub fn allows_topic(&self, topic: &str) -> bool {
        self.ntfy_topics.iter().any(|allowed| allowed == topic)
    }

    /// Whether an ask may name e-mail address `address` (a bare address).
    #[must_use]
    pub fn allows_email(&self, address: &str) -> bool {
        let address = address.to_ascii_lowercase();
        self.email.iter().any(|allowed| {
            let allowed = allowed.to_ascii_lowercase();
            if allowed.starts_with('@') {
                address.ends_with(&allowed)
            } else {
                address == allowed
            }
        })
    }

    /// Whether an ask may name webhook `url` (already parsed and normalised).
    #[must_use]
    pub fn allows_webhook(&self, url: &url::Url) -> bool {
        self.webhook_prefixes
            .iter()
            .any(|prefix| url.as_str().starts_with(prefix.as_str()))
    }
}

impl Notifier {
    /// A notifier that reaches `recipients` only, through the server's channels: the ntfy
    /// server with the ask's topic, the SMTP server with the ask's addresses, the webhook
    /// secret signing a POST to the ask's URL, which reaches public addresses only unless
    /// `outbound` admits its host.
    ///
    /// # Errors
    /// [`NotifyError::BadConfig`] when a named recipient's channel is not configured or an
    /// address or URL does not parse (the asks API checks both before starting).
    pub fn for_recipients(
        config: &NotifyConfig,
        recipients: &AskRecipients,
        outbound: &OutboundAllow,
    ) -> Result<Self> {
        let ntfy = match &recipients.ntfy_topic {
            Some(topic) => {
                let server = config
                    .ntfy
                    .as_ref()
                    .ok_or_else(|| NotifyError::bad_config("TESSERA_NTFY_URL", "is not set"))?;
                Some(NtfyClient::new(server.with_topic(topic)?, config.timeout)?)
            }
            None => None,
        };
        let email = if recipients.email.is_empty() {
            None
        } else {
            let mut email = config
                .email
                .clone()
                .ok_or_else(|| NotifyError::bad_config("TESSERA_SMTP_HOST", "is not set"))?;
            email.to = recipients
                .email
                .iter()
                .map(|address| {
                    address.parse::<Mailbox>().map_err(|_| {
                        NotifyError::bad_config(
                            "notify.email",
                            "holds an address that does not parse",
                        )
                    })
                })
                .collect::<Result<_>>()?;
            Some(EmailSender::new(email, config.timeout)?)
        };
        let webhook = match &recipients.webhook {
            Some(raw) => {
                let url = url::Url::parse(raw)
                    .map_err(|_| NotifyError::bad_config("notify.webhook", "is not a URL"))?;
                let sender = config
                    .webhook_sender(super::SigningPurpose::Recipient)?
                    .ok_or_else(|| {
                        NotifyError::bad_config("TESSERA_WEBHOOK_SECRET", "is not set")
                    })?;
                Some((url, sender.checking(outbound)?))
            }
            None => None,
        };
        Ok(Self::new(ntfy, webhook, email))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allowlist_matches_topics_exactly_addresses_or_domains_and_url_prefixes(
    ) -> anyhow::Result<()> {
        let allowlist = RecipientAllowlist {
            ntfy_topics: vec!["ops".into()],
            email: vec!["boss@example.com".into(), "@team.example".into()],
            webhook_prefixes: vec!["https://hooks.example.com/".into()],
        };
        assert!(allowlist.allows_topic("ops") && !allowlist.allows_topic("ops2"));
        assert!(allowlist.allows_email("Boss@Example.com"));
        assert!(allowlist.allows_email("anyone@team.example"));
        assert!(!allowlist.allows_email("anyone@evilteam.example.org"));
        assert!(!allowlist.allows_email("other@example.com"));
        let inside = url::Url::parse("https://hooks.example.com/ask/1")?;
        let outside = url::Url::parse("https://hooks.example.com.evil.test/")?;
        assert!(allowlist.allows_webhook(&inside) && !allowlist.allows_webhook(&outside));
        assert!(!RecipientAllowlist::default().allows_topic("ops"));
        Ok(())
    }

    use crate::notify::NtfyConfig;

    #[test]
    fn a_topic_replaces_the_configured_one_on_the_same_server() -> anyhow::Result<()> {
        let server = NtfyConfig::new("https://ntfy.example/alerts", None)?;
        assert_eq!(
            server.with_topic("ops")?.topic_url().as_str(),
            "https://ntfy.example/ops"
        );
        assert!(server.with_topic("a/b").is_err());
        Ok(())
    }
}
