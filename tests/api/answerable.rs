//! Pages a person can answer well, through `POST /api/asks` with the offline heuristic model:
//! prompts are templates over `data`, the grown schema subset (multipleOf, default, nullable,
//! title/description/examples) reaches the page's controls, and display-only asks.

use anyhow::Context as _;
use serde_json::{json, Value};

use crate::{
    asks::{answer_of, create, submit},
    helpers::{error_of, on_both_backends, Backend, TestApp},
};

/// The opening tag of the control named `name`.
fn control<'h>(html: &'h str, name: &str) -> Option<&'h str> {
    let at = html.find(&format!("name=\"{name}\""))?;
    let start = html[..at].rfind('<')?;
    let end = at + html[at..].find('>')?;
    Some(&html[start..=end])
}

/// How the asks API refuses `body`: the status and the error.
async fn refusal(app: &TestApp, body: &Value) -> anyhow::Result<(u16, Value)> {
    error_of(app.api_post("/api/asks", body).await?).await
}

#[tokio::test]
async fn the_prompt_is_rendered_over_the_data_before_anyone_sees_it() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let claims: Vec<Value> = (1..=38)
        .map(|index| json!({"id": format!("c{index}"), "amount": index}))
        .collect();
    let (_, path) = create(
        &app,
        &json!({
            "prompt": "Review these {{ claims | length }} expense claims. Owner: {{ owner.name }}.",
            "data": {"claims": claims, "owner": {"name": "Ada {{ not a template }}"}}
        }),
    )
    .await?;
    let html = app.get(&path).await?.text().await?;
    assert!(
        html.contains("Review these 38 expense claims"),
        "the heading shows the rendered prompt"
    );
    assert!(!html.contains("{{ claims"), "no raw template text is shown");
    // A value from `data` is inserted as text, never rendered as a template.
    assert!(html.contains("Ada {{ not a template }}"));
    app.cleanup().await
}

#[tokio::test]
async fn an_unknown_variable_or_a_syntax_error_is_a_422_naming_the_prompt() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let (status, error) = refusal(
        &app,
        &json!({"prompt": "Collect a job application for the {{ role.title }} role", "data": {"role": {"name": "x"}}}),
    )
    .await?;
    assert_eq!(status, 422);
    assert_eq!(error["code"], "invalid_ask");
    assert_eq!(error["field"], "prompt");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains("`role.title`"), "{message}");

    let (status, error) = refusal(&app, &json!({"prompt": "Review {{ claims | length "})).await?;
    assert_eq!(status, 422);
    assert_eq!(error["field"], "prompt");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains("is not a valid template"), "{message}");
    assert!(message.contains("line 1"), "{message}");
    app.cleanup().await
}

async fn a_display_only_ask_shows_a_page_with_no_form_until_it_expires(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let (id, path) = create(
        &app,
        &json!({
            "prompt": "Q3 spending: {{ total }} across {{ teams | length }} teams.",
            "display": true,
            "data": {"total": "€12,400", "teams": [{"name": "Ops", "spent": 4000}, {"name": "Web", "spent": 8400}]}
        }),
    )
    .await?;
    for _ in 0..2 {
        let response = app.get(&path).await?;
        assert_eq!(response.status(), 200, "the link stays readable");
        let html = response.text().await?;
        assert!(html.contains("Q3 spending: €12,400 across 2 teams"));
        assert!(!html.contains("<form"), "a display-only page has no form");
        assert!(!html.contains("type=\"submit\""));
    }
    let ask = app.api_json(&format!("/api/asks/{id}")).await?;
    assert_eq!(ask["status"], "waiting", "{ask:#}");

    let (status, error) = refusal(
        &app,
        &json!({"prompt": "q", "display": true, "schema": {"type": "object", "properties": {}}}),
    )
    .await?;
    assert_eq!((status, error["field"].as_str()), (422, Some("display")));
    app.cleanup().await
}

on_both_backends!(a_display_only_ask_shows_a_page_with_no_form_until_it_expires);

#[tokio::test]
async fn half_hours_money_and_a_plain_yes_no_are_answered_as_given() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let schema = json!({
        "type": "object",
        "properties": {
            "hours": {"type": "number", "multipleOf": 0.5, "minimum": 0, "title": "Hours worked"},
            "amount": {"type": "number", "minimum": 0},
            "billable": {"type": "boolean"}
        },
        "required": ["hours", "amount", "billable"]
    });
    let (id, path) = create(&app, &json!({"prompt": "Log your time.", "schema": schema})).await?;
    let html = app.get(&path).await?.text().await?;
    let hours = control(&html, "hours").context("an hours control")?;
    assert!(hours.contains("step=\"0.5\""), "{hours}");
    assert!(html.contains("Hours worked"), "the title is the label");
    let amount = control(&html, "amount").context("an amount control")?;
    assert!(amount.contains("step=\"any\""), "{amount}");
    let billable = control(&html, "billable").context("a billable control")?;
    assert!(!billable.contains("required"), "{billable}");

    // Unticked: the browser sends nothing for `billable`.
    let response = submit(&app, &path, "hours=7.5&amount=12.50").await?;
    assert_eq!(response.status(), 303);
    assert_eq!(
        answer_of(&app, &id).await?,
        json!({"hours": 7.5, "amount": 12.5, "billable": false})
    );
    app.cleanup().await
}

#[tokio::test]
async fn defaults_examples_and_descriptions_fill_the_page_and_survive_a_422() -> anyhow::Result<()>
{
    let app = TestApp::builder().spawn().await?;
    let schema = json!({
        "type": "object",
        "properties": {
            "team": {"type": "string", "default": "Platform", "description": "The team that owns the budget.", "examples": ["Payments"]},
            "headcount": {"type": "integer", "minimum": 1, "default": 4},
            "notes": {"type": "string", "nullable": true},
            "email": {"type": "string", "format": "email"}
        },
        "required": ["team", "headcount", "notes", "email"]
    });
    let (id, path) = create(&app, &json!({"prompt": "Plan the team.", "schema": schema})).await?;
    let html = app.get(&path).await?.text().await?;
    let team = control(&html, "team").context("a team control")?;
    assert!(team.contains("value=\"Platform\""), "{team}");
    assert!(team.contains("placeholder=\"Payments\""), "{team}");
    assert!(html.contains("The team that owns the budget."));
    let headcount = control(&html, "headcount").context("a headcount control")?;
    assert!(headcount.contains("value=\"4\""), "{headcount}");
    let notes = control(&html, "notes").context("a notes control")?;
    assert!(
        !notes.contains("required"),
        "nullable: true is optional: {notes}"
    );
    let email = control(&html, "email").context("an email control")?;
    assert!(email.contains("type=\"email\""), "{email}");

    // A wrong email (as a browser without validation would send it) keeps every value.
    let response = submit(&app, &path, "team=Platform&headcount=4&notes=&email=nope").await?;
    assert_eq!(response.status(), 422);
    let again = response.text().await?;
    let team = control(&again, "team").context("a team control")?;
    assert!(team.contains("value=\"Platform\""), "{team}");
    let headcount = control(&again, "headcount").context("a headcount control")?;
    assert!(headcount.contains("value=\"4\""), "{headcount}");
    let email = control(&again, "email").context("an email control")?;
    assert!(email.contains("value=\"nope\""), "{email}");

    let response = submit(
        &app,
        &path,
        "team=Platform&headcount=4&notes=&email=a%40example.com",
    )
    .await?;
    assert_eq!(response.status(), 303);
    assert_eq!(
        answer_of(&app, &id).await?,
        json!({"team": "Platform", "headcount": 4, "email": "a@example.com"})
    );
    app.cleanup().await
}

#[tokio::test]
async fn what_no_control_can_express_is_still_refused_naming_the_field() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let cases = [
        json!({"tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 3}}),
        json!({"tags": {"type": "string", "multipleOf": 2}}),
        json!({"tags": {"type": "integer", "default": "many"}}),
    ];
    for properties in cases {
        let (status, error) = refusal(
            &app,
            &json!({"prompt": "q", "schema": {"type": "object", "properties": properties}}),
        )
        .await?;
        assert_eq!(status, 422, "{properties}");
        assert_eq!(error["field"], "schema.properties.tags");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(message.starts_with("schema.properties.tags: "), "{message}");
    }
    app.cleanup().await
}
