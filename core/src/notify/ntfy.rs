//! Publishing to an ntfy topic: one `POST {server}/{topic}` per notification.
//!
//! ntfy (<https://ntfy.sh>, or a self-hosted server) turns an HTTP POST into a push
//! notification on the person's phone. The body is the message; the headers carry the rest:
//! `Title`, `Click` (the page link, opened when the notification is tapped), `Priority` (1–5),
//! `Tags` (comma-separated) and, for protected topics, `Authorization: Bearer <token>`. Header
//! values must be ASCII, so a title or tag with other characters is sent as an RFC 2047
//! encoded word (`=?UTF-8?Q?…?=`), which ntfy decodes. Any non-2xx reply is an error naming
//! the status; publishing is not retried here because a duplicate push is worse than a missed
//! one the run page still shows.

use std::{fmt, time::Duration};

use http::HeaderValue;

use super::{
    describe, http_client, redacted_url, reply_excerpt, Channel, Notification, NotifyError,
};
use tessera_settings::Secret;

/// Where to publish: the topic URL and, for protected topics, an access token.
#[derive(Clone, PartialEq, Eq)]
pub struct NtfyConfig {
    topic_url: url::Url,
    token: Option<Secret>,
}

impl NtfyConfig {
    /// Parses the topic URL, e.g. `https://ntfy.sh/my-topic`: the server with the topic as its
    /// last path segment.
    ///
    /// # Errors
    /// Returns [`NotifyError::BadConfig`] naming `TESSERA_NTFY_URL` when the URL is not
    /// http(s) or names no topic.
    pub fn new(topic_url: &str, token: Option<Secret>) -> Result<Self, NotifyError> {
        const SETTING: &str = "TESSERA_NTFY_URL";
        let url = url::Url::parse(topic_url.trim()).map_err(|error| {
            NotifyError::bad_config(
                SETTING,
                format!("not a URL ({error}), e.g. https://ntfy.sh/my-topic"),
            )
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(NotifyError::bad_config(
                SETTING,
                "must start with http:// or https://",
            ));
        }
        let has_topic = url
            .path_segments()
            .and_then(|mut segments| segments.next_back())
            .is_some_and(|topic| !topic.is_empty());
        if !has_topic {
            return Err(NotifyError::bad_config(
                SETTING,
                "names no topic; put it after the server, e.g. https://ntfy.sh/my-topic",
            ));
        }
        Ok(Self {
            topic_url: url,
            token,
        })
    }

    /// The URL each notification is posted to.
    #[must_use]
    pub fn topic_url(&self) -> &url::Url {
        &self.topic_url
    }

    /// The same server and token with another topic.
    ///
    /// # Errors
    /// [`NotifyError::BadConfig`] when `topic` is empty or holds a `/`.
    pub fn with_topic(&self, topic: &str) -> Result<Self, NotifyError> {
        if topic.is_empty() || topic.contains('/') {
            return Err(NotifyError::bad_config(
                "notify.ntfy.topic",
                "must be one path segment",
            ));
        }
        let mut url = self.topic_url().clone();
        url.path_segments_mut()
            .map_err(|()| NotifyError::bad_config("TESSERA_NTFY_URL", "cannot carry a topic"))?
            .pop()
            .push(topic);
        Self::new(url.as_str(), self.token.clone())
    }

    /// The topic: the last segment of the URL's path.
    #[must_use]
    pub fn topic(&self) -> &str {
        self.topic_url
            .path_segments()
            .and_then(|mut segments| segments.next_back())
            .unwrap_or_default()
    }
}

impl fmt::Debug for NtfyConfig {
    // On a public server the topic name is the only protection, so it is not printed.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("NtfyConfig")
            .field("topic_url", &redacted_url(&self.topic_url))
            .field("token", &self.token)
            .finish()
    }
}

/// Publishes notifications to one ntfy topic.
#[derive(Clone, Debug)]
pub struct NtfyClient {
    config: NtfyConfig,
    client: reqwest::Client,
}

impl NtfyClient {
    /// A client for `config` whose requests give up after `timeout`.
    ///
    /// # Errors
    /// Returns [`NotifyError::BadConfig`] when the HTTP client cannot be built.
    pub fn new(config: NtfyConfig, timeout: Duration) -> Result<Self, NotifyError> {
        Ok(Self {
            config,
            client: http_client(timeout)?,
        })
    }

    /// Publishes `notification` to the topic.
    ///
    /// # Errors
    /// Returns [`NotifyError::Transport`] when the server cannot be reached and
    /// [`NotifyError::Status`] naming the status when it answers other than 2xx.
    pub async fn publish(&self, notification: &Notification) -> Result<(), NotifyError> {
        let mut request = self
            .client
            .post(self.config.topic_url.clone())
            .header("Title", header_text(&notification.title))
            .header("Click", header_text(notification.link.as_str()))
            .header(
                "Priority",
                HeaderValue::from(u16::from(notification.priority.number())),
            )
            .body(notification.message.clone());
        if !notification.tags.is_empty() {
            request = request.header("Tags", header_text(&notification.tags.join(",")));
        }
        if let Some(token) = &self.config.token {
            let mut value =
                HeaderValue::from_str(&format!("Bearer {}", token.expose())).map_err(|_| {
                    NotifyError::bad_config("TESSERA_NTFY_TOKEN", "must be printable ASCII")
                })?;
            value.set_sensitive(true);
            request = request.header(http::header::AUTHORIZATION, value);
        }
        let response = request
            .send()
            .await
            .map_err(|error| NotifyError::Transport {
                channel: Channel::Ntfy,
                reason: describe(error),
            })?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        Err(NotifyError::Status {
            channel: Channel::Ntfy,
            status: status.as_u16(),
            body_excerpt: reply_excerpt(response).await,
        })
    }
}

/// A header value from any text: control characters become spaces, and text that is not
/// printable ASCII becomes an RFC 2047 Q-encoded word.
pub(crate) fn header_text(text: &str) -> HeaderValue {
    let text: String = text.chars().map(super::on_one_line).collect();
    // `HeaderValue::from_str` also takes bytes above 127, which ntfy would read as Latin-1.
    if text.is_ascii() {
        if let Ok(value) = HeaderValue::from_str(&text) {
            return value;
        }
    }
    let mut encoded = String::from("=?UTF-8?Q?");
    for byte in text.bytes() {
        match byte {
            b' ' => encoded.push('_'),
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'!' | b'*' | b'+' | b'-' | b'/' => {
                encoded.push(char::from(byte));
            }
            other => encoded.push_str(&format!("={other:02X}")),
        }
    }
    encoded.push_str("?=");
    // Only ASCII letters, digits and a few symbols remain, which every header accepts.
    HeaderValue::from_str(&encoded).unwrap_or_else(|_| HeaderValue::from_static(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_topic_url_is_split_into_server_and_topic() -> Result<(), NotifyError> {
        let config = NtfyConfig::new("https://ntfy.sh/my-topic", None)?;
        assert_eq!(config.topic(), "my-topic");
        assert_eq!(config.topic_url().as_str(), "https://ntfy.sh/my-topic");
        Ok(())
    }

    #[test]
    fn a_url_without_a_topic_names_the_setting() {
        let error = NtfyConfig::new("https://ntfy.sh/", None)
            .err()
            .map(|error| error.to_string());
        assert!(
            error
                .as_deref()
                .is_some_and(|text| text.starts_with("invalid TESSERA_NTFY_URL: names no topic")),
            "{error:?}"
        );
        assert!(NtfyConfig::new("ftp://ntfy.sh/topic", None).is_err());
        assert!(NtfyConfig::new("ntfy.sh/topic", None).is_err());
    }

    #[test]
    fn debug_output_hides_the_topic_and_the_token() -> Result<(), NotifyError> {
        let config = NtfyConfig::new(
            "https://ntfy.sh/secret-topic-name",
            Some(Secret::new("tk_secret")),
        )?;
        let printed = format!("{config:?}");
        assert!(!printed.contains("secret-topic-name"), "{printed}");
        assert!(!printed.contains("tk_secret"), "{printed}");
        Ok(())
    }

    #[test]
    fn ascii_header_text_is_sent_as_it_is() {
        assert_eq!(header_text("Three emails to sort"), "Three emails to sort");
        assert_eq!(header_text("line\r\nbreak"), "line  break");
    }

    #[test]
    fn other_header_text_becomes_an_encoded_word() {
        assert_eq!(header_text("Café ok"), "=?UTF-8?Q?Caf=C3=A9_ok?=");
        assert_eq!(header_text("a?=b"), "a?=b");
        assert_eq!(header_text("ü=?"), "=?UTF-8?Q?=C3=BC=3D=3F?=");
    }
}
