//! Liveness, readiness, the API token layer and the request-level middleware.

use serde_json::Value;

use crate::helpers::{header, TestApp};

#[tokio::test]
async fn healthz_reports_the_process_up_with_its_version() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let response = app.get("/healthz").await?;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await?;
    assert_eq!(body["status"], "ok");
    assert_eq!(body["version"], tessera::VERSION);
    Ok(())
}

#[tokio::test]
async fn readyz_reports_the_database_reachable() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let body: Value = app.get("/readyz").await?.json().await?;
    assert_eq!(body["status"], "ready");
    assert_eq!(body["database"], "sqlite");
    Ok(())
}

#[tokio::test]
async fn readyz_turns_unavailable_when_the_database_is_gone() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    app.store.close().await;
    let response = app.get("/readyz").await?;
    assert_eq!(response.status(), 503);
    let body: Value = response.json().await?;
    assert_eq!(body["status"], "unavailable");
    Ok(())
}

#[tokio::test]
async fn api_routes_refuse_requests_without_the_token() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let response = app.get("/api/status").await?;
    assert_eq!(response.status(), 401);
    assert_eq!(header(&response, "www-authenticate"), Some("Bearer"));
    let body: Value = response.json().await?;
    assert_eq!(body["error"]["code"], "unauthorized");
    let wrong = app
        .client
        .get(app.url("/api/status"))
        .bearer_auth("not-the-token")
        .send()
        .await?;
    assert_eq!(wrong.status(), 401);
    Ok(())
}

#[tokio::test]
async fn api_routes_answer_with_the_token() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let response = app.api_get("/api/status").await?;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await?;
    assert_eq!(body["database"], "sqlite");
    assert_eq!(body["model"], "heuristic");
    Ok(())
}

#[tokio::test]
async fn every_response_carries_a_request_id() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let response = app.get("/healthz").await?;
    let id = header(&response, "x-request-id").unwrap_or_default();
    assert_eq!(id.len(), 36, "a UUID request id, got {id:?}");
    let echoed = app
        .client
        .get(app.url("/healthz"))
        .header("x-request-id", "abc-123")
        .send()
        .await?;
    assert_eq!(header(&echoed, "x-request-id"), Some("abc-123"));
    Ok(())
}

#[tokio::test]
async fn oversized_bodies_are_refused_before_any_handler() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let body = vec![b'a'; 65 * 1024];
    let response = app.client.post(app.url("/")).body(body).send().await?;
    assert_eq!(response.status(), 413);
    Ok(())
}
