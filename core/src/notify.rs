//! Telling a person that a page waits for them: ntfy, a signed webhook and e-mail.
//!
//! A `ui` step makes a page and then has to reach someone with its link. This module owns the
//! three ways out of the server and nothing else: it does not decide *when* to notify (the
//! workflow does), it does not build links (pages do), and it does not log failures (the caller
//! that handles the [`Report`] does, once; only a webhook retry in progress is logged, as a
//! warning). The layering:
//!
//! - [`ntfy`]: one HTTP publish to an ntfy topic, with title, click URL, priority and tags;
//! - [`webhook`]: a JSON POST signed with HMAC-SHA256 and retried with backoff; the same
//!   [`WebhookSender`] delivers the asks API's `callback_url`, and [`sign`]/[`verify`] let
//!   receivers and tests check a delivery; [`signing`] derives each purpose's own key from
//!   the one secret;
//! - [`email`]: one message over SMTP (`lettre`), plain text with an HTML alternative;
//! - [`config`]: [`NotifyConfig`] from `TESSERA_NTFY_*`, `TESSERA_WEBHOOK_*`, `TESSERA_SMTP_*`
//!   (listed there with their defaults);
//! - [`Notifier`] sends one [`Notification`] to every configured channel at once and reports
//!   each channel's outcome: one failing channel never stops the others, and failures are
//!   returned in the [`Report`], never swallowed.
//! - [`RecordingNotifier`] is the fake behind [`Notify`] for tests of code that notifies.
//!
//! Errors: every fallible function here returns [`NotifyError`]. Secrets (the ntfy token, the
//! webhook secret, the SMTP password) are [`tessera_settings::Secret`]s: they go into headers, the
//! signature or the SMTP login only, never into errors, logs or `Debug` output; webhook URLs,
//! which often carry a token in their path, are shown by origin only.

pub mod config;
pub mod email;
pub mod ntfy;
pub mod recipients;
pub mod recording;
pub mod signing;
pub mod webhook;

use std::{fmt, str::FromStr, time::Duration};

use serde::{Deserialize, Serialize};

pub use config::NotifyConfig;
pub use email::{EmailConfig, EmailSender, SmtpTls};
pub use ntfy::{NtfyClient, NtfyConfig};
pub use recipients::{AskRecipients, NotifierFor, RecipientAllowlist};
pub use recording::RecordingNotifier;
pub use signing::{SigningKey, SigningPurpose};
pub use webhook::{sign, verify, Delivery, DeliveryPolicy, WebhookSender};

/// The result type of every notification call.
pub type Result<T, E = NotifyError> = std::result::Result<T, E>;

/// How much of an error reply body is kept in [`NotifyError::Status`].
const EXCERPT_CHARS: usize = 300;

/// What to tell the person: a title, a sentence or two and the page's link.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notification {
    /// A short title: the ntfy title, the e-mail subject.
    pub title: String,
    /// The text under the title.
    pub message: String,
    /// The page to open.
    #[serde(with = "url_text")]
    pub link: url::Url,
    /// How insistently to ring (ntfy only; e-mail and webhooks pass it on as data).
    pub priority: Priority,
    /// Short labels; ntfy shows them as tags or emojis, e-mail ignores them.
    #[serde(default)]
    pub tags: Vec<String>,
    /// The e-mail's `Message-ID` (without the angle brackets), when the sender must make a
    /// repeat recognisable: a timer's mail sent again after a crash carries the same one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
}

impl Notification {
    /// A notification with the default priority and no tags.
    #[must_use]
    pub fn new(title: impl Into<String>, message: impl Into<String>, link: url::Url) -> Self {
        Self {
            title: title.into(),
            message: message.into(),
            link,
            priority: Priority::Default,
            tags: Vec::new(),
            message_id: None,
        }
    }

    /// The same notification with this e-mail `Message-ID` (`left@right`, no brackets).
    #[must_use]
    pub fn with_message_id(mut self, message_id: impl Into<String>) -> Self {
        self.message_id = Some(message_id.into());
        self
    }

    /// The same notification with another priority.
    #[must_use]
    pub fn with_priority(mut self, priority: Priority) -> Self {
        self.priority = priority;
        self
    }

    /// The same notification with these tags.
    #[must_use]
    pub fn with_tags<T: Into<String>>(mut self, tags: impl IntoIterator<Item = T>) -> Self {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
    }
}

/// A [`url::Url`] as a JSON string (the `url` crate is built without its serde feature).
mod url_text {
    use serde::{de::Error as _, Deserialize as _, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        url: &url::Url,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(url.as_str())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<url::Url, D::Error> {
        let text = String::deserialize(deserializer)?;
        url::Url::parse(&text).map_err(D::Error::custom)
    }
}

/// ntfy's five priorities; parsed from `1`–`5` or `min`, `low`, `default`, `high`, `urgent`
/// (`max` is accepted for `urgent`, as ntfy does).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// 1: no sound, folded away.
    Min,
    /// 2: no sound.
    Low,
    /// 3: the ordinary notification.
    #[default]
    Default,
    /// 4: long vibration.
    High,
    /// 5: pops over other apps.
    Urgent,
}

impl Priority {
    /// The number ntfy uses, 1 to 5.
    #[must_use]
    pub fn number(self) -> u8 {
        match self {
            Self::Min => 1,
            Self::Low => 2,
            Self::Default => 3,
            Self::High => 4,
            Self::Urgent => 5,
        }
    }

    /// The lowercase name, as in ntfy's documentation.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Min => "min",
            Self::Low => "low",
            Self::Default => "default",
            Self::High => "high",
            Self::Urgent => "urgent",
        }
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

impl FromStr for Priority {
    type Err = NotifyError;

    fn from_str(raw: &str) -> Result<Self> {
        match raw.trim().to_ascii_lowercase().as_str() {
            "1" | "min" => Ok(Self::Min),
            "2" | "low" => Ok(Self::Low),
            "3" | "default" => Ok(Self::Default),
            "4" | "high" => Ok(Self::High),
            "5" | "urgent" | "max" => Ok(Self::Urgent),
            _ => Err(NotifyError::bad_config(
                "priority",
                format!("`{raw}` is not 1-5 or min, low, default, high, urgent"),
            )),
        }
    }
}

/// The three ways a notification leaves the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Channel {
    /// An ntfy topic.
    Ntfy,
    /// A signed JSON webhook.
    Webhook,
    /// E-mail over SMTP.
    Email,
}

impl fmt::Display for Channel {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            Self::Ntfy => "ntfy",
            Self::Webhook => "webhook",
            Self::Email => "e-mail",
        })
    }
}

/// Why a notification did not get through, or why a channel cannot be set up.
///
/// Messages name the channel and the status or setting at fault, never a secret or a full
/// webhook URL.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotifyError {
    /// A setting is missing or does not parse; nothing was sent.
    #[error("invalid {setting}: {reason}")]
    BadConfig {
        /// The environment variable (or file key) at fault.
        setting: String,
        /// Why; never contains a secret's value.
        reason: String,
    },
    /// The receiver answered with a status that means "no" (for the webhook: after the
    /// retries it allows, or at once for a final 4xx).
    #[error("{channel} answered HTTP {status}: {body_excerpt}")]
    Status {
        /// Which channel.
        channel: Channel,
        /// The HTTP status.
        status: u16,
        /// The start of the reply body.
        body_excerpt: String,
    },
    /// The request did not reach the receiver or its reply did not come back whole.
    #[error("cannot reach the {channel} receiver: {reason}")]
    Transport {
        /// Which channel.
        channel: Channel,
        /// The transport error, with its causes.
        reason: String,
    },
    /// The URL was not requested: it names, or its host resolves to, an address that is not
    /// public, and `TESSERA_OUTBOUND_ALLOW` does not admit it (only for URLs an API caller
    /// chose: an ask's webhook and callback).
    #[error("the {channel} URL was not requested: {refused}")]
    Refused {
        /// Which channel.
        channel: Channel,
        /// Why.
        refused: crate::net::outbound::Refused,
    },
    /// The webhook was tried as often as its [`DeliveryPolicy`] allows; `last` is the final
    /// attempt's error.
    #[error("webhook delivery {delivery_id} gave up after {attempts} attempts: {last}")]
    GaveUp {
        /// The `X-Tessera-Delivery` id every attempt carried.
        delivery_id: uuid::Uuid,
        /// How many attempts were made.
        attempts: u32,
        /// Why the last one failed.
        last: Box<NotifyError>,
    },
    /// The message could not be built from the notification: a payload that does not
    /// serialize, an e-mail lettre refuses. Nothing was sent.
    #[error("cannot build the {channel} message: {reason}")]
    Message {
        /// Which channel.
        channel: Channel,
        /// What was refused.
        reason: String,
    },
    /// The SMTP server could not be reached or refused the message.
    #[error("the SMTP server did not take the e-mail: {reason}")]
    Smtp {
        /// lettre's description, with the SMTP reply code when there was one.
        reason: String,
    },
}

impl NotifyError {
    /// A [`NotifyError::BadConfig`] for `setting`.
    #[must_use]
    pub fn bad_config(setting: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::BadConfig {
            setting: setting.into(),
            reason: reason.into(),
        }
    }

    /// Whether trying again later may help: transport failures, 408, 429 and 5xx.
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Transport { .. } => true,
            Self::Status { status, .. } => is_retryable_status(*status),
            Self::GaveUp { last, .. } => last.is_retryable(),
            // A resolver's answer can change, but not within one delivery's retries.
            Self::Refused { .. }
            | Self::Smtp { .. }
            | Self::BadConfig { .. }
            | Self::Message { .. } => false,
        }
    }
}

/// 408, 429 and 5xx say "not now" rather than "no".
fn is_retryable_status(status: u16) -> bool {
    status == 408 || status == 429 || (500..600).contains(&status)
}

/// The outcome of one channel for one notification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelOutcome {
    /// Which channel.
    pub channel: Channel,
    /// `Ok` when the receiver acknowledged it.
    pub result: Result<()>,
}

/// What happened on every configured channel, in the order ntfy, webhook, e-mail.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// One outcome per configured channel; empty when none is configured.
    pub outcomes: Vec<ChannelOutcome>,
}

impl Report {
    /// Whether every configured channel acknowledged the notification (true when none is
    /// configured).
    #[must_use]
    pub fn all_delivered(&self) -> bool {
        self.outcomes.iter().all(|outcome| outcome.result.is_ok())
    }

    /// The channels that acknowledged the notification.
    #[must_use]
    pub fn delivered(&self) -> Vec<Channel> {
        self.outcomes
            .iter()
            .filter(|outcome| outcome.result.is_ok())
            .map(|outcome| outcome.channel)
            .collect()
    }

    /// The channels that failed, each with its error.
    #[must_use]
    pub fn failures(&self) -> Vec<(Channel, &NotifyError)> {
        self.outcomes
            .iter()
            .filter_map(|outcome| match &outcome.result {
                Ok(()) => None,
                Err(error) => Some((outcome.channel, error)),
            })
            .collect()
    }
}

/// Anything that can send a [`Notification`]: the real [`Notifier`] or, in tests, a
/// [`RecordingNotifier`]. Workflows hold an `Arc<dyn Notify>`.
#[async_trait::async_trait]
pub trait Notify: Send + Sync {
    /// Sends `notification` to every channel and reports each channel's outcome.
    async fn notify(&self, notification: &Notification) -> Report;
}

/// Sends `title` with `link` (a page waiting for a person) through `notifier`, when there is
/// one, and logs each failed channel once. Workflows call this from the step after a `ui`
/// step; a failed notification never fails the step, since the link is also on the run's page.
pub async fn send_link(
    notifier: Option<&std::sync::Arc<dyn Notify>>,
    title: &str,
    link: &str,
) -> Report {
    let Some(notifier) = notifier else {
        return Report::default();
    };
    let Ok(url) = url::Url::parse(link) else {
        return Report::default();
    };
    let report = notifier
        .notify(&Notification::new(title, "Your answer is requested.", url))
        .await;
    for (channel, error) in report.failures() {
        tracing::warn!(notify.channel = ?channel, error = %error, "notification failed");
    }
    report
}

/// Sends a notification to every configured channel, concurrently.
#[derive(Clone, Default)]
pub struct Notifier {
    ntfy: Option<NtfyClient>,
    webhook: Option<(url::Url, WebhookSender)>,
    email: Option<EmailSender>,
}

impl fmt::Debug for Notifier {
    // The webhook URL's path is often its credential, so only its origin is printed.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Notifier")
            .field("ntfy", &self.ntfy)
            .field(
                "webhook",
                &self
                    .webhook
                    .as_ref()
                    .map(|(url, sender)| (redacted_url(url), sender)),
            )
            .field("email", &self.email)
            .finish()
    }
}

impl Notifier {
    /// Builds the clients for every channel `config` configures.
    ///
    /// # Errors
    /// Returns [`NotifyError::BadConfig`] when an HTTP client cannot be built or
    /// `TESSERA_WEBHOOK_URL` is set without `TESSERA_WEBHOOK_SECRET`.
    pub fn from_config(config: &NotifyConfig) -> Result<Self> {
        let ntfy = config
            .ntfy
            .clone()
            .map(|ntfy| NtfyClient::new(ntfy, config.timeout))
            .transpose()?;
        let webhook = match &config.webhook_url {
            Some(url) => {
                let sender = config
                    .webhook_sender(SigningPurpose::Notification)?
                    .ok_or_else(|| {
                        NotifyError::bad_config(
                            "TESSERA_WEBHOOK_SECRET",
                            "must be set when TESSERA_WEBHOOK_URL is",
                        )
                    })?;
                Some((url.clone(), sender))
            }
            None => None,
        };
        let email = config
            .email
            .clone()
            .map(|email| EmailSender::new(email, config.timeout))
            .transpose()?;
        Ok(Self {
            ntfy,
            webhook,
            email,
        })
    }

    /// A notifier with these channels, for callers that build clients themselves.
    #[must_use]
    pub fn new(
        ntfy: Option<NtfyClient>,
        webhook: Option<(url::Url, WebhookSender)>,
        email: Option<EmailSender>,
    ) -> Self {
        Self {
            ntfy,
            webhook,
            email,
        }
    }

    /// The configured channels, in the order the [`Report`] lists them.
    #[must_use]
    pub fn channels(&self) -> Vec<Channel> {
        let mut channels = Vec::new();
        if self.ntfy.is_some() {
            channels.push(Channel::Ntfy);
        }
        if self.webhook.is_some() {
            channels.push(Channel::Webhook);
        }
        if self.email.is_some() {
            channels.push(Channel::Email);
        }
        channels
    }

    /// Sends `notification` to every configured channel at once and waits for all of them; a
    /// slow or failing channel neither delays nor stops the others.
    pub async fn send(&self, notification: &Notification) -> Report {
        let ntfy = async {
            match &self.ntfy {
                Some(client) => Some(ChannelOutcome {
                    channel: Channel::Ntfy,
                    result: client.publish(notification).await,
                }),
                None => None,
            }
        };
        let webhook = async {
            match &self.webhook {
                Some((url, sender)) => Some(ChannelOutcome {
                    channel: Channel::Webhook,
                    result: sender.send_json(url, notification).await.map(|_| ()),
                }),
                None => None,
            }
        };
        let email = async {
            match &self.email {
                Some(sender) => Some(ChannelOutcome {
                    channel: Channel::Email,
                    result: sender.send(notification).await,
                }),
                None => None,
            }
        };
        let (ntfy, webhook, email) = tokio::join!(ntfy, webhook, email);
        Report {
            outcomes: [ntfy, webhook, email].into_iter().flatten().collect(),
        }
    }
}

#[async_trait::async_trait]
impl Notify for Notifier {
    async fn notify(&self, notification: &Notification) -> Report {
        self.send(notification).await
    }
}

/// The HTTP client ntfy and the webhook use: rustls, no redirects (a redirected POST would
/// turn into a GET and hide a wrong URL), and `timeout` per request.
fn http_client(timeout: Duration) -> Result<reqwest::Client> {
    client_builder(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|error| NotifyError::bad_config("http client", describe(error)))
}

/// What every notification client starts from: rustls, `timeout` to connect and per request.
fn client_builder(timeout: Duration) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .connect_timeout(timeout)
        .timeout(timeout)
        .user_agent(concat!("tessera/", env!("CARGO_PKG_VERSION")))
}

/// How much of a receiver's reply is read: enough for an excerpt, never a whole body someone
/// else chose the size of.
const REPLY_READ_LIMIT: usize = 4 * 1024;

/// The start of a reply body, read within [`REPLY_READ_LIMIT`], as an [`excerpt`]; empty when it
/// cannot be read.
async fn reply_excerpt(response: reqwest::Response) -> String {
    crate::net::body::read_capped(response, REPLY_READ_LIMIT)
        .await
        .map(|read| excerpt(&read.text()))
        .unwrap_or_default()
}

/// The error and its causes on one line (reqwest's own message omits "connection refused").
/// URLs are stripped: a webhook URL may carry a token.
fn describe(error: reqwest::Error) -> String {
    crate::util::causes::on_one_line(&error.without_url())
}

/// The first [`EXCERPT_CHARS`] characters of a reply body, on one line.
fn excerpt(body: &str) -> String {
    let mut text: String = body.chars().take(EXCERPT_CHARS).map(on_one_line).collect();
    if body.chars().count() > EXCERPT_CHARS {
        text.push('…');
    }
    text.trim().to_owned()
}

/// A character as a one-line header or log excerpt may carry it: a control character (a line
/// break, a tab, an escape) becomes a space.
pub(crate) fn on_one_line(character: char) -> char {
    if character.is_control() {
        ' '
    } else {
        character
    }
}

/// A URL as it may be shown: scheme, host and port only, since the path of a webhook URL is
/// often its secret.
fn redacted_url(url: &url::Url) -> String {
    format!("{}/…", url.origin().ascii_serialization())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link() -> anyhow::Result<url::Url> {
        Ok(url::Url::parse("https://tessera.example/p/abc")?)
    }

    #[test]
    fn priorities_parse_from_numbers_and_names() -> Result<()> {
        assert_eq!("1".parse::<Priority>()?, Priority::Min);
        assert_eq!("LOW".parse::<Priority>()?, Priority::Low);
        assert_eq!(" default ".parse::<Priority>()?, Priority::Default);
        assert_eq!("4".parse::<Priority>()?, Priority::High);
        assert_eq!("max".parse::<Priority>()?, Priority::Urgent);
        assert_eq!(Priority::Urgent.number(), 5);
        assert!("6".parse::<Priority>().is_err());
        Ok(())
    }

    #[test]
    fn a_notification_serializes_with_a_lowercase_priority() -> anyhow::Result<()> {
        let notification = Notification::new("Title", "Body", link()?)
            .with_priority(Priority::High)
            .with_tags(["inbox"]);
        let json = serde_json::to_value(&notification)?;
        assert_eq!(json["priority"], "high");
        assert_eq!(json["link"], "https://tessera.example/p/abc");
        assert_eq!(json["tags"][0], "inbox");
        Ok(())
    }

    #[test]
    fn only_not_now_statuses_are_retryable() {
        let status = |status| NotifyError::Status {
            channel: Channel::Webhook,
            status,
            body_excerpt: String::new(),
        };
        for retryable in [408, 429, 500, 503] {
            assert!(status(retryable).is_retryable(), "{retryable}");
        }
        for fatal in [400, 401, 404, 410, 422] {
            assert!(!status(fatal).is_retryable(), "{fatal}");
        }
    }

    #[test]
    fn a_report_lists_failures_without_hiding_successes() {
        let report = Report {
            outcomes: vec![
                ChannelOutcome {
                    channel: Channel::Ntfy,
                    result: Ok(()),
                },
                ChannelOutcome {
                    channel: Channel::Email,
                    result: Err(NotifyError::Smtp {
                        reason: "refused".into(),
                    }),
                },
            ],
        };
        assert!(!report.all_delivered());
        assert_eq!(report.delivered(), vec![Channel::Ntfy]);
        assert_eq!(report.failures().len(), 1);
        assert_eq!(report.failures()[0].0, Channel::Email);
    }

    #[tokio::test]
    async fn a_notifier_without_channels_reports_nothing() -> anyhow::Result<()> {
        let notifier = Notifier::from_config(&NotifyConfig::default())?;
        assert!(notifier.channels().is_empty());
        let report = notifier.send(&Notification::new("t", "m", link()?)).await;
        assert!(report.outcomes.is_empty());
        assert!(report.all_delivered());
        Ok(())
    }

    #[test]
    fn a_notifier_prints_no_webhook_path_or_secret() -> anyhow::Result<()> {
        let config = NotifyConfig {
            webhook_url: Some(url::Url::parse(
                "https://hooks.example.com/T0/B1/tokenpath",
            )?),
            webhook_secret: Some(tessera_settings::Secret::new("whsec-0123456789abcdef")),
            ..NotifyConfig::default()
        };
        let notifier = Notifier::from_config(&config)?;
        assert_eq!(notifier.channels(), vec![Channel::Webhook]);
        let printed = format!("{notifier:?}");
        assert!(!printed.contains("tokenpath"), "{printed}");
        assert!(!printed.contains("whsec-"), "{printed}");
        Ok(())
    }

    #[test]
    fn excerpts_are_one_short_line() {
        assert_eq!(excerpt("a\nb"), "a b");
        let long = "x".repeat(EXCERPT_CHARS + 10);
        assert!(excerpt(&long).ends_with('…'));
    }

    #[test]
    fn redacted_urls_keep_only_the_origin() -> anyhow::Result<()> {
        let url = url::Url::parse("https://hooks.example.com:8443/services/T0/B1/secret")?;
        assert_eq!(redacted_url(&url), "https://hooks.example.com:8443/…");
        Ok(())
    }
}
