//! MCP Apps (the `io.modelcontextprotocol/ui` extension, stable revision 2026-01-26): a client
//! that can render HTML views inline says so when it initializes; for it, `ask_person` names a
//! `ui://` resource that shows the page inside the conversation ([`super::inline`]).
//!
//! The resource is one static HTML document per version: the site's stylesheet and a script that
//! speaks the view side of the postMessage bridge, both inline, since the host's default CSP
//! allows no network. A version's script never changes once released: a host that cached
//! `ui://tessera/page/v1`, or a conversation that named it before an upgrade, still gets a view
//! that speaks to the tools as it did. A new version is added beside the old ones.

use rmcp::{model::MetaObject, service::Peer, RoleServer};
use serde_json::{json, Value};

use super::tools::object;

/// The extension's id in `capabilities.extensions`.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/ui";
/// The MIME type of an MCP App's HTML.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The `_meta` key a tool result carries the page under, for the view only.
pub const PAGE_META: &str = "tessera/page";

/// Every version of the page's view, oldest first: its URI and its script. Tools name the last.
const VERSIONS: &[(&str, &str)] = &[("ui://tessera/page/v1", include_str!("apps/view-v1.js"))];

/// The document every version fills in.
const DOCUMENT: &str = include_str!("apps/page.html");

/// Whether the client on the other end of `peer` renders MCP Apps: it declared the extension
/// with the app MIME type when it initialized.
#[must_use]
pub fn client_renders_apps(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info().is_some_and(|info| {
        info.capabilities
            .extensions
            .as_ref()
            .and_then(|extensions| extensions.get(EXTENSION_ID))
            .and_then(|settings| settings.get("mimeTypes"))
            .and_then(Value::as_array)
            .is_some_and(|types| types.iter().any(|kind| kind == MIME_TYPE))
    })
}

/// The URI tools name now.
#[must_use]
pub fn current_uri() -> &'static str {
    VERSIONS
        .last()
        .map_or("ui://tessera/page/v1", |(uri, _)| uri)
}

/// Every version's URI, oldest first.
pub fn uris() -> impl Iterator<Item = &'static str> {
    VERSIONS.iter().map(|(uri, _)| *uri)
}

/// The HTML of resource `uri` with `stylesheet` inlined; `None` for a URI no version has.
#[must_use]
pub fn document(uri: &str, stylesheet: &str) -> Option<String> {
    let (_, script) = VERSIONS.iter().find(|(known, _)| *known == uri)?;
    // A stylesheet that could close its element is left out rather than trusted.
    let stylesheet = if stylesheet.to_ascii_lowercase().contains("</style") {
        ""
    } else {
        stylesheet
    };
    Some(
        DOCUMENT
            .replacen("/*STYLESHEET*/", stylesheet, 1)
            .replacen("/*SCRIPT*/", script, 1),
    )
}

/// The resource's `_meta`: the host draws its border; no `csp`, since the view reaches nothing
/// but the host.
#[must_use]
pub fn resource_meta() -> MetaObject {
    MetaObject(object(json!({"ui": {"prefersBorder": true}})))
}

/// A tool's `_meta` naming the page's view (and the legacy flat key older hosts read).
#[must_use]
pub fn tool_meta_with_view() -> MetaObject {
    let uri = current_uri();
    MetaObject(object(
        json!({"ui": {"resourceUri": uri}, "ui/resourceUri": uri}),
    ))
}

/// A tool's `_meta` for the view only: the host keeps it from the model.
#[must_use]
pub fn tool_meta_app_only() -> MetaObject {
    MetaObject(object(json!({"ui": {"visibility": ["app"]}})))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_version_resolves_and_an_unknown_uri_does_not() {
        for uri in uris() {
            let html = document(uri, "body{color:red}").unwrap_or_default();
            assert!(html.starts_with("<!DOCTYPE html>"), "{uri}");
            assert!(html.contains("body{color:red}"), "{uri}");
            assert!(html.contains("ui/initialize"), "{uri}");
            assert!(!html.contains("/*SCRIPT*/"), "{uri}");
        }
        assert_eq!(document("ui://tessera/page/v0", ""), None);
        assert_eq!(document("ui://other/page/v1", ""), None);
    }

    #[test]
    fn a_stylesheet_that_would_end_its_element_is_left_out() {
        let html =
            document(current_uri(), "a{}</STYLE><script>alert(1)</script>").unwrap_or_default();
        assert!(!html.contains("alert(1)"), "{html}");
    }
}
