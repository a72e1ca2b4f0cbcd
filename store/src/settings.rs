//! Server-wide key/value settings that must survive restarts (for example the API token's hash).

use super::{now_ms, Result, Store};

impl Store {
    /// Reads a setting.
    ///
    /// # Errors
    /// Database failures.
    pub async fn setting(&self, key: &str) -> Result<Option<String>> {
        Ok(on_pool!(self, |pool| {
            sqlx::query_scalar("SELECT value FROM settings WHERE key = $1")
                .bind(key)
                .fetch_optional(pool)
                .await?
        }))
    }

    /// Stores `value` under `key` only if the key has no value yet; returns whether it was stored.
    /// Two processes starting at once therefore agree on one value.
    ///
    /// # Errors
    /// Database failures.
    pub async fn put_setting_if_absent(&self, key: &str, value: &str) -> Result<bool> {
        let now = now_ms();
        let stored = on_pool!(self, |pool| {
            sqlx::query(
                "INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (key) DO NOTHING",
            )
            .bind(key)
            .bind(value)
            .bind(now)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(stored == 1)
    }

    /// Stores `value` under `key` only if the key still holds `expected` (`None`: no value
    /// yet); returns whether it was stored. A compare-and-set, so two processes replacing one
    /// value at once cannot both win.
    ///
    /// # Errors
    /// Database failures.
    pub async fn replace_setting(
        &self,
        key: &str,
        expected: Option<&str>,
        value: &str,
    ) -> Result<bool> {
        let Some(expected) = expected else {
            return self.put_setting_if_absent(key, value).await;
        };
        let now = now_ms();
        let replaced = on_pool!(self, |pool| {
            sqlx::query(
                "UPDATE settings SET value = $1, updated_at = $2 WHERE key = $3 AND value = $4",
            )
            .bind(value)
            .bind(now)
            .bind(key)
            .bind(expected)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(replaced == 1)
    }
}
