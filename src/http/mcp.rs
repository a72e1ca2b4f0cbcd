//! `/mcp`: the MCP server (`crate::mcp`) over Streamable HTTP, behind the API token.
//!
//! `rmcp`'s `StreamableHttpService` speaks the transport; this file only configures it. MCP
//! sessions live in this process's memory (a client that reaches another process, or this one
//! after a restart, gets 404 and initializes again, as the transport prescribes); the asks
//! they create live in the store like every ask. Sessions end when the server shuts down, so
//! an open event stream does not hold up a graceful shutdown.

use std::sync::Arc;

use axum::{middleware, Router};
use rmcp::transport::streamable_http_server::{
    session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
};

use super::{api_token::require_api_token, site::SiteFiles, AppState};
use crate::{
    asks::AskCapabilities,
    mcp::{server::Views, TesseraMcp},
};

/// The MCP endpoint, when the state has a runner (asks need one). The page's MCP App view
/// carries the site's stylesheet from `site_files`.
pub fn routes(state: &AppState, site_files: &SiteFiles) -> Router<AppState> {
    let Some(runner) = state.runner() else {
        return Router::new();
    };
    let stylesheet = site_files
        .stylesheet(&state.site.output_name)
        .unwrap_or_else(|| {
            tracing::warn!("the site has no stylesheet: pages shown inline in MCP hosts are unstyled (build with `make build`)");
            String::new()
        });
    let server = TesseraMcp::new(
        runner.clone(),
        state.config.public_url.clone(),
        AskCapabilities::of(&state.config.notify, &state.config.outbound_allow)
            .with_groups(state.config.groups.clone()),
    )
    .with_views(Views {
        stylesheet: stylesheet.into(),
        receipt_lifetime: state.config.access.receipt_lifetime,
    });
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(allowed_hosts(state))
        .with_max_request_body_bytes(state.config.body_limit)
        .with_cancellation_token(state.shutdown().child_token());
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    Router::new()
        .route_service("/mcp", service)
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            require_api_token,
        ))
}

/// The `Host`s `/mcp` answers (against DNS rebinding): loopback, the listen address and the
/// public URL's host.
fn allowed_hosts(state: &AppState) -> Vec<String> {
    let mut hosts = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
        state.config.addr.ip().to_string(),
    ];
    if let Some(host) = url::Url::parse(&state.config.public_url)
        .ok()
        .and_then(|url| url.host_str().map(str::to_owned))
    {
        hosts.push(host);
    }
    hosts
}
