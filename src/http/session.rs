//! Browser sessions for the admin login (and later chat), stored through [`Store`] so they live
//! in the same database on SQLite and PostgreSQL and survive restarts.
//!
//! Served over HTTPS (`TESSERA_PUBLIC_URL` starts with `https://`), the cookie is
//! `__Host-tessera_session`: browsers take a `__Host-` cookie only when it is `Secure`, has
//! `Path=/` and no `Domain`, so neither a sibling subdomain nor a plain-HTTP page can plant or
//! overwrite it. Over plain HTTP (local runs) the prefix would make browsers drop the cookie, so
//! it is `tessera_session` there.

use async_trait::async_trait;
use time::OffsetDateTime;
use tower_sessions::{
    cookie::SameSite,
    session::{Id, Record},
    session_store::{self, SessionStore},
    Expiry, SessionManagerLayer,
};

use crate::store::{sessions::SessionRow, Store};

/// `tower-sessions` storage over the application's store.
#[derive(Clone, Debug)]
pub struct StoreSessions(pub Store);

fn backend(error: impl std::fmt::Display) -> session_store::Error {
    session_store::Error::Backend(error.to_string())
}

fn row_of(record: &Record) -> Result<SessionRow, session_store::Error> {
    let data = serde_json::to_string(&record.data)
        .map_err(|error| session_store::Error::Encode(error.to_string()))?;
    let expires_at =
        i64::try_from(record.expiry_date.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX);
    Ok(SessionRow { data, expires_at })
}

#[async_trait]
impl SessionStore for StoreSessions {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        let row = row_of(record)?;
        // A fresh random id collides practically never; retry a few times rather than overwrite.
        for _ in 0..4 {
            if self
                .0
                .create_session(&record.id.to_string(), &row)
                .await
                .map_err(backend)?
            {
                return Ok(());
            }
            record.id = Id::default();
        }
        Err(backend("could not allocate a unique session id"))
    }

    async fn save(&self, record: &Record) -> session_store::Result<()> {
        self.0
            .save_session(&record.id.to_string(), &row_of(record)?)
            .await
            .map_err(backend)
    }

    async fn load(&self, session_id: &Id) -> session_store::Result<Option<Record>> {
        let Some(row) = self
            .0
            .load_session(&session_id.to_string(), crate::store::now_ms())
            .await
            .map_err(backend)?
        else {
            return Ok(None);
        };
        let data = serde_json::from_str(&row.data)
            .map_err(|error| session_store::Error::Decode(error.to_string()))?;
        let expiry_date =
            OffsetDateTime::from_unix_timestamp_nanos(i128::from(row.expires_at) * 1_000_000)
                .map_err(|error| session_store::Error::Decode(error.to_string()))?;
        Ok(Some(Record {
            id: *session_id,
            data,
            expiry_date,
        }))
    }

    async fn delete(&self, session_id: &Id) -> session_store::Result<()> {
        self.0
            .delete_session(&session_id.to_string())
            .await
            .map_err(backend)
    }
}

/// The session cookie's name: with the `__Host-` prefix exactly when it is `Secure`.
#[must_use]
pub fn cookie_name(secure: bool) -> &'static str {
    if secure {
        "__Host-tessera_session"
    } else {
        "tessera_session"
    }
}

/// The session layer: `HttpOnly`, `SameSite=Lax`, `Path=/` cookies without a `Domain`, `Secure`
/// and `__Host-` when served over HTTPS, expiring after 12 hours without a change to the
/// session (an admin's grant also ends `TESSERA_SESSION_LIFETIME_SECS` after login,
/// `login::is_admin`).
#[must_use]
pub fn session_layer(store: Store, secure: bool) -> SessionManagerLayer<StoreSessions> {
    SessionManagerLayer::new(StoreSessions(store))
        .with_name(cookie_name(secure))
        .with_path("/")
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(secure)
        .with_expiry(Expiry::OnInactivity(time::Duration::hours(12)))
}
