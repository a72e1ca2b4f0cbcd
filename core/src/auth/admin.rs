//! The admin password: configured (`TESSERA_ADMIN_PASSWORD`) or generated at first start, stored
//! only as an argon2 hash, never logged.
//!
//! The stored hash changes only when the password does: a configured password that still
//! verifies against it keeps it (salt and all). So [`AdminPasswordHash::fingerprint`] names
//! the password in force across restarts and processes, and an admin session, which records
//! the fingerprint it was opened under, ends when a restart brings another password.

use argon2::{
    password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString},
    Argon2,
};
use rand::RngCore;
use sha2::{Digest, Sha256};

use crate::{
    config::Secret,
    store::{Store, StoreError},
};

const SETTING_KEY: &str = "admin_password_argon2";

/// The hash a login attempt is checked against (a PHC string).
#[derive(Clone, Debug)]
pub struct AdminPasswordHash(String);

/// What an admin session records at login: when, and under which password
/// ([`AdminPasswordHash::fingerprint`]). It holds while both still fit.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AdminGrant {
    /// Login time, unix ms.
    pub since_ms: i64,
    /// The fingerprint of the password hash in force at login.
    pub password: String,
}

impl AdminGrant {
    /// A grant made now, under `hash`.
    #[must_use]
    pub fn new(since_ms: i64, hash: &AdminPasswordHash) -> Self {
        Self {
            since_ms,
            password: hash.fingerprint(),
        }
    }

    /// Whether the grant still holds at `now_ms`: younger than `lifetime`, however active the
    /// session was, and made under the password in force (`hash`).
    #[must_use]
    pub fn holds(
        &self,
        now_ms: i64,
        lifetime: std::time::Duration,
        hash: &AdminPasswordHash,
    ) -> bool {
        let lifetime_ms = i64::try_from(lifetime.as_millis()).unwrap_or(i64::MAX);
        let age_ms = now_ms.saturating_sub(self.since_ms);
        (0..lifetime_ms).contains(&age_ms) && self.password == hash.fingerprint()
    }
}

/// The password in force, and the password itself when this start generated it.
#[derive(Debug)]
pub struct AdminPassword {
    /// What login attempts are checked against.
    pub hash: AdminPasswordHash,
    /// Set only on the start that generated the password, so it can be shown once.
    pub newly_generated: Option<Secret>,
}

/// Why the password could not be settled.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Hashing failed (bad parameters; not the password's fault).
    #[error("hashing the admin password failed: {0}")]
    Hash(String),
}

fn hash_password(password: &str) -> Result<String, AdminError> {
    let salt = SaltString::generate(&mut rand::rngs::OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|error| AdminError::Hash(error.to_string()))
}

impl AdminPasswordHash {
    /// A short name of this hash (SHA-256 of the PHC string, 16 bytes in hex): equal for the
    /// same stored hash, different after the password changed. It tells nothing the stored
    /// hash does not.
    #[must_use]
    pub fn fingerprint(&self) -> String {
        hex::encode(&Sha256::digest(self.0.as_bytes())[..16])
    }

    /// Whether `attempt` is the admin password. Argon2 is slow on purpose: call it off the
    /// async executor (`spawn_blocking`).
    #[must_use]
    pub fn verify(&self, attempt: &str) -> bool {
        PasswordHash::new(&self.0).is_ok_and(|parsed| {
            Argon2::default()
                .verify_password(attempt.as_bytes(), &parsed)
                .is_ok()
        })
    }
}

/// The configured password (the stored hash when it still verifies it, else hashed and stored
/// now), else the stored hash, else a generated password.
///
/// # Errors
/// Database or hashing failures.
pub async fn ensure_admin_password(
    store: &Store,
    configured: Option<&Secret>,
) -> Result<AdminPassword, AdminError> {
    if let Some(password) = configured {
        return Ok(AdminPassword {
            hash: settle_configured(store, password).await?,
            newly_generated: None,
        });
    }
    if let Some(hash) = store.setting(SETTING_KEY).await? {
        return Ok(AdminPassword {
            hash: AdminPasswordHash(hash),
            newly_generated: None,
        });
    }
    let mut bytes = [0_u8; 12];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    let password = hex::encode(bytes);
    let hash = hash_password(&password)?;
    if store.put_setting_if_absent(SETTING_KEY, &hash).await? {
        return Ok(AdminPassword {
            hash: AdminPasswordHash(hash),
            newly_generated: Some(Secret::new(password)),
        });
    }
    let stored = store
        .setting(SETTING_KEY)
        .await?
        .ok_or(StoreError::NotFound)?;
    Ok(AdminPassword {
        hash: AdminPasswordHash(stored),
        newly_generated: None,
    })
}

/// The stored hash if it verifies `password`, else a fresh hash stored in its place. Processes
/// starting together with the same new password agree on one hash: each replaces only the
/// value it read, and one that lost the race takes the winner's hash when it verifies.
async fn settle_configured(
    store: &Store,
    password: &Secret,
) -> Result<AdminPasswordHash, AdminError> {
    let password = password.expose().to_owned();
    // Argon2 is slow on purpose: off the executor, as at login.
    let verifies = |hash: String| {
        let password = password.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                let hash = AdminPasswordHash(hash);
                hash.verify(&password).then_some(hash)
            })
            .await
            .map_err(|error| AdminError::Hash(error.to_string()))
        }
    };
    for _ in 0..3 {
        let stored = store.setting(SETTING_KEY).await?;
        if let Some(stored) = stored.clone() {
            if let Some(hash) = verifies(stored).await? {
                return Ok(hash);
            }
        }
        let fresh = hash_password(&password)?;
        if store
            .replace_setting(SETTING_KEY, stored.as_deref(), &fresh)
            .await?
        {
            return Ok(AdminPasswordHash(fresh));
        }
    }
    Err(AdminError::Hash(
        "the stored admin password kept changing while this process started".to_owned(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_right_password_verifies() -> Result<(), AdminError> {
        let hash = AdminPasswordHash(hash_password("correct horse")?);
        assert!(hash.verify("correct horse"));
        assert!(!hash.verify("correct hors"));
        assert!(!hash.0.contains("correct horse"), "only the hash is kept");
        Ok(())
    }

    #[test]
    fn a_grant_ends_with_its_lifetime_and_with_the_password_it_was_made_under(
    ) -> Result<(), AdminError> {
        let hash = AdminPasswordHash(hash_password("correct horse")?);
        let lifetime = std::time::Duration::from_secs(60);
        let grant = AdminGrant::new(1_000_000, &hash);
        assert!(grant.holds(1_000_000, lifetime, &hash));
        assert!(grant.holds(1_059_999, lifetime, &hash));
        assert!(
            !grant.holds(1_060_000, lifetime, &hash),
            "past its lifetime"
        );
        assert!(!grant.holds(999_999, lifetime, &hash), "from the future");
        let changed = AdminPasswordHash(hash_password("battery staple")?);
        assert!(
            !grant.holds(1_000_001, lifetime, &changed),
            "another password"
        );
        Ok(())
    }
}
