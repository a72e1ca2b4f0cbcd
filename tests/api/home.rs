//! The server-rendered home page, the styled 404 and the HTML security headers.

use crate::helpers::{header, TestApp};

/// The value of `response`'s header `name`, empty if it has none.
fn header_text<'a>(response: &'a reqwest::Response, name: &str) -> &'a str {
    header(response, name).unwrap_or_default()
}

#[tokio::test]
async fn the_home_page_is_server_rendered_with_name_version_and_links() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let response = app.get("/").await?;
    assert_eq!(response.status(), 200);
    assert!(header_text(&response, "content-type").starts_with("text/html"));
    let html = response.text().await?;
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.contains("<title>Tessera</title>"));
    assert!(
        html.contains(&format!(">{}<", tessera::VERSION)),
        "version shown"
    );
    let admin_links = ["href=\"/runs\"", "href=\"/components\"", "href=\"/chat\""];
    for link in admin_links {
        assert!(!html.contains(link), "{link} is shown to a stranger");
    }
    assert!(html.contains("href=\"/inbox\"") && html.contains("href=\"/sign-in\""));
    let admin = app
        .get_with("/", &app.admin_cookie().await?)
        .await?
        .text()
        .await?;
    for link in admin_links {
        assert!(admin.contains(link), "missing {link} for the admin");
    }
    assert!(
        html.contains("href=\"/pkg/tessera.css\""),
        "stylesheet linked"
    );
    assert!(
        html.contains("<leptos-island"),
        "the theme toggle is an island"
    );
    Ok(())
}

#[tokio::test]
async fn html_pages_carry_the_security_headers() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let response = app.get("/").await?;
    assert_eq!(header_text(&response, "cache-control"), "no-store");
    assert_eq!(header_text(&response, "referrer-policy"), "no-referrer");
    assert!(header_text(&response, "x-robots-tag").contains("noindex"));
    let policy = header_text(&response, "content-security-policy").to_owned();
    let html = response.text().await?;
    let nonce = policy
        .split("'nonce-")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .unwrap_or_default()
        .to_owned();
    assert!(!nonce.is_empty(), "CSP has a nonce: {policy}");
    assert!(
        html.contains(&format!("nonce=\"{nonce}\"")),
        "the hydration script carries the response's nonce"
    );
    assert_eq!(
        html.matches(&nonce).count(),
        1,
        "only the inline script carries the nonce (crossorigin takes no nonce): {html}"
    );
    assert_eq!(
        html.matches("crossorigin=\"anonymous\"").count(),
        2,
        "the bundle and wasm preloads are anonymous CORS requests: {html}"
    );
    let again = app.get("/").await?;
    assert!(
        !header_text(&again, "content-security-policy").contains(&nonce),
        "a fresh nonce per response"
    );
    Ok(())
}

#[tokio::test]
async fn unknown_routes_get_a_styled_404_page() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let response = app.get("/no/such/page").await?;
    assert_eq!(response.status(), 404);
    assert_eq!(header_text(&response, "cache-control"), "no-store");
    let html = response.text().await?;
    assert!(html.contains("Page not found"));
    assert!(html.contains("data-testid=\"error-page\""));
    assert!(html.contains("/pkg/tessera.css"), "styled like every page");
    Ok(())
}
