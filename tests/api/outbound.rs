//! Outbound requests go only where they are allowed (issue 24): an ask's callback and webhook
//! reach public addresses unless `TESSERA_OUTBOUND_ALLOW` admits the host, a failed callback tells
//! its caller a status or a fixed reason and never the receiver's reply, a YAML `http` step
//! follows no redirect off its origin, reads no reply past its cap and encodes the values it puts
//! in a URL, and a model provider's redirect never carries the API key anywhere.

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use anyhow::Context as _;
use axum::{
    http::{header::LOCATION, StatusCode, Uri},
    response::IntoResponse,
    routing::any,
    Router,
};
use serde_json::{json, Value};
use tessera::{
    config::Secret,
    llm::{model_from_spec, ChatModel as _, ChatRequest, Message, ModelError, ModelSettings},
    notify::{NotifyConfig, RecipientAllowlist},
    workflow::yaml::{parse_file, YamlWorkflow},
};

use crate::{
    asks::{create, post_ask, submit, wait_for_ask},
    helpers::{error_of, on_both_backends, Backend, HttpSink, TestApp},
    mcp::{text_of, McpClient},
    yaml::spawn_with,
};

const SECRET: &str = "whsec_outbound_0123456789abcdef";

/// The app signing callbacks and taking webhooks under `hooks` (comma-separated URL prefixes),
/// with `admitted`
/// addresses on `TESSERA_OUTBOUND_ALLOW`.
async fn spawn_signing(
    backend: Backend,
    hooks: &str,
    admitted: &[SocketAddr],
) -> anyhow::Result<TestApp> {
    let hooks = hooks.to_owned();
    let admitted = admitted.to_vec();
    TestApp::builder()
        .backend(backend)
        .config(move |config| {
            config.notify = NotifyConfig {
                webhook_secret: Some(Secret::new(SECRET)),
                ask_recipients: RecipientAllowlist {
                    webhook_prefixes: tessera_settings::parse::entries(&hooks),
                    ..RecipientAllowlist::default()
                },
                ..NotifyConfig::default()
            };
            for address in admitted {
                config.outbound_allow =
                    std::mem::take(&mut config.outbound_allow).with_address(address);
            }
        })
        .spawn()
        .await
}

fn address_of(sink: &HttpSink) -> anyhow::Result<SocketAddr> {
    let url = sink.url("/")?;
    Ok(SocketAddr::new(
        url.host_str().context("a host")?.parse()?,
        url.port().context("a port")?,
    ))
}

async fn a_callback_to_an_internal_address_is_refused_at_creation_unless_its_host_is_admitted(
    backend: Backend,
) -> anyhow::Result<()> {
    let sink = HttpSink::start(&[]).await?;
    let port = address_of(&sink)?.port();
    let refused = [
        (
            sink.url("/hooks/ask")?.to_string(),
            "`127.0.0.1` is a loopback address",
        ),
        (
            format!("http://localhost:{port}/hooks/ask"),
            "`localhost` does not resolve to public addresses only",
        ),
        (
            format!("http://2130706433:{port}/hooks/ask"),
            "`127.0.0.1` is a loopback address",
        ),
        (
            format!("http://0x7f.1:{port}/hooks/ask"),
            "`127.0.0.1` is a loopback address",
        ),
        (
            "http://169.254.169.254/latest/meta-data/".to_owned(),
            "`169.254.169.254` is a cloud metadata address",
        ),
        (
            format!("http://[::ffff:127.0.0.1]:{port}/"),
            "is a loopback address",
        ),
        (
            "http://10.0.0.7/".to_owned(),
            "`10.0.0.7` is a private address",
        ),
    ];
    let app = spawn_signing(backend, "https://hooks.example.com/", &[]).await?;
    for (callback, reason) in &refused {
        let body = json!({"prompt": "Approve?", "callback_url": callback});
        let (status, error) = error_of(post_ask(&app, &body).await?).await?;
        assert_eq!(
            (status, error["field"].as_str()),
            (422, Some("callback_url")),
            "{callback} → {error}"
        );
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(reason) && message.contains("TESSERA_OUTBOUND_ALLOW"),
            "{callback} → {message}"
        );
    }
    assert_eq!(
        app.api_json("/api/runs").await?["total"],
        0,
        "nothing started"
    );
    app.cleanup().await?;

    // The operator admits the receiver: the same callback is accepted and delivered; another
    // name for the same address is not admitted by it.
    let app = spawn_signing(backend, "https://hooks.example.com/", &[address_of(&sink)?]).await?;
    let (id, path) = create(
        &app,
        &json!({"prompt": "Approve?", "callback_url": sink.url("/hooks/ask")?.as_str()}),
    )
    .await?;
    assert_eq!(submit(&app, &path, "answer=yes").await?.status(), 303);
    let delivered = wait_for_ask(&app, &id, |ask| ask["callback"]["state"] == "delivered").await?;
    assert_eq!(delivered["callback"]["attempts"], 1, "{delivered:#}");
    let (status, error) = error_of(
        post_ask(
            &app,
            &json!({"prompt": "q", "callback_url": format!("http://localhost:{port}/hooks/ask")}),
        )
        .await?,
    )
    .await?;
    assert_eq!(
        (status, error["field"].as_str()),
        (422, Some("callback_url"))
    );
    assert_eq!(
        sink.seen().len(),
        1,
        "only the admitted ask's callback reached the receiver"
    );
    app.cleanup().await
}

async fn a_webhook_an_ask_names_must_reach_a_public_address_whatever_prefix_it_matches(
    backend: Backend,
) -> anyhow::Result<()> {
    let sink = HttpSink::start(&[]).await?;
    let address = address_of(&sink)?;
    // `https://hooks.example.com` is a prefix of `https://hooks.example.com@127.0.0.1:…/`.
    let hooks = format!("{},https://hooks.example.com", sink.url("/hooks/")?);
    let app = spawn_signing(backend, &hooks, &[]).await?;
    for webhook in [
        sink.url("/hooks/deploy")?.to_string(),
        format!("https://hooks.example.com@{address}/hooks/deploy"),
    ] {
        let body = json!({"prompt": "Deploy?", "notify": {"webhook": webhook}});
        let (status, error) = error_of(post_ask(&app, &body).await?).await?;
        assert_eq!(
            (status, error["field"].as_str()),
            (422, Some("notify.webhook")),
            "{webhook} → {error}"
        );
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|message| message.contains("`127.0.0.1` is a loopback address")),
            "{webhook} → {error}"
        );
    }
    assert!(sink.seen().is_empty(), "no webhook was sent");
    app.cleanup().await
}

/// A receiver that answers every request with 500 and a page of its secrets.
async fn talkative_receiver() -> anyhow::Result<SocketAddr> {
    let router = Router::new().fallback(any(|| async {
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            "secret-internal-page: db_password=hunter2",
        )
    }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, router).await });
    Ok(address)
}

async fn a_failed_callback_tells_its_caller_the_status_or_a_fixed_reason_never_the_reply(
    backend: Backend,
) -> anyhow::Result<()> {
    let receiver = talkative_receiver().await?;
    // A port nothing listens on: refused at once (a timeout would read the same).
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await?
        .local_addr()?;
    let app = spawn_signing(backend, "https://hooks.example.com/", &[receiver, closed]).await?;
    for (target, shown) in [
        (receiver, "the receiver answered 500"),
        (closed, "could not deliver"),
    ] {
        let (id, path) = create(
            &app,
            &json!({"prompt": "Approve?", "callback_url": format!("http://{target}/hooks/ask")}),
        )
        .await?;
        assert_eq!(submit(&app, &path, "answer=yes").await?.status(), 303);
        let retrying = wait_for_ask(&app, &id, |ask| {
            ask["callback"]["state"] == "retrying" && ask["callback"]["last_error"].is_string()
        })
        .await?;
        assert_eq!(retrying["callback"]["last_error"], shown, "{retrying:#}");
        let text = retrying.to_string();
        assert!(
            !text.contains("hunter2") && !text.contains("secret-internal-page"),
            "{text}"
        );
        assert!(!text.to_lowercase().contains("refused"), "{text}");
    }
    app.cleanup().await
}

on_both_backends!(
    a_callback_to_an_internal_address_is_refused_at_creation_unless_its_host_is_admitted,
    a_webhook_an_ask_names_must_reach_a_public_address_whatever_prefix_it_matches,
    a_failed_callback_tells_its_caller_the_status_or_a_fixed_reason_never_the_reply,
);

#[tokio::test]
async fn ask_person_over_mcp_refuses_a_callback_to_an_internal_address() -> anyhow::Result<()> {
    let app = spawn_signing(Backend::Sqlite, "https://hooks.example.com/", &[]).await?;
    let client = McpClient::connect(&app, json!({})).await?;
    let result = client
        .call(
            "ask_person",
            json!({"prompt": "q", "callback_url": "http://0x7f.1:9/internal"}),
        )
        .await?;
    assert_eq!(result["isError"], true, "{result:#}");
    assert!(
        text_of(&result).starts_with("callback_url: `127.0.0.1` is a loopback address"),
        "{}",
        text_of(&result)
    );
    assert_eq!(app.api_json("/api/runs").await?["total"], 0);
    app.cleanup().await
}

/// Every request an API received: path and query, and the headers that matter here.
type Received = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// An API on loopback: `/here` redirects to `/final` (200), `/off…` redirects to `elsewhere`
/// (307: the method, body and headers would follow),
/// `/big` answers 2 MiB, anything else 200 `{}`; every request is recorded with its `x-api-key`.
async fn redirecting_api(elsewhere: String) -> anyhow::Result<(SocketAddr, Received)> {
    let received = Received::default();
    let recorded = Arc::clone(&received);
    let router = Router::new().fallback(any(move |uri: Uri, headers: axum::http::HeaderMap| {
        let recorded = Arc::clone(&recorded);
        let elsewhere = elsewhere.clone();
        async move {
            let key = headers
                .get("x-api-key")
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned);
            let target = uri
                .path_and_query()
                .map_or_else(|| uri.path().to_owned(), ToString::to_string);
            if let Ok(mut recorded) = recorded.lock() {
                recorded.push((target, key));
            }
            match uri.path() {
                "/here" => (
                    StatusCode::TEMPORARY_REDIRECT,
                    [(LOCATION, "/final".to_owned())],
                )
                    .into_response(),
                off if off.starts_with("/off") => {
                    (StatusCode::TEMPORARY_REDIRECT, [(LOCATION, elsewhere)]).into_response()
                }
                "/big" => "x".repeat(2 * 1024 * 1024).into_response(),
                _ => axum::Json(json!({"ok": true})).into_response(),
            }
        }
    }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, router).await });
    Ok((address, received))
}

fn yaml(text: &str) -> anyhow::Result<YamlWorkflow> {
    Ok(parse_file("test.yaml", "test", text)?)
}

async fn run_to_end(app: &TestApp, workflow: &str) -> anyhow::Result<Value> {
    let response = app
        .api_post("/api/runs", &json!({"workflow": workflow, "input": {}}))
        .await?;
    let run: Value = response.json().await?;
    let id = run["id"].as_str().context("a run id")?.to_owned();
    let started = std::time::Instant::now();
    loop {
        let run = app.api_json(&format!("/api/runs/{id}")).await?;
        if run["status"] == "succeeded" || run["status"] == "failed" {
            return Ok(run);
        }
        anyhow::ensure!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "run {id} never ended: {run:#}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

fn one_call(name: &str, url: &str) -> anyhow::Result<YamlWorkflow> {
    yaml(&format!(
        r#"
name: {name}
state: {{id: "../../admin?x=1#frag", base: /nested}}
steps:
  - name: call
    http:
      method: GET
      url: "{url}"
      headers: {{X-Api-Key: secret-key-123}}
      retry: {{attempts: 1}}
      save: /reply
"#
    ))
}

#[tokio::test]
async fn an_http_step_follows_redirects_within_its_origin_only_and_its_key_stays_there(
) -> anyhow::Result<()> {
    let elsewhere = HttpSink::start(&[]).await?;
    let other = address_of(&elsewhere)?;
    let (api, received) = redirecting_api(elsewhere.url("/steal")?.to_string()).await?;
    let app = spawn_with(
        &format!("self,{api},{other}"),
        vec![
            one_call("within", &format!("http://{api}/here"))?,
            one_call("away", &format!("http://{api}/off"))?,
        ],
    )
    .await?;

    let within = run_to_end(&app, "within").await?;
    assert_eq!(within["status"], "succeeded", "{within:#}");
    assert_eq!(
        within["state"]["reply"],
        json!({"status": 200, "body": {"ok": true}})
    );

    let away = run_to_end(&app, "away").await?;
    assert_eq!(away["status"], "failed", "{away:#}");
    let error = away["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(&format!("a redirect to http://{other}"))
            && error.contains("follows redirects within the origin it called only"),
        "{error}"
    );
    assert!(
        elsewhere.seen().is_empty(),
        "the other host, although allowed, got no request and no key"
    );
    let received = received
        .lock()
        .map_err(|_| anyhow::anyhow!("poisoned"))?
        .clone();
    let paths: Vec<&str> = received.iter().map(|(path, _)| path.as_str()).collect();
    assert_eq!(paths, ["/here", "/final", "/off"]);
    // The same-origin hop carried the key, as the step meant it for this origin.
    assert!(received
        .iter()
        .all(|(_, key)| key.as_deref() == Some("secret-key-123")));
    app.cleanup().await
}

#[tokio::test]
async fn an_http_reply_over_the_cap_fails_the_step_naming_the_cap() -> anyhow::Result<()> {
    let (api, _) = redirecting_api(String::new()).await?;
    let app = spawn_with(
        &format!("self,{api}"),
        vec![one_call("big", &format!("http://{api}/big"))?],
    )
    .await?;
    let run = run_to_end(&app, "big").await?;
    assert_eq!(run["status"], "failed", "the reply was not saved whole");
    let error = run["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("a body over 1048576 bytes, the most an http step reads"),
        "{error}"
    );
    assert!(run["state"]["reply"].is_null());
    app.cleanup().await
}

#[tokio::test]
async fn values_an_http_step_puts_in_its_url_are_percent_encoded_unless_marked_safe(
) -> anyhow::Result<()> {
    let (api, received) = redirecting_api(String::new()).await?;
    let app = spawn_with(
        &format!("self,{api}"),
        vec![
            one_call(
                "encoded",
                &format!("http://{api}/items/{{{{ id }}}}/decision?note={{{{ id }}}}"),
            )?,
            one_call("raw", &format!("http://{api}{{{{ base | safe }}}}/x"))?,
        ],
    )
    .await?;
    assert_eq!(run_to_end(&app, "encoded").await?["status"], "succeeded");
    assert_eq!(run_to_end(&app, "raw").await?["status"], "succeeded");
    let received = received
        .lock()
        .map_err(|_| anyhow::anyhow!("poisoned"))?
        .clone();
    let paths: Vec<&str> = received.iter().map(|(path, _)| path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/items/..%2F..%2Fadmin%3Fx%3D1%23frag/decision?note=..%2F..%2Fadmin%3Fx%3D1%23frag",
            "/nested/x"
        ]
    );
    app.cleanup().await
}

#[tokio::test]
async fn a_provider_redirect_is_not_followed_so_the_api_key_reaches_no_other_server(
) -> anyhow::Result<()> {
    let elsewhere = HttpSink::start(&[]).await?;
    let (provider, received) = redirecting_api(elsewhere.url("/v1/messages")?.to_string()).await?;
    let env: HashMap<&str, String> = HashMap::from([
        ("ANTHROPIC_BASE_URL", format!("http://{provider}/off")),
        ("ANTHROPIC_API_KEY", "sk-ant-secret-key".to_owned()),
        ("TESSERA_MODEL_MAX_RETRIES", "0".to_owned()),
        ("TESSERA_MODEL_TIMEOUT_SECS", "5".to_owned()),
    ]);
    let settings = ModelSettings::from_lookup(&|name: &str| env.get(name).cloned())?;
    let model = model_from_spec("anthropic:claude-test", &settings)?;
    let error = model
        .chat(ChatRequest {
            messages: vec![Message::user("A page about orders.")],
            tools: Vec::new(),
            max_tokens: Some(64),
            temperature: None,
            response_format: None,
        })
        .await
        .err()
        .context("the redirect is an error")?;
    assert!(
        elsewhere.seen().is_empty(),
        "the server it pointed to never saw the key: {:?}",
        elsewhere.seen()
    );
    let ModelError::Rejected {
        status,
        body_excerpt,
    } = &error
    else {
        anyhow::bail!("not a rejection: {error:?}");
    };
    assert_eq!(*status, 307);
    assert!(
        body_excerpt.contains(&format!("a redirect to http://{}", address_of(&elsewhere)?))
            && body_excerpt.contains("not followed"),
        "{body_excerpt}"
    );
    let received = received
        .lock()
        .map_err(|_| anyhow::anyhow!("poisoned"))?
        .clone();
    assert_eq!(received.len(), 1, "{received:?}");
    assert_eq!(received[0].1.as_deref(), Some("sk-ant-secret-key"));
    Ok(())
}
