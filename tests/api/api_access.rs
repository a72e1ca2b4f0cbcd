//! Who may call `/api/*` and with what: the admin cookie only from this site's own pages, and
//! every body labelled `Content-Type: application/json`, with the cookie or the token.

use anyhow::Context as _;
use serde_json::{json, Value};
use tessera::workflow::run::RunFilter;

use crate::helpers::{error_of, TestApp, API_TOKEN};

/// The status and the `error` object of a JSON error answer.
async fn runs_started(app: &TestApp) -> anyhow::Result<i64> {
    let filter = RunFilter {
        status: None,
        workflow: None,
        limit: 10,
        offset: 0,
    };
    Ok(app.store.list_runs(&filter).await?.total)
}

#[tokio::test]
async fn a_post_with_the_admin_cookie_needs_this_sites_origin_and_a_json_body() -> anyhow::Result<()>
{
    let app = TestApp::builder().spawn().await?;
    let cookie = app.admin_cookie().await?;
    let start = |headers: &[(&str, &str)], content_type: &str| {
        let mut request = app
            .client
            .post(app.url("/api/runs"))
            .header("cookie", &cookie)
            .header("content-type", content_type)
            .body(json!({"workflow": "dashboard"}).to_string());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send()
    };
    let own_origin = app.address.as_str();
    for (case, headers) in [
        ("no Origin, no Sec-Fetch-Site", vec![]),
        (
            "another site's Origin",
            vec![("origin", "https://evil.example")],
        ),
        (
            "the browser says cross-site",
            vec![("origin", own_origin), ("sec-fetch-site", "cross-site")],
        ),
        ("a sibling subdomain", vec![("sec-fetch-site", "same-site")]),
    ] {
        let (status, error) = error_of(start(&headers, "application/json").await?).await?;
        assert_eq!(status, 403, "{case}: {error}");
        assert_eq!(error["code"], "cross_site", "{case}");
    }
    let (status, error) = error_of(start(&[("origin", own_origin)], "text/plain").await?).await?;
    assert_eq!(
        (status, error["code"].as_str()),
        (415, Some("unsupported_media_type"))
    );
    assert_eq!(runs_started(&app).await?, 0, "nothing refused was started");

    let from_our_page = start(&[("origin", own_origin)], "application/json").await?;
    assert_eq!(from_our_page.status(), 201);
    let fetched = start(&[("sec-fetch-site", "same-origin")], "application/json").await?;
    assert_eq!(fetched.status(), 201);
    assert_eq!(runs_started(&app).await?, 2);
    let read = app.get_with("/api/runs", &cookie).await?;
    assert_eq!(
        read.status(),
        200,
        "reading changes nothing and needs no Origin"
    );
    Ok(())
}

#[tokio::test]
async fn ask_and_chat_bodies_need_the_json_content_type_with_the_token_too() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let ask = json!({"prompt": "Approve the Q3 budget?"}).to_string();
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let mut request = app
            .client
            .post(app.url("/api/asks"))
            .bearer_auth(API_TOKEN)
            .body(ask.clone());
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        let (status, error) = error_of(request.send().await?).await?;
        assert_eq!(status, 415, "{content_type:?}: {error}");
        assert_eq!(error["code"], "unsupported_media_type");
    }
    assert_eq!(runs_started(&app).await?, 0, "no ask was made");

    let session: Value = app
        .api_post_empty("/api/chat/sessions")
        .await?
        .json()
        .await?;
    let id = session["id"].as_str().context("a chat session")?;
    let turn = app
        .client
        .post(app.url(&format!("/api/chat/sessions/{id}/turns")))
        .bearer_auth(API_TOKEN)
        .header("content-type", "text/plain")
        .body(json!({"text": "list open items"}).to_string())
        .send()
        .await?;
    let (status, error) = error_of(turn).await?;
    assert_eq!(
        (status, error["code"].as_str()),
        (415, Some("unsupported_media_type"))
    );
    let view: Value = app.api_json(&format!("/api/chat/sessions/{id}")).await?;
    assert!(
        !view.to_string().contains("list open items"),
        "the turn was not taken: {view}"
    );
    let asked = app
        .api_post("/api/asks", &json!({"prompt": "Approve?"}))
        .await?;
    assert_eq!(asked.status(), 201, "a JSON body is taken");
    Ok(())
}
