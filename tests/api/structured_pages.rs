//! Pages for structured answers (issue 26) through `POST /api/asks`, as a browser without
//! JavaScript uses them: the offline model's bound table of line items corrected and answered,
//! records added and removed by the page's own buttons (nothing recorded, every value kept), and
//! a refused record shown again with the person's values and the message beside its control.

use serde_json::{json, Value};

use crate::asks::{answer_of, create, submit, wait_for_ask};
use crate::helpers::{on_both_backends, Backend, TestApp};

fn invoice_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "line_items": {"type": "array", "title": "Line items", "minItems": 1,
                "items": {"type": "object", "properties": {
                    "sku": {"type": "string", "title": "SKU"},
                    "quantity": {"type": "integer", "minimum": 1, "title": "Quantity"},
                    "unit_price": {"type": "number", "minimum": 0, "multipleOf": 0.01,
                                   "title": "Unit price"}
                }, "required": ["sku", "quantity", "unit_price"]}}
        },
        "required": ["line_items"]
    })
}

fn invoice_data() -> Value {
    json!({"invoice": "INV-2231", "items": [
        {"sku": "A-100", "quantity": 10, "unit_price": 4.5},
        {"sku": "B-220", "quantity": 2, "unit_price": 61.0},
        {"sku": "C-310", "quantity": 1, "unit_price": 12.9},
        {"sku": "D-400", "quantity": 5, "unit_price": 3.2},
        {"sku": "E-510", "quantity": 12, "unit_price": 0.99},
        {"sku": "F-620", "quantity": 3, "unit_price": 150.0}
    ]})
}

/// The six scanned line items as the page sends them, with `changes` applied.
fn invoice_body(changes: &[(usize, &str, &str)]) -> String {
    let items = invoice_data()["items"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut pairs = vec![format!("_count.line_items={}", items.len())];
    for (index, item) in items.iter().enumerate() {
        for field in ["sku", "quantity", "unit_price"] {
            let value = changes
                .iter()
                .find(|(at, name, _)| *at == index && *name == field)
                .map_or_else(
                    || match &item[field] {
                        Value::String(text) => text.clone(),
                        other => other.to_string(),
                    },
                    |(_, _, value)| (*value).to_owned(),
                );
            pairs.push(format!("line_items%5B{index}%5D.{field}={value}"));
        }
    }
    pairs.join("&")
}

async fn invoice_ask(app: &TestApp) -> anyhow::Result<(String, String)> {
    create(
        app,
        &json!({
            "prompt": "The scanner read 6 line items from invoice INV-2231. Correct any quantity or unit price.",
            "schema": invoice_schema(),
            "data": invoice_data()
        }),
    )
    .await
}

async fn the_invoice_correction_is_a_table_bound_to_the_scanned_rows_and_answers_nested_json(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let (id, path) = invoice_ask(&app).await?;
    let html = app.get(&path).await?.text().await?;
    assert!(
        html.contains(r#"name="line_items[1].quantity" value="2""#),
        "the records start from the scanned rows"
    );
    assert!(
        html.contains(r#"<input type="hidden" name="line_items[5].sku" value="F-620">"#),
        "the key travels hidden"
    );
    assert!(!html.contains(">line_items"), "no raw path is shown");
    let body = invoice_body(&[(1, "quantity", "3"), (4, "unit_price", "1.09")]);
    assert_eq!(submit(&app, &path, &body).await?.status(), 303);
    let answer = answer_of(&app, &id).await?;
    assert_eq!(answer["line_items"].as_array().map(Vec::len), Some(6));
    assert_eq!(
        answer["line_items"][1],
        json!({"sku": "B-220", "quantity": 3, "unit_price": 61.0})
    );
    assert_eq!(answer["line_items"][4]["unit_price"], json!(1.09));
    app.cleanup().await
}

async fn a_refused_record_keeps_every_value_and_says_which_line(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let (id, path) = invoice_ask(&app).await?;
    let body = invoice_body(&[(2, "quantity", "0"), (0, "unit_price", "4.75")]);
    let refused = submit(&app, &path, &body).await?;
    assert_eq!(refused.status(), 422);
    let html = refused.text().await?;
    assert!(
        html.contains(r#"name="line_items[2].quantity" value="0""#),
        "{html}"
    );
    assert!(
        html.contains(r#"name="line_items[0].unit_price" value="4.75""#),
        "every value is kept"
    );
    let control = html
        .find(r#"name="line_items[2].quantity""#)
        .unwrap_or_default();
    let message = html[control..].find("data-testid=\"field-error\"");
    let next = html[control..].find(r#"name="line_items[2].unit_price""#);
    assert!(
        message.is_some_and(|message| next.is_some_and(|next| message < next)),
        "the message sits beside the control it names"
    );
    let ask = wait_for_ask(&app, &id, |_| true).await?;
    assert_eq!(ask["status"], "waiting", "nothing was recorded");
    app.cleanup().await
}

fn contacts_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "contacts": {"type": "array", "title": "New hires", "minItems": 1, "maxItems": 5,
                "items": {"type": "object", "properties": {
                    "name": {"type": "string", "title": "Full name"},
                    "email": {"type": "string", "format": "email", "title": "Work email"}
                }, "required": ["name", "email"]}}
        },
        "required": ["contacts"]
    })
}

async fn records_are_added_and_removed_by_the_pages_buttons_keeping_every_value(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let (id, path) = create(
        &app,
        &json!({"prompt": "Enter the contacts of the new hires.", "schema": contacts_schema()}),
    )
    .await?;
    let html = app.get(&path).await?.text().await?;
    assert!(html.contains(r#"name="contacts[0].name""#));
    assert!(
        !html.contains(r#"name="contacts[1].name""#),
        "one blank record to start"
    );
    let typed = "_count.contacts=1&contacts%5B0%5D.name=Ada+Lovelace&contacts%5B0%5D.email=ada%40example.com";
    let added = submit(&app, &path, &format!("{typed}&_action=add%3Acontacts")).await?;
    assert_eq!(added.status(), 200);
    let html = added.text().await?;
    assert!(html.contains(r#"name="contacts[0].name" value="Ada Lovelace""#));
    assert!(
        html.contains(r#"name="contacts[1].name" value="""#),
        "a blank record is added"
    );
    assert!(html.contains(r#"name="_count.contacts" value="2""#));

    let two = "_count.contacts=2&contacts%5B0%5D.name=Ada+Lovelace&contacts%5B0%5D.email=ada%40example.com\
         &contacts%5B1%5D.name=Grace+Hopper&contacts%5B1%5D.email=grace%40example.com"
        .to_owned();
    let removed = submit(
        &app,
        &path,
        &format!("{two}&_action=remove%3Acontacts%5B0%5D"),
    )
    .await?;
    assert_eq!(removed.status(), 200);
    let html = removed.text().await?;
    assert!(
        html.contains(r#"name="contacts[0].name" value="Grace Hopper""#),
        "the records after the removed one move up"
    );
    assert!(!html.contains("Ada Lovelace"));
    assert_eq!(
        wait_for_ask(&app, &id, |_| true).await?["status"],
        "waiting",
        "adding and removing record nothing"
    );

    assert_eq!(submit(&app, &path, &two).await?.status(), 303);
    assert_eq!(
        answer_of(&app, &id).await?,
        json!({"contacts": [
            {"name": "Ada Lovelace", "email": "ada@example.com"},
            {"name": "Grace Hopper", "email": "grace@example.com"}
        ]})
    );
    app.cleanup().await
}

async fn no_record_can_be_added_at_the_most_or_removed_at_the_fewest(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let (_, path) = create(
        &app,
        &json!({"prompt": "Enter the contacts of the new hires.", "schema": contacts_schema()}),
    )
    .await?;
    let html = app.get(&path).await?.text().await?;
    let button = |html: &str, value: &str| -> Option<String> {
        html.split("<button")
            .find(|button| button.contains(&format!("value=\"{value}\"")))
            .map(str::to_owned)
    };
    let remove = button(&html, "remove:contacts[0]").unwrap_or_default();
    assert!(
        remove.contains(" hidden"),
        "at minItems no remove: {remove}"
    );
    let full = (0..5)
        .map(|index| format!("contacts%5B{index}%5D.name=P{index}&contacts%5B{index}%5D.email=p{index}%40example.com"))
        .collect::<Vec<_>>()
        .join("&");
    let crafted = submit(
        &app,
        &path,
        &format!("_count.contacts=5&{full}&_action=add%3Acontacts"),
    )
    .await?;
    let html = crafted.text().await?;
    assert!(
        !html.contains(r#"name="contacts[5].name""#),
        "a crafted add beyond maxItems shows no sixth record"
    );
    let add = button(&html, "add:contacts").unwrap_or_default();
    assert!(add.contains(" hidden"), "at maxItems no add: {add}");
    app.cleanup().await
}

on_both_backends!(
    the_invoice_correction_is_a_table_bound_to_the_scanned_rows_and_answers_nested_json,
    a_refused_record_keeps_every_value_and_says_which_line,
    records_are_added_and_removed_by_the_pages_buttons_keeping_every_value,
    no_record_can_be_added_at_the_most_or_removed_at_the_fewest,
);
