//! The HTTP plumbing the three providers share: one POST of a JSON body, and the mapping from
//! HTTP facts to [`ModelError`].
//!
//! Providers build the request (URL, auth headers) and parse the reply; this module owns what is
//! the same everywhere: 429 with `Retry-After` → [`ModelError::RateLimited`], 5xx →
//! [`ModelError::Server`], 408 and client timeouts → [`ModelError::Timeout`], other 4xx →
//! [`ModelError::Rejected`], an unreadable body → [`ModelError::Malformed`]. It logs nothing that
//! could hold a key: headers are never formatted, only the status and a body excerpt.
//!
//! The client follows no redirects: every request carries the provider's key (`Authorization`,
//! `x-api-key`, `x-goog-api-key`, Azure's `api-key`), and reqwest strips only `Authorization`
//! when a redirect changes host. A 3xx is a [`ModelError::Rejected`] naming where it pointed, so
//! the operator can set the base URL there.

use std::time::Duration;

use http::{HeaderMap, StatusCode};
use serde::de::DeserializeOwned;

use super::model::ModelError;
use crate::backoff::retry_after;

/// How much of an error body is kept in [`ModelError::Server`] and [`ModelError::Rejected`].
const EXCERPT_CHARS: usize = 500;

/// How long connecting may take; the whole call is bounded by the retry policy's timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A reply as it came back: status, headers and the whole body as text.
pub(crate) struct HttpReply {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: String,
}

impl HttpReply {
    /// Parses a successful body, or explains why it is not what the provider documents.
    pub(crate) fn json<T: DeserializeOwned>(&self) -> Result<T, ModelError> {
        serde_json::from_str(&self.body).map_err(|error| {
            ModelError::malformed(format!(
                "unexpected reply body ({error}): {}",
                excerpt(&self.body)
            ))
        })
    }

    /// The generic error for a non-success status; providers check their special cases first.
    pub(crate) fn error(&self) -> ModelError {
        let status = self.status.as_u16();
        let body_excerpt = excerpt(&self.body);
        if self.status == StatusCode::TOO_MANY_REQUESTS {
            ModelError::RateLimited {
                retry_after: retry_after(&self.headers),
            }
        } else if self.status == StatusCode::REQUEST_TIMEOUT {
            ModelError::Timeout
        } else if self.status.is_redirection() {
            let target = self
                .headers
                .get(http::header::LOCATION)
                .and_then(|location| location.to_str().ok())
                .and_then(|location| url::Url::parse(location).ok())
                .map_or_else(
                    || "another URL".to_owned(),
                    |target| target.origin().ascii_serialization(),
                );
            ModelError::Rejected {
                status,
                body_excerpt: format!(
                    "a redirect to {target}, not followed (it would carry the API key): set the provider's base URL to where it points"
                ),
            }
        } else if self.status.is_server_error() {
            ModelError::Server {
                status,
                body_excerpt,
            }
        } else {
            ModelError::Rejected {
                status,
                body_excerpt,
            }
        }
    }
}

/// The HTTP client every provider uses: rustls, a connect timeout, no overall timeout (the
/// retry policy owns that), no redirects (see the module doc).
pub(crate) fn client() -> Result<reqwest::Client, ModelError> {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|error| ModelError::bad_config("http client", describe(&error)))
}

/// Sends `request` (already carrying its URL, headers and JSON body) and reads the whole reply.
pub(crate) async fn send(request: reqwest::RequestBuilder) -> Result<HttpReply, ModelError> {
    let response = request
        .send()
        .await
        .map_err(|error| transport_error(&error))?;
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .text()
        .await
        .map_err(|error| transport_error(&error))?;
    Ok(HttpReply {
        status,
        headers,
        body,
    })
}

fn transport_error(error: &reqwest::Error) -> ModelError {
    if error.is_timeout() {
        ModelError::Timeout
    } else if error.is_builder() {
        ModelError::bad_config("base URL", describe(error))
    } else {
        ModelError::Transport {
            reason: describe(error),
        }
    }
}

/// The error and its causes on one line (reqwest's own message omits "connection refused").
fn describe(error: &reqwest::Error) -> String {
    crate::causes::on_one_line(error)
}

/// The first [`EXCERPT_CHARS`] characters of `body`, on one line.
pub(crate) fn excerpt(body: &str) -> String {
    let mut text: String = body.chars().take(EXCERPT_CHARS).collect();
    if body.chars().nth(EXCERPT_CHARS).is_some() {
        text.push('…');
    }
    text.replace(['\n', '\r'], " ")
}

/// A tool result's content as text: strings as they are, other values as JSON.
pub(crate) fn content_text(content: &serde_json::Value) -> String {
    match content {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Joins a base URL and a path with exactly one slash.
pub(crate) fn join(base_url: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base_url.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn reply(status: u16, headers: &[(&'static str, &'static str)], body: &str) -> HttpReply {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.insert(*name, HeaderValue::from_static(value));
        }
        HttpReply {
            status: StatusCode::from_u16(status).unwrap_or(StatusCode::IM_A_TEAPOT),
            headers: map,
            body: body.to_owned(),
        }
    }

    #[test]
    fn statuses_map_to_the_error_that_decides_retrying() {
        assert_eq!(
            reply(429, &[("retry-after", "2")], "").error(),
            ModelError::RateLimited {
                retry_after: Some(Duration::from_secs(2))
            }
        );
        assert_eq!(reply(408, &[], "").error(), ModelError::Timeout);
        assert_eq!(
            reply(529, &[], "{\"type\":\"overloaded_error\"}").error(),
            ModelError::Server {
                status: 529,
                body_excerpt: "{\"type\":\"overloaded_error\"}".into()
            }
        );
        assert!(matches!(
            reply(401, &[], "bad key").error(),
            ModelError::Rejected { status: 401, .. }
        ));
    }

    #[test]
    fn excerpts_are_short_and_on_one_line() {
        let long = "x\n".repeat(600);
        let text = excerpt(&long);
        assert!(!text.contains('\n'));
        assert_eq!(text.chars().count(), EXCERPT_CHARS + 1);
    }

    #[test]
    fn urls_join_with_one_slash() {
        assert_eq!(
            join("http://localhost:11434/v1/", "/chat/completions"),
            "http://localhost:11434/v1/chat/completions"
        );
    }
}
