//! Runs end to end over HTTP: start the email digest, follow its link, submit, see it finish.

use std::time::Duration;

use serde_json::Value;

use tessera::{startup::Options, workflow::RunnerConfig};

use crate::helpers::{csrf_of, header, TestApp};

async fn run_json(app: &TestApp, id: &str) -> anyhow::Result<Value> {
    app.api_json(&format!("/api/runs/{id}")).await
}

/// A working link to the page run `id` waits on, as a path (`POST /api/runs/{id}/link`: a
/// fresh one, since only tokens' hashes are stored).
pub(crate) async fn working_link_path(app: &TestApp, id: &str) -> anyhow::Result<String> {
    let response = app
        .api_post(&format!("/api/runs/{id}/link"), &serde_json::json!({}))
        .await?;
    let status = response.status();
    let body: Value = response.json().await?;
    anyhow::ensure!(
        status == 201,
        "no working link for run {id}: {status} {body:#}"
    );
    body["link"]
        .as_str()
        .and_then(|link| link.split_once("/p/"))
        .map(|(_, token)| format!("/p/{token}"))
        .ok_or_else(|| anyhow::anyhow!("not a page link: {body:#}"))
}

#[tokio::test]
async fn the_email_digest_asks_through_a_page_and_archives_exactly_the_chosen_emails(
) -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let (id, waiting) = app
        .start_waiting_run(&serde_json::json!({"workflow": "email-digest"}))
        .await?;
    assert!(
        waiting["waiting_page"].is_string(),
        "the page it waits on is named: {waiting:#}"
    );
    let path = working_link_path(&app, &id).await?;

    let html = app.get(&path).await?.text().await?;
    assert!(
        html.contains("name=\"archive_ids\""),
        "the person can pick emails"
    );
    assert!(html.contains("name=\"note\""));
    let body = format!(
        "_csrf={}&archive_ids=m03&archive_ids=m07&archive_ids=m12&note=old+newsletters",
        csrf_of(&html)
    );
    let submitted = app.post_form(&path, "", body.clone()).await?;
    assert_eq!(submitted.status(), 303);
    let again = app.post_form(&path, "", body).await?;
    assert_eq!(again.status(), 409);

    let finished = app.wait_for_status(&id, "succeeded").await?;
    assert_eq!(
        finished["state"]["archived"],
        serde_json::json!(["m03", "m07", "m12"])
    );
    assert_eq!(finished["state"]["note"], "old newsletters");
    let archive_runs = finished["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|step| step["name"] == "Archive")
        .count();
    assert_eq!(archive_runs, 1, "the response step ran once");
    Ok(())
}

#[tokio::test]
async fn a_submission_resumes_its_run_without_waiting_for_the_runners_next_poll(
) -> anyhow::Result<()> {
    // Idle workers would sleep an hour: only the submission's wake-up can resume the run within
    // the test's bound. The lease is an hour too, because a worker that saw the run being driven
    // sleeps until that run's lease would expire.
    let options = Options {
        runner: Some(RunnerConfig {
            poll_interval: Duration::from_secs(3600),
            lease: Duration::from_secs(3600),
            ..RunnerConfig::default()
        }),
        ..Options::default()
    };
    let app = TestApp::builder()
        .dir(tempfile::tempdir()?)
        .options(options)
        .spawn()
        .await?;
    let (id, _) = app
        .start_waiting_run(&serde_json::json!({"workflow": "bulk-approval"}))
        .await?;
    let path = working_link_path(&app, &id).await?;
    let html = app.get(&path).await?.text().await?;
    let submitted = app
        .client
        .post(app.url(&path))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!(
            "_csrf={}&decision=approve&claim_ids=exp-101&reason=Receipts+attached",
            csrf_of(&html)
        ))
        .send()
        .await?;
    assert_eq!(submitted.status(), 303);

    let finished = app.wait_for_status(&id, "succeeded").await?;
    assert_eq!(finished["state"]["decision"], "approve");
    assert_eq!(finished["state"]["reason"], "Receipts attached");
    Ok(())
}

#[tokio::test]
async fn the_runs_pages_need_the_admin_session() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let anonymous = app.get("/runs").await?;
    assert_eq!(anonymous.status(), 303);
    assert_eq!(header(&anonymous, "location"), Some("/login?next=%2Fruns"));
    let cookie = app.admin_cookie().await?;
    let page = app.get_with("/runs", &cookie).await?;
    assert_eq!(page.status(), 200);
    let html = page.text().await?;
    assert!(html.contains("data-testid=\"start-email-digest\""));
    assert!(
        !html.contains("data-testid=\"start-ask\""),
        "asks need a prompt: they start through the API only"
    );
    Ok(())
}

fn shown_link(html: &str) -> String {
    html.split("data-testid=\"page-link\"")
        .nth(1)
        .and_then(|rest| rest.split('>').nth(1))
        .and_then(|rest| rest.split('<').next())
        .map(|link| {
            link.split_once("/p/")
                .map_or(String::new(), |(_, token)| format!("/p/{token}"))
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn an_admin_gets_a_working_link_on_the_run_page_and_any_earlier_link_stops_working(
) -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let cookie = app.admin_cookie().await?;
    let started = app
        .post_form("/runs/start", &cookie, "workflow=bulk-approval")
        .await?;
    assert_eq!(started.status(), 303);
    let location = header(&started, "location").unwrap_or_default().to_owned();
    let id = location.trim_start_matches("/runs/").to_owned();
    let waiting = app.wait_for_status(&id, "waiting").await?;
    let page_id = waiting["waiting_page"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let run_page = app.get_with(&location, &cookie).await?.text().await?;
    assert!(
        !run_page.contains("/p/"),
        "the run page shows no link until asked for one"
    );
    assert!(run_page.contains("Get a working link"));

    let get_link = || async {
        let answer = app
            .post_form(
                &format!("/runs/{id}/pages/{page_id}"),
                &cookie,
                "action=reissue",
            )
            .await?;
        anyhow::ensure!(
            answer.headers().get("refresh").is_none(),
            "a link shown once is not reloaded away"
        );
        anyhow::Ok(answer.text().await?)
    };
    let first = get_link().await?;
    assert!(
        first.contains("Any link sent earlier no longer works"),
        "the admin is told what the fresh link does to sent ones"
    );
    let first_path = shown_link(&first);
    assert!(first_path.starts_with("/p/"), "a link is shown once");
    assert_eq!(app.get(&first_path).await?.status(), 200, "it works");

    let second_path = shown_link(&get_link().await?);
    assert!(second_path.starts_with("/p/") && second_path != first_path);
    assert_eq!(
        app.get(&first_path).await?.status(),
        404,
        "the earlier link stops working"
    );
    assert_eq!(app.get(&second_path).await?.status(), 200);

    let cancelled = app
        .post_with(&format!("/runs/{id}/cancel"), &cookie)
        .await?;
    assert_eq!(cancelled.status(), 303);
    assert_eq!(run_json(&app, &id).await?["status"], "cancelled");
    let after = app
        .api_post(&format!("/api/runs/{id}/link"), &serde_json::json!({}))
        .await?;
    assert_eq!(after.status(), 409, "no link for a run that waits no more");
    let body: Value = after.json().await?;
    assert_eq!(body["error"]["code"], "not_waiting");
    let unknown = app
        .api_post(
            "/api/runs/7b0f7c4e-93b5-4f7e-9e0b-6a1f1c2d3e4f/link",
            &serde_json::json!({}),
        )
        .await?;
    assert_eq!(unknown.status(), 404);
    Ok(())
}

#[tokio::test]
async fn starting_an_unknown_workflow_is_a_clear_400() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let response = app
        .api_post("/api/runs", &serde_json::json!({"workflow": "nope"}))
        .await?;
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await?;
    assert_eq!(body["error"]["field"], "workflow");
    Ok(())
}

#[tokio::test]
async fn a_ui_step_links_its_generation_record_and_an_unfinished_run_refreshes_itself(
) -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let cookie = app.admin_cookie().await?;
    let (id, _) = app
        .start_waiting_run(&serde_json::json!({"workflow": "bulk-approval"}))
        .await?;

    let timeline = app.get_with(&format!("/runs/{id}"), &cookie).await?;
    assert_eq!(
        header(&timeline, "refresh"),
        Some(format!("3; url=/runs/{id}").as_str()),
        "a waiting run's page reloads itself"
    );
    let html = timeline.text().await?;
    assert!(html.contains("data-testid=\"run-live\""));
    let link = html
        .split("data-testid=\"generation-link\"")
        .next()
        .and_then(|before| before.rsplit("href=\"").next())
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_default()
        .replace("&amp;", "&");
    assert!(
        link.starts_with("/runs/generations/"),
        "the Review step links its generation record: {link}"
    );

    let anonymous = app.get(&link).await?;
    assert_eq!(anonymous.status(), 303, "the record is for admins only");
    let record = app.get_with(&link, &cookie).await?;
    assert_eq!(record.status(), 200);
    let page = record.text().await?;
    assert!(
        page.contains("Approve or reject these 8 expense claims"),
        "the prompt as rendered is shown"
    );
    assert!(page.contains("heuristic"), "the model is named");
    let calls = page.matches("data-testid=\"tool-call\"").count();
    assert!(calls >= 3, "each tool call is listed: {calls}");
    assert!(page.contains("code: accepted"), "with code's decision");
    assert!(
        page.contains("RadioGroup") || page.contains("Select"),
        "the decision field was placed"
    );
    assert!(page.contains("Validation: OK"));
    assert!(
        page.contains(&format!("href=\"/runs/{id}\"")),
        "back to the run"
    );

    let cancelled = app
        .post_with(&format!("/runs/{id}/cancel"), &cookie)
        .await?;
    assert_eq!(cancelled.status(), 303);
    let finished = app.get_with(&format!("/runs/{id}"), &cookie).await?;
    assert!(
        finished.headers().get("refresh").is_none(),
        "a finished run's page stays put"
    );
    assert!(!finished.text().await?.contains("data-testid=\"run-live\""));
    Ok(())
}

#[tokio::test]
async fn the_runs_api_lists_runs_of_a_workflow_with_the_total_and_needs_the_token(
) -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let mut started = Vec::new();
    for workflow in ["email-digest", "dashboard", "email-digest"] {
        let run: Value = app
            .api_post("/api/runs", &serde_json::json!({ "workflow": workflow }))
            .await?
            .json()
            .await?;
        started.push(run["id"].as_str().unwrap_or_default().to_owned());
    }
    let listed: Value = app
        .api_get("/api/runs?workflow=email-digest&limit=1")
        .await?
        .json()
        .await?;
    assert_eq!(listed["total"], 2, "{listed:#}");
    let runs = listed["runs"].as_array().cloned().unwrap_or_default();
    assert_eq!(runs.len(), 1, "one per page: {listed:#}");
    assert_eq!(runs[0]["id"], started[2].as_str(), "newest first");
    assert_eq!(runs[0]["workflow"], "email-digest");

    let bad = app.api_get("/api/runs?status=sleeping").await?;
    assert_eq!(bad.status(), 400);
    let body: Value = bad.json().await?;
    assert_eq!(body["error"]["field"], "status");
    let anonymous = app.get("/api/runs").await?;
    assert_eq!(anonymous.status(), 401);
    Ok(())
}

/// The run page says until when a run waits and what happens then; extending the link moves it.
#[tokio::test]
async fn a_waiting_run_says_until_when_and_extending_its_link_moves_that() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let cookie = app.admin_cookie().await?;
    let created: Value = app
        .api_post(
            "/api/asks",
            &serde_json::json!({"prompt": "Still there?", "expires_in": 3600}),
        )
        .await?
        .json()
        .await?;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let waiting = app.wait_for_status(&id, "waiting").await?;
    let page_id = waiting["pages"]
        .as_object()
        .and_then(|pages| pages.keys().next().cloned())
        .unwrap_or_default();
    let sentence = |html: &str| {
        html.split("data-testid=\"run-waiting\"")
            .nth(1)
            .and_then(|rest| rest.split_once('>'))
            .and_then(|(_, rest)| rest.split('<').next())
            .unwrap_or_default()
            .to_owned()
    };
    let run_page = |path: String| {
        let request = app.client.get(app.url(&path)).header("cookie", &cookie);
        async move { anyhow::Ok(request.send().await?.text().await?) }
    };
    let html = run_page(format!("/runs/{id}")).await?;
    let before = sentence(&html);
    assert!(
        before.starts_with("Waiting for an answer until ")
            && before.contains("then the run is cancelled"),
        "{before}"
    );
    let extended = app
        .post_form(
            &format!("/runs/{id}/pages/{page_id}"),
            &cookie,
            "action=extend",
        )
        .await?
        .text()
        .await?;
    let after = sentence(&extended);
    assert!(after.starts_with("Waiting for an answer until "), "{after}");
    assert_ne!(after, before, "seven more days: {after}");
    Ok(())
}
