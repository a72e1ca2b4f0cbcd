//! Asks with structure (issue 26): an invoice correction with a list of line items, a delivery
//! address as a fieldset, and five new hires' contacts filled from empty, each through
//! `POST /api/asks`; a crafted submission to the page decodes to the nested answer or is refused
//! at the list's path.

use anyhow::Context as _;
use serde_json::{json, Value};

use crate::{
    asks::{answer_of, create, post_ask, submit},
    helpers::{on_both_backends, Backend, TestApp},
};

fn invoice_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "line_items": {
                "type": "array",
                "title": "Line items",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "properties": {
                        "sku": {"type": "string", "title": "SKU"},
                        "quantity": {"type": "integer", "minimum": 1},
                        "unit_price": {"type": "number", "minimum": 0, "multipleOf": 0.01}
                    },
                    "required": ["sku", "quantity", "unit_price"]
                }
            }
        },
        "required": ["line_items"]
    })
}

fn address_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "address": {
                "type": "object",
                "title": "Delivery address",
                "properties": {
                    "street": {"type": "string"},
                    "postal_code": {"type": "string", "pattern": "^[0-9]{4,5}$"},
                    "city": {"type": "string"},
                    "country": {"type": "string", "enum": ["NO", "SE", "DK"]}
                },
                "required": ["street", "postal_code", "city", "country"]
            }
        },
        "required": ["address"]
    })
}

fn contacts_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "contacts": {
                "type": "array",
                "minItems": 5,
                "maxItems": 5,
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "email": {"type": "string", "format": "email"},
                        "languages": {"type": "array", "items": {"type": "string", "enum": ["en", "no"]}}
                    },
                    "required": ["name", "email"]
                }
            }
        },
        "required": ["contacts"]
    })
}

/// The invoice schema is accepted, and the page's crafted submission decodes to the nested
/// answer in record order.
async fn an_invoice_correction_with_line_items_is_asked_and_answered_as_nested_json(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let items = json!([{"sku": "A-100", "quantity": 10, "unit_price": 4.5},
                       {"sku": "B-220", "quantity": 2, "unit_price": 61.0}]);
    let (id, path) = create(
        &app,
        &json!({"prompt": "Correct any quantity or unit price on invoice INV-2231",
                "schema": invoice_schema(), "data": {"items": items}}),
    )
    .await?;
    let body = "_count.line_items=2&line_items[1].sku=B-220&line_items[1].quantity=3&line_items[1].unit_price=59.90\
                &line_items[0].sku=A-100&line_items[0].quantity=10&line_items[0].unit_price=4.50";
    let response = submit(&app, &path, body).await?;
    assert_eq!(response.status(), 303, "{}", response.text().await?);
    assert_eq!(
        answer_of(&app, &id).await?,
        json!({"line_items": [
            {"sku": "A-100", "quantity": 10, "unit_price": 4.5},
            {"sku": "B-220", "quantity": 3, "unit_price": 59.9}
        ]})
    );
    app.cleanup().await
}

/// A gap in the records is refused at the list's path with the person's values kept, and a
/// value out of range names its field and its line; nothing is recorded.
async fn a_crafted_gap_or_a_wrong_value_in_a_record_is_refused_and_nothing_recorded(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let (id, path) = create(
        &app,
        &json!({"prompt": "Enter the invoice lines", "schema": invoice_schema()}),
    )
    .await?;
    let gap = "line_items[0].sku=A-1&line_items[0].quantity=1&line_items[0].unit_price=1\
               &line_items[2].sku=C-3&line_items[2].quantity=1&line_items[2].unit_price=1";
    let response = submit(&app, &path, gap).await?;
    assert_eq!(response.status(), 422);
    let html = response.text().await?;
    assert!(
        html.contains("Line items is missing line 2"),
        "the gap is named at the list: {html}"
    );
    let zero = "_count.line_items=2&line_items[0].sku=A-1&line_items[0].quantity=1&line_items[0].unit_price=1\
                &line_items[1].sku=B-2&line_items[1].quantity=0&line_items[1].unit_price=1";
    let response = submit(&app, &path, zero).await?;
    assert_eq!(response.status(), 422);
    let html = response.text().await?;
    assert!(
        html.contains("Quantity on line 2 must be at least 1"),
        "the message names the field and its line: {html}"
    );
    assert!(
        html.contains("B-2"),
        "the person's values are shown again: {html}"
    );
    let ask: Value = app.api_json(&format!("/api/asks/{id}")).await?;
    assert_eq!(ask["status"], "waiting", "nothing was recorded: {ask:#}");
    app.cleanup().await
}

/// The address arrives as one nested object; five contacts filled from empty arrive as five
/// records, each with its languages.
async fn an_address_and_five_contacts_are_asked_and_answered_as_nested_json(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let (id, path) = create(
        &app,
        &json!({"prompt": "Enter the corrected delivery address", "schema": address_schema()}),
    )
    .await?;
    let body =
        "address.street=Storgata+1&address.postal_code=0155&address.city=Oslo&address.country=NO";
    assert_eq!(submit(&app, &path, body).await?.status(), 303);
    assert_eq!(
        answer_of(&app, &id).await?,
        json!({"address": {"street": "Storgata 1", "postal_code": "0155", "city": "Oslo", "country": "NO"}})
    );

    let (id, path) = create(
        &app,
        &json!({"prompt": "Contacts for the five new hires", "schema": contacts_schema()}),
    )
    .await?;
    let mut body = String::from("_count.contacts=5");
    for index in 0..5 {
        body.push_str(&format!(
            "&contacts[{index}].name=Hire+{index}&contacts[{index}].email=hire{index}%40example.com&contacts[{index}].languages=en"
        ));
    }
    body.push_str("&contacts[4].languages=no");
    assert_eq!(submit(&app, &path, &body).await?.status(), 303);
    let answer = answer_of(&app, &id).await?;
    let contacts = answer["contacts"]
        .as_array()
        .context("a list of contacts")?;
    assert_eq!(contacts.len(), 5);
    assert_eq!(
        contacts[4],
        json!({"name": "Hire 4", "email": "hire4@example.com", "languages": ["en", "no"]})
    );
    app.cleanup().await
}

/// What stays outside the subset is refused naming the field by its path.
async fn a_list_of_records_inside_a_record_is_refused_naming_its_path(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let schema = json!({"type": "object", "properties": {"parcels": {"type": "array", "items": {
        "type": "object", "properties": {"contents": {"type": "array", "items": {
            "type": "object", "properties": {"sku": {"type": "string"}}}}}}}}});
    let response = post_ask(
        &app,
        &json!({"prompt": "Split the shipment", "schema": schema}),
    )
    .await?;
    assert_eq!(response.status(), 422);
    let body: Value = response.json().await?;
    assert_eq!(
        body["error"]["field"], "schema.properties.parcels[].contents",
        "{body:#}"
    );
    assert!(body["error"]["message"].as_str().is_some_and(
        |message| message.contains("a list of records inside a record is not allowed")
    ));
    app.cleanup().await
}

on_both_backends!(
    an_invoice_correction_with_line_items_is_asked_and_answered_as_nested_json,
    a_crafted_gap_or_a_wrong_value_in_a_record_is_refused_and_nothing_recorded,
    an_address_and_five_contacts_are_asked_and_answered_as_nested_json,
    a_list_of_records_inside_a_record_is_refused_naming_its_path,
);
