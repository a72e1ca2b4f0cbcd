//! Signed JSON webhooks, retried until the receiver acknowledges them.
//!
//! The generic notification webhook and the asks API's `callback_url` both go through
//! [`WebhookSender`], so a receiver checks every delivery the same way. Each attempt is a
//! `POST` with `Content-Type: application/json` and three headers:
//!
//! | header | value |
//! |---|---|
//! | `X-Tessera-Timestamp` | unix seconds when this attempt was signed, e.g. `1767225600` |
//! | `X-Tessera-Signature` | `sha256=<hex>`: HMAC-SHA256 with the purpose's key (`signing.rs`: derived from the shared secret) over the bytes `{timestamp}.{body}` |
//! | `X-Tessera-Delivery` | a UUID, the same on every attempt of one delivery |
//!
//! The signed payload is the timestamp's decimal digits, one `.` and then the exact body bytes
//! as sent (not a re-serialization of the parsed JSON). Binding the timestamp into the
//! signature lets a receiver refuse replays: it should recompute the signature with [`verify`]
//! (or any HMAC library), reject a timestamp more than a few minutes away from its clock, and
//! treat a delivery id it has already seen as done. Every attempt is signed afresh, so a late
//! retry still carries a recent timestamp.
//!
//! A delivery counts as acknowledged on any 2xx. Network errors, timeouts, 408, 429 and 5xx
//! are retried with exponential backoff and jitter: the wait after attempt `n` is
//! `min(max_delay, base_delay · 2ⁿ⁻¹)` scaled by a random factor in `[0.5, 1]`, and never
//! shorter than a 429's `Retry-After` seconds (capped at `max_delay`). Any other status
//! (other 4xx, 3xx: redirects are not followed) is final and returned at once. Retries live
//! in this process only; a caller that must survive a restart keeps the delivery id and calls
//! [`WebhookSender::deliver`] again from a durable step.
//!
//! A sender for URLs an API caller wrote (an ask's callback and webhook) is made with
//! [`WebhookSender::checking`]: it reaches public addresses only, unless `TESSERA_OUTBOUND_ALLOW`
//! admits the host (`net::outbound`). Of a reply only the first few KiB are read, for the log's
//! excerpt.

use std::{
    fmt,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use hmac::{Hmac, Mac as _};
use serde::Serialize;
use sha2::Sha256;
use uuid::Uuid;

use super::{
    client_builder, describe, redacted_url, reply_excerpt, signing::SigningKey, Channel,
    NotifyError,
};
use crate::net::outbound::{refusal_in, OutboundAllow, OutboundClient};
use crate::util::backoff::{retry_after, Backoff};

/// The header with `sha256=<hex>`.
pub const SIGNATURE_HEADER: &str = "X-Tessera-Signature";
/// The header with the unix seconds included in the signature.
pub const TIMESTAMP_HEADER: &str = "X-Tessera-Timestamp";
/// The header with the delivery's idempotency id.
pub const DELIVERY_HEADER: &str = "X-Tessera-Delivery";

type HmacSha256 = Hmac<Sha256>;

/// The `X-Tessera-Signature` value for `body` sent at `timestamp`: `sha256=` and the
/// lowercase hex HMAC-SHA256 of `{timestamp}.{body}` keyed with `key`.
#[must_use]
pub fn sign(key: &SigningKey, timestamp: u64, body: &[u8]) -> String {
    match keyed_mac(key, timestamp, body) {
        Some(mac) => format!("sha256={}", hex::encode(mac.finalize().into_bytes())),
        // Unreachable (HMAC takes keys of any length); an empty digest never verifies.
        None => "sha256=".to_owned(),
    }
}

/// Whether `header_value` (an `X-Tessera-Signature`) is the signature of `body` at
/// `timestamp` under `key`. The comparison takes the same time wherever the digests differ.
/// It does not judge the timestamp's age: receivers compare it with their clock themselves.
#[must_use]
pub fn verify(key: &SigningKey, header_value: &str, timestamp: u64, body: &[u8]) -> bool {
    let Some(digest_hex) = header_value.trim().strip_prefix("sha256=") else {
        return false;
    };
    let Ok(digest) = hex::decode(digest_hex) else {
        return false;
    };
    keyed_mac(key, timestamp, body).is_some_and(|mac| mac.verify_slice(&digest).is_ok())
}

fn keyed_mac(key: &SigningKey, timestamp: u64, body: &[u8]) -> Option<HmacSha256> {
    let mut mac = HmacSha256::new_from_slice(key.as_bytes()).ok()?;
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    Some(mac)
}

/// How often and how patiently a delivery is tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeliveryPolicy {
    /// Attempts in all, the first included; at least 1.
    pub max_attempts: u32,
    /// The wait before the first retry, before jitter.
    pub base_delay: Duration,
    /// The longest wait between attempts.
    pub max_delay: Duration,
    /// How long one attempt (connect, send, reply) may take.
    pub attempt_timeout: Duration,
}

impl Default for DeliveryPolicy {
    /// Six attempts, 1 s base delay, 60 s longest wait, 10 s per attempt (about half a minute
    /// of retrying in all).
    fn default() -> Self {
        Self {
            max_attempts: 6,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(60),
            attempt_timeout: Duration::from_secs(10),
        }
    }
}

impl DeliveryPolicy {
    /// The wait after failed attempt number `attempt` (1-based); `retry_after` is what a 429
    /// asked for, if anything.
    #[must_use]
    pub fn delay_after(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let jittered = Backoff {
            base: self.base_delay,
            max: self.max_delay,
        }
        .jittered(attempt);
        match retry_after {
            Some(wait) => jittered.max(wait.min(self.max_delay)),
            None => jittered,
        }
    }
}

/// An acknowledged delivery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// The `X-Tessera-Delivery` id every attempt carried.
    pub id: Uuid,
    /// How many attempts it took, at least 1.
    pub attempts: u32,
    /// The 2xx status that acknowledged it.
    pub status: u16,
}

/// Posts signed JSON bodies and retries them by its [`DeliveryPolicy`].
#[derive(Clone)]
pub struct WebhookSender {
    client: OutboundClient,
    key: SigningKey,
    policy: DeliveryPolicy,
}

impl fmt::Debug for WebhookSender {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("WebhookSender")
            .field("key", &self.key)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl WebhookSender {
    /// A sender that signs with `key` (one purpose's, `signing.rs`) and retries by `policy`.
    ///
    /// # Errors
    /// Returns [`NotifyError::BadConfig`] when the HTTP client cannot be built.
    pub fn new(key: SigningKey, policy: DeliveryPolicy) -> Result<Self, NotifyError> {
        let client = OutboundClient::configured(client_builder(policy.attempt_timeout))
            .map_err(|error| NotifyError::bad_config("http client", describe(error)))?;
        Ok(Self {
            client,
            key,
            policy,
        })
    }

    /// The same sender for URLs an API caller wrote: it reaches public addresses only, unless
    /// `allow` admits the host (`net::outbound`).
    ///
    /// # Errors
    /// Returns [`NotifyError::BadConfig`] when the HTTP client cannot be built.
    pub fn checking(mut self, allow: &OutboundAllow) -> Result<Self, NotifyError> {
        let timeout = self.policy.attempt_timeout;
        self.client = OutboundClient::checked(allow, || client_builder(timeout))
            .map_err(|error| NotifyError::bad_config("http client", describe(error)))?;
        Ok(self)
    }

    /// The same sender making one attempt per delivery, for callers that retry durably
    /// themselves (the asks workflow's `Callback` step).
    #[must_use]
    pub fn with_single_attempt(mut self) -> Self {
        self.policy.max_attempts = 1;
        self
    }

    /// The policy in force.
    #[must_use]
    pub fn policy(&self) -> DeliveryPolicy {
        self.policy
    }

    /// Serializes `payload` to JSON and delivers it to `url` under a new delivery id.
    ///
    /// # Errors
    /// As [`WebhookSender::deliver`], plus [`NotifyError::Message`] when `payload` does not
    /// serialize.
    pub async fn send_json<T: Serialize + ?Sized>(
        &self,
        url: &url::Url,
        payload: &T,
    ) -> Result<Delivery, NotifyError> {
        let body = serde_json::to_vec(payload).map_err(|error| NotifyError::Message {
            channel: Channel::Webhook,
            reason: error.to_string(),
        })?;
        self.deliver(url, Uuid::new_v4(), &body).await
    }

    /// Delivers the JSON `body` to `url` as delivery `delivery_id`, retrying until a 2xx
    /// acknowledges it or the policy runs out. Pass the same id again to resume a delivery
    /// after a restart; receivers treat a repeated id as a duplicate.
    ///
    /// # Errors
    /// Returns [`NotifyError::Status`] at once for a final status (4xx other than 408 and 429,
    /// 3xx), and [`NotifyError::GaveUp`] holding the last error when every attempt failed.
    pub async fn deliver(
        &self,
        url: &url::Url,
        delivery_id: Uuid,
        body: &[u8],
    ) -> Result<Delivery, NotifyError> {
        let max_attempts = self.policy.max_attempts.max(1);
        let mut attempt = 1;
        loop {
            let (error, retry_after) = match self.attempt(url, delivery_id, body).await {
                Ok(status) => {
                    return Ok(Delivery {
                        id: delivery_id,
                        attempts: attempt,
                        status,
                    })
                }
                Err(failure) => failure,
            };
            if !error.is_retryable() {
                return Err(error);
            }
            if attempt >= max_attempts {
                return Err(NotifyError::GaveUp {
                    delivery_id,
                    attempts: attempt,
                    last: Box::new(error),
                });
            }
            let delay = self.policy.delay_after(attempt, retry_after);
            tracing::warn!(
                webhook.url = %redacted_url(url),
                delivery.id = %delivery_id,
                attempt,
                delay_ms = delay.as_millis(),
                error = %error,
                "webhook delivery failed, retrying"
            );
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }

    /// One signed POST: the 2xx status, or the error with any `Retry-After` the reply gave.
    async fn attempt(
        &self,
        url: &url::Url,
        delivery_id: Uuid,
        body: &[u8],
    ) -> Result<u16, (NotifyError, Option<Duration>)> {
        let timestamp = unix_now();
        let refused = |refused| NotifyError::Refused {
            channel: Channel::Webhook,
            refused,
        };
        let response = self
            .client
            .request(reqwest::Method::POST, url)
            .map_err(|error| (refused(error), None))?
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(TIMESTAMP_HEADER, timestamp.to_string())
            .header(SIGNATURE_HEADER, sign(&self.key, timestamp, body))
            .header(DELIVERY_HEADER, delivery_id.to_string())
            .body(body.to_vec())
            .send()
            .await
            .map_err(|error| {
                let error = match refusal_in(&error) {
                    Some(refusal) => refused(refusal.clone()),
                    None => NotifyError::Transport {
                        channel: Channel::Webhook,
                        reason: describe(error),
                    },
                };
                (error, None)
            })?;
        let status = response.status();
        if status.is_success() {
            return Ok(status.as_u16());
        }
        let retry_after = retry_after(response.headers());
        let error = NotifyError::Status {
            channel: Channel::Webhook,
            status: status.as_u16(),
            body_excerpt: reply_excerpt(response).await,
        };
        Err((error, retry_after))
    }
}

/// Seconds since the unix epoch; 0 on a clock set before 1970.
fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{config::Secret, notify::signing::SigningPurpose};

    fn secret() -> SigningKey {
        SigningKey::derive(
            &Secret::new("whsec_0123456789abcdef"),
            SigningPurpose::Notification,
        )
    }

    #[test]
    fn a_signature_is_the_hmac_of_the_timestamp_and_the_body() {
        // Computed independently with:
        // KEY=$(printf 'tessera-signing-v1:notification' | openssl dgst -sha256 -hmac whsec_0123456789abcdef | awk '{print $2}')
        // printf '1700000000.{"a":1}' | openssl dgst -sha256 -mac HMAC -macopt hexkey:$KEY
        let signature = sign(&secret(), 1_700_000_000, br#"{"a":1}"#);
        assert_eq!(
            signature,
            "sha256=532b2ec9dfe7a3fa42c58503bfb091b62f087ab7dab2779df141042f966e436e"
        );
        assert!(verify(&secret(), &signature, 1_700_000_000, br#"{"a":1}"#));
    }

    #[test]
    fn a_changed_body_timestamp_or_secret_does_not_verify() {
        let body = br#"{"archive_ids":["m1"]}"#;
        let signature = sign(&secret(), 42, body);
        assert!(!verify(
            &secret(),
            &signature,
            42,
            br#"{"archive_ids":["m2"]}"#
        ));
        assert!(!verify(&secret(), &signature, 43, body));
        assert!(!verify(
            &SigningKey::derive(
                &Secret::new("another-secret-value"),
                SigningPurpose::Notification
            ),
            &signature,
            42,
            body
        ));
    }

    #[test]
    fn malformed_signature_headers_do_not_verify() {
        let body = b"{}";
        let signature = sign(&secret(), 1, body);
        let digest = signature.trim_start_matches("sha256=");
        assert!(!verify(&secret(), digest, 1, body));
        assert!(!verify(&secret(), "sha256=zz", 1, body));
        assert!(!verify(
            &secret(),
            &signature[..signature.len() - 2],
            1,
            body
        ));
        assert!(!verify(&secret(), "", 1, body));
    }

    #[test]
    fn backoff_doubles_with_jitter_and_stays_under_the_max() {
        let policy = DeliveryPolicy {
            max_attempts: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            attempt_timeout: Duration::from_secs(1),
        };
        for _ in 0..50 {
            let first = policy.delay_after(1, None).as_millis();
            let third = policy.delay_after(3, None).as_millis();
            let tenth = policy.delay_after(10, None).as_millis();
            assert!((50..=100).contains(&first), "{first}");
            assert!((200..=400).contains(&third), "{third}");
            assert!((500..=1000).contains(&tenth), "{tenth}");
        }
    }

    #[test]
    fn a_retry_after_is_honoured_up_to_the_max_delay() {
        let policy = DeliveryPolicy {
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_secs(5),
            ..DeliveryPolicy::default()
        };
        assert_eq!(
            policy.delay_after(1, Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
        assert_eq!(
            policy.delay_after(1, Some(Duration::from_secs(600))),
            Duration::from_secs(5)
        );
    }

    #[test]
    fn debug_output_hides_the_secret() -> Result<(), NotifyError> {
        let sender = WebhookSender::new(secret(), DeliveryPolicy::default())?;
        let printed = format!("{sender:?}");
        assert!(!printed.contains("whsec_"), "{printed}");
        Ok(())
    }
}
