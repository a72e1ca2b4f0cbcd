//! [`AccessConfig`]: who may read what this server exposes, and for how long — the metrics
//! token, the admin session's lifetimes, and how long a submitted page's receipt stays readable.
//!
//! | env var | `tessera.toml` key | default |
//! |---|---|---|
//! | `TESSERA_METRICS_TOKEN` | `metrics_token` | unset: `/metrics` answers loopback clients only, and nobody with `TESSERA_BEHIND_PROXY` (secret, at least 16 characters) |
//! | `TESSERA_SESSION_LIFETIME_SECS` | `session_lifetime_secs` | `43200` (12 h from login, however active; the session layer's inactivity expiry, also 12 h, stays beside it) |
//! | `TESSERA_RECEIPT_LIFETIME_SECS` | `receipt_lifetime_secs` | `604800` (7 days after the answer) |
//! | `TESSERA_SIGN_IN_LINK_SECS` | `sign_in_link_secs` | `900` (a person's e-mailed sign-in link works once, for 15 minutes) |
//!
//! A person's session (signed in through an e-mailed link) lasts `TESSERA_SESSION_LIFETIME_SECS`
//! too.

use std::time::Duration;

use clap::Args;
use tessera_settings::parse;

use super::{ConfigError, Secret, Sources};

/// The longest duration accepted for any of these settings: ten years, in seconds.
const MAX_SECONDS: u64 = 10 * 365 * 24 * 3600;

/// An admin session's absolute lifetime when `TESSERA_SESSION_LIFETIME_SECS` is not set.
pub const DEFAULT_SESSION_LIFETIME: Duration = Duration::from_secs(12 * 3600);
/// How long a receipt stays readable when `TESSERA_RECEIPT_LIFETIME_SECS` is not set.
pub const DEFAULT_RECEIPT_LIFETIME: Duration = Duration::from_secs(7 * 24 * 3600);
/// How long a sign-in link works when `TESSERA_SIGN_IN_LINK_SECS` is not set.
pub const DEFAULT_SIGN_IN_LINK: Duration = Duration::from_secs(15 * 60);

/// These settings as declared, for `--help`, the `tessera.toml` keys and [`AccessConfig`].
// Each field's doc comment is its `--help` line, printed as written: no Markdown.
#[allow(clippy::doc_markdown)]
#[derive(Args, Debug)]
pub struct AccessSettings {
    /// bearer token a scraper sends to GET /metrics, at least 16 characters (unset: /metrics
    /// answers loopback clients only, none behind a proxy)
    #[arg(long = "metrics_token", env = "TESSERA_METRICS_TOKEN", hide_env_values = true,
          value_parser = parse::secret(16))]
    metrics_token: Option<Secret>,
    /// seconds an admin session lasts after login, however active (then log in again)
    #[arg(long = "session_lifetime_secs", env = "TESSERA_SESSION_LIFETIME_SECS",
          default_value = "43200", value_parser = parse::whole(1..=MAX_SECONDS, "seconds"))]
    session_lifetime_secs: u64,
    /// seconds a submitted page's receipt and downloads stay readable at its link
    #[arg(long = "receipt_lifetime_secs", env = "TESSERA_RECEIPT_LIFETIME_SECS",
          default_value = "604800", value_parser = parse::whole(1..=MAX_SECONDS, "seconds"))]
    receipt_lifetime_secs: u64,
    /// seconds a person's e-mailed sign-in link works (once)
    #[arg(long = "sign_in_link_secs", env = "TESSERA_SIGN_IN_LINK_SECS", default_value = "900",
          value_parser = parse::whole(1..=MAX_SECONDS, "seconds"))]
    sign_in_link_secs: u64,
}

/// Access to what the server exposes, and for how long.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessConfig {
    /// The bearer token `/metrics` requires; without one only loopback clients are answered.
    pub metrics_token: Option<Secret>,
    /// How long an admin (or a signed-in person's) session lasts after login, whatever its
    /// activity.
    pub session_lifetime: Duration,
    /// How long a submitted page's receipt (and its downloads) stays readable.
    pub receipt_lifetime: Duration,
    /// How long a person's e-mailed sign-in link works.
    pub sign_in_link: Duration,
}

impl Default for AccessConfig {
    fn default() -> Self {
        Self {
            metrics_token: None,
            session_lifetime: DEFAULT_SESSION_LIFETIME,
            receipt_lifetime: DEFAULT_RECEIPT_LIFETIME,
            sign_in_link: DEFAULT_SIGN_IN_LINK,
        }
    }
}

impl AccessConfig {
    /// Reads these settings from the environment, then `tessera.toml`, then the defaults.
    ///
    /// # Errors
    /// The first invalid setting, as a [`ConfigError::Invalid`] naming it (and the file key when
    /// the value came from the file); a token's value is never echoed.
    pub fn from_sources(sources: &Sources) -> Result<Self, ConfigError> {
        let settings: AccessSettings = sources.read()?;
        Ok(Self {
            metrics_token: settings.metrics_token,
            session_lifetime: Duration::from_secs(settings.session_lifetime_secs),
            receipt_lifetime: Duration::from_secs(settings.receipt_lifetime_secs),
            sign_in_link: Duration::from_secs(settings.sign_in_link_secs),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources(env: &[(&str, &str)], file: &[(&str, &str)]) -> Sources {
        Sources::from_pairs(env, file)
    }

    #[test]
    fn sessions_last_twelve_hours_receipts_a_week_and_metrics_need_no_token_by_default(
    ) -> Result<(), ConfigError> {
        let config = AccessConfig::from_sources(&Sources::default())?;
        assert_eq!(config, AccessConfig::default());
        assert_eq!(config.session_lifetime, Duration::from_secs(43_200));
        assert_eq!(config.receipt_lifetime, Duration::from_secs(604_800));
        assert!(config.metrics_token.is_none());
        Ok(())
    }

    #[test]
    fn values_come_from_the_environment_then_the_file_and_bad_ones_name_the_setting(
    ) -> Result<(), ConfigError> {
        let config = AccessConfig::from_sources(&sources(
            &[("TESSERA_SESSION_LIFETIME_SECS", "60")],
            &[
                ("session_lifetime_secs", "90"),
                ("receipt_lifetime_secs", "3600"),
                ("metrics_token", "scrape-0123456789abcdef"),
            ],
        ))?;
        assert_eq!(config.session_lifetime, Duration::from_secs(60));
        assert_eq!(config.receipt_lifetime, Duration::from_secs(3600));
        assert_eq!(
            config.metrics_token.as_ref().map(Secret::expose),
            Some("scrape-0123456789abcdef")
        );
        let error =
            AccessConfig::from_sources(&sources(&[("TESSERA_METRICS_TOKEN", "short")], &[]))
                .err()
                .map(|error| error.to_string());
        assert_eq!(
            error.as_deref(),
            Some("invalid TESSERA_METRICS_TOKEN: must be at least 16 characters")
        );
        let error = AccessConfig::from_sources(&sources(&[], &[("receipt_lifetime_secs", "0")]))
            .err()
            .map(|error| error.to_string());
        assert!(
            error.as_deref().is_some_and(|text| text.starts_with(
                "invalid TESSERA_RECEIPT_LIFETIME_SECS (tessera.toml `receipt_lifetime_secs`)"
            )),
            "{error:?}"
        );
        Ok(())
    }
}
