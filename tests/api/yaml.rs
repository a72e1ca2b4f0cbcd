//! YAML workflows end to end: the shipped examples run through their generated pages, branches go
//! both ways, an `http` step retries and refuses hosts off the allowlist, a `wait` times out, a
//! bad file stops the binary with one line, and a run whose file changed is stopped.

use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::{Arc, Mutex},
};

use anyhow::Context as _;
use axum::{extract::State, http::HeaderMap, routing::post, Json, Router};
use serde_json::{json, Value};
use tessera::{
    pages::links::{reissue_links, LinkChange, PageLinks},
    startup::Options,
    workflow::{
        run::RunId,
        yaml::{load_dir, parse_file, YamlWorkflow},
    },
};

use crate::{asks::submit, helpers::TestApp, runs::working_link_path};

fn examples() -> anyhow::Result<Vec<YamlWorkflow>> {
    Ok(load_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("workflows"),
    )?)
}

async fn spawn_with_examples() -> anyhow::Result<TestApp> {
    TestApp::builder()
        .dir(tempfile::tempdir()?)
        .options(Options {
            yaml_workflows: Some(examples()?),
            ..Options::default()
        })
        .spawn()
        .await
}

async fn start(app: &TestApp, workflow: &str, input: Value) -> anyhow::Result<String> {
    let response = app
        .api_post("/api/runs", &json!({"workflow": workflow, "input": input}))
        .await?;
    anyhow::ensure!(response.status() == 201, "start: {}", response.status());
    let run: Value = response.json().await?;
    Ok(run["id"].as_str().context("a run id")?.to_owned())
}

fn step_names(run: &Value) -> Vec<String> {
    run["steps"]
        .as_array()
        .map(|steps| {
            steps
                .iter()
                .filter_map(|step| step["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Runs the expense approval through its page with `decision`; returns the finished run.
async fn decide_expense(app: &TestApp, claim: &str, decision: &str) -> anyhow::Result<Value> {
    let input = json!({"claim": {"id": claim, "employee": "Ada Lovelace", "description": "Train to Berlin", "amount": 189.4, "category": "travel"}});
    let id = start(app, "expense-approval", input).await?;
    app.wait_for_status(&id, "waiting").await?;
    let path = working_link_path(app, &id).await?;
    let page = app.get(&path).await?.text().await?;
    assert!(page.contains("Ada Lovelace"), "the page shows the claim");
    let response = submit(
        app,
        &path,
        &format!("decision={decision}&reason=Receipts+are+attached"),
    )
    .await?;
    assert_eq!(response.status(), 303);
    app.wait_for_status(&id, "succeeded").await
}

#[tokio::test]
async fn the_expense_approval_example_approves_through_its_page_and_posts_to_the_demo_api(
) -> anyhow::Result<()> {
    let app = spawn_with_examples().await?;
    let run = decide_expense(&app, "exp-101", "approve").await?;
    let state = &run["state"];
    assert_eq!(state["review"]["decision"], "approve", "{run:#}");
    assert_eq!(state["review"]["reason"], "Receipts are attached");
    assert_eq!(state["recorded"]["status"], 200);
    assert_eq!(
        step_names(&run),
        [
            "review",
            "ask",
            "answer",
            "route",
            "record-approval",
            "tell"
        ],
        "the rejection branch never ran"
    );
    let recorded = app.api_json("/demo-api/expenses/exp-101").await?;
    assert_eq!(recorded["decision"]["decision"], "approve", "{recorded:#}");
    assert_eq!(recorded["decision"]["reason"], "Receipts are attached");
    assert!(run["definition_digest"]
        .as_str()
        .is_some_and(|digest| digest.starts_with("sha256:")));
    Ok(())
}

#[tokio::test]
async fn the_expense_approval_example_branches_to_the_rejection() -> anyhow::Result<()> {
    let app = spawn_with_examples().await?;
    let run = decide_expense(&app, "exp-102", "reject").await?;
    assert_eq!(
        step_names(&run),
        [
            "review",
            "ask",
            "answer",
            "route",
            "record-rejection",
            "tell"
        ]
    );
    let recorded = app.api_json("/demo-api/expenses/exp-102").await?;
    assert_eq!(recorded["decision"]["decision"], "reject", "{recorded:#}");
    let untouched = app.api_json("/demo-api/expenses/exp-101").await?;
    assert!(untouched["decision"].is_null());
    Ok(())
}

#[tokio::test]
async fn with_the_demo_off_the_example_that_calls_the_demo_site_is_not_registered(
) -> anyhow::Result<()> {
    let app = TestApp::builder()
        .config(|config| config.demo = false)
        .options(Options {
            yaml_workflows: Some(examples()?),
            ..Options::default()
        })
        .spawn()
        .await?;
    let refused = app
        .api_post(
            "/api/runs",
            &json!({"workflow": "expense-approval", "input": {}}),
        )
        .await?;
    assert_eq!(refused.status(), 400, "expense-approval is not registered");
    let id = start(&app, "weekly-digest", json!({})).await?;
    app.wait_for_status(&id, "succeeded").await?;
    Ok(())
}

#[tokio::test]
async fn the_weekly_digest_example_shows_its_data_on_a_page_without_a_form() -> anyhow::Result<()> {
    let app = spawn_with_examples().await?;
    let id = start(&app, "weekly-digest", json!({})).await?;
    let run = app.wait_for_status(&id, "succeeded").await?;
    assert_eq!(step_names(&run), ["digest", "send"]);
    let pages = app.store.pages_of_run(id.parse::<RunId>()?).await?;
    let page = pages.first().context("the digest made a page")?;
    let LinkChange::Done(PageLinks::Shared(link)) =
        reissue_links(&app.store, &app.address, page.id).await?
    else {
        anyhow::bail!("the display page is open until it expires");
    };
    let path = link
        .split_once("/p/")
        .map(|(_, token)| format!("/p/{token}"));
    let html = app.get(&path.context("a page link")?).await?.text().await?;
    assert!(html.contains("Initech"), "the page shows the data");
    assert!(!html.contains("<form"), "a display page has no form");
    Ok(())
}

type Calls = Arc<Mutex<Vec<(String, Value)>>>;

/// A local API that answers 503 `failures` times, then 200, recording every call.
async fn flaky_api(failures: usize) -> anyhow::Result<(String, Calls)> {
    let calls: Calls = Arc::default();
    let app =
        Router::new()
            .route(
                "/hooks/{name}",
                post(
                    move |State(calls): State<Calls>,
                          headers: HeaderMap,
                          Json(body): Json<Value>| async move {
                        let mut calls = calls
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner);
                        let key = headers
                            .get("idempotency-key")
                            .and_then(|value| value.to_str().ok())
                            .unwrap_or_default()
                            .to_owned();
                        // The server's own headers are for the server only.
                        let key = if headers.contains_key("x-tessera-demo-key") {
                            format!("{key} (with the demo key!)")
                        } else {
                            key
                        };
                        calls.push((key, body));
                        if calls.len() <= failures {
                            (
                                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                                Json(json!({"busy": true})),
                            )
                        } else {
                            (axum::http::StatusCode::OK, Json(json!({"ok": calls.len()})))
                        }
                    },
                ),
            )
            .with_state(Arc::clone(&calls));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok((format!("127.0.0.1:{}", address.port()), calls))
}

fn workflow(text: &str) -> anyhow::Result<YamlWorkflow> {
    Ok(parse_file("test.yaml", "test", text)?)
}

/// An app running `workflows`, whose http steps may call `hosts` (`TESSERA_WORKFLOW_HTTP_HOSTS`).
pub(crate) async fn spawn_with(
    hosts: &str,
    workflows: Vec<YamlWorkflow>,
) -> anyhow::Result<TestApp> {
    let hosts = hosts.to_owned();
    TestApp::builder()
        .config(move |config| config.workflow_http_hosts = hosts)
        .options(Options {
            yaml_workflows: Some(workflows),
            ..Options::default()
        })
        .spawn()
        .await
}

#[tokio::test]
async fn an_http_step_retries_a_failing_api_with_one_idempotency_key() -> anyhow::Result<()> {
    let (host, calls) = flaky_api(2).await?;
    let definition = workflow(&format!(
        r#"
name: hook
state: {{item: {{id: 7, name: lamp}}}}
steps:
  - name: call
    http:
      method: POST
      url: "http://{host}/hooks/{{{{ item.name }}}}"
      body: {{id: {{$pointer: /item/id}}, label: "item {{{{ item.name }}}}"}}
      retry: {{attempts: 4, backoff: 1s}}
      save: /reply
"#
    ))?;
    let app = spawn_with(&format!("self,{host}"), vec![definition]).await?;
    let id = start(&app, "hook", json!({})).await?;
    let run = app.wait_for_status(&id, "succeeded").await?;
    assert_eq!(
        run["state"]["reply"],
        json!({"status": 200, "body": {"ok": 3}})
    );
    let calls = calls
        .lock()
        .map_err(|_| anyhow::anyhow!("poisoned"))?
        .clone();
    assert_eq!(calls.len(), 3, "two 503s, then the 200");
    for (key, body) in &calls {
        assert_eq!(key, &format!("{id}/call"));
        assert_eq!(body, &json!({"id": 7, "label": "item lamp"}));
    }
    Ok(())
}

#[tokio::test]
async fn an_http_step_to_a_host_off_the_allowlist_fails_the_run_without_calling_it(
) -> anyhow::Result<()> {
    let (host, calls) = flaky_api(0).await?;
    let definition = workflow(&format!(
        "steps:\n  - name: call\n    http: {{method: POST, url: \"http://{host}/hooks/x\", body: {{}}}}\n"
    ))?;
    let app = spawn_with("self", vec![definition]).await?;
    let id = start(&app, "test", json!({})).await?;
    let run = app.wait_for_status(&id, "failed").await?;
    let error = run["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("is not allowed: add it to TESSERA_WORKFLOW_HTTP_HOSTS"),
        "{error}"
    );
    assert!(calls
        .lock()
        .map_err(|_| anyhow::anyhow!("poisoned"))?
        .is_empty());
    Ok(())
}

#[tokio::test]
async fn a_wait_that_times_out_continues_with_its_default_answer_down_the_branch(
) -> anyhow::Result<()> {
    let definition = workflow(
        r#"
name: late
state: {topic: budget}
steps:
  - name: ask
    ui:
      prompt: "Approve the {{ topic }}?"
      schema: {type: object, required: [decision], properties: {decision: {type: string, enum: [yes, no, late]}}}
  - name: answer
    wait: {timeout: 1s, on_timeout: continue, default: {decision: late}, save: /answer}
  - name: route
    branch: {on: /answer/decision, cases: {yes: approved, late: chased}, default: approved}
  - name: approved
    notify: {title: "approved"}
    end: true
  - name: chased
    notify: {title: "Nobody answered about the {{ topic }}"}
"#,
    )?;
    let app = spawn_with("self", vec![definition]).await?;
    let id = start(&app, "late", json!({})).await?;
    let run = app.wait_for_status(&id, "succeeded").await?;
    assert_eq!(run["state"]["answer"], json!({"decision": "late"}));
    assert_eq!(step_names(&run), ["ask", "answer", "route", "chased"]);
    Ok(())
}

#[tokio::test]
async fn a_run_whose_file_changed_since_it_started_is_stopped_naming_both_digests(
) -> anyhow::Result<()> {
    let before = "name: doc\nstate: {x: 1}\nsteps:\n  - name: ask\n    ui: {prompt: \"Sign {{ x }}\", schema: {type: object, properties: {ok: {type: boolean}}}}\n  - name: answer\n    wait: {save: /answer}\n  - name: done\n    notify: {title: done}\n";
    let dir = tempfile::tempdir()?;
    let app = TestApp::builder()
        .dir(dir)
        .options(Options {
            yaml_workflows: Some(vec![workflow(before)?]),
            ..Options::default()
        })
        .spawn()
        .await?;
    let id = start(&app, "doc", json!({})).await?;
    app.wait_for_status(&id, "waiting").await?;
    let dir = app.stop().await?;
    let after = before.replace("Sign", "Please sign");
    let app = TestApp::builder()
        .dir(dir)
        .options(Options {
            yaml_workflows: Some(vec![workflow(&after)?]),
            ..Options::default()
        })
        .spawn()
        .await?;
    let path = working_link_path(&app, &id).await?;
    assert_eq!(submit(&app, &path, "ok=on").await?.status(), 303);
    let run = app.wait_for_status(&id, "failed").await?;
    let error = run["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("the workflow file changed since this run started"),
        "{error}"
    );
    Ok(())
}

fn bad_workflows_dir(text: &str) -> anyhow::Result<(tempfile::TempDir, PathBuf)> {
    let dir = tempfile::tempdir()?;
    let workflows = dir.path().join("workflows");
    std::fs::create_dir(&workflows)?;
    std::fs::write(workflows.join("broken.yaml"), text)?;
    Ok((dir, workflows))
}

#[test]
fn the_binary_refuses_to_start_with_a_bad_workflow_file_in_one_line() -> anyhow::Result<()> {
    let cases = [
        ("steps:\n  - name: a\n    notify: {title: x}\n  - name: a\n    notify: {title: y}\n", "step `a`: name: the step name `a` is used twice"),
        ("steps:\n  - name: ask\n    ui: {prompt: x, schema: {type: object, properties: {tags: {type: array, items: {type: object}}}}}\n", "step `ask`: ui.schema: not a form schema"),
        ("steps:\n  - name: go\n    branch: {on: /nowhere, cases: {a: end}}\n  - name: end\n    notify: {title: x}\n", "step `go`: branch.on: unknown pointer `/nowhere`"),
        ("steps:\n  - name: tell\n    notify: {title: \"{% if %}\"}\n", "step `tell`: notify.title: the template does not parse"),
    ];
    for (text, expected) in cases {
        let (dir, _) = bad_workflows_dir(text)?;
        let output = Command::new(env!("CARGO_BIN_EXE_tessera"))
            .current_dir(dir.path())
            .env_remove("TESSERA_CONFIG")
            .env_remove("TESSERA_WORKFLOWS_DIR")
            .env("TESSERA_ADDR", "127.0.0.1:0")
            .output()?;
        assert_eq!(output.status.code(), Some(2), "{expected}");
        let stderr = String::from_utf8(output.stderr)?;
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("tessera: invalid workflow file workflows/broken.yaml: "),
            "{stderr}"
        );
        assert!(stderr.contains(expected), "{stderr}");
    }
    Ok(())
}
