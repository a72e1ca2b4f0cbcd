//! CSRF tokens bound to one page: `HMAC-SHA256(server key, page id)`.
//!
//! A page's form carries its token in the hidden `_csrf` field; a POST without the right token for
//! *that* page is refused, so a form on another site (or another page's token) cannot submit.
//! The key lives in the store so every server process derives the same tokens; it is generated on
//! first start. `SameSite` cookies would be defence in depth; the token is the defence.

use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

use super::page::PageId;
use crate::store::{Store, StoreError};

const SETTING_KEY: &str = "csrf_key";

/// The server-wide key pages' CSRF tokens are derived from.
#[derive(Clone)]
pub struct CsrfKey(Vec<u8>);

impl std::fmt::Debug for CsrfKey {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("CsrfKey(***)")
    }
}

impl CsrfKey {
    /// A key from raw bytes (tests).
    #[must_use]
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        Self(bytes)
    }

    /// The token a page's form must send back.
    #[must_use]
    pub fn token_for(&self, page: PageId) -> String {
        self.mac(page)
            .map(|mac| hex::encode(mac.finalize().into_bytes()))
            .unwrap_or_default()
    }

    /// Whether `presented` is this page's token (constant-time comparison).
    #[must_use]
    pub fn verify(&self, page: PageId, presented: &str) -> bool {
        let (Ok(bytes), Some(mac)) = (hex::decode(presented), self.mac(page)) else {
            return false;
        };
        mac.verify_slice(&bytes).is_ok()
    }

    /// A key for another purpose, derived from this one: `HMAC-SHA256(server key, label)`. A
    /// label is never 16 bytes long, so no label's key is ever a page's CSRF token (those MAC a
    /// page id's 16 bytes), and each purpose gets a key of its own from the one stored secret.
    /// `None` only if HMAC refused the key, which it never does for any length.
    #[must_use]
    pub fn derive(&self, label: &str) -> Option<[u8; 32]> {
        debug_assert_ne!(label.len(), 16, "a label must not look like a page id");
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).ok()?;
        mac.update(label.as_bytes());
        Some(mac.finalize().into_bytes().into())
    }

    /// HMAC takes keys of any length, so this is always `Some`; `None` would only mean no token
    /// can be made or verified, which fails closed.
    fn mac(&self, page: PageId) -> Option<Hmac<Sha256>> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).ok()?;
        mac.update(page.0.as_bytes());
        Some(mac)
    }
}

/// Loads the key from the store, generating and storing it on first start.
///
/// # Errors
/// Database failures, or a stored key that is not hex.
pub async fn ensure_csrf_key(store: &Store) -> Result<CsrfKey, StoreError> {
    if let Some(stored) = store.setting(SETTING_KEY).await? {
        return decode(&stored);
    }
    let mut bytes = [0_u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    store
        .put_setting_if_absent(SETTING_KEY, &hex::encode(bytes))
        .await?;
    // Read back: another process may have stored its key first.
    let stored = store
        .setting(SETTING_KEY)
        .await?
        .ok_or(StoreError::NotFound)?;
    decode(&stored)
}

fn decode(stored: &str) -> Result<CsrfKey, StoreError> {
    hex::decode(stored)
        .map(CsrfKey)
        .map_err(|error| StoreError::Corrupt {
            column: "settings.csrf_key",
            reason: error.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_verifies_only_for_its_own_page() {
        let key = CsrfKey::from_bytes(vec![7; 32]);
        let page = PageId::new();
        let token = key.token_for(page);
        assert!(key.verify(page, &token));
        assert!(!key.verify(PageId::new(), &token));
        assert!(!key.verify(page, "00"));
        assert!(!key.verify(page, "not hex"));
        assert!(!CsrfKey::from_bytes(vec![8; 32]).verify(page, &token));
    }

    #[test]
    fn derived_keys_differ_by_label_and_by_server_key() {
        let key = CsrfKey::from_bytes(vec![7; 32]);
        let demo = key.derive("tessera demo-api v1");
        assert!(demo.is_some());
        assert_eq!(demo, key.derive("tessera demo-api v1"));
        assert_ne!(demo, key.derive("tessera demo-api v2"));
        assert_ne!(
            demo,
            CsrfKey::from_bytes(vec![8; 32]).derive("tessera demo-api v1")
        );
    }
}
