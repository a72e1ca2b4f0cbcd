//! The admin password: configured (`TESSERA_ADMIN_PASSWORD`) or generated at first start, stored
//! only as an argon2 hash, never logged.

use argon2::{
    password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString},
    Argon2,
};
use rand::RngCore;

use crate::{
    config::Secret,
    store::{Store, StoreError},
};

const SETTING_KEY: &str = "admin_password_argon2";

/// The hash a login attempt is checked against (a PHC string).
#[derive(Clone, Debug)]
pub struct AdminPasswordHash(String);

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

/// The configured password (hashed now), else the stored hash, else a generated password.
///
/// # Errors
/// Database or hashing failures.
pub async fn ensure_admin_password(
    store: &Store,
    configured: Option<&Secret>,
) -> Result<AdminPassword, AdminError> {
    if let Some(password) = configured {
        return Ok(AdminPassword {
            hash: AdminPasswordHash(hash_password(password.expose())?),
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
}
