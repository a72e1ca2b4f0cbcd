//! The admin login: password, session cookie, logout, and sessions that survive a restart.

use crate::helpers::{session_cookie, spawn_app, spawn_app_in, TestApp, ADMIN_PASSWORD};

async fn log_in(app: &TestApp, password: &str, next: &str) -> anyhow::Result<reqwest::Response> {
    let body = form_urlencoded::Serializer::new(String::new())
        .append_pair("password", password)
        .append_pair("next", next)
        .finish();
    Ok(app
        .client
        .post(app.url("/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await?)
}

#[tokio::test]
async fn a_wrong_password_is_refused_and_the_right_one_opens_a_session() -> anyhow::Result<()> {
    let app = spawn_app().await?;
    let page = app.get("/login?next=/api/status").await?;
    assert_eq!(page.status(), 200);
    assert!(page
        .text()
        .await?
        .contains("name=\"next\" value=\"/api/status\""));
    let wrong = log_in(&app, "not-the-password", "/api/status").await?;
    assert_eq!(wrong.status(), 401);
    assert!(session_cookie(&wrong).is_none() || !wrong.text().await?.is_empty());

    let right = log_in(&app, ADMIN_PASSWORD, "/api/status").await?;
    assert_eq!(right.status(), 303);
    assert_eq!(
        right
            .headers()
            .get("location")
            .and_then(|value| value.to_str().ok()),
        Some("/api/status")
    );
    let cookie = session_cookie(&right).unwrap_or_default();
    assert!(!cookie.is_empty(), "a session cookie is set");
    let set_cookie = right
        .headers()
        .get("set-cookie")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(
        set_cookie.contains("HttpOnly") && set_cookie.contains("SameSite=Lax"),
        "{set_cookie}"
    );

    let with_session = app
        .client
        .get(app.url("/api/status"))
        .header("cookie", &cookie)
        .send()
        .await?;
    assert_eq!(
        with_session.status(),
        200,
        "the admin session opens the API"
    );
    let logout = app
        .client
        .post(app.url("/logout"))
        .header("cookie", &cookie)
        .send()
        .await?;
    assert_eq!(logout.status(), 303);
    let after = app
        .client
        .get(app.url("/api/status"))
        .header("cookie", &cookie)
        .send()
        .await?;
    assert_eq!(after.status(), 401, "the session ends at logout");
    Ok(())
}

#[tokio::test]
async fn a_login_from_another_site_is_refused() -> anyhow::Result<()> {
    let app = spawn_app().await?;
    let response = app
        .client
        .post(app.url("/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("origin", "https://evil.example")
        .body(format!("password={ADMIN_PASSWORD}"))
        .send()
        .await?;
    assert_eq!(response.status(), 403);
    assert!(session_cookie(&response).is_none());
    Ok(())
}

#[tokio::test]
async fn an_admin_session_survives_a_restart() -> anyhow::Result<()> {
    let app = spawn_app().await?;
    let cookie = session_cookie(&log_in(&app, ADMIN_PASSWORD, "/").await?).unwrap_or_default();
    let dir = app.stop().await?;
    let restarted = spawn_app_in(dir).await?;
    let response = restarted
        .client
        .get(restarted.url("/api/status"))
        .header("cookie", &cookie)
        .send()
        .await?;
    assert_eq!(response.status(), 200);
    Ok(())
}
