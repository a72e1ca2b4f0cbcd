//! Selections from data through the asks API and the page link: id arrays are answered by picking
//! rows (one decision table for several arrays over the same rows), and a 5,000-row selection is
//! one small page that is searched and paged through its form, keeping every tick.

use anyhow::Context as _;
use serde_json::{json, Value};

use crate::{
    asks::{answer_of, create, csrf_of},
    helpers::{on_both_backends, spawn_app_on, Backend, TestApp},
};

/// Every `value` of the inputs of `html` whose tag contains `marker`.
fn values_of(html: &str, marker: &str) -> Vec<String> {
    html.split("<input")
        .skip(1)
        .filter_map(|tag| tag.split('>').next())
        .filter(|tag| tag.contains(marker))
        .filter_map(|tag| tag.split("value=\"").nth(1))
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_owned)
        .collect()
}

/// The node id of the paged table (from its state field `_t.<node>.page`).
fn table_node(html: &str) -> anyhow::Result<String> {
    html.split(".page\"")
        .next()
        .and_then(|before| before.rsplit("name=\"_t.").next())
        .filter(|node| !node.contains('"'))
        .map(str::to_owned)
        .context("a paged table")
}

async fn post(app: &TestApp, path: &str, body: String) -> anyhow::Result<reqwest::Response> {
    Ok(app
        .client
        .post(app.url(path))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await?)
}

fn encode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

async fn two_id_arrays_over_the_same_rows_are_one_decision_table(
    backend: Backend,
) -> anyhow::Result<()> {
    let Some(app) = spawn_app_on(backend, |_| {}).await? else {
        return Ok(());
    };
    let schema = json!({"type": "object", "properties": {
        "approved_ids": {"type": "array", "items": {"type": "string"}, "description": "ids from /claims"},
        "rejected_ids": {"type": "array", "items": {"type": "string"}, "description": "ids from /claims"}
    }});
    let claims: Vec<Value> = (1..=4)
        .map(
            |n| json!({"id": format!("CLM-{n}"), "amount": n * 100, "reason": format!("Trip {n}")}),
        )
        .collect();
    let (id, path) = create(
        &app,
        &json!({"prompt": "Review the expense claims.", "schema": schema, "data": {"claims": claims}}),
    )
    .await?;
    let html = app.get(&path).await?.text().await?;
    assert!(html.contains("data-testid=\"decision-table\""), "{html}");
    assert!(
        !html.contains("type=\"text\" name=\"rejected_ids\"")
            && !html.contains("name=\"rejected_ids\" type=\"text\""),
        "nobody types claim ids"
    );
    let radio_names: Vec<String> = html
        .split("type=\"radio\" name=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_owned)
        .collect();
    let name_of = |claim: &str| {
        radio_names
            .iter()
            .find(|name| name.starts_with("_decide:") && name.ends_with(&format!(":{claim}")))
            .cloned()
            .unwrap_or_default()
    };
    // Three of four decided, one rejected twice over by a crafted duplicate: still one answer each.
    let body = format!(
        "_csrf={}&{}=approved_ids&{}=rejected_ids&{}=approved_ids&{}=",
        csrf_of(&html),
        encode(&name_of("CLM-1")),
        encode(&name_of("CLM-2")),
        encode(&name_of("CLM-3")),
        encode(&name_of("CLM-4")),
    );
    let response = post(&app, &path, body).await?;
    assert_eq!(response.status(), 303);
    let answer = answer_of(&app, &id).await?;
    assert_eq!(
        answer,
        json!({"approved_ids": ["CLM-1", "CLM-3"], "rejected_ids": ["CLM-2"]})
    );
    app.cleanup().await
}

fn users(count: usize) -> Vec<Value> {
    (1..=count)
        .map(|n| {
            json!({"id": format!("u{n}"), "name": format!("User {n}"),
                   "email": format!("user{n}@example.com"), "last_seen": "2025-01-01"})
        })
        .collect()
}

async fn a_five_thousand_row_selection_is_one_page_that_keeps_every_tick(
    backend: Backend,
) -> anyhow::Result<()> {
    // 5,000 rows of data are more than the tests' default request limit.
    let Some(app) = spawn_app_on(backend, |config| config.body_limit = 4 << 20).await? else {
        return Ok(());
    };
    let schema = json!({"type": "object", "properties": {
        "deactivate_ids": {"type": "array", "items": {"type": "string"}, "maxItems": 500}
    }});
    let (id, path) = create(
        &app,
        &json!({"prompt": "Deactivate the users who left.", "schema": schema, "data": {"users": users(5000)}}),
    )
    .await?;

    let first = app.get(&path).await?.text().await?;
    assert!(
        first.len() <= 150_000,
        "first view is {} bytes",
        first.len()
    );
    assert_eq!(values_of(&first, "type=\"checkbox\"").len(), 50);
    let node = table_node(&first)?;
    let csrf = csrf_of(&first);

    // Search: one row matches; nothing is recorded.
    let searched = post(
        &app,
        &path,
        format!("_csrf={csrf}&_t.{node}.q=User+4999&_nav="),
    )
    .await?;
    assert_eq!(searched.status(), 200);
    let searched = searched.text().await?;
    assert_eq!(values_of(&searched, "type=\"checkbox\""), ["u4999"]);

    // Tick u3 on page 1, go to page 7: the tick travels as a hidden input.
    let page7 = post(
        &app,
        &path,
        format!(
            "_csrf={csrf}&deactivate_ids=u3&_t.{node}.page=1&_nav={}",
            encode(&format!("{node}.page=7"))
        ),
    )
    .await?;
    assert_eq!(page7.status(), 200);
    let page7 = page7.text().await?;
    assert!(values_of(&page7, "type=\"checkbox\"").contains(&"u310".to_owned()));
    assert_eq!(
        values_of(&page7, "type=\"hidden\" name=\"deactivate_ids\""),
        ["u3"]
    );
    let ask = app.api_json(&format!("/api/asks/{id}")).await?;
    assert_eq!(ask["status"], "waiting", "paging is not the answer");

    // Submit from page 7 with u310 ticked: both arrive.
    let carried: String = values_of(&page7, "type=\"hidden\" name=\"deactivate_ids\"")
        .iter()
        .map(|value| format!("&deactivate_ids={value}"))
        .collect();
    let response = post(
        &app,
        &path,
        format!("_csrf={}{carried}&deactivate_ids=u310", csrf_of(&page7)),
    )
    .await?;
    assert_eq!(response.status(), 303);
    let answer = answer_of(&app, &id).await?;
    assert_eq!(answer, json!({"deactivate_ids": ["u3", "u310"]}));
    app.cleanup().await
}

async fn too_many_ticks_are_refused_with_every_tick_kept(backend: Backend) -> anyhow::Result<()> {
    let Some(app) = spawn_app_on(backend, |_| {}).await? else {
        return Ok(());
    };
    let schema = json!({"type": "object", "properties": {
        "deactivate_ids": {"type": "array", "items": {"type": "string"}, "maxItems": 3}
    }});
    let (id, path) = create(
        &app,
        &json!({"prompt": "Deactivate the users who left.", "schema": schema, "data": {"users": users(120)}}),
    )
    .await?;
    let html = app.get(&path).await?.text().await?;
    assert!(html.contains("at most 3"), "the limit is said up front");
    let ticks: String = [1, 2, 3, 90]
        .iter()
        .map(|n| format!("&deactivate_ids=u{n}"))
        .collect();
    let response = post(&app, &path, format!("_csrf={}{ticks}", csrf_of(&html))).await?;
    assert_eq!(response.status(), 422);
    let again = response.text().await?;
    assert!(again.contains("data-testid=\"field-error\""), "{again}");
    let mut kept = values_of(&again, "checked");
    kept.extend(values_of(&again, "type=\"hidden\" name=\"deactivate_ids\""));
    kept.sort();
    assert_eq!(kept, ["u1", "u2", "u3", "u90"]);
    let ask = app.api_json(&format!("/api/asks/{id}")).await?;
    assert_eq!(ask["status"], "waiting");
    app.cleanup().await
}

on_both_backends!(
    two_id_arrays_over_the_same_rows_are_one_decision_table,
    a_five_thousand_row_selection_is_one_page_that_keeps_every_tick,
    too_many_ticks_are_refused_with_every_tick_kept,
);
