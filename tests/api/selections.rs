//! Selections from data through the asks API and the page link: id arrays are answered by picking
//! rows (one decision table for several arrays over the same rows), and a 5,000-row selection is
//! one small page that is searched and paged through its form, keeping every tick. Answers are
//! bound to the page: a crafted id or choice the page never offered is a 422, like a wrong value.

use anyhow::Context as _;
use serde_json::{json, Value};
use tessera::{
    pages::{page::NewPage, token::PageToken},
    store::now_ms,
};

use crate::{
    asks::{answer_of, create},
    helpers::{csrf_of, on_both_backends, Backend, TestApp},
    runs::working_link_path,
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

fn encode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

async fn two_id_arrays_over_the_same_rows_are_one_decision_table(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
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
    let response = app.post_form(&path, "", body).await?;
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
    let app = TestApp::builder()
        .backend(backend)
        .config(|config| config.body_limit = 4 << 20)
        .spawn()
        .await?;
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
    let searched = app
        .post_form(
            &path,
            "",
            format!("_csrf={csrf}&_t.{node}.q=User+4999&_nav="),
        )
        .await?;
    assert_eq!(searched.status(), 200);
    let searched = searched.text().await?;
    assert_eq!(values_of(&searched, "type=\"checkbox\""), ["u4999"]);

    // Tick u3 on page 1, go to page 7: the tick travels as a hidden input.
    let page7 = app
        .post_form(
            &path,
            "",
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
    let response = app
        .post_form(
            &path,
            "",
            format!("_csrf={}{carried}&deactivate_ids=u310", csrf_of(&page7)),
        )
        .await?;
    assert_eq!(response.status(), 303);
    let answer = answer_of(&app, &id).await?;
    assert_eq!(answer, json!({"deactivate_ids": ["u3", "u310"]}));
    app.cleanup().await
}

async fn too_many_ticks_are_refused_with_every_tick_kept(backend: Backend) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
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
    let response = app
        .post_form(&path, "", format!("_csrf={}{ticks}", csrf_of(&html)))
        .await?;
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

/// The text of every field error on `html`.
fn field_errors(html: &str) -> Vec<String> {
    html.split("data-testid=\"field-error\"")
        .skip(1)
        .filter_map(|rest| rest.split_once('>'))
        .filter_map(|(_, rest)| rest.split('<').next())
        .map(str::to_owned)
        .collect()
}

/// An ask's status and stored response.
async fn ask_state(app: &TestApp, id: &str) -> anyhow::Result<(Value, Value)> {
    let ask = app.api_json(&format!("/api/asks/{id}")).await?;
    Ok((ask["status"].clone(), ask["response"].clone()))
}

fn claims(count: usize) -> Vec<Value> {
    (0..count)
        .map(|n| json!({"id": format!("SP-{}", 100 + n), "amount": 50 + n, "reason": format!("Supplies {n}")}))
        .collect()
}

async fn an_id_the_page_never_offered_is_refused_with_the_values_kept_and_the_field_named(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let schema = json!({"type": "object", "properties": {
        "approved_ids": {"type": "array", "items": {"type": "string"}, "description": "ids from /claims"}
    }});
    let (id, path) = create(
        &app,
        &json!({"prompt": "Approve the supply claims.", "schema": schema, "data": {"claims": claims(9)}}),
    )
    .await?;
    let html = app.get(&path).await?.text().await?;
    assert_eq!(values_of(&html, "type=\"checkbox\"").len(), 9, "{html}");
    let body = format!(
        "_csrf={}&approved_ids=SP-100&approved_ids=NEVER-SHOWN-999&approved_ids={}",
        csrf_of(&html),
        encode("'; DROP TABLE x;--")
    );
    let response = app.post_form(&path, "", body).await?;
    assert_eq!(response.status(), 422);
    let again = response.text().await?;
    let errors = field_errors(&again);
    assert!(
        errors
            .iter()
            .any(|error| error.contains("Approved ids") && error.contains("NEVER-SHOWN-999")),
        "the message names the field and the value: {errors:?}"
    );
    assert_eq!(
        values_of(&again, "checked"),
        ["SP-100"],
        "the person's tick is kept"
    );
    assert_eq!(
        ask_state(&app, &id).await?,
        (json!("waiting"), Value::Null),
        "nothing stored, the run not resumed"
    );

    // The same page answered with what it offers is accepted as before, and only that is stored.
    let response = app
        .post_form(
            &path,
            "",
            format!(
                "_csrf={}&approved_ids=SP-100&approved_ids=SP-108",
                csrf_of(&again)
            ),
        )
        .await?;
    assert_eq!(response.status(), 303);
    assert_eq!(
        answer_of(&app, &id).await?,
        json!({"approved_ids": ["SP-100", "SP-108"]})
    );
    app.cleanup().await
}

async fn a_row_under_two_decision_arrays_is_refused(backend: Backend) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let schema = json!({"type": "object", "properties": {
        "approved_ids": {"type": "array", "items": {"type": "string"}, "description": "ids from /claims"},
        "rejected_ids": {"type": "array", "items": {"type": "string"}, "description": "ids from /claims"}
    }});
    let (id, path) = create(
        &app,
        &json!({"prompt": "Review the supply claims.", "schema": schema, "data": {"claims": claims(4)}}),
    )
    .await?;
    let html = app.get(&path).await?.text().await?;
    assert!(html.contains("data-testid=\"decision-table\""), "{html}");
    // Crafted: the arrays themselves rather than the per-row radio groups.
    let response = app
        .post_form(
            &path,
            "",
            format!(
                "_csrf={}&approved_ids=SP-100&rejected_ids=SP-101&rejected_ids=SP-100",
                csrf_of(&html)
            ),
        )
        .await?;
    assert_eq!(response.status(), 422);
    let again = response.text().await?;
    let errors = field_errors(&again);
    assert!(
        errors
            .iter()
            .any(|error| error.contains("SP-100") && error.contains("both")),
        "{errors:?}"
    );
    assert_eq!(ask_state(&app, &id).await?, (json!("waiting"), Value::Null));
    app.cleanup().await
}

/// A page stored as pages were before answers were bound to them, with no recorded component set:
/// a `requireAll` decision table over three claims. Returns the page's path.
async fn stored_decision_page(app: &TestApp) -> anyhow::Result<String> {
    let token = PageToken::generate();
    let tree = json!({"nodes": {
        "h": {"component": "Heading", "props": {"text": "Decide on each claim", "level": 1}},
        "f": {"component": "Form", "props": {}, "children": ["d", "go"]},
        "d": {"component": "DecisionTable", "props": {
            "label": "Claims", "rows": {"$data": "/claims"}, "idKey": "id", "requireAll": true,
            "choices": [{"name": "approved_ids", "label": "Approve"}, {"name": "rejected_ids", "label": "Reject"}]}},
        "go": {"component": "Button", "props": {"label": "Send", "kind": "submit"}}
    }, "order": ["h", "f"]});
    app.store
        .create_page(&NewPage {
            token_hash: token.hash(),
            run_id: None,
            tree,
            schema: Some(json!({"type": "object", "properties": {
                "approved_ids": {"type": "array", "items": {"type": "string"}},
                "rejected_ids": {"type": "array", "items": {"type": "string"}}
            }})),
            data: json!({"claims": claims(3)}),
            component_set: None,
            expires_at_ms: now_ms() + 600_000,
        })
        .await?;
    Ok(format!("/p/{}", token.as_str()))
}

async fn an_undecided_row_under_require_all_is_refused(backend: Backend) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let path = stored_decision_page(&app).await?;
    let html = app.get(&path).await?.text().await?;
    let csrf = csrf_of(&html);
    let response = app
        .post_form(
            &path,
            "",
            format!("_csrf={csrf}&approved_ids=SP-100&rejected_ids=SP-101"),
        )
        .await?;
    assert_eq!(response.status(), 422);
    let again = response.text().await?;
    let errors = field_errors(&again);
    assert!(
        errors
            .iter()
            .any(|error| error.contains("Every row needs a choice") && error.contains("SP-102")),
        "{errors:?}"
    );
    assert_eq!(
        values_of(&again, "checked").len(),
        2,
        "both decisions kept: {again}"
    );
    let decided_all = app
        .post_form(
            &path,
            "",
            format!("_csrf={csrf}&approved_ids=SP-100&rejected_ids=SP-101&approved_ids=SP-102"),
        )
        .await?;
    assert_eq!(decided_all.status(), 303);
    app.cleanup().await
}

async fn a_page_stored_without_recorded_components_still_refuses_a_never_offered_id(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let path = stored_decision_page(&app).await?;
    let html = app.get(&path).await?.text().await?;
    let response = app.post_form(&path, "", format!(
            "_csrf={}&approved_ids=SP-100&approved_ids=SP-101&approved_ids=SP-102&approved_ids=NEVER-SHOWN-999",
            csrf_of(&html)
        ))
    .await?;
    assert_eq!(response.status(), 422);
    let errors = field_errors(&response.text().await?);
    assert!(
        errors.iter().any(|error| error.contains("NEVER-SHOWN-999")),
        "{errors:?}"
    );
    let page = app.get(&path).await?;
    assert_eq!(page.status(), 200, "still open, not a receipt");
    app.cleanup().await
}

async fn ids_from_a_table_page_never_shown_are_accepted(backend: Backend) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let schema = json!({"type": "object", "properties": {
        "deactivate_ids": {"type": "array", "items": {"type": "string"}}
    }});
    let (id, path) = create(
        &app,
        &json!({"prompt": "Deactivate the users who left.", "schema": schema, "data": {"users": users(120)}}),
    )
    .await?;
    let html = app.get(&path).await?.text().await?;
    let shown = values_of(&html, "type=\"checkbox\"");
    assert!(
        !shown.contains(&"u120".to_owned()),
        "u120 is on the last page"
    );
    let response = app
        .post_form(
            &path,
            "",
            format!(
                "_csrf={}&deactivate_ids=u1&deactivate_ids=u120",
                csrf_of(&html)
            ),
        )
        .await?;
    assert_eq!(response.status(), 303);
    assert_eq!(
        answer_of(&app, &id).await?,
        json!({"deactivate_ids": ["u1", "u120"]})
    );
    app.cleanup().await
}

async fn the_bulk_approval_demo_can_only_receive_claims_it_offered(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let (id, _) = app
        .start_waiting_run(&json!({"workflow": "bulk-approval"}))
        .await?;
    let path = working_link_path(&app, &id).await?;
    let html = app.get(&path).await?.text().await?;
    let crafted = app.post_form(&path, "", format!(
            "_csrf={}&decision=approve&claim_ids=exp-101&claim_ids=NEVER-SHOWN-999&reason=Receipts+attached",
            csrf_of(&html)
        ))
    .await?;
    assert_eq!(crafted.status(), 422);
    let run = app.api_json(&format!("/api/runs/{id}")).await?;
    assert_eq!(run["status"], "waiting", "the run did not resume: {run:#}");
    let offered = app
        .post_form(
            &path,
            "",
            format!(
                "_csrf={}&decision=approve&claim_ids=exp-101&reason=Receipts+attached",
                csrf_of(&html)
            ),
        )
        .await?;
    assert_eq!(offered.status(), 303);
    let finished = app.wait_for_status(&id, "succeeded").await?;
    assert_eq!(finished["state"]["selected"], json!(["exp-101"]));
    app.cleanup().await
}

on_both_backends!(
    two_id_arrays_over_the_same_rows_are_one_decision_table,
    a_five_thousand_row_selection_is_one_page_that_keeps_every_tick,
    too_many_ticks_are_refused_with_every_tick_kept,
    an_id_the_page_never_offered_is_refused_with_the_values_kept_and_the_field_named,
    a_row_under_two_decision_arrays_is_refused,
    an_undecided_row_under_require_all_is_refused,
    a_page_stored_without_recorded_components_still_refuses_a_never_offered_id,
    ids_from_a_table_page_never_shown_are_accepted,
    the_bulk_approval_demo_can_only_receive_claims_it_offered,
);
