//! The admin login: password, session cookie, logout, sessions that survive a restart — and end
//! at their absolute lifetime or when the admin password changes.

use std::time::Duration;

use axum::{
    body::Body,
    http::{
        header::{CONTENT_TYPE, COOKIE, HOST, SET_COOKIE},
        Request, StatusCode,
    },
};
use tessera::{auth::admin::ensure_admin_password, config::Secret, startup::Options, store::Store};
use tower::ServiceExt as _;

use crate::helpers::{header, session_cookie, store_contract, TestApp, ADMIN_PASSWORD};

async fn log_in(app: &TestApp, password: &str, next: &str) -> anyhow::Result<reqwest::Response> {
    let body = form_urlencoded::Serializer::new(String::new())
        .append_pair("password", password)
        .append_pair("next", next)
        .finish();
    app.post_form("/login", "", body).await
}

#[tokio::test]
async fn a_wrong_password_is_refused_and_the_right_one_opens_a_session() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
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
    assert_eq!(header(&right, "location"), Some("/api/status"));
    let cookie = session_cookie(&right).unwrap_or_default();
    assert!(!cookie.is_empty(), "a session cookie is set");
    let set_cookie = header(&right, "set-cookie").unwrap_or_default().to_owned();
    assert!(
        set_cookie.contains("HttpOnly") && set_cookie.contains("SameSite=Lax"),
        "{set_cookie}"
    );

    let with_session = app.get_with("/api/status", &cookie).await?;
    assert_eq!(
        with_session.status(),
        200,
        "the admin session opens the API"
    );
    let logout = app.post_with("/logout", &cookie).await?;
    assert_eq!(logout.status(), 303);
    let after = app.get_with("/api/status", &cookie).await?;
    assert_eq!(after.status(), 401, "the session ends at logout");
    Ok(())
}

#[tokio::test]
async fn a_login_from_another_site_is_refused() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let response = app
        .post_form_with(
            "/login",
            "",
            format!("password={ADMIN_PASSWORD}"),
            &[("origin", "https://evil.example")],
        )
        .await?;
    assert_eq!(response.status(), 403);
    assert!(session_cookie(&response).is_none());
    Ok(())
}

#[tokio::test]
async fn an_admin_session_survives_a_restart() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let cookie = session_cookie(&log_in(&app, ADMIN_PASSWORD, "/").await?).unwrap_or_default();
    let dir = app.stop().await?;
    let restarted = TestApp::builder().dir(dir).spawn().await?;
    let response = restarted.get_with("/api/status", &cookie).await?;
    assert_eq!(response.status(), 200);
    Ok(())
}

/// `GET /api/status` with `cookie`: 200 for a live admin session, 401 otherwise.
async fn status_with(app: &TestApp, cookie: &str) -> anyhow::Result<u16> {
    Ok(app.get_with("/api/status", cookie).await?.status().as_u16())
}

#[tokio::test]
async fn a_session_older_than_its_lifetime_is_refused_however_active() -> anyhow::Result<()> {
    let app = TestApp::builder()
        .config(|config| config.access.session_lifetime = Duration::from_secs(2))
        .spawn()
        .await?;
    let cookie = session_cookie(&log_in(&app, ADMIN_PASSWORD, "/").await?).unwrap_or_default();
    assert_eq!(status_with(&app, &cookie).await?, 200);
    let runs = app.get_with("/runs", &cookie).await?;
    assert_eq!(runs.status(), 200, "the admin pages open");
    tokio::time::sleep(Duration::from_millis(2_200)).await;
    assert_eq!(status_with(&app, &cookie).await?, 401, "past its lifetime");
    let runs = app.get_with("/runs", &cookie).await?;
    assert_eq!(runs.status(), 303, "sent to log in again");
    let fresh = session_cookie(&log_in(&app, ADMIN_PASSWORD, "/").await?).unwrap_or_default();
    assert_eq!(
        status_with(&app, &fresh).await?,
        200,
        "a new login opens it"
    );
    Ok(())
}

#[tokio::test]
async fn a_session_from_before_a_password_change_is_refused_after_the_restart() -> anyhow::Result<()>
{
    let app = TestApp::builder().spawn().await?;
    let cookie = session_cookie(&log_in(&app, ADMIN_PASSWORD, "/").await?).unwrap_or_default();
    assert_eq!(status_with(&app, &cookie).await?, 200);
    let dir = app.stop().await?;
    let changed = TestApp::builder()
        .dir(dir)
        .config(|config| config.admin_password = Some(Secret::new("a-new-admin-password")))
        .spawn()
        .await?;
    assert_eq!(
        status_with(&changed, &cookie).await?,
        401,
        "the old password's session ended"
    );
    assert_eq!(
        changed.get_with("/runs", &cookie).await?.status(),
        303,
        "sent to log in"
    );
    assert_eq!(log_in(&changed, ADMIN_PASSWORD, "/").await?.status(), 401);
    let fresh =
        session_cookie(&log_in(&changed, "a-new-admin-password", "/").await?).unwrap_or_default();
    assert_eq!(status_with(&changed, &fresh).await?, 200);
    Ok(())
}

#[tokio::test]
async fn over_https_the_session_cookie_is_host_prefixed_secure_and_for_the_whole_site(
) -> anyhow::Result<()> {
    // A port of its own, so the configured public URL is kept (port 0 would replace it).
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    let app = TestApp::builder()
        .config(|config| {
            config.addr = address;
            config.public_url = "https://tessera.example.com".to_owned();
        })
        .options(Options {
            listener: Some(listener),
            ..Options::default()
        })
        .router()
        .await?;
    let login = Request::post("/login")
        .header(HOST, "tessera.example.com")
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(format!("password={ADMIN_PASSWORD}&next=/runs")))?;
    let response = app.router.clone().oneshot(login).await?;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let set_cookie = response
        .headers()
        .get(SET_COOKIE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(
        set_cookie.starts_with("__Host-tessera_session="),
        "{set_cookie}"
    );
    let attributes: Vec<&str> = set_cookie.split(';').map(str::trim).collect();
    for attribute in ["Secure", "Path=/", "HttpOnly", "SameSite=Lax"] {
        assert!(attributes.contains(&attribute), "{attribute}: {set_cookie}");
    }
    assert!(
        !attributes
            .iter()
            .any(|attribute| attribute.starts_with("Domain")),
        "{set_cookie}"
    );
    let cookie = attributes[0];
    let with_session = Request::get("/api/status")
        .header(COOKIE, cookie)
        .body(Body::empty())?;
    let response = app.router.clone().oneshot(with_session).await?;
    assert_eq!(
        response.status(),
        StatusCode::OK,
        "the cookie opens the API"
    );
    Ok(())
}

store_contract!(the_admin_password_hash_is_kept_until_the_password_changes);

async fn the_admin_password_hash_is_kept_until_the_password_changes(
    store: &Store,
) -> anyhow::Result<()> {
    let first = Secret::new("first-admin-password");
    let fingerprint = |password: &Secret| {
        let password = password.clone();
        async move {
            anyhow::Ok(
                ensure_admin_password(store, Some(&password))
                    .await?
                    .hash
                    .fingerprint(),
            )
        }
    };
    let started = fingerprint(&first).await?;
    assert_eq!(fingerprint(&first).await?, started, "a restart keeps it");
    let changed = fingerprint(&Secret::new("second-admin-password")).await?;
    assert_ne!(changed, started);
    assert_eq!(
        ensure_admin_password(store, None).await?.hash.fingerprint(),
        changed,
        "the password in force stays when the setting is removed"
    );
    assert_ne!(
        fingerprint(&first).await?,
        started,
        "the first password again is a change too: its old sessions stay ended"
    );
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
    header(response, "retry-after").and_then(|value| value.parse().ok())
}

#[tokio::test]
async fn wrong_passwords_in_a_row_are_throttled_with_retry_after_and_the_form_again(
) -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
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
    let app = TestApp::builder().spawn().await?;
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
    let app = TestApp::builder().spawn().await?;
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
    let app = TestApp::builder().spawn().await?;
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
        assert_eq!(header(&response, "location"), Some("/"), "{off_site:?}");
    }
    let page = app.get("/login?next=/%09/evil.example").await?;
    assert!(page.text().await?.contains("name=\"next\" value=\"/\""));
    let local = log_in(&app, ADMIN_PASSWORD, "/runs?status=waiting").await?;
    assert_eq!(header(&local, "location"), Some("/runs?status=waiting"));
    Ok(())
}
