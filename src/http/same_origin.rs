//! The same-origin check for browser forms: one layer on the routes whose POSTs change state.
//!
//! A POST that a browser says came from another site is refused before any extractor or
//! handler runs (no session is touched, nothing is read or recorded). Each route keeps the
//! refusal a person should see there: the page link's error page, the login form again, or a
//! bare 403 for the admin forms. `GET` is never checked: it changes nothing (invariant 5).

use axum::{
    body::to_bytes,
    extract::{Request, State},
    middleware::Next,
    response::{IntoResponse, Response},
};
use http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};

use super::{login, pages, AppState};

/// What a refused cross-site POST is answered with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A bare 403 (the admin forms under `/runs` and `/chat`).
    Status,
    /// The page link's 403 error page (`/p/{token}`).
    PageError,
    /// The login form again, with a 403 and a sentence saying why (`/login`).
    LoginForm,
}

/// The state of [`refuse_cross_site`]: the app (to render a refusal) and which refusal.
#[derive(Clone)]
pub struct SameOrigin {
    state: AppState,
    refusal: Refusal,
}

impl SameOrigin {
    /// The check for routes answered with `refusal`.
    #[must_use]
    pub fn new(state: &AppState, refusal: Refusal) -> Self {
        Self {
            state: state.clone(),
            refusal,
        }
    }
}

/// Middleware (`axum::middleware::from_fn_with_state`): lets every request through except a
/// POST from another site, which gets the route's [`Refusal`].
pub async fn refuse_cross_site(
    State(check): State<SameOrigin>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST || !is_cross_site(request.headers()) {
        return next.run(request).await;
    }
    match check.refusal {
        Refusal::Status => StatusCode::FORBIDDEN.into_response(),
        Refusal::PageError => pages::forbidden(&check.state).await,
        Refusal::LoginForm => {
            // The form shown again keeps where the person was going.
            let body = to_bytes(request.into_body(), check.state.config.body_limit)
                .await
                .unwrap_or_default();
            login::refused_cross_site(&check.state, &body).await
        }
    }
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

/// Whether a request says it came from this site's own pages: `Sec-Fetch-Site: same-origin`,
/// or, from a browser that does not send that header, an `Origin` naming this server (its
/// `Host`, or `public_url`'s origin). Unlike [`is_cross_site`], silence is not enough: the
/// `/api/*` guard asks this of requests made with the admin cookie, where a client without
/// these headers (not a browser page) has the API token to use instead.
pub fn is_same_origin(headers: &HeaderMap, public_url: &str) -> bool {
    let header_text = |name| {
        headers
            .get(name)
            .and_then(|value: &HeaderValue| value.to_str().ok())
    };
    if let Some(site) = header_text(HeaderName::from_static("sec-fetch-site")) {
        return site == "same-origin";
    }
    let Some(origin) = header_text(header::ORIGIN).map(|origin| origin.trim_end_matches('/'))
    else {
        return false;
    };
    if origin.eq_ignore_ascii_case(origin_of(public_url)) {
        return true;
    }
    let origin_host = origin.split_once("://").map(|(_, rest)| rest);
    origin_host.is_some() && origin_host == header_text(header::HOST)
}

/// `scheme://host[:port]` of a URL (the configured public URL has no trailing slash).
fn origin_of(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |index| index + 3);
    url[after_scheme..]
        .find('/')
        .map_or(url, |slash| &url[..after_scheme + slash])
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

    #[test]
    fn only_a_request_that_says_it_is_ours_is_same_origin() {
        let public = "https://tessera.example.com";
        let mut headers = HeaderMap::new();
        headers.insert(
            header::HOST,
            HeaderValue::from_static("tessera.example.com"),
        );
        assert!(!is_same_origin(&headers, public), "silence is not enough");
        headers.insert(header::ORIGIN, HeaderValue::from_static("null"));
        assert!(!is_same_origin(&headers, public));
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("https://tessera.example.com"),
        );
        assert!(is_same_origin(&headers, public));
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("https://evil.example"),
        );
        assert!(!is_same_origin(&headers, public));
        headers.insert("sec-fetch-site", HeaderValue::from_static("same-origin"));
        assert!(is_same_origin(&headers, public), "the browser's word wins");
        headers.insert("sec-fetch-site", HeaderValue::from_static("same-site"));
        assert!(!is_same_origin(&headers, public), "a sibling subdomain");
        let mut behind_proxy = HeaderMap::new();
        behind_proxy.insert(header::HOST, HeaderValue::from_static("10.0.0.5:3000"));
        behind_proxy.insert(
            header::ORIGIN,
            HeaderValue::from_static("https://tessera.example.com"),
        );
        assert!(is_same_origin(&behind_proxy, public), "the public origin");
        assert_eq!(
            origin_of("http://127.0.0.1:3000/base"),
            "http://127.0.0.1:3000"
        );
    }
}
