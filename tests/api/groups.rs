//! Groups (issue 31): an ask names an operator-defined group as one assignee; each member has
//! a link of their own, the first member's answer is the group's one vote, and the others'
//! links then show it. SQLite and PostgreSQL.

use anyhow::Context as _;
use serde_json::{json, Value};
use tessera::pages::groups::Groups;

use crate::{
    asks::{answered_by, assignee_links, submit, wait_for_ask},
    helpers::{on_both_backends, Backend, TestApp},
};

on_both_backends!(a_group_votes_once_whichever_member_answers);

async fn a_group_votes_once_whichever_member_answers(backend: Backend) -> anyhow::Result<()> {
    let groups = Groups::parse("finance=ann@corp.test|bob@corp.test")
        .map_err(|reason| anyhow::anyhow!(reason))?;
    let app = TestApp::builder()
        .backend(backend)
        .config(|config| {
            config.notify.ask_recipients.email = vec!["@example.com".into()];
            config.groups = groups;
        })
        .spawn()
        .await?;
    let schema = json!({"type": "object", "properties": {"note": {"type": "string"}}});
    let unknown = app
        .api_post(
            "/api/asks",
            &json!({"prompt": "q", "schema": schema, "assignees": ["legal"]}),
        )
        .await?;
    assert_eq!(unknown.status(), 422);
    let unknown: Value = unknown.json().await?;
    assert_eq!(unknown["error"]["field"], "assignees[0]", "{unknown:#}");

    let created = app
        .api_post(
            "/api/asks",
            &json!({"prompt": "Approve the budget?", "schema": schema,
                    "assignees": ["finance", "cy@example.com"], "approvals": {"required": 2}}),
        )
        .await?;
    assert_eq!(created.status(), 201);
    let created: Value = created.json().await?;
    let id = created["id"].as_str().context("id")?.to_owned();
    let links = assignee_links(&created["links"])?;
    let people: Vec<&str> = links.iter().map(|(who, _)| who.as_str()).collect();
    assert_eq!(
        people,
        ["ann@corp.test", "bob@corp.test", "cy@example.com"],
        "each member has a link of their own"
    );

    assert_eq!(submit(&app, &links[0].1, "note=ann").await?.status(), 303);
    // Bob's link now shows the group's answer, and takes none of his.
    let bob = app.get(&links[1].1).await?.text().await?;
    assert!(
        bob.contains("finance has answered (by ann@corp.test)"),
        "{bob}"
    );
    assert_eq!(submit(&app, &links[1].1, "note=bob").await?.status(), 409);
    let ask = app.api_json(&format!("/api/asks/{id}")).await?;
    assert_eq!(ask["status"], "waiting", "one vote of two: {ask:#}");

    assert_eq!(submit(&app, &links[2].1, "note=cy").await?.status(), 303);
    let ask = wait_for_ask(&app, &id, |ask| ask["status"] == "submitted").await?;
    let answered = answered_by(&ask)?;
    assert_eq!(answered, ["ann@corp.test", "cy@example.com"]);
    assert!(ask["history"][0]["text"]
        .as_str()
        .is_some_and(|text| text.contains("finance (ann@corp.test, bob@corp.test)")));
    app.cleanup().await
}
