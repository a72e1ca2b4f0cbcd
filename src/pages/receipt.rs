//! The read-only receipt a submitted link shows: what was submitted, labelled by the schema.
//!
//! Built as a page tree of catalog components so it looks like every other page and is escaped by
//! the same renderer.

use serde_json::{json, Value};
use tessera_app::tree::PageTree;

use crate::forms::FormSchema;

pub use crate::{
    util::dates::format_utc,
    workflow::step::{cancelled_response, is_cancelled_response as is_cancelled},
};

/// A receipt for `response` (labels from `schema` when there is one), headed by `heading`.
#[must_use]
pub fn receipt_tree(
    heading: &str,
    schema: Option<&FormSchema>,
    response: &Value,
    submitted_at_ms: Option<i64>,
) -> PageTree {
    let items: Vec<Value> = if is_cancelled(response) {
        vec![json!({"label": "Answer", "value": "Cancelled"})]
    } else {
        let object = response.as_object().cloned().unwrap_or_default();
        let labelled: Vec<(String, Value)> = match schema {
            Some(schema) => schema
                .fields
                .iter()
                .map(|field| {
                    (
                        field.label(),
                        object.get(&field.name).cloned().unwrap_or(Value::Null),
                    )
                })
                .collect(),
            None => object.into_iter().collect(),
        };
        labelled
            .into_iter()
            .map(|(label, value)| json!({"label": label, "value": display_value(&value)}))
            .collect()
    };
    let when = submitted_at_ms
        .map(|ms| format!("Submitted {}.", format_utc(ms)))
        .unwrap_or_default();
    let nodes = json!({
        "heading": {"component": "Heading", "props": {"text": heading, "level": 1}},
        "status": {"component": "Alert", "props": {"tone": "success", "text": format!("This link has been used. {when} It cannot be submitted again.")}},
        "answers": {"component": "KeyValue", "props": {"items": items}}
    });
    serde_json::from_value(json!({"nodes": nodes, "order": ["heading", "status", "answers"]}))
        .unwrap_or_default()
}

fn display_value(value: &Value) -> String {
    match value {
        Value::Null => "—".to_owned(),
        Value::Bool(true) => "Yes".to_owned(),
        Value::Bool(false) => "No".to_owned(),
        Value::String(text) if text.is_empty() => "—".to_owned(),
        Value::String(text) => text.clone(),
        Value::Array(items) if items.is_empty() => "None".to_owned(),
        Value::Array(items) => items
            .iter()
            .map(display_value)
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forms::{FieldKind, FormField};
    use tessera_app::catalog::Catalog;

    #[test]
    fn a_receipt_lists_every_field_by_label_and_is_a_valid_tree() {
        let schema = FormSchema::new(vec![
            FormField::new("archive_ids", FieldKind::string_array()),
            FormField::new("note", FieldKind::string()).optional(),
            FormField::new("urgent", FieldKind::Boolean),
        ]);
        let tree = receipt_tree(
            "Thanks",
            Some(&schema),
            &json!({"archive_ids": ["m1", "m2"], "urgent": false}),
            Some(0),
        );
        assert!(tree.validate(&Catalog::defaults(), &json!({})).is_empty());
        let items = &tree.nodes["answers"].props["items"];
        assert_eq!(items[0], json!({"label": "Archive ids", "value": "m1, m2"}));
        assert_eq!(items[1], json!({"label": "Note", "value": "—"}));
        assert_eq!(items[2], json!({"label": "Urgent", "value": "No"}));
    }

    #[test]
    fn a_cancelled_response_reads_as_cancelled() {
        let tree = receipt_tree("Thanks", None, &cancelled_response(), None);
        assert_eq!(
            tree.nodes["answers"].props["items"][0]["value"],
            "Cancelled"
        );
    }
}
