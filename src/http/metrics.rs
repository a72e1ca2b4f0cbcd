//! `GET /metrics` (Prometheus text exposition, `telemetry::metrics`) and the middleware that times every request.
//!
//! `/metrics` shows aggregate counts and latencies only (route templates, never raw paths or
//! tokens; no ids, names or answers), yet it tells a stranger how busy the server is and costs a
//! database read, so it is not open: with `TESSERA_METRICS_TOKEN` a scraper sends that token as
//! a bearer (from anywhere); without one only a loopback client is answered (a scraper beside
//! the server). Behind a proxy (`TESSERA_BEHIND_PROXY`) every connection comes from the proxy,
//! often over loopback, so there the token is the only way in.

use std::{net::IpAddr, time::Instant};

use axum::{
    extract::{MatchedPath, Request, State},
    middleware::Next,
    response::{IntoResponse, Response},
};
use http::{header, HeaderMap};

use super::{client_addr::ClientAddr, error::AppError, AppState};
use crate::{
    auth::ApiTokenHash,
    config::Config,
    telemetry::metrics::{render, CONTENT_TYPE},
    workflow::Runner,
};

/// Times a request and counts it under its route template and status class.
pub async fn track_requests(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |path| path.as_str().to_owned());
    let method = request.method().clone();
    let started = Instant::now();
    let response = next.run(request).await;
    state.metrics().observe_request(
        method.as_str(),
        &route,
        response.status().as_u16(),
        started.elapsed(),
    );
    response
}

/// Whether `client`, sending `headers`, may read `/metrics` under `config`.
///
/// # Errors
/// [`AppError::Unauthorized`] without the configured token; [`AppError::Forbidden`] when no
/// token is configured and the client is not on loopback, or the server is behind a proxy.
pub fn check_scraper(config: &Config, client: IpAddr, headers: &HeaderMap) -> Result<(), AppError> {
    if let Some(token) = &config.access.metrics_token {
        let presented = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "))
            .map(str::trim);
        return match presented {
            Some(presented) if ApiTokenHash::of(token.expose()).matches(presented) => Ok(()),
            _ => Err(AppError::Unauthorized),
        };
    }
    if config.behind_proxy {
        return Err(AppError::Forbidden {
            code: "metrics_token_required",
            message: "behind a proxy every client may be anyone: set TESSERA_METRICS_TOKEN and scrape with it".to_owned(),
        });
    }
    if client.is_loopback() {
        return Ok(());
    }
    Err(AppError::Forbidden {
        code: "metrics_token_required",
        message: "only loopback clients may read /metrics without TESSERA_METRICS_TOKEN".to_owned(),
    })
}

/// `GET /metrics`.
///
/// # Errors
/// 401 or 403 for a client [`check_scraper`] refuses; database failures (a generic 500).
pub async fn show_metrics(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    check_scraper(&state.config, client, &headers)?;
    let figures = state.store.metrics_figures().await?;
    let text = render(state.metrics(), state.runner().map(Runner::stats), &figures)
        .map_err(|error| AppError::Unexpected(anyhow::anyhow!("encoding /metrics: {error}")))?;
    Ok(([(header::CONTENT_TYPE, CONTENT_TYPE)], text).into_response())
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use http::HeaderValue;

    use super::*;
    use crate::config::{DatabaseUrl, Secret};

    fn config() -> Config {
        Config::for_tests(DatabaseUrl::Sqlite("unused.db".to_owned()))
    }

    fn bearer(token: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Ok(value) = HeaderValue::from_str(&format!("Bearer {token}")) {
            headers.insert(header::AUTHORIZATION, value);
        }
        headers
    }

    fn status(outcome: Result<(), AppError>) -> u16 {
        outcome.map_or_else(|error| error.into_response().status().as_u16(), |()| 200)
    }

    #[test]
    fn without_a_token_only_loopback_clients_are_answered_and_none_behind_a_proxy() {
        let mut config = config();
        let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let stranger = IpAddr::from([203, 0, 113, 7]);
        assert_eq!(
            status(check_scraper(&config, loopback, &HeaderMap::new())),
            200
        );
        assert_eq!(
            status(check_scraper(&config, stranger, &HeaderMap::new())),
            403
        );
        config.behind_proxy = true;
        assert_eq!(
            status(check_scraper(&config, loopback, &HeaderMap::new())),
            403
        );
    }

    #[test]
    fn with_a_token_every_client_needs_it() {
        let mut config = config();
        config.behind_proxy = true;
        config.access.metrics_token = Some(Secret::new("scrape-0123456789abcdef"));
        let stranger = IpAddr::from([203, 0, 113, 7]);
        let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
        assert_eq!(
            status(check_scraper(
                &config,
                stranger,
                &bearer("scrape-0123456789abcdef")
            )),
            200
        );
        assert_eq!(
            status(check_scraper(
                &config,
                stranger,
                &bearer("scrape-0123456789abcdeX")
            )),
            401
        );
        assert_eq!(
            status(check_scraper(&config, loopback, &HeaderMap::new())),
            401
        );
    }
}
