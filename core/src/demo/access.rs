//! Who may change the demo site: a write to `/demo-api/*` needs the server's demo key (or the
//! API token); reads stay open.
//!
//! The demo site plays somebody else's API, but its items live in this server's database, so
//! reaching the server must not be enough to change them. Its real callers are this server
//! itself — the chat's executor and the YAML workflows' `http` steps to `self` — and they send
//! [`DemoApiKey`] in [`DEMO_KEY_HEADER`]; nobody writes it anywhere. An operator may write with
//! the API token instead (`Authorization: Bearer`, as for `/api/*`), e.g. from `curl` or the
//! browser suite. The key is derived from the CSRF key already in the store (`HMAC-SHA256(key,
//! "tessera demo-api v1")`): every process on one database agrees on it without another stored
//! secret, and it opens nothing but the demo site. It cannot be the API token, of which the
//! server keeps only a hash.
//!
//! Reads (`GET`, `HEAD`, `OPTIONS`) stay open: the items and claims are made-up demo data, a read
//! changes nothing and is bounded (`limit` ≤ 1000), and the browser suite and the README's
//! examples read the claims a workflow decided.

use axum::{
    extract::{Request, State},
    middleware::Next,
    response::{IntoResponse, Response},
    Json,
};
use http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use serde_json::json;

use crate::{auth::ApiTokenHash, config::Secret, pages::csrf::CsrfKey};

/// The header the server's own calls carry the demo key in.
pub const DEMO_KEY_HEADER: HeaderName = HeaderName::from_static("x-tessera-demo-key");

/// What the demo key is derived for; a new label is a new key.
const LABEL: &str = "tessera demo-api v1";

/// The key that lets the server's own calls change the demo site. Never logged or printed.
#[derive(Clone)]
pub struct DemoApiKey(Secret);

impl std::fmt::Debug for DemoApiKey {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("DemoApiKey(***)")
    }
}

impl DemoApiKey {
    /// The key of the server whose CSRF key is `server_key`; `None` only if HMAC refused the key.
    #[must_use]
    pub fn derive(server_key: &CsrfKey) -> Option<Self> {
        server_key
            .derive(LABEL)
            .map(|bytes| Self(Secret::new(hex::encode(bytes))))
    }

    /// The key as a header value, marked sensitive so no HTTP layer prints it.
    #[must_use]
    pub fn header_value(&self) -> HeaderValue {
        // Hex digits are always a valid header value.
        let mut value = HeaderValue::from_str(self.0.expose())
            .unwrap_or_else(|_| HeaderValue::from_static("invalid"));
        value.set_sensitive(true);
        value
    }

    /// The key as a secret, for clients that keep their headers as [`Secret`]s.
    #[must_use]
    pub fn secret(&self) -> &Secret {
        &self.0
    }

    /// Whether `presented` is the key, compared in constant time.
    #[must_use]
    pub fn matches(&self, presented: &[u8]) -> bool {
        let expected = self.0.expose().as_bytes();
        let difference = expected
            .iter()
            .zip(presented)
            .fold(0_u8, |accumulated, (left, right)| {
                accumulated | (left ^ right)
            });
        difference == 0 && expected.len() == presented.len()
    }
}

/// What a write to the demo site is checked against: the demo key and the API token's hash.
#[derive(Clone, Debug)]
pub struct WriteGuard {
    key: DemoApiKey,
    api_token: ApiTokenHash,
}

impl WriteGuard {
    /// Lets writes through with `key` or the API token whose hash is `api_token`.
    #[must_use]
    pub fn new(key: DemoApiKey, api_token: ApiTokenHash) -> Self {
        Self { key, api_token }
    }

    /// Whether a request with these headers may write.
    fn allows(&self, headers: &HeaderMap) -> bool {
        let with_key = headers
            .get(DEMO_KEY_HEADER)
            .is_some_and(|presented| self.key.matches(presented.as_bytes()));
        let with_token = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "))
            .is_some_and(|token| self.api_token.matches(token.trim()));
        with_key || with_token
    }
}

/// Middleware: reads pass; a write without the demo key or the API token gets a JSON 401.
pub async fn require_key_for_writes(
    State(guard): State<WriteGuard>,
    request: Request,
    next: Next,
) -> Response {
    let reads = [Method::GET, Method::HEAD, Method::OPTIONS];
    if reads.contains(request.method()) || guard.allows(request.headers()) {
        return next.run(request).await;
    }
    let body = json!({"error": {
        "code": "unauthorized",
        "message": "changing the demo site needs the server's demo key (X-Tessera-Demo-Key) or the API token (Authorization: Bearer)",
    }});
    let mut response = (StatusCode::UNAUTHORIZED, Json(body)).into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"tessera demo-api\""),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_derived_key_or_the_api_token_may_write() -> Result<(), &'static str> {
        let server_key = CsrfKey::from_bytes(vec![3; 32]);
        let key = DemoApiKey::derive(&server_key).ok_or("HMAC takes any key")?;
        let guard = WriteGuard::new(key.clone(), ApiTokenHash::of("the-api-token-0123"));
        let with = |name: HeaderName, value: &str| {
            let mut headers = HeaderMap::new();
            if let Ok(value) = HeaderValue::from_str(value) {
                headers.insert(name, value);
            }
            guard.allows(&headers)
        };
        assert!(with(DEMO_KEY_HEADER, key.secret().expose()));
        assert!(with(header::AUTHORIZATION, "Bearer the-api-token-0123"));
        assert!(!with(DEMO_KEY_HEADER, "the-api-token-0123"));
        assert!(!with(header::AUTHORIZATION, "Bearer wrong"));
        assert!(!guard.allows(&HeaderMap::new()));
        let other = DemoApiKey::derive(&CsrfKey::from_bytes(vec![4; 32]));
        assert!(other.is_some_and(|other| !with(DEMO_KEY_HEADER, other.secret().expose())));
        assert!(!format!("{key:?}").contains(key.secret().expose()));
        Ok(())
    }
}
