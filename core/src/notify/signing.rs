//! One key per signing purpose, derived from `TESSERA_WEBHOOK_SECRET`.
//!
//! The notification webhook, the webhooks an ask names for its recipients and the asks API's
//! callbacks reach different receivers. Signed with one key, a body one of them received would
//! verify at the others (a recipient's webhook could replay a link notification as a callback
//! "answer"). So each purpose signs with its own key:
//!
//! ```text
//! key = HMAC-SHA256(key = TESSERA_WEBHOOK_SECRET, message = "tessera-signing-v1:" + purpose)
//! ```
//!
//! with `purpose` one of [`SigningPurpose::label`]'s values (`notification`, `recipient`,
//! `callback`). The 32 raw bytes are the HMAC key of `X-Tessera-Signature` (`webhook.rs`);
//! receivers derive the key of their purpose once and keep it.

use std::fmt;

use hmac::{Hmac, Mac as _};
use sha2::Sha256;

use tessera_settings::Secret;

/// What a signed delivery is for; each has its own key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SigningPurpose {
    /// The operator's notification webhook (`TESSERA_WEBHOOK_URL`).
    Notification,
    /// A webhook an ask names in `notify.webhook` (within `TESSERA_ASK_WEBHOOK_URLS`).
    Recipient,
    /// An ask's `callback_url`.
    Callback,
}

impl SigningPurpose {
    /// The label the key is derived with, after `tessera-signing-v1:`.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::Notification => "notification",
            Self::Recipient => "recipient",
            Self::Callback => "callback",
        }
    }
}

/// The prefix of every derivation label; a new scheme would change it.
const DERIVATION_PREFIX: &str = "tessera-signing-v1:";

/// An HMAC-SHA256 key for one [`SigningPurpose`]; never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct SigningKey([u8; 32]);

impl SigningKey {
    /// The key of `purpose` under the shared `secret`.
    #[must_use]
    pub fn derive(secret: &Secret, purpose: SigningPurpose) -> Self {
        let mut key = [0_u8; 32];
        // HMAC takes keys of any length, so this never fails; an all-zero key would verify
        // nothing a receiver signs with the real one.
        if let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.expose().as_bytes()) {
            mac.update(DERIVATION_PREFIX.as_bytes());
            mac.update(purpose.label().as_bytes());
            key.copy_from_slice(&mac.finalize().into_bytes());
        }
        Self(key)
    }

    /// The key's bytes, for the HMAC that signs a delivery.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("SigningKey(***)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_purpose_has_its_own_key_derived_as_the_readme_says() {
        let secret = Secret::new("whsec_0123456789abcdef");
        // Computed independently with:
        // printf 'tessera-signing-v1:callback' | openssl dgst -sha256 -hmac whsec_0123456789abcdef
        assert_eq!(
            hex::encode(SigningKey::derive(&secret, SigningPurpose::Callback).as_bytes()),
            "141687b96ed4680dc0dfa0f88b6c4397c34f7c54d98b62256a8c39a9bba0a3a4"
        );
        let keys = [
            SigningPurpose::Notification,
            SigningPurpose::Recipient,
            SigningPurpose::Callback,
        ]
        .map(|purpose| SigningKey::derive(&secret, purpose));
        assert_ne!(keys[0], keys[1]);
        assert_ne!(keys[1], keys[2]);
        assert_ne!(keys[0], keys[2]);
        assert!(!format!("{:?}", keys[0]).contains(&hex::encode(keys[0].as_bytes())));
    }
}
