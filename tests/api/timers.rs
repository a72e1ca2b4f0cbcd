//! Reminders, escalations and deadline outcomes (issue 31) with a real SMTP server on loopback:
//! each timer fires once across a killed and restarted `tessera` process (SQLite, and
//! PostgreSQL), its mail carries a fixed `Message-ID`, and the ask's history says it all in
//! order. Deadline outcomes through an ask (`on_timeout`) and a YAML `wait`.

use std::{
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use anyhow::{bail, Context as _};
use serde_json::{json, Value};
use tessera::{
    startup::Options,
    workflow::yaml::{parse_file, YamlWorkflow},
};

use crate::{
    asks::{page_path, wait_for_ask},
    helpers::{
        csrf_of, on_both_backends, restartable_port, Backend, FreshPostgres, TestApp, API_TOKEN,
    },
    mailbox::{Delivered, Mailbox},
};

const BINARY: &str = env!("CARGO_BIN_EXE_tessera");

mod restart {
    use super::*;

    on_both_backends!(a_reminder_and_an_escalation_each_fire_once_across_a_kill_and_restart);
}

mod api {
    use super::*;

    on_both_backends!(
        deadlines_decline_continue_with_the_default_or_fail_an_ask,
        a_yaml_wait_declines_at_its_deadline,
    );
}

/// One `tessera` process on a fixed port and database; killed with SIGKILL when dropped.
pub(crate) struct Server {
    port: u16,
    database_url: String,
    env: Vec<(&'static str, String)>,
    child: Option<Child>,
    client: reqwest::Client,
}

impl Server {
    pub(crate) fn new(
        database_url: String,
        env: Vec<(&'static str, String)>,
    ) -> anyhow::Result<Self> {
        Ok(Self {
            port: restartable_port()?,
            database_url,
            env,
            child: None,
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(Duration::from_secs(10))
                .build()?,
        })
    }

    pub(crate) async fn start(&mut self) -> anyhow::Result<()> {
        let mut command = Command::new(BINARY);
        command
            .env_clear()
            .env("TESSERA_ADDR", format!("127.0.0.1:{}", self.port))
            .env("TESSERA_PUBLIC_URL", self.url(""))
            .env("DATABASE_URL", &self.database_url)
            .env("TESSERA_API_TOKEN", API_TOKEN)
            .env("TESSERA_RUNNER_LEASE_SECS", "2")
            .env("TESSERA_TIMER_POLL_MS", "100")
            .env("TESSERA_DEMO", "false")
            .env("TESSERA_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (name, value) in &self.env {
            command.env(name, value);
        }
        self.child = Some(command.spawn().context("starting the tessera binary")?);
        let started = Instant::now();
        while self.client.get(self.url("/health")).send().await.is_err() {
            if started.elapsed() > Duration::from_secs(30) {
                bail!("the server did not come up on port {}", self.port);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }

    pub(crate) fn kill(&mut self) -> anyhow::Result<()> {
        if let Some(mut child) = self.child.take() {
            child.kill()?;
            child.wait()?;
        }
        Ok(())
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub(crate) async fn post_ask(&self, body: &Value) -> anyhow::Result<(u16, Value)> {
        let response = self
            .client
            .post(self.url("/api/asks"))
            .bearer_auth(API_TOKEN)
            .json(body)
            .send()
            .await?;
        Ok((response.status().as_u16(), response.json().await?))
    }

    pub(crate) async fn ask(&self, id: &str) -> anyhow::Result<Value> {
        Ok(self
            .client
            .get(self.url(&format!("/api/asks/{id}")))
            .bearer_auth(API_TOKEN)
            .send()
            .await?
            .json()
            .await?)
    }

    /// Submits the page at `path` with `fields` (form-encoded): the status.
    pub(crate) async fn answer(&self, path: &str, fields: &str) -> anyhow::Result<u16> {
        let html = self.client.get(self.url(path)).send().await?.text().await?;
        let response = self
            .client
            .post(self.url(path))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("_csrf={}&{fields}", csrf_of(&html)))
            .send()
            .await?;
        Ok(response.status().as_u16())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.kill();
    }
}

/// A database for a [`Server`]: its URL and what removes it.
pub(crate) struct Database {
    pub(crate) url: String,
    _dir: tempfile::TempDir,
    postgres: Option<FreshPostgres>,
}

impl Database {
    /// `None` when PostgreSQL is skipped on purpose.
    pub(crate) async fn create(backend: Backend) -> anyhow::Result<Option<Self>> {
        let dir = tempfile::tempdir()?;
        Ok(match backend {
            Backend::Sqlite => Some(Self {
                url: format!("sqlite://{}", dir.path().join("tessera.db").display()),
                _dir: dir,
                postgres: None,
            }),
            Backend::Postgres => match FreshPostgres::create().await? {
                None => None,
                Some(postgres) => Some(Self {
                    url: postgres.url.clone(),
                    _dir: dir,
                    postgres: Some(postgres),
                }),
            },
        })
    }

    pub(crate) async fn drop_database(self) -> anyhow::Result<()> {
        if let Some(postgres) = self.postgres {
            postgres.drop_database().await?;
        }
        Ok(())
    }
}

fn subject(message: &Delivered) -> String {
    message.header("Subject").unwrap_or_default()
}

fn reminders_to<'a>(messages: &'a [Delivered], address: &str) -> Vec<&'a Delivered> {
    messages
        .iter()
        .filter(|message| message.is_to(address) && subject(message).starts_with("Reminder"))
        .collect()
}

fn asks_to<'a>(messages: &'a [Delivered], address: &str) -> Vec<&'a Delivered> {
    messages
        .iter()
        .filter(|message| message.is_to(address) && subject(message) == "Your answer is requested")
        .collect()
}

/// The `event` and `who` of each history entry, in order.
fn events(ask: &Value) -> Vec<(String, String)> {
    ask["history"]
        .as_array()
        .map(|history| {
            history
                .iter()
                .map(|event| {
                    (
                        event["event"].as_str().unwrap_or_default().to_owned(),
                        event["who"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

async fn a_reminder_and_an_escalation_each_fire_once_across_a_kill_and_restart(
    backend: Backend,
) -> anyhow::Result<()> {
    let Some(database) = Database::create(backend).await? else {
        return Ok(());
    };
    let mailbox = Mailbox::start().await?;
    let mut server = Server::new(database.url.clone(), mailbox.settings("@example.com"))?;
    server.start().await?;
    let (status, created) = server
        .post_ask(&json!({
            "prompt": "Approve the offsite?",
            "schema": {"type": "object", "properties": {"note": {"type": "string"}}},
            "assignees": ["ana@example.com", "bo@example.com"],
            "approvals": {"required": 2},
            "remind_after": [2],
            "escalate_after": {"after": 4, "to": ["cy@example.com"]},
            "expires_in": 120,
        }))
        .await?;
    assert_eq!(status, 201, "{created:#}");
    let id = created["id"].as_str().context("id")?.to_owned();
    let ana = page_path(created["links"][0]["link"].as_str().context("ana's link")?)?;
    mailbox
        .wait_until(Duration::from_secs(20), |messages| {
            asks_to(messages, "ana@example.com").len() == 1
                && asks_to(messages, "bo@example.com").len() == 1
        })
        .await?;
    assert_eq!(server.answer(&ana, "note=yes").await?, 303);

    let messages = mailbox
        .wait_until(Duration::from_secs(20), |messages| {
            !reminders_to(messages, "bo@example.com").is_empty()
        })
        .await?;
    assert!(
        reminders_to(&messages, "ana@example.com").is_empty(),
        "ana answered: she is not reminded"
    );
    // Killed after the reminder and before the escalation; the new process must neither
    // remind again nor miss the escalation.
    server.kill()?;
    server.start().await?;
    let messages = mailbox
        .wait_until(Duration::from_secs(20), |messages| {
            !asks_to(messages, "cy@example.com").is_empty()
        })
        .await?;
    // Long enough for a second firing, were there one.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let messages = mailbox
        .messages()?
        .into_iter()
        .chain(messages)
        .collect::<Vec<_>>();
    let unique = |found: Vec<&Delivered>| {
        let mut ids: Vec<String> = found
            .iter()
            .filter_map(|message| message.header("Message-ID"))
            .collect();
        ids.sort();
        ids.dedup();
        ids
    };
    let reminded = unique(reminders_to(&messages, "bo@example.com"));
    let escalated = unique(asks_to(&messages, "cy@example.com"));
    assert_eq!(reminded.len(), 1, "one reminder: {reminded:?}");
    assert_eq!(escalated.len(), 1, "one escalation: {escalated:?}");
    assert!(
        reminded[0].ends_with("tessera@127.0.0.1>") && reminded[0] != escalated[0],
        "{reminded:?} {escalated:?}"
    );
    // The kill may fall between sending the reminder and marking it sent: then the new process
    // sends it again, with the same Message-ID (counted once above), and the history still
    // holds one reminder.
    let mails = mailbox.messages()?;

    // The escalated person answers through the link in their mail: two of three approved.
    let cy_mail = asks_to(&mails, "cy@example.com")[0];
    let cy = cy_mail.page_path().context("a link in cy's mail")?;
    assert_eq!(server.answer(&cy, "note=fine").await?, 303);
    let started = Instant::now();
    let ask = loop {
        let ask = server.ask(&id).await?;
        if ask["status"] == "submitted" || started.elapsed() > Duration::from_secs(20) {
            break ask;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(ask["status"], "submitted", "{ask:#}");
    assert_eq!(
        ask["assignees"],
        json!(["ana@example.com", "bo@example.com", "cy@example.com"])
    );
    let history = events(&ask);
    let pair = |event: &str, who: &str| (event.to_owned(), who.to_owned());
    // The changes of state, in order (each exactly once).
    let changes: Vec<_> = history
        .iter()
        .filter(|(event, _)| event != "notified")
        .cloned()
        .collect();
    assert_eq!(
        changes,
        [
            pair("created", ""),
            pair("answered", "ana@example.com"),
            pair("reminded", "bo@example.com"),
            pair("escalated", "cy@example.com"),
            pair("answered", "cy@example.com"),
        ],
        "{:#}",
        ask["history"]
    );
    // Each mail sent is recorded once, after what caused it (a resent mail is not recorded twice).
    let mut notified: Vec<&str> = history
        .iter()
        .filter(|(event, _)| event == "notified")
        .map(|(_, who)| who.as_str())
        .collect();
    notified.sort_unstable();
    assert_eq!(
        notified,
        [
            "ana@example.com",
            "bo@example.com",
            "bo@example.com",
            "cy@example.com"
        ]
    );
    let at = |wanted: (String, String)| history.iter().position(|entry| *entry == wanted);
    assert!(at(pair("escalated", "cy@example.com")) < at(pair("notified", "cy@example.com")));
    let reminded = ask["history"]
        .as_array()
        .and_then(|history| history.iter().find(|event| event["event"] == "reminded"))
        .context("the reminder in the history")?;
    assert_eq!(
        reminded["text"],
        "Reminded bo@example.com, who had not answered yet."
    );
    drop(server);
    database.drop_database().await
}

async fn spawn_deadline_app(backend: Backend) -> anyhow::Result<TestApp> {
    TestApp::builder()
        .backend(backend)
        .config(|config| {
            config.notify.ask_recipients.email = vec!["@example.com".into()];
        })
        .spawn()
        .await
}

async fn deadlines_decline_continue_with_the_default_or_fail_an_ask(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = spawn_deadline_app(backend).await?;
    let schema = json!({"type": "object", "properties": {"approved": {"type": "boolean"}}, "required": ["approved"]});
    let mut ids = Vec::new();
    for (on_timeout, default) in [
        ("decline", Value::Null),
        ("continue", json!({"approved": false})),
        ("fail", Value::Null),
    ] {
        let response = app
            .api_post(
                "/api/asks",
                &json!({"prompt": format!("Deadline {on_timeout}?"), "schema": schema,
                        "expires_in": 1, "on_timeout": on_timeout, "default": default}),
            )
            .await?;
        let created: Value = response.json().await?;
        ids.push(created["id"].as_str().context("id")?.to_owned());
    }
    let settled = |ask: &Value| !matches!(ask["status"].as_str(), Some("waiting" | "pending"));
    let declined = wait_for_ask(&app, &ids[0], settled).await?;
    assert_eq!(declined["status"], "declined", "{declined:#}");
    let continued = wait_for_ask(&app, &ids[1], settled).await?;
    assert_eq!(continued["status"], "submitted", "{continued:#}");
    assert_eq!(continued["response"], json!({"approved": false}));
    let failed = wait_for_ask(&app, &ids[2], |ask| ask["status"] == "failed").await?;
    assert_eq!(failed["status"], "failed", "{failed:#}");
    for (ask, outcome) in [
        (&declined, "decline"),
        (&continued, "continue"),
        (&failed, "fail"),
    ] {
        let last = ask["history"]
            .as_array()
            .and_then(|history| history.last())
            .context("a history")?;
        assert_eq!(last["event"], "deadline", "{ask:#}");
        assert_eq!(last["detail"], outcome);
    }

    // Checked when the ask is made, naming the field.
    for (body, field) in [
        (
            json!({"prompt": "q", "schema": schema, "on_timeout": "continue", "default": {"approved": "maybe"}}),
            "default",
        ),
        (json!({"prompt": "q", "on_timeout": "continue"}), "default"),
        (json!({"prompt": "q", "on_timeout": "later"}), "on_timeout"),
        (
            json!({"prompt": "q", "assignees": ["a@example.com"], "remind_after": [0]}),
            "remind_after[0]",
        ),
        (
            json!({"prompt": "q", "assignees": ["a@example.com"], "expires_in": 60, "remind_after": [60]}),
            "remind_after",
        ),
        (
            json!({"prompt": "q", "assignees": ["a@example.com"], "remind_after": [1,2,3,4,5,6,7,8,9,10,11]}),
            "remind_after",
        ),
        (json!({"prompt": "q", "remind_after": [5]}), "remind_after"),
        (
            json!({"prompt": "q", "assignees": ["a@example.com"], "escalate_after": {"after": 5, "to": ["x@elsewhere.org"]}}),
            "escalate_after.to[0]",
        ),
        (
            json!({"prompt": "q", "assignees": ["a@example.com"], "escalate_after": {"after": 5, "to": ["a@example.com"]}}),
            "escalate_after.to",
        ),
    ] {
        let response = app.api_post("/api/asks", &body).await?;
        let status = response.status().as_u16();
        let refused: Value = response.json().await?;
        assert_eq!(status, 422, "{body} → {refused:#}");
        assert_eq!(refused["error"]["field"], field, "{body} → {refused:#}");
    }
    app.cleanup().await
}

async fn a_yaml_wait_declines_at_its_deadline(backend: Backend) -> anyhow::Result<()> {
    let text = r#"
name: deadline-decline
steps:
  - name: ask
    ui:
      prompt: "Approve?"
      schema: {type: object, properties: {ok: {type: boolean}}}
  - name: wait
    wait: {timeout: 1s, on_timeout: decline, outcome: /outcome}
  - name: after
    notify: {title: "outcome {{ outcome.status }}"}
"#;
    let workflow: YamlWorkflow = parse_file("deadline-decline.yaml", "deadline-decline", text)?;
    let options = Options {
        yaml_workflows: Some(vec![workflow]),
        ..Options::default()
    };
    let app = TestApp::builder()
        .backend(backend)
        .options(options)
        .spawn()
        .await?;
    let started = app
        .api_post(
            "/api/runs",
            &json!({"workflow": "deadline-decline", "input": {}}),
        )
        .await?;
    let started: Value = started.json().await?;
    let id = started["id"].as_str().context("run id")?.to_owned();
    let run = app.wait_for_status(&id, "succeeded").await?;
    assert_eq!(run["state"]["outcome"]["status"], "declined", "{run:#}");
    app.cleanup().await
}
