//! [`NotifyConfig`]: which notification channels are on, read from settings.
//!
//! A channel is on when its first setting is set (`TESSERA_NTFY_URL`, `TESSERA_WEBHOOK_URL`,
//! `TESSERA_SMTP_HOST`); the others refine it, and setting one without its channel's first is
//! an error, because it is most likely a typo. Values come from the environment, then from the
//! `tessera.toml` key, then the default ([`NotifyConfig::from_sources`]), or from any lookup by
//! variable name ([`NotifyConfig::from_lookup`]), which is how tests build a configuration in
//! code. An empty value counts as unset. A bad value is a [`NotifyError::BadConfig`] naming
//! the setting (and the file key when it came from the file); secrets are never echoed.
//!
//! | env var | `tessera.toml` key | default |
//! |---|---|---|
//! | `TESSERA_NTFY_URL` | `ntfy_url` | unset: no ntfy. The server with the topic, e.g. `https://ntfy.sh/my-topic` |
//! | `TESSERA_NTFY_TOKEN` | `ntfy_token` | unset: publish without `Authorization` (secret) |
//! | `TESSERA_WEBHOOK_URL` | `webhook_url` | unset: no webhook. An http(s) URL |
//! | `TESSERA_WEBHOOK_SECRET` | `webhook_secret` | unset; required with `TESSERA_WEBHOOK_URL`, at least 16 characters; each signing purpose — this webhook, ask recipients' webhooks, asks callbacks — signs with its own key derived from it (`signing.rs`) (secret) |
//! | `TESSERA_WEBHOOK_MAX_ATTEMPTS` | `webhook_max_attempts` | `6` (1 to 20, the first included) |
//! | `TESSERA_WEBHOOK_BASE_DELAY_MS` | `webhook_base_delay_ms` | `1000` (first retry wait before jitter; doubles each time, at most 60 s) |
//! | `TESSERA_SMTP_HOST` | `smtp_host` | unset: no e-mail |
//! | `TESSERA_SMTP_PORT` | `smtp_port` | `587` for `starttls`, `465` for `tls`, `25` for `none` |
//! | `TESSERA_SMTP_USERNAME` | `smtp_username` | unset: no SMTP AUTH |
//! | `TESSERA_SMTP_PASSWORD` | `smtp_password` | unset; required with `TESSERA_SMTP_USERNAME` (secret) |
//! | `TESSERA_SMTP_TLS` | `smtp_tls` | `starttls` (or `tls`, or `none` for a local relay) |
//! | `TESSERA_SMTP_FROM` | `smtp_from` | required with `TESSERA_SMTP_HOST`, e.g. `Tessera <tessera@example.com>` |
//! | `TESSERA_NOTIFY_EMAIL_TO` | `notify_email_to` | required with `TESSERA_SMTP_HOST`; comma-separated addresses |
//! | `TESSERA_NOTIFY_TIMEOUT_SECS` | `notify_timeout_secs` | `10` (per ntfy request, webhook attempt and SMTP command) |
//! | `TESSERA_ASK_NTFY_TOPICS` | `ask_ntfy_topics` | unset: an ask may name no topic. Comma-separated topics on the `TESSERA_NTFY_URL` server |
//! | `TESSERA_ASK_EMAIL_TO` | `ask_email_to` | unset: an ask may name no address. Comma-separated addresses, or `@domain` for a whole domain, that an ask's `notify.email` and `assignees` may name (needs `TESSERA_SMTP_HOST`) |
//! | `TESSERA_ASK_WEBHOOK_URLS` | `ask_webhook_urls` | unset: an ask may name no webhook. Comma-separated URL prefixes (needs `TESSERA_WEBHOOK_SECRET`, which signs them) |

use std::{fmt, time::Duration};

use clap::Args;
use lettre::message::{Mailbox, Mailboxes};

use super::{
    email::{EmailConfig, SmtpLogin, SmtpTls},
    ntfy::NtfyConfig,
    recipients::RecipientAllowlist,
    redacted_url,
    signing::{SigningKey, SigningPurpose},
    webhook::{DeliveryPolicy, WebhookSender},
    NotifyError,
};
use tessera_settings::{parse, Secret, Sources};

/// The longest base delay accepted, in milliseconds (ten minutes).
const BASE_DELAY_LIMIT_MS: u64 = 600_000;
/// The default timeout per request, attempt or SMTP command.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Every notification setting as declared, for `--help`, the `tessera.toml` keys and
/// [`NotifyConfig`].
// Each field's doc comment is its `--help` line, printed as written: no Markdown.
#[allow(clippy::doc_markdown)]
#[derive(Args, Debug)]
pub struct NotifySettings {
    /// ntfy server and topic to publish to, e.g. https://ntfy.sh/my-topic (unset: no ntfy)
    #[arg(long = "ntfy_url", env = "TESSERA_NTFY_URL", value_parser = parse::trimmed)]
    ntfy_url: Option<String>,
    /// ntfy access token, sent as Authorization: Bearer
    #[arg(long = "ntfy_token", env = "TESSERA_NTFY_TOKEN", hide_env_values = true,
          value_parser = parse::secret(1))]
    ntfy_token: Option<Secret>,
    /// URL that receives each notification as signed JSON (unset: no webhook)
    #[arg(long = "webhook_url", env = "TESSERA_WEBHOOK_URL", hide_env_values = true,
          value_parser = webhook_url)]
    webhook_url: Option<url::Url>,
    /// HMAC-SHA256 key for X-Tessera-Signature, at least 16 characters (required with
    /// TESSERA_WEBHOOK_URL)
    #[arg(long = "webhook_secret", env = "TESSERA_WEBHOOK_SECRET", hide_env_values = true,
          value_parser = parse::secret(16))]
    webhook_secret: Option<Secret>,
    /// webhook attempts in all, 1 to 20
    #[arg(long = "webhook_max_attempts", env = "TESSERA_WEBHOOK_MAX_ATTEMPTS",
          default_value = "6", value_parser = parse::whole(1..=20, ""))]
    webhook_max_attempts: u64,
    /// milliseconds to wait before the first webhook retry, doubled after each
    #[arg(long = "webhook_base_delay_ms", env = "TESSERA_WEBHOOK_BASE_DELAY_MS",
          default_value = "1000",
          value_parser = parse::whole(0..=BASE_DELAY_LIMIT_MS, "milliseconds"))]
    webhook_base_delay_ms: u64,
    /// SMTP server host name (unset: no e-mail)
    #[arg(long = "smtp_host", env = "TESSERA_SMTP_HOST", value_parser = parse::trimmed)]
    smtp_host: Option<String>,
    /// SMTP server port (unset: 587 for starttls, 465 for tls, 25 for none)
    #[arg(long = "smtp_port", env = "TESSERA_SMTP_PORT", value_parser = port)]
    smtp_port: Option<u16>,
    /// SMTP login name (unset: no login)
    #[arg(long = "smtp_username", env = "TESSERA_SMTP_USERNAME", value_parser = parse::trimmed)]
    smtp_username: Option<String>,
    /// SMTP password (required with TESSERA_SMTP_USERNAME)
    #[arg(long = "smtp_password", env = "TESSERA_SMTP_PASSWORD", hide_env_values = true,
          value_parser = |raw: &str| Ok::<_, String>(Secret::new(raw)))]
    smtp_password: Option<Secret>,
    /// starttls (required), tls (SMTPS) or none (local relay only)
    #[arg(long = "smtp_tls", env = "TESSERA_SMTP_TLS", default_value = "starttls",
          value_parser = smtp_tls)]
    smtp_tls: SmtpTls,
    /// sender address, e.g. Tessera <tessera@example.com> (required with TESSERA_SMTP_HOST)
    #[arg(long = "smtp_from", env = "TESSERA_SMTP_FROM", value_parser = mailbox)]
    smtp_from: Option<Mailbox>,
    /// comma-separated addresses that receive notifications (required with TESSERA_SMTP_HOST)
    #[arg(long = "notify_email_to", env = "TESSERA_NOTIFY_EMAIL_TO", value_parser = mailboxes)]
    notify_email_to: Option<Mailboxes>,
    /// seconds per ntfy request, webhook attempt or SMTP command
    #[arg(long = "notify_timeout_secs", env = "TESSERA_NOTIFY_TIMEOUT_SECS",
          default_value = "10", value_parser = seconds_above_zero)]
    notify_timeout_secs: Duration,
    /// comma-separated ntfy topics (on the TESSERA_NTFY_URL server) an ask's notify may name
    /// (unset: asks name no topic)
    #[arg(long = "ask_ntfy_topics", env = "TESSERA_ASK_NTFY_TOPICS", value_parser = topics)]
    ask_ntfy_topics: Option<Entries>,
    /// comma-separated addresses, or @domain, an ask's notify and assignees (and YAML ui
    /// assignees) may name (needs TESSERA_SMTP_HOST; unset: asks name no address)
    #[arg(long = "ask_email_to", env = "TESSERA_ASK_EMAIL_TO", value_parser = addresses_or_domains)]
    ask_email_to: Option<Entries>,
    /// comma-separated URL prefixes an ask's notify webhook must start with (needs
    /// TESSERA_WEBHOOK_SECRET; unset: asks name no webhook)
    #[arg(long = "ask_webhook_urls", env = "TESSERA_ASK_WEBHOOK_URLS", value_parser = webhook_prefixes)]
    ask_webhook_urls: Option<Entries>,
}

/// The entries of a comma-separated list setting, checked.
#[derive(Clone, Debug)]
struct Entries(Vec<String>);

/// The notification channels and how they behave.
#[derive(Clone, PartialEq, Eq)]
pub struct NotifyConfig {
    /// The ntfy topic, when ntfy is on.
    pub ntfy: Option<NtfyConfig>,
    /// The notification webhook, when it is on.
    pub webhook_url: Option<url::Url>,
    /// The secret each signing purpose's key is derived from (`signing.rs`).
    pub webhook_secret: Option<Secret>,
    /// How webhook deliveries are retried; its `attempt_timeout` is [`NotifyConfig::timeout`].
    pub delivery: DeliveryPolicy,
    /// The SMTP server and recipients, when e-mail is on.
    pub email: Option<EmailConfig>,
    /// How long one ntfy request or SMTP command may take.
    pub timeout: Duration,
    /// The recipients an ask may name itself (`"notify": {…}`); empty allows none.
    pub ask_recipients: RecipientAllowlist,
}

impl Default for NotifyConfig {
    /// No channel on, default retries and timeout.
    fn default() -> Self {
        Self {
            ntfy: None,
            webhook_url: None,
            webhook_secret: None,
            delivery: DeliveryPolicy {
                attempt_timeout: DEFAULT_TIMEOUT,
                ..DeliveryPolicy::default()
            },
            email: None,
            timeout: DEFAULT_TIMEOUT,
            ask_recipients: RecipientAllowlist::default(),
        }
    }
}

impl fmt::Debug for NotifyConfig {
    // A webhook URL's path is often its credential, so only its origin is printed.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("NotifyConfig")
            .field("ntfy", &self.ntfy)
            .field("webhook_url", &self.webhook_url.as_ref().map(redacted_url))
            .field("webhook_secret", &self.webhook_secret)
            .field("delivery", &self.delivery)
            .field("email", &self.email)
            .field("timeout", &self.timeout)
            .field("ask_recipients", &self.ask_recipients)
            .finish()
    }
}

impl NotifyConfig {
    /// Builds the configuration from the environment and `tessera.toml` values in `sources`
    /// (environment first); errors name the file key when the value came from the file.
    ///
    /// # Errors
    /// Returns the first invalid setting as a [`NotifyError::BadConfig`] naming it.
    pub fn from_sources(sources: &Sources) -> Result<Self, NotifyError> {
        let settings: NotifySettings = sources
            .read()
            .map_err(|invalid| NotifyError::bad_config(invalid.setting, invalid.reason))?;
        Self::build(settings, &|env| sources.name_of::<NotifySettings>(env))
    }

    /// Builds the configuration from `lookup`, which answers a variable name (as in the table
    /// above) with its value; tests pass a map, `main` may pass `std::env::var`.
    ///
    /// # Errors
    /// Returns the first invalid setting as a [`NotifyError::BadConfig`] naming it.
    pub fn from_lookup(lookup: &impl Fn(&str) -> Option<String>) -> Result<Self, NotifyError> {
        Self::from_sources(&Sources::from_lookup::<NotifySettings>(lookup))
    }

    /// The sender that signs with `purpose`'s key, derived from `TESSERA_WEBHOOK_SECRET`
    /// (`signing.rs`); `None` when no secret is configured.
    ///
    /// # Errors
    /// Returns [`NotifyError::BadConfig`] when the HTTP client cannot be built.
    pub fn webhook_sender(
        &self,
        purpose: SigningPurpose,
    ) -> Result<Option<WebhookSender>, NotifyError> {
        self.webhook_secret
            .as_ref()
            .map(|secret| WebhookSender::new(SigningKey::derive(secret, purpose), self.delivery))
            .transpose()
    }

    /// The channels the declared settings turn on, checked against each other; `name` gives
    /// a variable the name an error about it shows.
    fn build(settings: NotifySettings, name: &dyn Fn(&str) -> String) -> Result<Self, NotifyError> {
        let bad = |env: &str, reason: &str| NotifyError::bad_config(name(env), reason);
        let needs = |env: &str, channel: &str| bad(env, &format!("is set but {channel} is not"));
        let timeout = settings.notify_timeout_secs;
        let ntfy = match &settings.ntfy_url {
            Some(url) => Some(
                NtfyConfig::new(url, settings.ntfy_token.clone())
                    .map_err(|error| renamed(error, &name("TESSERA_NTFY_URL")))?,
            ),
            None if settings.ntfy_token.is_some() => {
                return Err(needs("TESSERA_NTFY_TOKEN", "TESSERA_NTFY_URL"))
            }
            None => None,
        };
        if settings.webhook_url.is_some() && settings.webhook_secret.is_none() {
            return Err(NotifyError::bad_config(
                "TESSERA_WEBHOOK_SECRET",
                "must be set when TESSERA_WEBHOOK_URL is (receivers check the signature)",
            ));
        }
        let email = match &settings.smtp_host {
            Some(host) => Some(email_config(host, &settings, name)?),
            None => {
                let set = [
                    ("TESSERA_SMTP_PORT", settings.smtp_port.is_some()),
                    ("TESSERA_SMTP_USERNAME", settings.smtp_username.is_some()),
                    ("TESSERA_SMTP_PASSWORD", settings.smtp_password.is_some()),
                    ("TESSERA_SMTP_FROM", settings.smtp_from.is_some()),
                    (
                        "TESSERA_NOTIFY_EMAIL_TO",
                        settings.notify_email_to.is_some(),
                    ),
                ];
                if let Some((env, _)) = set.into_iter().find(|(_, set)| *set) {
                    return Err(needs(env, "TESSERA_SMTP_HOST"));
                }
                None
            }
        };
        let mut ask_recipients = RecipientAllowlist::default();
        if let Some(Entries(topics)) = settings.ask_ntfy_topics {
            if ntfy.is_none() {
                return Err(needs("TESSERA_ASK_NTFY_TOPICS", "TESSERA_NTFY_URL"));
            }
            ask_recipients.ntfy_topics = topics;
        }
        if let Some(Entries(addresses)) = settings.ask_email_to {
            if email.is_none() {
                return Err(needs("TESSERA_ASK_EMAIL_TO", "TESSERA_SMTP_HOST"));
            }
            ask_recipients.email = addresses;
        }
        if let Some(Entries(prefixes)) = settings.ask_webhook_urls {
            if settings.webhook_secret.is_none() {
                return Err(bad(
                    "TESSERA_ASK_WEBHOOK_URLS",
                    "is set but TESSERA_WEBHOOK_SECRET (which signs them) is not",
                ));
            }
            ask_recipients.webhook_prefixes = prefixes;
        }
        Ok(Self {
            ntfy,
            webhook_url: settings.webhook_url,
            webhook_secret: settings.webhook_secret,
            delivery: DeliveryPolicy {
                max_attempts: u32::try_from(settings.webhook_max_attempts).unwrap_or(u32::MAX),
                base_delay: Duration::from_millis(settings.webhook_base_delay_ms),
                attempt_timeout: timeout,
                ..DeliveryPolicy::default()
            },
            email,
            timeout,
            ask_recipients,
        })
    }
}

/// The SMTP server and recipients once `TESSERA_SMTP_HOST` is set.
fn email_config(
    host: &str,
    settings: &NotifySettings,
    name: &dyn Fn(&str) -> String,
) -> Result<EmailConfig, NotifyError> {
    let login = match (&settings.smtp_username, &settings.smtp_password) {
        (Some(username), Some(password)) => Some(SmtpLogin {
            username: username.clone(),
            password: password.clone(),
        }),
        (Some(_), None) => {
            return Err(NotifyError::bad_config(
                "TESSERA_SMTP_PASSWORD",
                "must be set when TESSERA_SMTP_USERNAME is",
            ))
        }
        (None, Some(_)) => {
            return Err(NotifyError::bad_config(
                name("TESSERA_SMTP_PASSWORD"),
                "is set but TESSERA_SMTP_USERNAME is not",
            ))
        }
        (None, None) => None,
    };
    let from = settings.smtp_from.clone().ok_or_else(|| {
        NotifyError::bad_config(
            "TESSERA_SMTP_FROM",
            "must be set when TESSERA_SMTP_HOST is, e.g. Tessera <tessera@example.com>",
        )
    })?;
    let to = settings.notify_email_to.clone().ok_or_else(|| {
        NotifyError::bad_config(
            "TESSERA_NOTIFY_EMAIL_TO",
            "must be set when TESSERA_SMTP_HOST is",
        )
    })?;
    Ok(EmailConfig {
        host: host.to_owned(),
        port: settings
            .smtp_port
            .unwrap_or_else(|| settings.smtp_tls.default_port()),
        tls: settings.smtp_tls,
        login,
        from,
        to: to.into_iter().collect(),
    })
}

/// An http(s) URL; the reason never echoes it, since its path may be a credential.
fn webhook_url(raw: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(raw.trim()).map_err(|error| format!("not a URL ({error})"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err("must start with http:// or https://".to_owned());
    }
    Ok(url)
}

fn port(raw: &str) -> Result<u16, String> {
    raw.trim()
        .parse::<u16>()
        .ok()
        .filter(|port| *port != 0)
        .ok_or_else(|| format!("`{raw}` is not a port from 1 to 65535"))
}

fn smtp_tls(raw: &str) -> Result<SmtpTls, String> {
    raw.parse::<SmtpTls>().map_err(|error| match error {
        NotifyError::BadConfig { reason, .. } => reason,
        other => other.to_string(),
    })
}

fn mailbox(raw: &str) -> Result<Mailbox, String> {
    raw.trim()
        .parse::<Mailbox>()
        .map_err(|_| format!("`{raw}` is not an address, e.g. Tessera <tessera@example.com>"))
}

fn mailboxes(raw: &str) -> Result<Mailboxes, String> {
    raw.trim()
        .trim_end_matches(',')
        .parse::<Mailboxes>()
        .map_err(|_| format!("`{raw}` is not a comma-separated list of addresses"))
}

fn seconds_above_zero(raw: &str) -> Result<Duration, String> {
    raw.trim()
        .parse::<f64>()
        .ok()
        .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
        .filter(|timeout| !timeout.is_zero())
        .ok_or_else(|| format!("`{raw}` is not a number of seconds above 0"))
}

fn topics(raw: &str) -> Result<Entries, String> {
    let topics = parse::entries(raw);
    match topics.iter().find(|topic| topic.contains('/')) {
        Some(bad) => Err(format!("`{bad}` is not a topic (no `/`)")),
        None => Ok(Entries(topics)),
    }
}

fn addresses_or_domains(raw: &str) -> Result<Entries, String> {
    let entries = parse::entries(raw);
    let not_an_address = |entry: &&String| match entry.strip_prefix('@') {
        Some(domain) => domain.is_empty() || domain.contains('@'),
        None => entry.parse::<lettre::Address>().is_err(),
    };
    match entries.iter().find(not_an_address) {
        Some(bad) => Err(format!("`{bad}` is neither an address nor @domain")),
        None => Ok(Entries(entries)),
    }
}

/// Normalised, so `https://hooks.example.com` allows that host only, not a longer one.
fn webhook_prefixes(raw: &str) -> Result<Entries, String> {
    parse::entries(raw)
        .iter()
        .map(|entry| webhook_url(entry).map(String::from))
        .collect::<Result<_, _>>()
        .map(Entries)
}

/// The same configuration error, naming where the value came from.
fn renamed(error: NotifyError, name: &str) -> NotifyError {
    match error {
        NotifyError::BadConfig { reason, .. } => NotifyError::bad_config(name, reason),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let values: BTreeMap<String, String> = pairs
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect();
        move |name: &str| values.get(name).cloned()
    }

    fn error_text(pairs: &[(&str, &str)]) -> String {
        NotifyConfig::from_lookup(&lookup(pairs))
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn nothing_set_turns_every_channel_off() -> Result<(), NotifyError> {
        let config = NotifyConfig::from_lookup(&lookup(&[]))?;
        assert_eq!(config, NotifyConfig::default());
        assert!(config.ntfy.is_none() && config.webhook_url.is_none() && config.email.is_none());
        assert_eq!(config.timeout, Duration::from_secs(10));
        assert_eq!(config.delivery.max_attempts, 6);
        assert_eq!(config.delivery.base_delay, Duration::from_secs(1));
        Ok(())
    }

    #[test]
    fn every_channel_is_built_from_its_settings() -> anyhow::Result<()> {
        let config = NotifyConfig::from_lookup(&lookup(&[
            ("TESSERA_NTFY_URL", "https://ntfy.sh/tessera-demo"),
            ("TESSERA_NTFY_TOKEN", "tk_abc"),
            ("TESSERA_WEBHOOK_URL", "https://hooks.example.com/in"),
            ("TESSERA_WEBHOOK_SECRET", "0123456789abcdef"),
            ("TESSERA_WEBHOOK_MAX_ATTEMPTS", "3"),
            ("TESSERA_WEBHOOK_BASE_DELAY_MS", "5"),
            ("TESSERA_SMTP_HOST", "smtp.example.com"),
            ("TESSERA_SMTP_TLS", "tls"),
            ("TESSERA_SMTP_USERNAME", "mailer"),
            ("TESSERA_SMTP_PASSWORD", "pw"),
            ("TESSERA_SMTP_FROM", "Tessera <tessera@example.com>"),
            (
                "TESSERA_NOTIFY_EMAIL_TO",
                "ada@example.com, Bob <bob@example.com>",
            ),
            ("TESSERA_NOTIFY_TIMEOUT_SECS", "2.5"),
        ]))?;
        let ntfy = config.ntfy.as_ref().map(NtfyConfig::topic);
        assert_eq!(ntfy, Some("tessera-demo"));
        assert_eq!(
            config.webhook_url.as_ref().map(url::Url::as_str),
            Some("https://hooks.example.com/in")
        );
        assert_eq!(config.delivery.max_attempts, 3);
        assert_eq!(config.delivery.base_delay, Duration::from_millis(5));
        assert_eq!(config.delivery.attempt_timeout, Duration::from_millis(2500));
        let email = config
            .email
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("no email"))?;
        assert_eq!(email.port, 465);
        assert_eq!(email.tls, SmtpTls::Tls);
        assert_eq!(email.to.len(), 2);
        assert_eq!(
            email.login.as_ref().map(|login| login.username.as_str()),
            Some("mailer")
        );
        assert!(config
            .webhook_sender(SigningPurpose::Notification)?
            .is_some());
        Ok(())
    }

    #[test]
    fn bad_values_name_their_setting() {
        assert!(error_text(&[("TESSERA_NTFY_URL", "https://ntfy.sh")])
            .starts_with("invalid TESSERA_NTFY_URL: names no topic"));
        assert_eq!(
            error_text(&[("TESSERA_NOTIFY_TIMEOUT_SECS", "soon")]),
            "invalid TESSERA_NOTIFY_TIMEOUT_SECS: `soon` is not a number of seconds above 0"
        );
        assert_eq!(
            error_text(&[("TESSERA_WEBHOOK_MAX_ATTEMPTS", "0")]),
            "invalid TESSERA_WEBHOOK_MAX_ATTEMPTS: `0` must be a whole number from 1 to 20"
        );
        let smtp = |extra: (&'static str, &'static str)| {
            let mut pairs = vec![
                ("TESSERA_SMTP_HOST", "smtp.example.com"),
                ("TESSERA_SMTP_FROM", "tessera@example.com"),
                ("TESSERA_NOTIFY_EMAIL_TO", "ada@example.com"),
            ];
            pairs.retain(|(key, _)| *key != extra.0);
            pairs.push(extra);
            error_text(&pairs)
        };
        assert_eq!(
            smtp(("TESSERA_SMTP_PORT", "smtp")),
            "invalid TESSERA_SMTP_PORT: `smtp` is not a port from 1 to 65535"
        );
        assert_eq!(
            smtp(("TESSERA_SMTP_TLS", "ssl")),
            "invalid TESSERA_SMTP_TLS: `ssl` is not none, starttls or tls"
        );
        assert!(smtp(("TESSERA_SMTP_FROM", "not an address"))
            .starts_with("invalid TESSERA_SMTP_FROM: `not an address` is not an address"));
        assert!(smtp(("TESSERA_NOTIFY_EMAIL_TO", "ada@, @"))
            .starts_with("invalid TESSERA_NOTIFY_EMAIL_TO"));
        assert_eq!(
            smtp(("TESSERA_SMTP_USERNAME", "mailer")),
            "invalid TESSERA_SMTP_PASSWORD: must be set when TESSERA_SMTP_USERNAME is"
        );
    }

    #[test]
    fn a_webhook_needs_a_long_enough_secret() {
        assert!(
            error_text(&[("TESSERA_WEBHOOK_URL", "https://hooks.example.com/in")])
                .starts_with("invalid TESSERA_WEBHOOK_SECRET: must be set")
        );
        assert_eq!(
            error_text(&[("TESSERA_WEBHOOK_SECRET", "short")]),
            "invalid TESSERA_WEBHOOK_SECRET: must be at least 16 characters"
        );
    }

    #[test]
    fn a_setting_without_its_channel_is_an_error() {
        assert_eq!(
            error_text(&[("TESSERA_NTFY_TOKEN", "tk")]),
            "invalid TESSERA_NTFY_TOKEN: is set but TESSERA_NTFY_URL is not"
        );
        assert_eq!(
            error_text(&[("TESSERA_NOTIFY_EMAIL_TO", "ada@example.com")]),
            "invalid TESSERA_NOTIFY_EMAIL_TO: is set but TESSERA_SMTP_HOST is not"
        );
    }

    #[test]
    fn smtp_defaults_to_required_starttls_on_587() -> anyhow::Result<()> {
        let config = NotifyConfig::from_lookup(&lookup(&[
            ("TESSERA_SMTP_HOST", "smtp.example.com"),
            ("TESSERA_SMTP_FROM", "tessera@example.com"),
            ("TESSERA_NOTIFY_EMAIL_TO", "ada@example.com"),
        ]))?;
        let email = config.email.ok_or_else(|| anyhow::anyhow!("no email"))?;
        assert_eq!((email.tls, email.port), (SmtpTls::StartTls, 587));
        assert!(email.login.is_none());
        Ok(())
    }

    #[test]
    fn empty_values_count_as_unset() -> Result<(), NotifyError> {
        let config = NotifyConfig::from_lookup(&lookup(&[
            ("TESSERA_NTFY_URL", ""),
            ("TESSERA_NTFY_TOKEN", "  "),
        ]))?;
        assert!(config.ntfy.is_none());
        Ok(())
    }

    #[test]
    fn file_values_are_named_by_variable_and_key() {
        let sources = Sources {
            env: BTreeMap::new(),
            file: BTreeMap::from([
                ("smtp_host".to_owned(), "smtp.example.com".to_owned()),
                ("smtp_port".to_owned(), "lots".to_owned()),
                ("smtp_from".to_owned(), "a@example.com".to_owned()),
                ("notify_email_to".to_owned(), "b@example.com".to_owned()),
            ]),
        };
        let error = NotifyConfig::from_sources(&sources)
            .err()
            .map(|error| error.to_string());
        assert_eq!(
            error.as_deref(),
            Some("invalid TESSERA_SMTP_PORT (tessera.toml `smtp_port`): `lots` is not a port from 1 to 65535")
        );
    }

    #[test]
    fn secrets_and_webhook_paths_are_hidden_from_debug_output() -> Result<(), NotifyError> {
        let config = NotifyConfig::from_lookup(&lookup(&[
            (
                "TESSERA_WEBHOOK_URL",
                "https://hooks.example.com/T000/B000/tokenpath",
            ),
            ("TESSERA_WEBHOOK_SECRET", "whsec-very-secret-value"),
            ("TESSERA_NTFY_URL", "https://ntfy.sh/private-topic"),
            ("TESSERA_NTFY_TOKEN", "tk_private"),
        ]))?;
        let printed = format!("{config:?}");
        for hidden in ["tokenpath", "whsec-very", "private-topic", "tk_private"] {
            assert!(!printed.contains(hidden), "{hidden} in {printed}");
        }
        Ok(())
    }

    #[test]
    fn the_ask_recipient_allowlist_needs_its_channel_and_names_bad_entries() -> anyhow::Result<()> {
        let config = NotifyConfig::from_lookup(&lookup(&[
            ("TESSERA_NTFY_URL", "https://ntfy.example/alerts"),
            ("TESSERA_WEBHOOK_SECRET", "0123456789abcdef0123"),
            ("TESSERA_ASK_NTFY_TOPICS", "ops, on-call"),
            ("TESSERA_ASK_WEBHOOK_URLS", "https://hooks.example.com"),
        ]))?;
        assert_eq!(config.ask_recipients.ntfy_topics, ["ops", "on-call"]);
        assert_eq!(
            config.ask_recipients.webhook_prefixes,
            ["https://hooks.example.com/"],
            "normalised, so a longer host does not match"
        );
        assert!(error_text(&[("TESSERA_ASK_NTFY_TOPICS", "ops")])
            .contains("invalid TESSERA_ASK_NTFY_TOPICS: is set but TESSERA_NTFY_URL is not"));
        assert!(error_text(&[("TESSERA_ASK_EMAIL_TO", "a@example.com")])
            .contains("invalid TESSERA_ASK_EMAIL_TO: is set but TESSERA_SMTP_HOST is not"));
        let bad_url = error_text(&[
            ("TESSERA_WEBHOOK_SECRET", "0123456789abcdef0123"),
            ("TESSERA_ASK_WEBHOOK_URLS", "ftp://x"),
        ]);
        assert!(bad_url.contains("TESSERA_ASK_WEBHOOK_URLS"), "{bad_url}");
        Ok(())
    }

    #[test]
    fn every_setting_is_listed_once() {
        let settings = tessera_settings::settings_of::<NotifySettings>();
        for setting in &settings {
            let count = settings
                .iter()
                .filter(|other| other.env == setting.env || other.key == setting.key)
                .count();
            assert_eq!(count, 1, "{}", setting.env);
        }
        assert_eq!(settings.len(), 17);
    }
}
