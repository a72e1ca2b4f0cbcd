//! Requests to URLs someone other than the operator chose: public addresses only, unless the
//! operator's allowlist (`TESSERA_OUTBOUND_ALLOW`) admits the host.
//!
//! An ask's `callback_url` and the webhook an ask names are written by an API caller. Left
//! alone, the server would POST wherever they point — its own loopback, the private network,
//! the cloud metadata service — and report what it found there. So such a URL is judged
//! twice:
//!
//! - when the ask is created ([`OutboundAllow::check`]): an IP literal is judged as written
//!   (the `url` crate has already read `2130706433`, `0x7f.1` and `017700000001` as
//!   `127.0.0.1`), a host name is resolved and every address it resolves to must be public
//!   (`net::address`); a refusal is a 422 naming the field;
//! - when the request is sent ([`OutboundClient::request`]): names are resolved once more by
//!   the client's own resolver ([`PublicOnly`]), which refuses the name when any address is not
//!   public and otherwise hands exactly the addresses it checked to the connector. The check
//!   and the connection therefore use one resolution: a name that answered a public address at
//!   creation and answers `127.0.0.1` now (DNS rebinding) is refused, and there is no second
//!   lookup between the check and the connect for it to change in. A per-request client pinned
//!   with `ClientBuilder::resolve_to_addrs` would do the same at the cost of a client (and its
//!   TLS setup) per attempt; the resolver keeps one client and its connection pool.
//!
//! The checked client follows no redirects (a redirect would be a new, unchecked URL) and uses
//! no proxy (a proxy would resolve the name itself, after our check). What the operator
//! configured — provider base URLs, chat sites, YAML hosts, `TESSERA_NTFY_URL`,
//! `TESSERA_WEBHOOK_URL` — is trusted as configured and does not come through here.
//!
//! Allowlist entries are `host` (any port) or `host:port`, compared with the URL's host as the
//! `url` crate normalises it (lower case, IPv4 in dotted form, IPv6 in brackets). An admitted
//! host is trusted like the operator's own settings: its addresses are not judged.

use std::{
    fmt,
    net::{IpAddr, SocketAddr},
    sync::Arc,
    time::Duration,
};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

use super::address::{internal, Internal};

/// How long resolving a host name at creation may take.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(5);

/// The setting that admits internal receivers, named in every refusal.
pub const SETTING: &str = "TESSERA_OUTBOUND_ALLOW";

/// Why a URL may not be requested.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The URL names an address that is not public.
    #[error(
        "`{host}` is {kind}; requests go to public addresses only, unless {SETTING} lists the host"
    )]
    Address {
        /// The host as the URL names it, normalised (`127.0.0.1` for `2130706433`).
        host: String,
        /// What kind of address it is.
        kind: Internal,
    },
    /// The host name does not resolve, or resolves to an address that is not public. Which of
    /// the two is not said: that would tell a caller which internal names exist.
    #[error("`{host}` does not resolve to public addresses only; requests go to public addresses only, unless {SETTING} lists the host")]
    Name {
        /// The host name.
        host: String,
    },
    /// The URL has no host.
    #[error("the URL names no host")]
    NoHost,
}

/// One allowlist entry: a host, and a port when it names one.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    host: String,
    port: Option<u16>,
}

/// The hosts an API caller's URLs may reach whatever their addresses (`TESSERA_OUTBOUND_ALLOW`):
/// internal receivers the operator vouches for. Empty admits none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutboundAllow {
    entries: Vec<Entry>,
}

impl OutboundAllow {
    /// The empty allowlist: public addresses only.
    pub const NONE: Self = Self {
        entries: Vec::new(),
    };

    /// Parses the comma-separated setting: `host` or `host:port` entries (`[::1]:8080` for IPv6).
    ///
    /// # Errors
    /// A message naming the first entry that is not a host or `host:port`.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let mut entries = Vec::new();
        for entry in raw
            .split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
        {
            let bad = || format!("`{entry}` is not a host or host:port");
            let (host, port) = split_port(entry).ok_or_else(bad)?;
            let host = Host::parse(host).map_err(|_| bad())?;
            entries.push(Entry {
                host: host.to_string(),
                port,
            });
        }
        Ok(Self { entries })
    }

    /// This allowlist admitting `address` too (its IP and port), as the entry `IP:port` would.
    #[must_use]
    pub fn with_address(mut self, address: SocketAddr) -> Self {
        self.entries.push(Entry {
            host: literal_host(address.ip()),
            port: Some(address.port()),
        });
        self
    }

    /// Whether the allowlist admits `url`'s host and port.
    #[must_use]
    pub fn admits(&self, url: &Url) -> bool {
        let (Some(host), Some(port)) = (url.host(), url.port_or_known_default()) else {
            return false;
        };
        let host = host.to_string();
        self.entries
            .iter()
            .any(|entry| entry.host == host && entry.port.is_none_or(|only| only == port))
    }

    /// Whether `url` may be requested: admitted, or an address that is public, or a name whose
    /// addresses are all public (resolved now, within a few seconds).
    ///
    /// # Errors
    /// [`Refused`] saying why not.
    pub async fn check(&self, url: &Url) -> Result<(), Refused> {
        if self.admits(url) {
            return Ok(());
        }
        match url.host() {
            None => Err(Refused::NoHost),
            Some(Host::Ipv4(address)) => judge_literal(IpAddr::V4(address)),
            Some(Host::Ipv6(address)) => judge_literal(IpAddr::V6(address)),
            Some(Host::Domain(name)) => {
                let port = url.port_or_known_default().unwrap_or(0);
                let refused = || Refused::Name {
                    host: name.to_owned(),
                };
                let addresses = tokio::time::timeout(LOOKUP_TIMEOUT, public_addresses(name, port))
                    .await
                    .map_err(|_| refused())?
                    .map_err(|_| refused())?;
                if addresses.is_empty() {
                    return Err(refused());
                }
                Ok(())
            }
        }
    }
}

/// `host` and its port, if any; `None` when the port is not a number.
fn split_port(entry: &str) -> Option<(&str, Option<u16>)> {
    let colon = if entry.starts_with('[') {
        entry.find(']').map(|end| end + 1)
    } else {
        // A bare IPv6 address has several colons and no port.
        (entry.matches(':').count() == 1)
            .then(|| entry.find(':'))
            .flatten()
    };
    match colon {
        Some(at) if entry[at..].starts_with(':') => {
            let port = entry[at + 1..].parse().ok()?;
            Some((&entry[..at], Some(port)))
        }
        Some(at) if at == entry.len() => Some((entry, None)),
        Some(_) => None,
        None => Some((entry, None)),
    }
}

fn judge_literal(address: IpAddr) -> Result<(), Refused> {
    match internal(address) {
        None => Ok(()),
        Some(kind) => Err(Refused::Address {
            host: literal_host(address),
            kind,
        }),
    }
}

/// An IP address as the `url` crate writes a URL's host (IPv6 in brackets, in hex), so that
/// entries and URLs compare as text.
fn literal_host(address: IpAddr) -> String {
    match address {
        IpAddr::V4(address) => Host::<String>::Ipv4(address).to_string(),
        IpAddr::V6(address) => Host::<String>::Ipv6(address).to_string(),
    }
}

/// Resolves `name` and returns its addresses when every one is public; a refusal when any is
/// not (a name that answers both is as dangerous as one that answers only the internal one).
async fn public_addresses(name: &str, port: u16) -> Result<Vec<SocketAddr>, ResolveError> {
    let addresses: Vec<SocketAddr> = tokio::net::lookup_host((name, port))
        .await
        .map_err(ResolveError::Lookup)?
        .collect();
    if addresses
        .iter()
        .any(|address| internal(address.ip()).is_some())
    {
        return Err(ResolveError::Refused(Refused::Name {
            host: name.to_owned(),
        }));
    }
    Ok(addresses)
}

/// Why [`PublicOnly`] gave no addresses.
#[derive(Debug, thiserror::Error)]
enum ResolveError {
    #[error("the host name does not resolve: {0}")]
    Lookup(std::io::Error),
    #[error(transparent)]
    Refused(Refused),
}

/// The checked client's resolver: every address must be public, and those are the addresses
/// the connection is made to (see the module doc).
#[derive(Debug)]
struct PublicOnly;

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let name = name.as_str().to_owned();
        Box::pin(async move {
            // Port 0: reqwest puts the URL's port in.
            match public_addresses(&name, 0).await {
                Ok(addresses) => Ok(Box::new(addresses.into_iter()) as Addrs),
                // The refusal itself goes into reqwest's error chain, for `refusal_in` to find.
                Err(ResolveError::Refused(refused)) => Err(refused.into()),
                Err(ResolveError::Lookup(error)) => Err(error.into()),
            }
        })
    }
}

/// An HTTP client for URLs an API caller chose: admitted hosts through a plain client, every
/// other host through one whose resolver admits public addresses only; no redirects either way.
#[derive(Clone)]
pub struct OutboundClient {
    admitted: reqwest::Client,
    checked: Option<(OutboundAllow, reqwest::Client)>,
}

impl fmt::Debug for OutboundClient {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("OutboundClient")
            .field("allow", &self.checked.as_ref().map(|(allow, _)| allow))
            .finish_non_exhaustive()
    }
}

impl OutboundClient {
    /// A client for URLs the operator configured: every URL is sent as it is (no redirects).
    ///
    /// # Errors
    /// When reqwest cannot build the client.
    pub fn configured(builder: reqwest::ClientBuilder) -> reqwest::Result<Self> {
        Ok(Self {
            admitted: builder
                .redirect(reqwest::redirect::Policy::none())
                .build()?,
            checked: None,
        })
    }

    /// A client for URLs an API caller chose, within `allow`; `builder` makes the base of both
    /// clients (timeouts, user agent).
    ///
    /// # Errors
    /// When reqwest cannot build a client.
    pub fn checked(
        allow: &OutboundAllow,
        builder: impl Fn() -> reqwest::ClientBuilder,
    ) -> reqwest::Result<Self> {
        let admitted = builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        let checked = builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(Arc::new(PublicOnly))
            .build()?;
        Ok(Self {
            admitted,
            checked: Some((allow.clone(), checked)),
        })
    }

    /// A request to `url` through the client that may send it. A host name is judged when the
    /// request is sent ([`refusal_in`] tells that refusal from other transport errors).
    ///
    /// # Errors
    /// [`Refused`] for an IP literal that is not public, or a URL with no host.
    pub fn request(
        &self,
        method: reqwest::Method,
        url: &Url,
    ) -> Result<reqwest::RequestBuilder, Refused> {
        let Some((allow, checked)) = &self.checked else {
            return Ok(self.admitted.request(method, url.clone()));
        };
        if allow.admits(url) {
            return Ok(self.admitted.request(method, url.clone()));
        }
        match url.host() {
            None => return Err(Refused::NoHost),
            Some(Host::Ipv4(address)) => judge_literal(IpAddr::V4(address))?,
            Some(Host::Ipv6(address)) => judge_literal(IpAddr::V6(address))?,
            Some(Host::Domain(_)) => {}
        }
        Ok(checked.request(method, url.clone()))
    }
}

/// The refusal inside `error` when the checked resolver refused the host, else `None`.
#[must_use]
pub fn refusal_in(error: &reqwest::Error) -> Option<&Refused> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        if let Some(refused) = cause.downcast_ref::<Refused>() {
            return Some(refused);
        }
        source = cause.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(raw: &str) -> anyhow::Result<Url> {
        Ok(Url::parse(raw)?)
    }

    #[test]
    fn entries_are_hosts_with_an_optional_port_normalised_as_urls_are() -> anyhow::Result<()> {
        let allow = OutboundAllow::parse("Receiver.Internal, 127.0.0.1:8080, [::1]:9000, 0x7f.2")
            .map_err(anyhow::Error::msg)?;
        assert!(allow.admits(&url("http://receiver.internal/hook")?));
        assert!(allow.admits(&url("https://RECEIVER.internal:8443/hook")?));
        assert!(allow.admits(&url("http://127.0.0.1:8080/x")?));
        assert!(allow.admits(&url("http://2130706433:8080/x")?));
        assert!(!allow.admits(&url("http://127.0.0.1:8081/x")?));
        assert!(allow.admits(&url("http://[::1]:9000/x")?));
        assert!(!allow.admits(&url("http://[::1]:9001/x")?));
        assert!(
            allow.admits(&url("http://127.0.0.2:1/")?),
            "0x7f.2 is 127.0.0.2"
        );
        assert!(!allow.admits(&url("http://receiver.internal.evil.test/")?));
        assert!(!OutboundAllow::default().admits(&url("http://127.0.0.1/")?));
        for bad in ["http://x/", "host:port", "a b", "host:99999"] {
            assert!(OutboundAllow::parse(bad).is_err(), "{bad}");
        }
        Ok(())
    }

    #[tokio::test]
    async fn literal_addresses_in_any_spelling_are_judged_as_the_address_they_are(
    ) -> anyhow::Result<()> {
        let allow = OutboundAllow::default();
        for (raw, host) in [
            ("http://127.0.0.1:9/internal", "127.0.0.1"),
            ("http://2130706433/", "127.0.0.1"),
            ("http://0x7f.1/", "127.0.0.1"),
            ("http://017700000001/", "127.0.0.1"),
            (
                "http://169.254.169.254/latest/meta-data/",
                "169.254.169.254",
            ),
            ("http://[::ffff:127.0.0.1]/", "[::ffff:7f00:1]"),
            ("http://[fd00:ec2::254]/", "[fd00:ec2::254]"),
            ("http://0/", "0.0.0.0"),
        ] {
            let refused = allow.check(&url(raw)?).await;
            assert!(
                matches!(&refused, Err(Refused::Address { host: named, .. }) if named == host),
                "{raw}: {refused:?}"
            );
        }
        assert_eq!(allow.check(&url("http://93.184.215.14/")?).await, Ok(()));
        Ok(())
    }

    #[tokio::test]
    async fn a_name_that_resolves_to_loopback_is_refused_unless_admitted() -> anyhow::Result<()> {
        let refused = OutboundAllow::default()
            .check(&url("http://localhost:9/")?)
            .await;
        assert_eq!(
            refused,
            Err(Refused::Name {
                host: "localhost".into()
            })
        );
        let allow = OutboundAllow::parse("localhost:9").map_err(anyhow::Error::msg)?;
        assert_eq!(allow.check(&url("http://localhost:9/")?).await, Ok(()));
        Ok(())
    }

    #[tokio::test]
    async fn the_checked_client_refuses_internal_literals_and_names_before_connecting(
    ) -> anyhow::Result<()> {
        let client = OutboundClient::checked(&OutboundAllow::default(), reqwest::Client::builder)?;
        assert!(matches!(
            client.request(reqwest::Method::POST, &url("http://0x7f.1:9/")?),
            Err(Refused::Address { .. })
        ));
        // A name goes to the resolver, which refuses it when it answers an internal address.
        let error = client
            .request(reqwest::Method::POST, &url("http://localhost:9/")?)?
            .send()
            .await
            .err()
            .ok_or_else(|| anyhow::anyhow!("localhost was reached"))?;
        assert!(refusal_in(&error).is_some(), "{error:?}");
        let configured = OutboundClient::configured(reqwest::Client::builder())?;
        assert!(configured
            .request(reqwest::Method::POST, &url("http://127.0.0.1:9/")?)
            .is_ok());
        Ok(())
    }
}
