//! Security headers for every HTML response (DESIGN.md §9).
//!
//! Pages carry single-use links and personal data: nothing may be cached, leak a referrer or be
//! indexed. A response that set no CSP of its own (no scripts expected) gets one that allows none.

use axum::{extract::Request, middleware::Next, response::Response};
use http::{header, HeaderMap, HeaderName, HeaderValue};

/// Adds the §9 headers to `text/html` responses.
pub async fn html_security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let is_html = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/html"));
    if is_html {
        let headers = response.headers_mut();
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        headers.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        );
        headers.insert(
            "x-robots-tag",
            HeaderValue::from_static("noindex, nofollow"),
        );
        headers.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
        if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
            headers.insert(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static("default-src 'self'; script-src 'none'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"),
            );
        }
    }
    response
}

/// Whether a POST came from a form on another site.
///
/// Browsers say so in `Sec-Fetch-Site: cross-site`; older ones only in an `Origin` naming another
/// host. `Origin: null` is *not* evidence: our pages send `Referrer-Policy: no-referrer`, which
/// makes Chromium send `null` for its own same-origin forms. The per-page CSRF token (pages) and
/// `SameSite=Lax` session cookies (admin forms) remain the defence when neither header helps.
pub fn is_cross_site(headers: &HeaderMap) -> bool {
    let header_text = |name| {
        headers
            .get(name)
            .and_then(|value: &HeaderValue| value.to_str().ok())
    };
    if header_text(HeaderName::from_static("sec-fetch-site")) == Some("cross-site") {
        return true;
    }
    match (header_text(header::ORIGIN), header_text(header::HOST)) {
        (Some("null") | None, _) | (_, None) => false,
        (Some(origin), Some(host)) => {
            origin
                .split_once("://")
                .map(|(_, rest)| rest.trim_end_matches('/'))
                != Some(host)
        }
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    #[test]
    fn only_a_foreign_origin_is_cross_site() {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("127.0.0.1:3000"));
        assert!(!is_cross_site(&headers), "no Origin: old browsers and curl");
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://127.0.0.1:3000"),
        );
        assert!(!is_cross_site(&headers));
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("https://evil.example"),
        );
        assert!(is_cross_site(&headers));
        headers.insert(header::ORIGIN, HeaderValue::from_static("null"));
        assert!(
            !is_cross_site(&headers),
            "Chromium's own forms under no-referrer"
        );
        headers.insert("sec-fetch-site", HeaderValue::from_static("cross-site"));
        assert!(is_cross_site(&headers));
        headers.insert("sec-fetch-site", HeaderValue::from_static("same-origin"));
        assert!(!is_cross_site(&headers));
    }
}
