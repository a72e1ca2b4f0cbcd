//! A person's sign-in by e-mailed link, their inbox, and the admin pages kept for admins
//! (issue 31, item 4), with a real SMTP server on loopback (`mailbox.rs`).

use std::time::Duration;

use anyhow::Context as _;
use serde_json::{json, Value};
use tessera::{
    config::Config,
    notify::{recipients::RecipientAllowlist, EmailConfig, NotifyConfig, SmtpTls},
};

use crate::{
    helpers::{csrf_of, on_both_backends, session_cookie, Backend, TestApp},
    mailbox::{Delivered, Mailbox},
};

on_both_backends!(
    a_known_and_an_unknown_address_get_the_same_answer_and_only_the_known_one_gets_mail,
    a_sign_in_link_signs_in_once_and_never_after_it_expires,
    the_inbox_lists_the_persons_asks_and_only_theirs,
    a_respondent_cannot_open_admin_pages_and_sees_no_admin_links,
    sign_in_required_lets_only_the_signed_in_assignee_answer_and_records_them,
    the_inbox_shows_fifty_asks_a_page,
);

const SUBJECT: &str = "Your sign-in link for Tessera";

/// An app mailing through `mailbox`, whose asks may name anyone at example.com.
async fn spawn_mailing_app(
    backend: Backend,
    mailbox: &Mailbox,
    customize: impl FnOnce(&mut Config),
) -> anyhow::Result<TestApp> {
    let port = mailbox.port();
    let from = "Tessera <tessera@example.com>".parse()?;
    let ops = "ops@example.com".parse()?;
    TestApp::builder()
        .backend(backend)
        .config(|config| {
            config.notify = NotifyConfig {
                email: Some(EmailConfig {
                    host: "127.0.0.1".into(),
                    port,
                    tls: SmtpTls::None,
                    login: None,
                    from,
                    to: vec![ops],
                }),
                ask_recipients: RecipientAllowlist {
                    email: vec!["@example.com".into()],
                    ..RecipientAllowlist::default()
                },
                ..NotifyConfig::default()
            };
            customize(config);
        })
        .spawn()
        .await
}

/// Asks `assignees` to approve `prompt`; answers the ask's id.
async fn ask(app: &TestApp, prompt: &str, assignees: &[&str]) -> anyhow::Result<String> {
    let response = app
        .api_post(
            "/api/asks",
            &json!({"prompt": prompt, "assignees": assignees,
                    "schema": {"type": "object", "properties": {"note": {"type": "string", "title": "Note"}}}}),
        )
        .await?;
    let status = response.status();
    let created: Value = response.json().await?;
    anyhow::ensure!(status == 201, "{created:#}");
    Ok(created["id"].as_str().context("an id")?.to_owned())
}

/// Asks for a sign-in link for `email` from the sign-in form.
async fn request_link(app: &TestApp, email: &str, next: &str) -> anyhow::Result<reqwest::Response> {
    let body = form_urlencoded::Serializer::new(String::new())
        .append_pair("email", email)
        .append_pair("next", next)
        .finish();
    app.post_form("/sign-in", "", body).await
}

fn sign_in_mails_to<'a>(messages: &'a [Delivered], email: &str) -> Vec<&'a Delivered> {
    messages
        .iter()
        .filter(|message| {
            message.is_to(email) && message.header("Subject").as_deref() == Some(SUBJECT)
        })
        .collect()
}

/// Waits for `email`'s sign-in mail number `nth` (from 1) and answers its link's path.
async fn sign_in_link(mailbox: &Mailbox, email: &str, nth: usize) -> anyhow::Result<String> {
    let messages = mailbox
        .wait_until(Duration::from_secs(10), |messages| {
            sign_in_mails_to(messages, email).len() >= nth
        })
        .await?;
    let link = sign_in_mails_to(&messages, email)[nth - 1]
        .link_to("/sign-in/")
        .context("a sign-in link in the mail")?;
    let url = url::Url::parse(&link)?;
    Ok(match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    })
}

/// Signs `email` in through the mail and answers the session cookie.
async fn signed_in(
    app: &TestApp,
    mailbox: &Mailbox,
    email: &str,
    nth: usize,
) -> anyhow::Result<String> {
    assert_eq!(request_link(app, email, "").await?.status(), 200);
    let path = sign_in_link(mailbox, email, nth).await?;
    let confirmed = app
        .post_form(path.split('?').next().unwrap_or(&path), "", String::new())
        .await?;
    assert_eq!(confirmed.status(), 303);
    session_cookie(&confirmed).context("a session cookie after sign-in")
}

async fn a_known_and_an_unknown_address_get_the_same_answer_and_only_the_known_one_gets_mail(
    backend: Backend,
) -> anyhow::Result<()> {
    let mailbox = Mailbox::start().await?;
    let app = spawn_mailing_app(backend, &mailbox, |_| {}).await?;
    ask(&app, "Approve the Q3 budget?", &["ana@example.com"]).await?;

    let known = request_link(&app, "Ana@Example.com", "").await?;
    let unknown = request_link(&app, "nobody@example.com", "").await?;
    assert_eq!(known.status(), 200);
    assert_eq!(unknown.status(), known.status());
    let known_cookie = session_cookie(&known);
    let unknown_cookie = session_cookie(&unknown);
    assert_eq!(
        known_cookie.is_some(),
        unknown_cookie.is_some(),
        "no cookie tells them apart"
    );
    let (known, unknown) = (known.text().await?, unknown.text().await?);
    let without_nonce = |html: &str| {
        html.split("nonce=\"")
            .enumerate()
            .map(|(index, part)| {
                if index == 0 {
                    part
                } else {
                    part.split_once('"').map_or(part, |(_, rest)| rest)
                }
            })
            .collect::<String>()
    };
    assert_eq!(
        without_nonce(&known),
        without_nonce(&unknown),
        "the same page for both"
    );

    // Header syntax in the address is not an address: the form again, and no mail for anyone.
    let injected = request_link(&app, "ana@example.com\r\nBcc: eve@evil.example", "").await?;
    assert_eq!(injected.status(), 422);
    // Forms on another site can neither ask for links nor sign anyone out.
    for path in ["/sign-in", "/sign-out"] {
        let cross_site = app
            .post_form_with(
                path,
                "",
                "email=ana%40example.com",
                &[("origin", "https://evil.example")],
            )
            .await?;
        assert_eq!(cross_site.status(), 403, "{path}");
    }
    assert!(known.contains("If this address may sign in, a link is on its way"));

    let messages = mailbox
        .wait_until(Duration::from_secs(10), |messages| {
            !sign_in_mails_to(messages, "ana@example.com").is_empty()
        })
        .await?;
    // Give a mail to the unknown address every chance to arrive before saying it did not.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let messages = mailbox.messages().unwrap_or(messages);
    assert_eq!(sign_in_mails_to(&messages, "ana@example.com").len(), 1);
    assert!(
        messages
            .iter()
            .all(|message| !message.is_to("nobody@example.com")
                && !message.is_to("eve@evil.example")),
        "the unknown address gets nothing"
    );
    app.cleanup().await
}

async fn a_sign_in_link_signs_in_once_and_never_after_it_expires(
    backend: Backend,
) -> anyhow::Result<()> {
    let mailbox = Mailbox::start().await?;
    let app = spawn_mailing_app(backend, &mailbox, |config| {
        config.access.sign_in_link = Duration::from_secs(2);
    })
    .await?;
    ask(&app, "Approve the Q3 budget?", &["ana@example.com"]).await?;

    // An off-site `next` is dropped: the link brings the person to their inbox.
    assert_eq!(
        request_link(&app, "ana@example.com", "//evil.example/x")
            .await?
            .status(),
        200
    );
    let path = sign_in_link(&mailbox, "ana@example.com", 1).await?;
    assert!(!path.contains("evil"), "{path}");
    // Opening the link (a mail scanner does) uses nothing up: it shows a button.
    for _ in 0..2 {
        let shown = app.get(&path).await?;
        assert_eq!(shown.status(), 200);
        assert!(shown.text().await?.contains("Sign in as ana@example.com"));
    }
    // A form on another site cannot use it.
    let cross_site = app
        .post_form_with(
            &path,
            "",
            "next=%2Finbox",
            &[("origin", "https://evil.example")],
        )
        .await?;
    assert_eq!(cross_site.status(), 403);

    let confirmed = app.post_form(&path, "", "next=%2F%2Fevil.example").await?;
    assert_eq!(confirmed.status(), 303);
    assert_eq!(
        confirmed.headers()["location"],
        "/inbox",
        "only paths on this site are followed"
    );
    let cookie = session_cookie(&confirmed).context("a session cookie")?;
    let inbox = app.get_with("/inbox", &cookie).await?;
    assert_eq!(inbox.status(), 200);
    assert!(inbox.text().await?.contains("Requests for ana@example.com"));

    // Used once: neither the button nor a second press work again.
    assert_eq!(app.get(&path).await?.status(), 410);
    let again = app.post_form(&path, "", String::new()).await?;
    assert_eq!(again.status(), 410);
    assert!(session_cookie(&again).is_none());

    // A fresh link, left until it expires, no longer signs in.
    assert_eq!(
        request_link(&app, "ana@example.com", "").await?.status(),
        200
    );
    let late = sign_in_link(&mailbox, "ana@example.com", 2).await?;
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    assert_eq!(app.get(&late).await?.status(), 410);
    assert_eq!(app.post_form(&late, "", String::new()).await?.status(), 410);

    // Signing out ends the session.
    let out = app.post_form("/sign-out", &cookie, String::new()).await?;
    assert_eq!(out.status(), 303);
    let after = app.get_with("/inbox", &cookie).await?;
    assert_eq!(after.status(), 303);
    assert!(after.headers()["location"]
        .to_str()?
        .starts_with("/sign-in"));
    app.cleanup().await
}

async fn the_inbox_lists_the_persons_asks_and_only_theirs(backend: Backend) -> anyhow::Result<()> {
    let mailbox = Mailbox::start().await?;
    let app = spawn_mailing_app(backend, &mailbox, |_| {}).await?;
    ask(
        &app,
        "Approve the Q3 budget?",
        &["ana@example.com", "bo@example.com"],
    )
    .await?;
    ask(&app, "Approve the offsite?", &["Ana@example.com"]).await?;
    ask(&app, "Approve the new laptop?", &["cy@example.com"]).await?;
    let ana = signed_in(&app, &mailbox, "ana@example.com", 1).await?;

    let inbox = app.get_with("/inbox", &ana).await?.text().await?;
    assert_eq!(
        inbox.matches("data-testid=\"inbox-item\"").count(),
        2,
        "{inbox}"
    );
    assert!(inbox.contains("Approve the Q3 budget?") && inbox.contains("Approve the offsite?"));
    assert!(!inbox.contains("laptop"), "cy's ask is not ana's");

    // Another person's ask cannot be opened from ana's session.
    let cy_page = app
        .store
        .inbox("cy@example.com", tessera::store::now_ms(), 10, 0)
        .await?
        .first()
        .map(|entry| entry.page_id)
        .context("cy's ask")?;
    let refused = app
        .post_form(&format!("/inbox/{cy_page}/answer"), &ana, String::new())
        .await?;
    assert_eq!(refused.headers()["location"], "/inbox");

    // Answer from the inbox: the button leads to ana's own page.
    let first = inbox
        .split("action=\"/inbox/")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .context("an Answer button")?;
    let opened = app
        .post_form(&format!("/inbox/{first}"), &ana, String::new())
        .await?;
    assert_eq!(opened.status(), 303);
    let page_path = opened.headers()["location"].to_str()?.to_owned();
    assert!(page_path.starts_with("/p/"), "{page_path}");
    let page = app.get(&page_path).await?.text().await?;
    assert!(page.contains("For ana@example.com."), "her own link");
    let csrf = csrf_of(&page);
    let answered = app
        .post_form(&page_path, "", format!("_csrf={csrf}&note=fine"))
        .await?;
    assert_eq!(answered.status(), 303);

    let inbox = app.get_with("/inbox", &ana).await?.text().await?;
    assert_eq!(
        inbox.matches("data-open=\"true\"").count(),
        1,
        "one still open"
    );
    assert!(inbox.contains("You answered on"), "{inbox}");
    let open_first = inbox.find("data-open=\"true\"").context("an open ask")?;
    let answered_at = inbox
        .find("data-open=\"false\"")
        .context("an answered ask")?;
    assert!(open_first < answered_at, "open asks come first");
    app.cleanup().await
}

async fn a_respondent_cannot_open_admin_pages_and_sees_no_admin_links(
    backend: Backend,
) -> anyhow::Result<()> {
    let mailbox = Mailbox::start().await?;
    let app = spawn_mailing_app(backend, &mailbox, |_| {}).await?;
    ask(&app, "Approve the Q3 budget?", &["ana@example.com"]).await?;
    let ana = signed_in(&app, &mailbox, "ana@example.com", 1).await?;
    let admin_links = ["href=\"/runs\"", "href=\"/components\"", "href=\"/chat\""];

    for path in [
        "/runs",
        "/components",
        "/components/try",
        "/chat",
        "/preview",
    ] {
        let refused = app.get_with(path, &ana).await?;
        assert_eq!(refused.status(), 403, "{path}");
        let anonymous = app.get(path).await?;
        assert_eq!(anonymous.status(), 303, "{path}");
        assert!(anonymous.headers()["location"]
            .to_str()?
            .starts_with("/login?next="));
    }
    for (path, cookie) in [
        ("/inbox", ana.as_str()),
        ("/", ana.as_str()),
        ("/", ""),
        ("/sign-in", ""),
    ] {
        let html = app.get_with(path, cookie).await?.text().await?;
        for link in admin_links {
            assert!(!html.contains(link), "{path} shows {link}");
        }
    }
    let inbox = app.get_with("/inbox", &ana).await?.text().await?;
    assert!(inbox.contains("href=\"/inbox\"") && inbox.contains("action=\"/sign-out\""));

    // The admin still sees and opens them; programs read the gallery with the API token.
    let admin = app.admin_cookie().await?;
    let home = app.get_with("/", &admin).await?.text().await?;
    assert!(admin_links.iter().all(|link| home.contains(link)));
    assert_eq!(app.get_with("/components", &admin).await?.status(), 200);
    let by_token = app
        .client
        .get(app.url("/components"))
        .bearer_auth(crate::helpers::API_TOKEN)
        .send()
        .await?;
    assert_eq!(by_token.status(), 200);
    app.cleanup().await
}

async fn sign_in_required_lets_only_the_signed_in_assignee_answer_and_records_them(
    backend: Backend,
) -> anyhow::Result<()> {
    let mailbox = Mailbox::start().await?;
    let app = spawn_mailing_app(backend, &mailbox, |_| {}).await?;
    let schema =
        json!({"type": "object", "properties": {"note": {"type": "string", "title": "Note"}}});
    for (body, field) in [
        (
            json!({"prompt": "Approve?", "schema": schema, "assignees": ["ana@example.com"], "sign_in": "always"}),
            "sign_in",
        ),
        (
            json!({"prompt": "Approve?", "schema": schema, "sign_in": "required"}),
            "sign_in",
        ),
    ] {
        let refused = app.api_post("/api/asks", &body).await?;
        assert_eq!(refused.status(), 422);
        let refused: Value = refused.json().await?;
        assert_eq!(refused["error"]["field"], field, "{refused:#}");
    }
    let created = app
        .api_post(
            "/api/asks",
            &json!({"prompt": "Approve the Q3 budget?", "schema": schema,
                    "assignees": ["ana@example.com", "bo@example.com"], "sign_in": "required"}),
        )
        .await?;
    assert_eq!(created.status(), 201);
    let created: Value = created.json().await?;
    let id = created["id"].as_str().context("an id")?;
    let ana_path = crate::asks::page_path(created["links"][0]["link"].as_str().context("a link")?)?;

    // Holding the link is not enough: the page asks ana to sign in, and takes no answer.
    let gate = app.get(&ana_path).await?;
    assert_eq!(gate.status(), 200);
    let gate = gate.text().await?;
    assert!(gate.contains("Sign in to answer"), "{gate}");
    assert!(
        gate.contains("value=\"ana@example.com\""),
        "the form is filled in for her"
    );
    assert!(
        !gate.contains("name=\"_csrf\""),
        "no answer form before sign-in"
    );
    let blind = app.post_form(&ana_path, "", "note=forwarded").await?;
    assert_eq!(blind.status(), 403);

    // Signed in as someone else: refused, saying so.
    let bo = signed_in(&app, &mailbox, "bo@example.com", 1).await?;
    let wrong = app.get_with(&ana_path, &bo).await?;
    assert_eq!(wrong.status(), 403);
    assert!(wrong
        .text()
        .await?
        .contains("You are signed in as bo@example.com, but this request is for ana@example.com"));
    assert_eq!(
        app.post_form(&ana_path, &bo, "note=mine").await?.status(),
        403
    );

    // Ana signs in from the page and comes back to it.
    let body = form_urlencoded::Serializer::new(String::new())
        .append_pair("email", "ana@example.com")
        .append_pair("next", &ana_path)
        .finish();
    assert_eq!(app.post_form("/sign-in", "", body).await?.status(), 200);
    let link = sign_in_link(&mailbox, "ana@example.com", 1).await?;
    let (confirm, query) = link
        .split_once('?')
        .context("the link keeps where to return")?;
    let next: String = url::form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == "next")
        .map(|(_, value)| value.into_owned())
        .context("next")?;
    let signed = app
        .post_form(confirm, "", format!("next={}", urlencoding(&next)))
        .await?;
    assert_eq!(signed.status(), 303);
    assert_eq!(signed.headers()["location"], ana_path.as_str());
    let ana = session_cookie(&signed).context("ana's session")?;
    let page = app.get_with(&ana_path, &ana).await?.text().await?;
    let csrf = csrf_of(&page);
    let answered = app
        .post_form(&ana_path, &ana, format!("_csrf={csrf}&note=approved"))
        .await?;
    assert_eq!(answered.status(), 303);

    let ask = app.api_json(&format!("/api/asks/{id}")).await?;
    assert_eq!(ask["status"], "submitted", "{ask:#}");
    assert_eq!(ask["answers"][0]["answered_by"], "ana@example.com");
    assert_eq!(ask["answers"].as_array().map(Vec::len), Some(1));
    app.cleanup().await
}

fn urlencoding(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

async fn the_inbox_shows_fifty_asks_a_page(backend: Backend) -> anyhow::Result<()> {
    use tessera::{
        pages::{page::NewPage, token::PageToken},
        store::pages::{NewAssignee, PagePeople},
    };
    let mailbox = Mailbox::start().await?;
    let app = spawn_mailing_app(backend, &mailbox, |_| {}).await?;
    for index in 0..51 {
        app.store
            .create_page_for(
                &NewPage {
                    token_hash: PageToken::generate().hash(),
                    run_id: None,
                    tree: json!({"nodes": {"h": {"component": "Heading", "props": {"text": format!("Request {index}")}}}, "order": ["h"]}),
                    schema: Some(json!({"type": "object", "properties": {"ok": {"type": "boolean"}}})),
                    data: json!({}),
                    component_set: None,
                    expires_at_ms: tessera::store::now_ms() + 60_000 + index,
                },
                &PagePeople {
                    assignees: vec![NewAssignee {
                        email: "ana@example.com".into(),
                        token_hash: PageToken::generate().hash(),
                        group: None,
                    }],
                    ..PagePeople::default()
                },
            )
            .await?;
    }
    let ana = signed_in(&app, &mailbox, "ana@example.com", 1).await?;

    let first = app.get_with("/inbox", &ana).await?.text().await?;
    assert_eq!(first.matches("data-testid=\"inbox-item\"").count(), 50);
    assert!(first.contains("Request 0<"), "the nearest deadline first");
    assert!(
        first.contains("href=\"/inbox?page=2\""),
        "a link to the rest"
    );
    let second = app.get_with("/inbox?page=2", &ana).await?.text().await?;
    assert_eq!(second.matches("data-testid=\"inbox-item\"").count(), 1);
    assert!(second.contains("Request 50<"));
    assert!(!second.contains("href=\"/inbox?page=3\""));
    app.cleanup().await
}
