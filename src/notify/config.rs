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
use tessera_settings::{Secret, Setting, Sources};

/// The most webhook attempts accepted.
const MAX_ATTEMPTS_LIMIT: u32 = 20;
/// The longest base delay accepted, in milliseconds (ten minutes).
const BASE_DELAY_LIMIT_MS: u64 = 600_000;
/// The shortest webhook secret accepted.
const MIN_SECRET_CHARS: usize = 16;
/// The default timeout per request, attempt or SMTP command.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Every notification setting, for `--help` and the `tessera.toml` keys.
pub const SETTINGS: &[Setting] = &[
    Setting {
        env: "TESSERA_NTFY_URL",
        key: "ntfy_url",
        default: "(unset: no ntfy)",
        help: "ntfy server and topic to publish to, e.g. https://ntfy.sh/my-topic",
        secret: false,
    },
    Setting {
        env: "TESSERA_NTFY_TOKEN",
        key: "ntfy_token",
        default: "(unset)",
        help: "ntfy access token, sent as Authorization: Bearer",
        secret: true,
    },
    Setting {
        env: "TESSERA_WEBHOOK_URL",
        key: "webhook_url",
        default: "(unset: no webhook)",
        help: "URL that receives each notification as signed JSON",
        secret: true,
    },
    Setting {
        env: "TESSERA_WEBHOOK_SECRET",
        key: "webhook_secret",
        default: "(unset; required with TESSERA_WEBHOOK_URL)",
        help: "HMAC-SHA256 key for X-Tessera-Signature, at least 16 characters",
        secret: true,
    },
    Setting {
        env: "TESSERA_WEBHOOK_MAX_ATTEMPTS",
        key: "webhook_max_attempts",
        default: "6",
        help: "webhook attempts in all, 1 to 20",
        secret: false,
    },
    Setting {
        env: "TESSERA_WEBHOOK_BASE_DELAY_MS",
        key: "webhook_base_delay_ms",
        default: "1000",
        help: "wait before the first webhook retry, doubled after each",
        secret: false,
    },
    Setting {
        env: "TESSERA_SMTP_HOST",
        key: "smtp_host",
        default: "(unset: no e-mail)",
        help: "SMTP server host name",
        secret: false,
    },
    Setting {
        env: "TESSERA_SMTP_PORT",
        key: "smtp_port",
        default: "587 (starttls), 465 (tls), 25 (none)",
        help: "SMTP server port",
        secret: false,
    },
    Setting {
        env: "TESSERA_SMTP_USERNAME",
        key: "smtp_username",
        default: "(unset: no login)",
        help: "SMTP login name",
        secret: false,
    },
    Setting {
        env: "TESSERA_SMTP_PASSWORD",
        key: "smtp_password",
        default: "(unset)",
        help: "SMTP password",
        secret: true,
    },
    Setting {
        env: "TESSERA_SMTP_TLS",
        key: "smtp_tls",
        default: "starttls",
        help: "starttls (required), tls (SMTPS) or none (local relay only)",
        secret: false,
    },
    Setting {
        env: "TESSERA_SMTP_FROM",
        key: "smtp_from",
        default: "(required with TESSERA_SMTP_HOST)",
        help: "sender address, e.g. Tessera <tessera@example.com>",
        secret: false,
    },
    Setting {
        env: "TESSERA_NOTIFY_EMAIL_TO",
        key: "notify_email_to",
        default: "(required with TESSERA_SMTP_HOST)",
        help: "comma-separated addresses that receive notifications",
        secret: false,
    },
    Setting {
        env: "TESSERA_NOTIFY_TIMEOUT_SECS",
        key: "notify_timeout_secs",
        default: "10",
        help: "seconds per ntfy request, webhook attempt or SMTP command",
        secret: false,
    },
    Setting {
        env: "TESSERA_ASK_NTFY_TOPICS",
        key: "ask_ntfy_topics",
        default: "(unset: asks name no topic)",
        help: "comma-separated ntfy topics (on the TESSERA_NTFY_URL server) an ask's notify may name",
        secret: false,
    },
    Setting {
        env: "TESSERA_ASK_EMAIL_TO",
        key: "ask_email_to",
        default: "(unset: asks name no address)",
        help: "comma-separated addresses, or @domain, an ask's notify and assignees (and YAML ui assignees) may name (needs TESSERA_SMTP_HOST)",
        secret: false,
    },
    Setting {
        env: "TESSERA_ASK_WEBHOOK_URLS",
        key: "ask_webhook_urls",
        default: "(unset: asks name no webhook)",
        help: "comma-separated URL prefixes an ask's notify webhook must start with (needs TESSERA_WEBHOOK_SECRET)",
        secret: false,
    },
];

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
        Self::build(&|env: &str| sources.lookup(SETTINGS, env))
    }

    /// Builds the configuration from `lookup`, which answers a variable name (as in the table
    /// above) with its value; tests pass a map, `main` may pass `std::env::var`.
    ///
    /// # Errors
    /// Returns the first invalid setting as a [`NotifyError::BadConfig`] naming it.
    pub fn from_lookup(lookup: &impl Fn(&str) -> Option<String>) -> Result<Self, NotifyError> {
        Self::build(&|env: &str| lookup(env).map(|value| (env.to_owned(), value)))
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

    fn build(raw: &dyn Fn(&str) -> Option<(String, String)>) -> Result<Self, NotifyError> {
        let lookup = |env: &str| raw(env).filter(|(_, value)| !value.trim().is_empty());
        let mut config = Self::default();

        if let Some((name, raw)) = lookup("TESSERA_NOTIFY_TIMEOUT_SECS") {
            config.timeout = parse_seconds(&name, &raw)?;
        }
        config.delivery.attempt_timeout = config.timeout;

        let ntfy_token = lookup("TESSERA_NTFY_TOKEN").map(|(_, raw)| Secret::new(raw.trim()));
        config.ntfy = match lookup("TESSERA_NTFY_URL") {
            Some((name, raw)) => {
                Some(NtfyConfig::new(&raw, ntfy_token).map_err(|error| renamed(error, &name))?)
            }
            None => {
                require_absent(&lookup, "TESSERA_NTFY_TOKEN", "TESSERA_NTFY_URL")?;
                None
            }
        };

        config.webhook_secret = match lookup("TESSERA_WEBHOOK_SECRET") {
            Some((name, raw)) if raw.trim().chars().count() < MIN_SECRET_CHARS => {
                return Err(NotifyError::bad_config(
                    name,
                    format!("must be at least {MIN_SECRET_CHARS} characters"),
                ));
            }
            Some((_, raw)) => Some(Secret::new(raw.trim())),
            None => None,
        };
        config.webhook_url = match lookup("TESSERA_WEBHOOK_URL") {
            Some((name, raw)) => Some(parse_webhook_url(&name, &raw)?),
            None => None,
        };
        if config.webhook_url.is_some() && config.webhook_secret.is_none() {
            return Err(NotifyError::bad_config(
                "TESSERA_WEBHOOK_SECRET",
                "must be set when TESSERA_WEBHOOK_URL is (receivers check the signature)",
            ));
        }
        if let Some((name, raw)) = lookup("TESSERA_WEBHOOK_MAX_ATTEMPTS") {
            config.delivery.max_attempts = raw
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|attempts| (1..=MAX_ATTEMPTS_LIMIT).contains(attempts))
                .ok_or_else(|| {
                    NotifyError::bad_config(
                        name,
                        format!("`{raw}` is not a whole number from 1 to {MAX_ATTEMPTS_LIMIT}"),
                    )
                })?;
        }
        if let Some((name, raw)) = lookup("TESSERA_WEBHOOK_BASE_DELAY_MS") {
            let millis = raw
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|millis| *millis <= BASE_DELAY_LIMIT_MS)
                .ok_or_else(|| {
                    NotifyError::bad_config(
                        name,
                        format!(
                            "`{raw}` is not a whole number of milliseconds up to \
                             {BASE_DELAY_LIMIT_MS}"
                        ),
                    )
                })?;
            config.delivery.base_delay = Duration::from_millis(millis);
        }

        config.email = match lookup("TESSERA_SMTP_HOST") {
            Some((_, host)) => Some(email_config(&lookup, host.trim())?),
            None => {
                for setting in [
                    "TESSERA_SMTP_PORT",
                    "TESSERA_SMTP_USERNAME",
                    "TESSERA_SMTP_PASSWORD",
                    "TESSERA_SMTP_TLS",
                    "TESSERA_SMTP_FROM",
                    "TESSERA_NOTIFY_EMAIL_TO",
                ] {
                    require_absent(&lookup, setting, "TESSERA_SMTP_HOST")?;
                }
                None
            }
        };
        config.ask_recipients = ask_recipients(&lookup, &config)?;
        Ok(config)
    }
}

/// The allowlist of recipients asks may name; each list needs the channel it goes through.
fn ask_recipients(
    lookup: &dyn Fn(&str) -> Option<(String, String)>,
    config: &NotifyConfig,
) -> Result<RecipientAllowlist, NotifyError> {
    let mut allowlist = RecipientAllowlist::default();
    if let Some((name, raw)) = lookup("TESSERA_ASK_NTFY_TOPICS") {
        if config.ntfy.is_none() {
            return Err(NotifyError::bad_config(
                name,
                "is set but TESSERA_NTFY_URL is not",
            ));
        }
        allowlist.ntfy_topics = RecipientAllowlist::entries(&raw);
        if let Some(bad) = allowlist
            .ntfy_topics
            .iter()
            .find(|topic| topic.contains('/'))
        {
            return Err(NotifyError::bad_config(
                name,
                format!("`{bad}` is not a topic (no `/`)"),
            ));
        }
    }
    if let Some((name, raw)) = lookup("TESSERA_ASK_EMAIL_TO") {
        if config.email.is_none() {
            return Err(NotifyError::bad_config(
                name,
                "is set but TESSERA_SMTP_HOST is not",
            ));
        }
        allowlist.email = RecipientAllowlist::entries(&raw);
        let not_an_address = |entry: &String| {
            let domain = entry.strip_prefix('@');
            match domain {
                Some(domain) => domain.is_empty() || domain.contains('@'),
                None => entry.parse::<lettre::Address>().is_err(),
            }
        };
        if let Some(bad) = allowlist.email.iter().find(|entry| not_an_address(entry)) {
            return Err(NotifyError::bad_config(
                name,
                format!("`{bad}` is neither an address nor @domain"),
            ));
        }
    }
    if let Some((name, raw)) = lookup("TESSERA_ASK_WEBHOOK_URLS") {
        if config.webhook_secret.is_none() {
            return Err(NotifyError::bad_config(
                name,
                "is set but TESSERA_WEBHOOK_SECRET (which signs them) is not",
            ));
        }
        // Normalised, so `https://hooks.example.com` allows that host only, not a longer one.
        allowlist.webhook_prefixes = RecipientAllowlist::entries(&raw)
            .iter()
            .map(|entry| parse_webhook_url(&name, entry).map(String::from))
            .collect::<Result<_, _>>()?;
    }
    Ok(allowlist)
}

fn email_config(
    lookup: &dyn Fn(&str) -> Option<(String, String)>,
    host: &str,
) -> Result<EmailConfig, NotifyError> {
    let tls = match lookup("TESSERA_SMTP_TLS") {
        Some((name, raw)) => raw
            .parse::<SmtpTls>()
            .map_err(|error| renamed(error, &name))?,
        None => SmtpTls::default(),
    };
    let port = match lookup("TESSERA_SMTP_PORT") {
        Some((name, raw)) => raw
            .trim()
            .parse::<u16>()
            .ok()
            .filter(|port| *port != 0)
            .ok_or_else(|| {
                NotifyError::bad_config(name, format!("`{raw}` is not a port from 1 to 65535"))
            })?,
        None => tls.default_port(),
    };
    let login = match (
        lookup("TESSERA_SMTP_USERNAME"),
        lookup("TESSERA_SMTP_PASSWORD"),
    ) {
        (Some((_, username)), Some((_, password))) => Some(SmtpLogin {
            username: username.trim().to_owned(),
            password: Secret::new(password),
        }),
        (Some(_), None) => {
            return Err(NotifyError::bad_config(
                "TESSERA_SMTP_PASSWORD",
                "must be set when TESSERA_SMTP_USERNAME is",
            ))
        }
        (None, Some((name, _))) => {
            return Err(NotifyError::bad_config(
                name,
                "is set but TESSERA_SMTP_USERNAME is not",
            ))
        }
        (None, None) => None,
    };
    let from = match lookup("TESSERA_SMTP_FROM") {
        Some((name, raw)) => raw.trim().parse::<Mailbox>().map_err(|_| {
            NotifyError::bad_config(
                name,
                format!("`{raw}` is not an address, e.g. Tessera <tessera@example.com>"),
            )
        })?,
        None => {
            return Err(NotifyError::bad_config(
                "TESSERA_SMTP_FROM",
                "must be set when TESSERA_SMTP_HOST is, e.g. Tessera <tessera@example.com>",
            ))
        }
    };
    let to: Vec<Mailbox> = match lookup("TESSERA_NOTIFY_EMAIL_TO") {
        Some((name, raw)) => raw
            .trim()
            .trim_end_matches(',')
            .parse::<Mailboxes>()
            .map_err(|_| {
                NotifyError::bad_config(
                    name,
                    format!("`{raw}` is not a comma-separated list of addresses"),
                )
            })?
            .into_iter()
            .collect(),
        None => {
            return Err(NotifyError::bad_config(
                "TESSERA_NOTIFY_EMAIL_TO",
                "must be set when TESSERA_SMTP_HOST is",
            ))
        }
    };
    Ok(EmailConfig {
        host: host.to_owned(),
        port,
        tls,
        login,
        from,
        to,
    })
}

/// An http(s) URL; the reason never echoes it, since its path may be a credential.
fn parse_webhook_url(name: &str, raw: &str) -> Result<url::Url, NotifyError> {
    let url = url::Url::parse(raw.trim())
        .map_err(|error| NotifyError::bad_config(name, format!("not a URL ({error})")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(NotifyError::bad_config(
            name,
            "must start with http:// or https://",
        ));
    }
    Ok(url)
}

fn parse_seconds(name: &str, raw: &str) -> Result<Duration, NotifyError> {
    raw.trim()
        .parse::<f64>()
        .ok()
        .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
        .filter(|timeout| !timeout.is_zero())
        .ok_or_else(|| {
            NotifyError::bad_config(name, format!("`{raw}` is not a number of seconds above 0"))
        })
}

/// An error for `setting` when it is set without the setting that turns its channel on.
fn require_absent(
    lookup: &dyn Fn(&str) -> Option<(String, String)>,
    setting: &str,
    channel_setting: &str,
) -> Result<(), NotifyError> {
    match lookup(setting) {
        Some((name, _)) => Err(NotifyError::bad_config(
            name,
            format!("is set but {channel_setting} is not"),
        )),
        None => Ok(()),
    }
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
            "invalid TESSERA_WEBHOOK_MAX_ATTEMPTS: `0` is not a whole number from 1 to 20"
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
        for setting in SETTINGS {
            let count = SETTINGS
                .iter()
                .filter(|other| other.env == setting.env)
                .count();
            assert_eq!(count, 1, "{}", setting.env);
        }
        assert_eq!(SETTINGS.len(), 17);
    }
}
