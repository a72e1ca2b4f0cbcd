//! The asks API end to end: ask, open the link, submit, read the typed answer back, and get it
//! `POST`ed (signed, retried until acknowledged) to a callback receiver started by the test.

use anyhow::Context as _;
use serde_json::{json, Value};
use tessera::{
    config::Secret,
    notify::{verify, NotifyConfig, NtfyConfig, RecipientAllowlist, SigningKey, SigningPurpose},
    store::{now_ms, pages::PageChange},
    workflow::run::RunId,
};

use crate::helpers::{csrf_of, error_of, on_both_backends, Backend, HttpSink, TestApp, API_TOKEN};

const SECRET: &str = "whsec_asks_0123456789abcdef";

fn decision_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "decision": {"type": "string", "enum": ["approve", "reject"]},
            "reason": {"type": "string"}
        },
        "required": ["decision", "reason"]
    })
}

pub(crate) async fn post_ask(app: &TestApp, body: &Value) -> anyhow::Result<reqwest::Response> {
    app.api_post("/api/asks", body).await
}

async fn ask_json(app: &TestApp, id: &str) -> anyhow::Result<Value> {
    app.api_json(&format!("/api/asks/{id}")).await
}

/// Polls the ask until `done` holds (the runner works in the background).
pub(crate) async fn wait_for_ask(
    app: &TestApp,
    id: &str,
    done: impl Fn(&Value) -> bool,
) -> anyhow::Result<Value> {
    app.wait_until(&format!("/api/asks/{id}"), done).await
}

/// The typed answer of ask `id`, once a person has submitted it.
pub(crate) async fn answer_of(app: &TestApp, id: &str) -> anyhow::Result<Value> {
    let ask = wait_for_ask(app, id, |ask| ask["status"] == "submitted").await?;
    Ok(ask["response"].clone())
}

pub(crate) fn page_path(link: &str) -> anyhow::Result<String> {
    link.split_once("/p/")
        .map(|(_, token)| format!("/p/{token}"))
        .context("the link is a page link")
}

/// Who answered `ask`, in the order of its `answers`.
pub(crate) fn answered_by(ask: &Value) -> anyhow::Result<Vec<&str>> {
    Ok(ask["answers"]
        .as_array()
        .context("answers")?
        .iter()
        .filter_map(|answer| answer["answered_by"].as_str())
        .collect())
}

/// The `(assignee, page path)` of each link in `links` (the `links` of an ask or of a run's
/// fresh links).
pub(crate) fn assignee_links(links: &Value) -> anyhow::Result<Vec<(String, String)>> {
    links
        .as_array()
        .context("links")?
        .iter()
        .map(|link| {
            Ok((
                link["assignee"].as_str().context("assignee")?.to_owned(),
                page_path(link["link"].as_str().context("link")?)?,
            ))
        })
        .collect()
}

/// Creates an ask and returns `(id, page path)`.
pub(crate) async fn create(app: &TestApp, body: &Value) -> anyhow::Result<(String, String)> {
    let response = post_ask(app, body).await?;
    let status = response.status();
    let created: Value = response.json().await?;
    assert_eq!(status, 201, "{created:#}");
    assert_eq!(created["status"], "waiting", "{created:#}");
    let id = created["id"].as_str().context("an id")?.to_owned();
    let path = page_path(created["link"].as_str().context("a link")?)?;
    Ok((id, path))
}

pub(crate) async fn submit(
    app: &TestApp,
    path: &str,
    fields: &str,
) -> anyhow::Result<reqwest::Response> {
    let html = app.get(path).await?.text().await?;
    app.post_form(path, "", format!("_csrf={}&{fields}", csrf_of(&html)))
        .await
}

/// The app with a webhook secret, so asks may have a `callback_url`, and `sink` (on loopback)
/// admitted as an internal receiver.
async fn spawn_signing_callbacks(backend: Backend, sink: &HttpSink) -> anyhow::Result<TestApp> {
    TestApp::builder()
        .backend(backend)
        .config(|config| {
            config.notify = NotifyConfig {
                webhook_secret: Some(Secret::new(SECRET)),
                ..NotifyConfig::default()
            };
            sink.admit_in(config);
        })
        .spawn()
        .await
}

async fn an_ask_is_answered_through_its_page_and_read_back_typed(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let (id, path) = create(
        &app,
        &json!({"prompt": "Approve the Q3 budget?", "schema": decision_schema(), "data": {"total": 1200}}),
    )
    .await?;
    let waiting = ask_json(&app, &id).await?;
    assert_eq!(waiting["status"], "waiting");
    assert!(waiting["response"].is_null());

    let html = app.get(&path).await?.text().await?;
    assert!(
        html.contains("name=\"decision\""),
        "the page asks for the decision"
    );
    assert!(html.contains("name=\"reason\""));
    let submitted = submit(&app, &path, "decision=approve&reason=within+plan").await?;
    assert_eq!(submitted.status(), 303);

    let answered = wait_for_ask(&app, &id, |ask| ask["status"] == "submitted").await?;
    assert_eq!(
        answered["response"],
        json!({"decision": "approve", "reason": "within plan"})
    );
    assert!(answered["link"].is_null(), "the link is no longer offered");
    assert!(answered["callback"].is_null(), "no callback was asked for");
    app.cleanup().await
}

async fn the_callback_is_signed_retried_until_acknowledged_and_delivered_once(
    backend: Backend,
) -> anyhow::Result<()> {
    let sink = HttpSink::start(&[503, 500]).await?;
    let callback_url = sink.url("/hooks/ask")?;
    let app = spawn_signing_callbacks(backend, &sink).await?;
    let (id, path) = create(
        &app,
        &json!({"prompt": "Approve?", "schema": decision_schema(), "callback_url": callback_url.as_str()}),
    )
    .await?;
    assert_eq!(ask_json(&app, &id).await?["callback"]["state"], "pending");
    let fields = "decision=reject&reason=too+much";
    assert_eq!(submit(&app, &path, fields).await?.status(), 303);

    let delivered = wait_for_ask(&app, &id, |ask| ask["callback"]["state"] == "delivered").await?;
    assert_eq!(delivered["callback"]["attempts"], 3, "{delivered:#}");
    assert!(delivered["callback"]["last_error"].is_null());

    // A second submission is refused and sends nothing more.
    let again = app
        .post_form(&path, "", format!("_csrf=x&{fields}"))
        .await?;
    assert_eq!(again.status(), 409);

    let seen = sink.seen();
    assert_eq!(
        seen.len(),
        3,
        "two refused attempts, then the acknowledged one"
    );
    for attempt in &seen {
        assert_eq!(attempt.path, "/hooks/ask");
        assert_eq!(attempt.header("x-tessera-delivery"), Some(id.as_str()));
        let timestamp: u64 = attempt
            .header("x-tessera-timestamp")
            .context("a timestamp")?
            .parse()?;
        let signature = attempt
            .header("x-tessera-signature")
            .context("a signature")?;
        let key_for = |purpose| SigningKey::derive(&Secret::new(SECRET), purpose);
        assert!(
            verify(
                &key_for(SigningPurpose::Callback),
                signature,
                timestamp,
                &attempt.body
            ),
            "the signature verifies with the callback key"
        );
        for other in [SigningPurpose::Notification, SigningPurpose::Recipient] {
            assert!(
                !verify(&key_for(other), signature, timestamp, &attempt.body),
                "a {other:?} key does not verify a callback"
            );
        }
        // Keyed with the secret itself (as before purposes had keys): a receiver must derive.
        let mut underived =
            <hmac::Hmac<sha2::Sha256> as hmac::Mac>::new_from_slice(SECRET.as_bytes())?;
        hmac::Mac::update(&mut underived, format!("{timestamp}.").as_bytes());
        hmac::Mac::update(&mut underived, &attempt.body);
        let underived = hex::encode(hmac::Mac::finalize(underived).into_bytes());
        assert_ne!(signature, format!("sha256={underived}"));
        let mut body: Value = serde_json::from_slice(&attempt.body)?;
        let answers = body
            .as_object_mut()
            .and_then(|body| body.remove("answers"))
            .context("the answers")?;
        assert_eq!(
            body,
            json!({"ask_id": id, "status": "submitted", "response": {"decision": "reject", "reason": "too much"}})
        );
        assert_eq!(answers[0]["answered_by"], Value::Null, "the ask's one link");
        assert_eq!(
            answers[0]["response"],
            json!({"decision": "reject", "reason": "too much"})
        );
    }
    let run = app.store.run(id.parse::<RunId>()?).await?;
    assert_eq!(run.status.as_str(), "succeeded");
    app.cleanup().await
}

async fn an_expired_ask_says_so_and_its_link_is_gone(backend: Backend) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let (id, path) = create(&app, &json!({"prompt": "Still there?", "expires_in": 3600})).await?;
    let ask = ask_json(&app, &id).await?;
    let expires_at = ask["expires_at_ms"].as_i64().context("an expiry")?;
    let in_an_hour = now_ms() + 3_600_000;
    assert!(
        (in_an_hour - 60_000..=in_an_hour).contains(&expires_at),
        "expires_in is honoured: {expires_at}"
    );
    // Time passes: the page's expiry moves into the past.
    let pages = app.store.pages_of_run(id.parse::<RunId>()?).await?;
    let page = pages.first().context("the ask's page")?;
    app.store
        .change_open_page(page.id, &PageChange::Extend(now_ms() - 1_000))
        .await?;

    let expired = ask_json(&app, &id).await?;
    assert_eq!(expired["status"], "expired");
    assert!(expired["link"].is_null());
    assert_eq!(app.get(&path).await?.status(), 410);
    assert_eq!(submit(&app, &path, "answer=late").await?.status(), 410);
    app.cleanup().await
}

async fn an_ask_that_expires_or_is_cancelled_tells_its_callback_why(
    backend: Backend,
) -> anyhow::Result<()> {
    let sink = HttpSink::start(&[]).await?;
    let callback_url = sink.url("/hooks/ask")?;
    let app = spawn_signing_callbacks(backend, &sink).await?;
    let body = json!({"prompt": "Approve?", "schema": decision_schema(), "callback_url": callback_url.as_str()});

    // Expiry: the author moves the link's expiry into the past; the run's wait follows it.
    let (expiring, _) = create(&app, &body).await?;
    let run_id = expiring.parse::<RunId>()?;
    let page = app.store.pages_of_run(run_id).await?;
    let page = page.first().context("the ask's page")?;
    let past = now_ms() - 1_000;
    app.store
        .change_open_page(page.id, &PageChange::Extend(past))
        .await?;
    let waiting = app.store.run(run_id).await?;
    assert_eq!(
        waiting.waiting.and_then(|wait| wait.deadline_ms),
        Some(past),
        "extending a link moves the wait of its run"
    );
    let told = wait_for_ask(&app, &expiring, |ask| {
        ask["callback"]["state"] == "delivered"
    })
    .await?;
    assert_eq!(told["status"], "expired", "{told:#}");
    assert_eq!(app.store.run(run_id).await?.status.as_str(), "cancelled");

    // Cancel: the person presses the page's Cancel button.
    let (cancelled, path) = create(&app, &body).await?;
    assert_eq!(submit(&app, &path, "_action=cancel").await?.status(), 303);
    let told = wait_for_ask(&app, &cancelled, |ask| {
        ask["callback"]["state"] == "delivered"
    })
    .await?;
    assert_eq!(told["status"], "cancelled", "{told:#}");
    assert!(told["response"].is_null());
    assert_eq!(
        app.store
            .run(cancelled.parse::<RunId>()?)
            .await?
            .status
            .as_str(),
        "cancelled"
    );

    // An admin cancels a waiting ask from the run page: the caller is told too.
    let (withdrawn, _) = create(&app, &body).await?;
    let cookie = app.admin_cookie().await?;
    let cancel = app
        .post_with(&format!("/runs/{withdrawn}/cancel"), &cookie)
        .await?;
    assert_eq!(cancel.status(), 303);
    let told = wait_for_ask(&app, &withdrawn, |ask| {
        ask["callback"]["state"] == "delivered"
    })
    .await?;
    assert_eq!(told["status"], "cancelled", "{told:#}");
    assert_eq!(
        app.store
            .run(withdrawn.parse::<RunId>()?)
            .await?
            .status
            .as_str(),
        "cancelled"
    );

    let bodies = sink
        .seen()
        .iter()
        .map(|attempt| serde_json::from_slice::<Value>(&attempt.body))
        .collect::<Result<Vec<_>, _>>()?;
    assert_eq!(
        bodies,
        [
            json!({"ask_id": expiring, "status": "expired", "response": null, "answers": []}),
            json!({"ask_id": cancelled, "status": "cancelled", "response": null, "answers": []}),
            json!({"ask_id": withdrawn, "status": "cancelled", "response": null, "answers": []}),
        ],
        "one delivery each, saying why no answer is coming"
    );
    app.cleanup().await
}

async fn the_form_lists_the_fields_in_the_order_the_schema_writes_them(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "email": {"type": "string", "format": "email"},
            "age": {"type": "integer", "minimum": 0}
        },
        "required": ["name", "email"]
    });
    let (_, path) = create(&app, &json!({"prompt": "Who are you?", "schema": schema})).await?;
    let html = app.get(&path).await?.text().await?;
    let at = |field: &str| html.find(&format!("name=\"{field}\""));
    let (name, email, age) = (at("name"), at("email"), at("age"));
    assert!(
        name.is_some() && name < email && email < age,
        "name, email, age as written (not alphabetical): {name:?} {email:?} {age:?}"
    );
    app.cleanup().await
}

on_both_backends!(
    the_form_lists_the_fields_in_the_order_the_schema_writes_them,
    an_ask_is_answered_through_its_page_and_read_back_typed,
    the_callback_is_signed_retried_until_acknowledged_and_delivered_once,
    an_expired_ask_says_so_and_its_link_is_gone,
    an_ask_that_expires_or_is_cancelled_tells_its_callback_why,
    the_caller_extends_and_reissues_an_open_ask_and_nothing_once_it_is_answered,
    the_caller_cancels_a_waiting_ask_once_and_its_callback_says_cancelled,
    an_ask_sends_its_link_to_the_recipients_it_names_within_the_allowlist_only,
    a_prompt_that_loops_without_end_is_refused_naming_prompt,
    a_prompt_that_would_build_gigabytes_in_memory_is_refused_naming_prompt,
    a_prompt_looping_over_a_few_hundred_rows_of_data_still_renders,
);

async fn a_prompt_that_loops_without_end_is_refused_naming_prompt(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    // Once hung the server: 10¹⁰ iterations, and the next request stalled behind it.
    let prompt =
        "{% for a in range(100000) %}{% for b in range(100000) %}{{ a }}{% endfor %}{% endfor %}";
    let (status, error) = error_of(post_ask(&app, &json!({"prompt": prompt})).await?).await?;
    assert_eq!(status, 422, "{error}");
    assert_eq!(error["field"], "prompt", "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("too much work") || message.contains("more than 10000 characters"),
        "{message}"
    );
    let runs = app.api_json("/api/runs").await?;
    assert_eq!(runs["total"], 0, "nothing was started");
    app.cleanup().await
}

async fn a_prompt_that_would_build_gigabytes_in_memory_is_refused_naming_prompt(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    // Few instructions, little output, but 100 MB doubled ten times if it ran.
    let prompt =
        "{% set a = 'x' * 100000000 %}{% set b = a ~ a %}{% set c = b ~ b %}{{ c | length }}";
    let (status, error) = error_of(post_ask(&app, &json!({"prompt": prompt})).await?).await?;
    assert_eq!(status, 422, "{error}");
    assert_eq!(error["field"], "prompt", "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`*` and `**` are not allowed"),
        "{message}"
    );
    // The filter that squares its input is refused when it runs, whatever the source says.
    let prompt = "{{ text | replace('y', text) | replace('y', text) | length }}";
    let data = json!({"text": "y".repeat(20_000)});
    let (status, error) =
        error_of(post_ask(&app, &json!({"prompt": prompt, "data": data})).await?).await?;
    assert_eq!(status, 422, "{error}");
    assert_eq!(error["field"], "prompt", "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`replace` would build more than 4 MiB"),
        "{message}"
    );
    let runs = app.api_json("/api/runs").await?;
    assert_eq!(runs["total"], 0, "nothing was started");
    app.cleanup().await
}

async fn a_prompt_looping_over_a_few_hundred_rows_of_data_still_renders(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let emails: Vec<Value> = (0..300)
        .map(|n| json!({"id": format!("m{n}"), "subject": format!("s{n}")}))
        .collect();
    let prompt = "Archive these? {% for e in emails %}{{ e.subject }} {% endfor %}";
    let (id, _) = create(&app, &json!({"prompt": prompt, "data": {"emails": emails}})).await?;
    // An ask's id is its run's id; the run's state holds the rendered prompt.
    let run = app.api_json(&format!("/api/runs/{id}")).await?;
    let asked = run["state"]["prompt"].as_str().unwrap_or_default();
    assert!(
        asked.starts_with("Archive these? s0 s1 ") && asked.ends_with("s299 "),
        "{asked}"
    );
    app.cleanup().await
}

async fn an_ask_sends_its_link_to_the_recipients_it_names_within_the_allowlist_only(
    backend: Backend,
) -> anyhow::Result<()> {
    let sink = HttpSink::start(&[]).await?;
    let server_topic = sink.url("/server-topic")?;
    let hooks = sink.url("/hooks/")?;
    let app = TestApp::builder()
        .backend(backend)
        .config(|config| {
            config.notify = NotifyConfig {
                ntfy: NtfyConfig::new(server_topic.as_str(), None).ok(),
                webhook_secret: Some(Secret::new(SECRET)),
                ask_recipients: RecipientAllowlist {
                    ntfy_topics: vec!["ops".into()],
                    email: vec!["@example.com".into()],
                    webhook_prefixes: vec![hooks.to_string()],
                },
                ..NotifyConfig::default()
            };
            sink.admit_in(config);
        })
        .spawn()
        .await?;
    let (id, path) = create(
        &app,
        &json!({"prompt": "Deploy?", "notify": {"ntfy": {"topic": "ops"}, "webhook": sink.url("/hooks/deploy")?.as_str()}}),
    )
    .await?;
    let seen = sink.seen();
    let topic = seen
        .iter()
        .find(|seen| seen.path == "/ops")
        .context("the ops topic was notified")?;
    assert!(topic
        .header("click")
        .is_some_and(|link| link.ends_with(&path)));
    let hook = seen
        .iter()
        .find(|seen| seen.path == "/hooks/deploy")
        .context("the webhook was notified")?;
    let notification: Value = serde_json::from_slice(&hook.body)?;
    assert!(notification["link"]
        .as_str()
        .is_some_and(|link| link.ends_with(&path)));
    let signature = hook.header("x-tessera-signature").context("signed")?;
    let timestamp: u64 = hook
        .header("x-tessera-timestamp")
        .context("a timestamp")?
        .parse()?;
    let key_for = |purpose| SigningKey::derive(&Secret::new(SECRET), purpose);
    assert!(
        verify(
            &key_for(SigningPurpose::Recipient),
            signature,
            timestamp,
            &hook.body
        ),
        "signed with the recipients' key"
    );
    assert!(!verify(
        &key_for(SigningPurpose::Notification),
        signature,
        timestamp,
        &hook.body
    ));
    assert!(!verify(
        &key_for(SigningPurpose::Callback),
        signature,
        timestamp,
        &hook.body
    ));
    assert!(
        !seen.iter().any(|seen| seen.path == "/server-topic"),
        "only the recipients it named"
    );
    assert_eq!(submit(&app, &path, "answer=yes").await?.status(), 303);
    wait_for_ask(&app, &id, |ask| ask["status"] == "submitted").await?;

    for (notify, field) in [
        (json!({"email": ["boss@elsewhere.org"]}), "notify.email[0]"),
        (json!({"ntfy": {"topic": "everyone"}}), "notify.ntfy.topic"),
        (
            json!({"webhook": "https://attacker.example/steal"}),
            "notify.webhook",
        ),
    ] {
        let (status, error) =
            error_of(post_ask(&app, &json!({"prompt": "q", "notify": notify})).await?).await?;
        assert_eq!(status, 422);
        assert_eq!(
            (error["code"].as_str(), error["field"].as_str()),
            (Some("invalid_ask"), Some(field))
        );
    }
    app.cleanup().await
}

async fn ask_call(
    app: &TestApp,
    id: &str,
    action: &str,
    body: &Value,
) -> anyhow::Result<(u16, Value)> {
    let response = app
        .api_post(&format!("/api/asks/{id}/{action}"), body)
        .await?;
    Ok((response.status().as_u16(), response.json().await?))
}

async fn the_caller_extends_and_reissues_an_open_ask_and_nothing_once_it_is_answered(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let (id, first_path) =
        create(&app, &json!({"prompt": "Still there?", "expires_in": 3600})).await?;

    let (status, extended) = ask_call(&app, &id, "extend", &json!({"expires_in": 86_400})).await?;
    assert_eq!(status, 200, "{extended:#}");
    let in_a_day = now_ms() + 86_400_000;
    let expires_at = extended["expires_at_ms"].as_i64().context("an expiry")?;
    assert!(
        (in_a_day - 60_000..=in_a_day).contains(&expires_at),
        "{expires_at}"
    );
    assert_eq!(
        ask_json(&app, &id).await?["expires_at_ms"],
        json!(expires_at)
    );
    let (status, refused) = ask_call(&app, &id, "extend", &json!({"expires_in": 0})).await?;
    assert_eq!(
        (status, &refused["error"]["field"]),
        (422, &json!("expires_in"))
    );
    assert_eq!(refused["error"]["code"], "invalid_ask");

    let (status, reissued) = ask_call(&app, &id, "reissue", &json!({})).await?;
    assert_eq!(status, 200, "{reissued:#}");
    let fresh_path = page_path(reissued["link"].as_str().context("a fresh link")?)?;
    assert_ne!(fresh_path, first_path);
    assert_eq!(
        app.get(&first_path).await?.status(),
        404,
        "the first link stops working"
    );
    assert_eq!(app.get(&fresh_path).await?.status(), 200);
    assert!(
        ask_json(&app, &id).await?["link"].is_null(),
        "GET never shows a link"
    );

    assert_eq!(submit(&app, &fresh_path, "answer=yes").await?.status(), 303);
    wait_for_ask(&app, &id, |ask| ask["status"] == "submitted").await?;
    for (action, body) in [
        ("extend", json!({"expires_in": 3600})),
        ("reissue", json!({})),
        ("cancel", json!({})),
    ] {
        let (status, body) = ask_call(&app, &id, action, &body).await?;
        assert_eq!(
            (status, &body["error"]["code"]),
            (409, &json!("ask_closed")),
            "{action}: {body:#}"
        );
    }
    let answered = ask_json(&app, &id).await?;
    assert_eq!(
        answered["response"],
        json!({"answer": "yes"}),
        "the answer stands"
    );

    for action in ["extend", "reissue", "cancel"] {
        let (status, body) = ask_call(
            &app,
            "7b0f7c4e-93b5-4f7e-9e0b-6a1f1c2d3e4f",
            action,
            &json!({"expires_in": 3600}),
        )
        .await?;
        assert_eq!(
            (status, &body["error"]["code"]),
            (404, &json!("not_found")),
            "{action}"
        );
    }
    app.cleanup().await
}

async fn the_caller_cancels_a_waiting_ask_once_and_its_callback_says_cancelled(
    backend: Backend,
) -> anyhow::Result<()> {
    let sink = HttpSink::start(&[]).await?;
    let callback_url = sink.url("/hooks/ask")?;
    let app = spawn_signing_callbacks(backend, &sink).await?;
    let (id, path) = create(
        &app,
        &json!({"prompt": "Ship it?", "callback_url": callback_url.as_str()}),
    )
    .await?;
    let (status, cancelled) = ask_call(&app, &id, "cancel", &json!({})).await?;
    assert_eq!(status, 200, "{cancelled:#}");
    let done = wait_for_ask(&app, &id, |ask| {
        ask["status"] == "cancelled" && ask["callback"]["state"] == "delivered"
    })
    .await?;
    assert!(done["response"].is_null());
    let delivered: Value =
        serde_json::from_slice(&sink.seen().first().context("a callback")?.body)?;
    assert_eq!(delivered["status"], "cancelled");
    assert_ne!(
        submit(&app, &path, "answer=late").await?.status(),
        303,
        "the link takes no answer"
    );
    let (status, again) = ask_call(&app, &id, "cancel", &json!({})).await?;
    assert_eq!(
        (status, &again["error"]["code"]),
        (409, &json!("ask_closed"))
    );
    app.cleanup().await
}

#[tokio::test]
async fn bad_asks_are_refused_naming_the_field() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let cases = [
        (json!({"prompt": "  "}), "prompt"),
        (json!({"schema": decision_schema()}), "prompt"),
        (
            json!({"prompt": "q", "schema": {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "object"}}}}}),
            "schema.properties.items[]",
        ),
        (
            json!({"prompt": "q", "schema": {"type": "string"}}),
            "schema",
        ),
        (json!({"prompt": "q", "expires_in": 0}), "expires_in"),
        (
            json!({"prompt": "q", "expires_in": 99_999_999}),
            "expires_in",
        ),
        (
            json!({"prompt": "q", "callback_url": "ftp://example.com/x"}),
            "callback_url",
        ),
        (
            json!({"prompt": "q", "callback_url": "not a url"}),
            "callback_url",
        ),
        // No TESSERA_WEBHOOK_SECRET on this server: nothing to sign a callback with.
        (
            json!({"prompt": "q", "callback_url": "https://example.com/x"}),
            "callback_url",
        ),
        // No notification channel configured.
        (json!({"prompt": "q", "notify": true}), "notify"),
        (
            json!({"prompt": "q", "callbackUrl": "https://example.com/x"}),
            "callbackUrl",
        ),
    ];
    for (body, field) in cases {
        let (status, error) = error_of(post_ask(&app, &body).await?).await?;
        assert_eq!(status, 422, "{body} → {error}");
        assert_eq!(error["field"], field, "{body} → {error}");
        assert_eq!(error["code"], "invalid_ask");
        assert!(error["message"]
            .as_str()
            .is_some_and(|message| message.starts_with(field)));
    }

    let not_json = app
        .client
        .post(app.url("/api/asks"))
        .bearer_auth(API_TOKEN)
        .header("content-type", "application/json")
        .body("{\"prompt\": ")
        .send()
        .await?;
    let (status, error) = error_of(not_json).await?;
    assert_eq!(
        (status, error["code"].as_str()),
        (400, Some("invalid_body"))
    );

    let too_big = json!({"prompt": "q", "data": {"blob": "x".repeat(70 * 1024)}});
    let (status, error) = error_of(post_ask(&app, &too_big).await?).await?;
    assert_eq!(
        (status, error["code"].as_str()),
        (413, Some("body_too_large"))
    );

    let anonymous = app.post_json("/api/asks", &json!({"prompt": "q"})).await?;
    assert_eq!(anonymous.status(), 401);

    let runs = app.store.list_runs(&tessera::workflow::run::RunFilter {
        status: None,
        workflow: None,
        limit: 10,
        offset: 0,
    });
    assert_eq!(runs.await?.total, 0, "nothing was started");
    Ok(())
}

#[tokio::test]
async fn unknown_asks_and_runs_of_other_workflows_are_404() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let (status, error) = error_of(
        app.api_get("/api/asks/7b0f7c4e-93b5-4f7e-9e0b-6a1f1c2d3e4f")
            .await?,
    )
    .await?;
    assert_eq!((status, error["code"].as_str()), (404, Some("not_found")));
    let run: Value = app
        .api_post("/api/runs", &json!({"workflow": "dashboard"}))
        .await?
        .json()
        .await?;
    let id = run["id"].as_str().context("a run id")?;
    let other = app.api_get(&format!("/api/asks/{id}")).await?;
    assert_eq!(other.status(), 404);
    Ok(())
}

#[tokio::test]
async fn a_prompt_alone_asks_for_a_required_answer_and_notify_sends_the_link() -> anyhow::Result<()>
{
    let webhook = HttpSink::start(&[]).await?;
    let hook_url = webhook.url("/notify")?;
    let app = TestApp::builder()
        .backend(Backend::Sqlite)
        .config(|config| {
            config.notify = NotifyConfig {
                webhook_url: Some(hook_url),
                webhook_secret: Some(Secret::new(SECRET)),
                ..NotifyConfig::default()
            };
        })
        .spawn()
        .await?;
    let (id, path) = create(
        &app,
        &json!({"prompt": "What should we call the project?", "notify": true}),
    )
    .await?;
    let notified = webhook.seen();
    assert_eq!(
        notified.len(),
        1,
        "the link went out through the configured channel"
    );
    let notification: Value = serde_json::from_slice(&notified[0].body)?;
    assert!(
        notification["link"]
            .as_str()
            .is_some_and(|link| link.ends_with(&path)),
        "{notification:#}"
    );

    let empty = submit(&app, &path, "answer=").await?;
    assert_eq!(empty.status(), 422, "the default answer field is required");
    assert_eq!(submit(&app, &path, "answer=Tessera").await?.status(), 303);
    let answered = wait_for_ask(&app, &id, |ask| ask["status"] == "submitted").await?;
    assert_eq!(answered["response"], json!({"answer": "Tessera"}));
    app.cleanup().await
}
