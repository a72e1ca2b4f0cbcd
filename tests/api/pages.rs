//! Page links end to end over HTTP: open, submit once, receipts, expiry, CSRF, downloads.

use std::time::Duration;

use anyhow::Context as _;
use serde_json::{json, Value};
use tessera::{
    pages::{
        page::{NewPage, PageStatus},
        receipt::is_cancelled,
        token::PageToken,
    },
    store::{now_ms, pages::PageChange},
    workflow::run::{RunId, RunStatus},
};

use tessera::{
    startup::Options,
    workflow::{workflow, Prompt, Registry, UiOptions},
};
use tessera_app::catalog::{Catalog, ComponentSpec};

use crate::helpers::{bare_run, csrf_of, header, on_both_backends, Backend, TestApp};

struct Link {
    token: PageToken,
    run_id: RunId,
}

impl Link {
    fn path(&self) -> String {
        format!("/p/{}", self.token.as_str())
    }
}

async fn waiting_page(app: &TestApp, expires_in_ms: i64) -> anyhow::Result<Link> {
    waiting_page_with(app, expires_in_ms, true).await
}

async fn waiting_page_with(
    app: &TestApp,
    expires_in_ms: i64,
    cancel_button: bool,
) -> anyhow::Result<Link> {
    let run = bare_run(&app.store, "approve", RunStatus::Waiting).await?;
    let token = PageToken::generate();
    let tree = json!({
        "nodes": {
            "h": {"component": "Heading", "props": {"text": "Approve {{/count}} expenses", "level": 1}},
            "rows": {"component": "Table", "props": {"rows": {"$data": "/claims"}, "columns": [{"key": "who", "label": "Who"}]}},
            "dl": {"component": "DownloadLink", "props": {"label": "Claims as CSV", "format": "csv", "data": {"$data": "/claims"}}},
            "f": {"component": "Form", "props": {}, "children": ["note", "ok", "no"]},
            "note": {"component": "TextArea", "props": {"name": "note", "label": "Note", "required": true}},
            "ok": {"component": "Button", "props": {"label": "Approve", "kind": "submit"}},
            "no": {"component": "Button", "props": {"label": "Not now", "kind": "cancel", "variant": "secondary"}}
        },
        "order": ["h", "rows", "dl", "f"]
    });
    let mut tree = tree;
    if !cancel_button {
        tree["nodes"]["f"]["children"] = json!(["note", "ok"]);
        if let Some(nodes) = tree["nodes"].as_object_mut() {
            nodes.remove("no");
        }
    }
    app.store
        .create_page(&NewPage {
            token_hash: token.hash(),
            run_id: Some(run.id),
            tree,
            schema: Some(json!({"type": "object", "properties": {"note": {"type": "string", "minLength": 3}}, "required": ["note"]})),
            data: json!({"count": 2, "claims": [{"who": "Ada"}, {"who": "=HYPERLINK(\"x\")"}]}),
            component_set: None,
            expires_at_ms: now_ms() + expires_in_ms,
        })
        .await?;
    Ok(Link {
        token,
        run_id: run.id,
    })
}

#[tokio::test]
async fn opening_a_link_renders_the_page_and_changes_nothing() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let link = waiting_page(&app, 60_000).await?;
    for _ in 0..3 {
        let response = app.get(&link.path()).await?;
        assert_eq!(response.status(), 200);
        assert_eq!(header(&response, "cache-control"), Some("no-store"));
        let html = response.text().await?;
        assert!(html.contains("Approve 2 expenses"));
        assert!(!csrf_of(&html).is_empty(), "the form carries a CSRF token");
        assert!(html.contains(&format!("action=\"{}\"", link.path())));
    }
    let page = app.store.page_by_token(&link.token.hash()).await?;
    assert_eq!(page.status, PageStatus::Open);
    assert_eq!(app.store.run(link.run_id).await?.status, RunStatus::Waiting);
    Ok(())
}

#[tokio::test]
async fn a_valid_submission_is_recorded_once_and_resumes_the_run() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let link = waiting_page(&app, 60_000).await?;
    let csrf = csrf_of(&app.get(&link.path()).await?.text().await?);
    let response = app
        .post_form(&link.path(), "", format!("_csrf={csrf}&note=Looks+good"))
        .await?;
    assert_eq!(response.status(), 303);
    assert_eq!(
        header(&response, "location"),
        Some(format!("{}/done", link.path()).as_str())
    );
    assert_eq!(app.store.run(link.run_id).await?.status, RunStatus::Ready);
    assert_eq!(
        app.store.page_by_token(&link.token.hash()).await?.response,
        Some(json!({"note": "Looks good"}))
    );
    let done = app
        .get(&format!("{}/done", link.path()))
        .await?
        .text()
        .await?;
    assert!(done.contains("Thank you"), "confirmation page");
    assert!(done.contains("Looks good"), "the receipt shows the answer");

    let again = app
        .post_form(
            &link.path(),
            "",
            format!("_csrf={csrf}&note=Changed+my+mind"),
        )
        .await?;
    assert_eq!(again.status(), 409);
    let receipt = again.text().await?;
    assert!(
        receipt.contains("Looks good") && !receipt.contains("Changed my mind"),
        "409 shows the first answer"
    );
    let reopened = app.get(&link.path()).await?;
    assert_eq!(reopened.status(), 200);
    assert!(reopened.text().await?.contains("data-testid=\"receipt\""));
    Ok(())
}

#[tokio::test]
async fn a_wrong_value_gets_422_with_the_persons_values_and_nothing_is_stored() -> anyhow::Result<()>
{
    let app = TestApp::builder().spawn().await?;
    let link = waiting_page(&app, 60_000).await?;
    let csrf = csrf_of(&app.get(&link.path()).await?.text().await?);
    let response = app
        .post_form(&link.path(), "", format!("_csrf={csrf}&note=no"))
        .await?;
    assert_eq!(response.status(), 422);
    let html = response.text().await?;
    assert!(html.contains("no</textarea>"), "the value is kept");
    assert!(html.contains("aria-invalid=\"true\""));
    assert!(
        !csrf_of(&html).is_empty(),
        "the re-rendered form can be sent again"
    );
    assert_eq!(
        app.store.page_by_token(&link.token.hash()).await?.status,
        PageStatus::Open
    );
    assert_eq!(app.store.run(link.run_id).await?.status, RunStatus::Waiting);
    Ok(())
}

#[tokio::test]
async fn submissions_without_the_pages_csrf_token_or_from_another_site_are_refused(
) -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let link = waiting_page(&app, 60_000).await?;
    let other = waiting_page(&app, 60_000).await?;
    let other_csrf = csrf_of(&app.get(&other.path()).await?.text().await?);
    assert_eq!(
        app.post_form(&link.path(), "", "note=Looks+good")
            .await?
            .status(),
        403
    );
    assert_eq!(
        app.post_form(
            &link.path(),
            "",
            format!("_csrf={other_csrf}&note=Looks+good")
        )
        .await?
        .status(),
        403,
        "another page's token"
    );
    let csrf = csrf_of(&app.get(&link.path()).await?.text().await?);
    let cross_site = app
        .post_form_with(
            &link.path(),
            "",
            format!("_csrf={csrf}&note=Looks+good"),
            &[("origin", "https://evil.example")],
        )
        .await?;
    assert_eq!(cross_site.status(), 403);
    assert_eq!(
        app.store.page_by_token(&link.token.hash()).await?.status,
        PageStatus::Open
    );
    Ok(())
}

#[tokio::test]
async fn a_receipt_and_its_downloads_are_gone_once_the_receipt_lifetime_has_passed(
) -> anyhow::Result<()> {
    let app = TestApp::builder()
        .backend(Backend::Sqlite)
        .config(|config| {
            config.access.receipt_lifetime = Duration::from_secs(3600);
        })
        .spawn()
        .await?;
    let link = waiting_page(&app, 60_000).await?;
    let csrf = csrf_of(&app.get(&link.path()).await?.text().await?);
    let response = app
        .post_form(&link.path(), "", format!("_csrf={csrf}&note=Looks+good"))
        .await?;
    assert_eq!(response.status(), 303);
    let download = format!("{}/download/dl.csv", link.path());
    assert_eq!(app.get(&link.path()).await?.status(), 200, "the receipt");
    assert_eq!(app.get(&download).await?.status(), 200);

    // The answer was given an hour and a minute ago.
    tessera_store::testing::execute_on(
        &app.store,
        "UPDATE pages SET submitted_at = submitted_at - 3660000 WHERE token_hash = $1",
        &[&link.token.hash().0],
    )
    .await?;
    let receipt = app.get(&link.path()).await?;
    assert_eq!(receipt.status(), 410, "answers like an expired link");
    let html = receipt.text().await?;
    assert!(html.contains("This link has expired"), "{html}");
    assert!(!html.contains("Looks good"), "the answer is not shown");
    assert_eq!(app.get(&download).await?.status(), 404, "nor its download");
    let done = app.get(&format!("{}/done", link.path())).await?;
    assert_eq!(done.status(), 303, "the confirmation sends to the link");
    let again = app
        .post_form(&link.path(), "", format!("_csrf={csrf}&note=Again"))
        .await?;
    assert_eq!(again.status(), 410);
    assert!(!again.text().await?.contains("Looks good"));
    assert_eq!(
        app.store.page_by_token(&link.token.hash()).await?.response,
        Some(json!({"note": "Looks good"})),
        "the answer itself is kept"
    );
    Ok(())
}

#[tokio::test]
async fn twenty_concurrent_posts_give_one_303_and_nineteen_409() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let link = waiting_page(&app, 60_000).await?;
    let csrf = csrf_of(&app.get(&link.path()).await?.text().await?);
    let mut tasks = Vec::new();
    for attempt in 0..20 {
        let request = app
            .client
            .post(app.url(&link.path()))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("_csrf={csrf}&note=attempt+{attempt}"));
        tasks.push(tokio::spawn(async move {
            request
                .send()
                .await
                .map(|response| response.status().as_u16())
        }));
    }
    let mut statuses = Vec::new();
    for task in tasks {
        statuses.push(task.await??);
    }
    statuses.sort_unstable();
    assert_eq!(
        statuses.iter().filter(|status| **status == 303).count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|status| **status == 409).count(),
        19,
        "{statuses:?}"
    );
    assert_eq!(app.store.run(link.run_id).await?.status, RunStatus::Ready);
    Ok(())
}

#[tokio::test]
async fn expired_withdrawn_and_unknown_links_are_refused_without_leaking() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let expired = waiting_page(&app, -1).await?;
    assert_eq!(app.get(&expired.path()).await?.status(), 410);
    assert_eq!(
        app.post_form(&expired.path(), "", "note=late+answer")
            .await?
            .status(),
        410
    );
    assert_eq!(
        app.store.run(expired.run_id).await?.status,
        RunStatus::Waiting
    );

    let withdrawn = waiting_page(&app, 60_000).await?;
    let page = app.store.page_by_token(&withdrawn.token.hash()).await?;
    assert!(
        app.store
            .change_open_page(page.id, &PageChange::Revoke)
            .await?
    );
    assert_eq!(app.get(&withdrawn.path()).await?.status(), 410);

    let unknown = app
        .get(&format!("/p/{}", PageToken::generate().as_str()))
        .await?;
    assert_eq!(unknown.status(), 404);
    let unknown_body = unknown.text().await?;
    let malformed = app.get("/p/not-a-token").await?;
    assert_eq!(malformed.status(), 404);
    assert_eq!(
        strip_nonce(&malformed.text().await?),
        strip_nonce(&unknown_body),
        "a malformed and an unknown token look the same"
    );
    Ok(())
}

/// The page body, without the per-response nonces of the head.
fn strip_nonce(html: &str) -> String {
    html.split("<main").nth(1).unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_reissued_link_replaces_the_old_one_and_an_extended_one_lives_longer(
) -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let link = waiting_page(&app, 60_000).await?;
    let page = app.store.page_by_token(&link.token.hash()).await?;
    let fresh = PageToken::generate();
    assert!(
        app.store
            .change_open_page(page.id, &PageChange::Reissue(fresh.hash()))
            .await?
    );
    assert_eq!(
        app.get(&link.path()).await?.status(),
        404,
        "the old link stops working"
    );
    assert_eq!(
        app.get(&format!("/p/{}", fresh.as_str())).await?.status(),
        200
    );

    let short = waiting_page(&app, -1).await?;
    let short_page = app.store.page_by_token(&short.token.hash()).await?;
    assert!(
        app.store
            .change_open_page(short_page.id, &PageChange::Extend(now_ms() + 60_000))
            .await?
    );
    assert_eq!(app.get(&short.path()).await?.status(), 200);
    Ok(())
}

#[tokio::test]
async fn the_cancel_button_resolves_the_run_with_a_cancelled_response() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let link = waiting_page(&app, 60_000).await?;
    let csrf = csrf_of(&app.get(&link.path()).await?.text().await?);
    let response = app
        .post_form(
            &link.path(),
            "",
            format!("_csrf={csrf}&note=&_action=cancel"),
        )
        .await?;
    assert_eq!(response.status(), 303);
    let stored: Value = app
        .store
        .page_by_token(&link.token.hash())
        .await?
        .response
        .unwrap_or_default();
    assert!(is_cancelled(&stored), "{stored}");
    assert_eq!(app.store.run(link.run_id).await?.status, RunStatus::Ready);
    Ok(())
}

#[tokio::test]
async fn a_page_without_a_cancel_button_cannot_be_cancelled_by_a_crafted_post() -> anyhow::Result<()>
{
    let app = TestApp::builder().spawn().await?;
    let link = waiting_page_with(&app, 60_000, false).await?;
    let html = app.get(&link.path()).await?.text().await?;
    assert!(!html.contains("value=\"cancel\""), "no Cancel button shown");
    let csrf = csrf_of(&html);
    let crafted = app
        .post_form(
            &link.path(),
            "",
            format!("_csrf={csrf}&note=&_action=cancel"),
        )
        .await?;
    assert_eq!(
        crafted.status(),
        422,
        "the fields decide, and the note is missing"
    );
    assert_eq!(app.store.run(link.run_id).await?.status, RunStatus::Waiting);
    let answered = app
        .post_form(
            &link.path(),
            "",
            format!("_csrf={csrf}&note=fine+by+me&_action=cancel"),
        )
        .await?;
    assert_eq!(answered.status(), 303);
    let stored = app
        .store
        .page_by_token(&link.token.hash())
        .await?
        .response
        .unwrap_or_default();
    assert_eq!(
        stored,
        json!({"note": "fine by me"}),
        "an answer, not a cancel"
    );
    Ok(())
}

#[tokio::test]
async fn downloads_are_built_from_the_pages_data_and_guard_formulas() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let link = waiting_page(&app, 60_000).await?;
    let response = app.get(&format!("{}/download/dl.csv", link.path())).await?;
    assert_eq!(response.status(), 200);
    let csv = response.text().await?;
    assert!(csv.contains("Ada"));
    assert!(
        csv.contains("'=HYPERLINK"),
        "formula cells are neutralised: {csv}"
    );
    assert_eq!(
        app.get(&format!("{}/download/h.csv", link.path()))
            .await?
            .status(),
        404
    );
    Ok(())
}

/// A custom component: the Badge's renderer under a name of the application's own.
fn renamed_badge(name: &str) -> anyhow::Result<ComponentSpec> {
    let mut spec = Catalog::defaults()
        .get("Badge")
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("the Badge spec"))?;
    spec.name = name.to_owned();
    Ok(spec)
}

/// Stores an open page whose tree uses `component` with Badge props and returns its path.
async fn page_with(app: &TestApp, component: &str, text: &str) -> anyhow::Result<String> {
    let token = PageToken::generate();
    app.store
        .create_page(&NewPage {
            token_hash: token.hash(),
            run_id: None,
            tree: json!({"nodes": {"b": {"component": component, "props": {"text": text}}}, "order": ["b"]}),
            schema: None,
            data: json!({}),
            component_set: None,
            expires_at_ms: now_ms() + 60_000,
        })
        .await?;
    Ok(format!("/p/{}", token.as_str()))
}

#[tokio::test]
async fn pages_are_served_with_the_components_the_runner_and_its_steps_registered(
) -> anyhow::Result<()> {
    #[derive(serde::Serialize, serde::Deserialize)]
    struct Nothing {}
    let step_level = workflow::<Nothing>("with-a-pill")
        .display(
            "Show",
            Prompt::<tessera::workflow::NoResponse>::new("Show the status"),
            UiOptions {
                components: vec![renamed_badge("StepPill")?],
                ..UiOptions::default()
            },
        )
        .build()?;
    let options = Options {
        workflows: Some(Registry::new().with(step_level)?),
        components: vec![renamed_badge("RunnerPill")?],
        ..Options::default()
    };
    let app = TestApp::builder()
        .dir(tempfile::tempdir()?)
        .options(options)
        .spawn()
        .await?;
    for (component, text) in [("RunnerPill", "Runner-level"), ("StepPill", "Step-level")] {
        let html = app
            .get(&page_with(&app, component, text).await?)
            .await?
            .text()
            .await?;
        assert!(html.contains(text), "{component} renders: {html}");
        assert!(!html.contains("node-error"), "{component} is known: {html}");
    }
    // The model of a step that names no components is offered the runner's, and the gallery
    // and the tool list show what it is offered; a step's own components stay with that step.
    let tools: Vec<Value> = app
        .client
        .get(app.url("/api/components"))
        .bearer_auth(crate::helpers::API_TOKEN)
        .send()
        .await?
        .json()
        .await?;
    let names: Vec<&str> = tools
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert!(
        names.contains(&"RunnerPill") && names.contains(&"Badge"),
        "{names:?}"
    );
    assert!(!names.contains(&"StepPill"), "{names:?}");
    let gallery = app
        .get_with("/components", &app.admin_cookie().await?)
        .await?
        .text()
        .await?;
    assert!(gallery.contains("RunnerPill"));

    let unknown = app
        .get(&page_with(&app, "NobodysPill", "Unregistered").await?)
        .await?
        .text()
        .await?;
    assert!(
        unknown.contains("is not in the catalog"),
        "an unregistered component is an error box, not a crash: {unknown}"
    );
    Ok(())
}

/// The default `Heading`'s props, rendered in capitals under a test id: what one workflow's
/// `ui_with` step offers instead of the default.
fn shouting_heading() -> anyhow::Result<ComponentSpec> {
    use leptos::prelude::*;
    let mut spec = Catalog::defaults()
        .get("Heading")
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("the Heading spec"))?;
    spec.description = "A heading that shouts.".to_owned();
    spec.render = std::sync::Arc::new(|_node, props, _children| {
        let text = props["text"].as_str().unwrap_or_default().to_uppercase();
        view! { <h1 data-testid="shouting-heading">{text}</h1> }.into_any()
    });
    Ok(spec)
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, tessera::forms::FormSchema)]
struct Acknowledgement {
    seen: bool,
}

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
struct Nothing {}

/// `Ask` (a `ui_with` step with `components`) → `Wait` for the answer.
fn asking_workflow(
    name: &str,
    components: Vec<ComponentSpec>,
) -> anyhow::Result<tessera::workflow::Workflow<Nothing>> {
    Ok(workflow::<Nothing>(name)
        .ui_with(
            "Ask",
            Prompt::<Acknowledgement>::new("Confirm you have seen the notice"),
            UiOptions {
                components,
                ..UiOptions::default()
            },
        )
        .step_with_page("Wait", |state, page| async move {
            Ok((state, tessera::workflow::wait_for(page.webhook)))
        })
        .build()?)
}

/// Starts `workflow` and returns the path of the page its run waits on.
async fn start_and_open(app: &TestApp, workflow: &str) -> anyhow::Result<String> {
    let started: Value = app
        .api_post("/api/runs", &json!({"workflow": workflow}))
        .await?
        .json()
        .await?;
    let id = started["id"].as_str().unwrap_or_default().to_owned();
    for _ in 0..600 {
        let run = app.api_json(&format!("/api/runs/{id}")).await?;
        if run["waiting_page"].is_string() {
            // Only the token's hash is stored: a working link is minted on request.
            let fresh: Value = app
                .api_post(&format!("/api/runs/{id}/link"), &json!({}))
                .await?
                .json()
                .await?;
            let (_, token) = fresh["link"]
                .as_str()
                .and_then(|link| link.split_once("/p/"))
                .with_context(|| format!("a fresh link: {fresh:#}"))?;
            return Ok(format!("/p/{token}"));
        }
        anyhow::ensure!(run["status"] != "failed", "run {id} failed: {run:#}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    anyhow::bail!("run {id} of {workflow} never waited on a page")
}

#[tokio::test]
async fn a_steps_override_of_a_default_component_stays_on_that_steps_pages() -> anyhow::Result<()> {
    let options = Options {
        workflows: Some(
            Registry::new()
                .with(asking_workflow("shouting", vec![shouting_heading()?])?)?
                .with(asking_workflow("plain", Vec::new())?)?,
        ),
        ..Options::default()
    };
    let app = TestApp::builder()
        .dir(tempfile::tempdir()?)
        .options(options)
        .spawn()
        .await?;
    let shouting = app
        .get(&start_and_open(&app, "shouting").await?)
        .await?
        .text()
        .await?;
    assert!(
        shouting.contains("data-testid=\"shouting-heading\""),
        "the step's own Heading renders its page: {shouting}"
    );
    let plain_response = app.get(&start_and_open(&app, "plain").await?).await?;
    assert_eq!(plain_response.status(), 200);
    let plain = plain_response.text().await?;
    assert!(
        !plain.contains("shouting-heading"),
        "another workflow's page keeps the default Heading: {plain}"
    );
    assert!(
        plain.contains("<h1"),
        "the default Heading renders: {plain}"
    );
    assert!(!plain.contains("node-error"), "{plain}");
    Ok(())
}

#[tokio::test]
async fn a_page_made_with_components_the_server_no_longer_has_is_a_clear_error_page(
) -> anyhow::Result<()> {
    let logs = crate::helpers::captured_logs();
    // Made by a server whose step offered the shouting Heading; this server never heard of it.
    let app = TestApp::builder().spawn().await?;
    let token = PageToken::generate();
    let page = app
        .store
        .create_page(&NewPage {
            token_hash: token.hash(),
            run_id: None,
            tree: json!({"nodes": {"h": {"component": "Heading", "props": {"text": "Notice"}}}, "order": ["h"]}),
            schema: None,
            data: json!({}),
            component_set: Some(tessera::pages::component_set::set_of(&Catalog::resolve(
                &[shouting_heading()?],
                &[],
            ))),
            expires_at_ms: now_ms() + 60_000,
        })
        .await?;
    let response = app.get(&format!("/p/{}", token.as_str())).await?;
    assert_eq!(response.status(), 500);
    let html = response.text().await?;
    assert!(html.contains("This page cannot be shown"), "{html}");
    assert!(
        html.contains("components this server no longer has"),
        "{html}"
    );
    assert!(!html.contains("node-error"), "no error boxes: {html}");
    assert!(
        !html.contains("Notice"),
        "nothing of the page is shown: {html}"
    );
    let logged = logs.lines_with(&page.id.to_string());
    assert!(
        logged
            .iter()
            .any(|line| line.contains("ERROR") && line.contains("Heading")),
        "an error naming the page and the component is logged: {logged:?}"
    );
    Ok(())
}

#[tokio::test]
async fn a_page_stored_before_pages_recorded_their_components_renders_as_before(
) -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let html = app
        .get(&page_with(&app, "Heading", "Written before the upgrade").await?)
        .await?
        .text()
        .await?;
    assert!(html.contains("Written before the upgrade"), "{html}");
    assert!(!html.contains("node-error"), "{html}");
    Ok(())
}

/// Stores an open page with `tree` over `data` (no run behind it) and answers its path.
async fn stored_page(app: &TestApp, tree: Value, data: Value) -> anyhow::Result<String> {
    let token = PageToken::generate();
    app.store
        .create_page(&NewPage {
            token_hash: token.hash(),
            run_id: None,
            tree,
            schema: None,
            data,
            component_set: None,
            expires_at_ms: now_ms() + 3_600_000,
        })
        .await?;
    Ok(format!("/p/{}", token.as_str()))
}

fn named_rows(count: usize) -> Value {
    let rows: Vec<Value> = (1..=count)
        .map(|row| json!({"id": row, "name": format!("Row {row}.")}))
        .collect();
    json!({"rows": rows})
}

on_both_backends!(
    a_table_without_page_size_shows_its_first_page_and_its_next_link_the_next_rows,
    a_stored_page_over_the_render_budget_is_an_error_page_naming_the_budget,
);

async fn a_table_without_page_size_shows_its_first_page_and_its_next_link_the_next_rows(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let tree =
        json!({"nodes": {"list": {"component": "Table", "props": {"rows": {"$data": "/rows"}}}}});
    let path = stored_page(&app, tree, named_rows(120)).await?;
    let first = app.get(&path).await?.text().await?;
    assert!(
        first.contains(">Row 1.<") && first.contains(">Row 50.<"),
        "{first}"
    );
    assert!(
        !first.contains(">Row 51.<"),
        "only the first 50 rows: {first}"
    );
    assert!(first.contains("Page 1 of 3"), "{first}");
    // The pager is a plain link: it works with JavaScript off.
    let next = first
        .split("href=\"")
        .filter_map(|rest| rest.split('"').next())
        .find(|href| href.contains("page=list.2"))
        .context("a link to the next page")?
        .replace("&amp;", "&");
    let second = app.get(&format!("{path}{next}")).await?.text().await?;
    assert!(
        second.contains(">Row 51.<") && second.contains(">Row 100.<"),
        "{second}"
    );
    assert!(
        !second.contains(">Row 1.<") && !second.contains(">Row 101.<"),
        "{second}"
    );
    assert!(second.contains("Page 2 of 3"), "{second}");
    app.cleanup().await
}

async fn a_stored_page_over_the_render_budget_is_an_error_page_naming_the_budget(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    // Eleven tables of 500 rows a page: 5,500 rows, over the 5,000 the budget allows.
    let mut nodes = serde_json::Map::new();
    for table in 0..11 {
        nodes.insert(
            format!("t{table}"),
            json!({"component": "Table", "props": {"rows": {"$data": "/rows"}, "pageSize": 500}}),
        );
    }
    let path = stored_page(&app, json!({"nodes": nodes}), named_rows(500)).await?;
    let response = app.get(&path).await?;
    assert_eq!(response.status(), 422);
    let html = response.text().await?;
    assert!(html.contains("data-testid=\"error-page\""), "{html}");
    assert!(html.contains("render budget “rows”"), "{html}");
    assert!(
        !html.contains("pageSize"),
        "no advice the person cannot act on: {html}"
    );
    assert!(
        !html.contains(">Row 1.<"),
        "no part of the page is shown: {html}"
    );
    app.cleanup().await
}
