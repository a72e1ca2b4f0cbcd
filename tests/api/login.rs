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

/// `POST /login` as from behind a proxy that says the client is `forwarded_for`.
async fn log_in_forwarded(
    app: &TestApp,
    password: &str,
    forwarded_for: &str,
) -> anyhow::Result<reqwest::Response> {
    let body = form_urlencoded::Serializer::new(String::new())
        .append_pair("password", password)
        .append_pair("next", "/runs")
        .finish();
    Ok(app
        .client
        .post(app.url("/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("x-forwarded-for", forwarded_for)
        .body(body)
        .send()
        .await?)
}

fn retry_after(response: &reqwest::Response) -> Option<u64> {
    response
        .headers()
        .get("retry-after")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse().ok())
}

#[tokio::test]
async fn wrong_passwords_in_a_row_are_throttled_with_retry_after_and_the_form_again(
) -> anyhow::Result<()> {
    let app = spawn_app().await?;
    for attempt in 1..=5 {
        let wrong = log_in(&app, "not-the-password", "/runs").await?;
        assert_eq!(wrong.status(), 401, "attempt {attempt}");
    }
    let throttled = log_in(&app, "still-not-the-password", "/runs").await?;
    assert_eq!(throttled.status(), 429);
    let wait = retry_after(&throttled).unwrap_or_default();
    assert!((1..=12).contains(&wait), "Retry-After: {wait}");
    let html = throttled.text().await?;
    assert!(html.contains("Too many wrong passwords."), "{html}");
    assert!(
        html.contains("data-testid=\"login-submit\""),
        "the form again"
    );
    assert!(html.contains("name=\"next\" value=\"/runs\""));
    // Locked out: even the right password waits, so guessing on is pointless.
    let right = log_in(&app, ADMIN_PASSWORD, "/runs").await?;
    assert_eq!(right.status(), 429);
    assert!(session_cookie(&right).is_none());
    Ok(())
}

#[tokio::test]
async fn the_right_password_is_never_throttled_however_often_it_is_used() -> anyhow::Result<()> {
    let app = spawn_app().await?;
    for attempt in 1..=12 {
        let right = log_in(&app, ADMIN_PASSWORD, "/runs").await?;
        assert_eq!(right.status(), 303, "login {attempt}");
    }
    // A few typos between them count, but stay under the limit.
    for _ in 0..4 {
        assert_eq!(log_in(&app, "typo", "/runs").await?.status(), 401);
    }
    for attempt in 1..=5 {
        let right = log_in(&app, ADMIN_PASSWORD, "/runs").await?;
        assert_eq!(right.status(), 303, "login {attempt} after the typos");
    }
    Ok(())
}

#[tokio::test]
async fn a_forged_x_forwarded_for_does_not_dodge_the_limit_without_a_proxy() -> anyhow::Result<()> {
    let app = spawn_app().await?;
    for attempt in 1..=5 {
        let forged = format!("203.0.113.{attempt}");
        let wrong = log_in_forwarded(&app, "not-the-password", &forged).await?;
        assert_eq!(wrong.status(), 401, "attempt {attempt}");
    }
    let throttled = log_in_forwarded(&app, "not-the-password", "203.0.113.99").await?;
    assert_eq!(
        throttled.status(),
        429,
        "the connection's address is counted"
    );
    Ok(())
}

#[tokio::test]
async fn behind_a_proxy_clients_are_told_apart_by_x_forwarded_for() -> anyhow::Result<()> {
    let app = TestApp::builder()
        .config(|config| config.behind_proxy = true)
        .spawn()
        .await?;
    // The proxy appends the address it saw; what the client wrote before it counts for nothing.
    for attempt in 1..=5 {
        let forged = format!("192.0.2.{attempt}, 198.51.100.7");
        let wrong = log_in_forwarded(&app, "not-the-password", &forged).await?;
        assert_eq!(wrong.status(), 401, "attempt {attempt}");
    }
    let guesser = log_in_forwarded(&app, "not-the-password", "198.51.100.7").await?;
    assert_eq!(guesser.status(), 429);
    let admin = log_in_forwarded(&app, ADMIN_PASSWORD, "198.51.100.8").await?;
    assert_eq!(
        admin.status(),
        303,
        "another client behind the proxy logs in"
    );
    Ok(())
}

#[tokio::test]
async fn after_login_only_paths_on_this_site_are_followed() -> anyhow::Result<()> {
    let app = spawn_app().await?;
    for off_site in [
        "/\t/evil.example",
        "/%09/evil.example",
        "//evil.example",
        "/\\evil.example",
        "/%5Cevil.example",
        "/%2F/evil.example",
        "https://evil.example/",
        "/\n/evil.example",
    ] {
        let response = log_in(&app, ADMIN_PASSWORD, off_site).await?;
        assert_eq!(response.status(), 303, "{off_site:?}");
        assert_eq!(
            response
                .headers()
                .get("location")
                .and_then(|value| value.to_str().ok()),
            Some("/"),
            "{off_site:?}"
        );
    }
    let page = app.get("/login?next=/%09/evil.example").await?;
    assert!(page.text().await?.contains("name=\"next\" value=\"/\""));
    let local = log_in(&app, ADMIN_PASSWORD, "/runs?status=waiting").await?;
    assert_eq!(
        local
            .headers()
            .get("location")
            .and_then(|value| value.to_str().ok()),
        Some("/runs?status=waiting")
    );
    Ok(())
}
