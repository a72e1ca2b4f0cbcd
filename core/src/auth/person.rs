//! A person's sign-in (DESIGN.md §15): a single-use link e-mailed to their address, no password.
//!
//! Who may sign in: an address that is an assignee of some ask, answered or not — the inbox
//! has nothing for anyone else, and the operator's allowlist (`TESSERA_ASK_EMAIL_TO`) may be a
//! whole domain, which would let a stranger make the server mail any colleague. The sign-in
//! form answers the same whatever the address: looking the address up, storing the link and
//! mailing it all happen after the answer ([`SignInMailer::send_in_background`]), so neither the
//! page nor its timing says whether an address is known.
//!
//! A link is 192 random bits (the shape of page links), stored as its SHA-256 only; it signs
//! in once, until `TESSERA_SIGN_IN_LINK_SECS` after it was sent. A signed-in person holds a
//! [`PersonGrant`] in their session, never an admin's grant: the two never share a session.
//! No HTTP here: `http/sign_in.rs` answers the forms.

use std::{net::IpAddr, num::NonZeroU32, str::FromStr as _, sync::Arc, time::Duration};

use governor::{clock::DefaultClock, state::keyed::DefaultKeyedStateStore, Quota, RateLimiter};

use super::throttle::counted;
use crate::{
    config::Config,
    notify::{AskRecipients, Notification, Notifier, Notify as _},
    pages::token::PageToken,
    store::{now_ms, Store},
};

/// The longest address accepted (RFC 5321's path limit).
const MAX_ADDRESS_CHARS: usize = 254;

/// An e-mail address as typed into the sign-in form, checked and lowered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PersonAddress(String);

impl PersonAddress {
    /// Parses an address: one `local@domain` that lettre accepts (so no line breaks or other
    /// header syntax), lowered (assignees are compared without case).
    ///
    /// # Errors
    /// A sentence for the person when it is not an address.
    pub fn parse(raw: &str) -> Result<Self, &'static str> {
        let trimmed = raw.trim();
        if trimmed.is_empty()
            || trimmed.chars().count() > MAX_ADDRESS_CHARS
            || trimmed
                .chars()
                .any(|char| char.is_control() || char.is_whitespace())
            || lettre::Address::from_str(trimmed).is_err()
        {
            return Err("Type one e-mail address, like ann@example.com.");
        }
        Ok(Self(trimmed.to_ascii_lowercase()))
    }

    /// The address.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What a signed-in person's session holds: who, and since when.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PersonGrant {
    /// The address the link was sent to.
    pub email: String,
    /// Sign-in time, unix ms.
    pub since_ms: i64,
}

impl PersonGrant {
    /// Whether the grant still holds at `now_ms`: younger than `lifetime`, however active.
    #[must_use]
    pub fn holds(&self, now_ms: i64, lifetime: Duration) -> bool {
        let lifetime_ms = i64::try_from(lifetime.as_millis()).unwrap_or(i64::MAX);
        (0..lifetime_ms).contains(&now_ms.saturating_sub(self.since_ms))
    }
}

type Keyed<K> = RateLimiter<K, DefaultKeyedStateStore<K>, DefaultClock>;

/// Sign-in requests per client and per address, in this process's memory (as the login
/// throttle). A client over its limit is told to wait; an address over its limit gets the same
/// answer as always and no mail, so the limit says nothing about the address either.
pub struct SignInThrottle {
    per_client: Keyed<IpAddr>,
    per_address: Keyed<String>,
}

impl std::fmt::Debug for SignInThrottle {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SignInThrottle")
            .finish_non_exhaustive()
    }
}

impl Default for SignInThrottle {
    /// Ten requests, then one a minute, per client; three mails, then one every five minutes,
    /// per address.
    fn default() -> Self {
        let quota = |burst: u32, period: Duration| {
            Quota::with_period(period)
                .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
                .allow_burst(NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN))
        };
        Self {
            per_client: RateLimiter::keyed(quota(10, Duration::from_secs(60))),
            per_address: RateLimiter::keyed(quota(3, Duration::from_secs(300))),
        }
    }
}

impl SignInThrottle {
    /// Whether `client` may ask for a link now; otherwise how long to wait.
    ///
    /// # Errors
    /// The wait, when the client used up its requests.
    pub fn check_client(&self, client: IpAddr) -> Result<(), Duration> {
        self.prune();
        self.per_client
            .check_key(&counted(client))
            .map_err(|not_until| {
                not_until.wait_time_from(governor::clock::Clock::now(self.per_client.clock()))
            })
    }

    /// Whether another mail may go to `address` now.
    #[must_use]
    pub fn allows_address(&self, address: &PersonAddress) -> bool {
        self.per_address.check_key(&address.0).is_ok()
    }

    fn prune(&self) {
        const PRUNE_ABOVE: usize = 4096;
        if self.per_client.len() > PRUNE_ABOVE {
            self.per_client.retain_recent();
        }
        if self.per_address.len() > PRUNE_ABOVE {
            self.per_address.retain_recent();
        }
    }
}

/// Sends sign-in links: checks the address may sign in, stores the link's hash, mails it.
#[derive(Clone, Debug)]
pub struct SignInMailer {
    store: Store,
    config: Arc<Config>,
}

impl SignInMailer {
    /// A mailer over `store`, mailing through `config`'s SMTP server.
    #[must_use]
    pub fn new(store: Store, config: Arc<Config>) -> Self {
        Self { store, config }
    }

    /// Sends `address` a link, if it may sign in, after the caller has answered; `next` is the
    /// path (already checked to be on this site) to return to once signed in.
    pub fn send_in_background(&self, address: PersonAddress, next: String) {
        let mailer = self.clone();
        tokio::spawn(async move {
            if let Err(error) = mailer.send(&address, &next).await {
                tracing::warn!(error = %error, "a sign-in link was not sent");
            }
        });
    }

    /// Sends `address` a link if it may sign in; whether one was sent.
    ///
    /// # Errors
    /// The store, the link or the mail failed.
    pub async fn send(&self, address: &PersonAddress, next: &str) -> anyhow::Result<bool> {
        if !self.store.is_assignee_anywhere(address.as_str()).await? {
            tracing::info!("a sign-in link was asked for an address that may not sign in");
            return Ok(false);
        }
        let token = PageToken::generate();
        let now = now_ms();
        // Links a day past their expiry are kept no longer: forgotten here, as new ones are made.
        self.store
            .delete_expired_sign_in_links(now.saturating_sub(24 * 3600 * 1000))
            .await?;
        let lifetime = self.config.access.sign_in_link;
        let expires = now.saturating_add(i64::try_from(lifetime.as_millis()).unwrap_or(i64::MAX));
        self.store
            .create_sign_in_link(&token.hash(), address.as_str(), now, expires)
            .await?;
        let mut link = url::Url::parse(&self.config.public_url)?
            .join(&format!("/sign-in/{}", token.as_str()))?;
        if next != "/inbox" {
            link.query_pairs_mut().append_pair("next", next);
        }
        let recipients = AskRecipients {
            email: vec![address.as_str().to_owned()],
            ..AskRecipients::default()
        };
        let notifier = Notifier::for_recipients(
            &self.config.notify,
            &recipients,
            &self.config.outbound_allow,
        )?;
        let minutes = lifetime.as_secs().div_ceil(60);
        let message = format!(
            "Someone asked to sign in to Tessera as {}. Open the link below within {minutes} minutes to sign in; it works once.\n\nIf it was not you, ignore this mail: nothing happens without the link.",
            address.as_str()
        );
        let report = notifier
            .notify(&Notification::new(
                "Your sign-in link for Tessera",
                message,
                link,
            ))
            .await;
        if let Some((_, error)) = report.failures().first() {
            anyhow::bail!("{error}");
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_one_address_without_header_syntax() {
        assert_eq!(
            PersonAddress::parse(" Ann@Example.com ").map(|address| address.0),
            Ok("ann@example.com".to_owned())
        );
        for refused in [
            "",
            "ann",
            "ann@example.com\r\nBcc: eve@evil.example",
            "ann@example.com, eve@evil.example",
            "Ann <ann@example.com>",
            "ann @example.com",
        ] {
            assert!(PersonAddress::parse(refused).is_err(), "{refused:?}");
        }
    }

    #[test]
    fn a_grant_ends_after_its_lifetime_however_active() {
        let grant = PersonGrant {
            email: "ann@example.com".into(),
            since_ms: 1_000,
        };
        assert!(grant.holds(1_000 + 59_999, Duration::from_secs(60)));
        assert!(!grant.holds(1_000 + 60_000, Duration::from_secs(60)));
        assert!(!grant.holds(999, Duration::from_secs(60)));
    }

    #[test]
    fn an_address_gets_three_links_then_waits() -> Result<(), &'static str> {
        let throttle = SignInThrottle::default();
        let ann = PersonAddress::parse("ann@example.com")?;
        assert!((0..3).all(|_| throttle.allows_address(&ann)));
        assert!(!throttle.allows_address(&ann));
        assert!(throttle.allows_address(&PersonAddress::parse("bo@example.com")?));
        Ok(())
    }
}
