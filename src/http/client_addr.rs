//! Who a request comes from, for per-client limits (the login throttle).
//!
//! The connection's address (axum's `ConnectInfo`, which `startup.rs` serves with) unless the
//! operator says a reverse proxy is in front (`TESSERA_BEHIND_PROXY`): then the last address of
//! `X-Forwarded-For`, the one that proxy appended — the earlier ones are whatever the client
//! wrote. Without the setting the header is ignored, since any client can send it to pass for
//! someone else.

use std::{
    convert::Infallible,
    net::{IpAddr, Ipv4Addr, SocketAddr},
};

use axum::extract::{ConnectInfo, FromRequestParts};
use http::{request::Parts, HeaderMap};

use super::AppState;

const FORWARDED_FOR: &str = "x-forwarded-for";

/// The client's address as this server counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientAddr(pub IpAddr);

impl FromRequestParts<AppState> for ClientAddr {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Infallible> {
        let forwarded = if state.config.behind_proxy {
            last_forwarded(&parts.headers)
        } else {
            None
        };
        let connected = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|info| info.0.ip());
        // A router driven without a server (`oneshot` tests) has no connection: one unknown client.
        Ok(Self(
            forwarded
                .or(connected)
                .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED)),
        ))
    }
}

/// The last address of every `X-Forwarded-For` header taken as one list, with or without a port.
fn last_forwarded(headers: &HeaderMap) -> Option<IpAddr> {
    let last = headers
        .get_all(FORWARDED_FOR)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .rfind(|entry| !entry.is_empty())?;
    last.parse::<IpAddr>()
        .ok()
        .or_else(|| last.parse::<SocketAddr>().ok().map(|socket| socket.ip()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proxy_appended_address_is_the_last_one() {
        let mut headers = HeaderMap::new();
        headers.append(
            FORWARDED_FOR,
            http::HeaderValue::from_static("1.2.3.4, 10.0.0.1"),
        );
        headers.append(
            FORWARDED_FOR,
            http::HeaderValue::from_static("198.51.100.9:4711"),
        );
        assert_eq!(
            last_forwarded(&headers),
            Some(IpAddr::from([198, 51, 100, 9]))
        );
        assert_eq!(last_forwarded(&HeaderMap::new()), None);
    }
}
