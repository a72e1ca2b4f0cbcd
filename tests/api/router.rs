//! The router called in process (`tower::ServiceExt::oneshot`, no server): every `/api/*` error
//! has the JSON shape `{"error": {"code", "message"}}` — a body that does not parse, one not
//! labelled JSON, one over the limit, a missing or wrong token — and a cross-site form gets its
//! route's refusal.

use axum::{
    body::{to_bytes, Body},
    http::{header, Request, StatusCode},
    response::Response,
};
use serde_json::Value;
use tower::ServiceExt as _;

use crate::helpers::{TestApp, TestRouter, API_TOKEN};

async fn call(app: &TestRouter, request: Request<Body>) -> anyhow::Result<Response> {
    Ok(app.router.clone().oneshot(request).await?)
}

/// The status and the JSON error body of `response`; fails when the body is not JSON.
async fn json_error(response: Response) -> anyhow::Result<(StatusCode, Value)> {
    let status = response.status();
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let bytes = to_bytes(response.into_body(), 1024 * 1024).await?;
    anyhow::ensure!(
        content_type.starts_with("application/json"),
        "{status} answered {content_type}: {}",
        String::from_utf8_lossy(&bytes)
    );
    Ok((status, serde_json::from_slice(&bytes)?))
}

fn api_post(path: &str, content_type: Option<&str>, body: impl Into<Body>) -> Request<Body> {
    let mut request =
        Request::post(path).header(header::AUTHORIZATION, format!("Bearer {API_TOKEN}"));
    if let Some(content_type) = content_type {
        request = request.header(header::CONTENT_TYPE, content_type);
    }
    request.body(body.into()).unwrap_or_default()
}

#[tokio::test]
async fn a_json_body_that_does_not_parse_is_answered_with_the_json_error_shape(
) -> anyhow::Result<()> {
    let app = TestApp::builder().router().await?;
    let cases = [
        ("/api/runs", Some("application/json"), "{\"workflow\": "),
        ("/api/runs", Some("application/json"), "{\"input\": {}}"),
        (
            "/api/pages/preview",
            Some("application/json"),
            "{\"tree\": ",
        ),
        ("/api/pages/generate", Some("application/json"), "[1, 2]"),
    ];
    for (path, content_type, body) in cases {
        let (status, error) =
            json_error(call(&app, api_post(path, content_type, body)).await?).await?;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path} {body}");
        assert_eq!(
            error["error"]["code"], "invalid_body",
            "{path} {body}: {error}"
        );
        assert!(
            error["error"]["message"]
                .as_str()
                .is_some_and(|message| !message.is_empty()),
            "{path} says what is wrong: {error}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn a_body_not_labelled_json_is_415_with_the_json_error_shape() -> anyhow::Result<()> {
    let app = TestApp::builder().router().await?;
    for path in [
        "/api/pages/preview",
        "/api/runs",
        "/api/asks",
        "/api/pages/generate",
    ] {
        for content_type in [
            None,
            Some("text/plain"),
            Some("application/x-www-form-urlencoded"),
        ] {
            let request = api_post(path, content_type, "{}");
            let (status, error) = json_error(call(&app, request).await?).await?;
            assert_eq!(
                status,
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "{path} {content_type:?}"
            );
            assert_eq!(error["error"]["code"], "unsupported_media_type", "{error}");
        }
    }
    Ok(())
}

#[tokio::test]
async fn a_body_over_the_limit_is_413_with_the_json_error_shape() -> anyhow::Result<()> {
    let app = TestApp::builder().router().await?;
    let big = format!("{{\"workflow\": \"{}\"}}", "x".repeat(70 * 1024));
    for path in ["/api/runs", "/api/asks", "/api/pages/preview"] {
        let request = api_post(path, Some("application/json"), big.clone());
        let (status, error) = json_error(call(&app, request).await?).await?;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{path}");
        assert_eq!(error["error"]["code"], "body_too_large", "{path}: {error}");
    }
    Ok(())
}

#[tokio::test]
async fn the_api_answers_401_without_the_right_token() -> anyhow::Result<()> {
    let app = TestApp::builder().router().await?;
    let missing = Request::get("/api/runs").body(Body::empty())?;
    let wrong = Request::get("/api/runs")
        .header(header::AUTHORIZATION, "Bearer not-the-token")
        .body(Body::empty())?;
    for request in [missing, wrong] {
        let response = call(&app, request).await?;
        assert_eq!(
            response
                .headers()
                .get(header::WWW_AUTHENTICATE)
                .and_then(|value| value.to_str().ok()),
            Some("Bearer")
        );
        let (status, error) = json_error(response).await?;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(error["error"]["code"], "unauthorized", "{error}");
    }
    let right = Request::get("/api/runs")
        .header(header::AUTHORIZATION, format!("Bearer {API_TOKEN}"))
        .body(Body::empty())?;
    assert_eq!(call(&app, right).await?.status(), StatusCode::OK);
    Ok(())
}

#[tokio::test]
async fn a_cross_site_login_gets_the_form_again_with_where_it_was_going() -> anyhow::Result<()> {
    let app = TestApp::builder().router().await?;
    let request = Request::post("/login")
        .header(header::HOST, "127.0.0.1:3000")
        .header(header::ORIGIN, "https://evil.example")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from("password=guess&next=/chat"))?;
    let response = call(&app, request).await?;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(
        response.headers().get(header::SET_COOKIE).is_none(),
        "no session was started"
    );
    let html = String::from_utf8(to_bytes(response.into_body(), 1024 * 1024).await?.to_vec())?;
    assert!(html.contains("This form was not sent from this site."));
    assert!(html.contains("name=\"next\" value=\"/chat\""), "keeps next");
    Ok(())
}
