//! The `http` step: one request per attempt, to allowlisted hosts only.
//!
//! The URL is a template over the run's state; one starting with `/` is resolved against the
//! server's public URL (the demo API in `make run`). The host must be on the operator's
//! allowlist (`TESSERA_WORKFLOW_HTTP_HOSTS`), checked after rendering, so no state value can
//! send a request elsewhere. Connection failures, timeouts, 429 and 5xx are retryable (the
//! step's retry policy backs off durably); any other non-2xx and a refused host are fatal.
//! Every attempt carries `Idempotency-Key: <run id>/<step name>`: a step runs at least once, so
//! the receiving API can recognise a repeat after a crash. A request to this server itself also
//! carries its own headers (`YamlServices::own_headers`: the demo site's write key), which no
//! file names and no other host ever receives.
//!
//! Values the URL template prints are percent-encoded (`util::templates::url_environment`), so
//! a state value cannot reach another path or query of an allowed host. Redirects are followed
//! only within the origin of the request ([`redirect_policy`]): the step's headers, credentials
//! among them, were written for that origin, and reqwest strips only `Authorization` and
//! cookies when a redirect leaves it. A redirect elsewhere fails the step, naming where it
//! pointed (its origin only). A reply is read up to [`MAX_RESPONSE_BYTES`]; a longer 2xx body
//! fails the step, naming the cap.

use std::fmt;

use serde_json::Value;

use crate::{net::body::read_capped, workflow::step::StepError};

/// The most of a reply an `http` step reads (and may save into the run's state).
pub const MAX_RESPONSE_BYTES: usize = 1024 * 1024;

/// How many redirects within one origin a request follows.
const MAX_REDIRECTS: usize = 5;

/// The hosts `http` steps may call: `host` (any port) or `host:port` entries; `self` stands
/// for this server's own public URL.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct HostAllowlist {
    entries: Vec<String>,
}

impl fmt::Debug for HostAllowlist {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.debug_list().entries(&self.entries).finish()
    }
}

impl HostAllowlist {
    /// Parses `TESSERA_WORKFLOW_HTTP_HOSTS` (comma-separated), resolving `self` against
    /// `public_url`.
    ///
    /// # Errors
    /// A message naming the entry that is not a host or `host:port`.
    pub fn parse(raw: &str, public_url: &str) -> Result<Self, String> {
        let mut entries = Vec::new();
        for entry in raw
            .split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
        {
            if entry == "self" {
                let own = url::Url::parse(public_url).map_err(|error| {
                    format!("`self`: TESSERA_PUBLIC_URL does not parse: {error}")
                })?;
                entries.push(authority(&own).ok_or("`self`: TESSERA_PUBLIC_URL has no host")?);
                continue;
            }
            let parsed = url::Url::parse(&format!("http://{entry}/"))
                .ok()
                .filter(|url| url.path() == "/" && url.username().is_empty());
            match parsed.and_then(|url| url.host_str().map(str::to_ascii_lowercase)) {
                Some(host) if !host.is_empty() => entries.push(entry.to_ascii_lowercase()),
                _ => return Err(format!("`{entry}` is not a host or host:port")),
            }
        }
        Ok(Self { entries })
    }

    /// Whether `url`'s host (and port) is allowed.
    #[must_use]
    pub fn allows(&self, url: &url::Url) -> bool {
        let Some(host) = url.host_str().map(str::to_ascii_lowercase) else {
            return false;
        };
        let with_port = authority(url);
        self.entries
            .iter()
            .any(|entry| *entry == host || Some(entry) == with_port.as_ref())
    }
}

/// `host:port` of a URL, with the scheme's default port when it names none.
fn authority(url: &url::Url) -> Option<String> {
    let host = url.host_str()?.to_ascii_lowercase();
    Some(match url.port_or_known_default() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    })
}

/// Resolves a rendered URL: absolute as written, or relative to `public_url`.
///
/// # Errors
/// A fatal step error when it does not parse or its scheme is not http(s).
pub(crate) fn resolve(rendered: &str, public_url: &str) -> Result<url::Url, StepError> {
    let url = if rendered.starts_with('/') {
        url::Url::parse(&format!("{}{rendered}", public_url.trim_end_matches('/')))
    } else {
        url::Url::parse(rendered)
    }
    .map_err(|error| {
        StepError::fatal(anyhow::anyhow!(
            "the URL `{rendered}` does not parse: {error}"
        ))
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(StepError::fatal(anyhow::anyhow!(
            "the URL `{rendered}` is not http or https"
        )));
    }
    Ok(url)
}

/// Whether `url` is on this server (`public_url`'s scheme, host and port): only such a request
/// carries the server's own headers.
pub(crate) fn is_own_origin(url: &url::Url, public_url: &str) -> bool {
    url::Url::parse(public_url).is_ok_and(|own| own.origin() == url.origin())
}

/// The redirect policy of the `http` steps' client: follow a redirect only when it stays on the
/// origin (scheme, host, port) the request was sent to, at most [`MAX_REDIRECTS`] times; any
/// other is not followed, and [`send`] fails the step on it.
#[must_use]
pub fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if same_origin && attempt.previous().len() <= MAX_REDIRECTS {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

/// One attempt: the response's status and body (JSON when it parses, else text).
pub(crate) async fn send(request: reqwest::RequestBuilder) -> Result<Value, StepError> {
    let response = request
        .send()
        .await
        .map_err(|error| StepError::retryable(anyhow::anyhow!("the request failed: {error}")))?;
    let status = response.status();
    if status.is_redirection() {
        let target = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|location| location.to_str().ok())
            .and_then(|location| response.url().join(location).ok())
            .map_or_else(
                || "nowhere".to_owned(),
                |target| target.origin().ascii_serialization(),
            );
        return Err(StepError::fatal(anyhow::anyhow!(
            "the server answered {status}, a redirect to {target}; an http step follows redirects within the origin it called only, at most {MAX_REDIRECTS}"
        )));
    }
    let read = read_capped(response, MAX_RESPONSE_BYTES)
        .await
        .map_err(|error| {
            StepError::retryable(anyhow::anyhow!("reading the response failed: {error}"))
        })?;
    if status.is_success() && !read.complete {
        return Err(StepError::fatal(anyhow::anyhow!(
            "the server answered {status} with a body over {MAX_RESPONSE_BYTES} bytes, the most an http step reads"
        )));
    }
    let text = read.text();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    if status.is_success() {
        return Ok(serde_json::json!({"status": status.as_u16(), "body": body}));
    }
    let error = anyhow::anyhow!("the server answered {status}: {}", short(&body));
    if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
        Err(StepError::retryable(error))
    } else {
        Err(StepError::fatal(error))
    }
}

fn short(body: &Value) -> String {
    let text = match body {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    text.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allowlist_takes_hosts_ports_and_self() -> Result<(), String> {
        let hosts = HostAllowlist::parse(
            "api.example.com, self, 10.0.0.1:8080",
            "http://127.0.0.1:3000",
        )?;
        let allowed = |raw: &str| url::Url::parse(raw).is_ok_and(|url| hosts.allows(&url));
        assert!(allowed("https://api.example.com/x"));
        assert!(allowed("http://API.example.com:9000/x"));
        assert!(allowed("http://127.0.0.1:3000/demo-api/expenses"));
        assert!(!allowed("http://127.0.0.1:3001/demo-api/expenses"));
        assert!(allowed("http://10.0.0.1:8080/"));
        assert!(!allowed("http://10.0.0.1/"));
        assert!(!allowed("https://evil.example.com/"));
        assert!(HostAllowlist::parse("http://x/y", "http://127.0.0.1:3000").is_err());
        Ok(())
    }

    #[test]
    fn only_this_servers_origin_is_its_own() {
        let own = |raw: &str| {
            url::Url::parse(raw).is_ok_and(|url| is_own_origin(&url, "http://127.0.0.1:3000"))
        };
        assert!(own("http://127.0.0.1:3000/demo-api/expenses"));
        assert!(!own("http://127.0.0.1:3001/demo-api/expenses"));
        assert!(!own("https://127.0.0.1:3000/demo-api/expenses"));
        assert!(!own("http://evil.example/demo-api/expenses"));
    }
}
